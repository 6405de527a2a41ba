"""Shared fixtures: the book is built once per test session, from scratch, with
warnings as errors."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import settings

# Property-based tests (hypothesis): no example database written into the working tree.
settings.register_profile("gpubook", database=None, deadline=None)
settings.load_profile("gpubook")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(autouse=True)
def _undo_process_changes():
    """Environment variables and warning filters a test changes (directly, or through a
    helper such as ``gpubook.report()``) are put back after it, so that no test depends
    on another one's leftovers."""
    environ = dict(os.environ)
    with warnings.catch_warnings():
        yield
    if dict(os.environ) != environ:
        os.environ.clear()
        os.environ.update(environ)


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """Build the book from scratch, warnings as errors, into a new temporary folder (not
    the incremental _build/, where a rebuild re-reads nothing and so hides warnings);
    return (html folder, build log)."""
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    output = tmp_path_factory.mktemp("book")
    result = subprocess.run(
        [str(jupyter_book), "build", str(ROOT), "--path-output", str(output)]
        + ["-W", "-n", "--keep-going"],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, f"jupyter-book build failed:\n{log[-6000:]}"
    return output / "_build" / "html", log


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: executes a notebook in a kernel or a subprocess (seconds); "
        "the mutation run (CONTRIBUTING.md) leaves these out",
    )

"""ruff formats and lints the package, the tests and the notebooks.

ruff is pinned in requirements.txt and configured in pyproject.toml's [tool.ruff] (line
length 88). Fix what these tests report with ``.venv/bin/ruff format <files>`` and
``.venv/bin/ruff check <files>`` (``--fix`` sorts imports). Each area has a switch
below: while it is False, the area's offenders are listed and the test is marked xfail
instead of failing (the chapters are being rewritten); flip it to True once the area is
clean, and from then on any offender fails the test.
"""

import re
import subprocess
import sys

import pytest

from conftest import ROOT

NOTEBOOKS_FORMATTED = True  # notebooks/*.ipynb
PACKAGE_FORMATTED = True  # gpubook/, tests/, tools/, conftest.py

AREAS = {
    "package": (["gpubook", "tests", "tools", "conftest.py"], PACKAGE_FORMATTED),
    "notebooks": (["notebooks"], NOTEBOOKS_FORMATTED),
}


def _ruff(*args):
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode in (0, 1), (
        f"ruff {' '.join(args)} failed:\n{result.stderr}"
    )
    return result.returncode, result.stdout + result.stderr


def _report(area, offenders, what):
    """Fail listing the offenders; xfail listing them while the area's switch is off."""
    if not offenders:
        return
    paths, switched_on = AREAS[area]
    listing = "\n".join(offenders)
    message = f"{what} ({len(offenders)}):\n{listing}"
    if not switched_on:
        pytest.xfail(f"{area} not yet clean; {message}")
    pytest.fail(message)


@pytest.mark.parametrize("area", AREAS)
def test_ruff_format(area):
    paths, _ = AREAS[area]
    code, output = _ruff("format", "--check", "--output-format=concise", *paths)
    offenders = sorted(
        set(re.findall(r"^(.+?)(?::cell \d+)?:\d+:\d+: unformatted", output, re.M))
    )
    assert code == 0 or offenders, output
    _report(area, offenders, "files `ruff format` would change")


@pytest.mark.parametrize("area", AREAS)
def test_ruff_check(area):
    paths, _ = AREAS[area]
    code, output = _ruff("check", "--output-format=concise", "--no-fix", *paths)
    findings = re.findall(r"^(.+?)(?::cell \d+)?:\d+:\d+: (\w+) ", output, re.M)
    assert code == 0 or findings, output
    counts = {}
    for path, rule in findings:
        counts.setdefault(path, {}).setdefault(rule, 0)
        counts[path][rule] += 1
    offenders = [
        f"{path}: " + ", ".join(f"{n} {rule}" for rule, n in sorted(rules.items()))
        for path, rules in sorted(counts.items())
    ]
    _report(area, offenders, "files with `ruff check` findings")

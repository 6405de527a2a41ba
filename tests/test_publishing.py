"""Publishing: the GitHub Pages workflow, Binder's environment, and the one setting
(``repository.url`` in _config.yml) that the launch buttons, the repository link and the
notebooks' install source all read (book/_ext/publish.py, gpubook/install.py)."""

import hashlib
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from gpubook import install

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def _pins(path):
    """{name: version} of the ``name==version`` lines of a requirements file."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def test_pages_workflow_matches_the_github_workflow_schema():
    checker = Path(sys.executable).parent / "check-jsonschema"
    if not checker.exists():
        pytest.fail("check-jsonschema is missing: pip install -r requirements.txt")
    result = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_pages_workflow_builds_the_stored_outputs_and_deploys_on_push_to_main():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {
        "contents": "read",
        "pages": "write",
        "id-token": "write",
    }
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    uses = {step["uses"].split("@")[0] for step in steps if "uses" in step}
    standard = {
        "actions/configure-pages",
        "actions/upload-pages-artifact",
        "actions/deploy-pages",
    }
    assert standard <= uses, "the standard Pages actions"
    script = "\n".join(step.get("run", "") for step in steps)
    assert "-r requirements.txt" in script, "the pinned requirements"
    assert re.search(r"jupyter-book build \. -W", script), "warnings as errors"
    assert "gpubook.install check" in script, "the setting must name the repository"
    pins = _pins(ROOT / "requirements.txt")
    for package in ("torch", "torchvision"):
        assert f"{package}=={pins[package]}" in script, f"{package} as pinned"
    # The book is built from the stored outputs: Jupyter Book must not execute.
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["sphinx"]["config"]["nb_execution_mode"] == "off"


def test_binder_gets_cpu_only_torch_at_the_pinned_versions():
    binder = ROOT / "binder" / "requirements.txt"
    text = binder.read_text(encoding="utf-8")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in text
    pins, binder_pins = _pins(ROOT / "requirements.txt"), _pins(binder)
    assert binder_pins["torch"].endswith("+cpu")
    assert binder_pins["torchvision"].endswith("+cpu")
    for package, version in binder_pins.items():
        assert version.removesuffix("+cpu") == pins[package], f"{package} differs"
    assert re.search(r"^\.$", text, re.M), "the helper package from this repository"
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


def _publish_extension():
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import publish
    finally:
        sys.path.pop(0)
    return publish


def _sphinx_config(url):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    theme = {
        "launch_buttons": dict(config["launch_buttons"]),
        "repository_url": url,
        "repository_branch": "main",
    }
    return types.SimpleNamespace(html_theme_options=theme, html_baseurl="")


def test_launch_buttons_and_repository_link_follow_the_setting():
    publish = _publish_extension()
    unset = _sphinx_config("")
    publish._apply_setting(None, unset)
    assert "launch_buttons" not in unset.html_theme_options
    assert unset.html_theme_options["use_repository_button"] is False
    assert unset.gpubook_site is None

    fork = _sphinx_config("https://github.com/someone/some-book")
    publish._apply_setting(None, fork)
    assert fork.html_theme_options["launch_buttons"]["colab_url"]
    assert fork.html_theme_options["repository_url"].endswith("someone/some-book")
    assert fork.html_theme_options["use_repository_button"] is True
    assert (
        fork.html_baseurl == fork.gpubook_site == "https://someone.github.io/some-book/"
    )
    cell = install.install_cell(
        {"repository": {"url": "https://github.com/someone/some-book"}}
    )
    assert fork.gpubook_site in cell


def test_the_site_serves_the_wheel_with_its_sha256(built_book):
    html, _ = built_book
    name, data = install.wheel_bytes()
    wheel = html / "_static" / name
    assert wheel.exists(), f"{name} is not served with the book"
    served = hashlib.sha256(wheel.read_bytes()).hexdigest()
    recorded = (html / "_static" / f"{name}.sha256").read_text().split()[0]
    assert served == recorded
    assert served == hashlib.sha256(data).hexdigest(), "the wheel is not reproducible"

"""Publish the book from one setting, and serve the helper package's wheel with it.

The one setting is ``repository.url`` in ``_config.yml`` (see gpubook/install.py):

* set (``https://github.com/OWNER/REPO``): the header links the repository, every
  chapter gets its Colab and Binder launch buttons, ``html_baseurl`` becomes the
  repository's GitHub Pages address, and the build checks that every notebook's first
  code cell installs exactly the wheel this build serves (a warning: an error under -W);
* empty: the book is published nowhere, so it links no repository and offers no launch
  button (either would point at a repository nobody here controls); the notebooks' first
  cell installs nothing.

Either way the built site serves ``_static/gpubook-<version>-py3-none-any.whl`` and its
``.sha256``, built reproducibly from ``gpubook/`` by ``gpubook.install.wheel_bytes``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def _install_module():
    """gpubook/install.py alone, without the package's __init__ (which imports torch):
    the book builds without PyTorch."""
    if "gpubook_install" in sys.modules:
        return sys.modules["gpubook_install"]
    path = Path(__file__).resolve().parents[2] / "gpubook" / "install.py"
    spec = importlib.util.spec_from_file_location("gpubook_install", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpubook_install"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _setting(config) -> dict:
    """The one setting as Jupyter Book handed it to Sphinx (from _config.yml, or from
    the file given with --config), shaped like _config.yml for gpubook.install."""
    url = config.html_theme_options.get("repository_url") or ""
    return {"repository": {"url": url}, "html": {"baseurl": config.html_baseurl or ""}}


def _apply_setting(app, config) -> None:
    install = _install_module()

    site = install.publication(_setting(config)).site
    options = config.html_theme_options
    config.gpubook_site = site
    if site is None:
        options.pop("launch_buttons", None)
        options.pop("repository_url", None)
        options["use_repository_button"] = False
        return
    options["use_repository_button"] = True
    if not config.html_baseurl:
        config.html_baseurl = site


def _serve_wheel(app) -> None:
    install = _install_module()

    root = Path(app.confdir)
    staging = Path(app.doctreedir).parent / "gpubook_wheel"
    _, sha256 = install.write_wheel(staging, root)
    app.config.html_static_path = [*app.config.html_static_path, str(staging)]
    site = app.config.gpubook_site
    if site is None:
        return
    cell = install.install_cell(
        {"repository": {"url": "set"}, "html": {"baseurl": site}}
    )
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        first = install.first_code_cell(json.loads(path.read_text(encoding="utf-8")))
        source = install._source(first) if first else ""
        if not install.has_install_cell(source, cell):
            LOGGER.warning(
                "%s: its first code cell does not install the wheel this build serves "
                "(%s, sha256 %s...); run `python -m gpubook.install stamp notebooks/`",
                path.relative_to(root),
                site,
                sha256[:12],
                type="gpubook",
                subtype="install-cell",
            )


def setup(app):
    app.add_config_value("gpubook_site", None, "html")
    app.connect("config-inited", _apply_setting)
    app.connect("builder-inited", _serve_wheel)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

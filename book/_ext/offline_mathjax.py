"""Serve MathJax with the book instead of from a CDN.

A default Jupyter Book page loads MathJax 3 from a CDN. In a classroom with a poor network, or any
machine offline, every page then logs a failed request and no formula renders. When the
`django-static-mathjax` package (MathJax 3.2.2's files, pinned in requirements.txt) is installed,
this extension copies the parts a page needs (the tex-mml-chtml component, its fonts and the TeX
extensions it may load) into the built site's `_static/mathjax/` and points Sphinx at that copy.
Without the package the book keeps the CDN.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

PARTS = ("tex-mml-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y")


def _mathjax_es5() -> Path | None:
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        return None
    es5 = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    return es5 if (es5 / "tex-mml-chtml.js").exists() else None


def _use_local_mathjax(app) -> None:
    es5 = _mathjax_es5()
    if es5 is None:
        return
    staging = Path(app.doctreedir).parent / "offline_mathjax"
    target = staging / "mathjax"
    if not (target / "tex-mml-chtml.js").exists():
        for part in PARTS:
            source = es5 / part
            if source.is_dir():
                shutil.copytree(source, target / part, dirs_exist_ok=True)
            elif source.exists():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / part)
    app.config.html_static_path = [*app.config.html_static_path, str(staging)]
    app.config.mathjax_path = "mathjax/tex-mml-chtml.js"


def setup(app):
    app.connect("builder-inited", _use_local_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

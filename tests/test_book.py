"""The book builds with warnings as errors, its table of contents matches the files, and every
chapter page shows at least one plot."""

import re

import yaml

from conftest import NOTEBOOKS, ROOT


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part.get("chapters", [])]
    return files


def test_every_notebook_is_in_the_toc_and_every_entry_exists():
    files = _toc_files()
    for notebook in NOTEBOOKS:
        assert f"notebooks/{notebook.stem}" in files, f"{notebook.name} is missing from _toc.yml"
    for entry in files:
        exists = (ROOT / f"{entry}.md").exists() or (ROOT / f"{entry}.ipynb").exists()
        assert exists, f"_toc.yml names {entry}, which does not exist"


def test_book_builds_without_warnings(built_book):
    html, log = built_book
    assert (html / "index.html").exists()
    assert not re.search(r"\bWARNING\b", log), log[-4000:]


def test_every_chapter_page_shows_a_plot(built_book):
    html, _ = built_book
    for notebook in NOTEBOOKS:
        if notebook.stem.startswith("00_"):
            continue  # the setup check has no benchmark
        page = (html / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
        assert re.search(r'<img[^>]+src="[^"]+\.png"', page), f"{notebook.name}: no plot on its page"

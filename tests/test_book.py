"""The book builds from scratch with warnings as errors (the ``built_book`` fixture in
conftest.py, a fresh temporary folder), its table of contents matches the files, and
every chapter page shows at least one plot."""

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
        assert f"notebooks/{notebook.stem}" in files, (
            f"{notebook.name} is missing from _toc.yml"
        )
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
        page = (html / "notebooks" / f"{notebook.stem}.html").read_text(
            encoding="utf-8"
        )
        assert re.search(r'<img[^>]+src="[^"]+\.png"', page), (
            f"{notebook.name}: no plot on its page"
        )


def test_glued_sentences_render_their_inline_markup(built_book):
    """Verdicts glued as strings keep no literal backticks or asterisks on the page
    (book/_ext/glued_markup.py)."""
    from html.parser import HTMLParser

    class PastedText(HTMLParser):
        """Collects the text of each <span class="pasted-text">, nested tags too."""

        def __init__(self):
            super().__init__()
            self.depth, self.texts = 0, []

        def handle_starttag(self, tag, attrs):
            if self.depth:
                self.depth += tag == "span"
            elif (
                tag == "span"
                and "pasted-text" in (dict(attrs).get("class") or "").split()
            ):
                self.depth = 1
                self.texts.append("")

        def handle_endtag(self, tag):
            if self.depth and tag == "span":
                self.depth -= 1

        def handle_data(self, data):
            if self.depth:
                self.texts[-1] += data

    html, _ = built_book
    for notebook in NOTEBOOKS:
        parser = PastedText()
        parser.feed(
            (html / "notebooks" / f"{notebook.stem}.html").read_text(encoding="utf-8")
        )
        for text in parser.texts:
            assert "`" not in text and "**" not in text, (
                f"{notebook.name}: unrendered markup in {text[:120]!r}"
            )


def test_glued_markup_nodes():
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from glued_markup import markup_nodes

    parts = markup_nodes("`default` did *not* win, **really**; 2 * 3 stays")
    assert [type(part).__name__ for part in parts] == [
        "literal",
        "Text",
        "emphasis",
        "Text",
        "strong",
        "Text",
    ]
    assert (
        "".join(part.astext() for part in parts)
        == "default did not win, really; 2 * 3 stays"
    )

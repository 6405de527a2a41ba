"""The built site, read as a reader would: in headless Chromium, through a local server.

Every page of the book loads without console errors, shows all its images and no stored
traceback; chapter pages offer the download button, copy buttons on code and, when the
book is published (repository.url), the launch (Colab, Binder) buttons; exercise
solutions stay hidden until clicked; no code or output block overflows the column; the
sidebar links every chapter; search finds each chapter by a word of its title. A
screenshot of each page is saved under test-artifacts/site/.

Uses Debian's Chromium (``apt-get install chromium``) driven by Playwright, never a
downloaded browser; ``GPUBOOK_CHROMIUM=/path/to/chrome`` points it at another Chromium
or at Google Chrome (Ubuntu's ``chromium`` package is a snap stub). Without a browser
the tests are skipped, except where ``GPUBOOK_REQUIRE_BROWSER=1`` (CI).
"""

import functools
import http.server
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
import yaml

from conftest import NOTEBOOKS, ROOT

CHROMIUM = Path(os.environ.get("GPUBOOK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
ARTIFACTS = ROOT / "test-artifacts" / "site"
TRACEBACK = re.compile(r"Traceback \(most recent call last\)")
STOPWORDS = {
    "and",
    "the",
    "for",
    "with",
    "from",
    "into",
    "when",
    "what",
    "your",
    "that",
    "this",
    "chapter",
}


def _toc_pages():
    """Every page of the book (docnames, e.g. ``book/intro``), in the toc's order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [chapter["file"] for chapter in part.get("chapters", [])]
    return [
        page
        for page in pages
        if (ROOT / f"{page}.md").exists() or (ROOT / f"{page}.ipynb").exists()
    ]


PAGES = _toc_pages()
CHAPTERS = [f"notebooks/{path.stem}" for path in NOTEBOOKS]


def _browser_missing():
    if not CHROMIUM.exists():
        return (
            f"no Chromium at {CHROMIUM} (Debian: sudo apt-get install chromium; or set"
            " GPUBOOK_CHROMIUM to a Chromium or Google Chrome executable)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -r requirements.txt)"
    return None


@pytest.fixture(scope="module")
def site(request):
    """Base URL of the built book, served on 127.0.0.1 by a threaded http.server."""
    missing = _browser_missing()
    if missing:
        if os.environ.get("GPUBOOK_REQUIRE_BROWSER") == "1":
            pytest.fail(f"GPUBOOK_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(f"browser test skipped: {missing}")
    html, _ = request.getfixturevalue("built_book")

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(html))
    )
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(site):
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
    )
    yield chromium
    chromium.close()
    playwright.stop()


class Visit:
    """One page opened in a fresh browser page, with everything it logged."""

    def __init__(self, browser, url):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors = []
        self.page.on(
            "console",
            lambda m: (
                m.type == "error"
                and self.errors.append(f"console: {m.text} ({m.location.get('url')})")
            ),
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.page.on(
            "requestfailed",
            lambda r: self.errors.append(f"request failed: {r.url} ({r.failure})"),
        )
        response = self.page.goto(url, wait_until="load")
        assert response is not None and response.ok, (
            f"{url}: HTTP {response and response.status}"
        )
        self.page.wait_for_load_state("networkidle")

    def close(self):
        self.page.close()


@pytest.fixture
def visit(browser):
    opened = []

    def open_page(url):
        opened.append(Visit(browser, url))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()


@pytest.mark.parametrize("docname", PAGES)
def test_page_loads_cleanly(site, visit, docname):
    """No console errors, every image loaded, no stored traceback; a screenshot."""
    page = visit(f"{site}/{docname}.html")
    # Load any lazily loaded image, then wait until each has finished (or failed).
    broken = page.page.evaluate(
        """async () => {
            const images = [...document.images];
            images.forEach(img => { img.loading = "eager"; });
            await Promise.all(images.map(img => img.decode().catch(() => null)));
            return images.filter(img => !(img.complete && img.naturalWidth > 0))
                .map(img => img.src);
        }"""
    )
    page.page.screenshot(
        path=str(ARTIFACTS / f"{docname.replace('/', '__')}.png"), full_page=True
    )
    problems = [f"the browser logged: {error}" for error in page.errors]
    problems += [f"image did not load: {src}" for src in broken]
    text = page.page.inner_text("article")
    if (
        TRACEBACK.search(text)
        or page.page.locator("article .output.traceback, article .output.error").count()
    ):
        problems.append(
            "a stored traceback is shown (catch the error in the cell and print its"
            " message instead)"
        )
    assert not problems, f"{docname}:\n" + "\n".join(problems)


@pytest.mark.parametrize("docname", CHAPTERS)
def test_chapter_buttons_follow_the_publishing_setting(site, visit, docname):
    """Launch buttons and the repository link come from _config.yml's repository.url
    (the one publishing setting, gpubook/install.py); while it is empty there are none:
    they would point at a repository nobody here controls. The .ipynb download and
    the copy buttons are always there."""
    from gpubook import install

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    page = visit(f"{site}/{docname}.html").page
    links = page.eval_on_selector_all(
        "a[href]", "links => links.map(a => a.getAttribute('href'))"
    )
    assert any(link.endswith(f"_sources/{docname}.ipynb") for link in links), (
        "no .ipynb download"
    )
    assert page.locator("button.copybtn").count() >= 1, "no copy buttons on code cells"
    launch = config["launch_buttons"]
    colab_prefix, binder_prefix = launch["colab_url"], launch["binderhub_url"]
    if install.publication(config).site is None:
        header = page.eval_on_selector_all(
            ".bd-header-article a[href]", "links => links.map(a => a.href)"
        )
        stray = [
            link for link in links if link.startswith((colab_prefix, binder_prefix))
        ]
        stray += [link for link in header if link.startswith("https://github.com/")]
        assert not stray, f"repository.url is unset, yet the page links {stray}"
        return
    repository, branch = config["repository"]["url"], config["repository"]["branch"]
    slug = repository.removeprefix("https://github.com/").strip("/")
    colab = f"{colab_prefix}/github/{slug}/blob/{branch}/{docname}.ipynb"
    assert colab in links, f"no Colab button ({colab})"
    binder = f"{binder_prefix}/v2/gh/{slug}/{branch}"
    assert any(link.startswith(binder) for link in links), (
        f"no Binder button ({binder})"
    )
    assert repository in links, "no repository link"


def test_solutions_are_hidden_until_clicked(site, visit):
    chapters = [
        name
        for name in CHAPTERS
        if "{solution" in (ROOT / f"{name}.ipynb").read_text(encoding="utf-8")
    ]
    if not chapters:
        pytest.skip("no chapter has exercise solutions yet")
    page = visit(f"{site}/{chapters[0]}.html").page
    solution = page.locator(".solution.dropdown").first
    body = solution.locator("section").first
    assert body.count() == 1 and not body.is_visible(), (
        f"{chapters[0]}: a solution is shown before it is clicked"
    )
    solution.locator("button.toggle-button").first.click()
    body.wait_for(state="visible", timeout=5000)


def test_sidebar_links_every_chapter(site, visit):
    page = visit(f"{site}/index.html").page  # a redirect to the root page
    page.wait_for_selector("nav.bd-docs-nav")
    hrefs = page.eval_on_selector_all(
        "nav.bd-docs-nav a[href]", "links => links.map(a => a.href)"
    )
    missing = [
        name
        for name in CHAPTERS
        if not any(href.split("#")[0].endswith(f"/{name}.html") for href in hrefs)
    ]
    assert not missing, f"the sidebar does not link: {missing}"


def _title_word(docname):
    """A distinctive word of a chapter's title: the longest one no other title has."""
    titles = {}
    for name in CHAPTERS:
        cells = json.loads((ROOT / f"{name}.ipynb").read_text(encoding="utf-8"))[
            "cells"
        ]
        first = "".join(cells[0]["source"]) if cells else ""
        titles[name] = first.splitlines()[0].lstrip("# ") if first else ""

    def words(title):
        return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", title)} - STOPWORDS

    def longest_first(found):
        return sorted(found, key=lambda w: (-len(w), w))

    others = set().union(*(words(t) for n, t in titles.items() if n != docname))
    candidates = longest_first(words(titles[docname]) - others) or longest_first(
        words(titles[docname])
    )
    return candidates[0] if candidates else None


@pytest.mark.parametrize("docname", CHAPTERS)
def test_search_finds_the_chapter(site, visit, docname):
    word = _title_word(docname)
    if word is None:
        pytest.skip(f"{docname}: no searchable word in its title")
    page = visit(f"{site}/search.html?q={word}")
    # Sphinx searches in JavaScript, adding results one by one.
    result = page.page.locator(f'#search-results a[href*="{docname}.html"]').first
    result.wait_for(state="attached", timeout=20_000)
    assert not page.errors, "\n".join(page.errors)


# Issue 17: no code or output block of a chapter overflows the column (a reader on a
# 1280-pixel-wide screen sees it whole), and no table is cut off. Printed output wraps
# (book/_static/custom.css); code lines stay within 88 characters. With the switch off,
# a chapter that overflows is listed (page, block) and marked xfail instead of failing.
OVERFLOW_CHECKED = True
OVERFLOW_TOLERANCE_PX = 4

OPEN_SOLUTIONS = """() => {
    for (const button of document.querySelectorAll('.dropdown button.toggle-button')) {
        if (button.getAttribute('aria-expanded') !== 'true') button.click();
    }
}"""

# Blocks that overflow: a <pre> or an output box that scrolls sideways (scrollWidth >
# clientWidth), a table wider than the box that clips or scrolls it, or anything that
# reaches past the article's right edge. Each is named by code cell, section and text.
OVERFLOWING_BLOCKS = r"""(tolerance) => {
    const article = document.querySelector('article.bd-article');
    const articleRight = article.getBoundingClientRect().right
        - parseFloat(getComputedStyle(article).paddingRight);
    const cells = [...article.querySelectorAll('div.cell')];
    // Closed <details> (hide-input cells) keep a layout box: skip what is inside them.
    const visible = el => el.getClientRects().length > 0
        && getComputedStyle(el).visibility !== 'hidden'
        && !el.closest('details:not([open])')
        && (!el.checkVisibility || el.checkVisibility({contentVisibilityAuto: true}));
    const clipRight = el => {
        for (let box = el.parentElement; box && box !== article;) {
            if (getComputedStyle(box).overflowX !== 'visible') {
                const left = box.getBoundingClientRect().left + box.clientLeft;
                return left + box.clientWidth;
            }
            box = box.parentElement;
        }
        return articleRight;
    };
    const where = el => {
        const cell = el.closest('div.cell');
        const part = el.closest('div.cell_output') ? 'output'
            : el.closest('div.cell_input') ? 'code' : 'text';
        const section = el.closest('section');
        const heading = section && section.querySelector('h1, h2, h3, h4');
        const title = heading
            ? heading.textContent.replace(/[#\u00b6]/g, '').trim() : '';
        const first = (el.innerText || '').trim().split('\n')[0].slice(0, 70);
        return `${part}${cell ? ` of code cell ${cells.indexOf(cell) + 1}` : ''}`
            + `${title ? ` in "${title}"` : ''}: ${JSON.stringify(first)}`;
    };
    const selector = 'pre, div.cell_output div.output, table,'
        + ' .pst-scrollable-table-container';
    const reported = [], problems = [];
    for (const el of article.querySelectorAll(selector)) {
        if (!visible(el) || reported.some(r => r.contains(el))) continue;
        // A library's text table (cells tagged wide-output) scrolls by design.
        if (el.closest('div.cell.tag_wide-output')) continue;
        const scrolls = el.scrollWidth - el.clientWidth;
        const right = el.getBoundingClientRect().right;
        const clipped = el.tagName === 'TABLE' ? right - clipRight(el) : 0;
        const past = right - articleRight;
        let what = null;
        if (clipped > tolerance) what = `table cut off by ${Math.round(clipped)} px`;
        else if (scrolls > tolerance) what = `scrolls sideways by ${scrolls} px`;
        else if (past > tolerance) what = `${Math.round(past)} px past the edge`;
        if (what) {
            reported.push(el);
            problems.push(`${where(el)} (${what})`);
        }
    }
    // One line per block: consecutive lines of one output (one <pre> per print) merge.
    const merged = [];
    for (const problem of problems) {
        const key = problem.split(': ')[0];
        const last = merged[merged.length - 1];
        if (last && last.key === key) last.count += 1;
        else merged.push({key, problem, count: 1});
    }
    return merged.map(
        m => m.count > 1 ? `${m.problem} and ${m.count - 1} more` : m.problem);
}"""


@pytest.mark.parametrize("docname", CHAPTERS)
def test_chapter_blocks_fit_the_column(site, visit, docname):
    """At 1280 px, with the exercise solutions opened, no code or output block scrolls
    sideways or reaches past the column, and no table is cut off."""
    page = visit(f"{site}/{docname}.html").page
    page.evaluate(OPEN_SOLUTIONS)
    problems = page.evaluate(OVERFLOWING_BLOCKS, OVERFLOW_TOLERANCE_PX)
    if not problems:
        return
    message = f"{docname}: {len(problems)} blocks overflow the column:\n" + "\n".join(
        problems
    )
    if not OVERFLOW_CHECKED:
        pytest.xfail(message)
    pytest.fail(message)

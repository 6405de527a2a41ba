"""The first code cell of every chapter, and the wheel of gpubook that it installs.

A notebook opened on its own (Colab, a download) needs this helper package. Its first
code cell installs it only from the book's own published site, pinned by sha256, and
only when the package is missing; it never touches torch. Where the book is published
comes from ONE setting, ``repository.url`` in ``_config.yml`` (the header's repository
link and the Colab and Binder launch buttons read it too). The site is that
repository's GitHub Pages address, ``https://OWNER.github.io/REPO/`` (``html.baseurl``
overrides it, for a custom domain). While the setting is empty the book is published
nowhere: the cell installs nothing and says what to do instead.

The book's build (``book/_ext/publish.py``) serves the wheel at
``<site>/_static/gpubook-<version>-py3-none-any.whl``, with a ``.sha256`` file beside
it. The wheel is built here, byte for byte reproducibly (fixed timestamps, stored
uncompressed), from ``gpubook/*.py`` and ``pyproject.toml``, so the hash in the
notebooks is the hash of the wheel that the site serves. ``tests/test_install.py``
checks that every notebook's first code cell starts with the cell rendered here.

Commands (from the repository's root)::

    python -m gpubook.install cell              # print the install cell
    python -m gpubook.install wheel DIR         # write the wheel into DIR
    python -m gpubook.install stamp notebooks/  # rewrite each notebook's install cell
    python -m gpubook.install check URL         # is repository.url this URL? (CI)

After changing gpubook or the setting, run ``stamp`` and commit the notebooks: a
published book checks that its notebooks pin the wheel it serves (its build warns).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALL_STATEMENT = 'if importlib.util.find_spec("gpubook") is None'
# Fixed for every file in the wheel, so that the same sources give the same bytes.
ZIP_DATE = (2020, 1, 1, 0, 0, 0)
GITHUB = re.compile(
    r"https://github\.com/([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?"
)


@dataclass(frozen=True)
class Publication:
    """Where the book is published (``site`` is None while the setting is empty)."""

    repository: str
    site: str | None


def _load_yaml(path):
    import yaml  # a dependency of the book's build, not of the package

    return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}


def publication(config: dict | None = None, root: Path = ROOT) -> Publication:
    """Read the one setting (``repository.url``, and ``html.baseurl`` if set) from
    ``_config.yml`` (or from ``config``, a dict shaped like it)."""
    if config is None:
        config = _load_yaml(root / "_config.yml")
    repository = ((config.get("repository") or {}).get("url") or "").strip()
    if not repository:
        return Publication("", None)
    baseurl = ((config.get("html") or {}).get("baseurl") or "").strip()
    if baseurl:
        return Publication(repository, baseurl.rstrip("/") + "/")
    match = GITHUB.fullmatch(repository)
    if not match:
        raise ValueError(
            f"repository.url in _config.yml is {repository!r}: expected "
            "https://github.com/OWNER/REPO (or set html.baseurl to the book's address)"
        )
    owner, repo = match.group(1).lower(), match.group(2)
    if repo.lower() == f"{owner}.github.io":
        return Publication(repository, f"https://{owner}.github.io/")
    return Publication(repository, f"https://{owner}.github.io/{repo}/")


def _project(root: Path = ROOT) -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]


def wheel_name(root: Path = ROOT) -> str:
    project = _project(root)
    return f"{project['name']}-{project['version']}-py3-none-any.whl"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def wheel_bytes(root: Path = ROOT) -> tuple[str, bytes]:
    """The wheel of gpubook, ``(file name, bytes)``: same sources, same bytes."""
    project = _project(root)
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"gpubook/{path.name}": path.read_bytes()
        for path in sorted((root / "gpubook").glob("*.py"))
    }
    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.10')}",
        *(f"Requires-Dist: {dependency}" for dependency in project["dependencies"]),
    ]
    files[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    wheel = "Wheel-Version: 1.0\nGenerator: gpubook.install\nRoot-Is-Purelib: true\n"
    files[f"{dist_info}/WHEEL"] = (wheel + "Tag: py3-none-any\n").encode()
    files[f"{dist_info}/top_level.txt"] = b"gpubook\n"
    record = [
        f"{path},{_record_hash(data)},{len(data)}" for path, data in files.items()
    ]
    files[f"{dist_info}/RECORD"] = (
        "\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n"
    ).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return wheel_name(root), buffer.getvalue()


def write_wheel(directory, root: Path = ROOT) -> tuple[Path, str]:
    """Write the wheel and ``<wheel>.sha256`` into ``directory``: (path, sha256)."""
    name, data = wheel_bytes(root)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    sha256 = hashlib.sha256(data).hexdigest()
    (directory / name).write_bytes(data)
    (directory / f"{name}.sha256").write_text(f"{sha256}  {name}\n", encoding="utf-8")
    return directory / name, sha256


UNPUBLISHED_CELL = """\
# Opened on its own (Colab, a download)? This copy of the book names no published
# site to install its helper package from: this cell installs nothing.
import importlib.util

if importlib.util.find_spec("gpubook") is None:
    raise SystemExit(
        "The book's helper package gpubook is not installed: in a clone of the"
        " book's repository run `pip install -e .` (or `pip install` the gpubook"
        " wheel from the _static folder of the built book), then run this again."
    )"""

PUBLISHED_CELL = """\
# Opened on its own (Colab)? Install the book's helper package from the book's own site,
# pinned by its sha256; torch is never installed or replaced (gpubook/install.py).
import importlib.util
import subprocess
import sys

SITE = "{site}"
WHEEL = SITE + "_static/{wheel}"
SHA256 = "{sha256}"
if importlib.util.find_spec("gpubook") is None:
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"{{WHEEL}}#sha256={{SHA256}}"], check=True)"""


def install_cell(config: dict | None = None, root: Path = ROOT) -> str:
    """The source of the install cell (no trailing newline), from the one setting."""
    site = publication(config, root).site
    if site is None:
        return UNPUBLISHED_CELL
    name, data = wheel_bytes(root)
    sha256 = hashlib.sha256(data).hexdigest()
    return PUBLISHED_CELL.format(site=site, wheel=name, sha256=sha256)


def _source(cell) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def first_code_cell(nb: dict):
    return next((c for c in nb["cells"] if c["cell_type"] == "code"), None)


def has_install_cell(source: str, cell: str) -> bool:
    """True when ``source`` is ``cell``, or starts with it followed by a blank line."""
    return source.rstrip("\n") == cell or source.startswith(cell + "\n\n")


_OLD_INSTALL_LINE = re.compile(
    r"(#.*|\s*|import (importlib\.util|subprocess|sys)|(SITE|WHEEL|SHA256) = .*)"
)


def stamp_source(source: str, cell: str, rest_of_notebook: str = "") -> str:
    """``source`` with its install block replaced by ``cell`` (prepended if none).

    The install block is everything up to the end of the ``if find_spec("gpubook")``
    statement. Lines in it that do not belong to an install (``started = ...``) move
    below the cell; its ``import sys``/``import subprocess`` stay where the notebook
    still uses those modules and the new cell does not import them.
    """
    lines = source.rstrip("\n").split("\n")
    start = next(
        (i for i, line in enumerate(lines) if line.startswith(INSTALL_STATEMENT)), None
    )
    if start is None:
        head, rest = [], lines
    else:
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t)"):
            end += 1
        head, rest = lines[:start], lines[end:]
    kept = [line for line in head if not _OLD_INSTALL_LINE.fullmatch(line)]
    body = "\n".join(kept + rest)
    uses = body + "\n" + rest_of_notebook
    for module in ("sys", "subprocess"):
        was_imported = f"import {module}" in head
        imported = re.search(rf"^import {module}$", cell + "\n" + body, re.M)
        if was_imported and not imported and re.search(rf"\b{module}\.", uses):
            kept.insert(0, f"import {module}")
    while rest and not rest[0].strip():
        rest = rest[1:]
    parts = [cell]
    imports = sorted(line for line in kept if line.startswith(("import ", "from ")))
    others = [line for line in kept if line not in imports]
    parts += ["\n".join(group) for group in (imports, others) if group]
    if rest:
        parts.append("\n".join(rest))
    return "\n\n".join(parts)


def stamp(paths, config: dict | None = None, root: Path = ROOT) -> list[Path]:
    """Rewrite the install block of each notebook's first code cell; return the
    notebooks changed.

    Only that cell's source changes: its outputs, metadata and every other cell stay.
    """
    cell = install_cell(config, root)
    changed = []
    for path in _notebooks(paths):
        text = path.read_text(encoding="utf-8")
        nb = json.loads(text)
        first = first_code_cell(nb)
        if first is None:
            continue
        others = "\n".join(
            _source(c)
            for c in nb["cells"]
            if c is not first and c["cell_type"] == "code"
        )
        new = stamp_source(_source(first), cell, others)
        if new == _source(first):
            continue
        first["source"] = new.splitlines(keepends=True)
        # nbformat's own layout, so that the diff is that one cell's source
        out = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_text(out, encoding="utf-8")
        changed.append(path)
    return changed


def _notebooks(paths):
    for path in map(Path, paths):
        if path.is_dir():
            yield from sorted(path.glob("[0-9][0-9]_*.ipynb"))
        else:
            yield path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv.pop(0) if argv else "help"
    if command == "cell" and not argv:
        print(install_cell())
    elif command == "wheel" and len(argv) == 1:
        path, sha256 = write_wheel(argv[0])
        print(f"{path}  sha256={sha256}")
    elif command == "stamp" and argv:
        changed = stamp(argv)
        names = ", ".join(path.name for path in changed) or "-"
        print(f"stamped {len(changed)} notebook(s): {names}")
        print(f"source: {publication().site or 'none (repository.url is not set)'}")
    elif command == "check" and len(argv) == 1:
        setting = publication().repository
        if setting.rstrip("/").lower() != argv[0].rstrip("/").lower():
            print(
                f"_config.yml's repository.url is {setting!r}, not {argv[0]!r}: set it"
                " to this repository's URL, run `python -m gpubook.install stamp"
                " notebooks/` and commit (README.md: publishing the book)."
            )
            return 1
        print(f"repository.url names this repository; the site: {publication().site}")
    else:
        usage = __doc__.split("Commands")[1].split("::\n\n", 1)[1].split("\n\n")[0]
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

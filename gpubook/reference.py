"""The reference run: execute notebooks in place and record where their outputs came from.

Usage::

    python -m gpubook.reference run notebooks/              # every chapter, in place
    python -m gpubook.reference run notebooks/03_compile_basics.ipynb --profile ci
    python -m gpubook.reference check notebooks/            # stale or broken stored outputs

``run`` executes each notebook with nbclient (cells in order, generous timeouts: a first compile can
take minutes), stores the outputs, and writes provenance into the notebook's metadata under
``gpubook``: device name, torch/triton/numpy versions, date, profile, run time, and a hash of the
code cells. ``check`` lists every notebook whose code changed since its recorded run (stale) and
every stored error output outside cells tagged ``raises-exception`` (broken); it exits 1 on broken
notebooks only, since refreshing stale outputs needs a GPU.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

import nbformat

__all__ = ["code_hash", "provenance", "run_notebook", "check_notebook", "notebook_paths", "main"]

METADATA_KEY = "gpubook"
CELL_TIMEOUT_SECONDS = 1800


def notebook_paths(targets: list[str | Path]) -> list[Path]:
    """Expand folders into their ``NN_*.ipynb`` notebooks, in reading order."""
    paths: list[Path] = []
    for target in map(Path, targets):
        if target.is_dir():
            paths += sorted(target.glob("[0-9][0-9]_*.ipynb"))
        elif target.suffix == ".ipynb" and target.exists():
            paths.append(target)
        else:
            raise FileNotFoundError(f"{target} is neither a folder nor an existing .ipynb file")
    return paths


def code_hash(notebook: nbformat.NotebookNode) -> str:
    """SHA-256 (first 16 hex digits) of the notebook's code cells' sources, in order."""
    digest = hashlib.sha256()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            digest.update(cell.source.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()[:16]


def provenance(notebook: nbformat.NotebookNode, profile: str, seconds: float) -> dict:
    """The facts recorded with a run: what ran, where, when and how long."""
    from .environment import collect

    facts = collect()
    return {
        "device_name": facts["device_name"],
        "device": facts["device"],
        "torch": facts["torch"],
        "triton": facts["triton"],
        "numpy": facts["numpy"],
        "python": facts["python"],
        "date": facts["date"],
        "profile": profile,
        "run_seconds": round(seconds, 1),
        "code_hash": code_hash(notebook),
    }


def run_notebook(path: Path, profile: str | None = None, timeout: int = CELL_TIMEOUT_SECONDS) -> dict:
    """Execute ``path`` in place under ``profile`` (default: the active one); return its provenance."""
    from nbclient import NotebookClient

    from .profiles import PROFILE_VARIABLE, get_profile

    if profile is not None:
        os.environ[PROFILE_VARIABLE] = profile
    profile = get_profile()
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    record = provenance(notebook, profile, time.perf_counter() - start)
    notebook.metadata[METADATA_KEY] = record
    nbformat.write(notebook, path)
    return record


def check_notebook(path: Path) -> tuple[list[str], list[str]]:
    """Return ``(stale, broken)`` messages for one notebook."""
    notebook = nbformat.read(path, as_version=4)
    stale, broken = [], []
    record = notebook.metadata.get(METADATA_KEY)
    if record is None:
        stale.append(f"{path.name}: no recorded reference run")
    elif record.get("code_hash") != code_hash(notebook):
        stale.append(f"{path.name}: code changed since its run of {record.get('date')} on {record.get('device_name')}")
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                broken.append(f"{path.name}, cell {index}: stored error {output.get('ename')}: {output.get('evalue')}")
    return stale, broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpubook.reference", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="execute notebooks in place and record provenance")
    run_parser.add_argument("targets", nargs="+", help="notebooks or folders of notebooks")
    run_parser.add_argument("--profile", choices=("gpu", "cpu", "ci"), help="size profile (default: active one)")
    run_parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT_SECONDS, help="seconds allowed per cell")
    check_parser = commands.add_parser("check", help="list stale notebooks and stored errors")
    check_parser.add_argument("targets", nargs="+", help="notebooks or folders of notebooks")
    args = parser.parse_args(argv)

    paths = notebook_paths(args.targets)
    if args.command == "run":
        failures = 0
        for path in paths:
            print(f"running {path.name} ...", flush=True)
            try:
                record = run_notebook(path, args.profile, args.timeout)
            except Exception as error:  # report and go on with the other notebooks
                failures += 1
                print(f"  FAILED: {type(error).__name__}: {str(error)[-2000:]}", flush=True)
                continue
            print(f"  {record['run_seconds']} s on {record['device_name']} ({record['profile']})", flush=True)
        return 1 if failures else 0
    problems = 0
    for path in paths:
        stale, broken = check_notebook(path)
        for message in stale:
            print(f"stale (refresh on a GPU): {message}")
        for message in broken:
            print(f"BROKEN: {message}")
        problems += len(broken)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

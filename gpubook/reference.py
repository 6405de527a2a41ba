"""The reference run: execute notebooks in place and record where their outputs came from.

Usage::

    python -m gpubook.reference run notebooks/              # every chapter, in place
    python -m gpubook.reference run notebooks/03_compile_basics.ipynb --profile ci
    python -m gpubook.reference check notebooks/            # stale or broken stored outputs
    python -m gpubook.reference results                      # write book/reference-results.md
    python -m gpubook.reference cpu-times notebooks/         # time each notebook on this CPU machine
    python -m gpubook.reference times                        # write book/_generated/run-times.md

``run`` executes each notebook with nbclient (cells in order, generous timeouts: a first compile can
take minutes), stores the outputs, and writes provenance into the notebook's metadata under
``gpubook``: device name, torch/triton/numpy versions, date, profile, run time, and a hash of the
code cells. ``check`` lists every notebook whose code changed since its recorded run (stale) and
every stored error output outside cells tagged ``raises-exception`` (broken); it exits 1 on broken
notebooks only, since refreshing stale outputs needs a GPU.

``results`` collects the headline figures every chapter glues with :func:`gpubook.headline` (glued
dicts named ``headline_*``) and each notebook's provenance into one generated page,
``book/reference-results.md``. ``cpu-times`` executes notebooks under the ``cpu`` profile on a
machine without a GPU, in memory (the stored outputs stay those of the reference run), and records
each one's wall time in ``book/_data/cpu-run-times.json``. ``times`` writes
``book/_generated/run-times.md``, a table of each chapter's run time on the GPU (the reference run)
and on that CPU machine, which the workshop page includes. ``run`` and ``cpu-times`` rewrite both
pages when they finish; a test checks that the committed pages are in step with the notebooks.
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import nbformat

from .glue import HEADLINE_PREFIX

__all__ = [
    "code_hash",
    "provenance",
    "run_notebook",
    "staleness",
    "check_notebook",
    "notebook_paths",
    "headlines",
    "results_page",
    "cpu_time_notebook",
    "times_page",
    "write_pages",
    "main",
]

METADATA_KEY = "gpubook"
CELL_TIMEOUT_SECONDS = 1800
ROOT = Path(__file__).resolve().parent.parent
RESULTS_PAGE = Path("book") / "reference-results.md"
TIMES_PAGE = Path("book") / "_generated" / "run-times.md"
CPU_TIMES_FILE = Path("book") / "_data" / "cpu-run-times.json"


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


def _execute(notebook: nbformat.NotebookNode, path: Path, timeout: int) -> float:
    """Execute ``notebook`` (read from ``path``, run in its folder) in place; return wall seconds."""
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def run_notebook(path: Path, profile: str | None = None, timeout: int = CELL_TIMEOUT_SECONDS) -> dict:
    """Execute ``path`` in place under ``profile`` (default: the active one); return its provenance."""
    from .profiles import PROFILE_VARIABLE, get_profile

    if profile is not None:
        os.environ[PROFILE_VARIABLE] = profile
    profile = get_profile()
    notebook = nbformat.read(path, as_version=4)
    record = provenance(notebook, profile, _execute(notebook, path, timeout))
    notebook.metadata[METADATA_KEY] = record
    nbformat.write(notebook, path)
    return record


def staleness(notebook: nbformat.NotebookNode, record: dict) -> list[str]:
    """Why a notebook's recorded run no longer stands for it: code changed since, or not a GPU run."""
    reasons = []
    if record.get("code_hash") != code_hash(notebook):
        reasons.append("code changed since its recorded run")
    if record.get("profile") != "gpu":
        reasons.append(f"its recorded run used the {record.get('profile')!r} profile, not 'gpu'")
    return reasons


def check_notebook(path: Path) -> tuple[list[str], list[str]]:
    """Return ``(stale, broken)`` messages for one notebook."""
    notebook = nbformat.read(path, as_version=4)
    stale, broken = [], []
    record = notebook.metadata.get(METADATA_KEY)
    if record is None:
        stale.append(f"{path.name}: no recorded reference run")
    else:
        stale.extend(f"{path.name}: {reason} (run of {record.get('date')} on {record.get('device_name')})"
                     for reason in staleness(notebook, record))
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get("tags", []):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                broken.append(f"{path.name}, cell {index}: stored error {output.get('ename')}: {output.get('evalue')}")
    return stale, broken


# --- Generated pages: reference results and run times -------------------------------------------

_DO_NOT_EDIT = "Generated by `{command}` from the notebooks' stored outputs and metadata: do not edit by hand."


def _title(notebook: nbformat.NotebookNode, path: Path) -> str:
    """The chapter's title: the first ``# `` heading of its first markdown cell (else the file name)."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
            break
    return path.stem


def _cell(text: object) -> str:
    """A value made safe for one cell of a Markdown table."""
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _minutes(seconds: float) -> str:
    """A run time: seconds up to 90 s, minutes above."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def headlines(notebook: nbformat.NotebookNode, name: str = "notebook") -> list[dict]:
    """The headline records glued in ``notebook`` (outputs named ``headline_*``), in order.

    Each record is the dict :func:`gpubook.headline` glued, read back from its stored text form with
    :func:`ast.literal_eval`, plus ``key`` (the name after ``headline_``). A key glued twice keeps
    its last value. Raises :class:`ValueError` for a record that cannot be read.
    """
    records: dict[str, dict] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") not in ("display_data", "execute_result"):
                continue
            glued = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
            if not glued.startswith(HEADLINE_PREFIX):
                continue
            text = next((v for k, v in output.get("data", {}).items() if k.endswith("text/plain")), None)
            try:
                record = ast.literal_eval(text if isinstance(text, str) else "".join(text or []))
            except (ValueError, SyntaxError) as error:
                raise ValueError(f"{name}: glued {glued} is not a readable dict ({error})") from None
            if not isinstance(record, dict) or not {"case", "baseline_seconds", "optimized_seconds"} <= set(record):
                raise ValueError(f"{name}: glued {glued} is not a headline record: {text!r:.200}")
            records.pop(glued, None)
            records[glued] = {**record, "key": glued[len(HEADLINE_PREFIX):]}
    return list(records.values())


def _load_notebooks(root: Path) -> list[tuple[Path, nbformat.NotebookNode]]:
    return [(path, nbformat.read(path, as_version=4)) for path in notebook_paths([root / "notebooks"])]


def _status(notebook: nbformat.NotebookNode, record: dict) -> str:
    return "; ".join(staleness(notebook, record)) or "current"


def results_page(root: Path = ROOT) -> str:
    """The text of ``book/reference-results.md``, from the notebooks under ``root / "notebooks"``."""
    from .timing import format_ratio, format_seconds

    command = "python -m gpubook.reference results"
    lines = [
        f"<!-- {_DO_NOT_EDIT.format(command=command)} -->",
        "",
        "# Reference results",
        "",
        "The book's headline figures in one table, collected from the outputs stored in the",
        "chapters: the reference run, recorded on the device named in each row. Each chapter records",
        "its headline figures with `gpubook.headline` as it runs, and this page is generated from",
        f"them (`{command}`), so it always says what the notebooks say. *Baseline* and",
        "*optimized* are steady-state times per call (medians); *speedup* is their ratio; the last",
        "column gives, where it applies, the fraction of the hardware limit the optimized version",
        "reaches.",
        "",
        "## Headline figures",
        "",
    ]
    notebooks = _load_notebooks(root)
    rows = []
    for path, notebook in notebooks:
        link = f"[{_cell(_title(notebook, path))}](../notebooks/{path.name})"
        for record in headlines(notebook, path.name):
            fraction = record.get("limit_fraction")
            limit = "" if fraction is None else f"{fraction:.0%} of {record.get('limit') or 'the hardware limit'}"
            rows.append("| " + " | ".join([
                link,
                _cell(record["case"]),
                _cell(record.get("device", "")),
                _cell(f"{record.get('baseline', 'eager')}: {format_seconds(record['baseline_seconds'])}"),
                _cell(f"{record.get('optimized', 'compiled')}: {format_seconds(record['optimized_seconds'])}"),
                f"{format_ratio(record['baseline_seconds'] / record['optimized_seconds'])}×",
                _cell(limit) or "–",
            ]) + " |")
            link = ""  # the chapter is named on its first row only
    if rows:
        lines += [
            "| Chapter | Case | Device | Baseline | Optimized | Speedup | Fraction of the hardware limit |",
            "| --- | --- | --- | ---: | ---: | ---: | --- |",
            *rows,
        ]
    else:
        lines.append("No chapter has recorded a headline figure yet.")
    lines += [
        "",
        "## Where the numbers came from",
        "",
        "Each chapter's stored outputs come from one run of the whole notebook",
        "(`python -m gpubook.reference run notebooks/`), which records where and when it ran in the",
        "notebook's metadata; the first code cell of each chapter prints the same facts. A note after a",
        "chapter's line says when its outputs are not from a GPU run or its code changed after the run.",
        "",
    ]
    recorded = [(path, notebook, notebook.metadata.get(METADATA_KEY)) for path, notebook in notebooks]
    for path, notebook, record in recorded:
        name = f"[{_title(notebook, path)}](../notebooks/{path.name})"
        if not record:
            lines.append(f"- {name}: no recorded run.")
            continue
        facts = " · ".join([
            str(record.get("device_name", "?")),
            f"torch {record.get('torch', '?')}",
            f"Triton {record.get('triton', '?')}",
            f"NumPy {record.get('numpy', '?')}",
            f"profile `{record.get('profile', '?')}`",
            str(record.get("date", "?")),
            f"{_minutes(record.get('run_seconds', 0))}",
        ])
        status = _status(notebook, record)
        lines.append(f"- {name}: {facts}" + ("" if status == "current" else f". **Note:** {status}."))
    gpu_seconds = [r.get("run_seconds", 0) for _, _, r in recorded if r and r.get("profile") == "gpu"]
    if gpu_seconds:
        lines += ["", f"The recorded GPU runs took {_minutes(sum(gpu_seconds))} in all "
                      f"({len(gpu_seconds)} of {len(recorded)} notebooks)."]
    if not recorded:
        lines.append("No notebooks yet.")
    return "\n".join(lines) + "\n"


def _cpu_machine() -> str:
    from .environment import _cpu_name

    return f"{_cpu_name()}, {os.cpu_count()} cores"


def cpu_time_notebook(path: Path, timeout: int = CELL_TIMEOUT_SECONDS) -> float:
    """Execute ``path`` under the ``cpu`` profile in memory (the file is not changed); return seconds.

    Refuses to run where PyTorch sees a CUDA GPU: the times describe a machine without one.
    """
    import torch

    from .profiles import PROFILE_VARIABLE

    if torch.cuda.is_available():
        raise RuntimeError("cpu-times measures a machine without a GPU, but PyTorch sees one here")
    notebook = nbformat.read(path, as_version=4)
    env_before = os.environ.get(PROFILE_VARIABLE)
    os.environ[PROFILE_VARIABLE] = "cpu"
    try:
        return _execute(notebook, path, timeout)
    finally:
        if env_before is None:
            os.environ.pop(PROFILE_VARIABLE, None)
        else:
            os.environ[PROFILE_VARIABLE] = env_before


def _read_cpu_times(root: Path) -> dict:
    path = root / CPU_TIMES_FILE
    if not path.exists():
        return {"notebooks": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("notebooks", {})
    return data


def _record_cpu_time(root: Path, path: Path, seconds: float) -> None:
    import torch

    data = _read_cpu_times(root)
    data["notebooks"][path.name] = {
        "seconds": round(seconds, 1),
        "machine": _cpu_machine(),
        "torch": torch.__version__.split("+")[0],
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        "code_hash": code_hash(nbformat.read(path, as_version=4)),
    }
    data["notebooks"] = dict(sorted(data["notebooks"].items()))
    target = root / CPU_TIMES_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def times_page(root: Path = ROOT) -> str:
    """The text of ``book/_generated/run-times.md``: each chapter's run time on the GPU and the CPU."""
    command = "python -m gpubook.reference times"
    cpu = _read_cpu_times(root)["notebooks"]
    lines = [
        f"<!-- {_DO_NOT_EDIT.format(command=command)} "
        f"GPU: the reference run's metadata; CPU: {CPU_TIMES_FILE.as_posix()}, written by "
        "`python -m gpubook.reference cpu-times notebooks/` on a machine without a GPU. -->",
        "",
    ]
    rows, gpu_total, cpu_total, gpu_names, cpu_names = [], 0.0, 0.0, set(), set()
    for path, notebook in _load_notebooks(root):
        record = notebook.metadata.get(METADATA_KEY) or {}
        gpu = "–"
        if record.get("profile") == "gpu" and "run_seconds" in record:
            gpu = _minutes(record["run_seconds"])
            gpu_total += record["run_seconds"]
            gpu_names.add(record.get("device_name", "?"))
        cpu_cell = "–"
        if path.name in cpu:
            cpu_cell = _minutes(cpu[path.name]["seconds"])
            cpu_total += cpu[path.name]["seconds"]
            cpu_names.add(cpu[path.name].get("machine", "?"))
        rows.append(f"| {_cell(_title(notebook, path))} | {gpu} | {cpu_cell} |")
    gpu_label = f"GPU ({_cell(', '.join(sorted(gpu_names)))}, `gpu` sizes)" if gpu_names else "GPU (`gpu` sizes)"
    cpu_label = f"CPU ({_cell(', '.join(sorted(cpu_names)))}, `cpu` sizes)" if cpu_names else "CPU (`cpu` sizes)"
    lines += [
        f"| Chapter | {gpu_label} | {cpu_label} |",
        "| --- | ---: | ---: |",
        *rows,
        f"| **Total** | **{_minutes(gpu_total) if gpu_names else '–'}** | **{_minutes(cpu_total) if cpu_names else '–'}** |",
        "",
        "Wall time to execute each notebook from top to bottom, first compilations included. A dash:",
        "not measured yet.",
    ]
    return "\n".join(lines) + "\n"


def write_pages(root: Path = ROOT) -> list[Path]:
    """Write ``book/reference-results.md`` and ``book/_generated/run-times.md``; return their paths."""
    written = []
    for relative, text in ((RESULTS_PAGE, results_page(root)), (TIMES_PAGE, times_page(root))):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpubook.reference", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's folder (default: %(default)s)")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="execute notebooks in place and record provenance")
    run_parser.add_argument("targets", nargs="+", help="notebooks or folders of notebooks")
    run_parser.add_argument("--profile", choices=("gpu", "cpu", "ci"), help="size profile (default: active one)")
    run_parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT_SECONDS, help="seconds allowed per cell")
    check_parser = commands.add_parser("check", help="list stale notebooks and stored errors")
    check_parser.add_argument("targets", nargs="+", help="notebooks or folders of notebooks")
    commands.add_parser("results", help=f"write {RESULTS_PAGE.as_posix()} (and {TIMES_PAGE.as_posix()})")
    commands.add_parser("times", help=f"write {TIMES_PAGE.as_posix()} (and {RESULTS_PAGE.as_posix()})")
    cpu_parser = commands.add_parser(
        "cpu-times", help=f"time notebooks under the cpu profile, without changing them; record in {CPU_TIMES_FILE}"
    )
    cpu_parser.add_argument("targets", nargs="+", help="notebooks or folders of notebooks")
    cpu_parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT_SECONDS, help="seconds allowed per cell")
    args = parser.parse_args(argv)
    root = args.root.resolve()

    def pages() -> None:
        for target in write_pages(root):
            print(f"wrote {target.relative_to(root)}", flush=True)

    if args.command in ("results", "times"):
        pages()
        return 0
    paths = notebook_paths(args.targets)
    in_book = all(root in path.resolve().parents for path in paths)
    if args.command in ("run", "cpu-times"):
        failures = 0
        for path in paths:
            print(f"running {path.name} ...", flush=True)
            try:
                if args.command == "run":
                    record = run_notebook(path, args.profile, args.timeout)
                else:
                    seconds = cpu_time_notebook(path, args.timeout)
            except Exception as error:  # report and go on with the other notebooks
                failures += 1
                print(f"  FAILED: {type(error).__name__}: {str(error)[-2000:]}", flush=True)
                continue
            if args.command == "run":
                print(f"  {record['run_seconds']} s on {record['device_name']} ({record['profile']})", flush=True)
            else:
                _record_cpu_time(root, path, seconds)
                print(f"  {seconds:.1f} s on {_cpu_machine()} (cpu)", flush=True)
        if in_book:
            try:
                pages()
            except ValueError as error:  # an unreadable headline: the notebooks are written all the same
                failures += 1
                print(f"could not write the generated pages: {error}", flush=True)
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

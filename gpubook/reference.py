"""The reference run: execute notebooks in place and record where their outputs came
from.

Usage::

    # every chapter, in place; or one chapter, under another profile
    python -m gpubook.reference run notebooks/
    python -m gpubook.reference run notebooks/03_compile_basics.ipynb --profile ci
    # stale or broken stored outputs
    python -m gpubook.reference check notebooks/
    # write book/reference-results.md
    python -m gpubook.reference results
    # time each notebook on this CPU machine
    python -m gpubook.reference cpu-times notebooks/
    # write book/_generated/run-times.md
    python -m gpubook.reference times
    # two runs' glued values
    python -m gpubook.reference compare RUN_A/ RUN_B/ --threshold 0.25

``run`` executes each notebook with nbclient (cells in order, generous timeouts: a first
compile can take minutes), stores the outputs, and writes provenance into the notebook's
metadata under ``gpubook``: device name, torch/triton/numpy versions, date, profile, run
time, and a hash of the code cells. ``check`` lists every notebook whose code changed
since its recorded run (stale) and every stored error output outside cells tagged
``raises-exception`` (broken); it exits 1 on broken notebooks only, since refreshing
stale outputs needs a GPU.

``results`` collects the headline figures every chapter glues with
:func:`gpubook.headline` (glued dicts named ``headline_*``) and each notebook's
provenance into one generated page, ``book/reference-results.md``. ``cpu-times``
executes notebooks under the ``cpu`` profile on a machine without a GPU, in memory (the
stored outputs stay those of the reference run), and records each one's wall time in
``book/_data/cpu-run-times.json``. ``times`` writes ``book/_generated/run-times.md``, a
table of each chapter's run time on the GPU (the reference run) and on that CPU machine,
which the workshop page includes. ``run`` and ``cpu-times`` rewrite both pages when they
finish; a test checks that the committed pages are in step with the notebooks.

``compare`` reads the glued values of two folders of executed notebooks (matched by file
name) and prints every glued number that moved by more than the threshold (relative to
the first run), every glued verdict that differs, every host/GPU classification that
differs (``reclassified``: :attr:`gpubook.profiling.Split.bound`'s words, which follow
the host's speed, counted apart from the verdicts of comparisons), and a summary line,
e.g. ``compare: 201 of 222 glued numbers within ±25% (90.5%); 38 of 40 glued verdicts
unchanged; 5 of 6 host/GPU classifications unchanged``.

Some glued numbers measure the host CPU more than PyTorch: work done on the CPU (NumPy,
Python, code compiled for the CPU, and GPU-over-CPU ratios, whose baseline is that
work), compile times (the compiler runs on the CPU), and GPU calls that the host's
launches and Python bound. They move with the host's speed, which differs between the
book's GPU machines by 2x and more. ``gpubook/host_dependent.json`` names them per
notebook (with the reason for each group); ``compare`` counts them apart from the rest
and states both shares, so that a re-run on a slower host does not hide whether the
GPU-side figures repeat. The reference-results page marks such headlines *(host)*.
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import dataclasses
import datetime as _dt
import functools
import hashlib
import json
import math
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat

from ._checks import positive_number
from .glue import HEADLINE_PREFIX
from .timing import counted

__all__ = [
    "code_hash",
    "provenance",
    "run_notebook",
    "staleness",
    "check_notebook",
    "notebook_paths",
    "glued_dicts",
    "headlines",
    "results_page",
    "cpu_time_notebook",
    "times_page",
    "write_pages",
    "package_hash",
    "package_notes",
    "host_notes",
    "check_notes",
    "parse_glued",
    "glued_values",
    "compare_notebooks",
    "compare_runs",
    "host_dependent_patterns",
    "is_host_dependent",
    "is_host_dependent_verdict",
    "RunComparison",
    "main",
]

METADATA_KEY = "gpubook"
CELL_TIMEOUT_SECONDS = 1800
#: A run prints each code cell that took at least this long (seconds), and the cell it
#: stopped in, so that a run cut short by its caller's time limit says where it was
#: (run S, 2026-11-27: chapter 7 ran into the 575 s cap with no other trace).
SLOW_CELL_SECONDS = 15.0
SLOW_CELL_VARIABLE = "GPUBOOK_SLOW_CELL"
#: A folder for notebooks whose run failed or was stopped (their cells run so far).
FAILED_DIR_VARIABLE = "GPUBOOK_FAILED_DIR"
ROOT = Path(__file__).resolve().parent.parent
RESULTS_PAGE = Path("book") / "reference-results.md"
TIMES_PAGE = Path("book") / "_generated" / "run-times.md"
CPU_TIMES_FILE = Path("book") / "_data" / "cpu-run-times.json"
HOST_DEPENDENT_FILE = Path(__file__).resolve().parent / "host_dependent.json"


def notebook_paths(targets: list[str | Path]) -> list[Path]:
    """Expand folders into their ``NN_*.ipynb`` notebooks, in reading order."""
    paths: list[Path] = []
    for target in map(Path, targets):
        if target.is_dir():
            paths += sorted(target.glob("[0-9][0-9]_*.ipynb"))
        elif target.suffix == ".ipynb" and target.exists():
            paths.append(target)
        else:
            raise FileNotFoundError(
                f"{target} is neither a folder nor an existing .ipynb file"
            )
    return paths


def code_hash(notebook: nbformat.NotebookNode) -> str:
    """SHA-256 (first 16 hex digits) of the notebook's code cells' sources, in order.

    The install block at the top of the first code cell (``gpubook.install``) is left
    out: it only installs the helper package when it is missing, and it changes whenever
    the book's publication setting or the package's wheel does, which changes no output.
    """
    from .install import stamp_source

    digest = hashlib.sha256()
    first = True
    for cell in notebook.cells:
        if cell.cell_type == "code":
            source = (
                stamp_source(cell.source, "# install block") if first else cell.source
            )
            first = False
            digest.update(source.encode("utf-8"))
            digest.update(b"\0")
    return digest.hexdigest()[:16]


PACKAGE_DIR = Path(__file__).resolve().parent


def package_hash(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 (first 16 hex digits) of the helper package's ``.py`` files (names and
    contents).

    Recorded with each run: when it differs from today's, the helpers changed since the
    run, which may or may not change what the notebook prints (a softer note than
    changed notebook code).
    """
    digest = hashlib.sha256()
    for path in sorted(package_dir.glob("*.py")):
        digest.update(path.name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


# Hardware facts recorded with each run when known, so that two runs can be compared.
_HARDWARE_KEYS = (
    "cpu",
    "cpu_count",
    "cpu_physical_cores",
    "sm_clock_mhz",
    "memory_clock_mhz",
    "max_sm_clock_mhz",
    "max_memory_clock_mhz",
    "power_limit_w",
)


def provenance(notebook: nbformat.NotebookNode, profile: str, seconds: float) -> dict:
    """The facts recorded with a run: what ran, where (CPU model and cores, GPU clocks
    and power limit when NVML can read them), when and how long, and hashes of the code
    cells and of the helper package."""
    from .environment import bytecode_state, collect

    facts = collect(hardware=True)
    record = {
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
        "gpubook_hash": package_hash(),
        # False: the compiler's modules had no .pyc files and none could be written,
        # so every process compiled them from source (several seconds of each fresh
        # compile on the GPU image before 28 Nov 2026), which a pip or conda install
        # does not pay
        "bytecode_cache": bytecode_state() != "missing",
    }
    record.update(
        {key: facts[key] for key in _HARDWARE_KEYS if facts.get(key) is not None}
    )
    return record


@contextlib.contextmanager
def _profile_variable(profile: str | None):
    """Set ``GPUBOOK_PROFILE`` to ``profile`` (when not None) for the block; restore it
    after."""
    from .profiles import PROFILE_VARIABLE, PROFILES

    if profile is None:
        yield
        return
    if profile not in PROFILES:
        raise ValueError(
            f"profile={profile!r} is not a known profile; expected one of {PROFILES}"
        )
    before = os.environ.get(PROFILE_VARIABLE)
    os.environ[PROFILE_VARIABLE] = profile
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PROFILE_VARIABLE, None)
        else:
            os.environ[PROFILE_VARIABLE] = before


def _execute(notebook: nbformat.NotebookNode, path: Path, timeout: int) -> float:
    """Execute ``notebook`` (read from ``path``, run in its folder) in place; return
    wall seconds."""
    from nbclient import NotebookClient

    running: dict = {}  # the code cell now running: index, start, first line
    slow = float(os.environ.get(SLOW_CELL_VARIABLE, SLOW_CELL_SECONDS))

    def started(cell, cell_index, **_):
        if cell.cell_type == "code":
            lines = [line for line in cell.source.splitlines() if line.strip()]
            first = lines[0].strip()[:70] if lines else ""
            running.update(index=cell_index, start=time.perf_counter(), first=first)

    def executed(cell, cell_index, **_):
        if running.get("index") == cell_index:
            took = time.perf_counter() - running["start"]
            if took >= slow:
                print(
                    f"    cell {cell_index}: {took:.1f} s | {running['first']}",
                    flush=True,
                )
            running.clear()

    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        # Stop the kernel at once after the last cell (its process group: compile
        # workers too). A graceful shutdown waits for the kernel's exit, 3 s here with
        # a compile's workers to stop, which no reader waits for and which would count
        # in the notebook's time.
        shutdown_kernel="immediate",
        on_cell_start=started,
        on_cell_executed=executed,
    )
    start = time.perf_counter()
    try:
        client.execute()
    except BaseException:  # a failure, a timeout or the caller's interrupt: say where
        if running:
            print(
                f"    stopped in cell {running['index']} after "
                f"{time.perf_counter() - running['start']:.0f} s | {running['first']}",
                flush=True,
            )
        raise
    return time.perf_counter() - start


def _keep_failed(notebook: nbformat.NotebookNode, path: Path) -> None:
    """Write a notebook whose run failed or was stopped, with the outputs of the cells
    it ran, into the folder ``GPUBOOK_FAILED_DIR`` names (nothing when it is unset); the
    notebook itself is left as it was."""
    folder = os.environ.get(FAILED_DIR_VARIABLE)
    if not folder:
        return
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, Path(folder) / path.name)
        print(f"    its cells so far: {Path(folder) / path.name}", flush=True)
    except Exception as error:  # the failure being reported matters more
        print(f"    could not keep the failed notebook: {error}", flush=True)


def run_notebook(
    path: Path, profile: str | None = None, timeout: int = CELL_TIMEOUT_SECONDS
) -> dict:
    """Execute ``path`` in place under ``profile`` (default: the active one); return its
    provenance.

    ``GPUBOOK_PROFILE`` is set for the kernel while the notebook runs and restored
    afterwards.
    """
    import statistics

    from .cpuload import host_speed_samples, other_busy_cores
    from .profiles import get_profile

    with _profile_variable(profile):
        profile = get_profile()
        notebook = nbformat.read(path, as_version=4)
        before = host_speed_samples(), other_busy_cores()
        try:
            seconds = _execute(notebook, path, timeout)
        except BaseException:
            _keep_failed(notebook, path)
            raise
        record = provenance(notebook, profile, seconds)
        after = host_speed_samples(), other_busy_cores()
    # The host's speed and load around the run: host-bound timings move with them.
    record["host_add_us"] = [
        round(statistics.median(before[0]), 3),
        round(statistics.median(after[0]), 3),
    ]
    record["host_add_us_samples"] = [
        [round(value, 3) for value in before[0]],
        [round(value, 3) for value in after[0]],
    ]
    if before[1] is not None and after[1] is not None:
        record["other_busy_cores"] = [round(before[1], 2), round(after[1], 2)]
    notebook.metadata[METADATA_KEY] = record
    nbformat.write(notebook, path)
    return record


def staleness(notebook: nbformat.NotebookNode, record: dict) -> list[str]:
    """Why a notebook's recorded run no longer stands for it: code changed since, or not
    a GPU run."""
    reasons = []
    if record.get("code_hash") != code_hash(notebook):
        reasons.append("code changed since its recorded run")
    if record.get("profile") != "gpu":
        reasons.append(
            f"its recorded run used the {record.get('profile')!r} profile, not 'gpu'"
        )
    return reasons


def package_notes(record: dict, current: str | None = None) -> list[str]:
    """Softer notes than :func:`staleness`: the helper package changed since the
    recorded run.

    A changed ``gpubook`` may change what a notebook prints, or not (most edits touch
    other chapters' helpers), so this is reported apart and never marks the notebook
    stale. Runs recorded before the package hash was kept give no note.
    """
    recorded = record.get("gpubook_hash")
    if recorded is None:
        return []
    current = package_hash() if current is None else current
    if recorded != current:
        return [
            "the gpubook package changed since its recorded run (outputs may differ "
            "on a re-run)"
        ]
    return []


HOST_DRIFT = 0.25
"""Relative change of the host probe during a run above which :func:`host_notes`
speaks."""


def host_notes(record: dict) -> list[str]:
    """Soft notes when the host's speed changed during the recorded run: the probe
    (microseconds per ``torch.add`` on the CPU, the median of five samples before and
    after the notebook) moved by more than :data:`HOST_DRIFT`, or the samples
    themselves spread by more than that (the host toggling while probed). Host-bound
    timings of such a run may not repeat: run it again. Runs recorded without the probe
    give no note."""
    notes = []
    probe = record.get("host_add_us")
    if probe and len(probe) == 2 and min(probe) > 0:
        before, after = probe
        if abs(after - before) / before > HOST_DRIFT:
            notes.append(
                f"the host's speed changed during its recorded run (torch.add on the "
                f"CPU: {before:.2f} µs before, {after:.2f} µs after): host-bound "
                "timings may not repeat"
            )
    samples = [
        value
        for side in record.get("host_add_us_samples") or []
        for value in side
        if isinstance(value, (int, float)) and value > 0
    ]
    if samples and max(samples) / min(samples) > 1 + HOST_DRIFT:
        notes.append(
            f"the host's speed toggled while it was probed around its recorded run "
            f"(torch.add on the CPU: {min(samples):.2f} to {max(samples):.2f} µs "
            "within half a second): host-bound timings may not repeat"
        )
    return notes


def check_notebook(path: Path) -> tuple[list[str], list[str]]:
    """Return ``(stale, broken)`` messages for one notebook (see :func:`check_notes` for
    the rest)."""
    notebook = nbformat.read(path, as_version=4)
    stale, broken = [], []
    record = notebook.metadata.get(METADATA_KEY)
    if record is None:
        stale.append(f"{path.name}: no recorded reference run")
    else:
        stale.extend(
            f"{path.name}: {reason} (run of {record.get('date')} on "
            f"{record.get('device_name')})"
            for reason in staleness(notebook, record)
        )
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or "raises-exception" in cell.metadata.get(
            "tags", []
        ):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                broken.append(
                    f"{path.name}, cell {index}: stored error {output.get('ename')}: "
                    f"{output.get('evalue')}"
                )
    return stale, broken


def check_notes(path: Path) -> list[str]:
    """Soft notes for one notebook (:func:`package_notes`, :func:`host_notes`),
    prefixed with its name."""
    record = nbformat.read(path, as_version=4).metadata.get(METADATA_KEY) or {}
    notes = package_notes(record) + host_notes(record)
    return [f"{path.name}: {note}" for note in notes]


# --- Generated pages: reference results and run times
# -------------------------------------------

_DO_NOT_EDIT = (
    "Generated by `{command}` from the notebooks' stored outputs and metadata: "
    "do not edit by hand."
)


def _title(notebook: nbformat.NotebookNode, path: Path) -> str:
    """The chapter's title: the first ``# `` heading of its first markdown cell (else
    the file name)."""
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


def glued_dicts(
    notebook: nbformat.NotebookNode,
    prefix: str,
    required: set[str],
    kind: str,
    name: str = "notebook",
) -> dict[str, dict]:
    """The dicts glued in ``notebook`` under names starting with ``prefix``, by glued
    name, in order: each read back from its stored text form with
    :func:`ast.literal_eval`. A name glued twice keeps its last value. Raises
    :class:`ValueError`, naming ``name`` and the glued name, for a record that cannot be
    read or lacks a ``required`` key (``kind`` names what a record should be).
    """
    records: dict[str, dict] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") not in ("display_data", "execute_result"):
                continue
            glued = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
            if not glued.startswith(prefix):
                continue
            text = next(
                (
                    v
                    for k, v in output.get("data", {}).items()
                    if k.endswith("text/plain")
                ),
                None,
            )
            try:
                record = ast.literal_eval(
                    text if isinstance(text, str) else "".join(text or [])
                )
            except (ValueError, SyntaxError) as error:
                raise ValueError(
                    f"{name}: glued {glued} is not a readable dict ({error})"
                ) from None
            if not isinstance(record, dict) or not required <= set(record):
                raise ValueError(
                    f"{name}: glued {glued} is not a {kind} record: {text!r:.200}"
                )
            records.pop(glued, None)
            records[glued] = record
    return records


def headlines(notebook: nbformat.NotebookNode, name: str = "notebook") -> list[dict]:
    """The headline records glued in ``notebook`` (outputs named ``headline_*``), in
    order.

    Each record is the dict :func:`gpubook.headline` glued (see :func:`glued_dicts`),
    plus ``key`` (the name after ``headline_``).
    """
    required = {"case", "baseline_seconds", "optimized_seconds"}
    records = glued_dicts(notebook, HEADLINE_PREFIX, required, "headline", name)
    return [
        {**record, "key": glued[len(HEADLINE_PREFIX) :]}
        for glued, record in records.items()
    ]


def _load_notebooks(root: Path) -> list[tuple[Path, nbformat.NotebookNode]]:
    return [
        (path, nbformat.read(path, as_version=4))
        for path in notebook_paths([root / "notebooks"])
    ]


def _status(notebook: nbformat.NotebookNode, record: dict) -> str:
    return "; ".join(staleness(notebook, record)) or "current"


MARGIN_TEXT = "<margin>"
# Headline records written before they kept their Ratio's margin used the 5% of then.
_MARGIN_UNRECORDED = 0.05


def results_page(root: Path = ROOT) -> str:
    """The text of ``book/reference-results.md``, from the notebooks under ``root /
    "notebooks"``."""
    from .timing import format_ratio, format_ratio_interval, format_seconds

    command = "python -m gpubook.reference results"
    lines = [
        f"<!-- {_DO_NOT_EDIT.format(command=command)} -->",
        "",
        "# Reference results",
        "",
        "The book's headline figures in one table, collected from the outputs stored "
        "in the",
        "chapters: the reference run, recorded on the device named in each row. Each "
        "chapter records",
        "its headline figures with `gpubook.headline` as it runs, and this page is "
        "generated from",
        f"them (`{command}`), so it always says what the notebooks say. *Timed* says "
        "how: *latency*",
        "(each call synchronised and timed alone) or *throughput* (calls back to "
        "back). *Baseline* and",
        "*optimized* are times per call (medians); *speedup* is baseline over "
        "optimized, with its 95%",
        "interval where the chapter measured the two interleaved, and *verdict* says "
        "whether the",
        "difference is clear (*no clear difference* when the interval reaches into "
        f"{MARGIN_TEXT} around 1). The",
        "last column gives, where it applies, the fraction of the hardware limit the "
        "optimized version",
        "reaches.",
        "",
        "## Headline figures",
        "",
    ]
    notebooks = _load_notebooks(root)
    rows, others, margins = [], [], set()
    host_marked = False  # whether a row carries the *(host)* mark
    one_sided = False  # whether a row's verdict is in one-sided words
    for path, notebook in notebooks:
        title = _title(notebook, path)
        link = f"[{_cell(title)}](../notebooks/{path.name})"
        for record in headlines(notebook, path.name):
            if record.get("verdict") and not record.get("two_sided"):
                # one-sided words use no margin (the page's note says so)
                margins.add(float(record.get("margin") or _MARGIN_UNRECORDED))
            baseline = (
                f"{record.get('baseline', 'eager')}: "
                f"{format_seconds(record['baseline_seconds'])}"
            )
            optimized = (
                f"{record.get('optimized', 'compiled')}: "
                f"{format_seconds(record['optimized_seconds'])}"
            )
            if not record.get("comparable", True):
                others.append(
                    f"- [{_cell(title)}](../notebooks/{path.name}): "
                    f"{_cell(record['case'])}; {_cell(baseline)}, "
                    f"{_cell(optimized)}. Not a like-for-like speedup: "
                    f"{_cell(record.get('note') or 'see the chapter')}."
                )
                continue
            fraction = record.get("limit_fraction")
            limit = (
                ""
                if fraction is None
                else f"{fraction:.0%} of {record.get('limit') or 'the hardware limit'}"
            )
            speedup = (
                record.get("speedup")
                or record["baseline_seconds"] / record["optimized_seconds"]
            )
            host = is_host_dependent(path.name, HEADLINE_PREFIX + record["key"])
            host_marked = host_marked or host
            speedup_text = f"{format_ratio(speedup)}×"
            if (
                record.get("speedup_low") is not None
                and record.get("speedup_high") is not None
            ):
                speedup_text = format_ratio_interval(
                    speedup, record["speedup_low"], record["speedup_high"], sign="×"
                )
            verdict_text = record.get("verdict") or "–"
            if record.get("two_sided"):
                one_sided = True
                verdict_text += " *(one-sided)*"
            rows.append(
                "| "
                + " | ".join(
                    [
                        link,
                        _cell(record["case"]) + (" *(host)*" if host else ""),
                        _cell(record.get("device", "")),
                        _cell(record.get("mode") or "–"),
                        _cell(baseline),
                        _cell(optimized),
                        speedup_text,
                        _cell(verdict_text),
                        _cell(limit) or "–",
                    ]
                )
                + " |"
            )
            link = ""  # the chapter is named on its first row only
    margin_text = " or ".join(f"±{m:.0%}" for m in sorted(margins)) or "the margin"
    if len(margins) > 1:
        margin_text += " (the margin each chapter's run used)"
    lines = [line.replace(MARGIN_TEXT, margin_text) for line in lines]
    if rows:
        lines += [
            "| Chapter | Case | Device | Timed | Baseline | Optimized "
            "| Speedup [95% interval] | Verdict "
            "| Fraction of the hardware limit |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |",
            *rows,
        ]
        if host_marked:
            lines += [
                "",
                "*(host)*: the figure depends on the host CPU's speed as much as on "
                "the GPU (work",
                "on the CPU as the baseline, a compile, or a call that the host's "
                "launches bound), so",
                "a machine with another CPU measures another value. "
                "`gpubook/host_dependent.json` lists",
                "every such glued figure of the book, with the reason.",
            ]
        if one_sided:
            lines += [
                "",
                "*(one-sided)*: the gain repeats in direction from run to run but not "
                "in size (the host",
                "sets the size), so a verdict against the margin came and went between "
                "runs. These words",
                "say only what the interval shows of the direction, with no margin: "
                "*at least as fast*",
                "when the whole interval lies at or above 1, *slower* when it lies "
                "below 1, *not clearly",
                "slower* when it straddles 1 (*at most as fast*, *faster*, *not "
                "clearly faster* the other",
                "way round). The chapter's table gives this run's verdict against the "
                "margin.",
            ]
    else:
        lines.append("No chapter has recorded a headline figure yet.")
    if others:
        lines += [
            "",
            "Also recorded, but not speedups: the two sides differ in more than the "
            "optimization",
            "(another dtype, a count rather than a time), so their ratio is not shown.",
            "",
            *others,
        ]
    lines += [
        "",
        "## Where the numbers came from",
        "",
        "Each chapter's stored outputs come from one run of the whole notebook",
        "(`python -m gpubook.reference run notebooks/`), which records where and "
        "when it ran in the",
        "notebook's metadata; the first code cell of each chapter prints the same "
        "facts. A note after a",
        "chapter's line says when its outputs are not from a GPU run or its code "
        "changed after the run.",
        "",
    ]
    recorded = [
        (path, notebook, notebook.metadata.get(METADATA_KEY))
        for path, notebook in notebooks
    ]
    for path, notebook, record in recorded:
        name = f"[{_title(notebook, path)}](../notebooks/{path.name})"
        if not record:
            lines.append(f"- {name}: no recorded run.")
            continue
        facts = " · ".join(
            [
                str(record.get("device_name", "?")),
                f"torch {record.get('torch', '?')}",
                f"Triton {record.get('triton', '?')}",
                f"NumPy {record.get('numpy', '?')}",
                f"profile `{record.get('profile', '?')}`",
                str(record.get("date", "?")),
                f"{_minutes(record.get('run_seconds', 0))}",
            ]
        )
        status = _status(notebook, record)
        lines.append(
            f"- {name}: {facts}"
            + ("" if status == "current" else f". **Note:** {status}.")
        )
    gpu_seconds = [
        r.get("run_seconds", 0)
        for _, _, r in recorded
        if r and r.get("profile") == "gpu"
    ]
    if gpu_seconds:
        lines += [
            "",
            f"The recorded GPU runs took {_minutes(sum(gpu_seconds))} in all "
            f"({len(gpu_seconds)} of {len(recorded)} notebooks).",
        ]
    if not recorded:
        lines.append("No notebooks yet.")
    return "\n".join(lines) + "\n"


def _cpu_machine() -> str:
    from .environment import _cpu_name

    return f"{_cpu_name()}, {os.cpu_count()} cores"


def cpu_time_notebook(path: Path, timeout: int = CELL_TIMEOUT_SECONDS) -> float:
    """Execute ``path`` under the ``cpu`` profile in memory (the file is not changed);
    return seconds.

    Refuses to run where PyTorch sees a CUDA GPU: the times describe a machine without
    one.
    """
    import torch

    if torch.cuda.is_available():
        raise RuntimeError(
            "cpu-times measures a machine without a GPU, but PyTorch sees one here"
        )
    notebook = nbformat.read(path, as_version=4)
    with _profile_variable("cpu"):
        return _execute(notebook, path, timeout)


COMPILE_CACHE_VARIABLES = {
    "TORCHINDUCTOR_CACHE_DIR": "inductor",
    "TRITON_CACHE_DIR": "triton",
}
"""Where TorchInductor (FX graph, AOTAutograd and kernel caches) and Triton keep their
on-disk caches, and the subfolder :func:`fresh_compile_cache` gives each in its new,
empty folder."""


@contextlib.contextmanager
def fresh_compile_cache():
    """Point the compile caches (:data:`COMPILE_CACHE_VARIABLES`) at a new, empty
    folder for the block, so that notebooks executed in it (their kernels inherit the
    environment) compile as on a machine that never ran the book; restore the variables
    and remove the folder after. Yields the folder.

    A warm cache serves first compilations from disk: chapter 5's CPU time was 60 s
    with this machine's cache warm and 2.3 min from an empty one.
    """
    folder = Path(tempfile.mkdtemp(prefix="gpubook-compile-cache-"))
    before = {name: os.environ.get(name) for name in COMPILE_CACHE_VARIABLES}
    for name, subfolder in COMPILE_CACHE_VARIABLES.items():
        os.environ[name] = str(folder / subfolder)
    try:
        yield folder
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)


def _read_cpu_times(root: Path) -> dict:
    path = root / CPU_TIMES_FILE
    if not path.exists():
        return {"notebooks": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("notebooks", {})
    return data


def _record_cpu_time(
    root: Path, path: Path, seconds: float, after: list[str] | None = None
) -> None:
    """Record ``path``'s CPU run time. ``after``: the notebooks that ran before it in
    the same empty compile cache (:func:`fresh_compile_cache`; ``[]`` for the first),
    recorded as ``fresh_cache_after``; None when the cache was not reset."""
    import torch

    data = _read_cpu_times(root)
    entry = {
        "seconds": round(seconds, 1),
        "machine": _cpu_machine(),
        "torch": torch.__version__.split("+")[0],
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d"),
        "code_hash": code_hash(nbformat.read(path, as_version=4)),
    }
    if after is not None:
        entry["fresh_cache_after"] = list(after)
    data["notebooks"][path.name] = entry
    data["notebooks"] = dict(sorted(data["notebooks"].items()))
    target = root / CPU_TIMES_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def times_page(root: Path = ROOT) -> str:
    """The text of ``book/_generated/run-times.md``: each chapter's run time on the GPU
    and the CPU."""
    command = "python -m gpubook.reference times"
    cpu = _read_cpu_times(root)["notebooks"]
    lines = [
        f"<!-- {_DO_NOT_EDIT.format(command=command)} "
        f"GPU: the reference run's metadata; CPU: {CPU_TIMES_FILE.as_posix()}, "
        "written by `python -m gpubook.reference cpu-times notebooks/` on a machine "
        "without a GPU. -->",
        "",
    ]
    rows, cpu_total, cpu_names = [], 0.0, set()
    per_gpu: dict[str, list] = {}  # device -> [seconds, chapters]
    stale_cpu = warm_cpu = cpu_rows = 0
    for path, notebook in _load_notebooks(root):
        record = notebook.metadata.get(METADATA_KEY) or {}
        gpu = "–"
        if record.get("profile") == "gpu" and "run_seconds" in record:
            gpu = _minutes(record["run_seconds"])
            share = per_gpu.setdefault(record.get("device_name", "?"), [0.0, 0])
            share[0] += record["run_seconds"]
            share[1] += 1
        cpu_cell = "–"
        if path.name in cpu:
            cpu_cell = _minutes(cpu[path.name]["seconds"])
            cpu_rows += 1
            if cpu[path.name].get("code_hash") != code_hash(notebook):
                cpu_cell += " (older code)"
                stale_cpu += 1
            if "fresh_cache_after" not in cpu[path.name]:
                cpu_cell += " (cache?)"
                warm_cpu += 1
            cpu_total += cpu[path.name]["seconds"]
            cpu_names.add(cpu[path.name].get("machine", "?"))
        rows.append(f"| {_cell(_title(notebook, path))} | {gpu} | {cpu_cell} |")
    gpu_total = sum(seconds for seconds, _ in per_gpu.values())
    gpu_label = (
        f"GPU ({_cell(', '.join(sorted(per_gpu)))}, `gpu` sizes)"
        if per_gpu
        else "GPU (`gpu` sizes)"
    )
    cpu_label = (
        f"CPU ({_cell(', '.join(sorted(cpu_names)))}, `cpu` sizes)"
        if cpu_names
        else "CPU (`cpu` sizes)"
    )
    lines += [
        f"| Chapter | {gpu_label} | {cpu_label} |",
        "| --- | ---: | ---: |",
        *rows,
        f"| **Total** | **{_minutes(gpu_total) if per_gpu else '–'}** | "
        f"**{_minutes(cpu_total) if cpu_names else '–'}** |",
        *(  # the chapters of each GPU kind apart (one GPU, and a multi-GPU chapter)
            f"| *of which on {_cell(name)} "
            f"({counted(chapters, 'chapter')})* | *{_minutes(seconds)}* | |"
            for name, (seconds, chapters) in sorted(per_gpu.items())
            if len(per_gpu) > 1
        ),
        "",
        "Wall time to execute each notebook from top to bottom, first compilations "
        "included, from the",
        "kernel's start to the end of its last cell (the kernel is then stopped at "
        "once). A dash: not measured",
        "yet.",
    ]
    if warm_cpu < cpu_rows:
        lines += [
            "The CPU column starts from an empty compile cache: `cpu-times` points "
            "`TORCHINDUCTOR_CACHE_DIR` and",
            "`TRITON_CACHE_DIR` at a new folder, shared by the chapters of one call "
            "in the order given, so a",
            "chapter finds only what the chapters before it in that call compiled.",
        ]
    if warm_cpu:
        lines += [
            "*(cache?)*: measured before `cpu-times` started from an empty compile "
            "cache; a warm cache makes",
            "first compilations faster.",
        ]
    if stale_cpu:
        lines += [
            "*(older code)*: the CPU time was measured before the notebook's code "
            "last changed; re-run",
            "`python -m gpubook.reference cpu-times` on a machine without a GPU to "
            "refresh it.",
        ]
    return "\n".join(lines) + "\n"


def write_pages(root: Path = ROOT) -> list[Path]:
    """Write ``book/reference-results.md`` and ``book/_generated/run-times.md``; return
    their paths."""
    written = []
    for relative, text in (
        (RESULTS_PAGE, results_page(root)),
        (TIMES_PAGE, times_page(root)),
    ):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


# --- Reproducibility: compare the glued values of two runs
# ---------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.])(?P<number>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"(?P<unit>\s?(?:ns|µs|us|ms|min|s|x|×|%))?(?![\w.])"
)
_TIME_UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}
_NUMPY_SCALAR = re.compile(r"^np\.(?:float|int|uint)\d*\((?P<value>[^()]*)\)$")


def _to_number(text: str, unit: str | None) -> float:
    value = float(text.replace(",", ""))
    unit = (unit or "").strip()
    return value * _TIME_UNITS.get(unit, 1.0)


def _glued_text(output: dict) -> str | None:
    """The text/plain form of a glued output (either prefix), joined when stored as a
    list."""
    for key, value in output.get("data", {}).items():
        if key.endswith("text/plain"):
            return value if isinstance(value, str) else "".join(value)
    return None


def parse_glued(text: str) -> Any:
    """A glued value read back from its stored text: a number, a dict, a list of numbers
    or a string.

    Python literals are read with :func:`ast.literal_eval` (numbers, dicts such as
    headlines, quoted strings, ``True``/``False``); NumPy scalars (``np.float64(1.5)``)
    become numbers; a number written with thousands separators (``'268,435,456'``) is a
    number; anything else is the string itself (:func:`gpubook.glue` stores strings
    without quotes).
    """
    stripped = text.strip()
    match = _NUMPY_SCALAR.match(stripped)
    if match:
        stripped = match["value"]
    if re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", stripped):
        return float(stripped.replace(",", ""))
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    if isinstance(value, (bool, int, float, dict, str)):
        return value
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        return list(value)
    return text


def glued_values(notebook: nbformat.NotebookNode) -> dict[str, Any]:
    """Every value glued in ``notebook``'s stored outputs, by name (a name glued twice:
    the last).

    Reads what myst-nb's ``glue`` and gpubook's own fallback store alike: an output
    whose metadata names it (``scrapbook.name``) and whose ``text/plain`` data (with or
    without the ``application/papermill.record/`` prefix) holds its text form. Figures
    (no text) are skipped.
    """
    values: dict[str, Any] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            text = _glued_text(output) if name else None
            if text is None:
                continue
            values.pop(name, None)
            values[name] = parse_glued(text)
    return values


def _flatten(name: str, value: Any) -> tuple[dict[str, float], dict[str, str]]:
    """Split one glued value into the numbers and the verdict strings it holds.

    A headline dict gives its speedup (and interval ends, when recorded) as numbers and
    its verdict as a string; a list gives ``name[i]``; a string gives each number
    written in it (times in seconds, whatever their unit) as ``name#i`` and, when it is
    more than one bare quantity, its words with the numbers blanked out as the verdict;
    a bool is a verdict.
    """
    numbers: dict[str, float] = {}
    verdicts: dict[str, str] = {}
    if isinstance(value, bool):
        verdicts[name] = str(value)
    elif isinstance(value, (int, float)):
        numbers[name] = float(value)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            numbers[f"{name}[{index}]"] = float(item)
    elif isinstance(value, dict):
        if {"baseline_seconds", "optimized_seconds"} <= set(value):
            speedup = (
                value.get("speedup")
                or value["baseline_seconds"] / value["optimized_seconds"]
            )
            numbers[f"{name}.speedup"] = float(speedup)
            for key in ("speedup_low", "speedup_high"):
                if isinstance(value.get(key), (int, float)):
                    numbers[f"{name}.{key}"] = float(value[key])
            if value.get("verdict"):
                verdicts[f"{name}.verdict"] = str(value["verdict"])
        else:
            for key, item in value.items():
                sub_numbers, sub_verdicts = _flatten(f"{name}.{key}", item)
                numbers.update(sub_numbers)
                verdicts.update(sub_verdicts)
    elif isinstance(value, str):
        found = list(_NUMBER.finditer(value))
        for index, match in enumerate(found):
            key = name if len(found) == 1 else f"{name}#{index}"
            numbers[key] = _to_number(match["number"], match["unit"])
        words = _NUMBER.sub("#", value).strip()
        if words != "#":  # more than one bare quantity: its words are run-dependent too
            verdicts[name] = words
    return numbers, verdicts


def _moved(a: float, b: float, threshold: float) -> bool:
    """Whether ``b`` is more than ``threshold`` (relative) away from the reference
    ``a``."""
    if a == b:
        return False
    if a == 0 or not math.isfinite(a) or not math.isfinite(b):
        return True
    return abs(b - a) / abs(a) > threshold


@dataclasses.dataclass
class RunComparison:
    """What :func:`compare_runs` found. ``moved``: ``(notebook, name, a, b)`` for each
    number outside the threshold; ``changed``: ``(notebook, name, a, b)`` for each
    verdict that differs; ``reclassified``: the same for a host/GPU classification
    (:func:`is_classification`: :attr:`gpubook.profiling.Split.bound`'s words, which
    follow the host's speed and are counted apart from the verdicts of comparisons);
    ``only_a``/``only_b``: glued names (``notebook: name``) found
    in one run only; ``unaligned``: ``(notebook, sentence, count)`` for the numbers of a
    glued sentence whose words changed (a branch chose another sentence, so its numbers
    fill other slots: the change is counted once, as a verdict, and those numbers are
    not compared slot by slot); ``unmatched``: notebooks found in one folder only;
    ``hosts``: ``(notebook, a, b)`` with each run's host probe (microseconds per
    ``torch.add`` on the CPU, before and after the run) where one was recorded."""

    threshold: float
    numbers: int = 0
    numbers_within: int = 0
    verdicts: int = 0
    verdicts_unchanged: int = 0
    classifications: int = 0
    classifications_unchanged: int = 0
    host_numbers: int = 0
    host_numbers_within: int = 0
    host_verdicts: int = 0
    host_verdicts_unchanged: int = 0
    moved: list = dataclasses.field(default_factory=list)
    changed: list = dataclasses.field(default_factory=list)
    reclassified: list = dataclasses.field(default_factory=list)
    only_a: list = dataclasses.field(default_factory=list)
    only_b: list = dataclasses.field(default_factory=list)
    unaligned: list = dataclasses.field(default_factory=list)
    unmatched: list = dataclasses.field(default_factory=list)
    hosts: list = dataclasses.field(default_factory=list)

    @property
    def share_within(self) -> float:
        """Fraction of glued numbers within the threshold (1.0 when there are none)."""
        return self.numbers_within / self.numbers if self.numbers else 1.0

    @property
    def other_numbers(self) -> int:
        """Glued numbers that do not depend on the host CPU (see
        :func:`is_host_dependent`)."""
        return self.numbers - self.host_numbers

    @property
    def other_numbers_within(self) -> int:
        """Of :attr:`other_numbers`, those within the threshold."""
        return self.numbers_within - self.host_numbers_within

    @property
    def other_share_within(self) -> float:
        """Fraction of the numbers that do not depend on the host within the threshold
        (1.0 when there are none)."""
        if not self.other_numbers:
            return 1.0
        return self.other_numbers_within / self.other_numbers

    def summary(self) -> str:
        """One line, e.g. ``compare: 201 of 222 glued numbers within ±25% (90.5%); 38 of
        40 glued verdicts unchanged``."""
        text = (
            f"compare: {self.numbers_within} of {self.numbers} glued numbers within "
            f"±{self.threshold:.0%} ({self.share_within:.1%})"
        )
        if self.host_numbers:
            host_share = self.host_numbers_within / self.host_numbers
            text += (
                f" [{self.other_numbers_within} of {self.other_numbers} "
                f"({self.other_share_within:.1%}) that do not depend on the host CPU; "
                f"{self.host_numbers_within} of {self.host_numbers} ({host_share:.1%}) "
                "that do]"
            )
        text += (
            f"; {self.verdicts_unchanged} of {self.verdicts} glued verdicts unchanged"
        )
        if self.host_verdicts:
            other = self.verdicts - self.host_verdicts
            other_unchanged = self.verdicts_unchanged - self.host_verdicts_unchanged
            text += (
                f" [{other_unchanged} of {other} that do not depend on the host CPU; "
                f"{self.host_verdicts_unchanged} of {self.host_verdicts} that do]"
            )
        if self.classifications:
            text += (
                f"; {self.classifications_unchanged} of {self.classifications} "
                "host/GPU classifications unchanged"
            )
        unaligned = sum(count for _, _, count in self.unaligned)
        if unaligned:
            sentences = "sentence" if len(self.unaligned) == 1 else "sentences"
            text += (
                f"; {unaligned} numbers in {len(self.unaligned)} {sentences} that "
                "changed, not compared"
            )
        only = len(self.only_a) + len(self.only_b)
        if only:
            text += f"; {only} glued values in one run only"
        if self.unmatched:
            text += f"; {len(self.unmatched)} notebooks in one folder only"
        return text

    def report(self) -> str:
        """Every moved number and changed verdict, one per line, then
        :meth:`summary`."""
        lines = []
        for notebook, name, a, b in self.moved:
            change = f"{b / a - 1:+.0%}" if a else "from zero"
            host = " (host)" if is_host_dependent(notebook, name) else ""
            lines.append(
                f"moved    {notebook}  {name}: {a:.4g} -> {b:.4g} ({change}){host}"
            )
        for notebook, name, a, b in self.changed:
            host = " (host)" if is_host_dependent_verdict(notebook, name) else ""
            lines.append(f"changed  {notebook}  {name}: {a!r} -> {b!r}{host}")
        for notebook, name, a, b in self.reclassified:
            lines.append(f"reclassified  {notebook}  {name}: {a!r} -> {b!r}")
        lines += [
            f"unaligned  {notebook}  {name}: {count} numbers in a changed sentence"
            for notebook, name, count in self.unaligned
        ]
        lines += [f"only in A  {item}" for item in self.only_a]
        lines += [f"only in B  {item}" for item in self.only_b]
        lines += [f"unmatched  {item}" for item in self.unmatched]
        for notebook, a, b in self.hosts:
            lines.append(
                f"host     {notebook}  torch.add on the CPU (before, after the run): "
                f"{_host_text(a)} -> {_host_text(b)}"
            )
        lines.append(self.summary())
        return "\n".join(lines)


_BOUND_WORDS = ("host-bound", "mixed", "GPU-bound", "CPU only")
_CLASSIFICATION = re.compile(
    r"^(?:{0})(?: \(GPU busy # of the call\))?$".format("|".join(_BOUND_WORDS))
)


def is_classification(words: str) -> bool:
    """Whether a glued string (numbers blanked as ``#``) is a host/GPU classification:
    one of :attr:`gpubook.profiling.Split.bound`'s words, alone or as ``"mixed (GPU
    busy # of the call)"``. Such a word describes one number, the GPU's busy share of a
    call, which moves with the host's speed (up to 2x and more between the book's GPU
    hosts); :func:`compare_runs` counts it apart from the verdicts of comparisons."""
    return isinstance(words, str) and bool(_CLASSIFICATION.match(words))


def host_dependent_patterns(path: Path | None = None) -> dict[str, list[re.Pattern]]:
    """Per notebook file name, the compiled patterns of its host-dependent glue names,
    read from ``gpubook/host_dependent.json`` (or ``path``): ``{"notebooks":
    {file name: {group: [regex, ...]}}}``, each group named in ``"groups"`` with its
    reason. A pattern must match a whole glue name. The book's own file is read once.
    """
    return _read_host_patterns(path or HOST_DEPENDENT_FILE)


@functools.lru_cache(maxsize=4)
def _read_host_patterns(path: Path) -> dict[str, list[re.Pattern]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    groups = data.get("groups", {})
    patterns: dict[str, list[re.Pattern]] = {}
    for notebook, by_group in data.get("notebooks", {}).items():
        for group, names in by_group.items():
            if group not in groups:
                raise ValueError(
                    f"{notebook}: group {group!r} is not described under 'groups'"
                )
            patterns.setdefault(notebook, []).extend(re.compile(n) for n in names)
    return patterns


def _glue_name(key: str) -> str:
    """The glue name a flattened key came from (``headline_x.speedup_low`` ->
    ``headline_x``, ``sentence#3`` -> ``sentence``, ``sizes[2]`` -> ``sizes``)."""
    return re.split(r"[.#\[]", key, maxsplit=1)[0]


def is_host_dependent(notebook: str, key: str) -> bool:
    """Whether the glued number ``key`` of ``notebook`` (a file name) is listed in
    ``gpubook/host_dependent.json`` as depending on the host CPU's speed."""
    name = _glue_name(key)
    return any(
        pattern.fullmatch(name)
        for pattern in host_dependent_patterns().get(Path(notebook).name, [])
    )


_VERDICT_SUFFIX = re.compile(r"_(verdict|says)$")


def is_host_dependent_verdict(notebook: str, key: str) -> bool:
    """Whether the glued verdict ``key`` of ``notebook`` follows the host CPU's speed:
    it is listed itself, or it is the ``_verdict``/``_says`` word of a listed ratio
    (``ch04_eager_vs_static_verdict`` follows ``ch04_eager_vs_static``)."""
    if is_host_dependent(notebook, key):
        return True
    name = _glue_name(key)
    stripped = _VERDICT_SUFFIX.sub("", name)
    return stripped != name and is_host_dependent(notebook, stripped)


def _host_text(probe) -> str:
    if not probe:
        return "not recorded"
    return ", ".join(f"{value:.2f} µs" for value in probe)


def compare_notebooks(
    a: nbformat.NotebookNode,
    b: nbformat.NotebookNode,
    threshold: float = 0.25,
    name: str = "notebook",
    into: RunComparison | None = None,
) -> RunComparison:
    """Compare the glued values of two executed copies of one notebook (see
    :func:`compare_runs`)."""
    positive_number("threshold", threshold)
    result = RunComparison(threshold) if into is None else into
    numbers_a, verdicts_a, numbers_b, verdicts_b = {}, {}, {}, {}
    for glued, value in glued_values(a).items():
        numbers, verdicts = _flatten(glued, value)
        numbers_a.update(numbers)
        verdicts_a.update(verdicts)
    for glued, value in glued_values(b).items():
        numbers, verdicts = _flatten(glued, value)
        numbers_b.update(numbers)
        verdicts_b.update(verdicts)
    reworded = {  # sentences whose words changed: their numbers fill other slots
        key
        for key, words in verdicts_a.items()
        if key in verdicts_b and words != verdicts_b[key] and "#" in words
    }

    def in_reworded(key: str) -> bool:  # a number (``sentence#i``) of such a sentence
        return "#" in key and _glue_name(key) in reworded

    unaligned = collections.Counter(
        _glue_name(key) for key in numbers_a if in_reworded(key)
    )
    for key, value in numbers_a.items():
        if in_reworded(key):
            continue
        if key not in numbers_b:
            result.only_a.append(f"{name}: {key}")
            continue
        result.numbers += 1
        host = is_host_dependent(name, key)
        result.host_numbers += host
        if _moved(value, numbers_b[key], threshold):
            result.moved.append((name, key, value, numbers_b[key]))
        else:
            result.numbers_within += 1
            result.host_numbers_within += host
    for key, value in verdicts_a.items():
        if key not in verdicts_b:
            result.only_a.append(f"{name}: {key}")
            continue
        if is_classification(value) and is_classification(verdicts_b[key]):
            result.classifications += 1
            if value != verdicts_b[key]:
                result.reclassified.append((name, key, value, verdicts_b[key]))
            else:
                result.classifications_unchanged += 1
            continue
        result.verdicts += 1
        host = is_host_dependent_verdict(name, key)
        result.host_verdicts += host
        if value != verdicts_b[key]:
            result.changed.append((name, key, value, verdicts_b[key]))
        else:
            result.verdicts_unchanged += 1
            result.host_verdicts_unchanged += host
    result.only_b += [
        f"{name}: {key}"
        for key in [*numbers_b, *verdicts_b]
        if key not in numbers_a and key not in verdicts_a and not in_reworded(key)
    ]
    result.unaligned += [(name, sentence, n) for sentence, n in unaligned.items()]
    probes = [
        notebook.metadata.get(METADATA_KEY, {}).get("host_add_us")
        for notebook in (a, b)
    ]
    if any(probes):
        result.hosts.append((name, *probes))
    return result


def compare_runs(
    dir_a: str | Path, dir_b: str | Path, threshold: float = 0.25
) -> RunComparison:
    """Compare the glued values of two folders of executed notebooks, matched by file
    name.

    Run A is the reference: a number *moved* when ``|b - a| / |a| > threshold``. Every
    glued number (headlines: their speedup and interval ends) and every glued verdict (a
    string's words once its numbers are blanked out; a headline's verdict; a bool) is
    compared.
    """
    positive_number("threshold", threshold)
    folders = [Path(dir_a), Path(dir_b)]
    for folder in folders:
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} is not a folder of executed notebooks")
    names_a = {path.name: path for path in folders[0].glob("*.ipynb")}
    names_b = {path.name: path for path in folders[1].glob("*.ipynb")}
    result = RunComparison(threshold)
    result.unmatched = [
        f"{name} (only in {folders[0]})"
        for name in sorted(names_a.keys() - names_b.keys())
    ]
    result.unmatched += [
        f"{name} (only in {folders[1]})"
        for name in sorted(names_b.keys() - names_a.keys())
    ]
    for name in sorted(names_a.keys() & names_b.keys()):
        compare_notebooks(
            nbformat.read(names_a[name], as_version=4),
            nbformat.read(names_b[name], as_version=4),
            threshold,
            name,
            into=result,
        )
    return result


def _run_each(args: argparse.Namespace, root: Path, paths: list[Path]) -> int:
    """Execute ``paths`` one by one for ``run`` or ``cpu-times``; return the number that
    failed. A CPU time records the notebooks that ran before it (``done``), which share
    its compile cache."""
    failures = 0
    done: list[str] = []
    for path in paths:
        print(f"running {path.name} ...", flush=True)
        try:
            if args.command == "run":
                record = run_notebook(path, args.profile, args.timeout)
            else:
                seconds = cpu_time_notebook(path, args.timeout)
        except Exception as error:  # report and go on with the other notebooks
            failures += 1
            print(
                f"  FAILED: {type(error).__name__}: {str(error)[-2000:]}",
                flush=True,
            )
            done.append(path.name)  # what it compiled before failing stays cached
            continue
        if args.command == "run":
            print(
                f"  {record['run_seconds']} s on {record['device_name']} "
                f"({record['profile']})",
                flush=True,
            )
        else:
            _record_cpu_time(root, path, seconds, after=done)
            print(f"  {seconds:.1f} s on {_cpu_machine()} (cpu)", flush=True)
        done.append(path.name)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpubook.reference", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the book's folder (default: %(default)s)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser(
        "run", help="execute notebooks in place and record provenance"
    )
    run_parser.add_argument(
        "targets", nargs="+", help="notebooks or folders of notebooks"
    )
    run_parser.add_argument(
        "--profile",
        choices=("gpu", "cpu", "ci"),
        help="size profile (default: active one)",
    )
    run_parser.add_argument(
        "--timeout",
        type=int,
        default=CELL_TIMEOUT_SECONDS,
        help="seconds allowed per cell",
    )
    check_parser = commands.add_parser(
        "check", help="list stale notebooks and stored errors"
    )
    check_parser.add_argument(
        "targets", nargs="+", help="notebooks or folders of notebooks"
    )
    commands.add_parser(
        "results", help=f"write {RESULTS_PAGE.as_posix()} (and {TIMES_PAGE.as_posix()})"
    )
    commands.add_parser(
        "times", help=f"write {TIMES_PAGE.as_posix()} (and {RESULTS_PAGE.as_posix()})"
    )
    cpu_parser = commands.add_parser(
        "cpu-times",
        help="time notebooks under the cpu profile, without changing them; "
        f"record in {CPU_TIMES_FILE}",
    )
    cpu_parser.add_argument(
        "targets", nargs="+", help="notebooks or folders of notebooks"
    )
    cpu_parser.add_argument(
        "--timeout",
        type=int,
        default=CELL_TIMEOUT_SECONDS,
        help="seconds allowed per cell",
    )
    compare_parser = commands.add_parser(
        "compare",
        help="glued numbers that moved and glued verdicts that changed "
        "between two runs",
    )
    compare_parser.add_argument(
        "dir_a", type=Path, help="folder of executed notebooks (the reference run)"
    )
    compare_parser.add_argument(
        "dir_b", type=Path, help="folder of the same notebooks, executed again"
    )
    compare_parser.add_argument(
        "--threshold",
        type=float,
        default=0.25,
        help="relative change that counts as moved (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()

    def pages() -> None:
        for target in write_pages(root):
            print(f"wrote {target.relative_to(root)}", flush=True)

    if args.command in ("results", "times"):
        pages()
        return 0
    if args.command == "compare":
        print(compare_runs(args.dir_a, args.dir_b, args.threshold).report())
        return 0
    paths = notebook_paths(args.targets)
    in_book = all(root in path.resolve().parents for path in paths)
    if args.command in ("run", "cpu-times"):
        # cpu-times: the notebooks of one call share one empty compile cache, in the
        # order given, as on a machine that runs the book for the first time
        cache = (
            fresh_compile_cache()
            if args.command == "cpu-times"
            else contextlib.nullcontext()
        )
        with cache:
            failures = _run_each(args, root, paths)
        if in_book:
            try:
                pages()
            except ValueError as error:
                # an unreadable headline: the notebooks are written all the same
                failures += 1
                print(f"could not write the generated pages: {error}", flush=True)
        return 1 if failures else 0
    problems = 0
    for path in paths:
        stale, broken = check_notebook(path)
        for message in stale:
            print(f"stale (refresh on a GPU): {message}")
        for message in check_notes(path):
            print(f"note: {message}")
        for message in broken:
            print(f"BROKEN: {message}")
        problems += len(broken)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

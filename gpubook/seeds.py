"""The seeds' claims, side by side with the book's like-for-like measurements.

The book started from public texts, the *seeds* (listed in the seeds README). Their
headline claims are kept here as data, :data:`CLAIMS`: what the seed says, on which
hardware, in which dtype, and the factor it reports. A chapter that re-measures a claim
records its measurement with :func:`claim`; ``python -m gpubook.seeds`` collects those
records from the executed notebooks and writes ``book/seeds-claims.md``: one table with
every claim, the book's measurement and a verdict. A claim that no chapter measured
still has its row ("not measured").

Recording a claim in a chapter (the verdict is computed from the run, never typed)::

    from gpubook import seeds

    variants = {"NumPy float32": numpy_fn, "compiled": compiled_fn}
    comparison = gpubook.compare(variants, X32)
    seeds.claim(
        "001_gpu_tensors_f32",  # a key of CLAIMS, or a new one (see below)
        measured=comparison.ratio("compiled"),  # a gpubook Ratio, or a float
        how="NumPy float32 vs compiled, CUDA tensors, float32, 20M points",
    )

* ``measured`` is the book's speedup of the seed's variant over its baseline (baseline
  time / variant time: > 1 means the variant is faster), measured like for like: a
  :class:`gpubook.Ratio` (preferred: its 95% interval and verdict are kept), a float
  (no interval), ``True``/``False`` for a claim of fact the run checked (does the
  construct work on this version?), or ``None`` when the run could not measure it.
* ``comparable=False`` with ``why=...`` when the book's measurement cannot be set
  against the seed's figure (another dtype or data, a construct that no longer runs);
  the row then says "not comparable" and why, whatever the numbers are.
* A key that is not in :data:`CLAIMS` needs ``seed=``, ``claim=`` and
  ``seed_hardware=`` (``dtype=`` and ``factor=`` are optional); keys are letters,
  digits and ``_`` (``002_resnet18_max_autotune``).

Verdicts (:func:`verdict`), for a claimed speedup of ``factor`` x:

* **holds**: the book measured the variant faster (the interval clears the margin
  around 1 that its comparison used, ``gpubook.timing.MARGIN``) and its estimate (the
  median ratio) reaches at least half the claimed gain, ``1 + (factor - 1) / 2`` (the
  hardware differs, so a factor of about two either way counts as agreement). The
  estimate, not the interval's upper end: a wide interval must not turn the verdict
  (compiled ``torch.sum`` against the seed's 9x, 2026-11-26: 3.29x [3.21, 5.88] held by
  the upper end in one run, 2.43x [2.39, 3.06] and 2.46x [2.43, 4.01] did not in two
  others); a claim
  without a factor ("compiling speeds it up") holds when the book measured it faster.
  There is no "larger here" detail any more: with a rule on the interval's low end
  (above ``factor * (1 + MARGIN)``) it still came and went between two runs of the same
  code, with the interval's width (AlexNet against the seed's 1.3x: 1.62x [1.35, 1.65]
  and 1.61x [1.60, 1.66]; k-means float32 on CUDA against 11x: 13.0x [12.8, 13.1] and
  11.2x [10.5, 12.5], 2026-11-27); the table shows both figures side by side;
* **does not hold**: slower, no clear difference, or faster by less than half the
  claimed gain; for a claim of fact, the run found it false;
* **depends on the host**: a claim whose catalogue entry carries a ``history`` of the
  book's runs (lowest and highest ratio, run count) on both sides of the threshold above
  (seed 000's NumPy against pure Python, host-bound on both sides, and seed 004's
  AlexNet, whose compiled call the host bounds in part; their ranges are in
  :data:`CLAIMS`); its verdict names what it depends on instead of one run's side;
* **not comparable**: the chapter said so (``comparable=False``), with its reason;
* **not measured**: no chapter recorded the claim in the stored run.

Each record is glued (hidden) as a dict named ``seedclaim_<key>`` with
:func:`gpubook.glue`; :func:`claim` returns it as a :class:`ClaimRecord`, a dict that
displays as one line, with the verdict in ``record["verdict"]`` for the prose to glue.

Command line::

    python -m gpubook.seeds          # write book/seeds-claims.md from notebooks/
    python -m gpubook.seeds --check  # exit 1 if the committed page is out of step
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "CLAIMS",
    "SEEDS",
    "ClaimRecord",
    "claim",
    "verdict",
    "verdict_text",
    "table",
    "collect",
    "page",
    "write_page",
    "main",
]

PREFIX = "seedclaim_"
ROOT = Path(__file__).resolve().parent.parent
PAGE = Path("book") / "seeds-claims.md"
# A float without an interval is faster above 1 + MARGIN and slower below 1 - MARGIN
# (the same margin as gpubook.timing.MARGIN; kept here so this module needs no torch).
MARGIN = 0.10

#: The seeds: file name under the seeds folder and a short title for the table.
SEEDS: dict[str, str] = {
    "000": "GA fitness functions, NumPy vs compiled (blog)",
    "001": "Compiling NumPy code into C++ or CUDA (PyTorch blog, 2023)",
    "002": "torch.compile modes: sin, ResNet-18, BERT, a NumPy pipeline (notes)",
    "004": "AlexNet with torch.compile (blog)",
}

_LAPTOP = "the author's laptop (CPU not named)"
_LAPTOP_GPU = '"a modest laptop GPU" (not named)'
_AMD = "AMD 3970X (32 cores)"
_RTX = "RTX 2060"
_S002 = "RTX 4060 Laptop, L20, H20 (results not in the text)"

#: Every headline claim of seeds 000, 001, 002 and 004, quoted from the seed: key ->
#: seed, factor (the speedup the seed reports, variant over baseline; None for a claim
#: without a number), dtype, the seed's hardware, the chapter measuring it, the claim.
CLAIMS: dict[str, dict[str, Any]] = {}


def _add(
    key, seed, factor, dtype, seed_hardware, chapter, claim, fact=False, history=None
) -> None:
    CLAIMS[key] = dict(
        seed=seed,
        factor=factor,
        dtype=dtype,
        seed_hardware=seed_hardware,
        chapter=chapter,
        claim=claim,
        fact=fact,
    )
    if history is not None:
        CLAIMS[key]["history"] = history


# fmt: off
# Seed 000: 900,000 x 1000 int8 genes from 1..24; constrained functions of 3 genes.
_add("000_sum_numpy", "000", 13.5, "int8", _LAPTOP, "06",
     "Row sums (fitness = sum of genes): vectorised NumPy 13.5x faster than pure "
     "Python (6.91 s -> 0.51 s)",
     history=dict(low=6.1, high=14.8, runs=33, below=9, until="28 November 2026",
                  label="seed 000's NumPy against pure Python"))
_add("000_sum_compiled_numpy", "000", 1.24, "int8", _LAPTOP, "06",
     "Row sums: compiled NumPy 0.41 s vs NumPy 0.51 s (1.24x)")
_add("000_sum_compiled_torch", "000", 9.0, "int8", _LAPTOP, "06",
     'Row sums: compiled `torch.sum` on the CPU 0.067 s, "9 times faster than the '
     'uncompiled NumPy version" (its own times give 7.6x)')
_add("000_sum_gpu", "000", 10.0, "int8", _LAPTOP_GPU, "06",
     'Row sums: compiled `torch.sum` on CUDA 0.055 s, "10 times faster than NumPy"')
_MIXED = "float32 `torch.rand` tensors compiled vs NumPy on float64"
_add("000_poly_compiled", "000", 7.0, _MIXED, _LAPTOP, "06",
     "Constrained polynomial (example 2): compiled 6.2 ms vs NumPy 48 ms, "
     '"7 times faster"')
_add("000_poly_gpu", "000", 13.0, _MIXED, _LAPTOP_GPU, "06",
     'Constrained polynomial: compiled under CUDA 3.7 ms, "13 times faster than NumPy"')
_NO_CODE = "dtype not given (the seed shows no code)"
_add("000_sincos_compiled", "000", 2.0, _NO_CODE, _LAPTOP, "06",
     "Constrained sin/cos function (example 3): compiled NumPy 36.8 ms vs NumPy 82 ms, "
     '"2x faster"')
_add("000_sincos_gpu", "000", 3.6, _NO_CODE, _LAPTOP_GPU, "06",
     'Constrained sin/cos function: compiled under CUDA 22.6 ms, "3.6x faster than '
     'NumPy"')
# Seed 001: the k-means assignment step on 20M 2-D points.
_add("001_cpu_1core", "001", 9.0, "float64", _AMD + ", 1 core", "06",
     "k-means step compiled for the CPU: 9x faster than NumPy on 1 core")
_add("001_cpu_all_cores", "001", 57.0, "float64", _AMD, "06",
     "k-means step compiled for the CPU: 57x faster than NumPy on 32 cores")
_add("001_device_context", "001", None, "float64", _RTX, "06",
     "NumPy code runs on CUDA when the compiled function is called inside "
     '`with torch.device("cuda")` (torch 2.1)', fact=True)
_add("001_gpu_arrays_f64", "001", 8.0, "float64", _RTX, "06",
     "k-means step on CUDA, NumPy arrays in and out: 8x faster than NumPy")
_add("001_gpu_arrays_f32", "001", 11.0, "float32", _RTX, "06",
     "k-means step on CUDA, NumPy arrays in and out, float32: 11x faster than NumPy")
_add("001_gpu_tensors_f32", "001", 200.0, "float32", _RTX, "06",
     "k-means step on CUDA, CUDA tensors in and out, float32: 200x faster than NumPy "
     "on float32 arrays")
# Seed 002: modes default, reduce-overhead and max-autotune; no figures in the text.
_add("002_sin", "002", None, "int64 scalar tensor", _S002, "07",
     "`sin(x) + cos(x)` on a one-element tensor, 100,000 calls: compiling speeds it up")
_add("002_resnet18", "002", None, "float32", _S002, "07",
     "ResNet-18, batch 16, 224x224, inference: compiling speeds it up")
_add("002_bert", "002", None, "float32", _S002, "07",
     "BERT-base, one short sentence, inference: compiling speeds it up")
_add("002_numpy_pipeline", "002", None, "float64", _S002, "06",
     "NumPy pipeline on two 1024 x 640 arrays (normalise, outer-product sums, clip, "
     "exp, in-place `+=`): compiling speeds it up")
_add("002_python312", "002", None, "", "", "06",
     "`torch.compile` does not support Python 3.12 or later", fact=True)
# Seed 004: AlexNet, batch 32, 224x224, inference, 100 batches.
_add("004_alexnet", "004", 1.3, "float32", "a CUDA GPU (not named)", "07",
     'AlexNet, batch 32, inference: compiling gives "30-50% or more" speedup',
     history=dict(low=0.99, high=1.68, runs=21, below=1, until="28 November 2026",
                  label="seed 004's AlexNet"))
# fmt: on


class ClaimRecord(dict):
    """The record :func:`claim` glues; shown in a notebook as one readable line."""

    def __repr__(self) -> str:
        return (
            f"seed {self['seed']}, {self['key']}: {self['measured_text']} here vs "
            f"{self['seed_figure']} claimed: {verdict_text(self)}"
        )


def verdict_text(record: dict) -> str:
    """A claim record's verdict with its detail in brackets and the reason it is not
    comparable after a colon, where it has them: ``"does not hold (slower here)"``,
    ``"not comparable: ..."``, ``"holds"``."""
    text = record["verdict"]
    if record.get("detail"):
        text += f" ({record['detail']})"
    if record.get("why"):
        text += f": {record['why']}"
    return text


def _factor_text(factor: float | None) -> str:
    return "faster (no figure)" if factor is None else f"{factor:.3g}x"


def _figure(known: dict, factor: float | None, measured: Any = None) -> str:
    """The seed's figure as the table shows it ("as stated" for a claim of fact)."""
    if known.get("fact") or isinstance(measured, bool):
        return "as stated"
    return _factor_text(factor)


def _ratio_text(estimate: float, low: float | None, high: float | None) -> str:
    from .timing import format_ratio, format_ratio_interval

    if low is None or high is None:
        return f"{format_ratio(estimate)}x"
    return format_ratio_interval(estimate, low, high)


def verdict(
    factor: float | None,
    measured: Any,
    comparable: bool = True,
    history: dict | None = None,
) -> tuple[str, str]:
    """``(verdict, detail)``: a claim of ``factor`` x (None: "faster") vs ``measured``.

    ``measured``: a Ratio-like object (``estimate``, ``low``, ``high``, ``verdict``), a
    float speedup, a bool (a claim of fact checked by the run) or None. ``history``: the
    catalogue's record of the book's runs for a claim with a factor (``low``, ``high``,
    ``runs``, ``below``, ``until``, ``label``); where it lies on both sides of the
    threshold, the
    verdict is "depends on the host" whatever this run measured (faster, no clear
    difference or slower; the detail says which), since one run's side of the threshold
    says nothing about the next run's (gpubook issue 12: a comparison that cannot be
    made stable says what it depends on). The rules are in the module docstring.
    """
    if measured is None:
        return "not measured", ""
    if not comparable:
        return "not comparable", ""
    if isinstance(measured, bool):
        return ("holds", "") if measured else ("does not hold", "")
    estimate, low, high, direction = _unpack(measured)
    threshold = _threshold(factor)
    if threshold and history and history["low"] < threshold <= history["high"]:
        here = "" if direction == "faster" else f", {direction}"
        return (
            "depends on the host",
            f"{estimate:.3g}x here{here}; {_history_text(history, threshold)}",
        )
    if direction != "faster":
        return "does not hold", f"{direction} here"
    if threshold is None:
        return "holds", ""
    if estimate >= threshold:
        return "holds", ""
    return "does not hold", "faster, by less than half the claimed gain"


def _threshold(factor: float | None) -> float | None:
    """Half the claimed gain, ``1 + (factor - 1) / 2``: the least a run must measure
    for a claim of ``factor`` x to hold (``None`` for "faster" with no figure)."""
    return None if factor is None else 1 + (factor - 1) / 2


def _history_text(history: dict, threshold: float) -> str:
    """A claim's history of the book's runs against its threshold, in words."""
    return (
        f"{history['low']:g}x to {history['high']:g}x in {history['runs']} runs up to "
        f"{history['until']}, {history['below']} of them below the threshold of "
        f"{threshold:.3g}x"
    )


def _unpack(measured: Any) -> tuple[float, float, float, str]:
    """(estimate, low, high, direction) of a Ratio-like object or a float."""
    if all(hasattr(measured, name) for name in ("estimate", "low", "high", "verdict")):
        estimate, low, high = (
            float(measured.estimate),
            float(measured.low),
            float(measured.high),
        )
        direction = str(measured.verdict)
    elif isinstance(measured, (int, float)) and not isinstance(measured, bool):
        estimate = low = high = float(measured)
        direction = (
            "faster"
            if estimate > 1 + MARGIN
            else "slower"
            if estimate < 1 - MARGIN
            else "no clear difference"
        )
    else:
        raise ValueError(
            "measured must be a gpubook Ratio, a float, a bool or None, "
            f"got {type(measured).__name__}"
        )
    for name, value in (("estimate", estimate), ("low", low), ("high", high)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(
                f"measured {name} must be a positive finite ratio, got {value!r}"
            )
    if direction not in ("faster", "slower", "no clear difference"):
        raise ValueError(
            "measured verdict must be faster, slower or no clear difference, "
            f"got {direction!r}"
        )
    return estimate, low, high, direction


def claim(
    key: str,
    *,
    measured: Any,
    how: str = "",
    comparable: bool = True,
    why: str = "",
    seed: str | None = None,
    claim: str | None = None,
    seed_hardware: str | None = None,
    dtype: str | None = None,
    factor: float | None = None,
    measured_text: str | None = None,
    glue: bool = True,
) -> ClaimRecord:
    """Record the book's measurement of one seed claim; glue it as ``seedclaim_<key>``.

    ``key``: a key of :data:`CLAIMS`, or a new key of letters, digits and ``_`` (then
    ``seed``, ``claim`` and ``seed_hardware`` are required). ``measured``: a Ratio, a
    float speedup, a bool or None (see the module docstring). ``how``: what the book
    measured, like for like (sizes, dtype, timing mode). ``comparable=False`` needs
    ``why``. ``measured_text`` overrides the text shown for the measurement. The device
    and torch version of the run are recorded with it. Returns the
    record (``record["verdict"]`` is the verdict to glue into prose).
    """
    import torch

    from .glue import glue as glue_value
    from .plots import caption

    if not isinstance(key, str) or not key or not (PREFIX + key).isidentifier():
        raise ValueError(f"key must be letters, digits and underscores, got {key!r}")
    known = CLAIMS.get(key, {})
    values = {
        "seed": seed,
        "claim": claim,
        "seed_hardware": seed_hardware,
        "dtype": dtype,
    }
    merged = {
        name: (value if value is not None else known.get(name))
        for name, value in values.items()
    }
    missing = [
        name for name in ("seed", "claim", "seed_hardware") if merged[name] is None
    ]
    if missing:
        raise ValueError(
            f"{key!r} is not in gpubook.seeds.CLAIMS: give {', '.join(missing)}"
        )
    if merged["seed"] not in SEEDS:
        raise ValueError(f"seed must be one of {sorted(SEEDS)}, got {merged['seed']!r}")
    if factor is None:
        factor = known.get("factor")
    if factor is not None and (
        isinstance(factor, bool)
        or not isinstance(factor, (int, float))
        or not math.isfinite(factor)
        or factor <= 0
    ):
        raise ValueError(f"factor must be a positive number or None, got {factor!r}")
    if not isinstance(comparable, bool):
        raise ValueError(f"comparable must be True or False, got {comparable!r}")
    if not comparable and not why:
        raise ValueError(
            "comparable=False needs why=... (why the figures cannot be compared)"
        )
    for name, value in (("how", how), ("why", why)):
        if not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {type(value).__name__}")
    result, detail = verdict(factor, measured, comparable, known.get("history"))
    if measured_text is None:
        if measured is None:
            measured_text = "not measured in this run"
        elif isinstance(measured, bool):
            measured_text = "true" if measured else "false"
        else:
            estimate, low, high, _ = _unpack(measured)
            interval = hasattr(measured, "low")
            measured_text = _ratio_text(
                estimate, low if interval else None, high if interval else None
            )
    record = ClaimRecord(
        key=key,
        seed=merged["seed"],
        claim=merged["claim"],
        seed_hardware=merged["seed_hardware"],
        dtype=merged["dtype"] or "",
        factor=None if factor is None else float(factor),
        seed_figure=_figure(known, factor, measured),
        measured_text=measured_text,
        how=how,
        comparable=comparable,
        why=why,
        verdict=result,
        detail=detail,
        device=caption().split(" · ")[0],
        torch=torch.__version__.split("+")[0],
    )
    if glue:
        glue_value(PREFIX + key, dict(record))
    return record


class ClaimTable:
    """Claim records shown as a table (HTML in a notebook, Markdown, or text)."""

    HEAD = ("seed", "claim", "seed's figure", "here", "verdict")

    def __init__(self, records: list[dict]):
        self.records = list(records)

    def rows(self) -> list[tuple[str, ...]]:
        rows = []
        for r in self.records:
            result = verdict_text(r)
            hardware = "; ".join(
                p for p in (r.get("seed_hardware"), r.get("dtype")) if p
            )
            claim_text = r["claim"] + (f" ({hardware})" if hardware else "")
            rows.append(
                (r["seed"], claim_text, r["seed_figure"], r["measured_text"], result)
            )
        return rows

    def _repr_markdown_(self) -> str:
        lines = ["| " + " | ".join(self.HEAD) + " |", "|" + " --- |" * len(self.HEAD)]
        lines += [
            "| " + " | ".join(_cell(v) for v in row) + " |" for row in self.rows()
        ]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        import html

        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.HEAD)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
            for row in self.rows()
        )
        return (
            f'<table class="gpubook-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )

    def __str__(self) -> str:
        return "\n".join(" | ".join(row) for row in self.rows())

    __repr__ = __str__


def table(records: list[dict]) -> ClaimTable:
    """The records :func:`claim` returned, as one table for the chapter's page."""
    return ClaimTable(records)


# --- collecting the records from the notebooks and writing the page ---------------


def collect(notebooks: list[Path]) -> dict[str, dict]:
    """The claim records glued in ``notebooks`` (outputs named ``seedclaim_*``), by key.

    A key glued twice keeps its last value. Raises :class:`ValueError` for a record that
    cannot be read.
    """
    import nbformat

    from .reference import glued_dicts

    records: dict[str, dict] = {}
    for path in notebooks:
        notebook = nbformat.read(path, as_version=4)
        required = {"seed", "claim", "verdict"}
        glued = glued_dicts(notebook, PREFIX, required, "claim", path.name)
        for name, record in glued.items():
            records[name[len(PREFIX) :]] = {**record, "chapter_file": path.name}
    return records


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _chapter_link(name: str) -> str:
    return f"[ch. {int(name[:2])}](../notebooks/{name})" if name[:2].isdigit() else name


def page(root: Path = ROOT) -> str:
    """The text of ``book/seeds-claims.md``, from the notebooks in root/notebooks."""
    from .reference import is_host_dependent

    notebooks = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    records = collect(notebooks)
    command = "python -m gpubook.seeds"
    lines = [
        f"<!-- Generated by `{command}` from the notebooks' stored outputs: "
        "do not edit. -->",
        "",
        "# The seeds' claims, side by side",
        "",
        "The book started from public texts (the *seeds*) that report speedups of",
        "NumPy and PyTorch code under `torch.compile`. This page lists every",
        "headline claim of the four seeds the book re-measures, with the seed's",
        "own hardware and dtype, next to the book's measurement of the same workload,",
        "like for like (same dtype, data and sizes on both sides), from the",
        "chapters' stored outputs. Speedups are the seed's variant over its",
        "baseline (> 1: the variant is faster); brackets give the 95% interval of",
        "the book's ratio.",
        "",
        "How to read the verdict: **holds** when the book measured the variant",
        "faster and its estimate (the median ratio) reaches at least half the claimed",
        "gain, 1 + (factor - 1) / 2 (the hardware differs, so a factor of about two",
        "either way counts as agreement); **does not hold** when it was slower, not",
        "clearly different, or faster by less than half the claimed gain (for a",
        "claim of fact: the run found it false); **depends on the host** when the",
        "book's runs measured it on both sides of that threshold as the host's speed",
        "moved (the run count and range are given: one run's side of it says nothing",
        "about the next run's); **not comparable** when the two",
        "figures cannot be set side by side (the reason is given); **not measured**",
        "when no chapter measured it in the stored run. The page is generated",
        f"(`{command}`) from the records the chapters glue with",
        "`gpubook.seeds.claim`.",
        "",
        "A verdict is the stored run's, except **depends on the host**, which sums",
        "up the book's runs. *(host)* marks a claim whose measured ratio",
        "depends on the host CPU as much as on PyTorch: a side that runs on the CPU",
        "(NumPy, pure Python, compiled CPU code), or a call that the host's work",
        "bounds (`gpubook/host_dependent.json` lists them). The book's reference",
        "runs saw the host's speed differ between runs by up to 2x, and drift within",
        "one (`python -m gpubook.reference check` names such runs): for such a",
        "claim, a measured ratio close to half the claimed gain can land on either",
        "side of it in another run, and did (",
    ]
    histories = [  # from the catalogue, as the verdicts' details give them
        f"{known['history']['label']}: "
        + _history_text(known["history"], _threshold(known["factor"]))
        for known in CLAIMS.values()
        if known.get("history")
    ]
    lines[-1] += "; ".join(histories) + ")."
    lines += [
        "Such a claim's verdict is **depends on the host**, whatever this run",
        "measured.",
        "",
    ]
    keys = list(CLAIMS) + sorted(k for k in records if k not in CLAIMS)
    for seed, title in SEEDS.items():
        lines += [
            f"## Seed {seed}: {title}",
            "",
            "| Claim (seed's hardware; dtype) | Seed | Book (device) | Verdict "
            "| How the book measured |",
            "| --- | ---: | --- | --- | --- |",
        ]
        for key in keys:
            known, record = CLAIMS.get(key, {}), records.get(key)
            data = record or known
            if data.get("seed") != seed:
                continue
            # what the seed says comes from the catalogue (a stored record may be
            # older than a correction to it); a key outside it, from its record
            said = known or data
            hardware = "; ".join(
                part for part in (said.get("seed_hardware"), said.get("dtype")) if part
            )
            claim_text = f"{said['claim']} ({hardware})" if hardware else said["claim"]
            if record is None:
                figure = _figure(known, known.get("factor"))
                book, result, how = (
                    "–",
                    "not measured",
                    f"planned in ch. {int(known['chapter'])}",
                )
            else:
                figure = _figure(known, known.get("factor")) if known else ""
                figure = figure or record.get("seed_figure", "")
                device = record.get("device", "?")
                book = (
                    f"{record['measured_text']} ({device}, torch {record.get('torch')})"
                )
                if record["verdict"] == "not measured":
                    book = f"{record['measured_text']} ({record.get('device', '?')})"
                result = f"**{record['verdict']}**"
                if record["verdict"] in ("holds", "does not hold") and (
                    is_host_dependent(record["chapter_file"], PREFIX + key)
                ):
                    result += " *(host)*"
                notes = [n for n in (record.get("detail"), record.get("why")) if n]
                if notes:
                    result += ": " + "; ".join(notes)
                how = record.get("how") or ""
                how = (
                    f"{how} ({_chapter_link(record['chapter_file'])})"
                    if how
                    else _chapter_link(record["chapter_file"])
                )
            lines.append(
                "| "
                + " | ".join(_cell(v) for v in (claim_text, figure, book, result, how))
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def write_page(root: Path = ROOT) -> Path:
    """Write ``book/seeds-claims.md`` under ``root``; return its path."""
    target = root / PAGE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page(root), encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpubook.seeds", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the book's folder (default: %(default)s)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if {PAGE.as_posix()} is out of step",
    )
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.check:
        current = (
            (root / PAGE).read_text(encoding="utf-8") if (root / PAGE).exists() else ""
        )
        if current != page(root):
            print(
                f"{PAGE.as_posix()} is out of step with the notebooks: "
                "run `python -m gpubook.seeds`"
            )
            return 1
        print(f"{PAGE.as_posix()} is in step with the notebooks")
        return 0
    print(f"wrote {write_page(root).relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

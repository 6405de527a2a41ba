"""Glue a value computed in a notebook into the book's prose (myst-nb ``glue``).

The prose of a chapter never types a measured number: it references a glued value, for example
``{glue:text}`speedup:.1f` ``, and the book shows what the notebook computed.
:func:`glue` uses :func:`myst_nb.glue` when myst-nb is installed, and otherwise writes the same
output itself, so that notebooks executed where only Jupyter is installed (the GPU machine)
still store their glued values.
"""

from __future__ import annotations

from typing import Any

__all__ = ["glue", "GLUE_PREFIX"]

GLUE_PREFIX = "application/papermill.record/"


class _PlainText(str):
    """A string whose text representation has no quotes, so ``{glue:text}`` shows it as prose."""

    def __repr__(self) -> str:
        return str(self)


def glue(name: str, value: Any, display: bool = False) -> None:
    """Store ``value`` under ``name`` in the cell's outputs; show it only if ``display`` is true.

    Glue plain numbers (floats, ints) and format them in the prose (``{glue:text}`name:.2f` ``),
    or glue a matplotlib figure to place it elsewhere with ``{glue:figure}``. A string is glued
    without quotes, so a verdict computed from the run (``"faster"``/``"slower"``) reads as prose.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be an identifier-like string, got {name!r}")
    if isinstance(value, str):
        value = _PlainText(value)
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        myst_glue = None
    if myst_glue is not None:
        myst_glue(name, value, display=display)
        return
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    mimebundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + key: data for key, data in mimebundle.items()}, raw=True, metadata=metadata)


HEADLINE_PREFIX = "headline_"


class Headline(dict):
    """The record :func:`headline` glues; shown in a notebook as one readable line."""

    def __repr__(self) -> str:
        from .timing import format_ratio, format_seconds

        text = (f"headline: {self['case']}: {self['baseline']} {format_seconds(self['baseline_seconds'])}, "
                f"{self['optimized']} {format_seconds(self['optimized_seconds'])} ({format_ratio(self['speedup'])}x)")
        if self["limit_fraction"] is not None:
            text += f", {self['limit_fraction']:.0%} of {self['limit'] or 'the hardware limit'}"
        return text


def headline(
    key: str,
    case: str,
    *,
    baseline_seconds: float,
    optimized_seconds: float,
    baseline: str = "eager",
    optimized: str = "compiled",
    limit_fraction: float | None = None,
    limit: str | None = None,
) -> dict:
    """Record one of the chapter's headline figures for the book's reference-results table.

    Glues (hidden) a dict under ``headline_<key>`` holding the case, both times (seconds), the
    speedup and, for memory- or compute-bound cases, the fraction of the hardware limit reached
    (``limit_fraction``, with ``limit`` naming it, e.g. ``"copy bandwidth"``). The device and torch
    version are recorded with it. ``python -m gpubook.reference results`` collects these from every
    notebook into ``book/reference-results.md``. Returns the record as a :class:`Headline`, a dict
    that displays as one line.
    """
    import torch

    from .plots import caption

    if not key.isidentifier():
        raise ValueError(f"key must be identifier-like, got {key!r}")
    for name, value in (("baseline_seconds", baseline_seconds), ("optimized_seconds", optimized_seconds)):
        if not (isinstance(value, (int, float)) and value > 0):
            raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    if limit_fraction is not None and not (isinstance(limit_fraction, (int, float)) and limit_fraction >= 0):
        raise ValueError(f"limit_fraction must be a non-negative number, got {limit_fraction!r}")
    record = {
        "case": case,
        "device": caption().split(" · ")[0],
        "torch": torch.__version__.split("+")[0],
        "baseline": baseline,
        "baseline_seconds": float(baseline_seconds),
        "optimized": optimized,
        "optimized_seconds": float(optimized_seconds),
        "speedup": float(baseline_seconds) / float(optimized_seconds),
        "limit_fraction": None if limit_fraction is None else float(limit_fraction),
        "limit": limit,
    }
    glue(HEADLINE_PREFIX + key, record)
    return Headline(record)

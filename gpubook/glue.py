"""Glue a value computed in a notebook into the book's prose (myst-nb ``glue``).

The prose of a chapter never types a measured number: it references a glued value, for
example ``{glue:text}`speedup:.1f` ``, and the book shows what the notebook computed.
:func:`glue` uses :func:`myst_nb.glue` when myst-nb is installed, and otherwise writes
the same output itself, so that notebooks executed where only Jupyter is installed (the
GPU machine) still store their glued values.
"""

from __future__ import annotations

from typing import Any

from ._checks import positive_number

__all__ = [
    "glue",
    "glue_ratio",
    "headline",
    "GLUE_PREFIX",
    "HEADLINE_PREFIX",
    "MODES",
    "ONE_SIDED",
    "VERDICTS",
]

GLUE_PREFIX = "application/papermill.record/"


class _PlainText(str):
    """A string whose text representation has no quotes, so ``{glue:text}`` shows it as
    prose."""

    def __repr__(self) -> str:
        return str(self)


def _as_plain_text(text: str) -> str:
    """``text`` as myst-nb will read it back: unquoted, unless myst-nb's
    ``literal_eval`` would turn it into something else (``"268,435,456"`` into the
    tuple ``(268, 435, 456)``, printed as such); then quoted, which it strips."""
    import ast

    try:
        ast.literal_eval(text)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return text
    return repr(text)


def glue(name: str, value: Any, display: bool = False) -> None:
    """Store ``value`` under ``name`` in the cell's outputs; show it only if ``display``
    is true.

    Glue plain numbers (floats, ints) and format them in the prose
    (``{glue:text}`name:.2f` ``), or glue a matplotlib figure to place it elsewhere with
    ``{glue:figure}``. A string is glued without quotes, so a verdict computed from the
    run (``"faster"``/``"slower"``) reads as prose.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be an identifier-like string, got {name!r}")
    if isinstance(value, str):
        value = _PlainText(_as_plain_text(value))
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
    ipy_display(
        {prefix + key: data for key, data in mimebundle.items()},
        raw=True,
        metadata=metadata,
    )


def glue_ratio(name: str, ratio: Any, says: str | None = None) -> None:
    """Glue a :class:`~gpubook.timing.Ratio` for the prose: ``name`` (its estimate),
    ``name_low`` and ``name_high`` (its interval), and either ``name_verdict`` (the
    two-sided verdict: "faster", "slower", "no clear difference") or, given ``says``
    (words chosen from it, for example with ``ratio.says(...)``), ``name_says``."""
    for attribute in ("estimate", "low", "high", "verdict"):
        if not hasattr(ratio, attribute):
            raise TypeError(
                f"ratio must be a gpubook Ratio (with .{attribute}), got "
                f"{type(ratio).__name__}"
            )
    if says is not None and not isinstance(says, str):
        raise TypeError(f"says must be a str or None, got {type(says).__name__}")
    glue(name, ratio.estimate)
    glue(f"{name}_low", ratio.low)
    glue(f"{name}_high", ratio.high)
    if says is None:
        glue(f"{name}_verdict", ratio.verdict)
    else:
        glue(f"{name}_says", says)


HEADLINE_PREFIX = "headline_"

VERDICTS = ("faster", "slower", "no clear difference")
"""The verdicts a :class:`gpubook.timing.Ratio` gives; a headline's ``verdict`` is one
of them, or one-sided words (:data:`ONE_SIDED`)."""

ONE_SIDED = {
    "not_slower": ("at least as fast", "slower", "not clearly slower"),
    "not_faster": ("at most as fast", "faster", "not clearly faster"),
}
"""A headline's one-sided words, by the :class:`gpubook.timing.Ratio` method that
chooses them: (the whole interval on the claimed side of 1, the whole interval on the
other side, the interval straddling 1)."""

MODES = ("latency", "throughput")
"""How a headline's times were taken (see :func:`gpubook.latency` and
:func:`gpubook.throughput`)."""


class Headline(dict):
    """The record :func:`headline` glues; shown in a notebook as one readable line."""

    def __repr__(self) -> str:
        from .timing import format_ratio, format_ratio_interval, format_seconds

        text = (
            f"headline: {self['case']}: {self['baseline']} "
            f"{format_seconds(self['baseline_seconds'])}, "
            f"{self['optimized']} {format_seconds(self['optimized_seconds'])}"
        )
        if not self.get("comparable", True):
            text += (
                " (not a like-for-like speedup: "
                f"{self.get('note') or 'see the chapter'})"
            )
        else:
            if self.get("speedup_low") is not None:
                text += " (" + format_ratio_interval(
                    self["speedup"], self["speedup_low"], self["speedup_high"]
                )
            else:
                text += f" ({format_ratio(self['speedup'])}x"
            if self.get("verdict"):
                text += f": {self['verdict']}"
            text += ")"
        if self.get("mode"):
            text += f", {self['mode']}"
        if self["limit_fraction"] is not None:
            text += (
                f", {self['limit_fraction']:.0%} of "
                f"{self['limit'] or 'the hardware limit'}"
            )
        return text


def _ratio_fields(ratio: Any) -> tuple[float, float, float, str]:
    """``(estimate, low, high, verdict)`` of a :class:`gpubook.timing.Ratio`-like
    object, checked."""
    try:
        fields = (ratio.estimate, ratio.low, ratio.high, ratio.verdict)
    except AttributeError:
        raise TypeError(
            "ratio must have .estimate, .low, .high and .verdict (a gpubook Ratio), "
            f"got {type(ratio).__name__}"
        ) from None
    estimate, low, high, verdict = fields
    for name, value in (
        ("ratio.estimate", estimate),
        ("ratio.low", low),
        ("ratio.high", high),
    ):
        positive_number(name, value)
    if not float(low) <= float(estimate) <= float(high):
        raise ValueError(
            f"ratio interval [{low}, {high}] does not contain its estimate {estimate}"
        )
    if verdict not in VERDICTS:
        raise ValueError(f"ratio.verdict must be one of {VERDICTS}, got {verdict!r}")
    return float(estimate), float(low), float(high), str(verdict)


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
    ratio: Any = None,
    mode: str | None = None,
    comparable: bool = True,
    note: str | None = None,
    one_sided: str | None = None,
) -> dict:
    """Record one of the chapter's headline figures for the book's reference-results
    table.

    Glues (hidden) a dict under ``headline_<key>`` holding the case, both times
    (seconds), the speedup and, for memory- or compute-bound cases, the fraction of the
    hardware limit reached (``limit_fraction``, with ``limit`` naming it, e.g. ``"copy
    bandwidth"``). The device and torch version are recorded with it. ``python -m
    gpubook.reference results`` collects these from every notebook into
    ``book/reference-results.md``. Returns the record as a :class:`Headline`, a dict
    that displays as one line.

    ``ratio`` is the comparison's :class:`gpubook.timing.Ratio` (anything with
    ``.estimate``, ``.low``, ``.high`` and ``.verdict``): the record then keeps its
    estimate as ``speedup``, its 95% interval as ``speedup_low``/``speedup_high`` and
    its ``verdict`` (and ``margin``, when the ratio has one). ``mode`` says how the
    times were taken (``"latency"`` or ``"throughput"``). A pair that is not like for
    like (float32 against float64, a 0/1 count) is recorded with ``comparable=False``
    and a ``note`` saying why: the results page lists it without presenting its ratio
    as a speedup.

    ``one_sided`` (with ``ratio`` only): ``"not_slower"`` or ``"not_faster"`` replaces
    the ratio's two-sided verdict with the words of :data:`ONE_SIDED` for that
    direction, chosen by :meth:`gpubook.timing.Ratio.not_slower` or
    :meth:`~gpubook.timing.Ratio.not_faster` from the interval alone, for a pair whose
    gain repeats in direction but not in size, so that the two-sided verdict comes and
    goes with the host (ch. 4's eager fallback against ``mark_dynamic``: 1.01x to 1.21x
    over the book's runs of November 2026, "faster" against a 20% margin in one of them;
    the chapter gives the count). The
    record keeps the ratio's own verdict as ``two_sided``.
    """
    import torch

    from .plots import caption

    if not isinstance(key, str) or not key.isidentifier():
        raise ValueError(f"key must be identifier-like, got {key!r}")
    if not isinstance(case, str) or not case.strip():
        raise ValueError(f"case must be a non-empty string, got {case!r}")
    for name, value in (
        ("baseline_seconds", baseline_seconds),
        ("optimized_seconds", optimized_seconds),
    ):
        positive_number(name, value)
    if limit_fraction is not None:
        positive_number("limit_fraction", limit_fraction, allow_zero=True)
    if mode is not None and mode not in MODES:
        raise ValueError(f"mode must be one of {MODES} or None, got {mode!r}")
    if not isinstance(comparable, bool):
        raise TypeError(f"comparable must be True or False, got {comparable!r}")
    if note is not None and not isinstance(note, str):
        raise TypeError(f"note must be a str or None, got {type(note).__name__}")
    if one_sided is not None:
        if one_sided not in ONE_SIDED:
            raise ValueError(
                f"one_sided must be one of {tuple(ONE_SIDED)} or None, "
                f"got {one_sided!r}"
            )
        if ratio is None:
            raise ValueError("one_sided words replace a ratio's verdict: pass ratio=")
        if not callable(getattr(ratio, one_sided, None)):
            raise TypeError(
                f"one_sided needs a gpubook Ratio (with .{one_sided}), got "
                f"{type(ratio).__name__}"
            )
    if not comparable and not note:
        raise ValueError(
            "a headline with comparable=False needs a note saying why it is not "
            "like for like"
        )
    speedup = float(baseline_seconds) / float(optimized_seconds)
    low = high = verdict = two_sided = None
    if ratio is not None:
        speedup, low, high, verdict = _ratio_fields(ratio)
    if one_sided is not None:
        two_sided = verdict
        verdict = getattr(ratio, one_sided)(*ONE_SIDED[one_sided])
    record = {
        "case": case,
        "device": caption().split(" · ")[0],
        "torch": torch.__version__.split("+")[0],
        "baseline": baseline,
        "baseline_seconds": float(baseline_seconds),
        "optimized": optimized,
        "optimized_seconds": float(optimized_seconds),
        "speedup": speedup,
        "speedup_low": low,
        "speedup_high": high,
        "verdict": verdict,
        "two_sided": two_sided,
        "margin": None if ratio is None else getattr(ratio, "margin", None),
        "mode": mode,
        "comparable": comparable,
        "note": note,
        "limit_fraction": None if limit_fraction is None else float(limit_fraction),
        "limit": limit,
    }
    glue(HEADLINE_PREFIX + key, record)
    return Headline(record)

"""One plot style for the whole book, and the book's recurring plots.

Every plot names its device, dtype and torch version (:func:`caption`), uses the same colour for the
same variant in every chapter (:data:`COLORS`), and uses log axes for sizes and speedups. Times are
in seconds unless an axis says otherwise. Each function returns the matplotlib ``Figure``.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
from matplotlib import ticker
import torch

from .profiles import pick_device
from .timing import break_even_calls, format_ratio

__all__ = [
    "COLORS",
    "apply_style",
    "color_for",
    "caption",
    "new_figure",
    "ratio_ticks",
    "speedup_bars",
    "versus_size",
    "cumulative_time",
]

COLORS = {
    "numpy": "#6b6b6b",
    "python": "#a6761d",
    "eager": "#1f77b4",
    "compiled": "#d62728",
    "default": "#d62728",
    "reduce-overhead": "#ff7f0e",
    "max-autotune": "#9467bd",
    "cpu": "#2ca02c",
    "gpu": "#17becf",
    "limit": "#000000",
}
"""Colours by variant; :func:`color_for` matches a label to the first key it contains."""

_FALLBACK = ["#8c564b", "#e377c2", "#bcbd22", "#7f7f7f", "#17becf", "#2ca02c"]


def apply_style() -> None:
    """Set the book's matplotlib style (readable sizes, light grid, no top/right spines)."""
    matplotlib.rcParams.update(
        {
            "figure.figsize": (7.5, 4.2),
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "legend.frameon": False,
        }
    )


def color_for(label: str, index: int = 0) -> str:
    """The book's colour for a variant label such as ``"compiled (reduce-overhead)"``.

    The way a variant runs (mode, eager, compiled) wins over the language it is written in, so
    ``"compiled NumPy, CPU"`` gets the compiled colour and ``"NumPy"`` alone the NumPy colour.
    """
    lowered = label.lower()
    for key in ("reduce-overhead", "max-autotune", "eager", "compiled", "numpy", "python", "default", "cpu", "gpu"):
        if key in lowered:
            return COLORS[key]
    return _FALLBACK[index % len(_FALLBACK)]


def caption(device: torch.device | str | None = None, dtype: torch.dtype | str | None = None) -> str:
    """``'NVIDIA H100 80GB HBM3 · float32 · torch 2.11.0'``: what every plot must say."""
    device = torch.device(device) if device is not None else pick_device()
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        from .environment import collect

        name = f"CPU ({collect()['cpu']}, {torch.get_num_threads()} threads)"
    parts = [name]
    if dtype is not None:
        parts.append(str(dtype).removeprefix("torch."))
    parts.append(f"torch {torch.__version__.split('+')[0]}")
    return " · ".join(parts)


def new_figure(title: str, device=None, dtype=None, figsize: tuple[float, float] | None = None):
    """A figure with one axes titled ``title`` over the :func:`caption` line. Returns ``(fig, ax)``."""
    if not isinstance(title, str) or not title:
        raise ValueError("title must be a non-empty string")
    fig, ax = plt.subplots(figsize=figsize)
    ax.set_title(f"{title}\n{caption(device, dtype)}", loc="left")
    return fig, ax


def ratio_ticks(axis) -> None:
    """Label a log-scale axis of ratios at 1, 2, 5, 10, 20, ... as ``"2x"``.

    Matplotlib's default labels minor log ticks as "3 x 10^0", which crowd and overlap on a short
    range. Pass ``ax.xaxis`` or ``ax.yaxis`` after setting the log scale.
    """
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}x"))
    axis.set_minor_formatter(ticker.NullFormatter())


def speedup_bars(
    labels: Sequence[str],
    speedups: Sequence[float],
    title: str,
    device=None,
    dtype=None,
    baseline: str = "eager",
):
    """Horizontal bars of speedups (baseline time / variant time) on a log axis, 1x marked."""
    if len(labels) != len(speedups) or not labels:
        raise ValueError("labels and speedups must be non-empty and of the same length")
    if any(not (isinstance(s, (int, float)) and s > 0 and math.isfinite(s)) for s in speedups):
        raise ValueError("speedups must be positive, finite numbers")
    height = max(2.5, 0.45 * len(labels) + 1.5)
    fig, ax = new_figure(title, device, dtype, figsize=(7.5, height))
    positions = range(len(labels))
    colors = [color_for(label, i) for i, label in enumerate(labels)]
    ax.barh(list(positions), speedups, color=colors)
    ax.set_yticks(list(positions), labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ratio_ticks(ax.xaxis)
    ax.axvline(1.0, color=COLORS["limit"], linewidth=1)
    for y, value in zip(positions, speedups):
        ax.annotate(f"{format_ratio(value)}x", (value, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=9)
    ax.set_xlabel(f"speedup over {baseline} (log scale; right of the line is faster)")
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig


def versus_size(
    sizes: Sequence[float],
    series: Mapping[str, Sequence[float]],
    title: str,
    ylabel: str,
    xlabel: str = "size",
    device=None,
    dtype=None,
    limit: float | None = None,
    limit_label: str | None = None,
    logy: bool = True,
):
    """Lines of a measured quantity (time, GB/s, TFLOP/s) against problem size, log-log by default.

    ``limit`` draws a hardware limit as a dashed horizontal line labelled ``limit_label``.
    Values may be ``nan`` where a variant was not run at that size.
    """
    if not series:
        raise ValueError("series must hold at least one named list of values")
    for name, values in series.items():
        if len(values) != len(sizes):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(sizes)} sizes")
    fig, ax = new_figure(title, device, dtype)
    for i, (name, values) in enumerate(series.items()):
        ax.plot(sizes, values, marker="o", label=name, color=color_for(name, i))
    if limit is not None:
        ax.axhline(limit, color=COLORS["limit"], linestyle="--", linewidth=1)
        ax.annotate(limit_label or f"limit {limit:.3g}", (sizes[0], limit), xytext=(0, 4),
                    textcoords="offset points", fontsize=9)
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    return fig


def cumulative_time(
    eager_seconds: float,
    compiled_seconds: float,
    first_call_seconds: float,
    title: str,
    calls: int | None = None,
    device=None,
    dtype=None,
):
    """Cumulative time against number of calls for eager and compiled, with the break-even marked.

    The compiled line starts at the first call (compilation plus one run); if it is faster per
    call, the lines cross at the break-even call count of :func:`gpubook.timing.break_even_calls`.
    """
    n_even = break_even_calls(first_call_seconds, eager_seconds, compiled_seconds)
    if calls is None:
        calls = int(min(max(3 * n_even, 10), 1e7)) if math.isfinite(n_even) else 1000
    if not isinstance(calls, int) or calls < 2:
        raise ValueError(f"calls must be an int of at least 2, got {calls!r}")
    xs = [1 + (calls - 1) * i / 199 for i in range(200)]
    eager = [x * eager_seconds for x in xs]
    compiled = [first_call_seconds + (x - 1) * compiled_seconds for x in xs]
    fig, ax = new_figure(title, device, dtype)
    ax.plot(xs, eager, label="eager", color=COLORS["eager"])
    ax.plot(xs, compiled, label="compiled (first call includes compiling)", color=COLORS["compiled"])
    if math.isfinite(n_even) and n_even <= calls:
        ax.axvline(n_even, color=COLORS["limit"], linestyle="--", linewidth=1)
        ax.annotate(f"break-even: {n_even:.0f} calls", (n_even, 0), xytext=(4, 8),
                    textcoords="offset points", fontsize=9)
    ax.set_xlabel("number of calls")
    ax.set_ylabel("cumulative time (s)")
    ax.legend()
    fig.tight_layout()
    return fig


apply_style()

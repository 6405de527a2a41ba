"""One plot style for the whole book, and the book's recurring plots.

Every plot names its device, dtype and torch version (:func:`caption`), uses the same
colour for the same variant in every chapter (:data:`COLORS`), and uses log axes for
sizes and speedups. Times are in seconds unless an axis says otherwise. Each function
returns the matplotlib ``Figure``.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import matplotlib
import matplotlib.pyplot as plt
import torch
from matplotlib import ticker

from .profiles import pick_device
from .timing import break_even_calls, format_ratio

__all__ = [
    "COLORS",
    "apply_style",
    "color_for",
    "caption",
    "new_figure",
    "ratio_ticks",
    "log_ticks",
    "plain_number",
    "speedup_bars",
    "versus_size",
    "cumulative_time",
    "spread",
    "timeline",
    "roofline",
]

COLORS = {
    "numpy": "#6b6b6b",
    "python": "#a6761d",
    "eager": "#1f77b4",
    "compiled": "#d62728",
    "default": "#d62728",
    "reduce-overhead": "#ff7f0e",
    "cuda graph": "#ff7f0e",
    "max-autotune": "#9467bd",
    "cpu": "#2ca02c",
    "gpu": "#17becf",
    "limit": "#000000",
}
"""Colours by variant; :func:`color_for` matches a label to the first key it holds."""

_FALLBACK = ["#8c564b", "#e377c2", "#bcbd22", "#7f7f7f", "#17becf", "#2ca02c"]


def spread(value) -> tuple[float, float | None, float | None]:
    """``(centre, low, high)`` of a measured value, for error bars and bands.

    Accepts a plain number (no spread: ``low`` and ``high`` are ``None``), a
    :class:`gpubook.Timing` (median and interquartile range, seconds), a
    :class:`gpubook.Ratio` (estimate and 95% interval) or a ``(centre, low, high)``
    tuple.
    """
    if isinstance(value, bool):
        raise TypeError(
            "a measured value must be a number, a Timing, a Ratio or a tuple, not bool"
        )
    if isinstance(value, (int, float)):
        return float(value), None, None
    if hasattr(value, "estimate") and hasattr(value, "low") and hasattr(value, "high"):
        return float(value.estimate), float(value.low), float(value.high)
    if hasattr(value, "median") and hasattr(value, "q25") and hasattr(value, "q75"):
        return float(value.median), float(value.q25), float(value.q75)
    if isinstance(value, (tuple, list)) and len(value) == 3:
        centre, low, high = (float(v) for v in value)
        if not low <= centre <= high:
            raise ValueError(
                f"(centre, low, high) needs low <= centre <= high, got {value!r}"
            )
        return centre, low, high
    raise TypeError(
        "a measured value must be a number, a Timing, a Ratio or a "
        f"(centre, low, high) tuple, got {type(value).__name__}"
    )


def _error_bars(values) -> tuple[list[float], list[list[float]] | None]:
    """Centres and matplotlib ``xerr``/``yerr`` (distances below and above), or
    ``None``."""
    triples = [spread(v) for v in values]
    centres = [c for c, _, _ in triples]
    if all(low is None for _, low, _ in triples):
        return centres, None
    below = [c - (low if low is not None else c) for c, low, _ in triples]
    above = [(high if high is not None else c) - c for c, _, high in triples]
    return centres, [below, above]


def apply_style() -> None:
    """Set the book's matplotlib style (readable sizes, light grid, no top/right
    spines)."""
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

    The way a variant runs (mode, eager, compiled) wins over the language it is written
    in, so ``"compiled NumPy, CPU"`` gets the compiled colour and ``"NumPy"`` alone the
    NumPy colour.
    """
    lowered = label.lower()
    for key in (
        "reduce-overhead",
        "cuda graph",
        "max-autotune",
        "eager",
        "compiled",
        "numpy",
        "python",
        "default",
        "cpu",
        "gpu",
    ):
        if key in lowered:
            return COLORS[key]
    return _FALLBACK[index % len(_FALLBACK)]


def caption(
    device: torch.device | str | None = None, dtype: torch.dtype | str | None = None
) -> str:
    """``'NVIDIA H100 80GB HBM3 · float32 · torch 2.11.0'``: what every plot says."""
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


def new_figure(
    title: str, device=None, dtype=None, figsize: tuple[float, float] | None = None
):
    """A figure with one axes titled ``title`` over the :func:`caption` line. Returns
    ``(fig, ax)``."""
    if not isinstance(title, str) or not title:
        raise ValueError("title must be a non-empty string")
    fig, ax = plt.subplots(figsize=figsize)
    ax.set_title(f"{title}\n{caption(device, dtype)}", loc="left")
    return fig, ax


def ratio_ticks(axis) -> None:
    """Label a log-scale axis of ratios at 1, 2, 5, 10, 20, ... as ``"2x"``.

    Matplotlib's default labels minor log ticks as "3 x 10^0", which crowd and overlap
    on a short range. Pass ``ax.xaxis`` or ``ax.yaxis`` after setting the log scale.
    """
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"{value:g}x"))
    axis.set_minor_formatter(ticker.NullFormatter())


_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def plain_number(value: float) -> str:
    """A tick label without exponents: ``0.05``, ``60``, ``300``, ``2k``, ``1.5M``.

    Values of a thousand and more take an SI suffix (k, M, G, T, P); smaller ones are
    written out in full, so a log axis reads "40, 60, 100" instead of "4x10^1".
    """
    value = float(value)
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    sign, value = ("-" if value < 0 else ""), abs(value)
    for scale, suffix in _SI:
        if value >= scale * 0.9995:
            return f"{sign}{value / scale:.3g}{suffix}"
    if value >= 1:
        return f"{sign}{value:.3g}"
    decimals = min(12, 2 - math.floor(math.log10(value)))
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return sign + (text if text not in ("", "0") else f"{value:.1g}")


class _PlainLogLocator(ticker.LogLocator):
    """Major log ticks at 1, 2, 5 per decade on short ranges, at powers of ten on
    ranges over three decades (where 1, 2, 5 would crowd)."""

    def tick_values(self, vmin, vmax):
        if vmin > 0 and vmax > 0 and math.isfinite(vmin) and math.isfinite(vmax):
            decades = abs(math.log10(vmax) - math.log10(vmin))
            self.set_params(subs=(1.0, 2.0, 5.0) if decades <= 3 else (1.0,))
        return super().tick_values(vmin, vmax)


class _PlainLogFormatter(ticker.Formatter):
    """:func:`plain_number` labels for a log axis. As a minor formatter it labels
    only short ranges: the 3s when the view spans less than a factor of 10 (with the
    major 1, 2, 5), every minor tick below a factor of 3."""

    def __init__(self, minor: bool = False):
        self.minor = minor

    def __call__(self, value, pos=None):
        if value <= 0:
            return ""
        if self.minor:
            low, high = sorted(abs(v) for v in self.axis.get_view_interval())
            span = high / low if low > 0 else math.inf
            mantissa = round(value / 10 ** math.floor(math.log10(value) + 1e-9), 6)
            if span >= 10 or (span >= 3 and mantissa != 3):
                return ""
        return plain_number(value)


def log_ticks(axis) -> None:
    """Plain numbers on a log-scale axis: "60", "300", "1k" instead of "6x10^1".

    Major ticks at 1, 2, 5 per decade (powers of ten alone over more than three
    decades); on a range shorter than a factor of 10 the minor ticks get labels
    too, so the axis always shows at least two numbers. Pass ``ax.xaxis`` or
    ``ax.yaxis`` after setting the log scale.
    """
    axis.set_major_locator(_PlainLogLocator(base=10))
    axis.set_major_formatter(_PlainLogFormatter())
    axis.set_minor_locator(ticker.LogLocator(base=10, subs="all"))
    axis.set_minor_formatter(_PlainLogFormatter(minor=True))


def speedup_bars(
    labels: Sequence[str],
    speedups: Sequence[float],
    title: str,
    device=None,
    dtype=None,
    baseline: str = "eager",
):
    """Horizontal bars of speedups (baseline time / variant time) on a log axis, 1x
    marked.

    Each speedup may be a number, a :class:`gpubook.Ratio` or a ``(estimate, low,
    high)`` tuple; intervals are drawn as error bars.
    """
    if len(labels) != len(speedups) or not labels:
        raise ValueError("labels and speedups must be non-empty and of the same length")
    try:
        speedups, errors = _error_bars(speedups)
    except TypeError as error:
        raise ValueError(f"speedups: {error}") from None
    if any(not (s > 0 and math.isfinite(s)) for s in speedups):
        raise ValueError("speedups must be positive, finite numbers")
    height = max(2.5, 0.45 * len(labels) + 1.5)
    fig, ax = new_figure(title, device, dtype, figsize=(7.5, height))
    positions = range(len(labels))
    colors = [color_for(label, i) for i, label in enumerate(labels)]
    ax.barh(
        list(positions),
        speedups,
        color=colors,
        xerr=errors,
        error_kw={"ecolor": COLORS["limit"], "capsize": 3, "linewidth": 1},
    )
    ax.set_yticks(list(positions), labels)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ratio_ticks(ax.xaxis)
    ax.axvline(1.0, color=COLORS["limit"], linewidth=1)
    for i, (y, value) in enumerate(zip(positions, speedups)):
        right = value + (errors[1][i] if errors else 0.0)
        ax.annotate(
            f"{format_ratio(value)}x",
            (right, y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=9,
        )
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
    """Lines of a measured quantity (time, GB/s, TFLOP/s) against problem size, log-log
    by default.

    ``limit`` draws a hardware limit as a dashed horizontal line labelled
    ``limit_label``. Values may be ``nan`` where a variant was not run at that size. A
    value may also be a :class:`gpubook.Timing` or a ``(centre, low, high)`` tuple: the
    spread is drawn as a band.
    """
    if not series:
        raise ValueError("series must hold at least one named list of values")
    for name, values in series.items():
        if len(values) != len(sizes):
            raise ValueError(
                f"series {name!r} has {len(values)} values for {len(sizes)} sizes"
            )
    fig, ax = new_figure(title, device, dtype)
    for i, (name, values) in enumerate(series.items()):
        triples = [spread(v) for v in values]
        centres = [c for c, _, _ in triples]
        color = color_for(name, i)
        ax.plot(sizes, centres, marker="o", label=name, color=color)
        if any(low is not None for _, low, _ in triples):
            lows = [c if low is None else low for c, low, _ in triples]
            highs = [c if high is None else high for c, _, high in triples]
            ax.fill_between(sizes, lows, highs, color=color, alpha=0.2, linewidth=0)
    if limit is not None:
        ax.axhline(limit, color=COLORS["limit"], linestyle="--", linewidth=1)
        ax.annotate(
            limit_label or f"limit {limit:.3g}",
            (sizes[0], limit),
            xytext=(0, 4),
            textcoords="offset points",
            fontsize=9,
        )
    ax.set_xscale("log")
    log_ticks(ax.xaxis)
    if logy:
        ax.set_yscale("log")
        log_ticks(ax.yaxis)
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
    """Cumulative time against number of calls for eager and compiled, with the
    break-even marked.

    The compiled line starts at the first call (compilation plus one run); if it is
    faster per call, the lines cross at the break-even call count of
    :func:`gpubook.timing.break_even_calls`. ``eager_seconds`` and ``compiled_seconds``
    may be :class:`gpubook.Timing` objects: their medians set the lines and their
    interquartile ranges are drawn as bands.
    """
    from ._checks import positive_number

    eager_spread, compiled_spread = spread(eager_seconds), spread(compiled_seconds)
    eager_seconds, compiled_seconds = eager_spread[0], compiled_spread[0]
    # check under the caller's names (break_even_calls names its own arguments)
    positive_number("first_call_seconds", first_call_seconds, allow_zero=True)
    positive_number("eager_seconds", eager_seconds, allow_zero=True)
    positive_number("compiled_seconds", compiled_seconds, allow_zero=True)
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
    ax.plot(
        xs,
        compiled,
        label="compiled (first call includes compiling)",
        color=COLORS["compiled"],
    )
    for (_, low, high), start, offset, color in (
        (eager_spread, 0.0, 0, COLORS["eager"]),
        (compiled_spread, first_call_seconds, 1, COLORS["compiled"]),
    ):
        if low is not None:
            ax.fill_between(
                xs,
                [start + (x - offset) * low for x in xs],
                [start + (x - offset) * high for x in xs],
                color=color,
                alpha=0.2,
                linewidth=0,
            )
    if math.isfinite(n_even) and n_even <= calls:
        ax.axvline(n_even, color=COLORS["limit"], linestyle="--", linewidth=1)
        ax.annotate(
            f"break-even: {n_even:.0f} calls",
            (n_even, 0),
            xytext=(4, 8),
            textcoords="offset points",
            fontsize=9,
        )
    ax.set_xlabel("number of calls")
    ax.set_ylabel("cumulative time (s)")
    ax.legend()
    fig.tight_layout()
    return fig


def _spans_by_row(spans) -> dict[str, list]:
    rows: dict[str, list] = {}
    for span in spans:
        if (
            not (math.isfinite(span.start_us) and math.isfinite(span.end_us))
            or span.end_us < span.start_us
        ):
            raise ValueError(
                f"span {span.name!r} has bad times "
                f"{span.start_us!r} to {span.end_us!r} µs"
            )
        rows.setdefault(str(span.row), []).append(span)
    return rows


def _busy_us(spans) -> float:
    """Length of the union of the spans' intervals, µs (overlapping kernels counted
    once)."""
    total, end = 0.0, -math.inf
    for span in sorted(spans, key=lambda s: s.start_us):
        if span.end_us > end:
            total += span.end_us - max(span.start_us, end)
            end = span.end_us
    return total


def _span_styles(spans, kind: str, color: str):
    """(bar style, spans) pairs: GPU work in the variant's colour; host spans by their
    ``kind`` (launches dark, synchronisations hatched, the rest light)."""
    if kind == "gpu":
        return [({"facecolors": color, "alpha": 0.9}, spans)]
    launches = [s for s in spans if getattr(s, "kind", "") == "launch"]
    syncs = [s for s in spans if getattr(s, "kind", "") == "sync"]
    rest = [s for s in spans if getattr(s, "kind", "") not in ("launch", "sync")]
    styles = [
        ({"facecolors": "#7f7f7f", "alpha": 0.3}, rest),
        ({"facecolors": "none", "edgecolor": "#7f7f7f", "hatch": "////"}, syncs),
        ({"facecolors": "#252525", "alpha": 0.9}, launches),
    ]
    return [(style, chosen) for style, chosen in styles if chosen]


def timeline(
    traces: Mapping[str, object],
    title: str,
    device=None,
    dtype=None,
    max_cpu_rows: int = 2,
    label_kernels: bool = True,
):
    """Profiler timelines of several variants, one row group each, on a shared time axis
    (µs).

    ``traces`` maps a variant label (``"eager"``, ``"compiled"``, ``"CUDA graph"``) to a
    trace from :func:`gpubook.trace`: an object with ``cpu`` and ``gpu`` lists of spans,
    each span with ``.name``, ``.start_us``, ``.end_us`` and ``.row`` (thread or
    stream). In each group the host rows (what the CPU does: operators, launches) sit
    above the GPU rows (kernels, one row per stream), so the gaps between kernels, where
    the GPU waits for the host, show at a glance. Host spans may nest (an operator and
    the launch inside it): they are drawn translucent, so nesting shows darker. Only the
    ``max_cpu_rows`` busiest host threads are drawn. The right margin of each group says
    how long the GPU was busy out of the whole trace.
    """
    if not isinstance(traces, Mapping) or not traces:
        raise ValueError("traces must be a non-empty mapping of label -> trace")
    if (
        not isinstance(max_cpu_rows, int)
        or isinstance(max_cpu_rows, bool)
        or max_cpu_rows < 1
    ):
        raise ValueError(f"max_cpu_rows must be a positive int, got {max_cpu_rows!r}")
    groups, call_starts = [], []
    for label, trace in traces.items():
        if not hasattr(trace, "cpu") or not hasattr(trace, "gpu"):
            raise ValueError(
                f"traces[{label!r}] must have .cpu and .gpu span lists (gpubook.trace)"
            )
        cpu_rows = _spans_by_row(trace.cpu)
        busiest = sorted(cpu_rows, key=lambda row: -_busy_us(cpu_rows[row]))[
            :max_cpu_rows
        ]
        gpu_rows = _spans_by_row(trace.gpu)
        rows = [
            (f"CPU {row}" if len(busiest) > 1 else "CPU", cpu_rows[row], "cpu")
            for row in busiest
        ]
        rows += [
            (f"GPU {row}" if len(gpu_rows) > 1 else "GPU", gpu_rows[row], "gpu")
            for row in sorted(gpu_rows)
        ]
        if not rows:
            raise ValueError(f"traces[{label!r}] holds no spans")
        groups.append((str(label), rows, list(trace.gpu), list(trace.cpu)))
        call_starts.append([s.start_us for s in getattr(trace, "calls", ())])
    height = 1.0 + sum(0.45 * len(rows) + 0.55 for _, rows, _, _ in groups)
    fig, axes = plt.subplots(
        len(groups), 1, sharex=True, figsize=(9.0, max(2.8, height)), squeeze=False
    )
    axes = [row[0] for row in axes]
    axes[0].set_title(f"{title}\n{caption(device, dtype)}", loc="left")
    end_all = max(span.end_us for _, _, gpu, cpu in groups for span in gpu + cpu)
    for index, (ax, (label, rows, gpu_spans, cpu_spans)) in enumerate(
        zip(axes, groups)
    ):
        color = color_for(label, index)
        for y, (_, spans, kind) in enumerate(rows):
            for style, chosen in _span_styles(spans, kind, color):
                bars = [
                    (s.start_us, max(s.end_us - s.start_us, end_all * 2e-4))
                    for s in chosen
                ]
                ax.broken_barh(bars, (y - 0.38, 0.76), linewidth=0, **style)
            if kind == "gpu" and label_kernels:
                widest = max(spans, key=lambda s: s.end_us - s.start_us)
                if widest.end_us - widest.start_us > 0.08 * end_all:
                    ax.annotate(
                        widest.name[:40],
                        ((widest.start_us + widest.end_us) / 2, y),
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white",
                    )
        for start in call_starts[index]:
            ax.axvline(start, color=COLORS["limit"], linestyle=":", linewidth=0.8)
        ax.set_yticks(range(len(rows)), [name for name, _, _ in rows], fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_ylabel(
            label,
            rotation=0,
            ha="right",
            va="center",
            fontsize=9,
            color=color,
            labelpad=40,
        )
        ax.grid(axis="y", visible=False)
        first = min(s.start_us for s in gpu_spans + cpu_spans)
        last = max(s.end_us for s in gpu_spans + cpu_spans)
        busy = _busy_us(gpu_spans)
        note = (
            f"{len(gpu_spans)} GPU spans, busy {busy:,.0f} of {last - first:,.0f} µs"
            if gpu_spans
            else "no GPU work"
        )
        ax.annotate(
            note,
            (1.0, 1.0),
            xycoords="axes fraction",
            ha="right",
            va="bottom",
            fontsize=8,
        )
    axes[-1].set_xlabel(
        "time (µs; dotted lines: start of each call). Host rows: light = Python and "
        "operators,\ndark = kernel launches, hatched = waiting for the GPU"
    )
    axes[-1].set_xlim(0, end_all * 1.01)
    fig.tight_layout()
    return fig


def _percent(share: float) -> str:
    """A share of a roof in percent: whole numbers from 10%, two significant figures
    below (``"3.2"``, ``"0.036"``), so a small share never reads as 0%."""
    value = 100 * share
    if round(value) >= 10:
        return f"{value:.0f}"
    decimals = max(0, 1 - math.floor(math.log10(value)))
    text = f"{value:.{decimals}f}"
    return text if float(text) < 10 else "10"


def _rate(value: float) -> str:
    """A roof's value: whole numbers from 100 (``"2,997"``), three significant
    figures below (``"67"``, ``"1.3"``), never an exponent."""
    return f"{value:,.0f}" if value >= 99.95 else plain_number(value)


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _renderer(fig):
    """A renderer to measure text with (the figure's own canvas where it has one)."""
    try:
        return fig.canvas.get_renderer()
    except AttributeError:
        from matplotlib.backends.backend_agg import RendererAgg

        return RendererAgg(fig.bbox.width, fig.bbox.height, fig.dpi)


def _text_size(ax, text: str, renderer, fontsize: float = 8) -> tuple[float, float]:
    """Width and height in display pixels of ``text`` drawn unrotated."""
    probe = ax.text(0, 0, text, fontsize=fontsize)
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return extent.width, extent.height


def _overlap(a, b) -> float:
    """Overlap area of two display boxes ``(x0, y0, x1, y1)``."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _inside(box, frame) -> bool:
    return (
        box[0] >= frame[0]
        and box[1] >= frame[1]
        and box[2] <= frame[2]
        and box[3] <= frame[3]
    )


def _point_styles(centres) -> list[tuple[str, bool]]:
    """(marker, hollow) per point ``(x_px, y_px, colour)``: a marker shape that no
    earlier point of the same colour or close by has, hollow (a ring) where an
    earlier marker lies underneath, so both stay visible."""
    styles: list[tuple[str, bool]] = []
    for i, (x, y, color) in enumerate(centres):
        near = [
            j
            for j in range(i)
            if abs(centres[j][0] - x) < 12 and abs(centres[j][1] - y) < 12
        ]
        same = [j for j in range(i) if centres[j][2] == color]
        taken = {styles[j][0] for j in near + same}
        marker = next((m for m in _MARKERS if m not in taken), _MARKERS[i % 7])
        styles.append((marker, bool(near)))
    return styles


def _label_offsets(pt: float):
    """Label offsets (display pixels), alignments and ring, in order of preference:
    right of the point, below then above, then left, then centred under or over
    it; then the same further out, at growing distances (ring 1, 2, ...)."""
    offsets = []
    for ring in range(6):
        dy = (3 + 11 * ring) * pt
        for dx, ha in ((7 * pt, "left"), (-7 * pt, "right")):
            offsets += [(dx, -dy, ha, "top", ring), (dx, dy, ha, "bottom", ring)]
        offsets += [(0, -dy - 5 * pt, "center", "top", ring)]
        offsets += [(0, dy + 5 * pt, "center", "bottom", ring)]
    return offsets


def _place_labels(ax, sizes, anchors, obstacles, line_samples):
    """Offset (points), alignment and "far" flag for each label of size ``(w, h)``
    at its point ``anchors[i]`` (display pixels): inside the axes, over no marker,
    error bar, roof label or earlier label, preferably near its point and off the
    roof line. Labels go one by one, in the given order and right-most first (the
    right edge leaves those points the fewest spots); the better layout is kept."""
    pt = ax.figure.dpi / 72
    frame = tuple(ax.bbox.extents)
    layouts = []
    for order in (
        list(range(len(anchors))),
        sorted(range(len(anchors)), key=lambda k: (-anchors[k][0], k)),
    ):
        placed, chosen, total = [], [None] * len(anchors), 0.0
        for k in order:
            (width, height), (x, y) = sizes[k], anchors[k]
            best = None
            for index, (dx, dy, ha, va, ring) in enumerate(_label_offsets(pt)):
                shift = {"left": 0, "center": (width + 2) / 2, "right": width + 2}
                x0 = x + dx - shift[ha]
                y0 = y + dy - (height if va == "top" else 0)
                box = (x0, y0, x0 + width + 2, y0 + height)
                hard = sum(_overlap(box, other) for other in obstacles + placed)
                crossing = any(
                    box[0] <= sx <= box[2] and box[1] <= sy <= box[3]
                    for sx, sy in line_samples
                )
                # crossing the roof line costs as much as one ring further out
                score = (not _inside(box, frame), hard > 0, hard, index + 6 * crossing)
                if best is None or score < best[0]:
                    best = (score, box, (dx / pt, dy / pt, ha, va, ring > 0))
            placed.append(best[1])
            chosen[k] = best[2]
            outside, overlapping, area, steps = best[0]
            total += 1e6 * outside + 1e4 * overlapping + area + steps
        layouts.append((total, chosen))
    return min(layouts, key=lambda layout: layout[0])[1]


def _bandwidth_label(ax, text, roof_line, points_px, renderer):
    """Write ``text`` along the slanted roof, just above it, at the first spot (from
    the left) where it covers no point; returns the display boxes it covers."""
    xs, roof, ridge, peak = roof_line
    pt = ax.figure.dpi / 72
    to_px = ax.transData.transform
    (x0, y0), (x1, y1) = to_px((xs[0], roof[0])), to_px((ridge, peak))
    angle = math.atan2(y1 - y0, x1 - x0)
    along, normal = (
        (math.cos(angle), math.sin(angle)),
        (-math.sin(angle), math.cos(angle)),
    )
    length, height = _text_size(ax, text, renderer)
    gap = 4 * pt
    frame = ax.bbox.extents
    slanted = [i for i, x in enumerate(xs) if x < ridge]
    order = [8] + [i for i in range(4, len(xs), 4) if i != 8]
    chosen = next((i for i in order if i in slanted), 0)
    for i in (i for i in order if i in slanted):
        ax_, ay = to_px((xs[i], roof[i]))
        end = (ax_ + along[0] * length, ay + along[1] * length)
        top = (end[0] + normal[0] * (gap + height), end[1] + normal[1] * (gap + height))
        if end[0] > x1 or top[1] > frame[3] or top[0] > frame[2]:
            continue
        clear = True
        for px, py, radius in points_px:
            u = (px - ax_) * along[0] + (py - ay) * along[1]
            v = (px - ax_) * normal[0] + (py - ay) * normal[1]
            if (
                -radius <= u <= length + radius
                and gap - radius <= v <= gap + height + radius
            ):
                clear = False
                break
        if clear:
            chosen = i
            break
    ax.annotate(
        text,
        (xs[chosen], roof[chosen]),
        xytext=(normal[0] * gap / pt, normal[1] * gap / pt),
        textcoords="offset points",
        fontsize=8,
        rotation=math.degrees(angle),
        rotation_mode="anchor",
        ha="left",
        va="bottom",
    )
    ax_, ay = to_px((xs[chosen], roof[chosen]))
    boxes, half = [], 0.75 * height
    for k in range(int(length / height) + 1):
        s = (k + 0.5) * height
        cx = ax_ + along[0] * s + normal[0] * (gap + height / 2)
        cy = ay + along[1] * s + normal[1] * (gap + height / 2)
        boxes.append((cx - half, cy - half, cx + half, cy + half))
    return boxes


def roofline(
    points,
    *,
    bandwidth_gbs: float,
    peak_tflops: float,
    title: str = "Roofline",
    device=None,
    dtype=None,
    bandwidth_label: str = "measured copy bandwidth",
    peak_label: str = "datasheet peak",
    show_fraction: bool = True,
):
    """Attained TFLOP/s against arithmetic intensity (FLOP per byte), log-log, with the
    roofs.

    ``points`` maps a label to ``(intensity, tflops)``: intensity in FLOP per byte moved
    to and from memory, attained rate in TFLOP/s as a number or with its spread (a
    ``(centre, low, high)`` tuple: error bars). The roofs are ``bandwidth_gbs`` (GB/s,
    the slanted memory roof: intensity x bandwidth) and ``peak_tflops`` (TFLOP/s, the
    flat compute roof); they meet at the ridge point, ``peak / bandwidth`` FLOP per
    byte. Name each roof's source with ``bandwidth_label`` and ``peak_label`` ("measured
    copy bandwidth", "datasheet peak, bf16"). With ``show_fraction`` each point is
    labelled with its share of the roof above it (two significant figures below 10%).

    Labels are placed for readability: the bandwidth label runs along the slanted
    roof, above it, where it covers no point; each point's label goes to the first
    spot (right of the point, below then above, then left, then further out with a
    thin leader line) that stays inside the axes and covers no marker, error bar or
    other label. Points of one colour get different marker shapes, and a point drawn
    over an earlier one is a ring around it. The placement is computed for the
    figure's size: resizing the figure afterwards can misalign the slanted label.
    """
    for name, value in (("bandwidth_gbs", bandwidth_gbs), ("peak_tflops", peak_tflops)):
        if isinstance(value, bool) or not (
            isinstance(value, (int, float)) and value > 0 and math.isfinite(value)
        ):
            raise ValueError(f"{name} must be a positive, finite number, got {value!r}")
    if not isinstance(points, Mapping) or not points:
        raise ValueError(
            "points must be a non-empty mapping of label -> (intensity, tflops)"
        )
    parsed = []
    for label, point in points.items():
        if not (isinstance(point, (tuple, list)) and len(point) == 2):
            raise ValueError(
                f"points[{label!r}] must be (intensity, tflops), got {point!r}"
            )
        intensity = point[0]
        if isinstance(intensity, bool) or not (
            isinstance(intensity, (int, float))
            and intensity > 0
            and math.isfinite(intensity)
        ):
            raise ValueError(
                f"points[{label!r}]: intensity must be a positive FLOP/byte, "
                f"got {intensity!r}"
            )
        try:
            centre, low, high = spread(point[1])
        except TypeError as error:
            raise ValueError(f"points[{label!r}]: {error}") from None
        if not (centre > 0 and math.isfinite(centre)):
            raise ValueError(
                f"points[{label!r}]: TFLOP/s must be positive, finite: {centre!r}"
            )
        parsed.append((str(label), float(intensity), centre, low, high))
    ridge = peak_tflops * 1e3 / bandwidth_gbs  # FLOP per byte where the roofs meet
    intensities = [p[1] for p in parsed]
    x_low = min(min(intensities), ridge) / 4
    x_high = max(max(intensities), ridge) * 4
    fig, ax = new_figure(title, device, dtype)
    xs = [x_low * (x_high / x_low) ** (i / 100) for i in range(101)]
    roof = [min(peak_tflops, x * bandwidth_gbs / 1e3) for x in xs]
    ax.plot(xs, roof, color=COLORS["limit"], linewidth=1.5)
    ax.axvline(ridge, color=COLORS["limit"], linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    log_ticks(ax.xaxis)
    log_ticks(ax.yaxis)
    ax.set_xlim(x_low, x_high)
    lowest = min([p[2] if p[3] is None else p[3] for p in parsed] + [roof[0]])
    ax.set_ylim(lowest / 3, peak_tflops * 3)
    ax.set_xlabel(
        f"arithmetic intensity (FLOP per byte, log scale); ridge at {ridge:,.0f}"
    )
    ax.set_ylabel("attained TFLOP/s (log scale)")
    fig.tight_layout()  # labels are placed in display space, after the layout
    renderer, to_px = _renderer(fig), ax.transData.transform
    pt = fig.dpi / 72
    colors = [color_for(p[0], i) for i, p in enumerate(parsed)]
    centres = [(*to_px((p[1], p[2])), c) for p, c in zip(parsed, colors)]
    obstacles, anchors = [], []
    for (label, intensity, centre, low, high), color, (marker, hollow), (
        x,
        y,
        _,
    ) in zip(parsed, colors, _point_styles(centres), centres):
        ax.errorbar(
            [intensity],
            [centre],
            yerr=None if low is None else [[centre - low], [high - centre]],
            fmt=marker,
            color=color,
            capsize=3,
            markersize=10 if hollow else 7,
            markerfacecolor="none" if hollow else color,
            markeredgewidth=1.8 if hollow else 1.0,
        )
        radius = (5 if hollow else 3.5) * pt + 2
        obstacles.append((x - radius, y - radius, x + radius, y + radius))
        if low is not None:
            bottom, top = to_px((intensity, low))[1], to_px((intensity, high))[1]
            obstacles.append((x - 3 * pt, bottom, x + 3 * pt, top))
        anchors.append((x, y))
    peak_text = f"{peak_label}: {_rate(peak_tflops)} TFLOP/s"
    ridge_x, roof_y = to_px((ridge, peak_tflops))
    room, width = ax.bbox.x1 - ridge_x - 4 * pt, _text_size(ax, peak_text, renderer)[0]
    fits = width <= room
    left = ridge_x + 4 * pt if fits else ax.bbox.x1 - width
    lift = max(  # above any marker or error bar that reaches over the flat roof
        [4 * pt]
        + [b[3] - roof_y + 2 for b in obstacles if b[2] > left and b[0] < left + width]
    )
    peak_ann = ax.annotate(
        peak_text,
        (ridge, peak_tflops),
        xytext=(4, lift / pt) if fits else (room / pt, lift / pt),
        textcoords="offset points",
        fontsize=8,
        ha="left" if fits else "right",
    )
    obstacles.append(tuple(peak_ann.get_window_extent(renderer).extents))
    obstacles += _bandwidth_label(
        ax,
        f"{bandwidth_label}: {_rate(bandwidth_gbs)} GB/s",
        (xs, roof, ridge, peak_tflops),
        [(x, y, 3.5 * pt + 2) for x, y, _ in centres],
        renderer,
    )
    texts = []
    for label, intensity, centre, _, _ in parsed:
        share = centre / min(peak_tflops, intensity * bandwidth_gbs / 1e3)
        texts.append(
            f"{label} ({_percent(share)}% of roof)" if show_fraction else label
        )
    samples = [tuple(to_px((x, y))) for x, y in zip(xs, roof)]
    samples += [
        ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2) for a, b in zip(samples, samples[1:])
    ]
    sizes = [_text_size(ax, text, renderer) for text in texts]
    for text, p, color, (dx, dy, ha, va, far) in zip(
        texts, parsed, colors, _place_labels(ax, sizes, anchors, obstacles, samples)
    ):
        ax.annotate(
            text,
            (p[1], p[2]),
            xytext=(dx, dy),
            textcoords="offset points",
            fontsize=8,
            color=color,
            ha=ha,
            va=va,
            bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"},
            arrowprops={
                "arrowstyle": "-",
                "color": color,
                "linewidth": 0.6,
                "relpos": (
                    {"left": 0.0, "center": 0.5, "right": 1.0}[ha],
                    float(va == "top"),
                ),
            }
            if far
            else None,
        )
    return fig


apply_style()

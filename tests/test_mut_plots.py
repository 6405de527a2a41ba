"""gpubook.plots, data first (tests written against the survivors of a mutation run,
CONTRIBUTING.md "Mutation testing"): the numbers each plot draws (bar lengths, error
bars, lines, bands, roofs, break-even, the timeline's rows and bars) are read back from
the figure and compared with what the inputs imply."""

from dataclasses import dataclass

import matplotlib
import numpy as np
import pytest
import torch
from matplotlib.container import BarContainer

matplotlib.use("Agg")

from gpubook import environment, plots  # noqa: E402


@pytest.fixture(autouse=True)
def _fixed_caption(monkeypatch):
    def caption(device=None, dtype=None):
        return "CAPTION" if device is dtype is None else f"CAPTION {device} {dtype}"

    monkeypatch.setattr(plots, "caption", caption)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@dataclass
class Span:
    name: str
    start_us: float
    end_us: float
    row: str
    kind: str = "op"


@dataclass
class FakeTrace:
    cpu: list
    gpu: list
    calls: tuple = ()


@dataclass
class Estimate:
    estimate: float
    low: float
    high: float


@dataclass
class Spread:
    median: float
    q25: float
    q75: float


def _bar_container(ax):
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    return bars


def _texts(ax):
    return [t.get_text() for t in ax.texts]


# --- Values with spread ---------------------------------------------------------------


def test_spread_of_each_kind_of_value():
    assert plots.spread(3) == (3.0, None, None) and isinstance(
        plots.spread(3)[0], float
    )
    assert plots.spread(Estimate(2, 1, 3)) == (2.0, 1.0, 3.0)
    assert plots.spread(Spread(2, 1, 4)) == (2.0, 1.0, 4.0)
    assert plots.spread([2, 2, 2]) == (2.0, 2.0, 2.0)  # bounds may equal the centre
    with pytest.raises(
        ValueError, match=r"needs low <= centre <= high, got \(1, 2, 3\)"
    ):
        plots.spread((1, 2, 3))
    with pytest.raises(ValueError, match="low <= centre"):
        plots.spread((3, 1, 2))
    with pytest.raises(TypeError, match="not bool"):
        plots.spread(False)
    with pytest.raises(TypeError, match="got tuple"):
        plots.spread((1, 2))
    with pytest.raises(TypeError, match="got str"):
        plots.spread("1")

    class OnlyEstimate:
        estimate = 1.0

    with pytest.raises(TypeError, match="got OnlyEstimate"):
        plots.spread(OnlyEstimate())


def test_error_bars_are_distances_below_and_above():
    assert plots._error_bars([1.0, 2.0]) == ([1.0, 2.0], None)
    centres, errors = plots._error_bars([Estimate(2.0, 1.5, 3.0), 4.0, (1.0, 0.5, 1.0)])
    assert centres == [2.0, 4.0, 1.0]
    assert errors == [[0.5, 0.0, 0.5], [1.0, 0.0, 0.0]]


def test_apply_style_readable_sizes_light_grid_no_top_or_right_spine():
    matplotlib.rcdefaults()
    plots.apply_style()
    params = matplotlib.rcParams
    assert tuple(params["figure.figsize"]) == (7.5, 4.2)
    assert params["figure.dpi"] == params["savefig.dpi"] == 100
    assert params["axes.grid"] is True and params["grid.alpha"] == 0.3
    assert params["axes.spines.top"] is False and params["axes.spines.right"] is False
    assert params["axes.titlesize"] == 11 and params["axes.labelsize"] == 10
    assert params["legend.fontsize"] == 9 and params["legend.frameon"] is False


@pytest.mark.parametrize(
    "label, key",
    [
        ("compiled (reduce-overhead)", "reduce-overhead"),
        ("CUDA graph replay", "cuda graph"),
        ("compiled, max-autotune", "max-autotune"),
        ("eager NumPy", "eager"),
        ("compiled Python", "compiled"),
        ("NumPy", "numpy"),
        ("pure python", "python"),
        ("default mode", "default"),
        ("CPU", "cpu"),
        ("gpu", "gpu"),
    ],
)
def test_color_for_takes_the_first_key_in_priority_order(label, key):
    assert plots.color_for(label) == plots.COLORS[key]


def test_color_for_unknown_labels_cycles_the_fallbacks():
    assert plots.color_for("mystery") == plots._FALLBACK[0]
    assert plots.color_for("mystery", 1) == plots._FALLBACK[1]
    assert plots.color_for("mystery", len(plots._FALLBACK) + 2) == plots._FALLBACK[2]


def test_caption_names_gpu_or_cpu_dtype_and_torch(monkeypatch):
    monkeypatch.undo()  # the real caption
    monkeypatch.setattr(torch, "__version__", "2.99.1+cu130")
    monkeypatch.setattr(
        torch.cuda, "get_device_name", lambda device: f"GPU of {device}"
    )
    assert plots.caption("cuda", torch.float16) == (
        "GPU of cuda · float16 · torch 2.99.1"
    )
    monkeypatch.setattr(environment, "collect", lambda: {"cpu": "Some CPU"})
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    assert plots.caption("cpu") == "CPU (Some CPU, 4 threads) · torch 2.99.1"
    assert plots.caption("cpu", "bfloat16").endswith("· bfloat16 · torch 2.99.1")
    monkeypatch.setattr(plots, "pick_device", lambda: torch.device("cuda"))
    assert plots.caption() == "GPU of cuda · torch 2.99.1"


def test_new_figure_titles_the_axes_over_the_caption():
    fig, ax = plots.new_figure("Title", figsize=(3.0, 2.0))
    assert ax.get_title(loc="left") == "Title\nCAPTION"
    assert tuple(fig.get_size_inches()) == (3.0, 2.0)
    for bad in ("", None):
        with pytest.raises(ValueError, match="title must be a non-empty string"):
            plots.new_figure(bad)


def test_ratio_ticks_label_one_two_five_as_times():
    _, ax = plots.new_figure("t")
    ax.set_xscale("log")
    plots.ratio_ticks(ax.xaxis)
    formatter = ax.xaxis.get_major_formatter()
    assert formatter(2.0, 0) == "2x" and formatter(0.5, 0) == "0.5x"
    ticks = ax.xaxis.get_major_locator().tick_values(1, 100)
    assert {1, 2, 5, 10, 20, 50, 100} <= set(np.round(ticks, 9))
    assert 3 not in set(np.round(ticks, 9))
    assert ax.xaxis.get_minor_formatter()(3.0, 0) == ""


# --- Speedups, sizes, cumulative time -------------------------------------------------


def test_speedup_bars_draw_the_values_and_their_intervals():
    fig = plots.speedup_bars(
        ["eager", "compiled", "other"],
        [1.0, Estimate(3.0, 2.5, 3.5), (0.5, 0.25, 1.0)],
        "demo",
        baseline="numpy",
    )
    ax = fig.axes[0]
    assert [p.get_width() for p in ax.patches] == [1.0, 3.0, 0.5]
    assert [p.get_y() + p.get_height() / 2 for p in ax.patches] == [0, 1, 2]
    colors = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    assert colors == [
        plots.COLORS["eager"],
        plots.COLORS["compiled"],
        plots._FALLBACK[2],
    ]
    bars = _bar_container(ax).errorbar.lines[2][0].get_segments()
    assert [tuple(s[:, 0]) for s in bars] == [(1.0, 1.0), (2.5, 3.5), (0.25, 1.0)]
    assert _texts(ax) == ["1x", "3x", "0.5x"]
    assert [t.xy for t in ax.texts] == [(1.0, 0), (3.5, 1), (1.0, 2)]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "eager",
        "compiled",
        "other",
    ]
    assert ax.yaxis_inverted() and ax.get_xscale() == "log"
    assert ax.get_xlabel() == (
        "speedup over numpy (log scale; right of the line is faster)"
    )
    assert [tuple(line.get_xdata()) for line in ax.lines[-1:]] == [(1.0, 1.0)]
    assert ax.get_title(loc="left") == "demo\nCAPTION"
    assert tuple(fig.get_size_inches()) == (7.5, 2.85)  # 0.45 per bar + 1.5
    assert tuple(plots.speedup_bars(["a"], [2.0], "t").get_size_inches()) == (7.5, 2.5)
    ax = plots.speedup_bars(["a"], [2.0], "t", device="cpu", dtype="float32").axes[0]
    assert ax.get_title(loc="left") == "t\nCAPTION cpu float32"
    assert ax.get_xlabel().startswith("speedup over eager (log scale")


def test_speedup_bars_without_spread_label_the_bar_ends():
    ax = plots.speedup_bars(["a", "b"], [2.0, 4.0], "t").axes[0]
    assert [t.xy for t in ax.texts] == [(2.0, 0), (4.0, 1)]
    assert _bar_container(ax).errorbar is None


@pytest.mark.parametrize(
    "labels, speedups, message",
    [
        ([], [], "non-empty"),
        (["a", "b"], [1.0], "same length"),
        (["a"], [0.0], "positive, finite"),
        (["a"], [float("inf")], "positive, finite"),
        (["a"], [-2.0], "positive, finite"),
        (["a"], [(1, 2, 3)], "low <= centre <= high"),
        (["a"], [object()], "speedups: a measured value must be"),
    ],
)
def test_speedup_bars_reject_bad_values(labels, speedups, message):
    with pytest.raises(ValueError, match=message):
        plots.speedup_bars(labels, speedups, "t")


def test_versus_size_draws_lines_bands_and_the_limit():
    fig = plots.versus_size(
        [1, 10, 100],
        {"eager": [1.0, (2.0, 1.5, 3.0), 4.0], "compiled": [0.5, 1.0, 2.0]},
        "demo",
        "GB/s",
        xlabel="bytes",
        limit=3000,
    )
    ax = fig.axes[0]
    eager, compiled = ax.lines[:2]
    assert eager.get_label() == "eager" and compiled.get_label() == "compiled"
    assert list(eager.get_ydata()) == [1.0, 2.0, 4.0]
    assert list(compiled.get_xdata()) == [1, 10, 100]
    assert matplotlib.colors.to_hex(eager.get_color()) == plots.COLORS["eager"]
    (band,) = ax.collections  # only the series with spread has a band
    vertices = band.get_paths()[0].vertices
    points = {(float(x), float(y)) for x, y in vertices}
    assert {(10.0, 1.5), (10.0, 3.0), (1.0, 1.0), (100.0, 4.0)} <= points
    limit = ax.lines[2]
    assert tuple(limit.get_ydata()) == (3000, 3000) and limit.get_linestyle() == "--"
    assert _texts(ax) == ["limit 3e+03"] and ax.texts[0].xy == (1, 3000)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("bytes", "GB/s")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["eager", "compiled"]
    ax = plots.versus_size([1, 2], {"a": [1.0, 2.0]}, "t", "s", logy=False).axes[0]
    assert ax.get_yscale() == "linear" and not ax.collections and len(ax.lines) == 1
    assert ax.get_xlabel() == "size"
    ax = plots.versus_size([1], {"a": [1.0]}, "t", "s", device="d", dtype="x").axes[0]
    assert ax.get_title(loc="left") == "t\nCAPTION d x"
    named = plots.versus_size(
        [1, 2], {"a": [1.0, 2.0]}, "t", "s", limit=5.0, limit_label="peak"
    )
    assert _texts(named.axes[0]) == ["peak"]
    with pytest.raises(ValueError, match="series must hold"):
        plots.versus_size([1], {}, "t", "s")
    with pytest.raises(ValueError, match="series 'a' has 1 values for 2 sizes"):
        plots.versus_size([1, 2], {"a": [1.0]}, "t", "s")


def test_cumulative_time_lines_cross_at_the_break_even():
    # 10 s first call, then 1 s instead of 2 s per call: break-even at 9 calls
    fig = plots.cumulative_time(2.0, 1.0, 10.0, "demo")
    ax = fig.axes[0]
    eager, compiled, even = ax.lines
    xs = eager.get_xdata()
    assert len(xs) == 200 and xs[0] == 1 and xs[-1] == pytest.approx(27)  # 3 x 9
    assert np.allclose(eager.get_ydata(), 2.0 * np.asarray(xs))
    assert np.allclose(compiled.get_ydata(), 10.0 + (np.asarray(xs) - 1) * 1.0)
    assert tuple(even.get_xdata()) == (9.0, 9.0) and even.get_linestyle() == "--"
    assert _texts(ax) == ["break-even: 9 calls"] and ax.texts[0].xy == (9.0, 0)
    assert eager.get_label() == "eager"
    assert compiled.get_label() == "compiled (first call includes compiling)"
    assert ax.get_xlabel() == "number of calls"
    assert ax.get_ylabel() == "cumulative time (s)"
    assert not ax.collections
    assert matplotlib.colors.to_hex(eager.get_color()) == plots.COLORS["eager"]
    ax = plots.cumulative_time(2.0, 0.0, 1.0, "t", device="d", dtype="x").axes[0]
    assert ax.get_title(loc="left") == "t\nCAPTION d x"  # a free call is allowed
    for args, name in (((-1.0, 1.0, 1.0), "eager"), ((1.0, -1.0, 1.0), "compiled")):
        with pytest.raises(ValueError, match=f"^{name}_seconds must"):
            plots.cumulative_time(*args, "t")


def test_cumulative_time_default_and_given_call_counts():
    def last_x(*args, **kwargs):
        return (
            plots.cumulative_time(*args, "t", **kwargs).axes[0].lines[0].get_xdata()[-1]
        )

    assert last_x(2.0, 1.0, 2.0) == pytest.approx(10)  # at least 10 calls
    assert last_x(1.0, 2.0, 1.0) == pytest.approx(1000)  # never repays: 1000 calls
    assert last_x(1.0, 1e-9, 1e7) == pytest.approx(1e7, rel=1e-12)  # at most 1e7
    assert last_x(2.0, 1.0, 10.0, calls=5) == pytest.approx(5)
    assert last_x(2.0, 1.0, 10.0, calls=2) == pytest.approx(2)
    # a break-even beyond the plotted calls is not marked
    ax = plots.cumulative_time(2.0, 1.0, 10.0, "t", calls=5).axes[0]
    assert len(ax.lines) == 2 and not ax.texts
    ax = plots.cumulative_time(1.0, 2.0, 1.0, "t").axes[0]
    assert len(ax.lines) == 2 and not ax.texts
    ax = plots.cumulative_time(2.0, 1.0, 10.0, "t", calls=9).axes[0]
    assert len(ax.lines) == 3
    for calls in (1, 2.5, "10"):
        with pytest.raises(ValueError, match="calls must be an int of at least 2"):
            plots.cumulative_time(2.0, 1.0, 10.0, "t", calls=calls)


def test_cumulative_time_band_surrounds_its_line_with_a_free_first_call():
    # first call 0 s (allowed): the compiled line is (x - 1) x median; its band must be
    # (x - 1) x q25 to (x - 1) x q75 around it, not x x q25 to x x q75 beside it
    ax = plots.cumulative_time(
        Spread(2.0, 1.5, 3.0), Spread(1.0, 0.5, 1.5), 0.0, "t", calls=11
    ).axes[0]
    line = ax.lines[1]
    band = ax.collections[1].get_paths()[0].vertices
    assert line.get_ydata()[0] == 0.0
    assert {(1.0, 0.0), (11.0, 5.0), (11.0, 15.0)} <= {
        (float(x), float(y)) for x, y in band
    }


def test_cumulative_time_bands_follow_the_spread():
    ax = plots.cumulative_time(
        Spread(2.0, 1.5, 3.0), Spread(1.0, 0.5, 1.5), 10.0, "t", calls=11
    ).axes[0]
    eager_band, compiled_band = ax.collections
    eager = {(float(x), float(y)) for x, y in eager_band.get_paths()[0].vertices}
    compiled = {(float(x), float(y)) for x, y in compiled_band.get_paths()[0].vertices}
    assert {(1.0, 1.5), (1.0, 3.0), (11.0, 16.5), (11.0, 33.0)} <= eager
    assert {(1.0, 10.0), (11.0, 15.0), (11.0, 25.0)} <= compiled
    with pytest.raises(ValueError, match="eager_seconds"):
        plots.cumulative_time(-1.0, 1.0, 1.0, "t")
    with pytest.raises(ValueError, match="compiled_seconds"):
        plots.cumulative_time(1.0, -1.0, 1.0, "t")


# --- Timelines ------------------------------------------------------------------------


def _bars(ax):
    """(y centre, [(start, width), ...], facecolor) per broken_barh collection."""
    out = []
    for collection in ax.collections:
        boxes = [p.get_extents() for p in collection.get_paths()]
        y = round((boxes[0].y0 + boxes[0].y1) / 2, 6)
        out.append(
            (
                y,
                [(round(b.x0, 6), round(b.x1 - b.x0, 6)) for b in boxes],
                collection,
            )
        )
    return out


def test_timeline_rows_bars_and_notes():
    cpu = [
        Span("aten::add", 0, 40, "thread 1"),
        Span("cudaLaunchKernel", 10, 12, "thread 1", "launch"),
        Span("cudaDeviceSynchronize", 50, 90, "thread 1", "sync"),
        Span("python", 0, 5, "thread 2"),
        Span("tiny", 0, 1, "thread 3"),
    ]
    gpu = [
        Span("a_long_kernel_name", 20, 60, "stream 8", "kernel"),
        Span("k2", 70, 80, "stream 7", "kernel"),
        Span("k3", 75, 100, "stream 7", "kernel"),
    ]
    calls = (Span("gpubook call 0", 0, 50, "thread 1"), Span("c1", 50, 100, "t"))
    fig = plots.timeline({"compiled": FakeTrace(cpu, gpu, calls)}, "demo")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "CPU thread 1",
        "CPU thread 2",
        "GPU stream 7",
        "GPU stream 8",
    ]
    assert ax.get_ylim() == (3.5, -0.5)
    assert ax.get_title(loc="left") == "demo\nCAPTION"
    assert ax.get_ylabel() == "compiled"
    assert (
        matplotlib.colors.to_hex(ax.yaxis.label.get_color()) == plots.COLORS["compiled"]
    )
    bars = {(y, tuple(b)): c for y, b, c in _bars(ax)}
    assert set(bars) == {
        (0.0, ((0.0, 40.0),)),  # operators
        (0.0, ((50.0, 40.0),)),  # synchronisation
        (0.0, ((10.0, 2.0),)),  # launch
        (1.0, ((0.0, 5.0),)),
        (2.0, ((70.0, 10.0), (75.0, 25.0))),
        (3.0, ((20.0, 40.0),)),
    }
    launch = bars[(0.0, ((10.0, 2.0),))]
    assert matplotlib.colors.to_hex(launch.get_facecolor()[0]) == "#252525"
    sync = bars[(0.0, ((50.0, 40.0),))]
    assert sync.get_hatch() == "////" and len(sync.get_facecolor()) == 0
    kernel = bars[(3.0, ((20.0, 40.0),))]
    assert (
        matplotlib.colors.to_hex(kernel.get_facecolor()[0]) == plots.COLORS["compiled"]
    )
    assert kernel.get_alpha() == 0.9
    # the widest kernel of each stream is named when it is wider than 8% of the trace
    labels = {t.get_text(): t.xy for t in ax.texts}
    assert labels["k3"] == (87.5, 2) and labels["a_long_kernel_name"] == (40.0, 3)
    assert labels["3 GPU spans, busy 70 of 100 µs"] == (1.0, 1.0)
    starts = [tuple(line.get_xdata()) for line in ax.lines]
    assert starts == [(0, 0), (50, 50)]
    assert ax.get_xlim() == pytest.approx((0, 101))
    assert ax.get_xlabel() == (
        "time (µs; dotted lines: start of each call). Host rows: light = Python and "
        "operators,\ndark = kernel launches, hatched = waiting for the GPU"
    )


def test_timeline_options_and_groups():
    cpu = [Span("op", 0, 100, "thread 1"), Span("op", 0, 10, "thread 2")]
    gpu = [Span("k", 0, 2, "stream 7", "kernel"), Span("short", 50, 51, "s", "k")]
    fig = plots.timeline(
        {"eager": FakeTrace(cpu, gpu[:1]), "no gpu": FakeTrace(cpu[1:], [])},
        "demo",
        max_cpu_rows=1,
        label_kernels=False,
    )
    first, second = fig.axes
    assert [t.get_text() for t in first.get_yticklabels()] == ["CPU", "GPU"]
    assert [t.get_text() for t in second.get_yticklabels()] == ["CPU"]
    assert _texts(first) == ["1 GPU spans, busy 2 of 100 µs"]
    assert _texts(second) == ["no GPU work"]
    assert second.get_ylabel() == "no gpu" and first.get_title(loc="left")
    assert not second.get_title(loc="left")
    assert "time (µs" in second.get_xlabel() and first.get_xlabel() == ""
    assert tuple(fig.get_size_inches()) == (9.0, 3.45)  # 1 + 2 x 0.55 + 3 x 0.45
    # a zero-length span still shows: at least 2e-4 of the whole trace wide
    (_, widths, _), *_ = [b for b in _bars(second) if b[0] == 0.0]
    assert widths == [(0.0, 10.0)]
    tiny = FakeTrace([Span("op", 0, 0, "thread 1"), Span("op", 0, 1000, "t1")], [])
    bars = _bars(plots.timeline({"a": tiny}, "t").axes[0])
    assert sorted(w for _, ws, _ in bars for w in ws) == [(0.0, 0.2), (0.0, 1000.0)]
    # with label_kernels the widest kernel is named unless it is short
    shown = plots.timeline({"eager": FakeTrace(cpu, gpu)}, "t").axes[0]
    assert "k" not in _texts(shown) and "short" not in _texts(shown)


def test_timeline_colours_unknown_variants_apart_and_names_the_device():
    trace = FakeTrace([Span("op", 0, 1, "thread 1")], [])
    fig = plots.timeline({"x": trace, "y": trace}, "t", device="d", dtype="f")
    colors = [matplotlib.colors.to_hex(ax.yaxis.label.get_color()) for ax in fig.axes]
    assert colors == plots._FALLBACK[:2]
    assert fig.axes[0].get_title(loc="left") == "t\nCAPTION d f"


def test_timeline_busiest_threads_and_bad_input():
    cpu = [
        Span("a", 0, 10, "thread 1"),
        Span("b", 0, 30, "thread 2"),
        Span("c", 0, 20, "thread 3"),
    ]
    ax = plots.timeline({"x": FakeTrace(cpu, [])}, "t", max_cpu_rows=2).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "CPU thread 2",
        "CPU thread 3",
    ]
    assert ax.get_ylim() == (1.5, -0.5)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="max_cpu_rows must be a positive int"):
            plots.timeline({"x": FakeTrace(cpu, [])}, "t", max_cpu_rows=bad)
    with pytest.raises(ValueError, match="non-empty mapping"):
        plots.timeline([("x", FakeTrace(cpu, []))], "t")
    with pytest.raises(ValueError, match=r"traces\['x'\] must have .cpu and .gpu"):
        plots.timeline({"x": object()}, "t")
    with pytest.raises(ValueError, match=r"traces\['x'\] holds no spans"):
        plots.timeline({"x": FakeTrace([], [])}, "t")
    for bad in (Span("s", float("nan"), 1, "r"), Span("s", 0, float("inf"), "r")):
        with pytest.raises(ValueError, match="bad times"):
            plots.timeline({"x": FakeTrace([bad], [])}, "t")
    assert plots._spans_by_row([Span("z", 1, 1, 7)]) == {"7": [Span("z", 1, 1, 7)]}


def test_busy_time_and_span_styles():
    spans = [Span("a", 0, 10, "s"), Span("b", 2, 4, "s"), Span("c", 8, 12, "s")]
    assert plots._busy_us(spans) == 12
    assert plots._busy_us([]) == 0.0
    assert plots._busy_us([Span("a", -5, -1, "s")]) == 4
    launch, sync, op = (
        Span("l", 0, 1, "r", "launch"),
        Span("s", 0, 1, "r", "sync"),
        (Span("o", 0, 1, "r", "op")),
    )
    bare = Span("b", 0, 1, "r")
    del_kind = type("NoKind", (), {"start_us": 0, "end_us": 1})()
    styles = plots._span_styles([launch, sync, op, bare, del_kind], "cpu", "#123456")
    assert [chosen for _, chosen in styles] == [[op, bare, del_kind], [sync], [launch]]
    assert styles[0][0] == {"facecolors": "#7f7f7f", "alpha": 0.3}
    assert styles[1][0] == {
        "facecolors": "none",
        "edgecolor": "#7f7f7f",
        "hatch": "////",
    }
    assert styles[2][0] == {"facecolors": "#252525", "alpha": 0.9}
    assert plots._span_styles([launch], "cpu", "#123456") == [
        ({"facecolors": "#252525", "alpha": 0.9}, [launch])
    ]
    assert plots._span_styles([launch], "gpu", "#123456") == [
        ({"facecolors": "#123456", "alpha": 0.9}, [launch])
    ]


# --- Roofline -------------------------------------------------------------------------


def test_roofline_roofs_ridge_points_and_shares():
    fig = plots.roofline(
        {"memory-bound": (1.0, (1.5, 1.0, 2.0)), "matmul": (1000.0, 500.0)},
        bandwidth_gbs=2000,
        peak_tflops=1000,
        title="roof",
        bandwidth_label="copy",
        peak_label="peak",
    )
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "roof\nCAPTION"
    roof, ridge = ax.lines[:2]
    xs, ys = np.asarray(roof.get_xdata()), np.asarray(roof.get_ydata())
    # ridge at 1000 TFLOP/s / 2000 GB/s = 500 FLOP/byte; x from 1/4 to 4000
    assert len(xs) == 101 and xs[0] == pytest.approx(0.25) and xs[-1] == 4000
    assert np.allclose(ys, np.minimum(1000, xs * 2000 / 1e3))
    assert tuple(ridge.get_xdata()) == (500, 500)
    texts = {t.get_text(): t for t in ax.texts}
    assert texts["copy: 2,000 GB/s"].xy == (xs[8], ys[8])
    assert texts["peak: 1,000 TFLOP/s"].xy == (500, 1000)
    # 1.5 of 1 x 2000 / 1000 = 2 TFLOP/s: 75%; 500 of the flat roof: 50%
    assert texts["memory-bound (75% of roof)"].xy == (1.0, 1.5)
    assert texts["matmul (50% of roof)"].xy == (1000.0, 500.0)
    assert ax.get_xlim() == pytest.approx((0.25, 4000))
    assert ax.get_ylim() == pytest.approx((0.5 / 3, 3000))  # the roof's foot is lowest
    assert ax.get_xlabel() == (
        "arithmetic intensity (FLOP per byte, log scale); ridge at 500"
    )
    assert ax.get_ylabel() == "attained TFLOP/s (log scale)"
    markers = [line for line in ax.lines[2:] if line.get_marker() == "o"]
    assert [(m.get_xdata()[0], m.get_ydata()[0]) for m in markers] == [
        (1.0, 1.5),
        (1000.0, 500.0),
    ]
    (segments,) = [c.get_segments() for c in ax.collections]
    assert [tuple(s[:, 1]) for s in segments] == [(1.0, 2.0)]


def test_roofline_limits_and_plain_labels():
    ax = plots.roofline(
        {"low": (0.01, (0.001, 0.0005, 0.002))},
        bandwidth_gbs=1000,
        peak_tflops=10,
        show_fraction=False,
    ).axes[0]
    # ridge at 10 FLOP/byte; x from 0.01 / 4 to 10 x 4; y from the lowest bound / 3
    assert ax.get_xlim() == pytest.approx((0.0025, 40))
    assert ax.get_ylim() == pytest.approx((0.0005 / 3, 30))
    assert "low" in _texts(ax)
    assert "measured copy bandwidth: 1,000 GB/s" in _texts(ax)
    assert "datasheet peak: 10 TFLOP/s" in _texts(ax)
    ax = plots.roofline({"p": [20.0, 1.0]}, bandwidth_gbs=1000, peak_tflops=10).axes[0]
    assert ax.get_xlim() == pytest.approx((2.5, 80))
    assert "p (10% of roof)" in _texts(ax)
    assert ax.get_title(loc="left") == "Roofline\nCAPTION"
    # 0.25 of a 2 TFLOP/s roof: 12.5%, shown as 12% (round half to even)
    ax = plots.roofline({"q": (1.0, 0.25)}, bandwidth_gbs=2000, peak_tflops=10).axes[0]
    assert "q (12% of roof)" in _texts(ax)
    ax = plots.roofline(
        {"q": (1.0, 0.25)}, bandwidth_gbs=2000, peak_tflops=10, device="d", dtype="x"
    ).axes[0]
    assert ax.get_title(loc="left") == "Roofline\nCAPTION d x"


@pytest.mark.parametrize(
    "points, options, message",
    [
        ({"a": (1, 1)}, {"bandwidth_gbs": True}, "bandwidth_gbs must be a positive"),
        ({"a": (1, 1)}, {"peak_tflops": -1}, "peak_tflops must be a positive"),
        ({"a": (1, 1)}, {"peak_tflops": float("inf")}, "peak_tflops"),
        ({"a": (1, 1)}, {"bandwidth_gbs": "1"}, "bandwidth_gbs"),
        ([("a", (1, 1))], {}, "points must be a non-empty mapping"),
        ({"a": (1, 1, 1)}, {}, r"points\['a'\] must be \(intensity, tflops\)"),
        ({"a": 1}, {}, r"must be \(intensity, tflops\)"),
        ({"a": (True, 1)}, {}, "intensity must be a positive FLOP/byte"),
        ({"a": (float("inf"), 1)}, {}, "intensity"),
        ({"a": (0, 1)}, {}, "intensity"),
        ({"a": ("1", 1)}, {}, "intensity"),
        ({"a": (1, float("inf"))}, {}, "TFLOP/s must be positive, finite"),
        ({"a": (1, -1.0)}, {}, "TFLOP/s must be positive"),
    ],
)
def test_roofline_rejects(points, options, message):
    kwargs = {"bandwidth_gbs": 1000, "peak_tflops": 10, **options}
    with pytest.raises(ValueError, match=message):
        plots.roofline(points, **kwargs)

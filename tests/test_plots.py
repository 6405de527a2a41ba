"""Tests for the plot helpers added for chapter 3: spread, timeline, roofline."""

from dataclasses import dataclass, field

import matplotlib
import pytest

matplotlib.use("Agg")

from gpubook import plots  # noqa: E402


@dataclass
class Span:
    name: str
    start_us: float
    end_us: float
    row: str


@dataclass
class FakeTrace:
    """The shape of gpubook.trace's result: cpu and gpu span lists."""

    cpu: list = field(default_factory=list)
    gpu: list = field(default_factory=list)


@dataclass
class FakeTiming:
    median: float
    q25: float
    q75: float


@dataclass
class FakeRatio:
    estimate: float
    low: float
    high: float


def eager_trace():
    cpu = [Span(f"aten::op{i}", 10 * i, 10 * i + 8, "thread 1") for i in range(5)]
    cpu += [
        Span("cudaLaunchKernel", 10 * i + 5, 10 * i + 7, "thread 1") for i in range(5)
    ]
    gpu = [Span(f"kernel{i}", 10 * i + 9, 10 * i + 11, "stream 7") for i in range(5)]
    return FakeTrace(cpu=cpu, gpu=gpu)


def graph_trace():
    cpu = [Span("cudaGraphLaunch", 0, 4, "thread 1")]
    gpu = [Span(f"kernel{i}", 5 + 2 * i, 7 + 2 * i, "stream 7") for i in range(5)]
    return FakeTrace(cpu=cpu, gpu=gpu)


def test_spread_accepts_numbers_timings_ratios_tuples():
    assert plots.spread(2.0) == (2.0, None, None)
    assert plots.spread(FakeTiming(1.0, 0.9, 1.2)) == (1.0, 0.9, 1.2)
    assert plots.spread(FakeRatio(3.0, 2.5, 3.5)) == (3.0, 2.5, 3.5)
    assert plots.spread((1, 0.5, 2)) == (1.0, 0.5, 2.0)
    with pytest.raises(ValueError, match="low <= centre <= high"):
        plots.spread((1, 2, 3))
    with pytest.raises(TypeError):
        plots.spread("fast")
    with pytest.raises(TypeError):
        plots.spread(True)


def test_existing_plots_take_spread_and_stay_backward_compatible():
    fig = plots.speedup_bars(
        ["eager", "compiled"], [1.0, FakeRatio(3.0, 2.5, 3.5)], "demo"
    )
    assert fig.axes[0].containers  # the bars (and their error bars) were drawn
    fig = plots.speedup_bars(["eager", "compiled"], [1.0, 3.0], "demo")
    with pytest.raises(ValueError, match="speedups"):
        plots.speedup_bars(["a"], ["fast"], "demo")
    fig = plots.versus_size(
        [1, 10], {"eager": [(1.0, 0.8, 1.1), FakeTiming(2.0, 1.5, 2.5)]}, "demo", "s"
    )
    assert fig.axes[0].collections  # the band
    fig = plots.cumulative_time(
        FakeTiming(1.0, 0.9, 1.1), FakeTiming(0.5, 0.4, 0.6), 10.0, "demo"
    )
    assert len(fig.axes[0].collections) == 2


def test_timeline_draws_one_group_per_variant_cpu_above_gpu():
    fig = plots.timeline({"eager": eager_trace(), "CUDA graph": graph_trace()}, "demo")
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["CPU", "GPU"]
    assert fig.axes[0].get_shared_x_axes().joined(fig.axes[0], fig.axes[1])
    assert "µs" in fig.axes[1].get_xlabel()
    notes = [t.get_text() for t in fig.axes[1].texts]
    assert any("busy 10 of" in note for note in notes)


def test_timeline_rejects_bad_input():
    with pytest.raises(ValueError, match="traces"):
        plots.timeline({}, "demo")
    with pytest.raises(ValueError, match="cpu"):
        plots.timeline({"eager": object()}, "demo")
    with pytest.raises(ValueError, match="no spans"):
        plots.timeline({"eager": FakeTrace()}, "demo")
    bad = FakeTrace(gpu=[Span("k", 5.0, 1.0, "s")])
    with pytest.raises(ValueError, match="bad times"):
        plots.timeline({"eager": bad}, "demo")
    with pytest.raises(ValueError, match="max_cpu_rows"):
        plots.timeline({"eager": eager_trace()}, "demo", max_cpu_rows=0)


def test_busy_time_counts_overlaps_once():
    spans = [Span("a", 0, 10, "s"), Span("b", 5, 15, "s"), Span("c", 20, 25, "s")]
    assert plots._busy_us(spans) == 20


def test_roofline_draws_roofs_and_points():
    fig = plots.roofline(
        {"chain (compiled)": (1.25, 3.0), "matmul": (1000, (600, 550, 650))},
        bandwidth_gbs=3000,
        peak_tflops=989,
        peak_label="datasheet peak, bf16",
    )
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    texts = " ".join(t.get_text() for t in ax.texts)
    assert (
        "measured copy bandwidth: 3,000 GB/s" in texts
        and "datasheet peak, bf16" in texts
    )
    assert "80% of roof" in texts  # 3.0 of 1.25 * 3000 / 1000 = 3.75 TFLOP/s
    assert "ridge at 330" in ax.get_xlabel()


def test_roofline_rejects_bad_input():
    with pytest.raises(ValueError, match="bandwidth_gbs"):
        plots.roofline({"a": (1, 1)}, bandwidth_gbs=0, peak_tflops=1)
    with pytest.raises(ValueError, match="peak_tflops"):
        plots.roofline({"a": (1, 1)}, bandwidth_gbs=1, peak_tflops=float("nan"))
    with pytest.raises(ValueError, match="points"):
        plots.roofline({}, bandwidth_gbs=1, peak_tflops=1)
    with pytest.raises(ValueError, match="intensity"):
        plots.roofline({"a": (-1, 1)}, bandwidth_gbs=1, peak_tflops=1)
    with pytest.raises(ValueError, match="TFLOP/s"):
        plots.roofline({"a": (1, 0)}, bandwidth_gbs=1, peak_tflops=1)
    with pytest.raises(ValueError, match=r"points\['a'\]"):
        plots.roofline({"a": (1, "x")}, bandwidth_gbs=1, peak_tflops=1)


def test_cumulative_time_names_the_callers_argument():
    import pytest

    from gpubook import plots

    with pytest.raises(ValueError, match="first_call_seconds"):
        plots.cumulative_time(1e-3, 1e-4, -1.0, "t")

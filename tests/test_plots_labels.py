"""gpubook.plots readability (issues 13, 14, 16, 17): plain log-axis tick labels and a
roofline whose labels do not sit on top of each other."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from gpubook import plots  # noqa: E402


@pytest.fixture(autouse=True)
def _fixed_caption(monkeypatch):
    monkeypatch.setattr(plots, "caption", lambda device=None, dtype=None: "CAPTION")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


# --- Plain numbers on log axes --------------------------------------------------------


@pytest.mark.parametrize(
    "value, text",
    [
        (60, "60"),
        (300, "300"),
        (40.0, "40"),
        (1, "1"),
        (2.5, "2.5"),
        (0.5, "0.5"),
        (0.05, "0.05"),
        (0.0001, "0.0001"),
        (0.00015, "0.00015"),
        (1000, "1k"),
        (2000, "2k"),
        (10_000, "10k"),
        (100_000, "100k"),
        (1.5e6, "1.5M"),
        (1e9, "1G"),
        (2e12, "2T"),
        (0, "0"),
        (-20, "-20"),
    ],
)
def test_plain_number_never_prints_an_exponent(value, text):
    assert plots.plain_number(value) == text


def _labels(ax, axis="y"):
    fig = ax.figure
    fig.canvas.draw()
    ticks = (
        ax.get_yticklabels(which="both")
        if axis == "y"
        else ax.get_xticklabels(which="both")
    )
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    return [
        t.get_text()
        for t in ticks
        if t.get_text() and low <= t.get_position()[axis == "y"] <= high
    ]


def test_versus_size_log_axes_read_as_plain_numbers():
    fig = plots.versus_size(
        [256, 1024, 2048],
        {"eager": [52.0, 55.0, 54.0], "compiled": [43.0, 45.0, 85.0]},
        "t",
        "time per call (µs)",
    )
    ax = fig.axes[0]
    ys, xs = _labels(ax, "y"), _labels(ax, "x")
    for text in ys + xs:
        assert "10^" not in text and "times" not in text and "$" not in text, text
    # a range shorter than 3x labels every minor tick
    assert {"50", "60", "70", "80"} <= set(ys)
    assert {"300", "500", "1k", "2k"} <= set(xs)


def test_log_ticks_thin_out_over_many_decades():
    locator = plots._PlainLogLocator(base=10)
    short = set(np.round(locator.tick_values(1, 100), 9))
    assert {1, 2, 5, 10, 20, 50, 100} <= short
    wide = set(np.round(locator.tick_values(1e3, 1e8), 3))
    assert {1e3, 1e4, 1e5, 1e6, 1e7, 1e8} <= wide and 2e4 not in wide


def test_minor_labels_only_on_short_ranges():
    _, ax = plots.new_figure("t")
    ax.set_yscale("log")
    plots.log_ticks(ax.yaxis)
    minor = ax.yaxis.get_minor_formatter()
    ax.set_ylim(1, 1000)  # three decades: minor ticks stay unlabelled
    assert minor(3.0) == "" and minor(30.0) == ""
    ax.set_ylim(10, 80)  # under a factor of 10: the 3s join 1, 2, 5
    assert minor(30.0) == "30" and minor(40.0) == ""
    ax.set_ylim(40, 100)  # under a factor of 3: every minor tick
    assert minor(40.0) == "40" and minor(70.0) == "70"
    assert ax.yaxis.get_major_formatter()(2000.0) == "2k"


# --- Roofline labels ------------------------------------------------------------------

MM = 2 * 4096**3 / (3 * 4096**2 * 2)  # chapter 8's bf16 matmul, FLOP per byte
STEPS = 20 * (2 * 64**3 + 64**2) / (20 * 3 * 64 * 64 * 4)  # chapter 3's 20 steps
CH3 = {  # chapter 3's roofline in the H100 reference run (cell 72)
    "chain, eager": (0.1, (0.284, 0.28, 0.288)),
    "chain, compiled": (1.25, (3.25, 3.2, 3.3)),
    "a * b, eager": (1 / 12, (0.252, 0.25, 0.254)),
    "20 steps, eager": (STEPS, (0.0117, 0.0115, 0.012)),
    "20 steps, reduce-overhead": (STEPS, (0.07, 0.068, 0.072)),
    "linear+GELU, default": (1365.0, (613, 600, 620)),
    "linear+GELU, max-autotune-no-cudagraphs": (1365.0, (603, 595, 610)),
}
CH8 = {  # chapter 8 (cell 51): two matmuls at one intensity, 65% and 68% of the roof
    "matmul, Triton fused": (MM, 643.0),
    "matmul, cuBLAS alone": (MM, 672.0),
    "vector add, Triton": (1 / 12, 0.252),
}
CH1 = {  # chapter 1 (cell 81)
    "matmul n=256": (256 / 6, 1.95),
    "matmul n=1024": (1024 / 6, 38.0),
    "matmul n=10000": (10000 / 6, 49.0),
    "x * y, 67,108,864": (1 / 12, 0.2504),
}
CPU = {  # chapter 1 without a GPU: a point just under a low flat roof
    "matmul n=256": (256 / 6, (0.55, 0.5, 0.6)),
    "matmul n=1024": (1024 / 6, 1.05),
    "matmul n=4096": (4096 / 6, 1.25),
    "x * y, 16,777,216": (1 / 12, 0.0016),
}
CASES = [(CH1, 2997, 67), (CH3, 2993, 989), (CH8, 2997, 989), (CPU, 22, 1.3)]


def _roofline(points, bandwidth, peak):
    fig = plots.roofline(points, bandwidth_gbs=bandwidth, peak_tflops=peak)
    fig.canvas.draw()
    return fig, fig.axes[0]


def _centre(point):
    intensity, value = point
    return intensity, value[0] if isinstance(value, tuple) else value


def _point_labels(ax, points):
    return [t for t in ax.texts if t.get_text().split(" (")[0] in points]


def _rotated_frame(ax, label, renderer):
    """Anchor, direction along and across, length and height (pixels) of a rotated
    label."""
    width = Text(0, 0, label.get_text(), fontsize=label.get_fontsize())
    width.set_figure(ax.figure)
    size = width.get_window_extent(renderer)
    pt = ax.figure.dpi / 72
    x, y = ax.transData.transform(label.xy)
    x, y = x + label.xyann[0] * pt, y + label.xyann[1] * pt
    angle = np.radians(label.get_rotation())
    along = np.array([np.cos(angle), np.sin(angle)])
    across = np.array([-np.sin(angle), np.cos(angle)])
    return np.array([x, y]), along, across, size.width, size.height


def _inside_rotated(frame, box) -> bool:
    anchor, along, across, length, height = frame
    for fx in np.linspace(0, 1, 9):
        for fy in np.linspace(0, 1, 5):
            p = np.array([box.x0 + fx * box.width, box.y0 + fy * box.height])
            u, v = (p - anchor) @ along, (p - anchor) @ across
            if 0 < u < length and 0 < v < height:
                return True
    return False


@pytest.mark.parametrize("points, bandwidth, peak", CASES)
def test_roofline_labels_cover_no_other_label_and_no_point(points, bandwidth, peak):
    fig, ax = _roofline(points, bandwidth, peak)
    renderer = fig.canvas.get_renderer()
    labels = _point_labels(ax, points)
    (slanted,) = [t for t in ax.texts if t.get_rotation() != 0]
    (flat,) = [t for t in ax.texts if t not in labels and t is not slanted]
    assert len(labels) == len(points)
    # the text alone (an annotation's own extent includes its leader line)
    boxes = {t.get_text(): Text.get_window_extent(t, renderer) for t in labels}
    boxes[flat.get_text()] = Text.get_window_extent(flat, renderer)
    names = list(boxes)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not boxes[a].overlaps(boxes[b]), (a, b)
    along_roof = _rotated_frame(ax, slanted, renderer)
    frame = ax.get_window_extent(renderer)
    for text in labels:
        box = boxes[text.get_text()]
        assert not _inside_rotated(along_roof, box), text.get_text()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, text.get_text()
        for point in points.values():
            x, y = ax.transData.transform(_centre(point))
            assert not box.contains(x, y), (text.get_text(), point)
    for point in points.values():  # nor does the roof's own label
        x, y = ax.transData.transform(_centre(point))
        assert not _inside_rotated(along_roof, Bbox([[x - 3, y - 3], [x + 3, y + 3]]))


@pytest.mark.parametrize("points, bandwidth, peak", CASES)
def test_close_points_get_different_offsets_and_marks(points, bandwidth, peak):
    _, ax = _roofline(points, bandwidth, peak)
    labels = {t.get_text().split(" (")[0]: t for t in _point_labels(ax, points)}
    names = list(points)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            (xa, ya), (xb, yb) = _centre(points[a]), _centre(points[b])
            if max(xa, xb) / min(xa, xb) <= 1.5 and max(ya, yb) / min(ya, yb) <= 1.5:
                ta, tb = labels[a], labels[b]
                where_a = (ta.xyann, ta.get_ha(), ta.get_va())
                where_b = (tb.xyann, tb.get_ha(), tb.get_va())
                assert where_a != where_b, (a, b)
    marks = [
        (line.get_marker(), matplotlib.colors.to_hex(line.get_color()))
        for line in ax.lines[2:]
        if line.get_marker() not in ("_", "None", "")  # not the error bars' caps
    ]
    assert len(set(marks)) == len(marks) == len(points)


def test_a_point_over_another_is_drawn_as_a_ring():
    _, ax = _roofline(CH8, 2997, 989)
    fused, cublas = [line for line in ax.lines[2:] if line.get_marker() != "_"][:2]
    assert fused.get_marker() == "o" and fused.get_markerfacecolor() != "none"
    assert cublas.get_marker() != "o" and cublas.get_markerfacecolor() == "none"


def test_roofline_shares_below_ten_percent_keep_two_significant_figures():
    _, ax = _roofline(CH3, 2993, 989)
    texts = [t.get_text() for t in ax.texts]
    assert "20 steps, eager (0.036% of roof)" in texts
    assert "20 steps, reduce-overhead (0.22% of roof)" in texts
    assert "chain, compiled (87% of roof)" in texts
    assert [plots._percent(s) for s in (0.029, 0.0999, 0.0996, 0.1, 0.125, 1.01)] == [
        "2.9",
        "10",
        "10",
        "10",
        "12",
        "101",
    ]


def test_bandwidth_label_lies_along_the_roof_above_the_points():
    _, ax = _roofline(CH1, 2997, 67)
    (label,) = [t for t in ax.texts if t.get_text().startswith("measured copy")]
    assert 0 < label.get_rotation() < 90
    (x0, y0), (x1, y1) = ax.transData.transform([(0.1, 0.2997), (10, 29.97)])
    assert label.get_rotation() == pytest.approx(
        np.degrees(np.arctan2(y1 - y0, x1 - x0)), abs=0.5
    )
    dx, dy = label.xyann  # pushed off the line, to its upper-left side
    assert dx < 0 < dy


def test_roof_values_keep_their_digits_and_the_peak_label_clears_the_points():
    fig, ax = _roofline(CPU, 22, 1.3)
    texts = [t.get_text() for t in ax.texts]
    assert "datasheet peak: 1.3 TFLOP/s" in texts  # not "1 TFLOP/s"
    assert "measured copy bandwidth: 22 GB/s" in texts
    assert plots._rate(2997.4) == "2,997" and plots._rate(67) == "67"
    renderer = fig.canvas.get_renderer()
    (peak,) = [t for t in ax.texts if t.get_text().startswith("datasheet")]
    box = Text.get_window_extent(peak, renderer)
    for point in CPU.values():
        x, y = ax.transData.transform(_centre(point))
        assert not box.overlaps(Bbox([[x - 5, y - 5], [x + 5, y + 5]])), point

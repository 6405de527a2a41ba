"""gpubook.plots readability (issues 13, 14, 16, 17): plain log-axis tick labels and a
roofline whose labels do not sit on top of each other."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

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

"""Unit tests for gpubook.environment, gpubook.plots and gpubook.glue."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")

from gpubook import environment, glue, plots  # noqa: E402


def test_report_prints_facts_and_never_raises(capsys, monkeypatch):
    facts = environment.report()
    out = capsys.readouterr().out
    for key in ("torch", "numpy", "device", "profile", "cxx_compiler"):
        assert key in facts and key in out
    monkeypatch.setattr(environment, "cxx_compiler", lambda: None)
    environment.report()
    assert "No C++ compiler found" in capsys.readouterr().out


def test_quiet_known_warnings_silences_the_profilers_log(monkeypatch):
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)
    environment.quiet_known_warnings()
    assert environment.os.environ["KINETO_LOG_LEVEL"] == "6"
    monkeypatch.setenv("KINETO_LOG_LEVEL", "2")
    environment.quiet_known_warnings()
    assert environment.os.environ["KINETO_LOG_LEVEL"] == "2"


def test_quiet_known_warnings_drops_the_profiler_cycle_warning():
    import warnings

    environment.quiet_known_warnings()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        environment.quiet_known_warnings()  # re-installs its filters in front of "default"
        warnings.warn("Warning: Profiler clears events at the end of each cycle.", UserWarning)
    assert not caught


def test_caption_names_device_and_torch():
    text = plots.caption("cpu", "float32")
    assert "CPU" in text and "float32" in text and "torch" in text


def test_plots_build_and_validate():
    fig = plots.speedup_bars(["eager", "compiled"], [1.0, 3.0], "demo")
    assert "torch" in fig.axes[0].get_title(loc="left")
    fig.canvas.draw()
    assert {"1x", "2x"} <= {label.get_text() for label in fig.axes[0].get_xticklabels()}
    fig = plots.versus_size([1, 10], {"eager": [1.0, 2.0]}, "demo", "seconds", limit=3.0, limit_label="copy")
    assert fig.axes[0].get_xscale() == "log"
    fig = plots.cumulative_time(1.0, 0.5, 10.0, "demo")
    assert fig.axes[0].get_xlabel() == "number of calls"
    with pytest.raises(ValueError):
        plots.speedup_bars(["a"], [1.0, 2.0], "demo")
    with pytest.raises(ValueError):
        plots.speedup_bars(["a"], [math.nan], "demo")
    with pytest.raises(ValueError, match="series"):
        plots.versus_size([1, 10], {"eager": [1.0]}, "demo", "s")
    assert plots.color_for("compiled (reduce-overhead)") == plots.COLORS["reduce-overhead"]
    assert plots.color_for("compiled NumPy, CPU") == plots.COLORS["compiled"]
    assert plots.color_for("pure Python") == plots.COLORS["python"]
    assert plots.color_for("NumPy (float64)") == plots.COLORS["numpy"]


def test_glue_rejects_bad_name():
    with pytest.raises(ValueError, match="name"):
        glue("not a name", 1.0)


def test_headline_validates_and_computes_speedup():
    from gpubook import headline

    record = headline("demo", "a case", baseline_seconds=2e-3, optimized_seconds=1e-3, limit_fraction=0.5, limit="copy")
    assert record["speedup"] == pytest.approx(2.0) and record["torch"]
    with pytest.raises(ValueError, match="optimized_seconds"):
        headline("demo", "a case", baseline_seconds=1.0, optimized_seconds=0)

"""Unit tests for gpubook.timing: correct numbers on known workloads, clear errors on bad input."""

import math
import time

import pytest
import torch

from gpubook import timing
from gpubook.timing import Timing, break_even_calls, format_ratio, format_seconds, measure, time_each, time_once


def test_measure_sleep_is_close_to_known_duration():
    result = measure(time.sleep, 0.002, warmup=1, repeats=5, min_run_time=0.02)
    assert isinstance(result, Timing)
    assert result.n >= 5
    assert 0.0019 < result.median < 0.01
    assert result.q25 <= result.median <= result.q75
    assert result.iqr >= 0


def test_measure_blocks_short_calls():
    result = measure(torch.add, torch.ones(8), torch.ones(8), min_run_time=0.05)
    assert result.calls_per_block > 1
    assert result.median < 1e-3


def test_measure_restores_thread_count():
    before = torch.get_num_threads()
    measure(torch.add, torch.ones(8), torch.ones(8), threads=1, min_run_time=0.01)
    assert torch.get_num_threads() == before


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"repeats": 0}, ValueError),
        ({"warmup": -1}, ValueError),
        ({"min_run_time": 0}, ValueError),
        ({"threads": 0}, ValueError),
    ],
)
def test_measure_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        measure(torch.ones, 3, **kwargs)


def test_measure_rejects_non_callable():
    with pytest.raises(TypeError, match="callable"):
        measure(42)


def test_time_once_returns_result():
    seconds, value = time_once(lambda x: x + 1, 41)
    assert value == 42 and seconds >= 0


def test_time_each_times_every_call():
    seconds = time_each(time.sleep, [(0.001,), (0.002,)])
    assert len(seconds) == 2 and seconds[1] > seconds[0] * 1.2
    with pytest.raises(TypeError, match="tuple"):
        time_each(time.sleep, [0.001])
    with pytest.raises(ValueError, match="at least one"):
        time_each(time.sleep, [])


def test_timing_statistics_and_text():
    t = Timing(times=(1e-3, 2e-3, 3e-3, 4e-3), label="x")
    assert t.median == pytest.approx(2.5e-3)
    assert t.q25 == pytest.approx(1.75e-3) and t.q75 == pytest.approx(3.25e-3)
    assert t.median_ms == pytest.approx(2.5)
    assert "2.5 ms" in str(t) and str(t).startswith("x:")
    with pytest.raises(ValueError):
        Timing(times=())


def test_break_even():
    # first call 11 s (10 s compiling + 1 s run), then 1 s instead of 2 s per call:
    # after n calls compiled costs 11 + (n - 1) and eager 2n, equal at n = 10
    assert break_even_calls(11.0, 2.0, 1.0) == 10.0
    assert math.isinf(break_even_calls(1.0, 1.0, 2.0))
    assert break_even_calls(0.5, 2.0, 1.0) == 1.0
    with pytest.raises(ValueError, match="eager_seconds"):
        break_even_calls(1.0, -1.0, 0.5)


def test_eager_vs_compiled_report():
    report = timing.eager_vs_compiled(lambda x: x * 2 + 1, torch.ones(16), min_run_time=0.02, backend="eager")
    assert report.speedup > 0
    assert report.first_call > 0
    assert "speedup" in str(report)


def test_threads_context_restores():
    before = torch.get_num_threads()
    with timing.threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="count"):
        with timing.threads(0):
            pass


def test_format_ratio_never_uses_an_exponent():
    assert format_ratio(0.9441) == "0.944"
    assert format_ratio(11.94) == "11.9"
    assert format_ratio(296.2) == "296"
    assert format_ratio(1513.7) == "1,510"
    assert format_ratio(14512.0) == "14,500"
    assert format_ratio(999.6) == "1,000"
    assert format_ratio(float("inf")) == "inf"


def test_format_seconds_units():
    assert format_seconds(2.5) == "2.5 s"
    assert format_seconds(0.0015) == "1.5 ms"
    assert format_seconds(2e-6) == "2 µs"
    assert format_seconds(3e-9) == "3 ns"

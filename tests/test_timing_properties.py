"""Properties of gpubook.timing's formatters and statistics (hypothesis), and the bugs
issue 18 listed for timing: unit boundaries of format_seconds,
measure(min_run_time=inf)."""

import math
import re
import statistics

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from gpubook import timing

UNITS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}


def _parse_seconds(text):
    number, unit = text.split(" ")
    return float(number) * UNITS[unit]


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0.9996, "1 s"),
        (0.9994, "999 ms"),
        (0.0009996, "1 ms"),
        (9.996e-7, "1 µs"),
        (9.994e-7, "999 ns"),
        (59.96, "60 s"),
        (1.0, "1 s"),
        (1e-3, "1 ms"),
        (-0.0015, "-1.5 ms"),
    ],
)
def test_format_seconds_unit_boundaries(seconds, text):
    assert timing.format_seconds(seconds) == text


@pytest.mark.parametrize("seconds, text", [(1000.0, "1,000 s"), (1234.0, "1,230 s")])
def test_format_seconds_of_long_durations(seconds, text):
    assert timing.format_seconds(seconds) == text


@given(st.floats(min_value=1e-10, max_value=999.4))
def test_format_seconds_round_trips_to_three_digits(seconds):
    text = timing.format_seconds(seconds)
    assert re.fullmatch(r"\d+(\.\d+)? (s|ms|µs|ns)", text), text
    mantissa = float(text.split(" ")[0])
    unit = text.split(" ")[1]
    assert mantissa < 1000 or unit == "s", (
        f"{text}: the next unit up should have been used"
    )
    assert mantissa >= 1 or unit == "ns", (
        f"{text}: the next unit down should have been used"
    )
    assert _parse_seconds(text) == pytest.approx(seconds, rel=5e-3)


@given(st.floats(min_value=1e-4, max_value=1e9))
def test_format_ratio_never_uses_an_exponent(value):
    text = timing.format_ratio(value)
    assert "e" not in text and "E" not in text
    assert float(text.replace(",", "")) == pytest.approx(value, rel=5e-3, abs=5e-4)


def test_format_of_non_finite_values():
    assert timing.format_seconds(math.inf) == "inf"
    assert timing.format_ratio(math.nan) == "nan"


samples = st.lists(st.floats(min_value=1e-7, max_value=10.0), min_size=1, max_size=60)


@given(samples)
def test_timing_statistics_are_those_of_the_samples(times):
    t = timing.Timing(times=tuple(times), mode="latency")
    assert t.median == statistics.median(times)
    assert min(times) <= t.q25 <= t.median <= t.q75 <= max(times)
    assert t.iqr == t.q75 - t.q25 >= 0
    assert t.n == len(times) and t.calls == len(times)
    assert t.median_ms == t.median * 1e3 and t.median_us == t.median * 1e6
    low, high = t.interval()
    assert min(times) <= low <= t.median <= high <= max(times)


@given(st.lists(st.floats(min_value=1e-6, max_value=1.0), min_size=6, max_size=200))
def test_median_interval_is_an_order_statistic_pair(times):
    low, high = timing._median_interval(times, 0.95)
    assert low in times and high in times
    assert (
        sorted(times).index(low)
        <= len(times) // 2
        <= len(times) - 1 - sorted(times)[::-1].index(high)
    )


@given(
    st.floats(0.2, 5.0), st.floats(0.0, 0.5), st.floats(0.0, 0.5), st.floats(0.0, 0.2)
)
def test_ratio_verdict_property(estimate, below, above, margin):
    low, high = estimate * (1 - below), estimate * (1 + above)
    assume(low > 0)
    r = timing.Ratio(estimate=estimate, low=low, high=high, margin=margin)
    if low > 1 + margin:
        assert r.verdict == "faster" and r.clear
    elif high < 1 / (1 + margin):
        assert r.verdict == "slower" and r.clear
    else:
        assert r.verdict == "no clear difference" and not r.clear
    assert r.says("A", "B", "C") == {"faster": "A", "slower": "B"}.get(r.verdict, "C")
    assert float(r) == estimate


def test_ratio_verdict_boundaries_are_strict():
    assert timing.Ratio(2.0, 1.10, 3.0).verdict == "no clear difference"
    assert timing.Ratio(2.0, 1.1001, 3.0).verdict == "faster"
    assert timing.Ratio(0.5, 0.1, 1 / 1.10).verdict == "no clear difference"
    assert timing.Ratio(0.5, 0.1, 0.909).verdict == "slower"


@given(st.lists(st.floats(1e-4, 1e-2), min_size=7, max_size=30), st.floats(0.3, 3.0))
def test_ratio_of_scaled_timings(times, factor):
    base = timing.Timing(times=tuple(times))
    other = timing.Timing(times=tuple(t * factor for t in times))
    r = timing.ratio(base, other, paired=True)
    assert r.estimate == pytest.approx(1 / factor)
    assert r.low <= r.estimate <= r.high
    assert r.low == pytest.approx(1 / factor) and r.high == pytest.approx(1 / factor), (
        "every paired resample has the same ratio"
    )


@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", [math.inf, math.nan, 0, -1.0, True])
def test_measure_rejects_a_run_time_it_could_never_reach(value):
    with pytest.raises((TypeError, ValueError), match="min_run_time"):
        timing.measure(lambda: None, min_run_time=value)
    with pytest.raises((TypeError, ValueError), match="min_run_time"):
        timing.compare({"a": lambda: None, "b": lambda: None}, min_run_time=value)

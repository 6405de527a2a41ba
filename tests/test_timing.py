"""Unit tests for gpubook.timing: the two modes, interleaved comparison, intervals and
verdicts, compile cost, formatting; clear errors on bad input. Scripted clocks make the
statistics exact."""

import dataclasses
import itertools
import math
import statistics
import time

import pytest
import torch

from gpubook import timing
from gpubook.timing import (
    Comparison,
    Ratio,
    Timing,
    break_even_calls,
    compare,
    format_interval,
    format_range,
    format_ratio,
    format_seconds,
    latency,
    measure,
    ratio,
    throughput,
    time_each,
    time_once,
)


class ScriptedClock:
    """A fake host clock: each call of a timed function advances it by a scripted
    amount."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def work(self, seconds):
        def fn(*args, **kwargs):
            self.now += seconds() if callable(seconds) else seconds

        return fn


@pytest.fixture
def clock(monkeypatch):
    fake = ScriptedClock()
    monkeypatch.setattr(timing, "_now", fake)
    monkeypatch.setattr(timing, "_cuda_in_use", lambda: False)
    return fake


def test_latency_samples_are_single_calls(clock):
    durations = itertools.cycle([1e-3, 2e-3, 3e-3])
    result = latency(clock.work(lambda: next(durations)), warmup=0, min_run_time=0.03)
    assert result.mode == "latency" and result.calls_per_block == 1
    assert result.n >= 10
    assert {round(t, 9) for t in result.times} == {1e-3, 2e-3, 3e-3}
    assert result.median == pytest.approx(2e-3)
    assert "latency" in str(result) and "synchronised calls" in str(result)


def test_throughput_blocks_are_independent_samples(clock):
    result = throughput(clock.work(1e-4), warmup=0, min_run_time=0.1, blocks=7)
    # calibration: one call of 0.1 ms; a block lasts about a tenth of min_run_time: 100
    # calls
    assert result.mode == "throughput"
    assert result.calls_per_block == 100
    assert result.n >= 7
    assert result.median == pytest.approx(1e-4)
    assert sum(result.times) * result.calls_per_block >= 0.1 - 1e-12
    assert "blocks of 100 calls" in str(result)


def test_warmup_calls_are_made_and_not_timed(clock):
    calls = []

    def fn():
        calls.append(clock.now)
        clock.now += 5.0 if len(calls) <= 2 else 1e-3

    result = latency(fn, warmup=2, min_run_time=0.01, repeats=10)
    assert len(calls) == 2 + result.n
    assert max(result.times) == pytest.approx(1e-3)


def test_measure_stops_at_max_samples(clock):
    result = latency(clock.work(1e-9), warmup=0, min_run_time=10.0, max_samples=50)
    assert result.n == 50


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"repeats": 0}, "repeats"),
        ({"warmup": -1}, "warmup"),
        ({"min_run_time": 0}, "min_run_time"),
        ({"min_run_time": math.inf}, "min_run_time"),
        ({"min_run_time": True}, "min_run_time"),
        ({"threads": 0}, "threads"),
        ({"mode": "fast"}, "mode"),
    ],
)
def test_measure_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        measure(torch.ones, 3, **kwargs)


def test_measure_rejects_non_callable():
    with pytest.raises(TypeError, match="callable"):
        measure(42)


def test_flush_needs_latency_mode():
    with pytest.raises(ValueError, match="latency"):
        throughput(torch.ones, 3, flush_l2=True, min_run_time=0.01)


def test_flush_writes_a_buffer_before_each_call(monkeypatch):
    monkeypatch.setattr(timing, "_cache_bytes", lambda: 4096)
    writes = []
    original = torch.Tensor.zero_

    def spy(self):
        writes.append(self.numel())
        return original(self)

    monkeypatch.setattr(torch.Tensor, "zero_", spy)
    result = latency(
        lambda: None, warmup=0, flush_l2=True, repeats=10, min_run_time=1e-6
    )
    assert writes.count(4096) == result.n


def test_measure_sleep_real_clock():
    result = latency(time.sleep, 0.002, warmup=1, min_run_time=0.02)
    assert 0.002 <= result.median < 0.02


def test_measure_applies_and_restores_thread_count():
    before = torch.get_num_threads()
    seen = []
    measure(
        lambda: seen.append(torch.get_num_threads()),
        threads=1,
        min_run_time=0.001,
        warmup=1,
    )
    assert set(seen) == {1}
    assert torch.get_num_threads() == before


def test_cuda_path_synchronises_around_each_call(monkeypatch):
    order = []

    class FakeEvent:
        def __init__(self, enable_timing=False):
            self.stamp = None

        def record(self):
            order.append("record")
            self.stamp = len(order)

        def synchronize(self):
            order.append("event-sync")

        def elapsed_time(self, other):
            return 2.0  # milliseconds

    monkeypatch.setattr(timing, "_cuda_in_use", lambda: True)
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: order.append("sync"))
    result = latency(
        lambda: order.append("call"), warmup=0, repeats=10, min_run_time=0.001
    )
    assert result.median == pytest.approx(2e-3)
    # every call is preceded by a synchronisation and a start event and followed by an
    # end event
    for index, item in enumerate(order):
        if item == "call":
            assert order[index - 1] == "record" and order[index - 2] == "sync"
            assert order[index + 1] == "record" and order[index + 2] == "event-sync"


def test_timing_statistics_and_text():
    t = Timing(times=(1e-3, 2e-3, 3e-3, 4e-3), label="x")
    assert t.median == pytest.approx(2.5e-3)
    assert t.q25 == pytest.approx(1.75e-3) and t.q75 == pytest.approx(3.25e-3)
    assert t.iqr == pytest.approx(1.5e-3)
    assert t.median_ms == pytest.approx(2.5) and t.median_us == pytest.approx(2500)
    assert "2.5 ms" in str(t) and str(t).startswith("x:")
    with pytest.raises(ValueError):
        Timing(times=())
    with pytest.raises(ValueError, match="mode"):
        Timing(times=(1.0,), mode="other")


def test_median_interval_covers_the_median_and_narrows():
    wide = Timing(times=tuple(float(i) for i in range(1, 12)))
    low, high = wide.interval()
    assert low <= wide.median <= high
    assert (low, high) != (1.0, 11.0)
    many = Timing(times=tuple(float(i % 100) + 1 for i in range(5000)))
    low2, high2 = many.interval()
    assert high2 - low2 < 10
    assert Timing(times=(1.0, 2.0, 3.0)).interval() == (1.0, 3.0)


def test_ratio_verdicts_follow_the_interval():
    assert Ratio(2.0, 1.9, 2.1).verdict == "faster"
    assert Ratio(0.5, 0.45, 0.55).verdict == "slower"
    assert Ratio(1.1, 1.03, 1.2).verdict == "no clear difference"  # reaches into +-5%
    assert Ratio(1.0, 0.99, 1.01).verdict == "no clear difference"
    assert Ratio(0.9, 0.8, 0.96).verdict == "no clear difference"
    assert Ratio(1.2, 1.06, 1.3, margin=0.05).verdict == "faster"
    assert Ratio(1.2, 1.06, 1.3, margin=0.1).verdict == "no clear difference"
    r = Ratio(2.31, 2.2, 2.45)
    assert str(r) == "2.31x [2.20x, 2.45x]: faster"
    assert float(r) == 2.31 and f"{r:.1f}" == "2.3"
    assert r.says("beat", "lost to", "tied") == "beat"
    assert Ratio(1.0, 0.9, 1.1).says("beat", "lost to", "tied") == "tied"
    with pytest.raises(ValueError):
        Ratio(1.0, 1.2, 1.1)
    with pytest.raises(ValueError):
        Ratio(float("inf"), 1.0, 2.0)


def test_one_sided_words_follow_the_interval_not_the_margin():
    words = ("held", "crossed", "unclear")
    # not_slower: a whole interval below 1, one at or above 1, or neither
    assert Ratio(0.7, 0.65, 0.75).not_slower(*words) == "crossed"
    assert Ratio(1.05, 1.0, 1.08).not_slower(*words) == "held"  # inside the margin
    assert Ratio(1.5, 1.4, 1.6).not_slower(*words) == "held"  # clearly faster
    assert Ratio(1.02, 0.97, 1.08).not_slower(*words) == "unclear"
    # a loss inside the margin is still a loss (its two-sided verdict: no clear
    # difference), as a gain inside it holds
    assert Ratio(0.87, 0.86, 0.88, margin=0.2).verdict == "no clear difference"
    assert Ratio(0.87, 0.86, 0.88, margin=0.2).not_slower(*words) == "crossed"
    # not_faster mirrors it
    assert Ratio(1.05, 1.02, 1.08).not_faster(*words) == "crossed"
    assert Ratio(1.5, 1.4, 1.6).not_faster(*words) == "crossed"
    assert Ratio(0.95, 0.92, 1.0).not_faster(*words) == "held"
    assert Ratio(0.7, 0.65, 0.75).not_faster(*words) == "held"  # clearly slower
    assert Ratio(0.98, 0.93, 1.03).not_faster(*words) == "unclear"


def test_ratio_of_timings_is_median_ratio_with_interval():
    base = Timing(times=tuple(2e-3 + 1e-5 * (i % 7) for i in range(30)), label="eager")
    fast = Timing(
        times=tuple(1e-3 + 1e-5 * (i % 5) for i in range(30)), label="compiled"
    )
    r = ratio(base, fast)
    assert r.estimate == pytest.approx(base.median / fast.median)
    assert r.low <= r.estimate <= r.high
    assert r.verdict == "faster" and r.label == "compiled" and r.baseline == "eager"
    same = ratio(base, Timing(times=base.times))
    assert same.verdict == "no clear difference"
    with pytest.raises(ValueError, match="paired"):
        ratio(base, Timing(times=(1.0,)), paired=True)


def test_noisy_small_difference_is_no_clear_difference():
    import random

    rng = random.Random(1)
    a = Timing(times=tuple(1e-3 * rng.uniform(0.7, 1.3) for _ in range(15)))
    b = Timing(times=tuple(0.97e-3 * rng.uniform(0.7, 1.3) for _ in range(15)))
    assert ratio(a, b).verdict == "no clear difference"


def test_compare_interleaves_and_rotates(clock):
    order = []

    def variant(name, seconds):
        def fn():
            order.append(name)
            clock.now += seconds

        return fn

    result = compare(
        {"a": variant("a", 2e-3), "b": variant("b", 1e-3), "c": variant("c", 2e-3)},
        mode="latency",
        warmup=1,
        rounds=12,
        min_run_time=1e-6,
    )
    assert isinstance(result, Comparison)
    timed = order[3:]  # after one warm-up call each (latency mode needs no calibration)
    rounds = [timed[i : i + 3] for i in range(0, len(timed), 3)]
    assert rounds[0] == ["a", "b", "c"] and rounds[1] == ["b", "c", "a"]
    assert rounds[2] == ["c", "a", "b"]
    assert result["a"].n == result["b"].n == result["c"].n == 12
    assert result.ratio("b").estimate == pytest.approx(2.0)
    assert result.ratio("b").verdict == "faster"
    assert result.ratio("c").verdict == "no clear difference"
    assert result.fastest == "b"
    assert set(result.ratios) == {"b", "c"}
    assert "| b |" in result._repr_markdown_() and "<table" in result._repr_html_()
    assert "faster" in str(result)


def test_compare_stops_when_the_total_is_reached(clock):
    # a slow baseline must not force thousands of rounds on a fast variant
    result = compare(
        {"slow": clock.work(1.0), "fast": clock.work(1e-3)},
        mode="latency",
        warmup=0,
        min_run_time=1.0,
    )
    assert result["slow"].n == 10


def test_compare_rejects_bad_input():
    with pytest.raises(ValueError, match="two variants"):
        compare({"a": time.sleep})
    with pytest.raises(ValueError, match="baseline"):
        compare({"a": lambda: None, "b": lambda: None}, baseline="c")
    with pytest.raises(TypeError, match="callable"):
        compare({"a": lambda: None, "b": 3})
    with pytest.raises(ValueError, match="unique"):
        compare([("a", lambda: None), ("a", lambda: None)])


def test_time_once_returns_result(clock):
    seconds, value = time_once(lambda x: clock.work(0.25)() or x + 1, 41)
    assert value == 42 and seconds == pytest.approx(0.25)


def test_time_once_measures_at_least_the_call():
    seconds, _ = time_once(time.sleep, 0.01)
    assert seconds >= 0.01


def test_time_each_times_every_call(clock):
    seconds = time_each(lambda s: clock.work(s)(), [(0.001,), (0.002,)])
    assert seconds == pytest.approx([0.001, 0.002])
    with pytest.raises(TypeError, match="tuple"):
        time_each(time.sleep, [0.001])
    with pytest.raises(ValueError, match="at least one"):
        time_each(time.sleep, [])


def test_break_even():
    # first call 11 s (10 s compiling + 1 s run), then 1 s instead of 2 s per call:
    # after n calls compiled costs 11 + (n - 1) and eager 2n, equal at n = 10
    assert break_even_calls(11.0, 2.0, 1.0) == 10.0
    assert math.isinf(break_even_calls(1.0, 1.0, 2.0))
    assert break_even_calls(0.5, 2.0, 1.0) == 1.0
    with pytest.raises(ValueError, match="eager_seconds"):
        break_even_calls(1.0, -1.0, 0.5)
    with pytest.raises(ValueError, match="compile_seconds"):
        break_even_calls(math.inf, 2.0, 1.0)


def test_eager_vs_compiled_report():
    report = timing.eager_vs_compiled(
        lambda x: x * 2 + 1, torch.ones(16), min_run_time=1e-6, backend="eager"
    )
    assert report.speedup_ratio is not None
    assert report.speedup == report.speedup_ratio.estimate  # median of round ratios
    rounds = [e / c for e, c in zip(report.eager.times, report.compiled.times)]
    assert report.speedup == pytest.approx(statistics.median(rounds))
    alone = dataclasses.replace(report, speedup_ratio=None)
    assert alone.speedup == report.eager.median / report.compiled.median
    assert report.eager.n == report.compiled.n  # interleaved rounds
    assert "compiling pays off" in str(report)


def test_compile_costs_fields_and_break_even():
    costs = timing.CompileCosts(
        fresh_process=5.0, another_function=1.0, warm_disk_cache=0.5, after_reset=0.1
    )
    # (b) one more function: 1 s first call, then 1 ms instead of 2 ms per call
    assert costs.break_even(2e-3, 1e-3) == break_even_calls(1.0, 2e-3, 1e-3)
    assert costs.break_even(2e-3, 1e-3, cost="fresh_process") == break_even_calls(
        5.0, 2e-3, 1e-3
    )
    with pytest.raises(ValueError, match="cost"):
        costs.break_even(2e-3, 1e-3, cost="cold")
    assert "5 s" in str(costs) and "(c) fresh process, warm on-disk cache" in str(costs)
    assert "<table" in costs._repr_html_()


def test_compile_costs_runs_fresh_processes(monkeypatch):
    seen = []

    def fake_child(spec, cache_dir):
        seen.append((spec["warm_up"], spec["reset"], cache_dir))
        result = {"first_call": 3.0 if not spec["warm_up"] and len(seen) == 1 else 1.0}
        if spec["warm_up"]:
            result["warm_up"] = 2.0
        if spec["reset"]:
            result["after_reset"] = 0.1
        return result

    def fake_children(specs, cache_dirs, timeout):
        return [fake_child(s, c) for s, c in zip(specs, cache_dirs)]

    monkeypatch.setattr(timing, "_run_children", fake_children)
    costs = timing.compile_costs("def fn(x):\n    return x\nargs = (1,)")
    assert (
        costs.fresh_process == 3.0 and costs.after_reset == 0.1 and costs.warm_up == 2.0
    )
    # a: its own cold cache; b: another cold cache with a warm-up and a reset; c: b's
    # cache
    assert seen[0][:2] == (False, False) and seen[1][:2] == (True, True)
    assert seen[2][:2] == (False, False)
    assert seen[0][2] != seen[1][2] and seen[1][2] == seen[2][2]


def test_compile_costs_reports_a_failing_child():
    with pytest.raises(RuntimeError, match="NameError"):
        timing.compile_costs(
            "def fn(x):\n    return undefined_name\nargs = (1,)", timeout=120
        )
    with pytest.raises(ValueError, match="setup"):
        timing.compile_costs("  ")


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


@pytest.mark.parametrize(
    "seconds, text",
    [
        (2.5, "2.5 s"),
        (0.0015, "1.5 ms"),
        (2e-6, "2 µs"),
        (3e-9, "3 ns"),
        (0.9996, "1 s"),
        (0.0009996, "1 ms"),
        (9.996e-7, "1 µs"),
        (0.5, "500 ms"),
        (-0.002, "-2 ms"),
    ],
)
def test_format_seconds_units(seconds, text):
    assert format_seconds(seconds) == text


@pytest.mark.parametrize(
    "count, noun, text",
    [
        (1, "kernel", "1 kernel"),
        (2, "kernel", "2 kernels"),
        (0, "process", "0 processes"),
        (1.5, "kernel", "1.5 kernels"),
        (1.0, "launch", "1 launch"),
        (3, "break", "3 breaks"),
        (2, "graph", "2 graphs"),
        (12345, "fault", "12,345 faults"),
        (2, "child", "2 children"),
    ],
)
def test_counted(count, noun, text):
    from gpubook import counted

    plural = "children" if noun == "child" else None
    assert counted(count, noun, plural) == text


@pytest.mark.parametrize("bad", ["two", None, True])
def test_counted_rejects_bad_counts(bad):
    from gpubook import counted

    with pytest.raises(TypeError):
        counted(bad, "kernel")
    with pytest.raises(ValueError):
        counted(1, "")


def test_format_interval_adds_digits_where_three_would_merge_values():
    estimate, low, high = format_interval(1.6966, 1.6951, 1.6982)
    assert len({estimate, low, high}) == 3  # not "1.70 [1.70, 1.70]"
    assert all(len(text.replace(".", "")) == 4 for text in (estimate, low, high))
    assert float(low) <= float(estimate) <= float(high)


def test_format_interval_keeps_trailing_zeros_and_equal_values():
    assert format_interval(0.742, 0.74, 0.744) == ("0.742", "0.740", "0.744")
    assert format_interval(2.0, 2.0, 2.0) == ("2.00", "2.00", "2.00")
    assert format_interval(1513.7, 1402.0, 1620.0) == ("1,510", "1,400", "1,620")
    assert format_interval(296.2, 250.0, 310.0) == ("296", "250", "310")


def test_format_interval_gives_up_after_four_digits():
    # a fifth digit would claim more than a re-run holds: equal texts are left so
    assert format_interval(1.5352, 1.5347, 1.5356) == ("1.535", "1.535", "1.536")
    texts = format_interval(1.0000001, 1.0, 1.0000002)
    assert all(len(t.replace(".", "")) == 4 for t in texts)


def test_format_range_adds_digits_only_when_needed():
    assert format_range(0.02152, 0.02154) == "21.52 ms to 21.54 ms"
    assert format_range(0.0213, 0.0216) == "21.3 ms to 21.6 ms"
    assert format_range(0.001, 0.001) == "1 ms to 1 ms"


@pytest.mark.parametrize(
    "items, text",
    [([], ""), (["a"], "a"), (["a", "b"], "a and b"), (["a", "b", "c"], "a, b and c")],
)
def test_joined(items, text):
    from gpubook import joined

    assert joined(items) == text


def test_joined_rejects_what_is_not_text():
    from gpubook import joined

    with pytest.raises(TypeError, match="strings"):
        joined(["a", 2])

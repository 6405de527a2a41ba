"""gpubook.timing, relation by relation (tests written against the survivors of a
mutation run, CONTRIBUTING.md "Mutation testing"). A scripted clock and a faked
torch.cuda make every count, time and ordering exact; durations are powers of two so
that sums are exact in floating point."""

import builtins
import math

import pytest
import torch

from gpubook import timing
from gpubook.timing import (
    Comparison,
    CompileCosts,
    CompileReport,
    Ratio,
    Timing,
    break_even_calls,
    compare,
    latency,
    measure,
    ratio,
    throughput,
    time_each,
    time_once,
)

MS = 2.0**-10  # about a millisecond, exact in binary


class Clock:
    """A fake host clock. ``work(s)`` is a function that takes ``s`` seconds of host
    time; ``gpu(s)`` one that queues ``s`` seconds of device work, which only shows on
    the clock at the next synchronisation."""

    def __init__(self):
        self.now, self.pending, self.log = 0.0, 0.0, []

    def __call__(self):
        return self.now

    def work(self, seconds, name="call"):
        def fn(*args, **kwargs):
            self.log.append(name)
            self.now += seconds

        return fn

    def gpu(self, seconds):
        def fn(*args, **kwargs):
            self.log.append("call")
            self.pending += seconds

        return fn

    def synchronize(self, *args):
        self.log.append("sync")
        self.now += self.pending
        self.pending = 0.0


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(timing, "_now", fake)
    monkeypatch.setattr(timing, "_cuda_in_use", lambda: False)
    return fake


@pytest.fixture
def cuda_clock(monkeypatch, clock):
    """CUDA 'in use': torch.cuda.synchronize runs the queued device work; events
    measure the device time between their records."""

    class Event:
        def __init__(self, enable_timing=False):
            assert enable_timing
            self.at = None

        def record(self):
            clock.log.append("record")
            self.at = clock.now + clock.pending

        def synchronize(self):
            clock.log.append("event-sync")
            clock.now += clock.pending
            clock.pending = 0.0

        def elapsed_time(self, end):
            return (end.at - self.at) * 1e3  # milliseconds, as CUDA events say

    monkeypatch.setattr(timing, "_cuda_in_use", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", clock.synchronize)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    return clock


# --- Taking samples -------------------------------------------------------------------


def test_latency_takes_exactly_enough_samples_for_the_run_time(clock):
    result = latency(clock.work(MS), warmup=0, min_run_time=32 * MS)
    assert result.n == 32 and result.times == (MS,) * 32
    assert result.calls == 32 and result.calls_per_block == 1
    assert latency(clock.work(MS), warmup=0, min_run_time=MS / 8).n == 10
    assert latency(clock.work(MS), warmup=0, repeats=12, min_run_time=MS).n == 12
    # repeats win over a smaller max_samples
    assert latency(clock.work(MS), warmup=0, repeats=12, max_samples=5).n == 12


def test_measure_stops_at_ten_thousand_samples_by_default(clock):
    result = latency(clock.work(0.0), warmup=0, min_run_time=1.0)
    assert result.n == 10_000


def test_default_warmup_is_three_calls_and_arguments_reach_the_function(clock):
    seen = []

    def fn(a, b=None):
        seen.append((a, b))
        clock.now += MS

    result = latency(fn, 1, b=2, min_run_time=MS)
    assert len(seen) == 3 + result.n and set(seen) == {(1, 2)}
    assert result.mode == "latency" and result.label == ""
    seen.clear()
    result = throughput(fn, 5, warmup=0, min_run_time=10 * MS, label="x")
    assert set(seen) == {(5, None)} and result.label == "x"
    assert result.mode == "throughput"


def test_throughput_blocks_follow_the_calibration(clock):
    # one call of 2^-12 s; a block lasts a tenth of min_run_time, 2^-6 s: 64 calls
    fn = clock.work(2.0**-12)
    result = throughput(fn, warmup=0, min_run_time=10 * 2.0**-6)
    assert result.calls_per_block == 64
    assert result.n == 10 and result.times == (2.0**-12,) * 10
    assert result.calls == 640
    assert throughput(fn, warmup=0, min_run_time=2.0**-12).n == 7
    assert throughput(fn, warmup=0, min_run_time=2.0**-12, blocks=9).n == 9
    # a call longer than the target block still makes a block of one call
    assert throughput(clock.work(1.0), warmup=0, min_run_time=1.0).calls_per_block == 1


def test_calibration_of_an_instant_call_assumes_a_tenth_of_a_microsecond(clock):
    # a target of 2^-20 s (about 0.95 µs) at 1e-7 s per call: 9 calls per block
    result = throughput(
        clock.work(0.0), warmup=0, min_run_time=10 * 2.0**-20, max_samples=1
    )
    assert result.calls_per_block == 9
    assert result.n == 7  # no time ever adds up: the blocks asked for


def test_latency_mode_needs_no_calibration_call(clock):
    result = latency(clock.work(MS), warmup=2, min_run_time=MS)
    assert clock.log.count("call") == 2 + result.n == 12


def test_throughput_on_cuda_synchronises_around_each_block(cuda_clock):
    fn = cuda_clock.gpu(2.0**-12)  # device time only: visible after a sync
    result = throughput(fn, warmup=1, min_run_time=10 * 2.0**-6)
    assert result.calls_per_block == 64
    assert result.times == (2.0**-12,) * result.n
    log = cuda_clock.log
    # warm-up, sync; calibration: one call between events; then sync, block, sync
    assert log[:7] == ["call", "sync", "sync", "record", "call", "record", "event-sync"]
    block = ["sync"] + ["call"] * 64 + ["sync"]
    assert log[7:] == block * result.n


def test_latency_on_cuda_times_the_device_work_of_one_call(cuda_clock):
    result = latency(cuda_clock.gpu(MS), warmup=0, repeats=10, min_run_time=MS)
    assert result.times == (MS,) * 10


def test_threads_none_keeps_the_current_count(clock):
    before = torch.get_num_threads()
    seen = []
    latency(lambda: seen.append(torch.get_num_threads()), warmup=0, repeats=10)
    assert set(seen) == {before}


def test_flush_buffer_is_bytes_on_the_cpu(monkeypatch, clock):
    monkeypatch.setattr(timing, "_cache_bytes", lambda: 1000)
    sampler = timing._Sampler(lambda: None, (), {}, "latency", True)
    assert sampler.flush.numel() == 1000 and sampler.flush.dtype == torch.int8
    assert sampler.flush.device.type == "cpu"
    assert timing._Sampler(lambda: None, (), {}, "latency", False).flush is None
    with pytest.raises(ValueError, match="flush_l2 needs mode='latency'"):
        timing._Sampler(lambda: None, (), {}, "throughput", True)


def test_flush_buffer_lives_on_the_gpu_when_cuda_is_in_use(monkeypatch):
    made = []
    monkeypatch.setattr(timing, "_cuda_in_use", lambda: True)
    monkeypatch.setattr(timing, "_cache_bytes", lambda: 64)
    monkeypatch.setattr(
        torch, "empty", lambda size, dtype, device: made.append((size, dtype, device))
    )
    timing._Sampler(lambda: None, (), {}, "latency", True)
    assert made == [(64, torch.int8, "cuda")]


def test_cache_bytes_on_cuda_is_twice_the_l2(monkeypatch):
    seen = []

    class Props:
        L2_cache_size = 50 * 2**20

    def properties(index):
        seen.append(index)
        return Props()

    monkeypatch.setattr(timing, "_cuda_in_use", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    monkeypatch.setattr(torch.cuda, "get_device_properties", properties)
    assert timing._cache_bytes() == 100 * 2**20 and seen == [3]
    Props.L2_cache_size = 0  # unknown: assume 64 MiB
    assert timing._cache_bytes() == 128 * 2**20
    del Props.L2_cache_size
    assert timing._cache_bytes() == 128 * 2**20


@pytest.mark.parametrize(
    "files, expected",
    [
        ({3: "32768K\n", 2: "1024K"}, 2 * 32768 * 2**10),  # the last level first
        ({2: "2M"}, 2 * 2 * 2**20),  # no L3: the L2
        ({3: "1G"}, 2 * 2**30),
        ({3: "512k"}, 2 * 512 * 2**10),
        ({3: "4096"}, 2 * 4096),  # bytes
        ({3: "many", 2: "256K"}, 2 * 256 * 2**10),
        ({}, 2 * 64 * 2**20),  # nothing readable: 64 MiB
    ],
)
def test_cache_bytes_on_the_cpu_reads_sysfs(monkeypatch, tmp_path, files, expected):
    real_open = builtins.open
    for index, text in files.items():
        (tmp_path / f"index{index}").write_text(text)

    def fake_open(path, *args, **kwargs):
        prefix = "/sys/devices/system/cpu/cpu0/cache/index"
        assert path.startswith(prefix) and path.endswith("/size")
        index = path[len(prefix) : -len("/size")]
        return real_open(tmp_path / f"index{index}", *args, **kwargs)

    monkeypatch.setattr(timing, "_cuda_in_use", lambda: False)
    monkeypatch.setattr(timing, "open", fake_open, raising=False)
    assert timing._cache_bytes() == expected


# --- Statistics -----------------------------------------------------------------------


def test_median_interval_ranks():
    # n = 11: P(B <= 1) = 12/2048 < 2.5% < P(B <= 2): the 2nd and 10th values
    assert Timing(times=tuple(float(i) for i in range(1, 12))).interval() == (2.0, 10.0)
    # n = 2000, normal approximation: 1000 - 1.96 * sqrt(2000) / 2 = 956.2
    assert timing._median_interval([float(i) for i in range(2000)], 0.95) == (
        955.0,
        1044.0,
    )
    # n = 9: P(B <= 1) = 10/512 = 2.0% < 2.5% < P(B <= 2): the 2nd and 8th values
    assert timing._median_interval([float(i) for i in range(9)], 0.95) == (1.0, 7.0)
    assert timing._median_interval([float(i) for i in range(1000)], 0.95) == (
        468.0,
        531.0,
    )
    assert Timing(times=tuple(float(i) for i in range(1, 8))).interval(0.5) == (
        3.0,
        5.0,
    )
    assert Timing(times=(5.0, 1.0, 3.0)).interval() == (1.0, 5.0)
    for confidence in (0, 1, -0.5, 1.5):
        with pytest.raises(ValueError, match="confidence"):
            Timing(times=(1.0,)).interval(confidence)


def test_timing_checks_text_and_counts():
    assert Timing(times=(0.0, 1.0)).median == 0.5  # zero is a valid time
    with pytest.raises(ValueError, match="^times must hold at least one measurement$"):
        Timing(times=())
    with pytest.raises(ValueError, match="times"):
        Timing(times=(1.0, -1.0))
    with pytest.raises(ValueError, match="mode must be one of"):
        Timing(times=(1.0,), mode="fast")
    t = Timing(times=(1e-3, 2e-3, 3e-3), calls_per_block=4, mode="throughput")
    assert t.calls == 12 and t.n == 3
    assert str(t) == (
        "2 ms per call (throughput, median of 3 blocks of 4 calls; "
        "IQR 1.5 ms to 2.5 ms)"
    )
    one = Timing(times=(1e-3,), mode="latency")
    assert one.q25 == one.q75 == 1e-3
    assert str(one) == (
        "1 ms per call (latency, median of 1 synchronised calls; IQR 1 ms to 1 ms)"
    )
    assert one.median_ms == 1.0 and one.median_us == 1000.0


def test_ratio_verdict_at_the_margins():
    assert Ratio(1.2, 1.10, 1.3).verdict == "no clear difference"  # low == 1 + margin
    assert Ratio(1.2, 1.1001, 1.3).verdict == "faster"
    assert Ratio(1.2, 1.07, 1.3).verdict == "no clear difference"  # inside 10%
    edge = 1 / 1.10
    assert Ratio(0.9, 0.8, edge).verdict == "no clear difference"
    assert Ratio(0.9, 0.8, edge - 1e-6).verdict == "slower"
    assert Ratio(1.01, 1.005, 1.02, margin=0).verdict == "faster"
    assert Ratio(2.0, 1.9, 2.1).clear and Ratio(0.5, 0.4, 0.6).clear
    assert not Ratio(1.0, 0.9, 1.1).clear
    assert Ratio(2.0, 1.9, 2.1).says() == "faster"
    assert Ratio(0.5, 0.4, 0.6).says() == "slower"
    assert Ratio(1.0, 0.9, 1.1).says() == "no clear difference"
    assert Ratio(0.5, 0.4, 0.6).says("beat", "lost to", "tied") == "lost to"
    r = Ratio(2.5, 2.0, 3.0)
    assert f"{r}" == str(r) == "2.50x [2.00x, 3.00x]: faster" and f"{r:.2f}" == "2.50"
    assert r.interval_text == "2.50x [2.00x, 3.00x]"
    assert Ratio(1.0, 1.0, 1.0).low == 1.0  # low == high is allowed
    with pytest.raises(ValueError, match="margin"):
        Ratio(1.0, 0.9, 1.1, margin=-0.1)
    for bad, name in (
        ((0.0, 0.0, 1.0), "estimate"),
        ((1.0, 0.0, 1.0), "low"),
        ((1.0, 1.0, math.inf), "high"),
    ):
        with pytest.raises(ValueError, match=name):
            Ratio(*bad)
    with pytest.raises(ValueError, match=r"low \(2.0\) must not exceed high \(1.0\)"):
        Ratio(1.5, 2.0, 1.0)


def _noisy(centre, n=21, seed=3):
    import random

    rng = random.Random(seed)
    return Timing(times=tuple(centre * rng.uniform(0.6, 1.4) for _ in range(n)))


def test_ratio_interval_brackets_the_estimate_and_narrows_with_confidence():
    base, other = _noisy(2e-3, seed=1), _noisy(1e-3, seed=2)
    wide = ratio(base, other)
    narrow = ratio(base, other, confidence=0.5)
    assert wide.low < narrow.low < wide.estimate < narrow.high < wide.high
    assert wide.estimate == narrow.estimate == base.median / other.median
    assert wide.confidence == 0.95 and narrow.confidence == 0.5
    assert wide.low > 1 and wide.verdict == "faster"  # interval excludes 1
    same = ratio(base, _noisy(2e-3, seed=4))
    assert same.low < 1 < same.high and same.verdict == "no clear difference"
    assert ratio(base, other, margin=0.2).margin == 0.2
    assert ratio(base, other) == wide  # the same resamples each time


def test_bootstrap_is_the_percentile_interval_of_2000_seeded_resamples():
    import numpy as np

    base = np.array([1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0])
    other = np.array([2.0, 3.0, 4.0, 7.0, 11.0])
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 7, size=(2000, 7))
    cols = rng.integers(0, 5, size=(2000, 5))
    ratios = np.median(base[rows], axis=1) / np.median(other[cols], axis=1)
    for confidence in (0.95, 0.8):
        tail = (1 - confidence) / 2 * 100
        expected = tuple(np.percentile(ratios, [tail, 100 - tail]))
        assert timing._bootstrap(base, other, False, confidence) == expected
    assert timing.BOOTSTRAP_RESAMPLES == 2000


def test_paired_ratio_of_proportional_rounds_is_exact():
    base = Timing(times=tuple(float(i) for i in range(1, 16)))
    half = Timing(times=tuple(i / 2 for i in range(1, 16)))
    paired = ratio(base, half, paired=True)
    assert (paired.low, paired.estimate, paired.high) == (2.0, 2.0, 2.0)
    unpaired = ratio(base, half)
    assert unpaired.low < 2.0 < unpaired.high
    result = Comparison({"a": base, "b": half}, "a", 0.05)
    assert (result.ratio("b").low, result.ratio("b").high) == (2.0, 2.0)


def test_ratio_rejects_bad_input():
    t = Timing(times=(1.0, 2.0))
    with pytest.raises(TypeError, match="baseline and other must be Timing objects"):
        ratio(t, 1.0)
    with pytest.raises(TypeError, match="Timing"):
        ratio((1.0,), t)
    with pytest.raises(ValueError, match="^margin must"):
        ratio(t, t, margin=-1)
    for confidence in (0, 1):
        with pytest.raises(ValueError, match="confidence"):
            ratio(t, t, confidence=confidence)
    with pytest.raises(ValueError, match="^timings must be positive to form a ratio$"):
        ratio(Timing(times=(0.0, 1.0)), t)
    with pytest.raises(ValueError, match="^timings must be positive"):
        ratio(t, Timing(times=(1.0, 0.0)))
    assert ratio(t, Timing(times=(2.0, 4.0)), paired=True).estimate == 0.5


# --- Comparing variants ---------------------------------------------------------------


def test_compare_runs_until_the_total_run_time_of_all_variants(clock):
    # two variants of 2^-10 s; 2^-5 s each: 32 rounds
    result = compare(
        {"a": clock.work(MS), "b": clock.work(MS)},
        mode="latency",
        warmup=0,
        min_run_time=32 * MS,
    )
    assert result["a"].n == result["b"].n == 32
    assert result.timings["a"].mode == "latency" and result.mode == "latency"
    assert result.timings["b"].label == "b"


def test_compare_defaults_rounds_and_warmup(clock):
    variants = {"a": clock.work(MS, "a"), "b": clock.work(MS, "b")}
    result = compare(variants, mode="latency", min_run_time=MS / 8)
    assert result["a"].n == 10 and clock.log[:6] == ["a", "b"] * 3
    clock.log.clear()
    result = compare(variants, min_run_time=MS / 8)  # throughput: 7 blocks
    assert result["a"].n == result["b"].n == 7
    assert result["a"].mode == "throughput" and result.baseline == "a"
    # warm-up (3 rounds), then one calibration call each, then the blocks
    assert clock.log[:8] == ["a", "b"] * 4
    assert result["a"].calls_per_block == 1  # a block target of 2^-13 s


def test_compare_stops_at_max_rounds_but_not_before_the_minimum(clock):
    variants = [("a", clock.work(MS)), ("b", clock.work(2 * MS))]
    result = compare(variants, mode="latency", warmup=0, max_rounds=15)
    assert result["a"].n == 15  # the default run time would need far more
    result = compare(variants, mode="latency", warmup=0, rounds=20, max_rounds=15)
    assert result["b"].n == 20
    assert result.ratio("b").estimate == 0.5 and result.ratio("b").verdict == "slower"


def test_compare_calibrates_each_throughput_block(clock):
    # one call of 2^-12 s and a block target of a tenth of min_run_time (2^-10 s, under
    # BLOCK_SECONDS)
    result = compare(
        {"a": clock.work(2.0**-12), "b": clock.work(2.0**-11)},
        warmup=0,
        min_run_time=10 * 2.0**-10,
    )
    assert result["a"].calls_per_block == 4 and result["b"].calls_per_block == 2
    assert result["a"].calls == 4 * result["a"].n
    assert result["a"].median == 2.0**-12 and result.ratio("b").estimate == 0.5


def test_compare_blocks_last_at_most_block_seconds(clock):
    # a tenth of min_run_time would be 2^-4 s; blocks stop at BLOCK_SECONDS (5 ms)
    assert timing.BLOCK_SECONDS == 0.005
    result = compare(
        {"a": clock.work(2.0**-12), "b": clock.work(2.0**-11)},
        warmup=0,
        min_run_time=10 * 2.0**-4,
    )
    # b's 5 ms would hold 10 calls: it gets MIN_BLOCK_CALLS (20), within a tenth of
    # min_run_time
    assert timing.MIN_BLOCK_CALLS == 20
    assert result["a"].calls_per_block == 20 and result["b"].calls_per_block == 20
    assert result.ratio("b").estimate == 0.5


def test_compare_blocks_hold_twenty_calls_only_where_the_run_time_allows(clock):
    # calls of 2^-6 s; a tenth of min_run_time (2^-4 s) holds 4 of them, not 20
    result = compare(
        {"a": clock.work(2.0**-6), "b": clock.work(2.0**-7)},
        warmup=0,
        min_run_time=10 * 2.0**-4,
    )
    assert result["a"].calls_per_block == 4 and result["b"].calls_per_block == 8
    slow = compare(  # a call longer than a tenth of min_run_time: one per block
        {"a": clock.work(2.0**-2), "b": clock.work(2.0**-2)},
        warmup=0,
        min_run_time=10 * 2.0**-4,
        max_rounds=7,
    )
    assert slow["a"].calls_per_block == 1


def test_compare_passes_arguments_baseline_margin_and_confidence(clock):
    seen = []

    def variant(name):
        def fn(x, scale=1):
            seen.append((name, x, scale))
            clock.now += MS

        return fn

    result = compare(
        {"a": variant("a"), "b": variant("b")},
        7,
        scale=3,
        mode="latency",
        warmup=1,
        baseline="b",
        margin=0.2,
        confidence=0.9,
        min_run_time=MS,
    )
    assert {(x, scale) for _, x, scale in seen} == {(7, 3)}
    assert result.baseline == "b" and result.margin == 0.2
    assert result.confidence == 0.9 and result.ratio("a").confidence == 0.9
    assert result.ratio("a").margin == 0.2 and set(result.ratios) == {"a"}


def test_compare_checks_its_arguments(clock):
    ok = clock.work(MS)
    with pytest.raises(TypeError, match="variant labels must be strings, got 1"):
        compare([(1, ok), ("b", ok)])
    with pytest.raises(TypeError, match="variant 'b' must be callable"):
        compare({"a": ok, "b": 3})
    with pytest.raises(ValueError, match="mode"):
        compare({"a": ok, "b": ok}, mode="fast")
    with pytest.raises(ValueError, match="margin"):
        compare({"a": ok, "b": ok}, margin=-1)
    with pytest.raises(ValueError, match="warmup"):
        compare({"a": ok, "b": ok}, warmup=-1)
    with pytest.raises(ValueError, match="^rounds must"):
        compare({"a": ok, "b": ok}, rounds=0)
    with pytest.raises(ValueError, match="^max_rounds must"):
        compare({"a": ok, "b": ok}, max_rounds=0)
    with pytest.raises(ValueError, match="min_run_time"):
        compare({"a": ok, "b": ok}, min_run_time=-1.0)
    assert clock.log == []  # nothing ran
    exact = compare({"a": ok, "b": ok}, mode="latency", margin=0, min_run_time=MS)
    assert exact.margin == 0 and exact.ratio("b").margin == 0


def _comparison(mode="throughput", confidence=0.95, margin=0.05):
    timings = {
        "eager": Timing(times=(2e-3,) * 7, mode=mode, label="eager"),
        "compiled": Timing(times=(1e-3,) * 7, mode=mode, label="compiled"),
        "other": Timing(times=(2e-3,) * 5 + (3e-3,) * 2, mode=mode, label="other"),
    }
    return Comparison(timings, "eager", margin, confidence)


def test_comparison_rows_and_the_three_renderings():
    result = _comparison()
    assert result.rows() == [
        {
            "variant": "eager",
            "median": "2 ms",
            "IQR": "2 ms to 2 ms",
            "vs eager": "baseline",
            "verdict": "",
        },
        {
            "variant": "compiled",
            "median": "1 ms",
            "IQR": "1 ms to 1 ms",
            "vs eager": "2.00x [2.00, 2.00]",
            "verdict": "faster",
        },
        {
            "variant": "other",
            "median": "2 ms",
            "IQR": "2 ms to 2.5 ms",
            "vs eager": "1.00x [0.667, 1.00]",
            "verdict": "no clear difference",
        },
    ]
    caption = (
        "throughput: blocks of back-to-back calls; 7 interleaved rounds; ratio = "
        "median over the rounds of eager time / variant time, with a 95% bootstrap "
        "interval; within ±5% counts as no clear difference"
    )
    assert result._repr_markdown_() == (
        "| variant | median | IQR | vs eager | verdict |\n"
        "| --- | --- | --- | --- | --- |\n"
        "| eager | 2 ms | 2 ms to 2 ms | baseline |  |\n"
        "| compiled | 1 ms | 1 ms to 1 ms | 2.00x [2.00, 2.00] | faster |\n"
        "| other | 2 ms | 2 ms to 2.5 ms | 1.00x [0.667, 1.00] | "
        "no clear difference |\n"
        f"\n*{caption}*\n"
    )
    assert result._repr_html_() == (
        '<table class="gpubook-table"><thead><tr><th>variant</th><th>median</th>'
        "<th>IQR</th><th>vs eager</th><th>verdict</th></tr></thead><tbody>"
        "<tr><td>eager</td><td>2 ms</td><td>2 ms to 2 ms</td><td>baseline</td>"
        "<td></td></tr>"
        "<tr><td>compiled</td><td>1 ms</td><td>1 ms to 1 ms</td>"
        "<td>2.00x [2.00, 2.00]</td>"
        "<td>faster</td></tr>"
        "<tr><td>other</td><td>2 ms</td><td>2 ms to 2.5 ms</td>"
        "<td>1.00x [0.667, 1.00]</td><td>no clear difference</td></tr>"
        f"</tbody></table><p><em>{caption}</em></p>"
    )
    assert str(result) == (
        "variant   median  IQR             vs eager             verdict\n"
        "eager     2 ms    2 ms to 2 ms    baseline\n"
        "compiled  1 ms    1 ms to 1 ms    2.00x [2.00, 2.00]   faster\n"
        "other     2 ms    2 ms to 2.5 ms  1.00x [0.667, 1.00]  no clear difference\n"
        f"({caption})"
    )
    assert repr(result) == str(result)


def test_comparison_caption_follows_mode_confidence_and_margin():
    text = _comparison(mode="latency", confidence=0.9, margin=0.1)._repr_markdown_()
    assert "*latency: each call synchronised and timed alone; 7 interleaved" in text
    assert "with a 90% bootstrap interval; within ±10% counts as" in text


def test_comparison_lookup_and_fastest():
    result = _comparison()
    assert result.fastest == "compiled" and result["other"].n == 7
    assert result.mode == "throughput"
    with pytest.raises(KeyError, match=r"no variant 'x'; variants: \['eager'"):
        result.ratio("x")
    assert result.ratio("compiled") is result.ratio("compiled")
    assert list(result.ratios) == ["compiled", "other"]
    html = Comparison(
        {"<a>": Timing(times=(1.0,)), "b": Timing(times=(1.0,))}, "<a>", 0.05
    )._repr_html_()
    assert "<th>vs &lt;a&gt;</th>" in html and "<td>&lt;a&gt;</td>" in html


# --- Single calls, break-even, compile costs ------------------------------------------


def test_time_once_synchronises_before_and_after(cuda_clock):
    seconds, result = time_once(lambda: cuda_clock.gpu(MS)() or 5)
    assert (seconds, result) == (MS, 5)
    assert cuda_clock.log == ["sync", "call", "sync"]
    cuda_clock.pending = 1.0  # earlier work still running is not charged to the call
    seconds, _ = time_once(cuda_clock.gpu(MS))
    assert seconds == MS


def test_time_each_and_its_messages(clock):
    assert time_each(lambda s: clock.work(s)(), [(MS,), [2 * MS]]) == [MS, 2 * MS]
    with pytest.raises(TypeError, match="tuple of arguments, got float"):
        time_each(clock.work(MS), [MS])
    with pytest.raises(ValueError, match="calls must hold at least one argument tuple"):
        time_each(clock.work(MS), [])
    with pytest.raises(TypeError, match="fn must be callable"):
        time_each(3, [()])


@pytest.mark.parametrize(
    "args, name",
    [
        ((-1.0, 2.0, 1.0), "compile_seconds"),
        ((1.0, -2.0, 1.0), "eager_seconds"),
        ((1.0, 2.0, -1.0), "compiled_seconds"),
    ],
)
def test_break_even_names_the_bad_argument(args, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        break_even_calls(*args)


def test_default_min_run_time_by_profile(monkeypatch):
    for profile, seconds in (("gpu", 1.0), ("cpu", 0.5), ("ci", 0.05)):
        monkeypatch.setenv("GPUBOOK_PROFILE", profile)
        assert timing.default_min_run_time() == seconds


def test_break_even_rounds_up_and_is_at_least_one():
    assert break_even_calls(10.5, 2.0, 1.0) == 10.0  # 9.5 calls: the 10th repays
    assert break_even_calls(0.0, 2.0, 1.0) == 1.0
    assert break_even_calls(1.0, 1.0, 1.0) == math.inf
    assert break_even_calls(1.0, 1.0, 0.0) == 1.0
    assert break_even_calls(1.0, 0.0, 0.0) == math.inf
    assert isinstance(break_even_calls(3.0, 2.0, 1.0), float)


def test_compile_costs_table_renderings():
    costs = CompileCosts(
        fresh_process=5.0, another_function=1.5, warm_disk_cache=0.25, after_reset=0.1
    )
    assert costs.break_even(2.0, 1.0, cost="warm_disk_cache") == 1.0
    assert costs.break_even(2.0, 1.0, cost="after_reset") == 1.0
    assert costs.break_even(2.0, 1.0) == 1.0 and costs.break_even(1.5, 1.0) == 1.0
    assert costs.break_even(1.1, 1.0, cost="fresh_process") == 40.0
    situations = [
        "(a) first compile in a fresh process (includes start-up)",
        "(b) one more function, in a process that compiled before",
        "(c) fresh process, warm on-disk cache",
        "(d) same process after torch.compiler.reset()",
    ]
    values = ["5 s", "1.5 s", "250 ms", "100 ms"]
    assert costs.rows() == [
        {"situation": s, "first call": v} for s, v in zip(situations, values)
    ]
    assert costs._repr_markdown_() == (
        "| situation | first call |\n| --- | ---: |\n"
        + "".join(f"| {s} | {v} |\n" for s, v in zip(situations, values))
    )
    assert costs._repr_html_() == (
        '<table class="gpubook-table"><thead><tr><th>situation</th>'
        "<th>first call</th></tr></thead><tbody>"
        + "".join(
            f"<tr><td>{s}</td><td style='text-align:right'>{v}</td></tr>"
            for s, v in zip(situations, values)
        )
        + "</tbody></table>"
    )
    width = len(situations[0])
    assert str(costs) == "\n".join(
        f"{s:<{width}}  {v}" for s, v in zip(situations, values)
    )
    assert repr(costs) == str(costs)
    hits = CompileCosts(
        fresh_process=5.0,
        another_function=1.5,
        warm_disk_cache=0.25,
        after_reset=0.1,
        cache_hits=(1, 2),
    )
    label = (
        "(c) fresh process, warm on-disk cache (cache hits: FX graph 1, AOTAutograd 2)"
    )
    assert hits.rows()[2] == {"situation": label, "first call": "250 ms"}
    assert str(hits).splitlines()[2] == f"{label}  250 ms"


class FakeFresh:
    """Stands in for gpubook.models.fresh_processes: records the jobs, the files they
    name, and answers with results or an error."""

    def __init__(self, results=None, error=None):
        self.results, self.error, self.calls = results, error, []

    def __call__(self, jobs, timeout):
        specs = []
        for setup, code, _ in jobs:
            namespace = {}
            exec(setup.split("\n", 1)[0], namespace)  # the first line: SPEC = {...}
            specs.append(namespace["SPEC"])
        folder = specs[0]["folder"]
        module = open(f"{folder}/gpubook_cc_setup.py", encoding="utf-8").read()
        self.calls.append(
            {"jobs": jobs, "timeout": timeout, "specs": specs, "module": module}
        )
        if self.error is not None:
            raise self.error
        return self.results


def test_run_children_runs_three_jobs_with_their_caches(monkeypatch, tmp_path):
    from gpubook import models

    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    fake = FakeFresh(results=[{"first_call": 1.5}] * 3)
    monkeypatch.setattr(models, "fresh_processes", fake)
    specs = [
        {"setup": "x = 1\n", "fn": "fn", "args": "args", "options": "", "n": n}
        for n in range(3)
    ]
    caches = ["a", "b", "b"]
    assert timing._run_children(specs, caches, 12.0) == [{"first_call": 1.5}] * 3
    (call,) = fake.calls
    assert call["timeout"] == 12.0 and call["module"] == "x = 1\n"
    assert [job[2] for job in call["jobs"]] == caches
    assert [spec["n"] for spec in call["specs"]] == [0, 1, 2]
    assert all("setup" not in spec for spec in call["specs"])
    for setup, code, _ in call["jobs"]:
        assert setup.endswith(timing._CHILD_SETUP) and code == timing._CHILD_MEASURE
    assert list(work.iterdir()) == []  # every file lived in a temporary folder
    assert not (tmp_path / call["specs"][0]["folder"]).exists()


def test_run_children_reports_failures_and_timeouts(monkeypatch):
    from gpubook import models

    spec = {"setup": "x = 1\n", "fn": "fn", "args": "args", "options": ""}
    failed = models.FreshProcessError("the fresh process failed (exit 3)", 3, "tail")
    monkeypatch.setattr(models, "fresh_processes", FakeFresh(error=failed))
    with pytest.raises(RuntimeError) as caught:
        timing._run_children([spec], ["a"], 5.0)
    assert str(caught.value).startswith("the compile-cost process failed: ")
    assert "exit 3" in str(caught.value)
    stuck = models.FreshProcessError("stuck", timed_out=True)
    monkeypatch.setattr(models, "fresh_processes", FakeFresh(error=stuck))
    with pytest.raises(
        RuntimeError, match="^a compile-cost process took more than 5 s$"
    ):
        timing._run_children([spec], ["a"], 5.0)


def test_compile_costs_builds_the_three_specs(monkeypatch):
    specs = []

    def fake_children(three, caches, timeout):
        specs.extend((spec, timeout) for spec in three)
        done = {"first_call": 1.0, "warm_up": 0.5, "after_reset": 0.25}
        return [done, done, {**done, "cache_hits": [3, 4]}]

    monkeypatch.setattr(timing, "_run_children", fake_children)
    costs = timing.compile_costs(
        "    def f(x):\n        return x\n    xs = (1,)\n",
        fn="f",
        args="xs",
        options="dict(dynamic=False)",
        timeout=30,
        label="L",
    )
    assert costs.label == "L" and costs.warm_up == 0.5 and costs.cache_hits == (3, 4)
    assert costs.warm_disk_cache == 1.0 and costs.another_function == 1.0
    first = specs[0][0]
    assert first["setup"] == "def f(x):\n    return x\nxs = (1,)\n"
    assert (first["fn"], first["args"]) == ("f", "xs")
    assert first["options"] == "dict(dynamic=False)"
    assert [t for _, t in specs] == [30, 30, 30]
    timing.compile_costs("fn = len\nargs = ('a',)")
    assert specs[-1][0]["options"] == "" and specs[-1][1] == 900
    assert (specs[-1][0]["fn"], specs[-1][0]["args"]) == ("fn", "args")


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"setup": " "}, ValueError, "^setup must be a non-empty string"),
        ({"fn": ""}, ValueError, "^fn must be a non-empty string"),
        ({"args": 3}, ValueError, "args must be a non-empty string"),
        (
            {"options": {"mode": "x"}},
            TypeError,
            "^options must be a string holding a Python expression, or None$",
        ),
        ({"timeout": 0}, ValueError, "timeout"),
    ],
)
def test_compile_costs_checks_its_arguments(monkeypatch, kwargs, error, message):
    monkeypatch.setattr(timing, "_run_children", lambda *a: pytest.fail("ran a child"))
    kwargs = {"setup": "fn = len\nargs = ('a',)", **kwargs}
    with pytest.raises(error, match=message):
        timing.compile_costs(**kwargs)


def test_warm_up_compiler_compiles_a_probe_once_per_device(monkeypatch, clock):
    from gpubook import profiles

    compiled, results = [], []

    def fake_compile(fn, **options):
        compiled.append(options)
        clock.now += 2.0  # the call itself imports the compiler: inside the clock

        def run(x):
            clock.now += 0.5
            results.append((x.shape, x.device.type, float(fn(x))))

        return run

    monkeypatch.setattr(timing, "_WARMED", set())
    monkeypatch.setattr(torch, "compile", fake_compile)
    monkeypatch.setattr(profiles, "pick_device", lambda: torch.device("cpu"))
    assert timing.warm_up_compiler() == 2.5
    assert results == [(torch.Size([16]), "cpu", 48.0)]  # relu(2 * 1 + 1) * 16
    assert timing.warm_up_compiler("cpu") == 0.0
    assert timing.warm_up_compiler(torch.device("cpu:0")) == 2.5
    assert len(compiled) == 2 and timing._WARMED == {"cpu", "cpu:0"}


def test_compile_report_numbers_and_text():
    eager = Timing(times=(4e-3,), mode="latency")
    compiled = Timing(times=(1e-3,), mode="latency")
    report = CompileReport(eager=eager, compiled=compiled, first_call=1.003)
    assert report.speedup == 4.0 and report.break_even == 334.0
    assert str(report) == (
        "eager 4 ms, compiled 1 ms per call (latency): 4.00x; first compiled call in "
        "this process 1 s; compiling pays off after 334 calls"
    )
    slow = CompileReport(eager=compiled, compiled=eager, first_call=1.0)
    assert slow.break_even == math.inf and str(slow).endswith("pays off never")
    with_ratio = CompileReport(eager, compiled, 1.0, speedup_ratio=Ratio(4, 3, 5))
    assert ": 4.00x [3.00x, 5.00x]: faster; first" in str(with_ratio)


def test_eager_vs_compiled_compiles_once_and_compares_interleaved(monkeypatch, clock):
    options_seen = []

    def fake_compile(fn, **options):
        options_seen.append(options)

        def compiled(x):
            clock.log.append("compiled")
            clock.now += MS

        return compiled

    def eager(x):
        clock.log.append("eager")
        clock.now += 2 * MS

    monkeypatch.setattr(torch, "compile", fake_compile)
    report = timing.eager_vs_compiled(
        eager, 1, mode="latency", min_run_time=MS, backend="eager"
    )
    assert options_seen == [{"backend": "eager"}] and report.options == {
        "backend": "eager"
    }
    assert report.first_call == MS and clock.log[0] == "compiled"
    assert report.eager.mode == report.compiled.mode == "latency"
    assert report.eager.n == report.compiled.n == 10
    assert report.speedup == 2.0 and report.speedup_ratio.estimate == 2.0
    assert report.speedup_ratio.label == "compiled"
    with pytest.raises(TypeError, match="callable"):
        timing.eager_vs_compiled(3)


def test_threads_limits_torch_and_the_blas_pools(monkeypatch):
    import threadpoolctl

    seen = []

    class Limits:
        def __init__(self, limits):
            seen.append(("limits", limits))

        def __enter__(self):
            seen.append(("torch", torch.get_num_threads()))

        def __exit__(self, *exc):
            seen.append("exit")
            return False

    monkeypatch.setattr(threadpoolctl, "threadpool_limits", Limits)
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError):
        with timing.threads(1):
            raise RuntimeError
    assert seen == [("limits", 1), ("torch", 1), "exit"]
    assert torch.get_num_threads() == before


def test_measure_checks_before_running(clock):
    for name, value in (("max_samples", 0), ("threads", -1), ("repeats", 0)):
        with pytest.raises(ValueError, match=f"^{name} must"):
            measure(clock.work(MS), **{name: value})
    assert clock.log == []


def test_seeds_margin_matches_the_timing_margin():
    from gpubook import seeds, timing

    assert seeds.MARGIN == timing.MARGIN == Ratio(2.0, 1.9, 2.1).margin

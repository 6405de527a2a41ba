"""Timing device work honestly: two named modes, interleaved comparisons with intervals,
and compile cost as a reader pays it.

Every duration here is in **seconds** unless a name says otherwise (``median_ms``,
``median_us``).

Two timing modes, and every result says which it is:

* **latency** (:func:`latency`): each call is synchronised and timed alone (CUDA events
  on a GPU, ``time.perf_counter`` on the CPU). One sample is one call. This is what a
  caller waiting for one result sees, host overhead included.
* **throughput** (:func:`throughput`): calls run back to back, with one synchronisation
  per block of calls. One sample is the mean time per call of one block; there are at
  least seven independent blocks. This is what a loop of many calls sees: the host can
  queue the next call while the GPU still runs the last one.

The spread always comes from independent samples (single calls, or whole blocks), never
from means of means. :func:`compare` measures two or more variants *interleaved* (A B C,
B C A, ..., so drift hits all of them) and returns each ratio (the median of the
per-round ratios) with a bootstrap interval and a verdict: ``"faster"``, ``"slower"``
or ``"no clear difference"`` when the interval reaches into a margin around 1
(:data:`MARGIN`, 10%). :func:`compile_costs` measures what compiling costs in fresh
processes.
"""

from __future__ import annotations

import contextlib
import html
import itertools
import math
import os
import statistics
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
import torch

from ._checks import positive_int, positive_number

#: The margin around 1 inside which a ratio reads "no clear difference". Two runs of the
#: book on the same kind of H100 (torch 2.11, 2026-11) moved interleaved ratios by a
#: median of about 7% (ch. 3, 4, 5, 6, 8; up to 37% for a host-bound one) while each
#: run's own 95% intervals were narrower: the host's speed drifts between and within
#: runs. With a 5% margin three verdicts flipped between the runs; with 10%, two of them
#: held. A margin is the smallest difference the book calls a difference.
MARGIN = 0.10

#: The longest a throughput block of :func:`compare` lasts (seconds). The lent H100
#: host's per-call CPU cost toggles between two levels about 2x apart from one second to
#: the next (0% steal, an idle guest; tools/diag/host_probe.py), so a round of samples
#: must be short for both variants of a pair to see the same host: with 100-call blocks
#: of about 4 ms, chapter 4's host-bound static/dynamic ratio repeated as 0.821 to 0.829
#: with intervals about 0.01 wide in four comparisons, where blocks of a tenth of the
#: run time gave intervals 0.02 to 0.10 wide (tools/diag/pairing.py, 2026-11-26).
BLOCK_SECONDS = 0.005

#: The fewest calls a throughput block of :func:`compare` holds where the run time
#: allows it (blocks up to a tenth of ``min_run_time``). A block pays its first call's
#: host work and its last call's GPU time without overlap; with three or four calls per
#: block (a 1.4 ms call in 5 ms), a compiled `reduce-overhead` BERT call, whose host
#: work per call is large, measured 1.43 ms against 1.07 ms in 100 ms blocks, and its
#: verdict against a hand-made CUDA graph flipped (chapter 7, check run of 2026-11-26).
#: With 20 calls that cost is spread over twenty.
MIN_BLOCK_CALLS = 20

__all__ = [
    "MODES",
    "counted",
    "joined",
    "Timing",
    "Ratio",
    "Comparison",
    "CompileCosts",
    "CompileReport",
    "latency",
    "throughput",
    "measure",
    "compare",
    "ratio",
    "compile_costs",
    "warm_up_compiler",
    "default_min_run_time",
    "time_once",
    "time_each",
    "eager_vs_compiled",
    "break_even_calls",
    "threads",
    "format_seconds",
    "format_interval",
    "format_ratio_interval",
    "format_range",
    "format_ratio",
]

MODES = ("latency", "throughput")
"""The two timing modes: each call timed alone, or calls back to back in blocks."""

_now = time.perf_counter  # the host clock (tests replace it with a scripted one)

BOOTSTRAP_RESAMPLES = 2000
"""Resamples behind every interval :class:`Ratio` reports."""


def _check_callable(fn: Any, name: str = "fn") -> None:
    if not callable(fn):
        raise TypeError(f"{name} must be callable, got {type(fn).__name__}")


def _cuda_in_use() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_initialized()


def _synchronize_all() -> None:
    if _cuda_in_use():
        torch.cuda.synchronize()


def default_min_run_time() -> float:
    """Seconds of measurement per variant for the active profile: ``gpu`` 1.0, ``cpu``
    0.5, ``ci`` 0.05. Published (``gpu``) figures measure about a second per variant."""
    from .profiles import sizes

    return sizes(gpu=1.0, cpu=0.5, ci=0.05)


# --- Formatting -----------------------------------------------------------------------


def format_seconds(seconds: float, digits: int = 3) -> str:
    """A duration with a unit a reader can take in: ``'812 µs'``, ``'2.4 s'``.

    The unit is chosen after rounding to ``digits`` significant digits (three by
    default), so 0.9996 s reads ``'1 s'``, never ``'1e+03 ms'``.
    """
    if not math.isfinite(seconds):
        return str(seconds)
    rounded = abs(float(f"{seconds:.{digits}g}"))
    sign = "-" if seconds < 0 else ""
    if rounded >= 1000:
        return f"{sign}{rounded:,.0f} s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if rounded >= scale:
            return f"{sign}{rounded / scale:.{digits}g} {unit}"
    return f"{sign}{rounded * 1e9:.{digits}g} ns"


def _fewest_digits(values: tuple, text: Callable[[float, int], str]) -> tuple:
    """``text(value, digits)`` for each value at the fewest significant digits, three
    or four, that print every two different values differently (at four, values that
    still print alike are left so: a fifth digit claims more than a re-run holds)."""
    for digits in range(3, 5):
        texts = tuple(text(value, digits) for value in values)
        if all(
            texts[i] != texts[j]
            for i, j in itertools.combinations(range(len(values)), 2)
            if values[i] != values[j]
        ):
            break
    return texts


def format_range(low: float, high: float) -> str:
    """``'21.3 ms to 21.6 ms'``: two durations, with four significant digits where
    three would print two different values alike (``'21.52 ms to 21.54 ms'``)."""
    return " to ".join(_fewest_digits((low, high), format_seconds))


def format_ratio(ratio: float, digits: int = 3, *, keep_zeros: bool = False) -> str:
    """A speedup or ratio to ``digits`` significant digits (three by default), never in
    exponent form: ``'0.944'``, ``'11.9'``, ``'296'``, ``'1,510'``, ``'14,500'``.
    ``keep_zeros`` keeps trailing zeros (``'0.740'``, ``'1.00'``), for numbers printed
    side by side."""
    if not math.isfinite(ratio):
        return str(ratio)
    rounded = float(f"{ratio:.{digits}g}")
    if abs(rounded) >= 1000:
        return f"{rounded:,.0f}"
    text = f"{rounded:#.{digits}g}" if keep_zeros else f"{rounded:.{digits}g}"
    return text.rstrip(".")


def format_interval(estimate: float, low: float, high: float) -> tuple[str, str, str]:
    """An estimate and its interval's ends as three texts with the same number of
    significant digits, trailing zeros kept: three digits, or four where three would
    print two different values alike (``1.695`` and ``1.698`` both as ``'1.70'``), so
    that an estimate never seems to lie outside its interval; never more than four
    (``'1.535x [1.535, 1.536]'``: a fifth digit claims more than a re-run holds)."""
    return _fewest_digits(
        (estimate, low, high),
        lambda value, digits: format_ratio(value, digits, keep_zeros=True),
    )


def format_ratio_interval(
    estimate: float, low: float, high: float, sign: str = "x"
) -> str:
    """``'2.31x [2.20x, 2.45x]'``: :func:`format_interval`'s three texts, each followed
    by ``sign`` (``'×'`` on the book's pages)."""
    texts = format_interval(estimate, low, high)
    return "{}{s} [{}{s}, {}{s}]".format(*texts, s=sign)


def counted(count: float, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: ``'1 kernel'``, ``'2 kernels'``,
    ``'1.5 kernels'``, ``'0 processes'``. ``plural`` overrides the regular plural
    (``noun + 's'``, or ``+ 'es'`` after s, x, ch and sh)."""
    if not isinstance(noun, str) or not noun:
        raise ValueError(f"noun must be a non-empty string, got {noun!r}")
    if isinstance(count, bool) or not isinstance(count, (int, float)):
        raise TypeError(f"count must be a number, got {type(count).__name__}")
    if plural is None:
        plural = noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")
    text = f"{count:,.0f}" if float(count).is_integer() else f"{count:.3g}"
    return f"{text} {noun if count == 1 else plural}"


def joined(items: Sequence[str]) -> str:
    """Items as prose: ``'a'``, ``'a and b'``, ``'a, b and c'``; ``''`` for none."""
    items = list(items)
    if not all(isinstance(item, str) for item in items):
        raise TypeError("items must be strings")
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# --- Statistics -----------------------------------------------------------------------


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _median_interval(values: Sequence[float], confidence: float) -> tuple[float, float]:
    """Distribution-free interval for the median from order statistics (binomial
    ranks)."""
    ordered = sorted(values)
    n = len(ordered)
    if n < 6:
        return ordered[0], ordered[-1]
    alpha = 1 - confidence
    if n <= 1000:
        cdf, total, low_rank = 0.0, 2.0**-n, 0
        for k in range(n + 1):
            cdf += math.comb(n, k) * total
            if cdf > alpha / 2:
                low_rank = k
                break
    else:
        z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
        low_rank = max(0, int(math.floor(n / 2 - z * math.sqrt(n) / 2)))
    high_rank = n - 1 - low_rank
    return ordered[max(low_rank - 1, 0)], ordered[min(high_rank + 1, n - 1)]


@dataclass(frozen=True)
class Timing:
    """Time per call, in seconds, from independent samples.

    ``times`` holds one value per sample. In ``latency`` mode a sample is one
    synchronised call; in ``throughput`` mode it is the mean time per call of one block
    of ``calls_per_block`` back-to-back calls, synchronised once at its end.
    """

    times: tuple[float, ...]
    calls_per_block: int = 1
    label: str = ""
    mode: str = "throughput"

    def __post_init__(self) -> None:
        if not self.times:
            raise ValueError("times must hold at least one measurement")
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        for value in self.times:
            positive_number("times", value, allow_zero=True)

    @property
    def median(self) -> float:
        """Median time per call, seconds."""
        return statistics.median(self.times)

    @property
    def q25(self) -> float:
        """25th percentile of the time per call, seconds."""
        return _quantile(self.times, 0.25)

    @property
    def q75(self) -> float:
        """75th percentile of the time per call, seconds."""
        return _quantile(self.times, 0.75)

    @property
    def iqr(self) -> float:
        """Interquartile range (spread) of the time per call, seconds."""
        return self.q75 - self.q25

    @property
    def median_ms(self) -> float:
        """Median time per call, milliseconds."""
        return self.median * 1e3

    @property
    def median_us(self) -> float:
        """Median time per call, microseconds."""
        return self.median * 1e6

    @property
    def n(self) -> int:
        """Number of independent samples."""
        return len(self.times)

    @property
    def calls(self) -> int:
        """Number of timed calls behind the samples."""
        return self.n * self.calls_per_block

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Interval for the median time per call (order statistics; no distribution
        assumed)."""
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
        return _median_interval(self.times, confidence)

    def describe(self) -> str:
        """How it was measured, in words: mode and samples."""
        if self.mode == "latency":
            return f"latency, median of {self.n} synchronised calls"
        return f"throughput, median of {self.n} blocks of {self.calls_per_block} calls"

    def __str__(self) -> str:
        head = f"{self.label}: " if self.label else ""
        return (
            f"{head}{format_seconds(self.median)} per call ({self.describe()}; IQR "
            f"{format_range(self.q25, self.q75)})"
        )


@dataclass(frozen=True)
class Ratio:
    """``baseline time / variant time`` with an interval: above 1, the variant is
    faster.

    ``low`` and ``high`` bound a bootstrap interval (95% by default). The
    :attr:`verdict` is ``"faster"`` when the whole interval lies above ``1 + margin``,
    ``"slower"`` when it lies below ``1 / (1 + margin)``, and ``"no clear difference"``
    otherwise: a difference that the interval cannot tell from :data:`MARGIN` (10%) is
    reported as none.
    """

    estimate: float
    low: float
    high: float
    margin: float = MARGIN
    confidence: float = 0.95
    label: str = ""
    baseline: str = ""

    def __post_init__(self) -> None:
        for name in ("estimate", "low", "high"):
            positive_number(name, getattr(self, name))
        positive_number("margin", self.margin, allow_zero=True)
        if not self.low <= self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")

    @property
    def verdict(self) -> str:
        """``"faster"``, ``"slower"`` or ``"no clear difference"`` (the variant vs the
        baseline)."""
        if self.low > 1 + self.margin:
            return "faster"
        if self.high < 1 / (1 + self.margin):
            return "slower"
        return "no clear difference"

    @property
    def clear(self) -> bool:
        """Whether the interval shows a difference beyond the margin."""
        return self.verdict != "no clear difference"

    def says(
        self,
        faster: str = "faster",
        slower: str = "slower",
        same: str = "no clear difference",
    ) -> str:
        """The words for the verdict, to glue into prose: ``r.says("beat", "lost to",
        "tied")``."""
        return {"faster": faster, "slower": slower}.get(self.verdict, same)

    def not_slower(self, holds: str, slower: str, unclear: str) -> str:
        """One-sided words, for a variant whose gain repeats in direction but not in
        size (a host-bound pair whose two-sided verdict moves between runs): ``holds``
        when the whole interval lies at or above 1 (the variant was not slower),
        ``slower`` when it lies below 1, ``unclear`` when it straddles 1. The margin
        plays no part, on either side: a loss inside it is still a loss, as a gain
        inside it still holds. Each is true of this run, whichever side of the
        margin the ratio falls."""
        if self.low >= 1:
            return holds
        return slower if self.high < 1 else unclear

    def not_faster(self, holds: str, faster: str, unclear: str) -> str:
        """The mirror of :meth:`not_slower`: ``holds`` when the whole interval lies at
        or below 1 (the variant was not faster), ``faster`` when it lies above 1,
        ``unclear`` when it straddles 1."""
        if self.high <= 1:
            return holds
        return faster if self.low > 1 else unclear

    def __float__(self) -> float:
        return float(self.estimate)

    def __format__(self, spec: str) -> str:
        return format(self.estimate, spec) if spec else str(self)

    @property
    def interval_text(self) -> str:
        """The estimate and its interval without the verdict, ``'2.31x [2.20x,
        2.45x]'``, for a sentence that says the verdict in its own words."""
        return format_ratio_interval(self.estimate, self.low, self.high)

    def __str__(self) -> str:
        return f"{self.interval_text}: {self.verdict}"


def _bootstrap(
    baseline: np.ndarray,
    variant: np.ndarray,
    paired: bool,
    confidence: float,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(baseline) / median(variant), or, when
    ``paired``, of the median of the per-round ratios baseline / variant (rounds
    resampled whole)."""
    rng = np.random.default_rng(seed)
    resamples = BOOTSTRAP_RESAMPLES
    chunk = max(1, min(resamples, 2_000_000 // max(len(baseline), len(variant), 1)))
    per_round = baseline / np.maximum(variant, 1e-30) if paired else None
    ratios = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        rows = rng.integers(0, len(baseline), size=(size, len(baseline)))
        if per_round is not None:
            ratios.append(np.median(per_round[rows], axis=1))
            continue
        cols = rng.integers(0, len(variant), size=(size, len(variant)))
        base = np.median(baseline[rows], axis=1)
        other = np.median(variant[cols], axis=1)
        ratios.append(base / np.maximum(other, 1e-30))
    values = np.concatenate(ratios)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def ratio(
    baseline: Timing,
    other: Timing,
    margin: float = MARGIN,
    confidence: float = 0.95,
    paired: bool = False,
) -> Ratio:
    """``baseline.median / other.median`` with a bootstrap interval and a verdict.

    Use it for timings that could not be measured interleaved (say, with a process
    setting that must change in between); :func:`compare` pairs its samples round by
    round instead. ``paired=True`` requires the same number of samples, taken in the
    same rounds, and then the estimate is the median of the per-round ratios: each
    round's two samples saw the same state of the host, so a host that changes speed
    between rounds moves both sides of a ratio, not the ratio.
    """
    if not isinstance(baseline, Timing) or not isinstance(other, Timing):
        raise TypeError("baseline and other must be Timing objects")
    positive_number("margin", margin, allow_zero=True)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    if paired and baseline.n != other.n:
        raise ValueError("paired timings need the same number of samples")
    base = np.asarray(baseline.times, dtype=float)
    var = np.asarray(other.times, dtype=float)
    if base.min() <= 0 or var.min() <= 0:
        raise ValueError("timings must be positive to form a ratio")
    low, high = _bootstrap(base, var, paired, confidence)
    estimate = (
        float(np.median(base / var)) if paired else baseline.median / other.median
    )
    return Ratio(
        estimate=estimate,
        low=min(low, estimate),
        high=max(high, estimate),
        margin=margin,
        confidence=confidence,
        label=other.label,
        baseline=baseline.label,
    )


# --- Taking samples -------------------------------------------------------------------


def _cache_bytes() -> int:
    """Bytes a flush must write to push a working set out of the last-level cache (2x
    its size)."""
    if _cuda_in_use():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        size = getattr(props, "L2_cache_size", 0) or 64 * 2**20
        return 2 * int(size)
    for index in (3, 2):
        path = f"/sys/devices/system/cpu/cpu0/cache/index{index}/size"
        try:
            text = open(path, encoding="ascii").read().strip().upper()
        except OSError:
            continue
        factor = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            return 2 * int(digits) * factor
    return 2 * 64 * 2**20


class _Sampler:
    """Takes samples of one callable in one mode; shared by :func:`measure` and
    :func:`compare`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple,
        kwargs: dict,
        mode: str,
        flush_l2: bool,
    ):
        self.fn, self.args, self.kwargs, self.mode = fn, args, kwargs, mode
        self.calls_per_block = 1
        self.flush = None
        self.events = None
        if flush_l2:
            if mode != "latency":
                raise ValueError(
                    "flush_l2 needs mode='latency': a flush between calls in a block "
                    "would be timed with them"
                )
            device = "cuda" if _cuda_in_use() else "cpu"
            self.flush = torch.empty(_cache_bytes(), dtype=torch.int8, device=device)

    def call(self) -> None:
        self.fn(*self.args, **self.kwargs)

    def one_call(self) -> float:
        """One synchronised call, seconds (CUDA events when CUDA is in use)."""
        if self.flush is not None:
            self.flush.zero_()
        if _cuda_in_use():
            if self.events is None:
                self.events = (
                    torch.cuda.Event(enable_timing=True),
                    torch.cuda.Event(enable_timing=True),
                )
            start, end = self.events
            torch.cuda.synchronize()
            start.record()
            self.call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        begin = _now()
        self.call()
        return _now() - begin

    def calibrate(
        self, target_seconds: float, min_calls: int = 1, max_seconds: float = math.inf
    ) -> None:
        """Choose the block size so that one block lasts about ``target_seconds``, and
        holds at least ``min_calls`` calls as long as that stays within
        ``max_seconds``."""
        if self.mode == "latency":
            return
        one = max(self.one_call(), 1e-7)
        room = min_calls if max_seconds == math.inf else int(max_seconds / one)
        self.calls_per_block = max(1, int(target_seconds / one), min(min_calls, room))

    def sample(self) -> float:
        """One independent sample: seconds per call (one call, or the mean of one
        block)."""
        if self.mode == "latency":
            return self.one_call()
        _synchronize_all()
        begin = _now()
        for _ in range(self.calls_per_block):
            self.call()
        _synchronize_all()
        return (_now() - begin) / self.calls_per_block


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def _run_time(min_run_time: float | None) -> float:
    if min_run_time is None:
        return default_min_run_time()
    return positive_number("min_run_time", min_run_time)


def measure(
    fn: Callable[..., Any],
    *args: Any,
    mode: str = "throughput",
    warmup: int = 3,
    repeats: int | None = None,
    min_run_time: float | None = None,
    max_samples: int = 10_000,
    flush_l2: bool = False,
    threads: int | None = None,
    label: str = "",
    **kwargs: Any,
) -> Timing:
    """Time ``fn(*args, **kwargs)`` in steady state; return a :class:`Timing` (seconds).

    ``warmup`` calls run first and are not counted (they trigger compilation, cuBLAS
    heuristics, caches). Then samples are taken in ``mode`` (see the module docstring)
    until there are at least ``repeats`` samples (default: 10 calls in latency mode, 7
    blocks in throughput mode) and at least ``min_run_time`` seconds were timed
    (default: :func:`default_min_run_time`), or ``max_samples`` samples were taken. In
    throughput mode a block lasts about a tenth of ``min_run_time``. ``flush_l2``
    (latency only) writes a buffer of twice the last-level cache before each call, so
    memory-bound work cannot run from cache. ``threads`` sets PyTorch's CPU thread count
    for the measurement and restores it after.
    """
    _check_callable(fn)
    _check_mode(mode)
    positive_int("warmup", warmup, allow_zero=True)
    repeats = (
        positive_int("repeats", repeats)
        if repeats is not None
        else (10 if mode == "latency" else 7)
    )
    run_time = _run_time(min_run_time)
    positive_int("max_samples", max_samples)
    if threads is not None:
        positive_int("threads", threads)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads or previous_threads)
    try:
        sampler = _Sampler(fn, args, kwargs, mode, flush_l2)
        for _ in range(warmup):
            sampler.call()
        _synchronize_all()
        sampler.calibrate(run_time / 10)
        times: list[float] = []
        total = 0.0
        while (len(times) < repeats or total < run_time) and len(times) < max(
            max_samples, repeats
        ):
            seconds = sampler.sample()
            times.append(seconds)
            total += seconds * sampler.calls_per_block
    finally:
        torch.set_num_threads(previous_threads)
    return Timing(
        times=tuple(times),
        calls_per_block=sampler.calls_per_block,
        label=label,
        mode=mode,
    )


def latency(fn: Callable[..., Any], *args: Any, **options: Any) -> Timing:
    """:func:`measure` in ``latency`` mode: each call synchronised and timed alone."""
    return measure(fn, *args, mode="latency", **options)


def throughput(
    fn: Callable[..., Any], *args: Any, blocks: int = 7, **options: Any
) -> Timing:
    """:func:`measure` in ``throughput`` mode: at least ``blocks`` blocks of
    back-to-back calls."""
    return measure(fn, *args, mode="throughput", repeats=blocks, **options)


# --- Comparing variants ---------------------------------------------------------------


class Comparison:
    """Variants measured interleaved: their :class:`Timing` and ratios to a baseline.

    ``ratio(label)`` is ``baseline time / label's time`` (above 1: faster than the
    baseline): the median over the rounds of each round's ratio, with a bootstrap
    interval over the rounds. Shown in a notebook, it renders as a table.
    """

    def __init__(
        self,
        timings: dict[str, Timing],
        baseline: str,
        margin: float,
        confidence: float = 0.95,
    ):
        self.timings = timings
        self.baseline = baseline
        self.margin = margin
        self.confidence = confidence
        self._ratios: dict[str, Ratio] = {}

    @property
    def mode(self) -> str:
        return self.timings[self.baseline].mode

    def ratio(self, label: str) -> Ratio:
        """The median of the per-round ratios ``baseline / label``, with its interval
        and verdict."""
        if label not in self.timings:
            raise KeyError(f"no variant {label!r}; variants: {list(self.timings)}")
        if label not in self._ratios:
            self._ratios[label] = ratio(
                self.timings[self.baseline],
                self.timings[label],
                self.margin,
                self.confidence,
                paired=True,
            )
        return self._ratios[label]

    @property
    def ratios(self) -> dict[str, Ratio]:
        """Every variant's ratio to the baseline (the baseline itself left out)."""
        return {
            label: self.ratio(label) for label in self.timings if label != self.baseline
        }

    @property
    def fastest(self) -> str:
        """The label with the smallest median (say it only if its verdict is clear)."""
        return min(self.timings, key=lambda label: self.timings[label].median)

    def __getitem__(self, label: str) -> Timing:
        return self.timings[label]

    def rows(self) -> list[dict[str, str]]:
        """One dict of display strings per variant."""
        rows = []
        for label, timing in self.timings.items():
            row = {
                "variant": label,
                "median": format_seconds(timing.median),
                "IQR": format_range(timing.q25, timing.q75),
            }
            if label == self.baseline:
                row["vs " + self.baseline] = "baseline"
                row["verdict"] = ""
            else:
                r = self.ratio(label)
                estimate, low, high = format_interval(r.estimate, r.low, r.high)
                row["vs " + self.baseline] = f"{estimate}x [{low}, {high}]"
                row["verdict"] = r.verdict
            rows.append(row)
        return rows

    def _caption(self) -> str:
        timing = self.timings[self.baseline]
        what = (
            "latency: each call synchronised and timed alone"
            if self.mode == "latency"
            else "throughput: blocks of back-to-back calls"
        )
        return (
            f"{what}; {timing.n} interleaved rounds; ratio = median over the rounds "
            f"of {self.baseline} time / variant time, with a {self.confidence:.0%} "
            f"bootstrap interval; within ±{self.margin:.0%} counts as no clear "
            "difference"
        )

    def _repr_markdown_(self) -> str:
        rows = self.rows()
        head = list(rows[0])

        def cell(text: str) -> str:  # a "|" in a label would end the cell
            return text.replace("|", "\\|")

        lines = [
            "| " + " | ".join(cell(key) for key in head) + " |",
            "|" + "|".join(" --- " for _ in head) + "|",
        ]
        lines += [
            "| " + " | ".join(cell(row[key]) for key in head) + " |" for row in rows
        ]
        return "\n".join(lines) + f"\n\n*{self._caption()}*\n"

    def _repr_html_(self) -> str:
        rows = self.rows()
        head = list(rows[0])
        cells = "".join(f"<th>{html.escape(key)}</th>" for key in head)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(row[key])}</td>" for key in head)
            + "</tr>"
            for row in rows
        )
        return (
            f'<table class="gpubook-table"><thead><tr>{cells}</tr></thead>'
            f"<tbody>{body}</tbody></table><p><em>{html.escape(self._caption())}</em></p>"
        )

    def __str__(self) -> str:
        rows = self.rows()
        head = list(rows[0])
        widths = {key: max(len(key), *(len(row[key]) for row in rows)) for key in head}
        lines = ["  ".join(key.ljust(widths[key]) for key in head)]
        lines += [
            "  ".join(row[key].ljust(widths[key]) for key in head) for row in rows
        ]
        return "\n".join(line.rstrip() for line in lines) + f"\n({self._caption()})"

    __repr__ = __str__


def compare(
    variants: Mapping[str, Callable[..., Any]]
    | Sequence[tuple[str, Callable[..., Any]]],
    *args: Any,
    mode: str = "throughput",
    baseline: str | None = None,
    margin: float = MARGIN,
    min_run_time: float | None = None,
    warmup: int = 3,
    rounds: int | None = None,
    max_rounds: int = 10_000,
    flush_l2: bool = False,
    confidence: float = 0.95,
    **kwargs: Any,
) -> Comparison:
    """Measure ``variants`` (label -> callable, each called as ``fn(*args, **kwargs)``)
    interleaved, and compare each with ``baseline`` (default: the first).

    Each round takes one sample of every variant (one call in ``latency`` mode, one
    block in ``throughput`` mode, a tenth of ``min_run_time`` long but at most
    :data:`BLOCK_SECONDS`, and at least :data:`MIN_BLOCK_CALLS` calls where a tenth of
    ``min_run_time`` holds them), starting with a different variant each round, so drift
    (clocks, temperature, other work, the host's speed) hits all of them alike and each
    ratio is taken within a round. Rounds continue until there are at least ``rounds``
    of them (default: 10 in latency mode, 7 in throughput mode) and the samples add up
    to ``min_run_time`` seconds per variant on average, or ``max_rounds`` is reached.
    Variants run ``warmup`` times each first (compiled variants compile there).
    """
    items = list(variants.items()) if isinstance(variants, Mapping) else list(variants)
    if len(items) < 2:
        raise ValueError("compare needs at least two variants")
    labels = [label for label, _ in items]
    if len(set(labels)) != len(labels):
        raise ValueError(f"variant labels must be unique, got {labels}")
    for label, fn in items:
        if not isinstance(label, str):
            raise TypeError(f"variant labels must be strings, got {label!r}")
        _check_callable(fn, f"variant {label!r}")
    baseline = labels[0] if baseline is None else baseline
    if baseline not in labels:
        raise ValueError(f"baseline {baseline!r} is not one of the variants {labels}")
    _check_mode(mode)
    positive_number("margin", margin, allow_zero=True)
    positive_int("warmup", warmup, allow_zero=True)
    run_time = _run_time(min_run_time)
    min_rounds = (
        positive_int("rounds", rounds)
        if rounds is not None
        else (10 if mode == "latency" else 7)
    )
    positive_int("max_rounds", max_rounds)
    samplers = {
        label: _Sampler(fn, args, kwargs, mode, flush_l2) for label, fn in items
    }
    for _ in range(warmup):
        for sampler in samplers.values():
            sampler.call()
    _synchronize_all()
    for sampler in samplers.values():
        sampler.calibrate(
            min(run_time / 10, BLOCK_SECONDS),
            MIN_BLOCK_CALLS,
            max_seconds=run_time / 10,
        )
    samples: dict[str, list[float]] = {label: [] for label in labels}
    total = 0.0
    done = 0
    while done < max(min_rounds, 1) or (
        total < run_time * len(labels) and done < max_rounds
    ):
        shift = done % len(labels)
        for label in labels[shift:] + labels[:shift]:
            seconds = samplers[label].sample()
            samples[label].append(seconds)
            total += seconds * samplers[label].calls_per_block
        done += 1
    timings = {
        label: Timing(
            times=tuple(samples[label]),
            calls_per_block=samplers[label].calls_per_block,
            label=label,
            mode=mode,
        )
        for label in labels
    }
    return Comparison(timings, baseline, margin, confidence)


# --- Single calls and sequences -------------------------------------------------------


def time_once(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """Run ``fn(*args, **kwargs)`` once; return ``(seconds, result)``, synchronised on
    CUDA.

    Use it for a first call, whose time includes compilation and is not a steady-state
    figure.
    """
    _check_callable(fn)
    _synchronize_all()
    start = _now()
    result = fn(*args, **kwargs)
    _synchronize_all()
    return _now() - start, result


def time_each(fn: Callable[..., Any], calls: Iterable[Sequence[Any]]) -> list[float]:
    """Time ``fn(*call)`` for each argument tuple in ``calls``, one synchronised call at
    a time.

    Returns the list of seconds, in order: the per-call latency over a sequence, first
    calls (and recompilations) included.
    """
    _check_callable(fn)
    seconds = []
    for call in calls:
        if not isinstance(call, (tuple, list)):
            raise TypeError(
                "each item of calls must be a tuple of arguments, got "
                f"{type(call).__name__}"
            )
        elapsed, _ = time_once(fn, *call)
        seconds.append(elapsed)
    if not seconds:
        raise ValueError("calls must hold at least one argument tuple")
    return seconds


def break_even_calls(
    compile_seconds: float, eager_seconds: float, compiled_seconds: float
) -> float:
    """How many calls it takes for a compiled function to repay its first (compiling)
    call.

    ``compile_seconds`` is the time of the compiled function's first call (compilation
    plus one run); ``eager_seconds`` and ``compiled_seconds`` are steady-state times per
    call. After ``n`` calls the compiled version has cost ``compile_seconds + (n - 1) *
    compiled_seconds`` and eager ``n * eager_seconds``. Returns the smallest such ``n``
    (at least 1) where compiled is no more expensive, or ``math.inf`` when the compiled
    call is not faster.
    """
    positive_number("compile_seconds", compile_seconds, allow_zero=True)
    positive_number("eager_seconds", eager_seconds, allow_zero=True)
    positive_number("compiled_seconds", compiled_seconds, allow_zero=True)
    if compiled_seconds >= eager_seconds:
        return math.inf
    return float(
        max(
            1,
            math.ceil(
                (compile_seconds - compiled_seconds)
                / (eager_seconds - compiled_seconds)
            ),
        )
    )


# --- Compile cost as a reader pays it -------------------------------------------------

# Each compile-cost process: the set-up (importing torch, the reader's module, the
# inputs on the device) runs side by side with the other processes'; the measured part
# runs alone (gpubook.models.fresh_processes). SPEC is the job's settings.
_CHILD_SETUP = textwrap.dedent(
    """
    import sys
    import torch
    sys.path.insert(0, SPEC["folder"])
    # the setup runs as a real module (gpubook_cc_setup.py), as a reader's own script
    # would: Dynamo imports a function's module by name
    import gpubook_cc_setup as _module
    _ns = vars(_module)
    fn = _ns[SPEC["fn"]]
    args = eval(SPEC["args"], _ns)
    args = args if isinstance(args, tuple) else (args,)
    options = eval(SPEC["options"], _ns) if SPEC["options"] else {}
    sync()

    def first_call(fn, args, options):
        # torch.compile inside the clock: in a fresh process that call imports Dynamo
        # and Inductor (8 to 9 s on the book's GPU host with torch 2.11)
        seconds, _ = timed(lambda: torch.compile(fn, **options)(*args))
        return seconds
    """
)
_CHILD_MEASURE = textwrap.dedent(
    """
    result = {}
    if SPEC["warm_up"]:
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), "cpu")
        warm = lambda x: (x * 2.0 + 1.0).relu().sum()
        result["warm_up"] = first_call(warm, (torch.ones(16, device=device),), {})
        wait_for_compile_workers()  # (b): a process past its start-up, workers ready
    result["first_call"] = first_call(fn, args, options)
    from torch._dynamo.utils import counters as _counters

    result["cache_hits"] = [  # what the on-disk caches served (in (c): warm from (b))
        _counters["inductor"]["fxgraph_cache_hit"],
        _counters["aot_autograd"]["autograd_cache_hit"],
    ]
    if SPEC["reset"]:
        torch.compiler.reset()
        result["after_reset"] = first_call(fn, args, options)
    report(**result)
    """
)


def _run_children(specs: list[dict], cache_dirs: list[str], timeout: float) -> list:
    """Run the compile-cost processes: set-ups side by side, measured parts one at a
    time in order, each with its cache folder. Returns what each reported."""
    from .models import FreshProcessError, fresh_processes

    with tempfile.TemporaryDirectory(prefix="gpubook-cc-") as work:
        with open(os.path.join(work, "gpubook_cc_setup.py"), "w") as handle:
            handle.write(specs[0]["setup"])
        jobs = []
        for spec, cache_dir in zip(specs, cache_dirs):
            spec = {**spec, "folder": work}
            spec.pop("setup")
            jobs.append((f"SPEC = {spec!r}\n{_CHILD_SETUP}", _CHILD_MEASURE, cache_dir))
        try:
            return fresh_processes(jobs, timeout=timeout)
        except FreshProcessError as error:
            if error.timed_out:
                raise RuntimeError(
                    f"a compile-cost process took more than {timeout:.0f} s"
                ) from None
            raise RuntimeError(f"the compile-cost process failed: {error}") from None


@dataclass(frozen=True)
class CompileCosts:
    """What the first call of a compiled function costs, in the situations a reader
    meets (seconds; each from the call to ``torch.compile`` to the first result:
    compilation plus one run).

    * ``fresh_process``: (a) the first compile in a fresh Python process with empty
      caches; it includes the compiler's one-time start-up (``torch.compile`` importing
      Dynamo and Inductor, the worker pool); ``import torch`` and the inputs come before
      the clock starts.
    * ``another_function``: (b) a cold compile of this function in a process that has
      already compiled something else: what one more function costs.
    * ``warm_disk_cache``: (c) a fresh process whose on-disk caches (FX graph,
      AOTAutograd, Triton) are warm from (b): what a re-run of the same script costs,
      the compiler's start-up included.
    * ``after_reset``: (d) the process of (b) after ``torch.compiler.reset()``, which
      keeps in-memory kernel caches, so it is cheaper than anything a new process sees.

    ``cache_hits``: in (c), the hits of the FX graph cache and of the AOTAutograd cache
    (PyTorch's ``counters``), so that the table shows the caches did serve it.
    """

    fresh_process: float
    another_function: float
    warm_disk_cache: float
    after_reset: float
    warm_up: float = 0.0
    label: str = ""
    cache_hits: tuple[int, int] | None = None

    def break_even(
        self,
        eager_seconds: float,
        compiled_seconds: float,
        cost: str = "another_function",
    ) -> float:
        """Calls to repay ``cost`` (default (b), one more function) at the given
        per-call times."""
        if cost not in (
            "fresh_process",
            "another_function",
            "warm_disk_cache",
            "after_reset",
        ):
            raise ValueError(f"cost must name one of the four costs, got {cost!r}")
        return break_even_calls(getattr(self, cost), eager_seconds, compiled_seconds)

    def rows(self) -> list[dict[str, str]]:
        return [
            {
                "situation": "(a) first compile in a fresh process (includes start-up)",
                "first call": format_seconds(self.fresh_process),
            },
            {
                "situation": "(b) one more function, in a process that compiled before",
                "first call": format_seconds(self.another_function),
            },
            {
                "situation": "(c) fresh process, warm on-disk cache"
                + (
                    f" (cache hits: FX graph {self.cache_hits[0]}, AOTAutograd"
                    f" {self.cache_hits[1]})"
                    if self.cache_hits is not None
                    else ""
                ),
                "first call": format_seconds(self.warm_disk_cache),
            },
            {
                "situation": "(d) same process after torch.compiler.reset()",
                "first call": format_seconds(self.after_reset),
            },
        ]

    def _repr_markdown_(self) -> str:
        lines = ["| situation | first call |", "| --- | ---: |"]
        lines += [
            f"| {row['situation']} | {row['first call']} |" for row in self.rows()
        ]
        return "\n".join(lines) + "\n"

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{html.escape(r['situation'])}</td>"
            f"<td style='text-align:right'>{r['first call']}</td></tr>"
            for r in self.rows()
        )
        return (
            '<table class="gpubook-table"><thead><tr><th>situation</th>'
            "<th>first call</th>"
            f"</tr></thead><tbody>{body}</tbody></table>"
        )

    def __str__(self) -> str:
        width = max(len(row["situation"]) for row in self.rows())
        return "\n".join(
            f"{row['situation']:<{width}}  {row['first call']}" for row in self.rows()
        )

    __repr__ = __str__


def compile_costs(
    setup: str,
    fn: str = "fn",
    args: str = "args",
    options: str | None = None,
    timeout: float = 900,
    label: str = "",
) -> CompileCosts:
    """Measure the first call of ``torch.compile(fn, **options)(*args)`` in fresh
    processes.

    ``setup`` is Python source, run at the start of each process, that imports what it
    needs and defines the function (named ``fn``) and an expression ``args`` for its
    arguments (a tuple, or one value); ``options`` is an expression for the compile
    options (for example ``"dict(mode='reduce-overhead')"``). Three processes run,
    each with its own empty cache folder except the third; their set-ups (importing
    torch and ``setup``, the inputs) run side by side, their measured first calls one
    after the other, in this order:

    1. a fresh process compiles the function first: (a) ``fresh_process``;
    2. a fresh process compiles a small other function, then this one: (b)
       ``another_function``; then ``torch.compiler.reset()`` and again: (d)
       ``after_reset``;
    3. a fresh process with the on-disk caches of 2: (c) ``warm_disk_cache``.

    Returns a :class:`CompileCosts`. Raises :class:`RuntimeError` with the end of the
    child's error output when a process fails.
    """
    for name, value in (("setup", setup), ("fn", fn), ("args", args)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name} must be a non-empty string of Python source")
    if options is not None and not isinstance(options, str):
        raise TypeError("options must be a string holding a Python expression, or None")
    positive_number("timeout", timeout)
    spec = {
        "setup": textwrap.dedent(setup),
        "fn": fn,
        "args": args,
        "options": options or "",
    }
    with (
        tempfile.TemporaryDirectory(prefix="gpubook-cache-a-") as cold,
        tempfile.TemporaryDirectory(prefix="gpubook-cache-b-") as shared,
    ):
        first, second, third = _run_children(
            [
                {**spec, "warm_up": False, "reset": False},  # (a)
                {**spec, "warm_up": True, "reset": True},  # (b), then (d)
                {**spec, "warm_up": False, "reset": False},  # (c): b's caches
            ],
            [cold, shared, shared],
            timeout,
        )
    return CompileCosts(
        fresh_process=first["first_call"],
        another_function=second["first_call"],
        warm_disk_cache=third["first_call"],
        after_reset=second["after_reset"],
        warm_up=second["warm_up"],
        label=label,
        cache_hits=tuple(third["cache_hits"]) if "cache_hits" in third else None,
    )


_WARMED: set[str] = set()


def warm_up_compiler(device: torch.device | str | None = None) -> float:
    """Compile something tiny once in this process, so that the compiler's one-time
    start-up is not charged to the first compile a chapter measures. Returns the seconds
    it took, from the call to ``torch.compile`` to the result (0.0 when this process
    has done it before for ``device``)."""
    from .profiles import pick_device

    device = torch.device(device) if device is not None else pick_device()
    key = str(device)
    if key in _WARMED:
        return 0.0

    def probe(x):  # torch.compile inside the clock: its first call imports the compiler
        return torch.compile(lambda y: (y * 2.0 + 1.0).relu().sum())(x)

    seconds, _ = time_once(probe, torch.ones(16, device=device))
    _WARMED.add(key)
    return seconds


# --- The book's recurring question ----------------------------------------------------


@dataclass(frozen=True)
class CompileReport:
    """Eager and compiled steady-state timings (measured interleaved), the ratio with
    its interval, and the first compiled call in this process (all seconds)."""

    eager: Timing
    compiled: Timing
    first_call: float
    options: dict = field(default_factory=dict)
    speedup_ratio: Ratio | None = None

    @property
    def speedup(self) -> float:
        """Eager time over compiled time (above 1: compiled is faster): the median of
        the per-round ratios when the two were measured interleaved, else the ratio of
        the medians."""
        if self.speedup_ratio is not None:
            return self.speedup_ratio.estimate
        return self.eager.median / self.compiled.median

    @property
    def break_even(self) -> float:
        """Calls after which compiling has paid for itself (``math.inf``: never)."""
        return break_even_calls(
            self.first_call, self.eager.median, self.compiled.median
        )

    def __str__(self) -> str:
        calls = (
            "never"
            if math.isinf(self.break_even)
            else f"after {self.break_even:.0f} calls"
        )
        ratio_text = (
            str(self.speedup_ratio) if self.speedup_ratio else f"{self.speedup:.2f}x"
        )
        return (
            f"eager {format_seconds(self.eager.median)}, compiled "
            f"{format_seconds(self.compiled.median)} per call ({self.eager.mode}): "
            f"{ratio_text}; "
            f"first compiled call in this process {format_seconds(self.first_call)}; "
            f"compiling pays off {calls}"
        )


def eager_vs_compiled(
    fn: Callable[..., Any],
    *args: Any,
    mode: str = "throughput",
    min_run_time: float | None = None,
    **compile_options: Any,
) -> CompileReport:
    """Compile ``fn`` with ``torch.compile(fn, **compile_options)`` and compare it with
    eager.

    The first compiled call is timed on its own (in this process: caches and the
    compiler's start-up decide it; use :func:`compile_costs` for what a reader pays),
    then both versions are measured interleaved with :func:`compare`.
    """
    _check_callable(fn)
    compiled_fn = torch.compile(fn, **compile_options)
    first_call, _ = time_once(compiled_fn, *args)
    result = compare(
        {"eager": fn, "compiled": compiled_fn},
        *args,
        mode=mode,
        min_run_time=min_run_time,
    )
    return CompileReport(
        eager=result["eager"],
        compiled=result["compiled"],
        first_call=first_call,
        options=compile_options,
        speedup_ratio=result.ratio("compiled"),
    )


@contextlib.contextmanager
def threads(count: int) -> Iterator[None]:
    """Use ``count`` CPU threads in PyTorch and in the BLAS/OpenMP pools NumPy links
    inside the block; restore both on exit.

    What it can and cannot change: PyTorch's intra-op pool (``torch.set_num_threads``)
    and, through threadpoolctl, the BLAS and OpenMP pools that NumPy's matrix products
    use. NumPy's element-wise ufuncs (``x * y``) are single-threaded whatever the
    setting: no thread count makes them use more cores. TorchInductor bakes the thread
    count into the C++ kernels it generates, and on torch 2.11 its FX graph cache does
    not key on it: compile with the cache off (or a cache folder per count) when
    comparing thread counts of compiled code.
    """
    positive_int("count", count)
    from threadpoolctl import threadpool_limits

    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        with threadpool_limits(limits=count):
            yield
    finally:
        torch.set_num_threads(previous)

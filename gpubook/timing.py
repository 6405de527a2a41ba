"""Timing device work honestly: warm-up, synchronisation, repetitions, median and spread.

Every duration here is in **seconds** unless a name says otherwise (``median_ms``).

* :func:`measure` times steady-state calls with :class:`torch.utils.benchmark.Timer`, which
  synchronises CUDA around each block of calls, after explicit warm-up calls.
* :func:`time_once` times one call (for example the first call of a compiled function, which
  includes compilation), synchronised.
* :func:`time_each` times a sequence of calls one by one (latency over a sequence).
* :func:`eager_vs_compiled` puts the three together for the book's recurring question.
* :func:`threads` fixes the CPU thread count of PyTorch *and* NumPy so both compare fairly.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

import torch
import torch.utils.benchmark as torch_benchmark

__all__ = [
    "Timing",
    "CompileReport",
    "measure",
    "time_once",
    "time_each",
    "eager_vs_compiled",
    "break_even_calls",
    "threads",
    "format_seconds",
    "format_ratio",
]


def _check_callable(fn: Any, name: str = "fn") -> None:
    if not callable(fn):
        raise TypeError(f"{name} must be callable, got {type(fn).__name__}")


def _synchronize_all() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def format_seconds(seconds: float) -> str:
    """A duration with a unit a reader can take in: ``'812 µs'``, ``'1.53 ms'``, ``'2.4 s'``."""
    if not math.isfinite(seconds):
        return str(seconds)
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1e9:.3g} ns"


def format_ratio(ratio: float) -> str:
    """A speedup or ratio to three significant digits, never in exponent form: ``'0.944'``,
    ``'11.9'``, ``'296'``, ``'1,510'``, ``'14,500'``."""
    if not math.isfinite(ratio):
        return str(ratio)
    rounded = float(f"{ratio:.3g}")
    return f"{rounded:,.0f}" if abs(rounded) >= 1000 else f"{ratio:.3g}"


@dataclass(frozen=True)
class Timing:
    """Steady-state time per call, in seconds, from several measurements.

    ``times`` holds one value per measurement; each is the mean time per call over a block of calls
    (``calls_per_block``), so very short calls are timed over enough calls to be above the clock's
    resolution.
    """

    times: tuple[float, ...]
    calls_per_block: int = 1
    label: str = ""

    def __post_init__(self) -> None:
        if not self.times:
            raise ValueError("times must hold at least one measurement")

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
    def n(self) -> int:
        """Number of measurements."""
        return len(self.times)

    def __str__(self) -> str:
        head = f"{self.label}: " if self.label else ""
        return (
            f"{head}{format_seconds(self.median)} per call (median of {self.n} measurements "
            f"of {self.calls_per_block} calls; IQR {format_seconds(self.q25)} to "
            f"{format_seconds(self.q75)})"
        )


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def measure(
    fn: Callable[..., Any],
    *args: Any,
    warmup: int = 3,
    repeats: int = 10,
    min_run_time: float = 0.3,
    threads: int | None = None,
    label: str = "",
    **kwargs: Any,
) -> Timing:
    """Time ``fn(*args, **kwargs)`` in steady state and return a :class:`Timing` (seconds).

    ``warmup`` calls run first (they trigger compilation, cuBLAS heuristics, caches) and are not
    counted. Then blocks of calls are timed with :class:`torch.utils.benchmark.Timer`, which
    synchronises CUDA before each clock reading: at least ``repeats`` blocks, and at least
    ``min_run_time`` seconds in all. A block holds enough calls to last about a tenth of
    ``min_run_time``, so that microsecond calls are timed over many calls while slow calls are
    timed one by one. ``threads`` sets PyTorch's CPU thread count (default: the current one).
    """
    _check_callable(fn)
    if not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a non-negative int, got {warmup!r}")
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive int, got {repeats!r}")
    if not (isinstance(min_run_time, (int, float)) and min_run_time > 0):
        raise ValueError(f"min_run_time must be a positive number of seconds, got {min_run_time!r}")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    timer = torch_benchmark.Timer(
        stmt="fn(*args, **kwargs)",
        globals={"fn": fn, "args": args, "kwargs": kwargs},
        num_threads=threads or torch.get_num_threads(),
        label=label,
    )
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads or previous_threads)
    try:
        for _ in range(warmup):
            fn(*args, **kwargs)
        # Timer._timeit(number) runs the statement `number` times between two synchronised clock
        # readings; it is what Timer's public methods use inside, without their extra warm-up.
        one_call = max(timer._timeit(1), 1e-9)
        calls_per_block = max(1, int(min_run_time / 10 / one_call))
        times: list[float] = []
        total = 0.0
        while len(times) < repeats or total < min_run_time:
            block = timer._timeit(calls_per_block)
            total += block
            times.append(block / calls_per_block)
    finally:
        torch.set_num_threads(previous_threads)
    return Timing(times=tuple(times), calls_per_block=calls_per_block, label=label)


def time_once(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """Run ``fn(*args, **kwargs)`` once; return ``(seconds, result)``, synchronised on CUDA.

    Use it for a first call, whose time includes compilation and is not a steady-state figure.
    """
    _check_callable(fn)
    _synchronize_all()
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    _synchronize_all()
    return time.perf_counter() - start, result


def time_each(fn: Callable[..., Any], calls: Iterable[Sequence[Any]]) -> list[float]:
    """Time ``fn(*call)`` for each argument tuple in ``calls``, one synchronised call at a time.

    Returns the list of seconds, in order: the per-call latency over a sequence, first calls
    (and recompilations) included.
    """
    _check_callable(fn)
    seconds = []
    for call in calls:
        if not isinstance(call, (tuple, list)):
            raise TypeError(f"each item of calls must be a tuple of arguments, got {type(call).__name__}")
        elapsed, _ = time_once(fn, *call)
        seconds.append(elapsed)
    if not seconds:
        raise ValueError("calls must hold at least one argument tuple")
    return seconds


def break_even_calls(compile_seconds: float, eager_seconds: float, compiled_seconds: float) -> float:
    """How many calls it takes for a compiled function to repay its first (compiling) call.

    ``compile_seconds`` is the time of the compiled function's first call (compilation plus one
    run); ``eager_seconds`` and ``compiled_seconds`` are steady-state times per call. After ``n``
    calls the compiled version has cost ``compile_seconds + (n - 1) * compiled_seconds`` and eager
    ``n * eager_seconds``. Returns the smallest such ``n`` (at least 1) where compiled is no more
    expensive, or ``math.inf`` when the compiled call is not faster.
    """
    for name, value in (("compile_seconds", compile_seconds), ("eager_seconds", eager_seconds),
                        ("compiled_seconds", compiled_seconds)):
        if not (isinstance(value, (int, float)) and value >= 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite, non-negative number of seconds, got {value!r}")
    if compiled_seconds >= eager_seconds:
        return math.inf
    return float(max(1, math.ceil((compile_seconds - compiled_seconds) / (eager_seconds - compiled_seconds))))


@dataclass(frozen=True)
class CompileReport:
    """Eager and compiled steady-state timings plus the first compiled call (all seconds)."""

    eager: Timing
    compiled: Timing
    first_call: float
    options: dict = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        """Eager median time divided by compiled median time (above 1: compiled is faster)."""
        return self.eager.median / self.compiled.median

    @property
    def break_even(self) -> float:
        """Calls after which compiling has paid for itself (``math.inf``: never)."""
        return break_even_calls(self.first_call, self.eager.median, self.compiled.median)

    def __str__(self) -> str:
        calls = "never" if math.isinf(self.break_even) else f"after {self.break_even:.0f} calls"
        return (
            f"eager {format_seconds(self.eager.median)}, compiled {format_seconds(self.compiled.median)} "
            f"per call: speedup {self.speedup:.2f}x; first compiled call "
            f"{format_seconds(self.first_call)}; compiling pays off {calls}"
        )


def eager_vs_compiled(
    fn: Callable[..., Any], *args: Any, min_run_time: float = 0.3, **compile_options: Any
) -> CompileReport:
    """Compile ``fn`` with ``torch.compile(fn, **compile_options)`` and compare it with eager.

    The first compiled call is timed on its own (compilation plus one run; the FX graph cache may
    make it faster on a second run of the notebook), then both versions are measured with
    :func:`measure`.
    """
    _check_callable(fn)
    compiled_fn = torch.compile(fn, **compile_options)
    first_call, _ = time_once(compiled_fn, *args)
    eager = measure(fn, *args, min_run_time=min_run_time, label="eager")
    compiled = measure(compiled_fn, *args, min_run_time=min_run_time, label="compiled")
    return CompileReport(eager=eager, compiled=compiled, first_call=first_call, options=compile_options)


@contextlib.contextmanager
def threads(count: int) -> Iterator[None]:
    """Use ``count`` CPU threads in PyTorch *and* in NumPy's BLAS/OpenMP pools inside the block.

    PyTorch's thread count is restored on exit. Note that TorchInductor bakes the thread count into
    the C++ kernels it generates, so compile inside the block (or call ``torch.compiler.reset()``)
    when comparing thread counts of compiled code.
    """
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a positive int, got {count!r}")
    from threadpoolctl import threadpool_limits

    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        with threadpool_limits(limits=count):
            yield
    finally:
        torch.set_num_threads(previous)

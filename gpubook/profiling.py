"""Where the time of a call goes: GPU kernels, or the host (Python, guards, launches).

Built on :mod:`torch.profiler`. Times are in **seconds** per call unless a name says
``_us``.

* :func:`host_device_split` splits a call's latency into GPU busy time (kernels, copies
  and fills on the device, overlaps counted once) and the rest, which the host spends in
  Python, Dynamo's guards, the launches themselves, and waiting. A call whose GPU is
  busy for a small share of its latency is *host-bound*: a faster kernel cannot help it,
  fewer launches can.
* :func:`trace` records a few calls as spans (CPU launches and operators per thread, GPU
  kernels per stream) for :func:`gpubook.plots.timeline`.

Both read the profiler's Chrome-trace export (the format Perfetto and
``chrome://tracing`` open), whose event categories are stable across PyTorch versions.
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from ._checks import positive_int

__all__ = [
    "Span",
    "Trace",
    "Split",
    "SplitTable",
    "host_device_split",
    "launch_seconds",
    "split_table",
    "trace",
    "profile_events",
]

_GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
_LAUNCH_NAMES = (
    "LaunchKernel",
    "GraphLaunch",
    "MemcpyAsync",
    "MemsetAsync",
    "LaunchCooperative",
)
_CALL_MARK = "gpubook call"


@dataclass(frozen=True)
class Span:
    """One interval of a trace: ``kind`` is ``call``, ``op``, ``launch``, ``sync``,
    ``kernel``, ``memcpy`` or ``memset``; ``row`` names the CPU thread or GPU stream;
    times in µs."""

    name: str
    start_us: float
    end_us: float
    row: str
    kind: str

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us


@dataclass(frozen=True)
class Trace:
    """Spans of a few profiled calls, times in µs from the first event (see
    :func:`trace`)."""

    cpu: tuple[Span, ...]
    gpu: tuple[Span, ...]
    calls: tuple[Span, ...]
    label: str = ""

    @property
    def end_us(self) -> float:
        ends = [span.end_us for span in (*self.cpu, *self.gpu, *self.calls)]
        return max(ends) if ends else 0.0


def _union_length(intervals: list[tuple[float, float]]) -> float:
    total, current_start, current_end = 0.0, None, None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        total += current_end - current_start
    return total


def profile_events(
    fn: Callable[..., Any], *args: Any, calls: int = 3, warmup: int = 3, **kwargs: Any
) -> list[dict]:
    """Run ``fn`` ``warmup`` times, then profile ``calls`` calls (each inside a
    ``record_function`` mark), and return the Chrome-trace events (dicts with ``cat``,
    ``name``, ``ts``, ``dur`` in µs, ``tid``, ...)."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    positive_int("calls", calls)
    positive_int("warmup", warmup, allow_zero=True)
    return _profile_rounds([fn], calls, warmup, args, kwargs)


def _profile_rounds(
    fns: list[Callable[..., Any]],
    rounds: int,
    warmup: int,
    args: tuple,
    kwargs: dict,
) -> list[dict]:
    """Run each of ``fns`` ``warmup`` times, then profile ``rounds`` rounds that call
    each in turn (each call synchronised, inside a mark numbered from 0 in call order:
    call ``i`` is ``fns[i % len(fns)]``); return the trace's complete events."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from .environment import quiet_known_warnings

    quiet_known_warnings()
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    for _ in range(warmup):
        for fn in fns:
            fn(*args, **kwargs)
    if cuda:
        torch.cuda.synchronize()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        for index in range(rounds * len(fns)):
            with record_function(f"{_CALL_MARK} {index}"):
                fns[index % len(fns)](*args, **kwargs)
            if cuda:
                torch.cuda.synchronize()
    return _trace_events(prof)


def _trace_events(prof: Any) -> list[dict]:
    """The complete events (``ph == "X"``) of a finished ``torch.profiler.profile``."""
    with tempfile.TemporaryDirectory(prefix="gpubook-trace-") as folder:
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    events = data["traceEvents"] if isinstance(data, dict) else data
    return [e for e in events if e.get("ph") == "X" and "dur" in e and "ts" in e]


def _spans(events: list[dict]) -> tuple[list[Span], list[Span], list[Span]]:
    cpu, gpu, calls = [], [], []
    for event in events:
        category = event.get("cat", "")
        name = str(event.get("name", ""))
        start, end = float(event["ts"]), float(event["ts"]) + float(event["dur"])
        if category in _GPU_CATEGORIES:
            stream = event.get("args", {}).get("stream", event.get("tid", "?"))
            gpu.append(
                Span(name, start, end, f"stream {stream}", _GPU_CATEGORIES[category])
            )
        elif category == "user_annotation" and name.startswith(_CALL_MARK):
            calls.append(
                Span(name, start, end, f"thread {event.get('tid', '?')}", "call")
            )
        elif category in ("cuda_runtime", "cuda_driver"):
            kind = (
                "launch"
                if any(key in name for key in _LAUNCH_NAMES)
                else ("sync" if "Synchronize" in name else "runtime")
            )
            cpu.append(Span(name, start, end, f"thread {event.get('tid', '?')}", kind))
        elif category in ("cpu_op", "python_function"):
            cpu.append(Span(name, start, end, f"thread {event.get('tid', '?')}", "op"))
    return cpu, gpu, calls


def trace(
    fn: Callable[..., Any],
    *args: Any,
    calls: int = 3,
    warmup: int = 3,
    label: str = "",
    **kwargs: Any,
) -> Trace:
    """Profile ``calls`` calls of ``fn`` after ``warmup`` calls and return their
    :class:`Trace`: CPU spans (operators, launches, synchronisations), GPU spans
    (kernels, copies, fills) and one span per call, in µs from the first kept call's
    start. Draw it with :func:`gpubook.plots.timeline`.

    The first call of a profiling session carries the profiler's own start-up, which
    no unprofiled call pays (in the book's H100 run with torch 2.11, a host span of 0.6
    to 2.5 ms; the profiler's tables show a one-off ``Activity Buffer Request`` row). So
    one call more is profiled and only the last ``calls`` are kept, without the spans
    that ended before the first kept call began: every call shown is a steady one."""
    positive_int("calls", calls)
    events = profile_events(fn, *args, calls=calls + 1, warmup=warmup, **kwargs)
    cpu, gpu, marks = _spans(events)
    marks = sorted(marks, key=lambda span: span.start_us)[-calls:]
    if marks:
        origin = marks[0].start_us
    else:
        origin = min((span.start_us for span in cpu + gpu), default=0.0)

    def shift(spans: list[Span]) -> tuple[Span, ...]:
        return tuple(
            sorted(
                (
                    Span(s.name, s.start_us - origin, s.end_us - origin, s.row, s.kind)
                    for s in spans
                    if s.end_us >= origin
                ),
                key=lambda s: s.start_us,
            )
        )

    return Trace(cpu=shift(cpu), gpu=shift(gpu), calls=shift(marks), label=label)


#: :attr:`Split.bound`'s lines: busy share below which a call is host-bound (the host
#: takes more than about 2.3 times the GPU's time), and from which it is GPU-bound.
#: ``gpubook.reference`` keeps the words themselves (``_BOUND_WORDS``) without
#: importing torch; a test keeps the two in step.
HOST_BOUND_BELOW = 0.3
GPU_BOUND_FROM = 0.8


@dataclass(frozen=True)
class Split:
    """A call's latency split into GPU busy time and the rest (seconds per call).

    ``wall``: latency per call (median of synchronised calls, measured without the
    profiler); ``gpu``: time per call the GPU spent in kernels, copies and fills
    (overlaps counted once; ``None`` on the CPU); ``host``: ``wall - gpu``, the time the
    GPU waited for the host; ``busy``: ``gpu / wall``. ``bound`` is ``"host-bound"``
    below :data:`HOST_BOUND_BELOW` (30%) busy, ``"GPU-bound"`` at
    :data:`GPU_BOUND_FROM` (80%) and above, ``"mixed"`` in between, and ``"CPU only"``
    without a GPU. The band is wide on purpose: on the book's GPU hosts the host's time
    per call can change by about 2x, at times more, from one second to the next; 2x
    moves a call with host and GPU time alike (50% busy) to anywhere between 33% and
    67%, so a line at 50% would call the same call host-bound in one run and mixed in
    the next.
    """

    wall: float
    gpu: float | None
    kernels_per_call: float
    launches_per_call: float
    kernel_names: tuple[tuple[str, float, float], ...] = field(default_factory=tuple)
    label: str = ""

    @property
    def host(self) -> float:
        """Seconds per call not covered by GPU work (all of it on the CPU)."""
        return self.wall if self.gpu is None else max(self.wall - self.gpu, 0.0)

    @property
    def busy(self) -> float | None:
        """Share of the latency the GPU was busy (``None`` on the CPU)."""
        return None if self.gpu is None else min(self.gpu / self.wall, 1.0)

    @property
    def busy_pct(self) -> int | None:
        """:attr:`busy` in whole percent, rounded so that it stays on its side of the
        classification's lines: 29.8% busy (host-bound) reads 29, not 30; 79.7%
        (mixed) reads 79; ``None`` on the CPU."""
        if self.busy is None:
            return None
        low, high = round(100 * HOST_BOUND_BELOW), round(100 * GPU_BOUND_FROM)
        floor, ceiling = {
            "host-bound": (0, low - 1),
            "mixed": (low, high - 1),
            "GPU-bound": (high, 100),
        }[self.bound]
        return min(max(round(100 * self.busy), floor), ceiling)

    @property
    def bound(self) -> str:
        if self.busy is None:
            return "CPU only"
        if self.busy < HOST_BOUND_BELOW:
            return "host-bound"
        if self.busy >= GPU_BOUND_FROM:
            return "GPU-bound"
        return "mixed"

    def row(self) -> dict[str, str]:
        from .timing import format_seconds

        gpu = "–" if self.gpu is None else format_seconds(self.gpu)
        busy = "–" if self.busy_pct is None else f"{self.busy_pct}%"
        return {
            "variant": self.label or "call",
            "latency": format_seconds(self.wall),
            "GPU busy": gpu,
            "host (rest)": format_seconds(self.host),
            "busy": busy,
            "kernels": f"{self.kernels_per_call:g}",
            "launches": f"{self.launches_per_call:g}",
            "bound": self.bound,
        }

    def _repr_html_(self) -> str:
        return split_table([self])._repr_html_()

    def __str__(self) -> str:
        from .timing import counted

        row = self.row()
        return (
            f"{row['variant']}: {row['latency']} per call, GPU busy {row['GPU busy']} "
            f"({row['busy']}), host {row['host (rest)']}; "
            f"{counted(self.kernels_per_call, 'kernel')} and "
            f"{counted(self.launches_per_call, 'launch')} per call: {row['bound']}"
        )

    __repr__ = __str__


class SplitTable:
    """Several :class:`Split` results as one table (HTML in a notebook, text
    elsewhere)."""

    def __init__(self, splits: list[Split]):
        self.splits = splits

    def _repr_html_(self) -> str:
        rows = [split.row() for split in self.splits]
        head = "".join(f"<th>{html.escape(key)}</th>" for key in rows[0])
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(v)}</td>" for v in row.values())
            + "</tr>"
            for row in rows
        )
        return (
            f'<table class="gpubook-table"><thead><tr>{head}</tr></thead><tbody>{body}'
            "</tbody></table><p><em>latency: median of synchronised calls; GPU busy: "
            "kernels, copies and fills per call from torch.profiler; "
            "host: the rest</em></p>"
        )

    def __str__(self) -> str:
        return "\n".join(str(split) for split in self.splits)

    __repr__ = __str__


def split_table(splits: list[Split]) -> SplitTable:
    """Show several splits as one table."""
    return SplitTable(list(splits))


def launch_seconds(
    fn: Callable[..., Any], *args: Any, calls: int = 200, **kwargs: Any
) -> float:
    """The host's time to return from one call of ``fn(*args, **kwargs)`` (seconds):
    ``calls`` calls back to back with no wait between them, after one call and a
    synchronisation, so that on a GPU it is the time to launch the work, not to run it
    (while the host is the slower side). The work queued is waited for after the clock
    stops.
    """
    import time

    from .timing import _check_callable, _synchronize_all

    _check_callable(fn)
    positive_int("calls", calls)
    fn(*args, **kwargs)
    _synchronize_all()
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    _synchronize_all()
    return elapsed / calls


def host_device_split(
    fn: Callable[..., Any],
    *args: Any,
    calls: int = 20,
    warmup: int = 3,
    label: str = "",
    **kwargs: Any,
) -> Split:
    """Split a call of ``fn(*args, **kwargs)`` into GPU busy time and host time (seconds
    per call), with kernels and launches per call and the kernels that took the most
    time.

    The latency comes from :func:`gpubook.latency` (synchronised calls, no profiler);
    the GPU time, kernel and launch counts from ``calls`` profiled calls. On a machine
    without a GPU (or for CPU work) ``gpu`` is ``None`` and the whole latency is host
    time.
    """
    from .timing import latency

    positive_int("calls", calls)
    events = profile_events(fn, *args, calls=calls, warmup=warmup, **kwargs)
    wall = latency(fn, *args, warmup=0, repeats=max(calls, 10), **kwargs).median
    cpu, gpu, _ = _spans(events)
    kernels = [span for span in gpu if span.kind == "kernel"]
    launches = [span for span in cpu if span.kind == "launch"]
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    busy_us = _union_length([(s.start_us, s.end_us) for s in gpu]) if cuda else None
    by_name: dict[str, list[float]] = {}
    for span in kernels:
        by_name.setdefault(span.name, []).append(span.duration_us)
    top = sorted(by_name.items(), key=lambda item: -sum(item[1]))[:8]
    names = tuple(
        (name[:80], sum(times) / calls / 1e6, len(times) / calls) for name, times in top
    )
    return Split(
        wall=wall,
        gpu=None if busy_us is None else busy_us / calls / 1e6,
        kernels_per_call=len(kernels) / calls,
        launches_per_call=len(launches) / calls,
        kernel_names=names,
        label=label,
    )

"""Is the CPU quiet enough to time CPU code? How many cores other processes keep busy.

A multithreaded CPU operation (PyTorch's intra-op pool, OpenMP) splits its work over all
its threads and waits for the slowest. If another process holds one of the cores, the
thread that lands there waits for a scheduler time slice, and an operation of
microseconds takes milliseconds. After a process's first compile, TorchInductor starts
its pool of compile workers in the background; while it starts up it keeps cores busy.
Measured on an H100 host (16 cores, torch 2.11): an eager 1024x1024 stencil step took
about 26 times longer right after the first GPU compile than a few seconds later.

* :func:`other_busy_cores` measures how many cores *other* processes kept busy over a
  short window (Linux ``/proc``; ``None`` elsewhere).
* :func:`wait_for_quiet_cpu` waits (up to a limit) until that number drops below a
  threshold.
* :func:`host_speed` times a fixed host workload (PyTorch's dispatcher on a one-element
  CPU tensor), so two runs of a host-bound measurement can be told apart by the host.
* :func:`descendant_processes` counts this process's descendants (compile workers among
  them).
* :class:`BusyCore` keeps one core busy on demand (a child process that spins while
  allowed to), so the effect of one busy core can be measured on purpose, interleaved,
  instead of waiting for a compile's workers to cause it by chance.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from ._checks import positive_int, positive_number

__all__ = [
    "other_busy_cores",
    "wait_for_quiet_cpu",
    "descendant_processes",
    "host_speed",
    "BusyCore",
]


def _total_busy_ticks() -> int | None:
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = handle.readline().split()[1:]
    except OSError:
        return None
    values = [int(v) for v in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return sum(values[:8]) - idle


def _own_ticks() -> int | None:
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime + stime of all threads, in ticks


def other_busy_cores(window: float = 0.25) -> float | None:
    """Average number of cores that processes other than this one kept busy during a
    window of ``window`` seconds (this process sleeps meanwhile), or ``None`` without
    Linux ``/proc``."""
    positive_number("window", window)
    start_total, start_own = _total_busy_ticks(), _own_ticks()
    if start_total is None or start_own is None:
        return None
    begin = time.perf_counter()
    time.sleep(window)
    end_total, end_own = _total_busy_ticks(), _own_ticks()
    elapsed = time.perf_counter() - begin
    ticks = os.sysconf("SC_CLK_TCK")
    other = (end_total - start_total) - (end_own - start_own)
    return max(other, 0) / ticks / elapsed


def wait_for_quiet_cpu(
    busy_below: float = 0.5, max_seconds: float = 30.0, window: float = 0.25
) -> tuple[float, float | None]:
    """Wait until other processes keep fewer than ``busy_below`` cores busy, or until
    ``max_seconds`` passed. Returns ``(seconds waited, busy cores at the end)``."""
    positive_number("busy_below", busy_below)
    positive_number("max_seconds", max_seconds, allow_zero=True)
    begin = time.perf_counter()
    busy = other_busy_cores(window)
    while (
        busy is not None
        and busy >= busy_below
        and time.perf_counter() - begin < max_seconds
    ):
        busy = other_busy_cores(window)
    return time.perf_counter() - begin, busy


def descendant_processes() -> int | None:
    """How many processes descend from this one (``None`` without Linux ``/proc``)."""
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return None
    parent = {}
    for entry in entries:
        try:
            with open(
                f"/proc/{entry}/stat", encoding="ascii", errors="replace"
            ) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            parent[int(entry)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    me, count = os.getpid(), 0
    for pid in parent:
        ancestor, hops = parent.get(pid), 0
        while ancestor and ancestor != me and hops < 64:
            ancestor, hops = parent.get(ancestor), hops + 1
        count += ancestor == me
    return count


def host_speed(calls: int = 2000, repeats: int = 7) -> float:
    """Median microseconds per ``torch.add`` of two one-element CPU tensors (``calls``
    calls per sample, ``repeats`` samples): a fixed host workload that moves with what
    host-bound GPU calls cost (Python, the dispatcher, the CPU's clock and its load).

    Recorded with each reference run, before and after each notebook, so a compare of
    two runs can show whether the host, not the GPU, changed."""
    import statistics

    import torch

    positive_int("calls", calls)
    positive_int("repeats", repeats)
    a, b = torch.ones(1), torch.ones(1)
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        for _ in range(calls):
            torch.add(a, b)
        samples.append((time.perf_counter() - begin) / calls * 1e6)
    return statistics.median(samples)


def host_speed_samples(
    samples: int = 5, spacing: float = 0.1, calls: int = 2000
) -> list[float]:
    """:func:`host_speed` ``samples`` times, ``spacing`` seconds apart (three repeats
    each): microseconds per ``torch.add``, in order.

    One probe sees one state of the host; on the lent H100 hosts the per-call cost
    toggled between about 1.3 and 3.0 µs from one second to the next
    (tools/diag/host_probe.py), so samples spread over half a second show whether it
    was toggling while the run started or ended."""
    positive_int("samples", samples)
    if not isinstance(spacing, (int, float)) or spacing < 0:
        raise ValueError(f"spacing must be a number of seconds >= 0, got {spacing!r}")
    values = []
    for index in range(samples):
        if index:
            time.sleep(spacing)
        values.append(host_speed(calls=calls, repeats=3))
    return values


#: The spinning child: it asks Linux to kill it when its parent dies (PR_SET_PDEATHSIG,
#: which also ends a stopped child), and it spins only while its parent is the process
#: that started it, so a notebook kernel that dies without cleaning up (a crash, an
#: out-of-memory kill) leaves no spinner behind to distort later timings.
_SPIN_CODE = """
import os, sys
parent = int(sys.argv[1])
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
except (AttributeError, OSError):
    pass  # not Linux: the loop below still ends once the parent is gone
while os.getppid() == parent:
    pass
"""


class BusyCore:
    """One core kept busy on demand: a child Python process that spins, stopped with
    ``SIGSTOP`` while :meth:`idle` and resumed with ``SIGCONT`` by :meth:`busy`. A
    signal acts once the scheduler next handles the child, so toggle it once per sample
    of many calls (``compare``'s throughput blocks), not around single short calls::

        with cpuload.BusyCore() as core:
            gpubook.compare(
                {"quiet": lambda: (core.idle(), step(u)),
                 "one core busy": lambda: (core.busy(), step(u))},
                mode="throughput",
            )

    The child is stopped as soon as it has started. Leaving the ``with`` block (or
    :meth:`close`) kills it; if this process dies first, the child ends too (see
    ``_SPIN_CODE``). Needs POSIX job-control signals (Linux, macOS): elsewhere the
    constructor raises ``RuntimeError`` with a sentence that says so.
    """

    def __init__(self) -> None:
        if not (hasattr(signal, "SIGSTOP") and hasattr(signal, "SIGCONT")):
            raise RuntimeError(
                "BusyCore needs SIGSTOP and SIGCONT (Linux or macOS); this platform "
                "has no way to pause a child process"
            )
        self._child: subprocess.Popen | None = subprocess.Popen(
            [sys.executable, "-c", _SPIN_CODE, str(os.getpid())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._running = True
        self.idle()

    @property
    def pid(self) -> int:
        """The spinning child's process id."""
        return self._alive().pid

    @property
    def spinning(self) -> bool:
        """Whether the child is alive and allowed to spin (after :meth:`busy`)."""
        return self._child is not None and self._child.poll() is None and self._running

    def _alive(self) -> subprocess.Popen:
        if self._child is None:
            raise RuntimeError("this BusyCore is closed")
        if self._child.poll() is not None:
            raise RuntimeError(
                f"the spinning child process exited (code {self._child.returncode})"
            )
        return self._child

    def busy(self) -> None:
        """Let the child spin (one core busy from now on)."""
        child = self._alive()
        if not self._running:
            os.kill(child.pid, signal.SIGCONT)
            self._running = True

    def idle(self) -> None:
        """Stop the child (no core kept busy from now on)."""
        child = self._alive()
        if self._running:
            os.kill(child.pid, signal.SIGSTOP)
            self._running = False

    def close(self) -> None:
        """Kill the child; further calls of :meth:`busy` or :meth:`idle` raise."""
        child, self._child = self._child, None
        if child is not None and child.poll() is None:
            child.kill()  # SIGKILL also ends a stopped process
            child.wait()
        self._running = False

    def __enter__(self) -> "BusyCore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

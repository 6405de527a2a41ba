"""Minor page faults per call: is a CPU function handed fresh memory on every call?

A *minor page fault* is the operating system mapping a page of memory (4 KiB) into the
process on its first touch, and zeroing it if it is fresh memory. A function in steady
state that allocates large temporaries should take almost none per call: the allocator
reuses the memory freed by the previous call. Many faults per call mean that the
memory went back to the operating system in between (glibc's ``malloc`` does so for
large blocks, steered by its ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` settings,
which it adapts as the process runs), and every call pays to map and zero it again.

* :class:`FaultCounter` wraps a function and counts the faults taken during its calls
  (two ``getrusage`` system calls per call, about a microsecond).
* :func:`fresh_process` times a CPU call and counts its faults in a new Python process,
  optionally with environment variables (such as glibc's ``MALLOC_TRIM_THRESHOLD_``)
  set, so that a setting of the allocator can be tested without changing this process.

``resource`` is Unix-only: elsewhere the counts are ``None``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

try:
    import resource
except ImportError:  # Windows
    resource = None

__all__ = [
    "minor_faults",
    "FaultCounter",
    "FreshResult",
    "fresh_process",
    "GLIBC_KEEP_MEMORY",
]

#: glibc settings that keep freed blocks of up to 16 MiB in the process instead of
#: handing them back to the operating system (the dynamic thresholds are then fixed)
GLIBC_KEEP_MEMORY = {
    "MALLOC_MMAP_THRESHOLD_": str(16 * 2**20),
    "MALLOC_TRIM_THRESHOLD_": str(2**30),
}


def minor_faults() -> int | None:
    """Minor page faults this process (all its threads) has taken so far."""
    if resource is None:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


class FaultCounter:
    """``fn`` with a count of the minor page faults taken while it runs.

    Call it as you would call ``fn``; ``per_call`` is the mean count per call so far
    (``None`` without ``resource`` or before the first call). Faults taken by other
    threads of the process while ``fn`` runs count too: PyTorch's CPU threads are
    what should count, so do not run other work meanwhile.
    """

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.calls = 0
        self.faults = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        before = minor_faults()
        result = self.fn(*args, **kwargs)
        after = minor_faults()
        if before is not None and after is not None:
            self.faults += after - before
        self.calls += 1
        return result

    @property
    def per_call(self) -> float | None:
        if resource is None or self.calls == 0:
            return None
        return self.faults / self.calls

    def reset(self) -> None:
        self.calls = self.faults = 0


_CHILD = """
import json, resource, sys, time
import torch
spec = json.loads(sys.argv[1])
namespace = {}
exec(spec["setup"], namespace)
fn, args = namespace[spec["fn"]], namespace[spec["args"]]
faults = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt
times, count = [], 0
with torch.inference_mode():
    for _ in range(3):
        fn(*args)
    while len(times) < 10 or sum(times) < spec["seconds"]:
        before, start = faults(), time.perf_counter()
        fn(*args)  # a CPU call: done when it returns
        times.append(time.perf_counter() - start)
        count += faults() - before
print(json.dumps({"times": times, "faults_per_call": count / len(times),
                  "threads": torch.get_num_threads()}))
"""


@dataclass
class FreshResult:
    """What :func:`fresh_process` measured: ``timing`` (latency, seconds),
    ``faults_per_call`` and ``threads``, or ``error`` (one line) if it could not."""

    timing: Any = None
    faults_per_call: float | None = None
    threads: int | None = None
    error: str | None = None


def fresh_process(
    setup: str,
    fn: str = "fn",
    args: str = "args",
    env: dict[str, str] | None = None,
    seconds: float = 0.3,
    label: str = "",
    timeout: float = 300,
) -> FreshResult:
    """Latency of a CPU call ``fn(*args)`` and its minor page faults per call, measured
    in a fresh Python process (under ``torch.inference_mode``, after three warm-up
    calls; at least ten calls and ``seconds`` of them; the child imports torch, not
    gpubook).

    ``setup`` is Python source that defines ``fn`` and ``args`` (names changeable);
    ``env`` adds environment variables for that process only. On failure the result
    holds ``error`` (one line) instead of numbers.
    """
    from .timing import Timing

    spec = json.dumps({"setup": setup, "fn": fn, "args": args, "seconds": seconds})
    child_env = {**os.environ, **(env or {})}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, spec],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=child_env,
        )
    except subprocess.TimeoutExpired:
        return FreshResult(error=f"the fresh process took longer than {timeout:.0f} s")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return FreshResult(error=f"the fresh process failed: {last[:200]}")
    found = json.loads(lines[-1])
    timing = Timing(times=tuple(found["times"]), label=label, mode="latency")
    return FreshResult(timing, found["faults_per_call"], found["threads"])

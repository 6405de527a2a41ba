"""Start TorchInductor's CPU checks early and side by side (chapter 6's start-up).

Before the first C++ kernel of a process, TorchInductor tests each vector instruction
set that the CPU reports (AVX2, AVX-512, AMX, ...), one after another. On torch 2.11
(see the pull requests below) each test compiles a small C++ file (cached on disk) and
starts a child Python that imports torch and loads the result, in every new process;
a set can take more than one such probe (AVX-512's bf16 and VNNI variants, AMX's tile
and FP16 probes), so a server CPU with AMX starts about ten imports of torch in a row.
:func:`start_vec_isa_checks` runs the same tests in threads, so that they overlap with
each other and with the cells that run before the first compile. Each test caches its
answer on the object TorchInductor itself asks, so the compiler gets the same answers
it would have found alone, sooner. Nothing changes where the private module differs:
the function then starts nothing.

The cost is known upstream: pytorch/pytorch#140970 (``pick_vec_isa`` taking about 9 s,
four child processes on a server CPU); pytorch/pytorch#183515 (May 2026) drops
``import torch`` from the child on Linux, and caching a successful probe on disk
(``.load_ok``), proposed in pytorch/pytorch#181617, landed as #190561 (July 2026).
torch 2.14.1 has both (its ``cpu_vec_isa.py``); torch 2.11 has neither.
"""

from __future__ import annotations

import threading

__all__ = ["run_vec_isa_checks", "start_vec_isa_checks"]


def _candidates() -> list:
    """The instruction sets TorchInductor would test on this CPU (x86 only)."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return []
    from torch._inductor import cpu_vec_isa

    flags = set(cpu_vec_isa.x86_isa_checker())
    return [
        isa
        for isa in cpu_vec_isa.supported_vec_isa_list
        if all(flag in flags for flag in str(isa).split())
    ]


def _check(isa) -> None:
    try:
        bool(isa)  # runs (and caches) TorchInductor's own build-and-load test
    except Exception:  # the compiler runs the test again and reports it itself
        pass


class Checks:
    """The started checks; :meth:`wait` before the first CPU compile."""

    def __init__(self, threads: list[threading.Thread]):
        self.threads = threads

    def wait(self, timeout: float = 300.0) -> int:
        """Wait for every check; return how many ran."""
        for thread in self.threads:
            thread.join(timeout)
        return len(self.threads)


def start_vec_isa_checks() -> Checks:
    """Start TorchInductor's vector-ISA checks in threads; return :class:`Checks`."""
    try:
        candidates = _candidates()
    except Exception:  # another torch: let the compiler do its checks itself
        candidates = []
    threads = [
        threading.Thread(target=_check, args=(isa,), daemon=True) for isa in candidates
    ]
    for thread in threads:
        thread.start()
    return Checks(threads)


def run_vec_isa_checks() -> float:
    """Run the checks in threads and wait for them; return the seconds it took.

    For a cell just before a process's first CPU compile, where nothing else may run
    alongside (a timed cell after it): the compile then starts with the answers in
    place, and the checks' time is reported on its own instead of inside the first
    compile's. Measured on the book's GPU host (torch 2.11, 16 cores,
    ``tools/diag/startup_costs.py``): one after the other, as the compiler runs them,
    35 to 51 s in three fresh processes; in threads, 17 s.
    """
    import time

    start = time.perf_counter()
    start_vec_isa_checks().wait()
    return time.perf_counter() - start

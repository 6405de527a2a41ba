"""Start TorchInductor's CPU checks early and side by side (chapter 6's start-up).

Before the first C++ kernel of a process, TorchInductor tests each vector instruction
set that the CPU reports (AVX2, AVX-512, AMX, ...), one after another. On torch 2.11
(see the pull requests below) each test compiles a small C++ file (cached on disk) and
starts a child Python that imports torch and loads the result, in every new process;
a set can take more than one such probe (AVX-512's bf16 and VNNI variants, AMX's tile
and FP16 probes), so a server CPU with AMX starts eleven or twelve imports of torch in
a row.
:func:`start_vec_isa_checks` runs the same tests in threads, so that they overlap with
each other and with the cells that run before the first compile. Each test caches its
answer on the object TorchInductor itself asks, so the compiler gets the same answers
it would have found alone, sooner. Where the private module differs, nothing is
installed (below), and threads start only where the list of sets can be read.

The cost is known upstream: pytorch/pytorch#140970 (``pick_vec_isa`` taking about 9 s,
four child processes on a server CPU); pytorch/pytorch#183515 (May 2026) drops
``import torch`` from the child on Linux, and caching a successful probe on disk
(``.load_ok``), proposed in pytorch/pytorch#181617, landed as #190561 (July 2026).
torch 2.14.1 has both (its ``cpu_vec_isa.py``); torch 2.11 has neither.

On a torch without that on-disk record, :func:`start_vec_isa_checks` first installs
one (:func:`record_successful_checks`): a probe that built and loaded leaves a marker
file beside its source in TorchInductor's cache folder, and a later process that asks
the same question (same code, ``_arch_flags``, compiler and torch, hence the same file,
as torch 2.11 keys it) takes the marker for the answer instead of building and loading
again. #190561 does the same upstream, a little more carefully: its marker sits beside
the built library, which it rebuilds if it is missing; this one also skips that build.
What a marker skips is the link check against this torch build, which the key covers
(the torch version); the checks inside the process (``torch.cpu._init_amx()``, the
CPU's flags) still run, and each probe still asks the compiler for its version. A
failed probe records nothing and is tried again; a new cache folder
(``TORCHINDUCTOR_CACHE_DIR``, by default under /tmp, so a reboot may clear it) starts
with no markers. So the first process on a machine pays for the probes, and the book's
later chapters do not.
"""

from __future__ import annotations

import threading

__all__ = ["record_successful_checks", "run_vec_isa_checks", "start_vec_isa_checks"]

_MARKER = ".gpubook_load_ok"  # beside the probe's source file in the cache folder
# how torch 2.11's check_build keys a probe's files; the marker uses the same key
_TORCH_KEY = "_get_isa_dry_compile_fingerprint(self._arch_flags)"


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


def _recording(original, marker_for):
    """``original`` (a ``check_build``) behind a success marker: looked for, then left.

    ``marker_for(isa, code)`` names the marker file of that probe (it may raise: the
    probe then runs as it would without a record).
    """
    import os

    def check_build(self, code):
        try:
            marker = marker_for(self, code)
        except Exception:
            return original(self, code)
        if os.path.isfile(marker):
            return True
        ok = original(self, code)
        if ok:
            try:
                with open(marker, "w", encoding="utf-8"):
                    pass
            except OSError:
                pass
        return ok

    check_build._gpubook_recorded = True
    return check_build


def record_successful_checks() -> bool:
    """Keep successful probes' answers on disk where torch does not; True if installed.

    Does nothing (returns False) on a torch that keeps them itself (the ``.load_ok``
    marker of pytorch/pytorch#190561) and on one whose private module differs.
    Installing twice installs once.
    """
    try:
        import inspect

        from torch._inductor import codecache, cpu_vec_isa

        vec_isa = cpu_vec_isa.VecISA
        current = vec_isa.check_build
        if getattr(current, "_gpubook_recorded", False):
            return True
        source = inspect.getsource(current)
        fingerprint = cpu_vec_isa._get_isa_dry_compile_fingerprint
        write = codecache.write
    except Exception:
        return False
    if "load_ok" in source or _TORCH_KEY not in source:
        return False  # torch records successes itself, or keys its probes otherwise

    def marker_for(isa, code):  # the probe's own source file, keyed as torch keys it
        _, input_path = write(code, "cpp", extra=fingerprint(isa._arch_flags))
        return input_path + _MARKER

    vec_isa.check_build = _recording(current, marker_for)
    return True


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
        """Wait for every check (at most ``timeout`` seconds each); return how many
        finished. One still running could race a compile that asks the same question,
        so a caller that gets fewer than ``len(threads)`` should wait again."""
        for thread in self.threads:
            thread.join(timeout)
        return sum(not thread.is_alive() for thread in self.threads)


def start_vec_isa_checks() -> Checks:
    """Start TorchInductor's vector-ISA checks in threads; return :class:`Checks`.

    Where torch keeps no record of a successful probe, one is installed first
    (:func:`record_successful_checks`).
    """
    record_successful_checks()  # raises nothing: on any surprise it installs nothing
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

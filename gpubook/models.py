"""Plumbing for chapter 7 (real models): what the profiler says a model ran, fresh
processes, baseline checks, and small tables.

Times are in **seconds** unless a name says ``_ms`` or ``_us``.

* :func:`kernel_summary` profiles a few calls and sorts the GPU kernels into categories
  (matrix products, convolutions, fused attention, generated Triton kernels, copies and
  casts), and counts the ATen operators that show which attention ran: one fused
  ``scaled_dot_product_attention`` kernel, or batched matrix products with a softmax
  between.
* :func:`fresh_process` runs a snippet of Python in a new interpreter (optionally with
  its own compiler cache folder) and returns what the snippet reported: first calls as a
  reader pays them. :func:`fresh_processes` runs several such processes whose set-up
  (imports, building a model) overlaps and whose measured parts run one at a time.
* :class:`BaselineLog` re-measures one eager call at points of a notebook, to see
  whether the process's state (profiler, compiler, CUDA graphs) changes an eager
  baseline.
* :class:`CudagraphNotes` collects Inductor's "skipping cudagraphs due to ..." messages.
* :class:`Table` shows a list of dicts as a real table (HTML in a notebook, Markdown,
  text).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import torch

from . import tables
from ._checks import positive_int, positive_number

__all__ = [
    "Table",
    "kernel_category",
    "KernelSummary",
    "kernel_summary",
    "gpu_times",
    "attention_path",
    "fresh_process",
    "fresh_processes",
    "FreshProcessError",
    "BaselineLog",
    "CudagraphNotes",
]


# --- Tables ---------------------------------------------------------------------------


class Table(tables.Table):
    """Rows (dicts of display values, one key per column) shown as a table, values with
    ``str``: :class:`gpubook.tables.Table` with ``fmt=""``."""

    def __init__(self, rows: Iterable[Mapping[str, Any]], caption: str = ""):
        super().__init__(rows, caption, fmt="")


# --- What the profiler says a model ran -----------------------------------------------

_ATTENTION_KEYS = ("flash", "fmha", "attention", "sdpa", "attn", "cudnn_mha")
_CONV_KEYS = ("fprop", "dgrad", "wgrad", "conv", "winograd", "implicit_")
_GEMM_KEYS = ("gemm", "gemv", "nvjet", "cutlass", "xmma", "cublas", "splitk", "matmul")
_CAST_KEYS = ("copy_kernel", "bfloat16_copy", "to_copy", "_to_copy", "convert")


def kernel_category(name: str) -> str:
    """A coarse category for a GPU kernel, from its name: ``"attention (fused)"``,
    ``"GEMM (Triton)"``, ``"fused (Triton)"``, ``"convolution"``, ``"GEMM"``,
    ``"layout change"``, ``"copy/cast"`` or ``"other"``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    lowered = name.lower()
    if any(key in lowered for key in _ATTENTION_KEYS):
        return "attention (fused)"
    if (
        lowered.startswith("triton_tem")
        or "triton_mm" in lowered
        or "triton_bmm" in lowered
    ):
        return "GEMM (Triton)"
    if lowered.startswith("triton_"):
        return "fused (Triton)"
    if any(key in lowered for key in _CONV_KEYS):
        return "convolution"
    if any(key in lowered for key in _GEMM_KEYS):
        return "GEMM"
    if "nchwtonhwc" in lowered or "nhwctonchw" in lowered:
        return "layout change"
    if (
        "memcpy" in lowered
        or "memset" in lowered
        or any(k in lowered for k in _CAST_KEYS)
    ):
        return "copy/cast"
    return "other"


_ATEN_OF_INTEREST = (
    "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_flash_attention",
    "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention",
    "aten::_scaled_dot_product_flash_attention_for_cpu",
    "aten::_efficient_attention_forward",
    "aten::_flash_attention_forward",
    "aten::bmm",
    "aten::baddbmm",
    "aten::_softmax",
    "aten::_to_copy",
)


@dataclass(frozen=True)
class KernelSummary:
    """Per-call counts from a few profiled calls (see :func:`kernel_summary`).

    ``kernels``: GPU kernels per call; ``launches``: launch calls the host made per call
    (a CUDA graph replay is one); ``busy_ms``: summed kernel time per call (ms);
    ``by_category``: ms per call by :func:`kernel_category`, ``counts`` kernels per call
    by category, ``names`` kernels per call by name; ``aten``: calls per call of the
    ATen operators that tell which attention ran; ``attention_kernels``: names of the
    fused attention kernels seen; ``top``: (name, ms per call, count per call) of the
    costliest kernels. On a CPU the GPU fields are zero and empty.
    """

    kernels: float
    launches: float
    busy_ms: float
    by_category: dict[str, float]
    counts: dict[str, float]
    aten: dict[str, float]
    attention_kernels: tuple[str, ...]
    top: tuple[tuple[str, float, float], ...] = field(default_factory=tuple)
    label: str = ""
    names: dict[str, float] = field(default_factory=dict)

    def count(self, category: str) -> float:
        """Kernels per call whose category is ``category`` (see
        :func:`kernel_category`)."""
        return self.counts.get(category, 0.0)

    def count_named(self, *parts: str) -> float:
        """Kernels per call whose name contains any of ``parts`` (case-insensitive):
        e.g. ``count_named("to_copy", "copy_kernel")`` counts casts, also those fused
        into a generated kernel (whose name lists the operations it fused)."""
        if not parts:
            raise ValueError("name at least one part of a kernel name")
        lowered = [part.lower() for part in parts]
        return sum(
            count
            for name, count in self.names.items()
            if any(part in name.lower() for part in lowered)
        )

    def row(self) -> dict[str, str]:
        cats = ", ".join(
            f"{key} {ms:.2f}"
            for key, ms in sorted(self.by_category.items(), key=lambda kv: -kv[1])[:4]
        )
        return {
            "variant": self.label or "call",
            "kernels": f"{self.kernels:.0f}",
            "launches": f"{self.launches:.0f}",
            "GPU ms": f"{self.busy_ms:.2f}",
            "attention": attention_path(self),
            "ms by kind": cats or "–",
        }


def kernel_summary(
    fn: Callable[..., Any],
    *args: Any,
    calls: int = 3,
    warmup: int = 2,
    label: str = "",
    **kwargs: Any,
) -> KernelSummary:
    """Profile ``calls`` calls of ``fn(*args, **kwargs)`` after ``warmup`` calls; return
    the per-call :class:`KernelSummary`."""
    from .profiling import _spans, profile_events

    positive_int("calls", calls)
    events = profile_events(fn, *args, calls=calls, warmup=warmup, **kwargs)
    cpu, gpu, _ = _spans(events)
    kernels = [span for span in gpu if span.kind == "kernel"]
    launches = [span for span in cpu if span.kind == "launch"]
    by_category: dict[str, float] = {}
    counts: Counter = Counter()
    by_name: dict[str, list[float]] = {}
    for span in kernels:
        category = kernel_category(span.name)
        by_category[category] = (
            by_category.get(category, 0.0) + span.duration_us / calls / 1e3
        )
        counts[category] += 1 / calls
        by_name.setdefault(span.name, []).append(span.duration_us)
    ops = Counter(str(e.get("name")) for e in events if e.get("cat") == "cpu_op")
    aten = {name: ops[name] / calls for name in _ATEN_OF_INTEREST if ops.get(name)}
    attention = tuple(
        sorted(
            {
                s.name[:70]
                for s in kernels
                if kernel_category(s.name) == "attention (fused)"
            }
        )
    )
    top = sorted(by_name.items(), key=lambda item: -sum(item[1]))[:5]
    summary = KernelSummary(
        kernels=len(kernels) / calls,
        launches=len(launches) / calls,
        busy_ms=sum(s.duration_us for s in kernels) / calls / 1e3,
        by_category=by_category,
        counts=dict(counts),
        aten=aten,
        attention_kernels=attention,
        top=tuple((name[:70], sum(t) / calls / 1e3, len(t) / calls) for name, t in top),
        label=label,
        names={name: len(t) / calls for name, t in by_name.items()},
    )
    return summary


def _busy_per_call(events: list[dict]) -> tuple[list[str], list[float], list[int]]:
    """Per call mark of a trace (in order): its name, the GPU's busy time in µs (the
    union of the kernels, copies and fills the call launched) and how many it
    launched.

    Each GPU event is tied to the call whose mark holds its launch, through the
    ``correlation`` id that both carry (the CPU clock decides, not the GPU's
    timestamps). A GPU event whose launch lies in no mark raises ``RuntimeError``.
    """
    import bisect

    from .profiling import _CALL_MARK, _GPU_CATEGORIES, _union_length

    marks = sorted(
        (
            e
            for e in events
            if e.get("cat") == "user_annotation"
            and str(e.get("name", "")).startswith(_CALL_MARK)
        ),
        key=lambda e: float(e["ts"]),
    )
    starts = [float(e["ts"]) for e in marks]
    launches = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            correlation = e.get("args", {}).get("correlation")
            if correlation is not None:
                launches[correlation] = float(e["ts"])
    spans: list[list[tuple[float, float]]] = [[] for _ in marks]
    for e in events:
        if e.get("cat") not in _GPU_CATEGORIES:
            continue
        launched = launches.get(e.get("args", {}).get("correlation"))
        index = (
            bisect.bisect_right(starts, launched) - 1 if launched is not None else -1
        )
        if index < 0 or launched > starts[index] + float(marks[index]["dur"]):
            raise RuntimeError(
                f"a GPU event ({e.get('name')!r}) was launched outside every call"
            )
        start = float(e["ts"])
        spans[index].append((start, start + float(e["dur"])))
    names = [str(e["name"]) for e in marks]
    return names, [_union_length(s) for s in spans], [len(s) for s in spans]


def gpu_times(
    variants: Mapping[str, Callable[..., Any]],
    *args: Any,
    rounds: int = 20,
    warmup: int = 2,
    **kwargs: Any,
) -> dict:
    """GPU time per call of each variant: how long the GPU was busy with the kernels,
    copies and fills a call launched (their union), from one profile of ``rounds``
    interleaved rounds (A B A B ..., each call synchronised before the next starts).

    Returns a :class:`gpubook.Timing` per label, one sample per call (``mode`` is
    ``"latency"``: single calls), so that two variants compare with
    ``gpubook.ratio(a, b, paired=True)``, each round's pair taken side by side. Unlike
    a call's wall time, this leaves out the host's work (Python, guards, launches):
    it judges the device work, not calls. The first round is profiled but not kept.
    Raises ``RuntimeError`` when a variant's calls launch different numbers of GPU
    events (a recompile or autotuning inside the profile) or when a GPU event cannot
    be tied to a call. Needs a CUDA device in use.
    """
    from .profiling import _profile_rounds
    from .timing import Timing

    if not isinstance(variants, Mapping) or not variants:
        raise TypeError("variants must be a non-empty dict of label -> callable")
    for label, fn in variants.items():
        if not callable(fn):
            raise TypeError(f"variant {label!r} is not callable")
    positive_int("rounds", rounds)
    positive_int("warmup", warmup, allow_zero=True)
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        raise RuntimeError("GPU time per call needs a CUDA device in use")
    labels = list(variants)
    events = _profile_rounds(list(variants.values()), rounds + 1, warmup, args, kwargs)
    names, busy, counts = _busy_per_call(events)
    calls = (rounds + 1) * len(labels)
    if len(names) != calls:
        raise RuntimeError(
            f"the profile holds {len(names)} call marks for {calls} calls"
        )
    samples: dict[str, list[float]] = {label: [] for label in variants}
    launched: dict[str, set[int]] = {label: set() for label in variants}
    for name, us, count in zip(names, busy, counts):
        index = int(name.rsplit(" ", 1)[1])
        label = labels[index % len(labels)]
        launched[label].add(count)
        if index >= len(variants):  # the first round is not kept
            samples[label].append(us / 1e6)
    for label, times in samples.items():
        if len(launched[label]) != 1:
            raise RuntimeError(
                f"the calls of {label!r} launched different numbers of GPU events "
                f"({sorted(launched[label])}): a recompile or autotuning in the "
                "profile?"
            )
        if min(times) <= 0:
            raise RuntimeError(f"no GPU work was recorded in a call of {label!r}")
    return {
        label: Timing(tuple(times), label=label, mode="latency")
        for label, times in samples.items()
    }


def attention_path(summary: KernelSummary) -> str:
    """Which attention a profiled call ran, in words: a fused kernel (flash,
    memory-efficient, cuDNN), the unfused form (batched matrix products and a softmax),
    or no attention."""
    aten = summary.aten
    names = " ".join(summary.attention_kernels).lower()
    fused_ops = sum(
        v
        for k, v in aten.items()
        if "attention" in k and k != "aten::scaled_dot_product_attention"
    )
    if summary.attention_kernels:
        if "flash" in names:
            return "fused (flash)"
        if "cudnn" in names:
            return "fused (cuDNN)"
        return "fused (memory-efficient)"
    if aten.get("aten::bmm", 0) + aten.get("aten::baddbmm", 0) > 0:
        return "unfused (bmm + softmax)"
    if fused_ops or aten.get("aten::scaled_dot_product_attention"):
        return "fused SDPA (CPU)"
    return "none seen"


# --- Fresh processes ------------------------------------------------------------------

_PRELUDE = textwrap.dedent(
    """
    try:  # a crash writes no core file (writing one can take a minute)
        import resource as _resource
        _resource.setrlimit(_resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass
    import json as _json, time as _time
    _start = _time.perf_counter()
    import torch as _torch
    IMPORT_TORCH_S = _time.perf_counter() - _start

    def sync():
        if _torch.cuda.is_available() and _torch.cuda.is_initialized():
            _torch.cuda.synchronize()

    def timed(fn, *args, **kwargs):
        '''(seconds, result) of one synchronised call.'''
        sync()
        _start = _time.perf_counter()
        _result = fn(*args, **kwargs)
        sync()
        return _time.perf_counter() - _start, _result

    def report(**values):
        print("GPUBOOK_RESULT " + _json.dumps(values), flush=True)

    def wait_for_compile_workers(timeout=60):
        '''Seconds spent waiting for the compile workers a first compile started.'''
        _start = _time.perf_counter()
        try:  # torch 2.11's pool starts with the first compile and is ready later
            from torch._inductor.async_compile import AsyncCompile as _pool
            _pool.wait_pool_ready(timeout=timeout)
        except Exception:  # no pool (one compile thread), or another torch
            pass
        return _time.perf_counter() - _start
    """
)


class FreshProcessError(RuntimeError):
    """A fresh process (see :func:`fresh_process`) failed or reported nothing.

    ``returncode``: its exit status (negative: killed by that signal); ``signal``: the
    signal's name (``"SIGSEGV"``) or ``None``; ``tail``: the last lines of its error
    output; ``where``: for a crash, the innermost Python frame that Python's fault
    handler printed (``"torch/export/pt2_archive/_package.py, line 1045, in
    _load_aoti"``), or ``None``; ``reported``: what the process reported with
    ``report(...)`` before it failed (its last report), or ``None``. :meth:`describe`
    says it in words. ``timed_out`` is True when the process was stopped for taking
    longer than its timeout (it may have been stuck), False when it ended by itself.
    """

    def __init__(
        self,
        message: str,
        returncode: int | None = None,
        tail: str = "",
        timed_out: bool = False,
    ):
        super().__init__(message)
        self.reported: dict | None = None
        self.timed_out = timed_out
        self.returncode = returncode
        self.tail = tail
        self.signal = _signal_name(returncode)
        self.where = _innermost_frame(tail)

    def describe(self) -> str:
        """``'crashed with a segmentation fault (exit -11) in torch/..., line 1045, in
        _load_aoti'``, ``'exited with status 1: ZeroDivisionError: division by zero'``,
        or the message when neither applies."""
        if self.returncode is None:
            return str(self)
        if self.signal is not None:
            what = _SIGNAL_WORDS.get(self.signal, f"signal {self.signal}")
            text = f"crashed with {what} (exit {self.returncode})"
            return f"{text} in {self.where}" if self.where else text
        lines = [line.strip() for line in self.tail.splitlines() if line.strip()]
        last = lines[-1][:200] if lines else "no error output"
        return f"exited with status {self.returncode}: {last}"


_SIGNAL_WORDS = {
    "SIGSEGV": "a segmentation fault",
    "SIGABRT": "an abort",
    "SIGBUS": "a bus error",
    "SIGILL": "an illegal instruction",
    "SIGFPE": "a floating-point exception",
    "SIGKILL": "a kill signal (out of memory?)",
}


def _signal_name(returncode: int | None) -> str | None:
    import signal

    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _innermost_frame(tail: str) -> str | None:
    """The first frame of a fault handler's stack (most recent call first) of the
    crashing thread, with the path shortened to the package: ``'torch/x.py, line 3, in
    f'``."""
    import re

    text = tail or ""
    current = text.find("Current thread")  # other threads' stacks may come first
    match = re.search(r'File "([^"]+)", line (\d+) in (\S+)', text[max(current, 0) :])
    if match is None:
        return None
    path, line, function = match.groups()
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    else:
        path = "/".join(path.replace(os.sep, "/").split("/")[-2:])
    return f"{path}, line {line}, in {function}"


def _child_env(cache_dir: str | None, env: Mapping[str, str] | None) -> dict:
    child_env = dict(os.environ)
    child_env.pop("TORCH_LOGS", None)
    child_env["PYTHONWARNINGS"] = "ignore"
    if cache_dir is not None:
        child_env["TORCHINDUCTOR_CACHE_DIR"] = str(cache_dir)
        child_env["TRITON_CACHE_DIR"] = os.path.join(str(cache_dir), "triton")
    child_env.update(env or {})
    return child_env


def _check_code(name: str, code: str) -> None:
    if not isinstance(code, str) or not code.strip():
        raise ValueError(f"{name} must be a non-empty string of Python source")


def _child_result(returncode: int, stdout: str, stderr: str) -> dict:
    """What a child reported, or :class:`FreshProcessError` with its exit status."""
    result = None
    for line in stdout.splitlines():
        if line.startswith("GPUBOOK_RESULT "):
            result = json.loads(line.split(" ", 1)[1])
    if returncode == 0 and result is None:
        raise FreshProcessError(
            "the fresh process reported nothing (call report(...) in the code)"
        )
    if returncode != 0 or result is None:
        output = (stderr or stdout or "").strip()
        tail = "\n".join(output.splitlines()[-12:])
        error = FreshProcessError(
            f"the fresh process failed (exit {returncode})", returncode, tail
        )
        # the crashing frame from the whole fault handler's stack, which can be longer
        # than the tail kept for the message
        error.where = _innermost_frame(output) if error.signal else error.where
        error.reported = result  # what it said before it failed, if anything
        error.args = (f"the fresh process {error.describe()}\n{tail}".rstrip(),)
        raise error
    return result


def fresh_process(
    code: str,
    cache_dir: str | None = None,
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
) -> dict:
    """Run ``code`` in a new Python process and return what it reported.

    The code may use what is defined before it: ``IMPORT_TORCH_S`` (seconds ``import
    torch`` took in the child), ``sync()``, ``timed(fn, *args)`` (one synchronised call:
    ``(seconds, result)``), ``wait_for_compile_workers()`` (seconds spent waiting for
    the compile worker processes that a first compile starts and does not wait for)
    and ``report(**values)`` (JSON-serialisable values; the last
    report wins; a process that fails after a report raises with it in the error's
    ``reported``). ``cache_dir`` points TorchInductor's and Triton's on-disk caches at
    that folder (``None``: the caches this process uses). The child runs with Python's
    fault handler on (a crash prints the Python stack) and writes no core file. Raises
    :class:`FreshProcessError` (a :class:`RuntimeError`) with the exit status and the
    end of the child's error output if it fails or reports nothing.
    """
    _check_code("code", code)
    positive_number("timeout", timeout)
    with tempfile.TemporaryDirectory(prefix="gpubook-fresh-") as work:
        script = os.path.join(work, "child.py")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(_PRELUDE + "\n" + textwrap.dedent(code))
        process = _start_child(
            script, cache_dir, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise FreshProcessError(
                f"the fresh process took more than {timeout:.0f} s", timed_out=True
            ) from None
        finally:
            _stop_group(process)
    return _child_result(process.returncode, stdout, stderr)


def _start_child(
    script: str, cache_dir: str | None, env: Mapping[str, str] | None, **streams: Any
) -> subprocess.Popen:
    """Start ``script`` in a fresh Python: with the fault handler on, the environment of
    :func:`_child_env`, this process's folder, text streams as ``streams`` say, and a
    session of its own, so that :func:`_stop_group` stops its compile workers with
    it."""
    return subprocess.Popen(
        [sys.executable, "-X", "faulthandler", script],
        env=_child_env(cache_dir, env),
        text=True,
        cwd=os.getcwd(),
        start_new_session=True,
        **streams,
    )


def _stop_group(process: subprocess.Popen) -> None:
    """Kill a child started in a session of its own, with what it started
    (TorchInductor's compile workers), if it is still running."""
    import signal

    try:  # also when the child has ended: its workers may outlive it
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        if process.poll() is None:
            process.kill()
    process.wait()


_TURN = textwrap.dedent(
    """
    import sys as _sys
    print("GPUBOOK_READY", flush=True)
    _sys.stdin.readline()  # this process's turn: the one before it has finished
    """
)

# After a job's code: leave at once. A normal exit waits for the compile workers to
# shut down (about 7 s each on the book's GPU host), time that nothing measures and
# that would delay the next job's turn. Inductor, AOTAutograd and Triton write their
# on-disk caches during the compile, so a later job still finds them.
_LEAVE = textwrap.dedent(
    """
    _sys.stdout.flush()
    _sys.stderr.flush()
    import os as _os
    _os._exit(0)
    """
)


def fresh_processes(
    jobs: list[tuple[str, str, str | None]],
    timeout: float = 600,
    env: Mapping[str, str] | None = None,
    log: Callable[[str], Any] | None = None,
) -> list[dict]:
    """Several fresh processes whose set-up overlaps and whose measured parts do not.

    Each job is ``(setup, code, cache_dir)``. All processes start at once and run their
    ``setup`` (imports, building a model and its inputs: what nothing measures) side by
    side; then one at a time, in the order given, each runs its ``code`` while the
    others wait idle, blocked on a pipe. A job that reaches the end of its ``code``
    leaves at once (``os._exit``), and what it started (compile workers) is stopped
    before the next turn. A measurement in ``code`` thus sees the machine
    as one :func:`fresh_process` would, and a job can use what an earlier one wrote (a
    cache folder, a file). Both parts may use what :func:`fresh_process` defines.
    ``timeout`` bounds the set-up and each job's turn. Returns what each job reported,
    in order. Raises :class:`FreshProcessError` for the first job that fails (its
    ``job`` is the index, its ``completed`` what the jobs before it reported; the
    processes still waiting are stopped, with the compile workers they started).
    ``log``, if given, is called with a short line as the set-up and each job end (for a
    run's log: a notebook can pass a function that writes to ``sys.__stderr__``).
    """
    import threading
    import time

    def say(line: str) -> None:
        if log is not None:
            log(f"fresh_processes: {line} (+{time.monotonic() - began:.0f} s)")

    if not isinstance(jobs, list) or not jobs:
        raise ValueError("jobs must be a non-empty list of (setup, code, cache_dir)")
    for index, job in enumerate(jobs):
        if not (isinstance(job, tuple) and len(job) == 3):
            raise ValueError(f"job {index} must be a tuple (setup, code, cache_dir)")
        if not isinstance(job[0], str):
            raise ValueError(f"job {index}: setup must be a string of Python source")
        _check_code(f"job {index}: code", job[1])
    positive_number("timeout", timeout)
    children: list[tuple[subprocess.Popen, Any, list, threading.Event, Any]] = []

    def pump(stream, lines: list, ready: threading.Event) -> None:
        for line in stream:
            lines.append(line)
            if line.startswith("GPUBOOK_READY"):
                ready.set()
        ready.set()  # the end of its output: the process ended, perhaps before its turn

    results: list[dict] = []

    def fail(index: int, error: FreshProcessError) -> FreshProcessError:
        error.job = index
        error.completed = list(results)  # what the jobs before it reported
        return error

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpubook-fresh-") as work:
        try:
            for index, (setup, code, cache_dir) in enumerate(jobs):
                script = os.path.join(work, f"child{index}.py")
                with open(script, "w", encoding="utf-8") as handle:
                    handle.write(
                        "\n".join(
                            [
                                _PRELUDE,
                                textwrap.dedent(setup),
                                _TURN,
                                textwrap.dedent(code),
                                _LEAVE,
                            ]
                        )
                    )
                errors = open(os.path.join(work, f"child{index}.err"), "w+")
                process = _start_child(
                    script,
                    cache_dir,
                    env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                )
                lines: list[str] = []
                ready = threading.Event()
                reader = threading.Thread(
                    target=pump, args=(process.stdout, lines, ready), daemon=True
                )
                reader.start()
                children.append((process, errors, lines, ready, reader))
            deadline = time.monotonic() + timeout
            for index, (_, _, _, ready, _) in enumerate(children):
                if not ready.wait(max(deadline - time.monotonic(), 0.0)):
                    raise fail(
                        index,
                        FreshProcessError(
                            f"a fresh process took more than {timeout:.0f} s to set up",
                            timed_out=True,
                        ),
                    )
            say(f"{len(children)} set up")
            for index, (process, errors, lines, _, reader) in enumerate(children):
                try:
                    process.stdin.write("go\n")
                    process.stdin.close()
                except (BrokenPipeError, OSError):
                    pass  # it ended already; its exit status says how
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    raise fail(
                        index,
                        FreshProcessError(
                            f"the fresh process took more than {timeout:.0f} s",
                            timed_out=True,
                        ),
                    ) from None
                # what it started (compile workers) holds its stdout open: stop them
                # first, or the reader waits for the end of output until its time-out
                _stop_group(process)
                reader.join(timeout=10)  # the rest of its output, up to the end
                errors.seek(0)
                try:
                    results.append(
                        _child_result(process.returncode, "".join(lines), errors.read())
                    )
                except FreshProcessError as error:
                    raise fail(index, error) from None
                say(f"job {index} done")
            return results
        finally:
            for process, errors, *_ in children:
                _stop_group(process)
                errors.close()


# --- Does the process's state move an eager baseline? ---------------------------------


class BaselineLog:
    """Re-measure one eager call at named points of a notebook.

    ``BaselineLog(model, example)`` then ``log.check("after the profiler")`` at each
    point; each check is a :func:`gpubook.throughput` measurement of ``min_run_time``
    seconds. ``log.timings`` maps each point to its :class:`gpubook.Timing`;
    ``log.state`` to what else was measured then: the host's 1-minute load average, the
    number of live child processes (compile workers), and the GPU's SM clock in MHz when
    it can be read. ``log.table(reference)`` shows them with their ratio to
    ``reference`` seconds (a fresh process's time).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *args: Any,
        min_run_time: float = 0.3,
        context: Callable[[], Any] | None = None,
    ):
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn, self.args = fn, args
        self.min_run_time = positive_number("min_run_time", min_run_time)
        self.context = context or torch.inference_mode
        self.timings: dict[str, Any] = {}
        self.state: dict[str, dict[str, Any]] = {}

    def check(self, label: str) -> None:
        """Measure now, under ``label`` (the result goes to ``timings[label]``)."""
        from .timing import throughput

        if not isinstance(label, str) or not label:
            raise ValueError("label must be a non-empty string")
        with self.context():
            timing = throughput(self.fn, *self.args, min_run_time=self.min_run_time)
        self.timings[label] = timing
        self.state[label] = _process_state()

    def table(self, reference_seconds: float | None = None) -> Table:
        from .timing import format_seconds

        rows = []
        for label, timing in self.timings.items():
            row = {
                "point in the notebook": label,
                "eager, median": format_seconds(timing.median),
                "IQR": f"{format_seconds(timing.q25)} to {format_seconds(timing.q75)}",
            }
            if reference_seconds:
                row["vs fresh process"] = f"{timing.median / reference_seconds:.2f}x"
            state = self.state.get(label, {})
            row["host load"] = _show(state.get("load"), "{:.1f}")
            row["child processes"] = _show(state.get("children"), "{:d}")
            row["SM clock"] = _show(state.get("sm_clock_mhz"), "{:.0f} MHz")
            rows.append(row)
        return Table(
            rows,
            caption="throughput mode, blocks of back-to-back calls; "
            "ratio > 1: slower than in a fresh process",
        )


def _show(value: Any, pattern: str) -> str:
    return "–" if value is None else pattern.format(value)


def _process_state() -> dict[str, Any]:
    """Load average, live child processes and the SM clock (None where unreadable)."""
    state: dict[str, Any] = {"load": None, "children": None, "sm_clock_mhz": None}
    try:
        state["load"] = os.getloadavg()[0]
    except (AttributeError, OSError):
        pass
    try:
        children = f"/proc/{os.getpid()}/task/{os.getpid()}/children"
        with open(children, encoding="utf-8") as handle:
            state["children"] = len(handle.read().split())
    except OSError:
        pass
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        try:
            state["sm_clock_mhz"] = float(torch.cuda.clock_rate())
        except Exception:  # needs NVML (nvidia-ml-py); absent on some machines
            pass
    return state


# --- Inductor's reasons for skipping CUDA graphs --------------------------------------

_CUDAGRAPH_LOGGERS = (
    "torch._inductor.cudagraph_utils.__cudagraphs",
    "torch._inductor.cudagraph_utils.__perf_hints",
    "torch._inductor.cudagraph_utils",
)


class CudagraphNotes(logging.Handler):
    """Collects the messages Inductor logs when it skips CUDA graphs ("skipping
    cudagraphs due to ..."). Use as a context manager; ``notes.messages`` holds the
    messages, and ``notes.skips`` the count of Inductor's ``cudagraph_skips`` counter
    during the block. Inside the block the messages go to the notes only, not to the
    loggers' own handlers (stderr): the notebook prints what it wants of them."""

    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []
        self.skips = 0
        self._saved: list[tuple[logging.Logger, int, list, bool]] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "cudagraph" in message.lower() and message not in self.messages:
            self.messages.append(message)

    def __enter__(self) -> "CudagraphNotes":
        from torch._dynamo.utils import counters

        self._before = counters["inductor"]["cudagraph_skips"]
        for name in _CUDAGRAPH_LOGGERS:
            logger = logging.getLogger(name)
            saved = (logger, logger.level, list(logger.handlers), logger.propagate)
            self._saved.append(saved)
            for handler in saved[2]:
                logger.removeHandler(handler)
            logger.addHandler(self)
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
        return self

    def __exit__(self, *exc: Any) -> None:
        from torch._dynamo.utils import counters

        for logger, level, handlers, propagate in reversed(self._saved):
            logger.removeHandler(self)
            for handler in handlers:
                if handler not in logger.handlers:
                    logger.addHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate
        self._saved.clear()
        self.skips = counters["inductor"]["cudagraph_skips"] - self._before

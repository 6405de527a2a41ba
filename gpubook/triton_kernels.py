"""Helpers for chapter 8 (writing Triton kernels): the parts a reader need not copy.

The kernels themselves live in the notebook; this module keeps the plumbing around them:

* :func:`load` imports Triton (switching on its CPU interpreter first when there is no
  GPU), or returns stand-ins whose decorators work but whose kernels refuse to launch,
  so a chapter can define its kernels and say "no Triton here" instead of failing at
  import;
* :func:`bench` times a GPU call with ``triton.testing.do_bench`` and returns a
  :class:`gpubook.Timing` (seconds);
* :func:`generated_kernels` pulls the Triton kernels out of TorchInductor's generated
  code;
* :func:`run_interpreted` runs a small script in a fresh process under
  ``TRITON_INTERPRET=1``;
* :func:`short_error` turns a Triton compile or launch error into one or two readable
  lines;
* :func:`load_instructions` counts the global-load instructions in a compiled kernel's
  PTX;
* :func:`bandwidth_plot` draws achieved GB/s against size with interquartile bands.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import types
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from .dynamo import trim
from .timing import Timing

__all__ = [
    "MISSING_NOTE",
    "MissingTritonError",
    "load",
    "bench",
    "generated_kernels",
    "show_generated",
    "run_interpreted",
    "short_error",
    "load_instructions",
    "load_bytes",
    "widest_load",
    "describe_loads",
    "rate",
    "bandwidth_plot",
    "describe_config",
    "config_timings",
    "config_spread",
    "near_best",
    "config_table",
]

MISSING_NOTE = (
    "Triton is not installed with this PyTorch (CPU-only builds, Windows and macOS "
    "often lack it), so this cell is skipped; `pip install triton` on Linux, or read "
    "the published outputs."
)
"""What a chapter prints in place of a Triton cell when Triton cannot be imported."""


class MissingTritonError(RuntimeError):
    """Raised when a stand-in kernel (Triton missing) is launched."""


class _MissingKernel:
    """What ``@triton.jit`` returns without Triton: defined, but cannot launch."""

    def __init__(self, fn: Callable[..., Any] | None = None):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "kernel")

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        raise MissingTritonError(MISSING_NOTE)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise MissingTritonError(MISSING_NOTE)


def _decorator(fn: Callable[..., Any] | None = None, **_: Any) -> Any:
    if fn is None:
        return lambda inner: _MissingKernel(inner)
    return _MissingKernel(fn)


class _AnyAttribute(types.SimpleNamespace):
    """A stand-in for ``triton.language``: any attribute (``tl.constexpr``,
    ``tl.float32``)
    exists.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {})


def _stand_ins() -> tuple[Any, Any]:
    triton = types.SimpleNamespace(
        __version__="missing",
        jit=_decorator,
        autotune=lambda *args, **kwargs: _decorator,
        heuristics=lambda *args, **kwargs: _decorator,
        Config=lambda *args, **kwargs: (args, kwargs),
        cdiv=lambda a, b: -(-a // b),
        next_power_of_2=lambda n: 1 << max(int(n) - 1, 0).bit_length(),
        testing=None,
    )
    return triton, _AnyAttribute()


def load(interpret: bool) -> tuple[Any, Any, bool]:
    """Import Triton: ``(triton, triton.language, available)``.

    ``interpret=True`` (no GPU) sets ``TRITON_INTERPRET=1`` first, so every kernel runs
    on the CPU through Triton's NumPy interpreter. The variable must be set before
    Triton is imported: Triton reads it when a function is decorated with
    ``@triton.jit``, and its own library functions (``tl.sum``, ...) are decorated at
    import. If Triton was imported without it, this raises ``RuntimeError``. When Triton
    cannot be imported, returns stand-ins: ``@triton.jit`` and ``@triton.autotune``
    still decorate, ``tl.constexpr`` still annotates, but launching a kernel raises
    :class:`MissingTritonError`; ``available`` is then ``False``.
    """
    if not isinstance(interpret, bool):
        raise TypeError(f"interpret must be a bool, got {type(interpret).__name__}")
    if interpret and os.environ.get("TRITON_INTERPRET") != "1":
        if "triton" in sys.modules:
            raise RuntimeError(
                "Triton was imported before TRITON_INTERPRET=1 was set: its library"
                " functions (tl.sum, ...) are already built for the GPU. Set"
                " os.environ['TRITON_INTERPRET'] = '1' before anything imports triton"
                " (restart the kernel)."
            )
        os.environ["TRITON_INTERPRET"] = "1"
    try:
        import triton
        import triton.language as tl
    except Exception:  # ImportError, or a broken install raising something else
        triton, tl = _stand_ins()
        return triton, tl, False
    return triton, tl, True


def bench(
    fn: Callable[[], Any], label: str = "", warmup_ms: int = 10, rep_ms: int = 50
) -> Timing:
    """Time ``fn()`` on the GPU with ``triton.testing.do_bench``: a
    :class:`gpubook.Timing`.

    ``do_bench`` runs ``fn`` for about ``warmup_ms`` milliseconds, then for about
    ``rep_ms`` milliseconds times each call alone with CUDA events, writing a 256 MB
    buffer before every call so that no input is still in the L2 cache. Every call is
    one sample (seconds); the Timing's mode is ``latency``.
    """
    try:
        from triton.testing import do_bench
    except Exception as error:
        raise RuntimeError("bench needs Triton (triton.testing.do_bench)") from error
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("bench times GPU kernels: no CUDA device is available")
    try:
        times_ms = do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    except (AssertionError, TypeError):  # a Triton without return_mode="all"
        times_ms = do_bench(
            fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.25, 0.5, 0.75]
        )
    return Timing(times=tuple(t / 1e3 for t in times_ms), label=label, mode="latency")


_KERNEL_STRING = re.compile(r"'''(.*?)'''", re.S)


def generated_kernels(code: str) -> list[str]:
    """The Triton kernels in TorchInductor's generated module ``code`` (as from
    ``torch._inductor.utils.run_and_get_code``), each from ``@triton.jit`` to its last
    line, without Inductor's tuning decorator and imports. Empty when there are none
    (CPU code).
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be a str, got {type(code).__name__}")
    kernels = []
    for block in _KERNEL_STRING.findall(code):
        if "@triton.jit" not in block:
            continue
        start = block.find("\ndef ", block.find("@triton.jit"))
        if start < 0:
            continue
        kernels.append("@triton.jit" + block[start:].rstrip())
    return kernels


def show_generated(codes: Sequence[str]) -> str:
    """The first Triton kernel in the generated sources ``codes`` (the second value of
    ``run_and_get_code``), or a sentence saying there is none."""
    for code in codes:
        kernels = generated_kernels(code)
        if kernels:
            return kernels[0]
    return "(no Triton kernel in the generated code)"


def run_interpreted(script: str, timeout: float = 300) -> str:
    """Run Python source ``script`` in a fresh process with ``TRITON_INTERPRET=1`` set
    before anything is imported; return what it printed (stdout, then stderr), without
    machine paths.

    A non-zero exit adds a last line ``exit status N``.
    """
    if not isinstance(script, str) or not script.strip():
        raise ValueError("script must be non-empty Python source")
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ValueError(
            f"timeout must be a positive number of seconds, got {timeout!r}"
        )
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONWARNINGS="ignore")
    with tempfile.TemporaryDirectory(prefix="gpubook-triton-") as folder:
        path = os.path.join(folder, "kernel_demo.py")
        with open(path, "w") as handle:
            handle.write(script)
        done = subprocess.run(
            [sys.executable, path],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            cwd=folder,
        )
    text = trim(done.stdout + ("\n" + done.stderr if done.stderr.strip() else ""))
    if done.returncode:
        text += f"\nexit status {done.returncode}"
    return text


def short_error(error: BaseException, width: int = 86) -> str:
    """A Triton error in one or two lines: ``Class: reason`` and, for compile errors,
    the
    kernel line it points at (Triton's messages repeat the kernel source with a caret
    under the fault).
    """
    if not isinstance(error, BaseException):
        raise TypeError(f"error must be an exception, got {type(error).__name__}")
    lines = [line.rstrip() for line in trim(str(error)).splitlines() if line.strip()]
    carets = [i for i, line in enumerate(lines) if set(line.strip()) == {"^"}]
    if carets:
        last = carets[-1]
        reason = " ".join(line.strip() for line in lines[last + 1 :]) or lines[0]
        where = lines[last - 1].strip() if last > 0 else ""
    else:
        reason, where = (lines[0] if lines else ""), ""
    reason = reason[: width - 3] + "..." if len(reason) > width else reason
    text = f"{type(error).__name__}: {reason}"
    return text + (f"\n    at: {where}" if where else "")


_LOAD = re.compile(r"\bld\.global(?:\.[a-z0-9]+)*")


def load_instructions(compiled: Any) -> dict[str, int]:
    """Global-memory load instructions in a compiled kernel's PTX, with their counts.

    ``compiled`` is what launching a ``@triton.jit`` kernel returns on a GPU (it has
    ``.asm``). ``ld.global.v4.b32`` loads 16 bytes per thread, ``ld.global.v2.b32`` 8,
    ``ld.global.b8`` one.
    """
    asm = getattr(compiled, "asm", None)
    if not isinstance(asm, Mapping) or "ptx" not in asm:
        raise ValueError(
            "compiled must be a compiled Triton kernel with PTX (launch it on a GPU)"
        )
    return dict(Counter(_LOAD.findall(asm["ptx"])))


def load_bytes(instruction: str) -> int:
    """Bytes one thread loads with a PTX load such as ``ld.global.v2.b32`` (8) or
    ``ld.global.b8`` (1)."""
    if not isinstance(instruction, str):
        raise TypeError(f"instruction must be a str, got {type(instruction).__name__}")
    vector = re.search(r"\.v(\d+)\b", instruction)
    bits = re.search(r"\.[bsuf](\d+)\b", instruction)
    if bits is None:
        raise ValueError(f"no operand width in {instruction!r}")
    return (int(vector.group(1)) if vector else 1) * int(bits.group(1)) // 8


def widest_load(compiled: Any) -> int:
    """The widest global load of a compiled kernel, in bytes per thread (see
    :func:`load_instructions`)."""
    counts = load_instructions(compiled)
    if not counts:
        raise ValueError("the kernel has no global loads")
    return max(load_bytes(name) for name in counts)


def rate(flops: float, timing: Timing) -> tuple[float, float, float]:
    """TFLOP/s for ``flops`` operations per call at ``timing``: ``(median, low, high)``,
    low and high from the 75th and 25th percentile times (error bars for
    :func:`gpubook.plots.roofline`)."""
    if not isinstance(timing, Timing):
        raise TypeError(f"timing must be a gpubook.Timing, got {type(timing).__name__}")
    if not (isinstance(flops, (int, float)) and flops > 0):
        raise ValueError(f"flops must be a positive number, got {flops!r}")
    return (
        flops / timing.median / 1e12,
        flops / timing.q75 / 1e12,
        flops / timing.q25 / 1e12,
    )


def describe_loads(compiled: Any) -> str:
    """``widest load 8 bytes per thread; ld.global.v2.b32 x 16`` for a compiled kernel,
    or a sentence saying why its PTX could not be read."""
    try:
        counts = load_instructions(compiled)
        widest = widest_load(compiled)
    except ValueError as error:
        return f"(no load instructions to show: {error})"
    listed = ", ".join(f"{name} x {count}" for name, count in sorted(counts.items()))
    from .timing import counted

    return f"widest load {counted(widest, 'byte')} per thread; {listed}"


def bandwidth_plot(
    sizes: Sequence[float],
    timings: Mapping[str, Sequence[Timing]],
    nbytes: Sequence[float],
    title: str,
    limit_gbs: float,
    xlabel: str,
    device: Any = None,
    dtype: Any = None,
):
    """Achieved GB/s (``nbytes[i] / time``) against size, one line per variant, with
    bands
    from the 25th to the 75th percentile of the times and the copy bandwidth as a dashed
    line.
    """
    from . import plots

    if len(nbytes) != len(sizes):
        raise ValueError(f"nbytes has {len(nbytes)} values for {len(sizes)} sizes")
    series = {}
    for name, row in timings.items():
        if len(row) != len(sizes):
            raise ValueError(
                f"timings {name!r} has {len(row)} values for {len(sizes)} sizes"
            )
        series[name] = [
            (b / t.median / 1e9, b / t.q75 / 1e9, b / t.q25 / 1e9)
            for b, t in zip(nbytes, row)
        ]
    fig = plots.versus_size(
        sizes,
        series,
        title,
        "achieved GB/s (read + written)",
        xlabel=xlabel,
        device=device,
        dtype=dtype,
        limit=limit_gbs,
        limit_label=f"copy bandwidth {limit_gbs:,.0f} GB/s",
        logy=False,
    )
    ax = fig.axes[0]
    top = max([limit_gbs] + [high for row in series.values() for _, _, high in row])
    ax.set_ylim(0, 1.1 * top)
    return fig


def describe_config(config: Any) -> str:
    """A ``triton.Config`` in words: ``BLOCK_M=128, ..., 8 warps, 3 stages``."""
    kwargs = getattr(config, "kwargs", None)
    if not isinstance(kwargs, Mapping):
        raise TypeError(f"config must be a triton.Config, got {type(config).__name__}")
    parts = [f"{key}={value}" for key, value in kwargs.items()]
    parts.append(f"{config.num_warps} warps")
    parts.append(f"{config.num_stages} stages")
    return ", ".join(parts)


def config_timings(tuner: Any) -> list[tuple[Any, float]]:
    """``(config, median seconds)`` for every configuration an autotuned kernel timed on
    its last tuning run, fastest first. Triton keeps them in ``configs_timings``
    (milliseconds, a number or ``[median, 20th, 80th percentile]``).
    """
    timings = getattr(tuner, "configs_timings", None)
    if not isinstance(timings, Mapping) or not timings:
        raise ValueError(
            "tuner has no timings: call the autotuned kernel on a GPU first"
        )
    rows = []
    for config, value in timings.items():
        median_ms = value[0] if isinstance(value, (list, tuple)) else value
        rows.append((config, float(median_ms) / 1e3))
    return sorted(rows, key=lambda row: row[1])


def _finished(tuner: Any) -> list[tuple[Any, float]]:
    """:func:`config_timings` without the configurations that failed (infinite time)."""
    return [(config, t) for config, t in config_timings(tuner) if t < float("inf")]


def config_spread(tuner: Any) -> float:
    """Slowest over fastest median time among the configurations the tuner timed (1.0:
    none differ; ``nan`` when Triton kept no timings). Failed configurations (infinite
    time) are left out."""
    try:
        times = [t for _, t in _finished(tuner)]
    except ValueError:
        return float("nan")
    return max(times) / min(times)


def near_best(tuner: Any, within: float = 0.02) -> list[Any]:
    """The configurations whose median time came within ``within`` (a fraction: 0.02 is
    2%) of the fastest, fastest first: a tie, among which the tuner's pick is timing
    noise and can change from run to run. Failed configurations are left out; a tuner
    without timings raises :class:`ValueError`, as :func:`config_timings` does."""
    if not within >= 0:
        raise ValueError(f"within must be a fraction >= 0, got {within!r}")
    timed = _finished(tuner)
    if not timed:
        raise ValueError("every configuration the tuner timed failed")
    limit = timed[0][1] * (1 + within) if within < float("inf") else float("inf")
    return [config for config, t in timed if t <= limit]


class _Table:
    def __init__(self, head: list[str], rows: list[list[str]], note: str):
        self.head, self.rows, self.note = head, rows, note

    def _repr_markdown_(self) -> str:
        lines = [
            "| " + " | ".join(self.head) + " |",
            "|" + "|".join(" --- " for _ in self.head) + "|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines) + f"\n\n*{self.note}*\n"

    def __str__(self) -> str:
        return "\n".join("  ".join(row) for row in [self.head, *self.rows])

    __repr__ = __str__


def config_table(
    tuner: Any,
    *,
    nbytes: float | None = None,
    limit_gbs: float | None = None,
    flops: float | None = None,
):
    """The autotuner's candidates as a table (renders in a notebook), fastest first: the
    configuration, its median time and, given ``nbytes`` (and ``limit_gbs``) or
    ``flops``, the achieved GB/s (and share of the limit) or TFLOP/s.
    """
    from .timing import format_seconds

    head = ["configuration", "median"]
    if nbytes is not None:
        head += ["GB/s"] + (["of copy bandwidth"] if limit_gbs else [])
    if flops is not None:
        head += ["TFLOP/s"]
    rows = []
    try:
        timed = config_timings(tuner)
    except ValueError:
        return _Table(
            ["configuration"], [], "this Triton kept no timings of the candidates"
        )
    for config, seconds in timed:
        if seconds == float("inf"):
            rows.append([describe_config(config), "failed"] + [""] * (len(head) - 2))
            continue
        row = [describe_config(config), format_seconds(seconds)]
        if nbytes is not None:
            gbs = nbytes / seconds / 1e9
            row.append(f"{gbs:,.0f}")
            if limit_gbs:
                row.append(f"{gbs / limit_gbs:.0%}")
        if flops is not None:
            row.append(f"{flops / seconds / 1e12:,.0f}")
        rows.append(row)
    note = "each candidate timed by the autotuner with do_bench (median of timed calls)"
    return _Table(head, rows, note)

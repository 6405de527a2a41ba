"""The environment report at the top of every chapter, and friendly checks for what may
be missing.

:func:`report` prints the facts every measurement below it depends on (device, versions,
threads, profile, date) and a plain-words note for each thing that is missing: no GPU,
no C++ compiler, no Triton. It never raises for a missing piece.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import platform
import shutil
import sys
import textwrap
import warnings
from typing import Any

import numpy
import torch

from .profiles import get_profile, pick_device

__all__ = [
    "collect",
    "report",
    "cxx_compiler",
    "has_triton",
    "can_compile",
    "cpu_physical_cores",
    "gpu_clocks",
    "quiet_known_warnings",
    "bytecode_state",
]


class _NoCudaRuntimeFilter(logging.Filter):
    """Drops the "No CUDA runtime is found" record (a filter survives torch resetting
    log levels)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "No CUDA runtime is found" not in record.getMessage()


def quiet_known_warnings() -> None:
    """Silence known, harmless messages that would otherwise clutter the chapters'
    outputs.

    * A CUDA build of PyTorch on a machine without a GPU logs "No CUDA runtime is found"
      at the first CPU compile (it found a CUDA toolkit but no driver): irrelevant for
      CPU code.
    * ``torch.profiler``'s C++ library (Kineto) writes its own log lines
      ("profiler_start", "gpuGetDeviceCount failed" on a machine without a GPU) straight
      to the process's stderr, where Jupyter shows them in the notebook.
      ``KINETO_LOG_LEVEL=6`` keeps them out; it is read when the profiler first starts,
      and a value set by the user is kept.
    * torch 2.11's profiler warns once that it "clears events at the end of each cycle",
      a note about its scheduled (cyclic) mode that does not apply to a plain ``with
      profile():`` block, and the warning names a file path of the installation.
    * Deprecation notices that torch's own internals trigger (torch 2.11): "TypedStorage
      is deprecated" from Inductor's autotuner and "``isinstance(treespec, LeafSpec)``
      is deprecated" from ``torch.export``. A reader's code cannot act on them.
    * Inductor's hint that "TensorFloat32 tensor cores ... available but not enabled",
      printed with a path of the installation at a float32 matmul compile. Chapter 1
      teaches that setting and measures its error; the later chapters choose IEEE
      float32 on purpose where they compare.
    """
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    warnings.filterwarnings(
        "ignore", message=".*Profiler clears events at the end of each cycle.*"
    )
    logger = logging.getLogger("torch.utils.cpp_extension")
    if not any(isinstance(f, _NoCudaRuntimeFilter) for f in logger.filters):
        logger.addFilter(_NoCudaRuntimeFilter())
    warnings.filterwarnings("ignore", message=".*TF32.*deprecated.*")
    warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
    warnings.filterwarnings("ignore", message=r"`isinstance\(treespec, LeafSpec\)`")
    warnings.filterwarnings(
        "ignore", message="TensorFloat32 tensor cores for float32 matrix multiplication"
    )


def cxx_compiler() -> str | None:
    """Path of the C++ compiler TorchInductor would use for CPU code, or ``None`` when
    there is none."""
    for candidate in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def has_triton() -> bool:
    """Whether Triton (TorchInductor's GPU code generator) can be imported."""
    try:
        import triton  # noqa: F401
    except Exception:
        return False
    return True


def can_compile(device: torch.device | str | None = None) -> bool:
    """Whether ``torch.compile`` can generate code for ``device``: a C++ compiler for
    the CPU, Triton for a CUDA GPU."""
    device = torch.device(device) if device is not None else pick_device()
    return has_triton() if device.type == "cuda" else cxx_compiler() is not None


def bytecode_state() -> str:
    """Whether a new Python process here finds the compiler's compiled bytecode (.pyc of
    ``torch._inductor.compile_fx``): ``"present"``; ``"written at first import"`` (none
    yet, but Python may write them); or ``"missing"`` (none, and
    ``PYTHONDONTWRITEBYTECODE`` is set: each process compiles those modules from
    source, several seconds more per fresh process's first compile)."""
    import importlib.util

    try:
        cached = importlib.util.find_spec("torch._inductor.compile_fx").cached
    except (ImportError, AttributeError, ValueError):
        cached = None
    if cached and os.path.exists(cached):
        return "present"
    return "missing" if sys.flags.dont_write_bytecode else "written at first import"


def _version(module_name: str) -> str:
    try:
        module = __import__(module_name)
    except Exception:
        return "not installed"
    return getattr(module, "__version__", "unknown")


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_physical_cores() -> int | None:
    """Physical CPU cores (distinct socket and core ids in ``/proc/cpuinfo``); ``None``
    if unknown.

    ``os.cpu_count()`` counts logical CPUs (hardware threads), twice the cores on most
    servers.
    """
    cores = set()
    socket = core = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "physical id":
                    socket = value.strip()
                elif key == "core id":
                    core = value.strip()
                elif not key:  # a blank line ends one logical CPU's block
                    if core is not None:
                        cores.add((socket, core))
                    socket = core = None
    except OSError:
        return None
    if core is not None:
        cores.add((socket, core))
    return len(cores) or None


def gpu_clocks(index: int = 0) -> dict[str, Any]:
    """The GPU's clocks and power limit through NVML (``nvidia-ml-py``), as far as
    readable.

    Keys (each present only when NVML answers it): ``sm_clock_mhz`` and
    ``memory_clock_mhz`` (now), ``max_sm_clock_mhz`` and ``max_memory_clock_mhz``,
    ``power_limit_w``. Two runs of one notebook on different hosts can differ by these
    alone. Returns ``{}`` when ``pynvml`` is not installed, there is no NVIDIA driver,
    or anything else fails: provenance never fails for want of it.
    """
    try:
        import pynvml
    except Exception:
        return {}
    facts: dict[str, Any] = {}
    try:
        pynvml.nvmlInit()
    except Exception:
        return {}
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        queries = {
            "sm_clock_mhz": lambda: pynvml.nvmlDeviceGetClockInfo(
                handle, pynvml.NVML_CLOCK_SM
            ),
            "memory_clock_mhz": lambda: pynvml.nvmlDeviceGetClockInfo(
                handle, pynvml.NVML_CLOCK_MEM
            ),
            "max_sm_clock_mhz": lambda: pynvml.nvmlDeviceGetMaxClockInfo(
                handle, pynvml.NVML_CLOCK_SM
            ),
            "max_memory_clock_mhz": lambda: pynvml.nvmlDeviceGetMaxClockInfo(
                handle, pynvml.NVML_CLOCK_MEM
            ),
            "power_limit_w": lambda: (
                pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000
            ),
        }
        for key, query in queries.items():
            try:
                facts[key] = query()
            except Exception:
                continue
    except Exception:
        pass
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    return facts


def collect(hardware: bool = False) -> dict[str, Any]:
    """The environment as a dict of plain values (strings and numbers), for display or
    metadata.

    With ``hardware=True`` (what the reference run records) it also holds the CPU's
    physical core count (``cpu_physical_cores``) and, on a CUDA machine where NVML
    answers, the GPU's clocks and power limit (:func:`gpu_clocks`).
    """
    device = pick_device()
    facts: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "profile": get_profile(),
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else _cpu_name(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "triton": _version("triton"),
        "cpu": _cpu_name(),
        "cpu_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "cxx_compiler": "found" if cxx_compiler() else "missing",
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        facts["cuda"] = torch.version.cuda
        facts["gpu_memory_gib"] = round(props.total_memory / 2**30, 1)
        facts["compute_capability"] = f"{props.major}.{props.minor}"
    if hardware:
        facts["cpu_physical_cores"] = cpu_physical_cores()
        if device.type == "cuda":
            index = (
                device.index
                if device.index is not None
                else torch.cuda.current_device()
            )
            facts.update(gpu_clocks(index))
    return facts


def _notes(facts: dict[str, Any]) -> list[str]:
    notes = []
    if facts["device"] == "cpu":
        notes.append(
            "No CUDA GPU found: this notebook runs on the CPU at the "
            f"'{facts['profile']}' profile's sizes. "
            "GPU-only sections say so and are skipped; "
            "the published book shows the outputs of a run on a data-centre GPU "
            "(each page's provenance names it)."
        )
    if facts["cxx_compiler"] == "missing":
        notes.append(
            "No C++ compiler found: torch.compile cannot build CPU kernels. "
            "Install one "
            "(Debian/Ubuntu: 'sudo apt-get install g++'; "
            "macOS: 'xcode-select --install'); "
            "compiled CPU examples are skipped until then."
        )
    if facts["device"].startswith("cuda") and facts["triton"] == "not installed":
        notes.append(
            "Triton is not installed: torch.compile cannot build GPU kernels "
            "('pip install triton')."
        )
    return notes


def report(show: bool = True) -> dict[str, Any]:
    """Print the environment (and a note for anything missing); return the facts as a
    dict.

    Call it in the first code cell of a chapter: every number below it is read in this
    context. It also calls :func:`quiet_known_warnings`.
    """
    quiet_known_warnings()
    facts = collect()
    if show:
        width = max(len(key) for key in facts)
        for key, value in facts.items():
            print(f"{key:<{width}}  {value}")
        for note in _notes(facts):
            # wrapped to the book's 88 columns, so the page needs no scrollbar
            print("\n" + textwrap.fill(f"Note: {note}", 88))
        sys.stdout.flush()
    return facts


# Install the filters on import: torch.utils.benchmark (imported by gpubook.timing)
# already imports torch.utils.cpp_extension, which logs the "No CUDA runtime" message as
# it loads.
quiet_known_warnings()

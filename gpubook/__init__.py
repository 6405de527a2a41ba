"""gpubook: the helpers every chapter of the book repeats, kept in one place.

Modules, one per concern:

* :mod:`gpubook.profiles`: which device to use and how big the problems are (``gpu``/``cpu``/``ci``);
* :mod:`gpubook.timing`: honest timings (warm-up, synchronisation, median and spread, first call);
* :mod:`gpubook.limits`: hardware limits (copy bandwidth, peak TFLOP/s) and fractions of them;
* :mod:`gpubook.environment`: the environment report at the top of each chapter;
* :mod:`gpubook.plots`: the book's plot style and recurring plots;
* :mod:`gpubook.glue`: glue measured values into the prose.
"""

from .environment import can_compile, report
from .glue import glue, headline
from .limits import bandwidth_gbs, copy_bandwidth, fraction, matmul_flops, peak_tflops, tflops
from .profiles import get_profile, pick_device, sizes, synchronize
from .timing import (
    CompileReport,
    Timing,
    break_even_calls,
    eager_vs_compiled,
    format_seconds,
    format_ratio,
    measure,
    threads,
    time_each,
    time_once,
)

__version__ = "0.1.0"

__all__ = [
    "CompileReport",
    "Timing",
    "bandwidth_gbs",
    "break_even_calls",
    "can_compile",
    "copy_bandwidth",
    "eager_vs_compiled",
    "format_seconds",
    "format_ratio",
    "fraction",
    "get_profile",
    "glue",
    "headline",
    "matmul_flops",
    "measure",
    "peak_tflops",
    "pick_device",
    "report",
    "sizes",
    "synchronize",
    "tflops",
    "threads",
    "time_each",
    "time_once",
]

"""gpubook: the helpers every chapter of the book repeats, kept in one place.

Modules, one per concern:

* :mod:`gpubook.profiles`: which device to use and how big the problems are
  (``gpu``/``cpu``/``ci``);
* :mod:`gpubook.timing`: honest timings in two named modes (latency, throughput),
  interleaved comparisons with intervals and verdicts, and compile cost as a reader pays
  it;
* :mod:`gpubook.profiling`: where a call's time goes (GPU kernels or the host), and
  traces for timeline figures;
* :mod:`gpubook.limits`: hardware limits (copy bandwidth, peak TFLOP/s) and fractions of
  them;
* :mod:`gpubook.environment`: the environment report at the top of each chapter;
* :mod:`gpubook.plots`: the book's plot style and recurring plots;
* :mod:`gpubook.glue`: glue measured values into the prose.
"""

from .environment import can_compile, report
from .glue import glue, glue_ratio, headline
from .limits import (
    bandwidth_gbs,
    copy_bandwidth,
    fraction,
    matmul_flops,
    peak_tflops,
    tflops,
)
from .profiles import get_profile, pick_device, sizes, synchronize
from .profiling import (
    Split,
    Trace,
    host_device_split,
    launch_seconds,
    split_table,
    trace,
)
from .timing import (
    Comparison,
    CompileCosts,
    CompileReport,
    Ratio,
    Timing,
    break_even_calls,
    compare,
    compile_costs,
    counted,
    eager_vs_compiled,
    format_interval,
    format_range,
    format_ratio,
    format_seconds,
    joined,
    latency,
    measure,
    ratio,
    threads,
    throughput,
    time_each,
    time_once,
    warm_up_compiler,
)

__version__ = "0.2.0"

__all__ = [
    "CompileCosts",
    "CompileReport",
    "Comparison",
    "Ratio",
    "Split",
    "Timing",
    "Trace",
    "bandwidth_gbs",
    "break_even_calls",
    "can_compile",
    "compare",
    "compile_costs",
    "copy_bandwidth",
    "counted",
    "eager_vs_compiled",
    "format_interval",
    "format_range",
    "format_ratio",
    "format_seconds",
    "fraction",
    "get_profile",
    "glue",
    "glue_ratio",
    "headline",
    "host_device_split",
    "joined",
    "launch_seconds",
    "latency",
    "matmul_flops",
    "measure",
    "peak_tflops",
    "pick_device",
    "ratio",
    "report",
    "sizes",
    "split_table",
    "synchronize",
    "tflops",
    "threads",
    "throughput",
    "time_each",
    "time_once",
    "trace",
    "warm_up_compiler",
]

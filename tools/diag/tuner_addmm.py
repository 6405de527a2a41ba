"""Why does ch7's max-autotune table give cuBLAS's `addmm` two to three times the time
that the kernel table measures for the same GEMM inside eager's calls (run of 28 Nov
2026: addmm 82 and 85 µs, bias_addmm 82 and 71 µs, against about 30 µs per cuBLAS GEMM
in the profiler), while its Triton figures (38-42 µs) match the kernel table?

Two hypotheses, both tested here on the FFN block's first GEMM (4096x768 @ 768x3072,
bfloat16, bias as the tuner passes it):

1. *Host dispatch shows through.* Inductor's benchmarker (`InductorBenchmarker.
   benchmark_gpu`, the tuner's default) records start, calls the candidate from Python
   and records end, after a flush of L2-cache size. If the host needs longer to dispatch
   the ATen call than the GPU needs for the flush, the GPU idles between the start event
   and the GEMM, and the idle time is counted. Test: the same call timed with a flush
   five times as long, and in a CUDA graph (no host in the loop), against the kernel
   time from the profiler and the host's time per call.
2. *Clocks after idle.* The tuner benchmarks right after seconds of compiling, when the
   GPU has idled. Test: the benchmarker's figure after 3 s of sleep against right after
   a second of GEMMs, with the SM clock read before each.

    PYTHONPATH=. python3 tools/diag/tuner_addmm.py

First result (28 Nov 2026, H100, torch 2.11.0+cu130, right after a run of ch7):
alone, the benchmarker gave bias_addmm 34-36 µs (kernel 31 µs) in all nine
measurements, idle or loaded, with either flush; eager's linear 34-36 µs in eight of
nine and 74 µs in one (kernel time then summed from the profiler's CUDA events; since,
gpubook.host_device_split's GPU busy time). The tuner's own wrapper was not yet
measured (added since);
Second result (28 Nov 2026, another H100, right after ch7 and ch8): bias_addmm 34-38
µs in 8 of 9 (64.6 once), the wrapper 34-37 in 8 of 9 (60.5 once), linear 7 of 9 (132.5
and 57.0), addmm 56-62 in 8 of 9 (74.3 once); four of the five outliers came in the
measurement right after the 3 s sleep, but that measurement always used the short flush,
so the sleep and the flush length were confounded: the loop now crosses them.
autotune_in_subproc would not help: Inductor benchmarks ATen (extern) candidates in the
compiling process whatever that setting says. Next (added here): a record of each ATen
candidate inside the tuner, in_tuner() below.
"""

import functools
import statistics
import time

import torch

from gpubook.environment import gpu_clocks
from gpubook.profiling import host_device_split, launch_seconds

try:
    from torch._inductor.runtime.benchmarking import InductorBenchmarker
except ImportError:  # an older layout
    InductorBenchmarker = None


def sm_clock():
    """The SM clock now, through NVML (gpubook.environment.gpu_clocks)."""
    mhz = gpu_clocks().get("sm_clock_mhz")
    return "not readable (no nvidia-ml-py?)" if mhz is None else f"{mhz} MHz"


def bench_us(fn, flush_bytes=None):
    bench = InductorBenchmarker()
    if flush_bytes is not None:  # the cached property's slot, read before computing it
        bench.__dict__["L2_cache_size"] = flush_bytes
    return 1e3 * bench.benchmark_gpu(fn, is_vetted_benchmarking=True)


def graph_us(fn, calls=20, repeats=20):
    """Per call inside a CUDA graph of `calls` calls (no host between them)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    times = []
    for _ in range(repeats):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(1e3 * start.elapsed_time(end) / calls)
    return statistics.median(times)


def main():
    if not torch.cuda.is_available():
        print("No CUDA GPU: this diagnosis measures one.")
        return
    if InductorBenchmarker is None:
        print("This torch has no InductorBenchmarker.")
        return
    print(torch.__version__, torch.cuda.get_device_name())
    probe = InductorBenchmarker()
    l2 = getattr(probe, "L2_cache_size", None) or 256 * 2**20  # torch 2.11: property
    print(f"benchmarker flush buffer: {l2 / 2**20:.0f} MiB (the L2 cache's size)")
    torch.manual_seed(0)
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    x = torch.randn(4096, 768, **bf16)
    weight = torch.randn(3072, 768, **bf16)
    bias = torch.randn(3072, **bf16)
    out = torch.empty(4096, 3072, **bf16)
    bias_2d = bias.expand(4096, 3072)  # strides (0, 1), as the tuner's table lists
    calls = {
        "addmm (2-D bias, stride 0)": lambda: torch.addmm(
            bias_2d, x, weight.t(), out=out
        ),
        "bias_addmm (1-D bias)": lambda: torch.addmm(bias, x, weight.t(), out=out),
        "eager nn.Linear call": lambda: torch.nn.functional.linear(x, weight, bias),
    }
    try:  # the tuner's own wrapper and call form: partial(fn, *inputs, out=out)
        from torch._inductor.kernel.mm import bias_addmm as inductor_bias_addmm

        calls["Inductor's bias_addmm wrapper, as the tuner calls it"] = (
            functools.partial(inductor_bias_addmm, bias_2d, x, weight.t(), out=out)
        )
    except ImportError:
        print("This torch has no torch._inductor.kernel.mm.bias_addmm.")
    load = calls["bias_addmm (1-D bias)"]
    for label, fn in calls.items():
        split = host_device_split(fn, calls=50)  # GPU busy time, kernels, per call
        print(f"\n{label}: kernels {[name for name, *_ in split.kernel_names]}")
        print(f"  profiler GPU time per call   {1e6 * split.gpu:7.1f} µs")
        print(f"  host time per call (enqueue) {1e6 * launch_seconds(fn):7.1f} µs")
        print(f"  in a CUDA graph, per call    {graph_us(fn):7.1f} µs")
        for repeat in range(3):  # each state with each flush, the order alternated
            flushes = [("flush", None), ("5x flush", 5 * l2)]
            if repeat % 2:
                flushes.reverse()
            parts = []
            for state in ("after 3 s of sleep", "after 1 s of GEMMs"):
                for name, flush_bytes in flushes:
                    if state.endswith("sleep"):
                        time.sleep(3)
                    else:
                        gemms_for_a_second(load)
                    clock = sm_clock()
                    figure = bench_us(fn, flush_bytes=flush_bytes)
                    parts.append(f"{state}, {name}: {figure:6.1f} µs ({clock})")
            print(f"  repeat {repeat}: " + "; ".join(parts))
    in_tuner(x, weight, bias)


def gemms_for_a_second(load):
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:
        for _ in range(50):
            load()
        torch.cuda.synchronize()


def in_tuner(x, weight, bias):
    """The FFN block compiled with max-autotune (caches off), with each ATen candidate's
    benchmark wrapped: next to the figure the tuner got, 20 more calls of the same
    candidate timed right there, each with CUDA events (GPU time) and the host's clock
    (time to launch), and the seconds since the tuner's first benchmark."""
    try:
        from torch._inductor import config as inductor_config
        from torch._inductor.select_algorithm import ExternKernelCaller
    except ImportError:
        print("\nThis torch has no ExternKernelCaller: the in-tuner record is skipped.")
        return
    original = ExternKernelCaller.benchmark
    records, first = [], []

    def recorded(self, *args, **kwargs):
        figure = original(self, *args, **kwargs)  # what the tuner gets (ms)
        first.append(first[0] if first else time.perf_counter())
        algo = functools.partial(self.to_callable(), *args, **kwargs)
        gpu, host = [], []
        for _ in range(20):
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            launch = time.perf_counter()
            algo()
            host.append(1e6 * (time.perf_counter() - launch))
            end.record()
            torch.cuda.synchronize()
            gpu.append(1e3 * start.elapsed_time(end))
        records.append(
            (
                self.name,
                1e3 * figure,
                statistics.median(gpu),
                min(gpu),
                statistics.median(host),
                time.perf_counter() - first[0],
            )
        )
        return figure

    hidden = 3072
    ffn = torch.nn.Sequential(
        torch.nn.Linear(768, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 768)
    ).to(device="cuda", dtype=torch.bfloat16)
    ExternKernelCaller.benchmark = recorded
    try:
        with inductor_config.patch(force_disable_caches=True):
            compiled = torch.compile(ffn, mode="max-autotune-no-cudagraphs")
            with torch.no_grad():
                compiled(x)
    except Exception as error:  # a diagnostic: say what failed, keep the rest
        print(f"\nIn-tuner record failed: {type(error).__name__}: {error}")
        return
    finally:
        ExternKernelCaller.benchmark = original
    print("\nInside the tuner (FFN block, max-autotune-no-cudagraphs, caches off):")
    print("  candidate      tuner's figure  then: GPU median / min   host launch   at")
    for name, figure, gpu_med, gpu_min, host_med, at in records:
        print(
            f"  {name:14} {figure:8.1f} µs    {gpu_med:7.1f} / {gpu_min:5.1f} µs"
            f"   {host_med:7.1f} µs   {at:5.1f} s"
        )
    if not records:
        print("  no ATen candidate was benchmarked (cached, or none offered)")


if __name__ == "__main__":
    main()

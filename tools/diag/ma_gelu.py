"""Why did ch3's max-autotune-no-cudagraphs linear+GELU run slower than default in one
run (261 vs 224 µs per call: 0.86x default's speed) and about as fast in five others,
with the tuner picking cuBLAS's `mm` each time? (diagnostic)

On the H100 (2026-11-27, four rounds): both modes ran the same cuBLAS kernel (170 µs);
max-autotune's bias-and-GELU kernel, whose launch configuration coordinate-descent
tuning searched, took 23 µs against default's 35 µs; interleaved, default 233-243 µs
and max-autotune 222-231 µs per call. The slow run was not reproduced.

Each round is a fresh process with its own empty cache folder: it compiles the function
both ways, prints the kernels each runs (profiler, GPU µs per call) and the launch
configurations in max-autotune's generated code, and times both interleaved."""

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import re, torch, torch.nn.functional as F
from torch._inductor.utils import run_and_get_code
def linear_gelu(x, weight, bias):
    return F.gelu(x @ weight + bias, approximate="tanh")
n = 4096
torch.manual_seed(0)
bf16 = dict(device="cuda", dtype=torch.bfloat16)
args = [torch.randn(n, n, **bf16) / n**0.25 for _ in range(2)]
args.append(torch.randn(n, device="cuda", dtype=torch.bfloat16))
fns = {"default": torch.compile(linear_gelu)}
_, codes = run_and_get_code(fns["default"], *args)
fns["max-autotune"] = torch.compile(linear_gelu, mode="max-autotune-no-cudagraphs")
_, ma_codes = run_and_get_code(fns["max-autotune"], *args)
for name, code in (("default", codes[-1]), ("max-autotune", ma_codes[-1])):
    calls = re.findall(
        r"(extern_kernels\.\w+|triton_\w+)\.run\(|(extern_kernels\.\w+)\(", code
    )
    print(name, "calls:", sorted({a or b for a, b in calls}))
    for line in sorted(set(re.findall(r"@triton_heuristics\.\w+\([^\n]*", code))):
        print("   ", line[:200])
    for line in sorted(set(re.findall(r"'XBLOCK': \d+[^}]*}|XBLOCK=\d+[^,)]*", code))):
        print("    cfg", line[:160])
from torch.profiler import profile, ProfilerActivity
for name, fn in fns.items():
    for _ in range(5): fn(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(20): fn(*args)
        torch.cuda.synchronize()
    averages = prof.key_averages()
    rows = [(e.key, e.device_time_total / 20) for e in averages if e.device_time_total]
    print(name, "GPU us/call:", [(k[:60], round(t, 1)) for k, t in rows])
start, end = torch.cuda.Event(True), torch.cuda.Event(True)
res = {k: [] for k in fns}
for _ in range(30):
    for name, fn in fns.items():
        start.record()
        for _ in range(20): fn(*args)
        end.record(); end.synchronize()
        res[name].append(start.elapsed_time(end) / 20 * 1e3)
for k, v in res.items():
    v.sort()
    print(k, "us per call (median, min, max):", round(v[15], 1), round(v[0], 1),
          round(v[-1], 1))
"""
for round_ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(
            os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=cache + "/t"
        )
        print(f"--- fresh process {round_}", flush=True)
        done = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True
        )
        print(done.stdout, done.stderr[-1500:] if done.returncode else "", flush=True)

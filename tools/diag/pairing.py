"""Would pairing variants in short blocks make a host-bound verdict repeat? (diagnostic)

Chapter 4's steady-state case (layer norm + softmax + GELU, 2000 x 512, float32): static
against dynamic kernel, host-bound on the H100. Each method runs four times in a row:
``gpubook.compare`` as the chapter calls it (0.3 s per variant) and at 1 s, and a paired
estimator with blocks of about 5 ms (the median of per-pair ratios, bootstrap interval).
The host probe is printed between repeats."""

import random
import statistics
import time

import torch
import torch.nn.functional as F

import gpubook
from gpubook.cpuload import host_speed


def block(x, gain):
    h = F.layer_norm(x, (x.shape[-1],)) * gain
    return x + F.gelu(h) * torch.softmax(h, dim=-1)


x = torch.randn(2000, 512, device="cuda")
gain = torch.linspace(0.5, 1.5, 512, device="cuda")
static = torch.compile(block, dynamic=False)
dynamic = torch.compile(block, dynamic=True)
for fn in (static, dynamic, block):
    for _ in range(20):
        fn(x, gain)
torch.cuda.synchronize()


def timed_block(fn, calls):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(calls):
        fn(x, gain)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / calls


def paired(seconds=2.0, calls=100):
    ratios, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        if len(ratios) % 2:
            d, s = timed_block(dynamic, calls), timed_block(static, calls)
        else:
            s, d = timed_block(static, calls), timed_block(dynamic, calls)
        ratios.append(s / d)
    meds = sorted(
        statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(2000)
    )
    return statistics.median(ratios), meds[50], meds[1949], len(ratios)


for rep in range(4):
    probe = host_speed()
    line = [f"probe {probe:.2f} us"]
    for run_time in (0.3, 1.0):
        c = gpubook.compare(
            {"static": static, "dynamic": dynamic},
            x,
            gain,
            min_run_time=run_time,
            baseline="static",
        )
        r = c.ratio("dynamic")
        interval = f"[{r.low:.3f}, {r.high:.3f}]"
        line.append(f"compare {run_time}s: {r.estimate:.3f} {interval} {r.verdict}")
    est, lo, hi, n = paired()
    line.append(f"paired 5ms x{n}: {est:.3f} [{lo:.3f}, {hi:.3f}]")
    print(" | ".join(line), flush=True)

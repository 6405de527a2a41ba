"""Where the first compile of a process spends its time on the GPU host (diagnostic)."""

import cProfile
import io
import os
import pstats
import sys
import time

t0 = time.perf_counter()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

print(
    f"import torch {time.perf_counter() - t0:.1f} s, threads {torch.get_num_threads()}"
)
print("compile_threads", torch._inductor.config.compile_threads, "cpus", os.cpu_count())


class HeatStep(nn.Module):
    def __init__(self, r=0.2):
        super().__init__()
        self.register_buffer("r", torch.tensor(r))

    def forward(self, u):
        c = u[1:-1, 1:-1]
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * c
        return F.pad(c + self.r * lap, (1, 1, 1, 1))


def timed(label, fn, profile=False):
    prof = cProfile.Profile() if profile else None
    t = time.perf_counter()
    if prof:
        prof.enable()
    fn()
    if prof:
        prof.disable()
    print(f"{label}: {time.perf_counter() - t:.2f} s", flush=True)
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        print("\n".join(s.getvalue().splitlines()[:60]))


order = sys.argv[1] if len(sys.argv) > 1 else "cpu-gpu"
f = torch.rand(1024, 1024)
g = f.cuda()
with torch.inference_mode():
    for dev in order.split("-"):
        x = f if dev == "cpu" else g
        m = HeatStep().to(x.device)
        c = torch.compile(m, dynamic=False)
        timed(f"first {dev} compile", lambda: c(x), profile=True)
        c2 = torch.compile(HeatStep().to(x.device), dynamic=False)
        torch._dynamo.reset()
        timed(f"second {dev} compile (after dynamo reset)", lambda: c2(x))
print("total", f"{time.perf_counter() - t0:.1f} s")

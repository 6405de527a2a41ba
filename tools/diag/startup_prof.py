"""Where a fresh process's first torch.compile spends its start-up (cProfile).

    TORCHINDUCTOR_CACHE_DIR=/tmp/c/ind TRITON_CACHE_DIR=/tmp/c/tri PROF=1 \\
        python3 tools/diag/startup_prof.py

Prints the times of `import torch`, CUDA's start, the first compile and a second one;
with PROF=1 also the profile's top functions. On the GPU image (H100, torch 2.11, 28
Nov 2026) a third of the first compile was `builtins.compile`: with
PYTHONDONTWRITEBYTECODE=1 and no .pyc files shipped, each process compiled ~1,500
modules from source (first compile 15.5 s; 7.7 s after `python -m compileall` with
PYTHONPYCACHEPREFIX set; import torch 3.6-4.8 s against 2.7-3.0 s). tools/gpu-run.sh
now writes the bytecode first.
"""

import cProfile
import io
import os
import pstats
import time

t0 = time.perf_counter()
import torch  # noqa: E402  (timed)

t1 = time.perf_counter()
x = torch.ones(16, device="cuda")
torch.cuda.synchronize()
t2 = time.perf_counter()
profile = cProfile.Profile()
profile.enable()
f = torch.compile(lambda y: (y * 2.0 + 1.0).relu().sum())
f(x)
torch.cuda.synchronize()
profile.disable()
t3 = time.perf_counter()
g = torch.compile(lambda y: (y * 3.0 - 1.0).sigmoid().sum())
g(x)
torch.cuda.synchronize()
t4 = time.perf_counter()
print(
    f"import torch {t1 - t0:.2f}  cuda init {t2 - t1:.2f}  first compile "
    f"{t3 - t2:.2f}  second compile {t4 - t3:.2f}",
    flush=True,
)
if os.environ.get("PROF"):
    for key, count in (("cumulative", 45), ("tottime", 25)):
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats(key).print_stats(count)
        print(text.getvalue()[:9000])

"""Chapter 5's break sweep: how many of its graphs the on-disk compile caches serve.

    python tools/diag/ch5_sweep_cache.py

Builds the sweep's functions (16 identical steps `x = torch.sin(x) * 1.01 + 0.01`,
with 0, 1, 2, 4 or 8 graph breaks, a code object per size and count), compiles each
(`dynamic=False`) for two sizes from an empty cache folder, and prints the FX graph
cache's and AOTAutograd cache's hits and misses, and the wall time of the first calls.
Then the same with the old steps, each with constants of its own (`* 1.0i + 0.0i`).
Checks the chapter's statement: on torch 2.11 with an H100, 24 hits and 16 misses
(22.5 s) against 0 and 40 (40.0 s).
"""

import os
import tempfile
import time

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="ch5-cache-")
import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

device = "cuda" if torch.cuda.is_available() else "cpu"
sizes = (10_000, 10_000_000) if device == "cuda" else (10_000, 1_000_000)


def make_chain(breaks, same, name, ops=16):
    after = {round((i + 1) * ops / (breaks + 1)) for i in range(breaks)}
    lines = [f"def {name}(x):"]
    for i in range(1, ops + 1):
        step = "* 1.01 + 0.01" if same else f"* {1 + i / 100:.2f} + {i / 100:.2f}"
        lines.append(f"    x = torch.sin(x) {step}")
        if i in after:
            lines.append("    torch._dynamo.graph_break()")
    lines.append("    return x")
    namespace = {"torch": torch}
    exec(compile("\n".join(lines), f"<{name}>", "exec"), namespace)
    return namespace[name]


torch.compile(lambda x: x + 1)(torch.ones(4, device=device))  # compiler start-up
for same in (True, False):
    counters.clear()
    start = time.perf_counter()
    for elements in sizes:
        torch.compiler.reset()
        data = torch.randn(elements, device=device)
        for breaks in (0, 1, 2, 4, 8):
            name = f"chain_{breaks}_{elements}_{'same' if same else 'own'}"
            torch.compile(make_chain(breaks, same, name), dynamic=False)(data)
    seconds = time.perf_counter() - start
    fx, aot = counters["inductor"], counters["aot_autograd"]
    print(
        f"torch {torch.__version__}, {device}, steps "
        f"{'identical' if same else 'with their own constants'}: {seconds:.1f} s; "
        f"FX graph cache hits {fx['fxgraph_cache_hit']}, misses "
        f"{fx['fxgraph_cache_miss']}; AOTAutograd cache hits "
        f"{aot['autograd_cache_hit']}, misses {aot['autograd_cache_miss']}",
        flush=True,
    )

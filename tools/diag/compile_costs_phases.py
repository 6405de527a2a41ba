"""Where the time of chapter 3's compile-cost cell goes (gpubook.compile_costs).

    python tools/diag/compile_costs_phases.py

Runs the cell's three fresh processes as compile_costs does (set-ups side by side,
first calls one at a time) with chapter 3's `chain` on 2**26 elements, and prints, per
process: `import torch`, the rest of the set-up (the module, the inputs on the device),
when its turn started and ended (seconds since the start), and what it measured; then
the parent's wall time in all, and how long the set-ups took together. Then, in two more
fresh processes, the call to `torch.compile` alone and the first call after it.
"""

import inspect
import os
import tempfile
import time

import torch

from gpubook import models, timing


def chain(x):
    return torch.tanh(x) * torch.sigmoid(x) + 0.5 * x * x - torch.exp(-x.abs())


device = "cuda" if torch.cuda.is_available() else "cpu"
n = 2**26 if device == "cuda" else 2**20
setup = f"import torch\ndevice = {device!r}\n{inspect.getsource(chain)}\n"
setup += f"args = (torch.randn({n}, device=device),)\n"
began = time.time()
work = tempfile.mkdtemp(prefix="cc-phases-")
open(os.path.join(work, "gpubook_cc_setup.py"), "w").write(setup)
base = {"fn": "chain", "args": "args", "options": "", "folder": work}
specs = [
    {**base, "warm_up": False, "reset": False},
    {**base, "warm_up": True, "reset": True},
    {**base, "warm_up": False, "reset": False},
]
caches = [tempfile.mkdtemp(prefix="cc-a-"), tempfile.mkdtemp(prefix="cc-b-")]
jobs = []
for spec, cache in zip(specs, [caches[0], caches[1], caches[1]]):
    pre = f"SPEC = {spec!r}\n_set_up_start = _time.perf_counter()\n"
    post = "\nSET_UP_S = _time.perf_counter() - _set_up_start\n"
    measure = "TURN_AT = _time.time()\n" + timing._CHILD_MEASURE.replace(
        "report(**result)",
        "report(**result, import_torch=IMPORT_TORCH_S, set_up=SET_UP_S, "
        "turn_at=TURN_AT, done_at=_time.time())",
    )
    jobs.append((pre + timing._CHILD_SETUP + post, measure, cache))
results = models.fresh_processes(jobs, timeout=600, log=print)
wall = time.time() - began
for label, r in zip("abc", results):
    print(
        f"({label}) import torch {r['import_torch']:.1f} s, rest of set-up "
        f"{r['set_up']:.1f} s, turn {r['turn_at'] - began:.1f} -> "
        f"{r['done_at'] - began:.1f} s; first call {r['first_call']:.2f} s"
        + (f", warm-up {r['warm_up']:.2f} s" if "warm_up" in r else "")
        + (f", after reset {r['after_reset']:.3f} s" if "after_reset" in r else "")
    )
print(f"parent wall {wall:.1f} s")

# The call to torch.compile alone, in fresh processes with empty caches: what the clock
# of (a) and (c) now includes and first left out.
lap = f"""
{setup}
start = _time.perf_counter()
compiled = torch.compile(chain)
lap = _time.perf_counter() - start
seconds, _ = timed(compiled, *args)
report(compile_call=lap, first_call=seconds)
"""
for _ in range(2):
    r = models.fresh_process(lap, cache_dir=tempfile.mkdtemp(prefix="cc-lap-"))
    print(
        f"torch.compile(chain) alone {r['compile_call']:.2f} s, "
        f"then the first call {r['first_call']:.2f} s"
    )

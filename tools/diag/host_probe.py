"""Is the GPU host's per-call CPU cost (the reference run's host probe) a property of
the core a process runs on? (diagnostic)"""

import os
import subprocess
import time

import torch

from gpubook.cpuload import host_speed


def current_cpu() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


print(subprocess.run(["lscpu"], capture_output=True, text=True).stdout[:1500])
print(
    "torch threads",
    torch.get_num_threads(),
    "affinity",
    sorted(os.sched_getaffinity(0)),
)
cores = sorted(os.sched_getaffinity(0))
for rnd in range(3):
    row = []
    for c in cores:
        os.sched_setaffinity(0, {c})
        row.append(f"{c}:{host_speed(calls=2000, repeats=5):.2f}")
    print(f"pinned, round {rnd}:", " ".join(row), flush=True)
os.sched_setaffinity(0, set(cores))
series = []
for _ in range(40):
    series.append(f"{current_cpu()}:{host_speed(calls=2000, repeats=3):.2f}")
    time.sleep(0.25)
print("unpinned (cpu:us):", " ".join(series))
mhz = [
    line.split(":")[1].strip()
    for line in open("/proc/cpuinfo")
    if line.startswith("cpu MHz")
]
print("cpu MHz:", " ".join(mhz))

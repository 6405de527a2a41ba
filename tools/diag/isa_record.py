"""Does gpubook.background's record of successful CPU checks work here? (diagnostic)

Three fresh processes share one new cache folder and run the book's checks
(``background.run_vec_isa_checks``); then one process runs the compiler's own
``pick_vec_isa`` with no record installed. Expected on torch 2.11: the first process
pays for the probes, the next two take seconds less, and all four pick the same set.
"""

import os
import subprocess
import sys
import tempfile
import time

cache = tempfile.mkdtemp(prefix="isa-record-")
env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
booked = """
import time
t = time.perf_counter()
from gpubook import background
installed = background.record_successful_checks()
seconds = background.run_vec_isa_checks()
from torch._inductor import cpu_vec_isa
print(f"installed={installed} checks {seconds:.1f} s pick={cpu_vec_isa.pick_vec_isa()}")
"""
plain = """
import time
import torch
from torch._inductor import cpu_vec_isa
t = time.perf_counter()
isa = cpu_vec_isa.pick_vec_isa()
print(f"no record: pick_vec_isa {time.perf_counter() - t:.1f} s pick={isa}")
"""
for label, code in [("1", booked), ("2", booked), ("3", booked), ("plain", plain)]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    print(f"process {label}: {wall:.1f} s wall, rc {done.returncode}")
    print("  ", done.stdout.strip(), done.stderr.strip()[-400:])
markers = sum(f.endswith(".gpubook_load_ok") for _, _, fs in os.walk(cache) for f in fs)
print("markers in the cache folder:", markers)

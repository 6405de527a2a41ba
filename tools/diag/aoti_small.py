"""Does an AOTInductor package of a tiny model load in a fresh process? (diagnostic)"""

import os
import subprocess
import sys
import tempfile
import time

import torch

pkg = os.path.join(tempfile.mkdtemp(), "mlp.pt2")
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()).cuda().eval()
x = torch.randn(8, 64, device="cuda")
t = time.perf_counter()
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    torch._inductor.aoti_compile_and_package(ep, package_path=pkg)
print(f"tiny build {time.perf_counter() - t:.1f} s", flush=True)
child = f"""
import faulthandler, time; faulthandler.enable()
import torch
x = torch.randn(8, 64, device="cuda")
t = time.perf_counter()
r = torch._inductor.aoti_load_package({pkg!r})
print("loaded", time.perf_counter() - t, flush=True)
print(r(x).shape)
"""
for env_extra in ({}, {"TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()}):
    p = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        env={**os.environ, **env_extra},
    )
    print("child rc", p.returncode, env_extra)
    print(p.stdout[-2000:], p.stderr[-4000:])
r = torch._inductor.aoti_load_package(pkg)
print("in-process load ok", r(x).shape)

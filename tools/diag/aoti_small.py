"""Does an AOTInductor package of a tiny model load in a fresh process? (diagnostic)"""

import os
import shutil
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
t0 = time.perf_counter()
import torch
x = torch.randn(8, 64, device="cuda")
print("import + cuda", time.perf_counter() - t0, flush=True)
t = time.perf_counter()
r = torch._inductor.aoti_load_package({pkg!r})
print("loaded", time.perf_counter() - t, flush=True)
print(r(x).shape)
"""
for env_extra in ({},):
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        env={**os.environ, **env_extra},
    )
    print("child rc", p.returncode, env_extra, f"{time.perf_counter() - t:.1f} s")
    print(p.stdout[-2000:], p.stderr[-4000:])
gdb = shutil.which("gdb")
print("gdb:", gdb)
if gdb:
    p = subprocess.run(
        [
            gdb,
            "-batch",
            "-ex",
            "run",
            "-ex",
            "bt 25",
            "--args",
            sys.executable,
            "-c",
            child,
        ],
        capture_output=True,
        text=True,
    )
    print(
        "\n".join(line for line in p.stdout.splitlines() if line.startswith("#"))[
            -5000:
        ]
    )
t = time.perf_counter()
r = torch._inductor.aoti_load_package(pkg)
print("in-process load ok", r(x).shape, time.perf_counter() - t, flush=True)

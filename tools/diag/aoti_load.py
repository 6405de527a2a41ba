"""Why does an AOTInductor package crash when loaded in a fresh process on torch 2.11?

Builds two tiny packages (CUDA and CPU), then loads each in fresh processes in several
ways, each in its own child: faulthandler's Python trace, the exit code, and a gdb
backtrace where gdb exists. Prints one line per attempt (a diagnostic for the GPU
host).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import torch

folder = tempfile.mkdtemp(prefix="aoti-diag-")
packages = {}
for device in ("cpu", "cuda"):
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    model = model.to(device).eval()
    x = torch.randn(8, 64, device=device)
    path = os.path.join(folder, f"mlp_{device}.pt2")
    begin = time.perf_counter()
    with torch.no_grad():
        exported = torch.export.export(model, (x,))
        torch._inductor.aoti_compile_and_package(exported, package_path=path)
    print(f"{device} build {time.perf_counter() - begin:.1f} s", flush=True)
    packages[device] = path

import zipfile  # noqa: E402

names = zipfile.ZipFile(packages["cuda"]).namelist()
print("cuda package holds:", [n for n in names if not n.endswith("/")][:12], flush=True)

child = """
import faulthandler, os, sys, time
faulthandler.enable()
device, path, how = sys.argv[1], sys.argv[2], sys.argv[3]
import torch
if how == "cuda_first":
    torch.zeros(1, device="cuda")
if how == "inductor_first":
    import torch._inductor.config
if how == "isa_checks":  # what chapter 7's child does before loading
    from gpubook import background
    background.record_successful_checks()
    background.run_vec_isa_checks()
x = torch.randn(8, 64, device=device)
t = time.perf_counter()
if how == "loader":
    runner = torch._C._aoti.AOTIModelPackageLoader(path, "model", False, 1, -1)
    out = runner.run([x])[0]
else:
    runner = torch._inductor.aoti_load_package(path)
    out = runner(x)
print("LOADED", round(time.perf_counter() - t, 3), tuple(out.shape), flush=True)
"""
script = os.path.join(folder, "child.py")
with open(script, "w") as handle:
    handle.write(child)
attempts = [
    ("cpu", "plain"),
    ("cuda", "plain"),
    ("cuda", "cuda_first"),
    ("cuda", "inductor_first"),
    ("cuda", "loader"),
    ("cuda", "isa_checks"),
    ("cpu", "isa_checks"),
]
for device, how in attempts:
    begin = time.perf_counter()
    done = subprocess.run(
        [sys.executable, script, device, packages[device], how],
        capture_output=True,
        text=True,
        timeout=300,
    )
    tail = (done.stdout + done.stderr).strip().splitlines()
    took = time.perf_counter() - begin
    print(
        f"{device:4} {how:14} rc {done.returncode} {took:.1f} s |",
        " / ".join(tail[-6:])[-900:],
        flush=True,
    )
gdb = shutil.which("gdb")
print("gdb:", gdb, flush=True)
if gdb:
    done = subprocess.run(
        [
            gdb,
            "-batch",
            "-ex",
            "run",
            "-ex",
            "bt 30",
            "--args",
            sys.executable,
            script,
            "cuda",
            packages["cuda"],
            "plain",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(
        "\n".join(line for line in done.stdout.splitlines() if line.startswith("#"))[
            -6000:
        ]
    )
for device, path in packages.items():  # last: in the building process itself
    x = torch.randn(8, 64, device=device)
    print(f"{device}: loading in the building process ...", flush=True)
    loaded = torch._inductor.aoti_load_package(path)
    print(f"{device}: in-process load ok, output {tuple(loaded(x).shape)}", flush=True)

"""Where a fresh process's time goes on the GPU host (diagnostic for the run's length).

1. import torch; TorchInductor's vector-ISA checks serially (pick_vec_isa) vs in threads
   (gpubook.background); 2. a BERT child as chapter 7 runs it, phase by phase, and the
   parent's wall time around it; 3. a tiny AOTInductor package: the build after the ISA
   checks, and a loading child with and without the checks done first.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import time


def child(code, env=None, timeout=300):
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    wall = time.perf_counter() - t
    print(f"--- child rc {p.returncode}, parent wall {wall:.1f} s")
    print(p.stdout[-3000:])
    if p.returncode:
        print(p.stderr[-1500:])


PHASES = """
import time
T0 = time.perf_counter()
def lap(what, t=[None]):
    now = time.perf_counter()
    print(f"{what}: {now - (t[0] or T0):.2f} s", flush=True)
    t[0] = now
"""

child(
    PHASES
    + """
import torch; lap("import torch")
from torch._inductor.cpu_vec_isa import pick_vec_isa
print(pick_vec_isa()); lap("pick_vec_isa serial")
"""
)
child(
    PHASES
    + """
import torch; lap("import torch")
import gpubook.background as b
n = b.start_vec_isa_checks().wait(); lap(f"{n} checks in threads")
from torch._inductor.cpu_vec_isa import pick_vec_isa
print(pick_vec_isa()); lap("pick_vec_isa after")
"""
)
child(
    PHASES
    + """
import torch; lap("import torch")
from transformers import BertConfig, BertModel; lap("import transformers")
torch.manual_seed(0)
config = BertConfig(attn_implementation="sdpa")
model = BertModel(config); lap("BertModel init (CPU)")
model = model.to("cuda").eval(); lap("to cuda")
ids = torch.randint(0, 30_000, (1, 128), device="cuda")
tiny = torch.compile(lambda x: (x * 2 + 1).relu().sum())
tiny(torch.ones(8, device="cuda")); torch.cuda.synchronize(); lap("tiny compile")
c = torch.compile(model, dynamic=False)
with torch.inference_mode():
    c(ids); torch.cuda.synchronize(); lap("BERT first call")
print("exiting", flush=True)
"""
)
pkg = os.path.join(tempfile.mkdtemp(), "mlp.pt2")
child(
    PHASES
    + f"""
import torch; lap("import torch")
from torch._inductor.cpu_vec_isa import pick_vec_isa
pick_vec_isa(); lap("pick_vec_isa")
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()).cuda().eval()
x = torch.randn(8, 64, device="cuda")
with torch.no_grad():
    ep = torch.export.export(model, (x,)); lap("export")
    torch._inductor.aoti_compile_and_package(ep, package_path={pkg!r})
    lap("aoti build")
"""
)
for first in (
    "",
    "from torch._inductor.cpu_vec_isa import pick_vec_isa\n"
    "pick_vec_isa(); lap('isa')\n",
):
    child(
        PHASES
        + f"""
import torch; lap("import torch")
x = torch.randn(8, 64, device="cuda"); lap("cuda")
{first}
r = torch._inductor.aoti_load_package({pkg!r}); lap("load")
print(r(x).shape)
"""
    )

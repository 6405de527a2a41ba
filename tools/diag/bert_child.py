"""Where a fresh process that compiles BERT-base spends its time (diagnostic).

Chapter 7's fresh-process compiles took about 95 s for three processes whose measured
parts (start-up, first call) add up to about 25 s. This prints each phase of one such
process, and the parent's wall time to the process's exit.
"""

import os
import subprocess
import sys
import tempfile
import time

child = """
import time
T0 = time.perf_counter()
def mark(what):
    print(f"{time.perf_counter() - T0:6.1f} s  {what}", flush=True)
import torch
mark("import torch")
from transformers import AttentionInterface, BertConfig, BertModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward
mark("import transformers")
AttentionInterface.register("sdpa_unmasked", sdpa_attention_forward)
torch.manual_seed(0)
config = BertConfig(attn_implementation="sdpa_unmasked")
model = BertModel(config)
mark("BertModel(config) on the CPU")
model = model.to("cuda").eval()
torch.cuda.synchronize()
mark("to cuda")
ids = torch.randint(0, 30_000, (1, 9), device="cuda")
tiny = torch.compile(lambda x: (x * 2 + 1).relu().sum())
tiny(torch.ones(8, device="cuda")); torch.cuda.synchronize()
mark("tiny compile (start-up)")
compiled = torch.compile(model, dynamic=False)
with torch.inference_mode():
    compiled(ids); torch.cuda.synchronize()
mark("BERT first call")
artifacts = torch.compiler.save_cache_artifacts()
mark("save_cache_artifacts")
with torch.device("cuda"):
    torch.manual_seed(0)
    on_gpu = BertModel(config).eval()
torch.cuda.synchronize()
mark("BertModel(config) built under torch.device('cuda')")
"""
start = time.perf_counter()
env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="bert-child-")}
done = subprocess.run(
    [sys.executable, "-c", child], env=env, capture_output=True, text=True
)
print(done.stdout, done.stderr[-1500:])
wall = time.perf_counter() - start
print(f"parent: {wall:.1f} s to the child's exit, rc {done.returncode}")

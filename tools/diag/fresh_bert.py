"""Chapter 7's three fresh BERT processes through gpubook.models.fresh_processes, with
watchdogs: each child dumps its Python stacks to $OUT/childN.tb every 45 s, and the
parent's to $OUT/parent.tb, so a hang shows where it waits (run S, 2026-11-27: the
chapter stopped at the run's 575 s cap with no output)."""

import faulthandler
import os
import sys
import tempfile
import time

import torch

import gpubook.models as chapter

out = os.environ.get("OUT", "/tmp")
faulthandler.dump_traceback_later(60, repeat=True, file=open(f"{out}/parent.tb", "w"))
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
bert_setup = f"""
import faulthandler as _fh, sys as _s
_fh.dump_traceback_later(45, repeat=True, file=open(TB, "w"))
import torch
from transformers import AttentionInterface, BertConfig, BertModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward
AttentionInterface.register("sdpa_unmasked", sdpa_attention_forward)
device = torch.device("{device.type}")
torch.manual_seed(0)
config = BertConfig(attn_implementation="sdpa_unmasked")
model = BertModel(config).to(device).eval()
ids = torch.randint(0, 30_000, (1, 9), device=device)
print("setup done", flush=True)
"""
start_up_part = """
print("turn", flush=True)
tiny = torch.compile(lambda x: (x * 2 + 1).relu().sum())
start_up, _ = timed(tiny, torch.ones(8, device=device))
"""
whole = "compiled = torch.compile(model, dynamic=False)"
regional = """
for layer in model.encoder.layer:
    layer.compile(dynamic=False)
compiled = model
"""
measure_first = """
with torch.inference_mode():
    first, _ = timed(compiled, ids)
graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"] - 1
print("measured", flush=True)
"""
save_artifacts = """
artifacts = torch.compiler.save_cache_artifacts()
open(ARTIFACTS, "wb").write(artifacts[0])
"""
load_artifacts = "torch.compiler.load_cache_artifacts(open(ARTIFACTS, 'rb').read())\n"
eager_reference = """
import gpubook, torchvision
resnet = torchvision.models.resnet.ResNet(
    torchvision.models.resnet.BasicBlock, [2, 2, 2, 2]).to(device).eval()
pictures = torch.randn(16, 3, 224, 224, device=device)
with torch.inference_mode():
    eager_resnet = gpubook.throughput(resnet, pictures, min_run_time=0.3).median
    eager_bert = gpubook.throughput(model, ids, min_run_time=0.3).median
print("eager done", flush=True)
"""
first_values = "start_up=start_up, first=first, graphs=graphs"
eager_values = first_values + ", eager_resnet=eager_resnet, eager_bert=eager_bert"
folder = tempfile.mkdtemp(prefix="diag-cache-")
artifacts = os.path.join(folder, "artifacts.bin")
plan = [
    ([whole, measure_first, save_artifacts, eager_reference], "a", eager_values),
    ([regional, measure_first], "b", first_values),
    ([load_artifacts, whole, measure_first], "c", first_values),
]
jobs = []
for index, (parts, name, values) in enumerate(plan):
    setup = "\n".join(
        [
            f"ARTIFACTS = {artifacts!r}",
            f"TB = {out + f'/child{index}.tb'!r}",
            bert_setup,
        ]
    )
    code = "\n".join([start_up_part, *parts, f"report({values})"])
    jobs.append((setup, code, os.path.join(folder, name)))
start = time.perf_counter()
try:
    results = chapter.fresh_processes(
        jobs, timeout=float(sys.argv[1]) if sys.argv[1:] else 150
    )
    print(results)
except Exception as error:
    print("FAILED", type(error).__name__, error, getattr(error, "completed", None))
print(f"total {time.perf_counter() - start:.1f} s", flush=True)
faulthandler.cancel_dump_traceback_later()

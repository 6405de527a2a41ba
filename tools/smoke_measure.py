"""GPU smoke test of gpubook's measurement helpers (run on the device machine)."""

import time

import torch

import gpubook

dev = torch.device("cuda")
x = torch.randn(4096, 4096, device=dev)
big = torch.randn(2**26, device=dev)
t0 = time.time()
print(gpubook.latency(torch.mm, x, x, min_run_time=0.2))
print(gpubook.throughput(torch.mm, x, x, min_run_time=0.2))
print(gpubook.latency(torch.add, big, 1.0, min_run_time=0.2, flush_l2=True))


def f(t):
    return (t.sin() * 2).cos() + 1


cf = torch.compile(f)
c = gpubook.compare({"eager": f, "compiled": cf}, big, min_run_time=0.3)
print(c)
print(c.ratio("compiled"))
small = torch.randn(64, 64, device=dev)


def chain(t):
    for _ in range(20):
        t = torch.relu(t @ small)
    return t


ro = torch.compile(chain, mode="reduce-overhead")
for name, fn in [("eager", chain), ("default", torch.compile(chain)), ("ro", ro)]:
    s = gpubook.host_device_split(fn, small, label=name)
    print(s)
    print(s.kernel_names[:2])
tr = gpubook.trace(ro, small, calls=2)
print(
    len(tr.cpu),
    len(tr.gpu),
    len(tr.calls),
    tr.gpu[:2],
    sorted({s.kind for s in tr.cpu}),
)
tr = gpubook.trace(chain, small, calls=2)
print(
    len(tr.cpu), len(tr.gpu), len(tr.calls), sorted({s.kind for s in tr.cpu}), tr.end_us
)
print("warm", gpubook.warm_up_compiler())
cc = gpubook.compile_costs(
    "import torch\ndef fn(x):\n    return (x.sin() * 2).cos().sum()\n"
    "args = (torch.randn(1000, device='cuda'),)\n"
)
print(cc)
print("smoke total", time.time() - t0)

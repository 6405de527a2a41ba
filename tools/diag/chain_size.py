"""Is chapter 3's fused-chain ratio (eager vs compiled, throughput) set by the GPU or by
the host at 2**24 float32 elements (the gpu-profile size of run V)? Times the chain at
three sizes, interleaved, with the compiled call's host cost on a tiny input (where the
host alone sets the time) and the profiler's kernel time per call.

On an H100 (2026-11-27, torch 2.11): a compiled call cost the host 65 µs back to back
(1,024 elements; eager 106 µs for its ten operations); the kernel took 47 µs at 2**24
(GPU busy 39%, mixed; ratio 10.2x and 11.3x in two repeats, 6.5x to 11.1x over the
month's runs) and 179 µs at 2**26 (GPU busy 81%; 10.9x and 11.4x, 2,706-2,847 GB/s).

    python tools/diag/chain_size.py
"""

import torch

import gpubook


def chain(x):
    return torch.tanh(x) * torch.sigmoid(x) + 0.5 * x * x - torch.exp(-x.abs())


def main():
    device = torch.device("cuda")
    compiled = torch.compile(chain, dynamic=False)
    tiny = torch.randn(1024, device=device)
    host = gpubook.throughput(compiled, tiny, min_run_time=1.0)
    eager_tiny = gpubook.throughput(chain, tiny, min_run_time=1.0)
    print(f"host cost per call (1,024 elements, throughput): compiled {host}")
    print(f"                                               eager    {eager_tiny}")
    for log2 in (22, 24, 26):
        n = 2**log2
        x = torch.randn(n, device=device)
        fn = torch.compile(chain, dynamic=False)
        for repeat in range(2):
            cmp = gpubook.compare({"eager": chain, "compiled": fn}, x, min_run_time=1.0)
            r = cmp.ratio("compiled")
            t = cmp.timings["compiled"].median
            print(
                f"2**{log2}: repeat {repeat}: ratio {r.estimate:.2f} "
                f"[{r.low:.2f}, {r.high:.2f}]"
                f" compiled median {t * 1e6:.1f} us, {8 * n / t / 1e9:,.0f} GB/s"
            )
        split = gpubook.host_device_split(fn, x, calls=20)
        print(f"2**{log2}: compiled split: {split}")


if __name__ == "__main__":
    main()

"""Why does chapter 3's profiler time cuBLAS's product about 25 µs longer under
`default` than under `max-autotune-no-cudagraphs` (runs U, V, W: ~200 against ~177 µs)
while the interleaved timed medians tie? Hypothesis (a compiler-engineer review, not yet
measured): the profiler times `default` first, right after seconds of back-to-back
bf16 products, when the GPU may run at a lower clock (power cap); max-autotune is
profiled later, on a cooler GPU. This profiles the two modes in both orders after the
same load, and reads the SM clock and throttle reasons before each profile.

    python tools/diag/mm_profile_order.py
"""

import subprocess

import torch
import torch.nn.functional as F

import gpubook


def linear_gelu(x, weight, bias):
    return F.gelu(x @ weight + bias, approximate="tanh")


def gpu_state():
    query = (
        "clocks.sm,power.draw,temperature.gpu,"
        "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown"
    )
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() or out.stderr.strip()
    except (OSError, subprocess.SubprocessError) as error:
        return f"nvidia-smi: {error}"


def product_us(split):
    return sum(s for name, s, _ in split.kernel_names if not name.startswith("triton"))


def main():
    device = torch.device("cuda")
    n = 4096
    args = [
        torch.randn(n, n, device=device, dtype=torch.bfloat16) / n**0.25
        for _ in range(2)
    ] + [torch.randn(n, device=device, dtype=torch.bfloat16)]
    modes = {
        "default": torch.compile(linear_gelu),
        "max-autotune-no-cudagraphs": torch.compile(
            linear_gelu, mode="max-autotune-no-cudagraphs"
        ),
    }
    for fn in modes.values():
        fn(*args)
    for order in (list(modes), list(reversed(modes))):
        runs = gpubook.compare({"eager": linear_gelu, **modes}, *args)  # the load
        medians = ", ".join(f"{k} {runs[k].median * 1e6:.1f} µs" for k in modes)
        print(f"after compare ({medians}): {gpu_state()}")
        for name in order:
            state = gpu_state()
            split = gpubook.host_device_split(modes[name], *args, label=name)
            print(
                f"  {name:28s} product {product_us(split) * 1e6:6.1f} µs, "
                f"GPU busy {split.gpu * 1e6:6.1f} µs per call; before: {state}"
            )
            for kernel, seconds, count in split.kernel_names:
                print(f"      {seconds * 1e6:7.1f} µs x{count:g}  {kernel}")


if __name__ == "__main__":
    main()

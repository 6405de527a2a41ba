"""Hardware limits, and how close a measured run gets to them.

Units: bandwidth in **GB/s** (10^9 bytes per second), compute in **TFLOP/s** (10^12 floating-point
operations per second), sizes in **bytes**, times in **seconds**.

* :func:`copy_bandwidth` measures the device's practical memory limit: a large tensor copied on the
  device, counting bytes read plus bytes written. A memory-bound kernel can at best match it.
* :func:`peak_tflops` gives the matrix-multiply limit for a dtype: the datasheet figure for GPUs the
  book knows, otherwise a measured large matrix product (and says which).
"""

from __future__ import annotations

import functools

import torch

from .profiles import pick_device, sizes
from .timing import measure

__all__ = [
    "bandwidth_gbs",
    "tflops",
    "fraction",
    "copy_bandwidth",
    "peak_tflops",
    "matmul_flops",
    "DATASHEET_TFLOPS",
]

# Dense (no sparsity) tensor-core peaks from NVIDIA's datasheets, TFLOP/s, for the SXM parts.
DATASHEET_TFLOPS = {
    "H100": {"float64": 67.0, "float32": 67.0, "tf32": 494.7, "bfloat16": 989.4, "float16": 989.4},
    "H200": {"float64": 67.0, "float32": 67.0, "tf32": 494.7, "bfloat16": 989.4, "float16": 989.4},
    "A100": {"float64": 19.5, "float32": 19.5, "tf32": 156.0, "bfloat16": 312.0, "float16": 312.0},
}
"""Datasheet matrix-multiply peaks by GPU family and precision (``tf32``: float32 with TF32 on)."""


def _positive(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")


def bandwidth_gbs(nbytes: float, seconds: float) -> float:
    """Achieved bandwidth in GB/s for ``nbytes`` moved (read plus written) in ``seconds``."""
    _positive("nbytes", nbytes)
    _positive("seconds", seconds)
    return nbytes / seconds / 1e9


def tflops(flops: float, seconds: float) -> float:
    """Achieved compute rate in TFLOP/s for ``flops`` operations done in ``seconds``."""
    _positive("flops", flops)
    _positive("seconds", seconds)
    return flops / seconds / 1e12


def matmul_flops(m: int, n: int, k: int) -> int:
    """Floating-point operations of an (m x k) @ (k x n) matrix product: 2*m*n*k."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    return 2 * m * n * k


def fraction(achieved: float, limit: float) -> float:
    """``achieved / limit``: the share of a hardware limit that a run reached (1.0 = at the limit)."""
    _positive("limit", limit)
    if not (isinstance(achieved, (int, float)) and achieved >= 0):
        raise ValueError(f"achieved must be a non-negative number, got {achieved!r}")
    return achieved / limit


@functools.lru_cache(maxsize=None)
def _copy_bandwidth(device: str, nbytes: int) -> float:
    source = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    target = torch.empty_like(source)
    timing = measure(target.copy_, source, min_run_time=0.3)
    return bandwidth_gbs(2 * source.numel() * source.element_size(), timing.median)


def copy_bandwidth(device: torch.device | str | None = None, nbytes: int | None = None) -> float:
    """Measured copy bandwidth of ``device`` in GB/s, counting bytes read plus bytes written.

    ``nbytes`` is the size of the copied tensor (default: 1 GiB on a GPU, 256 MiB on a CPU, 64 MiB
    under the ``ci`` profile), well above any cache. The result is cached for the session.
    """
    device = torch.device(device) if device is not None else pick_device()
    if nbytes is None:
        nbytes = sizes(gpu=2**30 if device.type == "cuda" else 2**28, cpu=2**28, ci=2**26)
    if not isinstance(nbytes, int) or nbytes < 4096:
        raise ValueError(f"nbytes must be an int of at least 4096 bytes, got {nbytes!r}")
    return _copy_bandwidth(str(device), nbytes)


def _precision_key(dtype: torch.dtype) -> str:
    if dtype == torch.float32 and torch.get_float32_matmul_precision() != "highest":
        return "tf32"
    return str(dtype).removeprefix("torch.")


@functools.lru_cache(maxsize=None)
def _measured_peak(device: str, dtype: torch.dtype, precision: str) -> float:
    n = sizes(gpu=8192 if device.startswith("cuda") else 2048, cpu=2048, ci=512)
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    timing = measure(torch.mm, a, b, min_run_time=0.3)
    return tflops(matmul_flops(n, n, n), timing.median)


def peak_tflops(device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> tuple[float, str]:
    """Matrix-multiply limit for ``dtype`` on ``device``: ``(TFLOP/s, source)``.

    ``source`` is ``"datasheet"`` for GPUs in :data:`DATASHEET_TFLOPS` and ``"measured"`` otherwise
    (the best rate of a large square matrix product, which is what the device delivers in practice).
    For float32 the answer depends on ``torch.get_float32_matmul_precision()``: anything but
    ``"highest"`` lets CUDA use TF32 tensor cores.
    """
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
    device = torch.device(device) if device is not None else pick_device()
    precision = _precision_key(dtype)
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        for family, table in DATASHEET_TFLOPS.items():
            if family in name and precision in table:
                return table[precision], "datasheet"
    elif precision == "tf32":
        precision = "float32"  # TF32 is a CUDA tensor-core mode; the CPU computes in float32
    return _measured_peak(str(device), dtype, precision), "measured"

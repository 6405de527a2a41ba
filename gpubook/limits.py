"""Hardware limits, and how close a measured run gets to them.

Units: bandwidth in **GB/s** (10^9 bytes per second), compute in **TFLOP/s** (10^12
floating-point operations per second), sizes in **bytes**, times in **seconds**.

* :func:`copy_bandwidth` measures the device's practical memory limit: a large tensor
  copied on the device, counting bytes read plus bytes written. A memory-bound kernel
  can at best match it.
* :func:`peak_tflops` gives the matrix-multiply limit for a dtype: the datasheet figure
  for the GPU variants the book knows (H100 SXM and PCIe, H200, A100), otherwise the
  best rate of a measured large matrix product, which is named as measured, not as a
  peak.
"""

from __future__ import annotations

import functools
import re

import torch

from ._checks import positive_int, positive_number
from .profiles import pick_device, sizes
from .timing import measure

__all__ = [
    "bandwidth_gbs",
    "tflops",
    "fraction",
    "copy_bandwidth",
    "peak_tflops",
    "matmul_flops",
    "float32_matmul_mode",
    "gpu_variant",
    "DATASHEET_TFLOPS",
    "MEASURED_SOURCE",
]

# Matrix-multiply peaks from NVIDIA's datasheets, TFLOP/s, dense (without 2:4 sparsity:
# the datasheets print tensor-core figures "with sparsity", twice the dense rate), per
# exact variant:
#
# * H100 SXM and H100 PCIe: NVIDIA H100 Tensor Core GPU datasheet (FP64 34 / 26, FP64
# Tensor Core   67 / 51, FP32 67 / 51, TF32 Tensor Core 989* / 756*, BF16 and FP16
# Tensor Core 1,979* /   1,513*, * with sparsity); the dense SXM figures 494.7 and 989.4
# are those of NVIDIA's Hopper   architecture whitepaper (H100 SXM5 at its boost clock),
# which halves the datasheet's. * H200 (SXM): NVIDIA H200 datasheet, the same compute as
# the H100 SXM (only memory differs). * A100 (SXM4 and PCIe, 40 and 80 GB): NVIDIA A100
# datasheet (FP64 Tensor Core 19.5, FP32 19.5,   TF32 156, BF16/FP16 312, dense).
#
# What each key means:
# * "float64": the FP64 *tensor-core* peak (cuBLAS runs float64 matmuls on the FP64
# tensor cores   of these GPUs); * "float32": float32 computed in IEEE float32 on the
# CUDA cores, a *non-tensor-core* figure   (the same number as FP64 Tensor Core on
# Hopper, by coincidence of the design); * "tf32": float32 inputs multiplied on the
# tensor cores in TF32 (PyTorch's "tf32" precision); * "bfloat16", "float16": tensor
# cores. Variants not listed (H100 NVL, H200 NVL, GH200, ...) have other clocks and
# power limits, so they get no datasheet figure here: peak_tflops measures them instead
# of borrowing another card's.
DATASHEET_TFLOPS = {
    "H100 SXM": {
        "float64": 66.9,
        "float32": 66.9,
        "tf32": 494.7,
        "bfloat16": 989.4,
        "float16": 989.4,
    },
    "H100 PCIe": {
        "float64": 51.0,
        "float32": 51.0,
        "tf32": 378.0,
        "bfloat16": 756.0,
        "float16": 756.0,
    },
    "H200 SXM": {
        "float64": 66.9,
        "float32": 66.9,
        "tf32": 494.7,
        "bfloat16": 989.4,
        "float16": 989.4,
    },
    "A100": {
        "float64": 19.5,
        "float32": 19.5,
        "tf32": 156.0,
        "bfloat16": 312.0,
        "float16": 312.0,
    },
}
"""Datasheet matrix-multiply peaks (dense) by exact GPU variant and precision.

``tf32`` is float32 with TF32 tensor cores on; ``float32`` is IEEE float32 on the CUDA
cores (not a tensor-core figure). See :func:`gpu_variant` for how a device name maps to
a variant.
"""

# Streaming multiprocessors of each variant, to tell variants apart when the name is
# ambiguous.
_VARIANT_SMS = {"H100 SXM": 132, "H100 PCIe": 114, "H200 SXM": 132, "A100": 108}

MEASURED_SOURCE = "measured (best large matmul)"
"""The ``source`` :func:`peak_tflops` returns for a limit it measured rather than looked
up."""


def gpu_variant(name: str, sm_count: int | None = None) -> str | None:
    """The :data:`DATASHEET_TFLOPS` key for a CUDA device name, or ``None`` when not
    listed.

    ``"NVIDIA H100 80GB HBM3"`` and names with ``SXM`` are the H100 SXM; ``"NVIDIA H100
    PCIe"`` the PCIe card; ``NVL`` cards, ``GH200`` and unknown names give ``None``.
    When ``sm_count`` is given and does not match the variant's number of SMs, the
    answer is ``None`` too (a cut-down or unfamiliar part is measured, not looked up).
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    text = name.upper()
    variant = None
    if "NVL" in text:  # H100 NVL, H200 NVL (GH200 and GH100 match no pattern below)
        variant = None
    elif re.search(r"\bH100\b", text):
        if "PCIE" in text:
            variant = "H100 PCIe"
        elif "SXM" in text or "HBM3" in text:
            variant = "H100 SXM"
    elif re.search(r"\bH200\b", text):
        variant = "H200 SXM"
    elif re.search(r"\bA100\b", text):
        variant = "A100"
    if (
        variant is not None
        and sm_count is not None
        and sm_count != _VARIANT_SMS[variant]
    ):
        return None
    return variant


def bandwidth_gbs(nbytes: float, seconds: float) -> float:
    """Achieved bandwidth in GB/s for ``nbytes`` moved (read plus written) in
    ``seconds``."""
    positive_number("nbytes", nbytes)
    positive_number("seconds", seconds)
    return nbytes / seconds / 1e9


def tflops(flops: float, seconds: float) -> float:
    """Achieved compute rate in TFLOP/s for ``flops`` operations done in ``seconds``."""
    positive_number("flops", flops)
    positive_number("seconds", seconds)
    return flops / seconds / 1e12


def matmul_flops(m: int, n: int, k: int) -> int:
    """Floating-point operations of an (m x k) @ (k x n) matrix product: 2*m*n*k."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        positive_int(name, value)
    return 2 * m * n * k


def fraction(achieved: float, limit: float, source: str | None = None) -> float:
    """``achieved / limit``: the share of a hardware limit that a run reached (1.0 = at
    the limit).

    ``source`` says where the limit came from, as :func:`peak_tflops` returns it; pass
    it along (``fraction(rate, *peak_tflops(device, dtype))``). A *measured* limit (a
    source starting with ``"measured"``) is only the best rate seen so far, not a
    ceiling: a run that beats it has reached it, so the share is capped at 1.0 and never
    reads above 100%. Against a datasheet figure (or with no source) the plain ratio is
    returned, above 1.0 included, since that points at a wrong limit or a wrong count of
    bytes or operations.
    """
    positive_number("limit", limit)
    positive_number("achieved", achieved, allow_zero=True)
    if source is not None and not isinstance(source, str):
        raise TypeError(f"source must be a str or None, got {type(source).__name__}")
    share = achieved / limit
    if source is not None and source.startswith("measured"):
        return min(share, 1.0)
    return share


@functools.lru_cache(maxsize=None)
def _copy_bandwidth(device: str, nbytes: int) -> float:
    source = torch.empty(nbytes // 4, dtype=torch.float32, device=device).fill_(1.0)
    target = torch.empty_like(source)
    timing = measure(target.copy_, source, min_run_time=0.3)
    return bandwidth_gbs(2 * source.numel() * source.element_size(), timing.median)


def copy_bandwidth(
    device: torch.device | str | None = None, nbytes: int | None = None
) -> float:
    """Measured copy bandwidth of ``device`` in GB/s, counting bytes read plus bytes
    written.

    ``nbytes`` is the size of the copied tensor (default: 1 GiB on a GPU, 256 MiB on a
    CPU, 64 MiB under the ``ci`` profile), well above any cache. The result is the
    median over independent samples, cached for the session.
    """
    device = torch.device(device) if device is not None else pick_device()
    if nbytes is None:
        nbytes = sizes(
            gpu=2**30 if device.type == "cuda" else 2**28, cpu=2**28, ci=2**26
        )
    positive_int("nbytes", nbytes, minimum=4096)
    return _copy_bandwidth(str(device), nbytes)


def _backend_precision(backend) -> str | None:
    """``backend.fp32_precision`` (torch 2.9+), following "none" up to the global
    setting."""
    value = getattr(backend, "fp32_precision", None)
    if value in (None, "none"):
        value = getattr(torch.backends, "fp32_precision", None)
    return None if value in (None, "none") else value


_LEGACY_MODES = {
    "cuda": {"highest": "ieee", "high": "tf32", "medium": "tf32"},
    "cpu": {"highest": "ieee", "high": "tf32", "medium": "bf16"},
}


def float32_matmul_mode(device_type: str = "cuda") -> str:
    """How float32 matrix products are computed on ``device_type`` now: ``"ieee"``,
    ``"tf32"`` or ``"bf16"``.

    torch 2.9 added per-backend settings: ``torch.backends.cuda.matmul.fp32_precision``
    (``"ieee"``/``"tf32"``) for CUDA and ``torch.backends.mkldnn.matmul.fp32_precision``
    (``"ieee"``/``"tf32"``/``"bf16"``) for the CPU; they are read when present
    (``"none"`` defers to ``torch.backends.fp32_precision``). Older versions have only
    ``torch.get_float32_matmul_precision()``: ``"highest"`` is IEEE float32 and
    ``"high"`` TF32; ``"medium"`` allows bfloat16 internally where a backend has it,
    which on CUDA it does not: torch maps ``set_float32_matmul_precision("medium")`` to
    ``"tf32"`` for CUDA and to ``"bf16"`` for the CPU (checked on torch 2.14.1).
    """
    kind = "cuda" if device_type == "cuda" else "cpu"
    if kind == "cuda":
        backend = torch.backends.cuda.matmul
    else:
        backend = getattr(getattr(torch.backends, "mkldnn", None), "matmul", None)
    value = _backend_precision(backend) if backend is not None else None
    if value is None:
        try:
            legacy = torch.get_float32_matmul_precision()
        except (
            RuntimeError
        ):  # legacy and new settings mixed: torch refuses a global answer
            legacy = "highest"
        value = _LEGACY_MODES[kind].get(legacy, "ieee")
    return value


def _precision_key(dtype: torch.dtype, device_type: str = "cuda") -> str:
    """The :data:`DATASHEET_TFLOPS` key for a matmul of ``dtype`` under the current
    settings."""
    if dtype == torch.float32:
        mode = float32_matmul_mode(device_type)
        if mode == "tf32":
            return "tf32"
        if mode == "bf16":
            return "bfloat16"
    return str(dtype).removeprefix("torch.")


@functools.lru_cache(maxsize=None)
def _measured_peak(device: str, dtype: torch.dtype, precision: str) -> float:
    """The best rate (TFLOP/s) over independent samples of a large square matrix
    product."""
    n = sizes(gpu=8192 if device.startswith("cuda") else 2048, cpu=2048, ci=512)
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    timing = measure(torch.mm, a, b, min_run_time=0.3)
    return tflops(matmul_flops(n, n, n), min(timing.times))


def peak_tflops(
    device: torch.device | str | None = None, dtype: torch.dtype = torch.float32
) -> tuple[float, str]:
    """Matrix-multiply limit for ``dtype`` on ``device``: ``(TFLOP/s, source)``.

    ``source`` is ``"datasheet (<variant>)"`` for the GPU variants in
    :data:`DATASHEET_TFLOPS` (the exact card: an H100 PCIe gets the PCIe figures, an
    H100 NVL none) and :data:`MEASURED_SOURCE`, ``"measured (best large matmul)"``,
    otherwise: the best rate over independent samples of a large square matrix product.
    A measured figure is what this device delivered, not a peak: pass the source to
    :func:`fraction`, which then never reports more than 100% of it. For float32 the
    answer follows the current float32 matmul precision (:func:`float32_matmul_mode`):
    ``"tf32"`` gives the TF32 tensor-core peak, ``"ieee"`` the CUDA-core float32 peak.
    """
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
    device = torch.device(device) if device is not None else pick_device()
    precision = _precision_key(dtype, device.type)
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        name = torch.cuda.get_device_name(device)
        variant = gpu_variant(name, getattr(props, "multi_processor_count", None))
        table = DATASHEET_TFLOPS.get(variant, {})
        if precision in table:
            return table[precision], f"datasheet ({variant})"
    return _measured_peak(str(device), dtype, precision), MEASURED_SOURCE

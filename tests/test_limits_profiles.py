"""Unit tests for gpubook.limits and gpubook.profiles: exact arithmetic, the peak
lookup's branches (datasheet per GPU variant, TF32, measured), and the profile
switch."""

import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from gpubook import limits, profiles
from gpubook._checks import positive_int, positive_number

# --- arithmetic
# ------------------------------------------------------------------------------------


def test_bandwidth_and_flops_arithmetic():
    assert limits.bandwidth_gbs(3e9, 1.5) == 2.0
    assert limits.bandwidth_gbs(2**30, 0.5) == 2**31 / 1e9
    assert limits.tflops(6e12, 2.0) == 3.0
    assert limits.matmul_flops(2, 3, 4) == 48
    assert limits.matmul_flops(1, 1, 1) == 2
    assert limits.fraction(50.0, 200.0) == 0.25
    assert limits.fraction(0, 200.0) == 0.0


@given(st.floats(1e-3, 1e15), st.floats(1e-9, 1e3))
def test_bandwidth_and_flops_properties(amount, seconds):
    assert limits.bandwidth_gbs(amount, seconds) == pytest.approx(
        amount / seconds / 1e9
    )
    assert limits.tflops(amount, seconds) == pytest.approx(amount / seconds / 1e12)
    assert limits.bandwidth_gbs(amount, seconds) == pytest.approx(
        1000 * limits.tflops(amount, seconds)
    )


@given(st.integers(1, 10_000), st.integers(1, 10_000), st.integers(1, 10_000))
def test_matmul_flops_property(m, n, k):
    assert limits.matmul_flops(m, n, k) == 2 * m * n * k == limits.matmul_flops(n, m, k)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: limits.bandwidth_gbs(0, 1.0), ValueError),
        (lambda: limits.bandwidth_gbs(1, 0), ValueError),
        (lambda: limits.bandwidth_gbs(1, math.inf), ValueError),
        (lambda: limits.bandwidth_gbs(math.nan, 1.0), ValueError),
        (lambda: limits.bandwidth_gbs(True, 1.0), TypeError),
        (lambda: limits.tflops(-1, 1.0), ValueError),
        (lambda: limits.tflops(1.0, True), TypeError),
        (lambda: limits.fraction(1.0, 0), ValueError),
        (lambda: limits.fraction(-1.0, 1.0), ValueError),
        (lambda: limits.fraction(1.0, math.inf), ValueError),
        (lambda: limits.fraction(True, 2.0), TypeError),
        (lambda: limits.fraction(1.0, 2.0, source=1), TypeError),
        (lambda: limits.matmul_flops(0, 1, 1), ValueError),
        (lambda: limits.matmul_flops(1, 2.0, 1), TypeError),
        (lambda: limits.matmul_flops(1, 1, True), TypeError),
        (lambda: limits.copy_bandwidth("cpu", nbytes=10), ValueError),
        (lambda: limits.copy_bandwidth("cpu", nbytes=4096.0), TypeError),
    ],
)
def test_limits_reject_bad_input(call, error):
    with pytest.raises(error):
        call()


def test_bad_input_errors_name_the_argument():
    with pytest.raises(ValueError, match="seconds"):
        limits.bandwidth_gbs(1, 0)
    with pytest.raises(TypeError, match="achieved"):
        limits.fraction(True, 1.0)
    with pytest.raises(ValueError, match="nbytes must be an int of at least 4096"):
        limits.copy_bandwidth("cpu", nbytes=10)


# --- the shared checks (gpubook._checks)
# -------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [True, False, math.inf, -math.inf, math.nan, 0, -1, "1", None]
)
def test_positive_number_rejects(value):
    with pytest.raises((TypeError, ValueError), match="x"):
        positive_number("x", value)


def test_positive_number_options_and_error_kinds():
    assert positive_number("x", 0, allow_zero=True) == 0
    assert positive_number("x", math.inf, finite=False) == math.inf
    assert positive_number("x", 2.5) == 2.5
    with pytest.raises(ValueError, match="NaN"):
        positive_number("x", math.nan, finite=False)
    with pytest.raises(ValueError, match="non-negative"):
        positive_number("x", -1, allow_zero=True)
    with pytest.raises(
        TypeError
    ):  # wrong type: a TypeError (that is also a ValueError)
        positive_number("x", True)
    with pytest.raises(ValueError):
        positive_number("x", True)


def test_positive_int():
    import numpy as np

    assert positive_int("n", 3) == 3 and positive_int("n", np.int64(3)) == 3
    assert positive_int("n", 0, allow_zero=True) == 0
    assert positive_int("n", 4096, minimum=4096) == 4096
    for value, message in (
        (0, "positive int"),
        (-1, "positive int"),
        (2.0, "int"),
        (True, "int"),
    ):
        with pytest.raises((TypeError, ValueError), match=message):
            positive_int("n", value)
    with pytest.raises(ValueError, match="non-negative"):
        positive_int("n", -1, allow_zero=True)
    with pytest.raises(ValueError, match="at least 4096"):
        positive_int("n", 4095, minimum=4096)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_positive_number_accepts_exactly_the_positive_finite_floats(value):
    ok = math.isfinite(value) and value > 0
    try:
        positive_number("x", value)
    except ValueError:
        assert not ok
    else:
        assert ok


# --- fraction: measured limits never read above 100%
# ------------------------------------------------


def test_fraction_of_a_measured_limit_is_capped():
    assert limits.fraction(120.0, 100.0) == 1.2, (
        "against a datasheet figure the overshoot shows"
    )
    assert limits.fraction(120.0, 100.0, "datasheet (H100 SXM)") == 1.2
    assert limits.fraction(120.0, 100.0, limits.MEASURED_SOURCE) == 1.0
    assert limits.fraction(80.0, 100.0, limits.MEASURED_SOURCE) == 0.8
    assert limits.fraction(80.0, *(100.0, "measured")) == 0.8


@given(st.floats(0, 1e6), st.floats(1e-3, 1e6))
def test_fraction_measured_property(achieved, limit):
    share = limits.fraction(achieved, limit, limits.MEASURED_SOURCE)
    assert 0 <= share <= 1.0
    assert share == min(achieved / limit, 1.0)


# --- copy bandwidth: 2 x bytes / median time
# ------------------------------------------------------


def test_copy_bandwidth_counts_read_plus_write(monkeypatch):
    limits._copy_bandwidth.cache_clear()
    calls = []

    def fake_measure(fn, *args, **kwargs):
        calls.append((fn, args, kwargs))
        return SimpleNamespace(median=0.004, times=(0.005, 0.004, 0.003))

    monkeypatch.setattr(limits, "measure", fake_measure)
    try:
        gbs = limits.copy_bandwidth("cpu", nbytes=2**20)
    finally:
        limits._copy_bandwidth.cache_clear()
    assert gbs == 2 * 2**20 / 0.004 / 1e9, (
        "bytes read plus bytes written, over the median"
    )
    [(fn, (source,), kwargs)] = calls
    assert source.numel() * source.element_size() == 2**20
    assert kwargs == {"min_run_time": 0.3}


def test_copy_bandwidth_default_sizes_follow_the_profile(monkeypatch):
    seen = []
    monkeypatch.setattr(
        limits,
        "_copy_bandwidth",
        lambda device, nbytes: seen.append((device, nbytes)) or 1.0,
    )
    for profile, expected in (("gpu", 2**28), ("cpu", 2**28), ("ci", 2**26)):
        monkeypatch.setenv("GPUBOOK_PROFILE", profile)
        limits.copy_bandwidth("cpu")
        assert seen[-1] == ("cpu", expected)
    monkeypatch.setenv("GPUBOOK_PROFILE", "gpu")
    limits.copy_bandwidth("cuda")
    assert seen[-1] == ("cuda", 2**30)


def test_copy_bandwidth_cpu_is_measured():
    """A real measurement, once: a finite rate, cached for the session."""
    gbs = limits.copy_bandwidth("cpu", nbytes=2**22)
    assert math.isfinite(gbs) and gbs > 0
    assert limits.copy_bandwidth("cpu", nbytes=2**22) == gbs


# --- peak TFLOP/s: the exact GPU variant, TF32, measured
# --------------------------------------------


@pytest.mark.parametrize(
    "name, sms, variant",
    [
        ("NVIDIA H100 80GB HBM3", 132, "H100 SXM"),
        ("NVIDIA H100 SXM5 80GB", None, "H100 SXM"),
        ("NVIDIA H100 PCIe", 114, "H100 PCIe"),
        ("NVIDIA H100 NVL", 132, None),
        ("NVIDIA H100", None, None),
        ("NVIDIA H200", 132, "H200 SXM"),
        ("NVIDIA H200 NVL", 132, None),
        ("NVIDIA GH200 480GB", 132, None),
        ("NVIDIA A100-SXM4-80GB", 108, "A100"),
        ("NVIDIA A100 80GB PCIe", None, "A100"),
        ("NVIDIA GeForce RTX 4090", 128, None),
        (
            "NVIDIA H100 80GB HBM3",
            114,
            None,
        ),  # the name says SXM, the SM count does not
    ],
)
def test_gpu_variant(name, sms, variant):
    assert limits.gpu_variant(name, sms) == variant


def test_datasheet_keys_mean_what_they_say():
    sxm, pcie = (
        limits.DATASHEET_TFLOPS["H100 SXM"],
        limits.DATASHEET_TFLOPS["H100 PCIe"],
    )
    assert sxm["tf32"] == 494.7 and sxm["bfloat16"] == 989.4 and sxm["float32"] == 66.9
    assert (
        pcie["tf32"] == 378.0 and pcie["bfloat16"] == 756.0 and pcie["float32"] == 51.0
    )
    for table in limits.DATASHEET_TFLOPS.values():
        assert table["float32"] < table["tf32"] < table["bfloat16"] == table["float16"]


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch.cuda answering as a GPU named by the test; returns a setter."""

    def use(name, sms):
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: name)
        monkeypatch.setattr(
            torch.cuda,
            "get_device_properties",
            lambda device=None: SimpleNamespace(multi_processor_count=sms),
        )

    return use


@pytest.fixture
def precision(monkeypatch):
    """Set torch.backends.cuda.matmul.fp32_precision for the test only."""
    before = torch.backends.cuda.matmul.fp32_precision

    def use(value):
        torch.backends.cuda.matmul.fp32_precision = value

    yield use
    torch.backends.cuda.matmul.fp32_precision = before


def test_peak_is_the_exact_variants_datasheet(fake_gpu, precision):
    precision("ieee")
    fake_gpu("NVIDIA H100 80GB HBM3", 132)
    assert limits.peak_tflops("cuda", torch.bfloat16) == (989.4, "datasheet (H100 SXM)")
    assert limits.peak_tflops("cuda", torch.float32) == (66.9, "datasheet (H100 SXM)")
    assert limits.peak_tflops("cuda", torch.float64) == (66.9, "datasheet (H100 SXM)")
    fake_gpu("NVIDIA H100 PCIe", 114)
    assert limits.peak_tflops("cuda", torch.bfloat16) == (
        756.0,
        "datasheet (H100 PCIe)",
    )


def test_peak_float32_follows_tf32(fake_gpu, precision):
    fake_gpu("NVIDIA H100 80GB HBM3", 132)
    precision("tf32")
    assert limits.float32_matmul_mode("cuda") == "tf32"
    assert limits.peak_tflops("cuda", torch.float32) == (494.7, "datasheet (H100 SXM)")
    assert limits.peak_tflops("cuda", torch.bfloat16)[0] == 989.4, (
        "TF32 only changes float32"
    )
    precision("ieee")
    assert limits.float32_matmul_mode("cuda") == "ieee"
    assert limits.peak_tflops("cuda", torch.float32)[0] == 66.9


@pytest.mark.parametrize(
    "legacy, cuda_mode, cpu_mode",
    [("highest", "ieee", "ieee"), ("high", "tf32", "tf32"), ("medium", "tf32", "bf16")],
)
def test_float32_mode_from_the_legacy_setting(monkeypatch, legacy, cuda_mode, cpu_mode):
    """torch before 2.9 has no fp32_precision: the legacy setting decides; "medium" is
    TF32 on CUDA (as torch maps it) and bfloat16 on the CPU, never the same as "high"
    there."""
    monkeypatch.setattr(limits, "_backend_precision", lambda backend: None)
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: legacy)
    assert limits.float32_matmul_mode("cuda") == cuda_mode
    assert limits.float32_matmul_mode("cpu") == cpu_mode


def test_float32_mode_when_torch_refuses_a_global_answer(monkeypatch):
    def refuse():
        raise RuntimeError("mix of the legacy and new APIs")

    monkeypatch.setattr(limits, "_backend_precision", lambda backend: None)
    monkeypatch.setattr(torch, "get_float32_matmul_precision", refuse)
    assert limits.float32_matmul_mode("cuda") == "ieee"


def test_backend_precision_defers_none_to_the_global_setting(monkeypatch):
    backend = SimpleNamespace(fp32_precision="none")
    monkeypatch.setattr(torch.backends, "fp32_precision", "tf32", raising=False)
    assert limits._backend_precision(backend) == "tf32"
    monkeypatch.setattr(torch.backends, "fp32_precision", "none", raising=False)
    assert limits._backend_precision(backend) is None
    assert limits._backend_precision(SimpleNamespace(fp32_precision="ieee")) == "ieee"
    assert limits._backend_precision(SimpleNamespace()) is None


def test_set_float32_matmul_precision_medium_is_tf32_on_cuda_here():
    """What torch itself does (checked on the installed version): "medium" sets CUDA to
    TF32 and the CPU (oneDNN) to bfloat16."""
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium")
        assert limits.float32_matmul_mode("cuda") == "tf32"
        assert limits.float32_matmul_mode("cpu") == "bf16"
        assert limits._precision_key(torch.float32, "cpu") == "bfloat16"
        torch.set_float32_matmul_precision("highest")
        assert limits.float32_matmul_mode("cuda") == "ieee"
        assert limits._precision_key(torch.float32, "cuda") == "float32"
    finally:
        torch.set_float32_matmul_precision(before)


def test_unknown_gpus_are_measured_not_borrowed(fake_gpu, precision, monkeypatch):
    precision("ieee")
    fake_gpu("NVIDIA H100 NVL", 132)
    measured = []
    monkeypatch.setattr(
        limits, "_measured_peak", lambda *key: measured.append(key) or 321.0
    )
    assert limits.peak_tflops("cuda", torch.bfloat16) == (
        321.0,
        "measured (best large matmul)",
    )
    assert measured == [("cuda", torch.bfloat16, "bfloat16")]


def test_measured_peak_is_the_best_sample(monkeypatch):
    limits._measured_peak.cache_clear()
    monkeypatch.setenv("GPUBOOK_PROFILE", "ci")
    monkeypatch.setattr(
        limits,
        "measure",
        lambda fn, *a, **k: SimpleNamespace(times=(0.2, 0.1, 0.4), median=0.2),
    )
    try:
        value, source = limits.peak_tflops("cpu", torch.float32)
    finally:
        limits._measured_peak.cache_clear()
    assert value == 2 * 512**3 / 0.1 / 1e12, "the best (fastest) sample, not the median"
    assert source == limits.MEASURED_SOURCE == "measured (best large matmul)"


def test_peak_tflops_rejects_a_non_dtype():
    with pytest.raises(TypeError, match="dtype"):
        limits.peak_tflops("cpu", "float32")
    with pytest.raises(TypeError, match="name"):
        limits.gpu_variant(None)


# --- profiles
# --------------------------------------------------------------------------------------


def test_profile_from_environment(monkeypatch):
    for name in ("gpu", "cpu", "ci", " CI "):
        monkeypatch.setenv("GPUBOOK_PROFILE", name)
        assert profiles.get_profile() == name.strip().lower()
    monkeypatch.setenv("GPUBOOK_PROFILE", "huge")
    with pytest.raises(ValueError, match="huge"):
        profiles.get_profile()


def test_sizes_pick_the_profiles_value(monkeypatch):
    for name, expected in (("gpu", 1), ("cpu", 2), ("ci", 3)):
        monkeypatch.setenv("GPUBOOK_PROFILE", name)
        assert profiles.sizes(gpu=1, cpu=2, ci=3) == expected
    assert profiles.sizes(gpu=1, cpu=2, ci=3, profile="cpu") == 2, (
        "an explicit profile wins"
    )
    assert profiles.sizes(gpu=[1], cpu=[2], ci=[3], profile="ci") == [3]


@pytest.mark.parametrize(
    "ci, expected",
    [
        ("true", "ci"),
        ("1", "ci"),
        ("yes", "ci"),
        ("false", None),
        ("0", None),
        ("", None),
        ("off", None),
        ("No", None),
    ],
)
def test_profile_defaults(monkeypatch, ci, expected):
    monkeypatch.delenv("GPUBOOK_PROFILE", raising=False)
    monkeypatch.setenv("CI", ci)
    for cuda, device_default in ((True, "gpu"), (False, "cpu")):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        assert profiles.get_profile() == (expected or device_default)


def test_sizes_rejects_unknown_profile():
    with pytest.raises(ValueError, match="laptop"):
        profiles.sizes(gpu=1, cpu=2, ci=3, profile="laptop")


def test_pick_device_and_synchronize(monkeypatch):
    synced = []
    monkeypatch.setattr(
        torch.cuda, "synchronize", lambda device=None: synced.append(device)
    )
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert profiles.pick_device() == torch.device("cpu")
    profiles.synchronize()
    profiles.synchronize("cpu")
    assert synced == [], "nothing to wait for on the CPU"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert profiles.pick_device() == torch.device("cuda")
    profiles.synchronize()
    profiles.synchronize("cuda:1")
    assert synced == [torch.device("cuda"), torch.device("cuda:1")]


def test_peak_lookup_asks_about_the_device_given(monkeypatch, precision):
    precision("ieee")
    asked = []
    monkeypatch.setattr(
        torch.cuda,
        "get_device_name",
        lambda d=None: asked.append(d) or "NVIDIA H100 PCIe",
    )
    monkeypatch.setattr(
        torch.cuda,
        "get_device_properties",
        lambda d=None: asked.append(d) or SimpleNamespace(multi_processor_count=114),
    )
    assert limits.peak_tflops("cuda:1", torch.float16) == (
        756.0,
        "datasheet (H100 PCIe)",
    )
    assert asked == [torch.device("cuda:1")] * 2
    monkeypatch.setattr(limits, "pick_device", lambda: torch.device("cuda:2"))
    assert limits.peak_tflops(dtype=torch.float16)[0] == 756.0
    assert asked[-1] == torch.device("cuda:2"), "no device: the book's device"


def test_peak_of_a_cut_down_part_is_measured(fake_gpu, precision, monkeypatch):
    precision("ieee")
    fake_gpu("NVIDIA H100 80GB HBM3", 114)  # an SXM name with the PCIe card's SM count
    monkeypatch.setattr(limits, "_measured_peak", lambda *key: 1.0)
    assert limits.peak_tflops("cuda", torch.bfloat16) == (1.0, limits.MEASURED_SOURCE)
    monkeypatch.setattr(
        torch.cuda, "get_device_properties", lambda d=None: SimpleNamespace()
    )
    assert limits.peak_tflops("cuda", torch.bfloat16)[1] == "datasheet (H100 SXM)", (
        "no SM count known: the name decides"
    )


def test_cpu_precision_comes_from_onednn_not_cuda(monkeypatch):
    """The CPU's float32 matmul mode is oneDNN's setting, CUDA's is CUDA's."""
    cuda_before = torch.backends.cuda.matmul.fp32_precision
    cpu_before = torch.backends.mkldnn.matmul.fp32_precision
    keys = []
    monkeypatch.setattr(limits, "_measured_peak", lambda *key: keys.append(key) or 1.0)
    try:
        torch.backends.cuda.matmul.fp32_precision = "tf32"
        torch.backends.mkldnn.matmul.fp32_precision = "bf16"
        assert limits.float32_matmul_mode("cpu") == "bf16"
        assert (
            limits.float32_matmul_mode() == limits.float32_matmul_mode("cuda") == "tf32"
        )
        assert limits._precision_key(torch.float32) == "tf32", (
            "CUDA's setting by default"
        )
        assert limits._precision_key(torch.float32, "cpu") == "bfloat16"
        assert limits._precision_key(torch.float64, "cpu") == "float64"
        limits.peak_tflops("cpu", torch.float32)
        assert keys == [("cpu", torch.float32, "bfloat16")]
    finally:
        torch.backends.cuda.matmul.fp32_precision = cuda_before
        torch.backends.mkldnn.matmul.fp32_precision = cpu_before


def test_unknown_legacy_precision_is_ieee(monkeypatch):
    monkeypatch.setattr(limits, "_backend_precision", lambda backend: None)
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: "something new")
    assert limits.float32_matmul_mode("cuda") == "ieee"
    assert limits.float32_matmul_mode("cpu") == "ieee"


def test_backend_precision_without_a_global_setting(monkeypatch):
    # torch before 2.9: no global fp32_precision at all
    monkeypatch.setattr(limits, "torch", SimpleNamespace(backends=SimpleNamespace()))
    assert limits._backend_precision(SimpleNamespace(fp32_precision="none")) is None
    assert limits._backend_precision(SimpleNamespace(fp32_precision="tf32")) == "tf32"


def test_type_errors_name_the_type():
    with pytest.raises(TypeError, match="got str"):
        limits.peak_tflops("cpu", "float32")
    with pytest.raises(TypeError, match="got NoneType"):
        limits.gpu_variant(None)
    with pytest.raises(TypeError, match="got int"):
        limits.fraction(1.0, 2.0, source=1)

"""Unit tests for gpubook.limits and gpubook.profiles."""

import pytest
import torch

from gpubook import limits, profiles


def test_bandwidth_and_flops_arithmetic():
    assert limits.bandwidth_gbs(2e9, 1.0) == pytest.approx(2.0)
    assert limits.tflops(4e12, 2.0) == pytest.approx(2.0)
    assert limits.matmul_flops(2, 3, 4) == 48
    assert limits.fraction(50.0, 200.0) == pytest.approx(0.25)


@pytest.mark.parametrize(
    "call",
    [
        lambda: limits.bandwidth_gbs(0, 1.0),
        lambda: limits.bandwidth_gbs(1, 0),
        lambda: limits.tflops(-1, 1.0),
        lambda: limits.fraction(1.0, 0),
        lambda: limits.matmul_flops(0, 1, 1),
        lambda: limits.copy_bandwidth("cpu", nbytes=10),
    ],
)
def test_limits_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_copy_bandwidth_cpu_is_plausible():
    gbs = limits.copy_bandwidth("cpu", nbytes=2**24)
    assert 0.1 < gbs < 10_000


def test_peak_tflops_measured_on_cpu():
    value, source = limits.peak_tflops("cpu", torch.float32)
    assert source == "measured" and value > 0
    with pytest.raises(TypeError, match="dtype"):
        limits.peak_tflops("cpu", "float32")


def test_profile_from_environment(monkeypatch):
    monkeypatch.setenv("GPUBOOK_PROFILE", "gpu")
    assert profiles.get_profile() == "gpu"
    assert profiles.sizes(gpu=1, cpu=2, ci=3) == 1
    monkeypatch.setenv("GPUBOOK_PROFILE", "huge")
    with pytest.raises(ValueError, match="huge"):
        profiles.get_profile()


def test_profile_defaults(monkeypatch):
    monkeypatch.delenv("GPUBOOK_PROFILE", raising=False)
    monkeypatch.setenv("CI", "true")
    assert profiles.get_profile() == "ci"
    monkeypatch.setenv("CI", "false")
    assert profiles.get_profile() == ("gpu" if torch.cuda.is_available() else "cpu")


def test_sizes_rejects_unknown_profile():
    with pytest.raises(ValueError, match="profile"):
        profiles.sizes(gpu=1, cpu=2, ci=3, profile="laptop")

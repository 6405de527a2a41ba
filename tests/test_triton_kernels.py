"""Tests for gpubook.triton_kernels (chapter 8's helpers), on the CPU."""

from __future__ import annotations

import builtins
import sys
import types

import pytest

from gpubook import triton_kernels as tk
from gpubook.timing import Timing


def _hide_triton(monkeypatch):
    """Make ``import triton`` fail, as on a PyTorch build without Triton."""
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "triton" or name.startswith("triton."):
            raise ImportError("No module named 'triton'")
        return real_import(name, *args, **kwargs)

    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(builtins, "__import__", fake_import)


def test_load_without_triton_gives_stand_ins(monkeypatch):
    _hide_triton(monkeypatch)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    triton, tl, available = tk.load(interpret=True)
    assert available is False

    @triton.jit
    def kernel(x_ptr, n, BLOCK: tl.constexpr):  # annotations still evaluate
        pass

    tuned = triton.autotune(
        configs=[triton.Config({"BLOCK": 4}, num_warps=4)], key=["n"]
    )(kernel)
    assert triton.cdiv(10, 4) == 3 and triton.next_power_of_2(1000) == 1024
    with pytest.raises(tk.MissingTritonError, match="not installed"):
        kernel[(1,)](None, 1, BLOCK=4)
    with pytest.raises(tk.MissingTritonError):
        tuned[(1,)](None, 1)


def test_load_refuses_interpreter_after_triton_was_imported(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setitem(sys.modules, "triton", types.ModuleType("triton"))
    with pytest.raises(RuntimeError, match="before"):
        tk.load(interpret=True)


def test_load_checks_its_argument():
    with pytest.raises(TypeError, match="interpret"):
        tk.load(interpret="yes")


def test_generated_kernels_extracts_the_triton_source():
    code = (
        "triton_poi_fused_0 = async_compile.triton('triton_poi_fused_0', '''\n"
        "import triton\nimport triton.language as tl\n\n"
        "@triton_heuristics.pointwise(size_hints={'x': 1024})\n@triton.jit\n"
        "def triton_poi_fused_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
        "    xoffset = tl.program_id(0) * XBLOCK\n'''"
        ", device_str='cuda')\nother = '''not a kernel'''\n"
    )
    kernels = tk.generated_kernels(code)
    assert len(kernels) == 1
    assert kernels[0].startswith("@triton.jit\ndef triton_poi_fused_0(")
    assert "heuristics" not in kernels[0] and kernels[0].endswith("* XBLOCK")
    assert tk.generated_kernels("extern void kernel() {}") == []
    assert tk.show_generated(["cpp", code]) == kernels[0]
    assert tk.show_generated(["cpp"]).startswith("(no Triton kernel")
    with pytest.raises(TypeError):
        tk.generated_kernels(None)


def test_short_error_keeps_reason_and_line():
    message = (
        "at 2:20:\ndef k(out_ptr):\n    tl.store(out_ptr + tl.arange(0, 1000), 1.0)\n"
        '                    ^\nValueError("arange\'s range must be a power of 2")'
    )
    text = tk.short_error(RuntimeError(message))
    assert text.startswith(
        'RuntimeError: ValueError("arange\'s range must be a power of 2")'
    )
    assert "at: tl.store(out_ptr + tl.arange(0, 1000), 1.0)" in text
    assert tk.short_error(ValueError("x" * 200), width=40).endswith("...")
    with pytest.raises(TypeError):
        tk.short_error("not an exception")


def test_load_bytes_and_widest_load():
    assert tk.load_bytes("ld.global.v4.b32") == 16
    assert tk.load_bytes("ld.global.v2.b32") == 8
    assert tk.load_bytes("ld.global.b8") == 1
    ptx = (
        "@%p1 ld.global.v2.b32 { %r1, %r2 }, [ %rd1 + 0 ];\nld.global.b8 %rs1, [%rd2];"
    )
    compiled = types.SimpleNamespace(asm={"ptx": ptx})
    assert tk.load_instructions(compiled) == {"ld.global.v2.b32": 1, "ld.global.b8": 1}
    assert tk.widest_load(compiled) == 8
    assert tk.describe_loads(compiled).startswith("widest load 8 bytes per thread; ld.")
    assert tk.describe_loads(None).startswith("(no load instructions")
    with pytest.raises(ValueError, match="PTX"):
        tk.load_instructions(object())
    with pytest.raises(ValueError):
        tk.load_bytes("ld.global")


class _Config:
    def __init__(self, rows, warps):
        self.kwargs, self.num_warps, self.num_stages = {"BLOCK_ROWS": rows}, warps, 3


def test_config_helpers():
    fast, slow = _Config(8, 8), _Config(32, 4)
    tuner = types.SimpleNamespace(configs_timings={slow: [0.2, 0.19, 0.21], fast: 0.1})
    assert [c for c, _ in tk.config_timings(tuner)] == [fast, slow]
    assert tk.config_spread(tuner) == pytest.approx(2.0)
    assert tk.describe_config(fast) == "BLOCK_ROWS=8, 8 warps, 3 stages"
    table = tk.config_table(tuner, nbytes=1e9, limit_gbs=20_000.0)
    markdown = table._repr_markdown_()
    assert "| BLOCK_ROWS=8, 8 warps, 3 stages | 100 µs | 10,000 | 50% |" in markdown
    with pytest.raises(ValueError, match="no timings"):
        tk.config_timings(types.SimpleNamespace())
    assert tk.config_spread(types.SimpleNamespace()) != tk.config_spread(tuner)  # nan
    assert "no timings" in tk.config_table(types.SimpleNamespace())._repr_markdown_()
    with pytest.raises(TypeError):
        tk.describe_config("BLOCK=4")


def test_near_best_keeps_the_tie_with_the_fastest():
    a, b, c, d = _Config(8, 8), _Config(16, 4), _Config(32, 4), _Config(4, 8)
    tuner = types.SimpleNamespace(
        configs_timings={c: 0.103, a: [0.1, 0.09, 0.11], d: float("inf"), b: 0.1019}
    )
    assert tk.near_best(tuner) == [a, b]  # 2% by default: 0.1019 in, 0.103 out
    assert tk.near_best(tuner, within=0.05) == [a, b, c]  # the failed one never
    assert tk.near_best(tuner, within=0) == [a]
    assert tk.near_best(tuner, within=float("inf")) == [a, b, c]
    zero = types.SimpleNamespace(configs_timings={a: 0.0, b: 0.1})
    assert tk.near_best(zero, within=float("inf")) == [a, b]  # not 0 * inf
    with pytest.raises(ValueError, match="fraction"):
        tk.near_best(tuner, within=-0.1)
    with pytest.raises(ValueError, match="no timings"):
        tk.near_best(types.SimpleNamespace())
    failed = types.SimpleNamespace(configs_timings={a: float("inf")})
    with pytest.raises(ValueError, match="failed"):
        tk.near_best(failed)


def test_bench_needs_a_gpu():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(RuntimeError):
        tk.bench(lambda: None)


def test_bandwidth_plot_draws_bands():
    timings = {"Triton kernel": [Timing(times=(1e-3, 1.1e-3, 1.2e-3))] * 2}
    fig = tk.bandwidth_plot(
        [10, 100], timings, [1e9, 2e9], "t", 3000.0, "n", device="cpu"
    )
    assert fig.axes[0].get_ylabel().startswith("achieved GB/s")
    with pytest.raises(ValueError):
        tk.bandwidth_plot([10], timings, [1e9], "t", 3000.0, "n", device="cpu")


def test_rate_gives_tflops_with_spread():
    centre, low, high = tk.rate(2e12, Timing(times=(1.0, 2.0, 4.0)))
    assert (centre, low <= centre <= high) == (1.0, True)
    with pytest.raises(TypeError):
        tk.rate(1.0, 0.5)
    with pytest.raises(ValueError):
        tk.rate(0, Timing(times=(1.0,)))


def test_run_interpreted_runs_a_kernel_in_a_fresh_process():
    pytest.importorskip("triton")
    script = (
        "import torch, triton, triton.language as tl\n"
        "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n"
        "    offsets = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offsets, offsets)\n"
        "x = torch.zeros(4, dtype=torch.int32)\nk[(1,)](x, BLOCK=4)\n"
        "print(x.tolist())\n"
    )
    assert tk.run_interpreted(script).splitlines()[-1] == "[0, 1, 2, 3]"
    assert tk.run_interpreted("raise SystemExit(3)").endswith("exit status 3")
    with pytest.raises(ValueError):
        tk.run_interpreted("  ")

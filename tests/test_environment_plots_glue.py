"""Unit tests for gpubook.environment, gpubook.plots and gpubook.glue."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")

from gpubook import environment, plots  # noqa: E402


def test_report_prints_facts_and_never_raises(capsys, monkeypatch):
    facts = environment.report()
    out = capsys.readouterr().out
    for key in ("torch", "numpy", "device", "profile", "cxx_compiler"):
        assert key in facts and key in out
    monkeypatch.setattr(environment, "cxx_compiler", lambda: None)
    environment.report()
    assert "No C++ compiler found" in capsys.readouterr().out


def test_quiet_known_warnings_silences_the_profilers_log(monkeypatch):
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)
    environment.quiet_known_warnings()
    assert environment.os.environ["KINETO_LOG_LEVEL"] == "6"
    monkeypatch.setenv("KINETO_LOG_LEVEL", "2")
    environment.quiet_known_warnings()
    assert environment.os.environ["KINETO_LOG_LEVEL"] == "2"


def test_quiet_known_warnings_drops_the_profiler_cycle_warning():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        # re-installs its filters in front of "default"
        environment.quiet_known_warnings()
        warnings.warn(
            "Warning: Profiler clears events at the end of each cycle.", UserWarning
        )
    assert not caught


@pytest.mark.parametrize(
    ("message", "category"),
    [
        ("TypedStorage is deprecated. It will be removed in the future", UserWarning),
        ("`isinstance(treespec, LeafSpec)` is deprecated, use ...", FutureWarning),
        (
            "TensorFloat32 tensor cores for float32 matrix multiplication available "
            "but not enabled. Consider setting ...",
            UserWarning,
        ),
    ],
)
def test_quiet_known_warnings_drops_torchs_internal_notices(message, category):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        environment.quiet_known_warnings()
        warnings.warn(message, category)
        warnings.warn("TypedStorage is fine: an unrelated warning", UserWarning)
    assert [str(w.message) for w in caught] == [
        "TypedStorage is fine: an unrelated warning"
    ]


def test_caption_names_device_and_torch():
    text = plots.caption("cpu", "float32")
    assert "CPU" in text and "float32" in text and "torch" in text


def test_plots_build_and_validate():
    fig = plots.speedup_bars(["eager", "compiled"], [1.0, 3.0], "demo")
    assert "torch" in fig.axes[0].get_title(loc="left")
    fig.canvas.draw()
    assert {"1x", "2x"} <= {label.get_text() for label in fig.axes[0].get_xticklabels()}
    fig = plots.versus_size(
        [1, 10], {"eager": [1.0, 2.0]}, "demo", "seconds", limit=3.0, limit_label="copy"
    )
    assert fig.axes[0].get_xscale() == "log"
    fig = plots.cumulative_time(1.0, 0.5, 10.0, "demo")
    assert fig.axes[0].get_xlabel() == "number of calls"
    with pytest.raises(ValueError):
        plots.speedup_bars(["a"], [1.0, 2.0], "demo")
    with pytest.raises(ValueError):
        plots.speedup_bars(["a"], [math.nan], "demo")
    with pytest.raises(ValueError, match="series"):
        plots.versus_size([1, 10], {"eager": [1.0]}, "demo", "s")
    assert (
        plots.color_for("compiled (reduce-overhead)") == plots.COLORS["reduce-overhead"]
    )
    assert plots.color_for("compiled NumPy, CPU") == plots.COLORS["compiled"]
    assert plots.color_for("pure Python") == plots.COLORS["python"]
    assert plots.color_for("NumPy (float64)") == plots.COLORS["numpy"]


# --- environment: facts for provenance
# ----------------------------------------------------------


def test_cpu_physical_cores_counts_distinct_socket_core_pairs(tmp_path, monkeypatch):
    import builtins

    cpuinfo = "".join(
        f"processor\t: {i}\nmodel name\t: Xeon\n"
        f"physical id\t: {i // 4}\ncore id\t\t: {i % 2}\n\n"
        for i in range(8)
    )  # 8 logical CPUs: 2 sockets x 2 cores x 2 threads
    path = tmp_path / "cpuinfo"
    path.write_text(cpuinfo.rstrip("\n"))  # no blank line after the last block
    real_open = builtins.open
    monkeypatch.setattr(
        builtins,
        "open",
        lambda f, *a, **k: real_open(path if f == "/proc/cpuinfo" else f, *a, **k),
    )
    assert environment.cpu_physical_cores() == 4
    path.write_text("processor\t: 0\n\n")
    assert environment.cpu_physical_cores() is None

    def unreadable(f, *a, **k):
        raise OSError("no /proc")

    monkeypatch.setattr(builtins, "open", unreadable)
    assert environment.cpu_physical_cores() is None


def _fake_pynvml(fail=(), init_fails=False):
    from types import SimpleNamespace

    shut = []

    def answer(key, value):
        def query(*args):
            if key in fail:
                raise RuntimeError(f"NVML: {key} not supported")
            return value

        return query

    def init():
        if init_fails:
            raise RuntimeError("NVML: driver not loaded")

    module = SimpleNamespace(
        NVML_CLOCK_SM=0,
        NVML_CLOCK_MEM=2,
        nvmlInit=init,
        nvmlShutdown=lambda: shut.append(True),
        nvmlDeviceGetHandleByIndex=lambda index: ("handle", index),
        nvmlDeviceGetClockInfo=lambda handle, kind: answer(
            "clock", {0: 1980, 2: 2619}[kind] + 10 * handle[1]
        )(),
        nvmlDeviceGetMaxClockInfo=lambda handle, kind: (
            {0: 1980, 2: 2619}[kind] + 1 + 10 * handle[1]
        ),
        nvmlDeviceGetPowerManagementLimit=lambda handle: answer(
            "power", 700_000 + handle[1]
        )(),
    )
    return module, shut


def test_gpu_clocks_through_nvml(monkeypatch):
    import sys

    module, shut = _fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", module)
    assert environment.gpu_clocks(0) == {
        "sm_clock_mhz": 1980,
        "memory_clock_mhz": 2619,
        "max_sm_clock_mhz": 1981,
        "max_memory_clock_mhz": 2620,
        "power_limit_w": 700.0,
    }
    assert shut == [True], "NVML is shut down again"
    assert environment.gpu_clocks(1) == {
        "sm_clock_mhz": 1990,
        "memory_clock_mhz": 2629,
        "max_sm_clock_mhz": 1991,
        "max_memory_clock_mhz": 2630,
        "power_limit_w": 700.001,
    }, "the GPU asked for, not the first"
    module, _ = _fake_pynvml(fail=("power",))
    monkeypatch.setitem(sys.modules, "pynvml", module)
    assert (
        "power_limit_w" not in environment.gpu_clocks(0)
        and environment.gpu_clocks(0)["sm_clock_mhz"] == 1980
    )
    module, _ = _fake_pynvml(fail=("clock",))
    monkeypatch.setitem(sys.modules, "pynvml", module)
    assert environment.gpu_clocks(0) == {
        "max_sm_clock_mhz": 1981,
        "max_memory_clock_mhz": 2620,
        "power_limit_w": 700.0,
    }, "one unreadable fact does not hide the others"


def test_gpu_clocks_never_fail(monkeypatch):
    import sys

    module, _ = _fake_pynvml(init_fails=True)
    monkeypatch.setitem(sys.modules, "pynvml", module)
    assert environment.gpu_clocks() == {}
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed
    assert environment.gpu_clocks() == {}


def test_collect_hardware_facts(monkeypatch):
    monkeypatch.setattr(environment, "cpu_physical_cores", lambda: 7)
    monkeypatch.setattr(environment, "gpu_clocks", lambda index=0: {"sm_clock_mhz": 1})
    plain = environment.collect()
    assert "cpu_physical_cores" not in plain and "sm_clock_mhz" not in plain
    facts = environment.collect(hardware=True)
    assert facts["cpu_physical_cores"] == 7
    assert ("sm_clock_mhz" in facts) == (facts["device"] != "cpu"), (
        "GPU clocks only with a GPU"
    )
    assert facts["cpu_count"] == environment.os.cpu_count()


def test_notes_for_what_is_missing():
    facts = {
        "device": "cpu",
        "profile": "ci",
        "cxx_compiler": "found",
        "triton": "3.6.0",
    }
    [note] = environment._notes(facts)
    assert note.startswith("No CUDA GPU found") and "'ci' profile" in note
    facts = {
        "device": "cuda",
        "profile": "gpu",
        "cxx_compiler": "missing",
        "triton": "not installed",
    }
    notes = environment._notes(facts)
    assert (
        len(notes) == 2
        and notes[0].startswith("No C++ compiler")
        and notes[1].startswith("Triton is not")
    )
    assert (
        environment._notes({**facts, "cxx_compiler": "found", "triton": "3.6.0"}) == []
    )


def test_can_compile_needs_triton_on_gpu_and_a_compiler_on_cpu(monkeypatch):
    monkeypatch.setattr(environment, "has_triton", lambda: False)
    monkeypatch.setattr(environment, "cxx_compiler", lambda: "/usr/bin/g++")
    assert (
        environment.can_compile("cpu") is True
        and environment.can_compile("cuda") is False
    )
    monkeypatch.setattr(environment, "has_triton", lambda: True)
    monkeypatch.setattr(environment, "cxx_compiler", lambda: None)
    assert (
        environment.can_compile("cpu") is False
        and environment.can_compile("cuda") is True
    )


def test_cxx_compiler_prefers_cxx(monkeypatch):
    monkeypatch.setenv("CXX", "my-cxx")
    found = {"my-cxx": "/opt/my-cxx", "g++": "/usr/bin/g++"}
    monkeypatch.setattr(environment.shutil, "which", lambda name: found.get(name))
    assert environment.cxx_compiler() == "/opt/my-cxx"
    monkeypatch.delenv("CXX")
    assert environment.cxx_compiler() == "/usr/bin/g++"
    monkeypatch.setattr(environment.shutil, "which", lambda name: None)
    assert environment.cxx_compiler() is None


def test_a_tests_changes_are_undone_part_1():
    """Together with part 2: a helper's process changes do not leak into the next
    test."""
    import os
    import warnings

    environment.quiet_known_warnings()
    os.environ["GPUBOOK_LEAK_CHECK"] = "1"
    warnings.filterwarnings("ignore", message="gpubook leak check")


def test_a_tests_changes_are_undone_part_2():
    import os
    import warnings

    assert "GPUBOOK_LEAK_CHECK" not in os.environ
    assert not any(
        f[1] is not None and f[1].pattern == "gpubook leak check"
        for f in warnings.filters
    )


def test_no_cuda_runtime_filter_drops_only_that_message():
    import logging

    drop = environment._NoCudaRuntimeFilter()

    def record(message):
        return logging.LogRecord(
            "torch", logging.WARNING, __file__, 1, message, None, None
        )

    assert (
        drop.filter(record("No CUDA runtime is found, using CUDA_HOME='/x'")) is False
    )
    assert drop.filter(record("no cuda runtime is found")) is True
    assert drop.filter(record("something else")) is True


def test_has_triton(monkeypatch):
    import sys
    from types import ModuleType

    monkeypatch.setitem(sys.modules, "triton", None)
    assert environment.has_triton() is False
    monkeypatch.setitem(sys.modules, "triton", ModuleType("triton"))
    assert environment.has_triton() is True


def test_can_compile_default_device(monkeypatch):
    import torch

    monkeypatch.setattr(environment, "pick_device", lambda: torch.device("cuda"))
    monkeypatch.setattr(environment, "has_triton", lambda: True)
    monkeypatch.setattr(environment, "cxx_compiler", lambda: None)
    assert environment.can_compile() is True
    monkeypatch.setattr(environment, "pick_device", lambda: torch.device("cpu"))
    assert environment.can_compile() is False


@pytest.mark.parametrize(
    "exists, no_writes, state",
    [
        (True, True, "present"),
        (True, False, "present"),
        (False, False, "written at first import"),
        (False, True, "missing"),
    ],
)
def test_bytecode_state(monkeypatch, tmp_path, exists, no_writes, state):
    import importlib.util
    from types import SimpleNamespace

    cached = tmp_path / "compile_fx.pyc"
    if exists:
        cached.write_bytes(b"")
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: SimpleNamespace(cached=str(cached))
    )
    monkeypatch.setattr(
        environment,
        "sys",
        SimpleNamespace(flags=SimpleNamespace(dont_write_bytecode=no_writes)),
    )
    assert environment.bytecode_state() == state


def test_bytecode_state_without_torchs_compiler(monkeypatch):
    import importlib.util

    def missing(name):
        raise ImportError(name)

    monkeypatch.setattr(importlib.util, "find_spec", missing)
    assert environment.bytecode_state() in ("missing", "written at first import")

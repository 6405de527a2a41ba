"""Unit tests for gpubook.profiling: the host/device split and traces, on scripted trace
events (the GPU path) and on a real CPU profile."""

import pytest
import torch

from gpubook import profiling
from gpubook.profiling import Split, host_device_split, trace


def _event(cat, name, ts, dur, tid=1, **args):
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "ts": ts,
        "dur": dur,
        "tid": tid,
        "args": args,
    }


GPU_EVENTS = [
    _event("user_annotation", "gpubook call 0", 0, 100),
    _event("cpu_op", "aten::add", 5, 20),
    _event("cuda_runtime", "cudaLaunchKernel", 10, 5),
    _event("kernel", "add_kernel", 30, 10, tid=7, stream=7),
    _event(
        "kernel", "mul_kernel", 35, 10, tid=7, stream=7
    ),  # overlaps the first by 5 µs
    _event("gpu_memcpy", "Memcpy DtoD", 60, 10, tid=7, stream=7),
    _event("cuda_runtime", "cudaLaunchKernel", 40, 5),
    _event("cuda_runtime", "cudaDeviceSynchronize", 50, 40),
    _event("user_annotation", "gpubook call 1", 200, 100),
    _event("kernel", "add_kernel", 230, 10, tid=7, stream=7),
    _event("cuda_runtime", "cuLaunchKernel", 210, 5),
]


def test_split_counts_gpu_busy_time_once_and_launches(monkeypatch):
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: GPU_EVENTS)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    import gpubook.timing as timing

    monkeypatch.setattr(
        timing,
        "latency",
        lambda *a, **k: timing.Timing(times=(100e-6,) * 10, mode="latency"),
    )
    split = host_device_split(lambda: None, calls=2, label="x")
    # union of [30,45] and [60,70] in call 0 (25 µs) plus [230,240] (10 µs), over 2
    # calls
    assert split.gpu == pytest.approx(17.5e-6)
    assert split.wall == pytest.approx(100e-6)
    assert split.host == pytest.approx(82.5e-6)
    assert split.busy == pytest.approx(0.175)
    assert split.bound == "host-bound"
    assert split.kernels_per_call == 1.5
    assert split.launches_per_call == 1.5
    assert split.kernel_names[0][0] == "add_kernel"
    assert split.kernel_names[0][2] == 1.0  # one add_kernel per call
    assert "host-bound" in str(split) and "<table" in split._repr_html_()


@pytest.mark.parametrize(
    "busy, bound", [(0.2, "host-bound"), (0.6, "mixed"), (0.9, "GPU-bound")]
)
def test_bound_thresholds(busy, bound):
    assert (
        Split(wall=1.0, gpu=busy, kernels_per_call=1, launches_per_call=1).bound
        == bound
    )
    assert (
        Split(wall=1.0, gpu=None, kernels_per_call=0, launches_per_call=0).bound
        == "CPU only"
    )


def test_trace_shifts_spans_to_the_first_call(monkeypatch):
    events = [dict(e, ts=e["ts"] + 1000) for e in GPU_EVENTS]
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: events)
    result = trace(lambda: None, calls=2)
    assert result.calls[0].start_us == 0 and len(result.calls) == 2
    kinds = {span.kind for span in result.cpu}
    assert {"launch", "sync", "op"} <= kinds
    assert [s.kind for s in result.gpu].count("kernel") == 3
    assert result.gpu[0].row == "stream 7"
    assert result.end_us == 300


def test_real_cpu_profile():
    x = torch.randn(64, 64)
    split = host_device_split(torch.mm, x, x, calls=3, warmup=1)
    if not torch.cuda.is_available():
        assert split.gpu is None and split.bound == "CPU only"
        assert split.host == split.wall > 0
    result = trace(torch.mm, x, x, calls=2, warmup=1)
    assert len(result.calls) == 2
    assert any("mm" in span.name for span in result.cpu)


def test_bad_input():
    with pytest.raises(TypeError, match="callable"):
        trace(3)
    with pytest.raises(ValueError, match="calls"):
        host_device_split(torch.ones, 2, calls=0)


def test_profile_rounds_calls_each_function_in_turn_inside_numbered_marks():
    calls = []

    def first(x):
        calls.append("first")
        return x + 1

    def second(x):
        calls.append("second")
        return x * 2

    events = profiling._profile_rounds([first, second], 2, 1, (torch.ones(4),), {})
    marks = sorted(
        (e for e in events if str(e.get("name", "")).startswith(profiling._CALL_MARK)),
        key=lambda e: float(e["ts"]),
    )
    assert [e["name"] for e in marks] == [
        f"{profiling._CALL_MARK} {i}" for i in range(4)
    ]
    # one warm-up round, then two profiled rounds: call i is fns[i % 2]
    assert calls == ["first", "second"] * 3


def test_launch_seconds_times_calls_back_to_back_after_one_untimed_call():
    calls = []
    seconds = profiling.launch_seconds(lambda x: calls.append(x), 7, calls=5)
    assert calls == [7] * 6  # one call first, then five timed ones
    assert 0 < seconds < 1


def test_launch_seconds_bad_input():
    with pytest.raises(TypeError):
        profiling.launch_seconds(42)
    with pytest.raises(ValueError):
        profiling.launch_seconds(lambda: None, calls=0)

"""gpubook.profiling, relation by relation (tests written against the survivors of a
mutation run, CONTRIBUTING.md "Mutation testing"): the profiler and torch.cuda are
faked, so every count, time and ordering is exact."""

import json

import pytest
import torch

from gpubook import environment, profiling
from gpubook import timing as timing_module
from gpubook.profiling import (
    Span,
    Split,
    SplitTable,
    Trace,
    host_device_split,
    profile_events,
    split_table,
    trace,
)


def _event(cat, name, ts, dur, tid=1, ph="X", **args):
    event = {"ph": ph, "cat": cat, "name": name, "ts": ts, "dur": dur, "tid": tid}
    if args:
        event["args"] = args
    return event


class FakeProfiler:
    """Stands in for torch.profiler: records what happens and exports ``payload``."""

    def __init__(self, log, payload):
        self.log, self.payload, self.activities = log, payload, None

    def profile(self, activities):
        self.activities = list(activities)
        return self

    def __enter__(self):
        self.log.append("start")
        return self

    def __exit__(self, *exc):
        self.log.append("stop")
        return False

    def record_function(self, name):
        log = self.log

        class Mark:
            def __enter__(self):
                log.append(f"mark {name}")

            def __exit__(self, *exc):
                log.append("end mark")
                return False

        return Mark()

    def export_chrome_trace(self, path):
        self.exported = path
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.payload, handle)


@pytest.fixture
def fake_profiler(monkeypatch):
    def install(payload, cuda=False):
        log = []
        fake = FakeProfiler(log, payload)
        monkeypatch.setattr(torch.profiler, "profile", fake.profile)
        monkeypatch.setattr(torch.profiler, "record_function", fake.record_function)
        monkeypatch.setattr(
            environment, "quiet_known_warnings", lambda: log.append("quiet")
        )
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        monkeypatch.setattr(torch.cuda, "is_initialized", lambda: cuda)
        monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: log.append("sync"))
        return fake, log

    return install


def test_profile_events_warms_up_then_marks_each_profiled_call(fake_profiler):
    events = [_event("cpu_op", "aten::mm", 1, 2)]
    fake, log = fake_profiler({"traceEvents": events})

    def fn(a, b=0):
        log.append(f"call {a} {b}")

    result = profile_events(fn, 5, calls=2, warmup=3, b=7)
    assert result == events
    assert log == [
        "quiet",
        "call 5 7",
        "call 5 7",
        "call 5 7",
        "start",
        "mark gpubook call 0",
        "call 5 7",
        "end mark",
        "mark gpubook call 1",
        "call 5 7",
        "end mark",
        "stop",
    ]
    assert fake.activities == [torch.profiler.ProfilerActivity.CPU]


def test_profile_events_defaults_three_warm_up_and_three_profiled_calls(fake_profiler):
    _, log = fake_profiler([])
    profile_events(lambda: log.append("call"))
    assert log.index("start") == 1 + 3 and log.count("call") == 6
    assert log.count("end mark") == 3


def test_profile_events_exports_into_a_folder_it_removes(
    fake_profiler, tmp_path, monkeypatch
):
    import os

    monkeypatch.chdir(tmp_path)
    fake, _ = fake_profiler({"traceEvents": []})
    assert profile_events(lambda: None, calls=1, warmup=0) == []
    folder = os.path.dirname(fake.exported)
    assert os.path.isabs(fake.exported) and not os.path.exists(folder)
    assert list(tmp_path.iterdir()) == []  # nothing left in the working folder


def test_profile_events_synchronises_on_cuda(fake_profiler):
    fake, log = fake_profiler([_event("kernel", "k", 0, 1)], cuda=True)
    profile_events(lambda: log.append("call"), calls=2, warmup=1)
    assert log == [
        "quiet",
        "call",
        "sync",
        "start",
        "mark gpubook call 0",
        "call",
        "end mark",
        "sync",
        "mark gpubook call 1",
        "call",
        "end mark",
        "sync",
        "stop",
    ]
    assert fake.activities == [
        torch.profiler.ProfilerActivity.CPU,
        torch.profiler.ProfilerActivity.CUDA,
    ]


def test_profile_events_needs_cuda_initialised_not_just_available(
    fake_profiler, monkeypatch
):
    fake, log = fake_profiler([], cuda=True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    profile_events(lambda: None, calls=1, warmup=1)
    assert "sync" not in log
    assert fake.activities == [torch.profiler.ProfilerActivity.CPU]


def test_profile_events_keeps_only_complete_timed_events(fake_profiler):
    kept = _event("cpu_op", "a", 1, 2)
    payload = [
        kept,
        _event("cpu_op", "instant", 1, 2, ph="i"),
        {"ph": "X", "cat": "cpu_op", "name": "no dur", "ts": 1},
        {"ph": "X", "cat": "cpu_op", "name": "no ts", "dur": 1},
        {"cat": "cpu_op", "name": "no ph", "ts": 1, "dur": 1},
    ]
    fake_profiler(payload)  # a bare list of events (older exports)
    assert profile_events(lambda: None, calls=1, warmup=0) == [kept]


def test_profile_events_checks_its_arguments():
    with pytest.raises(TypeError, match="fn must be callable, got int"):
        profile_events(3)
    with pytest.raises(ValueError, match="^calls must"):
        profile_events(lambda: None, calls=0)
    with pytest.raises(ValueError, match="^warmup must"):
        profile_events(lambda: None, warmup=-1)


def test_spans_sorts_events_into_rows_and_kinds():
    events = [
        _event("kernel", "k", 10, 5, tid=3, stream=9),
        _event("gpu_memcpy", "copy", 20, 2, tid=4),
        {"ph": "X", "cat": "gpu_memset", "name": "fill", "ts": 30, "dur": 1},
        _event("user_annotation", "gpubook call 0", 0, 50, tid=2),
        _event("user_annotation", "someone else's mark", 0, 50, tid=2),
        _event("cuda_runtime", "cudaLaunchKernel", 1, 1),
        _event("cuda_driver", "cuGraphLaunch", 2, 1),
        _event("cuda_runtime", "cudaMemcpyAsync", 3, 1),
        _event("cuda_runtime", "cudaMemsetAsync", 4, 1),
        _event("cuda_runtime", "cudaLaunchCooperativeKernel", 5, 1),
        _event("cuda_runtime", "cudaStreamSynchronize", 6, 1),
        _event("cuda_runtime", "cudaGetDevice", 7, 1),
        _event("cpu_op", "aten::add", 8, 1),
        _event("python_function", "forward", 9, 1),
        _event("ac2g", "flow", 9, 1),
    ]
    cpu, gpu, calls = profiling._spans(events)
    assert gpu == [
        Span("k", 10.0, 15.0, "stream 9", "kernel"),
        Span("copy", 20.0, 22.0, "stream 4", "memcpy"),
        Span("fill", 30.0, 31.0, "stream ?", "memset"),
    ]
    assert calls == [Span("gpubook call 0", 0.0, 50.0, "thread 2", "call")]
    assert [(s.name, s.kind) for s in cpu] == [
        ("cudaLaunchKernel", "launch"),
        ("cuGraphLaunch", "launch"),
        ("cudaMemcpyAsync", "launch"),
        ("cudaMemsetAsync", "launch"),
        ("cudaLaunchCooperativeKernel", "launch"),
        ("cudaStreamSynchronize", "sync"),
        ("cudaGetDevice", "runtime"),
        ("aten::add", "op"),
        ("forward", "op"),
    ]
    assert {s.row for s in cpu} == {"thread 1"}
    assert cpu[0].start_us == 1.0 and cpu[0].end_us == 2.0
    no_tid = {"ph": "X", "cat": "cuda_runtime", "name": "cudaFree", "ts": 0, "dur": 1}
    marks = {"ph": "X", "cat": "user_annotation", "name": "gpubook call 1"}
    assert profiling._spans([no_tid])[0][0].row == "thread ?"
    nameless = {"ph": "X", "cat": "kernel", "ts": 0, "dur": 1}
    assert profiling._spans([nameless])[1][0].name == ""
    assert profiling._spans([dict(marks, ts=0, dur=1)])[2][0].row == "thread ?"
    op = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 1}
    assert profiling._spans([op])[0][0].row == "thread ?"


def test_span_and_trace_lengths():
    assert Span("a", 2.5, 7.0, "r", "op").duration_us == 4.5
    spans = (Span("a", 0.0, 3.0, "r", "op"),)
    late = (Span("k", 1.0, 9.0, "s", "kernel"),)
    assert Trace(cpu=spans, gpu=late, calls=()).end_us == 9.0
    assert Trace(cpu=(), gpu=(), calls=spans).end_us == 3.0
    assert Trace(cpu=(), gpu=(), calls=()).end_us == 0.0


def test_union_length_counts_overlaps_once():
    assert profiling._union_length([]) == 0.0
    assert profiling._union_length([(0.0, 10.0)]) == 10.0
    # [0, 10] and [5, 12] overlap; [12, 14] touches; [20, 21] is apart
    assert profiling._union_length(
        [(20.0, 21.0), (5.0, 12.0), (0.0, 10.0), (12.0, 14.0)]
    ) == pytest.approx(15.0)
    assert profiling._union_length([(0.0, 10.0), (2.0, 3.0)]) == 10.0


def test_trace_shifts_to_the_first_call_and_drops_what_ended_before(monkeypatch):
    seen = {}
    events = [
        _event("cpu_op", "before", 100, 50),  # ends at 150, before the first call
        _event("cpu_op", "touching", 150, 50),  # ends at 200, where the call starts
        _event("user_annotation", "gpubook call 1", 300, 50),
        _event("user_annotation", "gpubook call 0", 200, 50),
        _event("kernel", "k2", 320, 5, stream=7),
        _event("kernel", "k1", 210, 5, stream=7),
        _event("cpu_op", "later", 260, 1),
    ]

    def fake(fn, *args, calls, warmup, **kwargs):
        seen.update(args=args, calls=calls, warmup=warmup, kwargs=kwargs)
        return events

    monkeypatch.setattr(profiling, "profile_events", fake)
    result = trace(print, 1, 2, calls=2, warmup=5, label="eager", sep="")
    # one call more is profiled (the profiler's start-up) and only the last 2 are kept
    assert seen == {"args": (1, 2), "calls": 3, "warmup": 5, "kwargs": {"sep": ""}}
    assert trace(print).label == ""
    assert (seen["calls"], seen["warmup"]) == (4, 3)
    assert result.label == "eager"
    assert [(s.name, s.start_us, s.end_us) for s in result.calls] == [
        ("gpubook call 0", 0.0, 50.0),
        ("gpubook call 1", 100.0, 150.0),
    ]
    assert [(s.name, s.start_us) for s in result.cpu] == [
        ("touching", -50.0),
        ("later", 60.0),
    ]
    assert [(s.name, s.start_us, s.end_us) for s in result.gpu] == [
        ("k1", 10.0, 15.0),
        ("k2", 120.0, 125.0),
    ]
    assert result.gpu[0].row == "stream 7" and result.gpu[0].kind == "kernel"


def test_trace_without_marks_starts_at_the_first_span(monkeypatch):
    events = [
        _event("cpu_op", "b", 70, 5),
        _event("kernel", "k", 50, 10, stream=1),
        _event("cpu_op", "a", 60, 5),
    ]
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: events)
    result = trace(print)
    assert result.calls == ()
    assert [(s.name, s.start_us) for s in result.cpu] == [("a", 10.0), ("b", 20.0)]
    assert result.gpu[0].start_us == 0.0
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: [])
    empty = trace(print)
    assert (empty.cpu, empty.gpu, empty.calls, empty.end_us) == ((), (), (), 0.0)


def test_split_host_busy_and_bound_at_the_thresholds():
    def split(wall, gpu):
        return Split(wall=wall, gpu=gpu, kernels_per_call=2, launches_per_call=3)

    assert split(4.0, 1.0).host == 3.0 and split(4.0, 1.0).busy == 0.25
    # the profiler's GPU time can exceed a latency measured without it
    assert split(1.0, 1.5).host == 0.0 and split(1.0, 1.5).busy == 1.0
    assert split(2.0, None).host == 2.0 and split(2.0, None).busy is None
    assert split(1.0, 0.3).bound == "mixed"  # 30% is no longer host-bound
    assert split(1.0, 0.29).bound == "host-bound"
    assert split(1.0, 0.5).bound == "mixed"
    assert split(1.0, 0.8).bound == "GPU-bound"  # 80% and above
    assert split(1.0, 0.79).bound == "mixed"


def test_split_busy_pct_stays_on_its_side_of_the_lines():
    def pct(busy):
        return Split(
            wall=1.0, gpu=busy, kernels_per_call=1, launches_per_call=1
        ).busy_pct

    assert pct(0.298) == 29  # host-bound: never printed as 30%
    assert pct(0.30) == 30 and pct(0.301) == 30  # mixed
    assert pct(0.797) == 79 and pct(0.7949) == 79  # mixed: never 80%
    assert pct(0.80) == 80 and pct(0.996) == 100  # GPU-bound
    assert pct(0.5) == 50 and pct(0.104) == 10
    assert (
        Split(wall=1.0, gpu=None, kernels_per_call=0, launches_per_call=0).busy_pct
        is None
    )
    row = Split(wall=1.0, gpu=0.298, kernels_per_call=1, launches_per_call=1).row()
    assert row["busy"] == "29%" and row["bound"] == "host-bound"


def test_split_row_text_and_table():
    gpu = Split(
        wall=2e-3, gpu=5e-4, kernels_per_call=2.5, launches_per_call=3, label="eager"
    )
    cpu = Split(wall=1e-3, gpu=None, kernels_per_call=0, launches_per_call=0)
    assert gpu.row() == {
        "variant": "eager",
        "latency": "2 ms",
        "GPU busy": "500 µs",
        "host (rest)": "1.5 ms",
        "busy": "25%",
        "kernels": "2.5",
        "launches": "3",
        "bound": "host-bound",
    }
    assert cpu.row()["variant"] == "call"
    assert cpu.row()["GPU busy"] == "–" and cpu.row()["busy"] == "–"
    assert str(gpu) == (
        "eager: 2 ms per call, GPU busy 500 µs (25%), host 1.5 ms; 2.5 kernels and "
        "3 launches per call: host-bound"
    )
    assert repr(cpu) == str(cpu)
    table = split_table((gpu, Split(1.0, 1.0, 1, 1, label="<b>")))
    assert isinstance(table, SplitTable) and isinstance(table.splits, list)
    html = table._repr_html_()
    assert html.count("<tr>") == 3 and "<th>host (rest)</th>" in html
    assert "<td>&lt;b&gt;</td>" in html and "<td>GPU-bound</td>" in html
    assert html.index("<td>eager</td>") < html.index("<td>&lt;b&gt;</td>")
    assert html.startswith('<table class="gpubook-table"><thead><tr><th>variant</th>')
    assert str(table) == str(gpu) + "\n" + str(table.splits[1])
    assert repr(table) == str(table)
    assert gpu._repr_html_() == split_table([gpu])._repr_html_()
    assert cpu._repr_html_() == (
        '<table class="gpubook-table"><thead><tr><th>variant</th><th>latency</th>'
        "<th>GPU busy</th><th>host (rest)</th><th>busy</th><th>kernels</th>"
        "<th>launches</th><th>bound</th></tr></thead><tbody><tr><td>call</td>"
        "<td>1 ms</td><td>–</td><td>1 ms</td><td>–</td><td>0</td><td>0</td>"
        "<td>CPU only</td></tr></tbody></table><p><em>latency: median of "
        "synchronised calls; GPU busy: kernels, copies and fills per call from "
        "torch.profiler; host: the rest</em></p>"
    )


def test_host_device_split_arithmetic_on_a_fake_event_list(monkeypatch):
    long_name = "k" * 100
    events = []
    for call in range(2):  # two profiled calls, 100 µs apart
        t = 100.0 * call
        events += [
            _event("kernel", long_name, t + 10, 4, stream=7),
            _event("kernel", "small", t + 12, 4, stream=7),  # overlaps the first
            _event("gpu_memset", "fill", t + 30, 2, stream=7),
            _event("cuda_runtime", "cudaLaunchKernel", t, 1),
            _event("cuda_runtime", "cudaDeviceSynchronize", t + 2, 1),
        ]
    events += [_event("kernel", f"once{i}", 500 + i, 0.5, stream=8) for i in range(9)]
    seen = {}

    def fake_events(fn, *args, calls, warmup, **kwargs):
        seen["profile"] = (args, calls, warmup, kwargs)
        return events

    def fake_latency(fn, *args, **kwargs):
        seen["latency"] = (args, kwargs)
        return timing_module.Timing(times=(90e-6, 100e-6, 110e-6), mode="latency")

    monkeypatch.setattr(profiling, "profile_events", fake_events)
    monkeypatch.setattr(timing_module, "latency", fake_latency)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    split = host_device_split(print, 3, calls=2, warmup=4, label="v", end="")
    assert seen["profile"] == ((3,), 2, 4, {"end": ""})
    assert seen["latency"] == ((3,), {"warmup": 0, "repeats": 10, "end": ""})
    assert split.wall == 100e-6 and split.label == "v"
    # per call: kernels [10, 16] and the fill [30, 32] (8 µs), plus 9 x 0.5 µs / 2
    assert split.gpu == pytest.approx((2 * 8 + 4.5) / 2 / 1e6, rel=1e-12)
    assert split.kernels_per_call == (4 + 9) / 2
    assert split.launches_per_call == 1.0
    assert len(split.kernel_names) == 8
    first, second = split.kernel_names[:2]
    assert first == ("k" * 80, pytest.approx(4e-6, rel=1e-12), 1.0)
    assert second == ("small", pytest.approx(4e-6, rel=1e-12), 1.0)
    assert all(
        times == pytest.approx(0.25e-6) for _, times, _ in split.kernel_names[2:]
    )
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    default = host_device_split(print)
    assert default.gpu is None and default.label == ""
    assert seen["profile"][1:3] == (20, 3)  # 20 profiled calls, three warm-up
    assert seen["latency"][1]["repeats"] == 20


def test_host_device_split_checks_calls_before_running(monkeypatch):
    ran = []
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: ran.append(1))
    with pytest.raises(ValueError, match="^calls must"):
        host_device_split(print, calls=0)
    assert ran == []

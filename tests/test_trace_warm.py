"""gpubook.trace shows steady calls only: the first call of a profiling session carries
the profiler's own start-up (an ``Activity Buffer Request`` of milliseconds on an H100),
so trace profiles one call more and drops the first. A fake profiler with a scripted
clock plays such a session; a real CPU profile checks the count."""

import json

import pytest
import torch

from gpubook import environment, profiling
from gpubook.profiling import trace

START_UP_US = 2000.0  # the profiler's one-off host span in the first profiled call
OP_US, KERNEL_US, GAP_US = 100.0, 40.0, 10.0


class ScriptedProfiler:
    """Stands in for torch.profiler. Its clock advances only when the traced function
    runs or a mark opens; the first call inside a session pays ``START_UP_US``."""

    def __init__(self):
        self.clock, self.events, self.active, self.calls_in_session = 0.0, [], False, 0

    def profile(self, activities):
        return self

    def __enter__(self):
        self.active, self.calls_in_session = True, 0
        return self

    def __exit__(self, *exc):
        self.active = False
        return False

    def _span(self, cat, name, dur, **args):
        event = {"ph": "X", "cat": cat, "name": name, "ts": self.clock, "dur": dur}
        event["tid"] = 1
        if args:
            event["args"] = args
        self.events.append(event)

    def record_function(self, name):
        profiler = self

        class Mark:
            def __enter__(self):
                profiler.clock += GAP_US
                self.start = profiler.clock

            def __exit__(self, *exc):
                profiler.events.append(
                    {
                        "ph": "X",
                        "cat": "user_annotation",
                        "name": name,
                        "ts": self.start,
                        "dur": profiler.clock - self.start,
                        "tid": 1,
                    }
                )
                return False

        return Mark()

    def call(self):
        """What one call of the traced function leaves in the trace."""
        if not self.active:
            return
        if self.calls_in_session == 0:
            self._span("cuda_runtime", "Activity Buffer Request", START_UP_US)
            self.clock += START_UP_US
        self.calls_in_session += 1
        self._span("cuda_runtime", "cudaLaunchKernel", OP_US)
        self._span("kernel", f"kernel {self.calls_in_session}", KERNEL_US, stream=7)
        self.clock += OP_US

    def export_chrome_trace(self, path):
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"traceEvents": self.events}, handle)


@pytest.fixture
def scripted(monkeypatch):
    fake = ScriptedProfiler()
    monkeypatch.setattr(torch.profiler, "profile", fake.profile)
    monkeypatch.setattr(torch.profiler, "record_function", fake.record_function)
    monkeypatch.setattr(environment, "quiet_known_warnings", lambda: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    return fake


@pytest.mark.parametrize("calls", [1, 3])
def test_trace_drops_the_call_that_pays_the_profiler_start_up(scripted, calls):
    ran = []

    def fn(x):
        ran.append(x)
        scripted.call()

    result = trace(fn, 5, calls=calls, warmup=2)
    assert ran == [5] * (2 + calls + 1)  # warm-up, the dropped call, the kept ones
    assert len(result.calls) == calls
    assert [s.name for s in result.calls] == [
        f"gpubook call {i}" for i in range(1, calls + 1)
    ]
    # every kept call is a steady one: no start-up span, the same length each time
    assert all(s.duration_us == OP_US for s in result.calls)
    assert "Activity Buffer Request" not in {s.name for s in result.cpu}
    assert result.calls[0].start_us == 0.0
    assert [s.name for s in result.gpu] == [f"kernel {i}" for i in range(2, calls + 2)]
    assert all(s.start_us >= 0 for s in (*result.cpu, *result.gpu))
    steady = OP_US + GAP_US
    assert result.end_us == pytest.approx(calls * steady - GAP_US)


def test_trace_default_is_three_steady_calls(scripted):
    result = trace(scripted.call)
    assert len(result.calls) == 3
    assert {s.duration_us for s in result.calls} == {OP_US}


def test_trace_keeps_the_last_calls_when_fewer_marks_come_back(monkeypatch):
    def mark(index, start):
        return {
            "ph": "X",
            "cat": "user_annotation",
            "name": f"gpubook call {index}",
            "ts": start,
            "dur": 5,
        }

    events = [mark(1, 300), mark(0, 100)]  # one mark short of calls + 1
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: events)
    result = trace(lambda: None, calls=2)
    assert [(s.name, s.start_us) for s in result.calls] == [
        ("gpubook call 0", 0.0),
        ("gpubook call 1", 200.0),
    ]


def test_trace_checks_calls_before_profiling(monkeypatch):
    monkeypatch.setattr(profiling, "profile_events", lambda *a, **k: pytest.fail())
    with pytest.raises(ValueError, match="calls"):
        trace(lambda: None, calls=0)


def test_real_cpu_trace_shows_the_calls_asked_for():
    x = torch.randn(32, 32)
    result = trace(torch.mm, x, x, calls=2, warmup=1)
    assert [s.name for s in result.calls] == ["gpubook call 1", "gpubook call 2"]
    assert result.calls[0].start_us == 0.0
    assert any("mm" in span.name for span in result.cpu)

"""Tests for gpubook.tables (tables that render as tables) and gpubook.cpuload."""

import math
import os
import signal
import time

import pytest

from gpubook import cpuload
from gpubook.tables import Table, table


def test_table_renders_html_markdown_and_text():
    t = table([{"n": 1, "time": 0.12345}, {"n": 2, "extra": "x"}], caption="cap")
    assert t.columns == ["n", "time", "extra"]
    html = t._repr_html_()
    assert (
        "<table" in html
        and "<th>time</th>" in html
        and "0.123" in html
        and "cap" in html
    )
    markdown = t._repr_markdown_()
    assert markdown.splitlines()[0] == "| n | time | extra |"
    assert "*cap*" in markdown
    text = str(t)
    assert "0.123" in text and text.endswith("(cap)")


def test_table_formats_nan_and_escapes_html():
    t = table([{"a": math.nan, "b": "<b>"}], fmt=".2f")
    assert "–" in str(t)
    assert "&lt;b&gt;" in t._repr_html_()


@pytest.mark.parametrize("rows", [[], [1, 2]])
def test_table_rejects_bad_rows(rows):
    with pytest.raises((ValueError, TypeError)):
        Table(rows)


def test_other_busy_cores_is_a_small_non_negative_number():
    busy = cpuload.other_busy_cores(window=0.05)
    if busy is None:
        pytest.skip("no Linux /proc here")
    assert 0 <= busy <= 4096


@pytest.mark.parametrize("window", [0, -1, math.nan])
def test_other_busy_cores_rejects_bad_window(window):
    with pytest.raises(ValueError):
        cpuload.other_busy_cores(window=window)


def test_wait_for_quiet_cpu_respects_its_time_limit():
    waited, busy = cpuload.wait_for_quiet_cpu(
        busy_below=1e-9, max_seconds=0.0, window=0.05
    )
    assert waited < 5
    assert busy is None or busy >= 0


def test_descendant_processes_counts_children():
    import subprocess
    import sys

    before = cpuload.descendant_processes()
    if before is None:
        pytest.skip("no Linux /proc here")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    try:
        assert cpuload.descendant_processes() >= before + 1
    finally:
        child.kill()
        child.wait()


def test_host_speed_is_a_few_microseconds_per_call():
    probe = cpuload.host_speed(calls=200, repeats=3)
    assert 0 < probe < 1000
    with pytest.raises(ValueError):
        cpuload.host_speed(calls=0)


def test_host_speed_samples_are_spread_in_time():
    import time

    start = time.perf_counter()
    values = cpuload.host_speed_samples(samples=3, spacing=0.05, calls=100)
    assert len(values) == 3 and all(0 < v < 1000 for v in values)
    assert time.perf_counter() - start >= 0.1  # two pauses between three samples
    with pytest.raises(ValueError):
        cpuload.host_speed_samples(samples=0)
    with pytest.raises(ValueError):
        cpuload.host_speed_samples(spacing=-1)


def _child_ticks(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")
def test_busy_core_spins_only_when_asked_and_is_killed_on_exit():
    with cpuload.BusyCore() as core:
        pid = core.pid
        assert not core.spinning  # starts stopped
        before = _child_ticks(pid)
        time.sleep(0.3)
        assert _child_ticks(pid) - before <= 2  # idle: (almost) no CPU time
        core.busy()
        assert core.spinning
        before = _child_ticks(pid)
        time.sleep(0.3)
        ticks = os.sysconf("SC_CLK_TCK")
        assert _child_ticks(pid) - before >= 0.1 * ticks  # busy: it used the CPU
        core.idle()
        core.idle()  # idempotent
        assert not core.spinning
    assert not os.path.exists(f"/proc/{pid}/stat") or _zombie_or_gone(pid)
    with pytest.raises(RuntimeError, match="closed"):
        core.busy()
    core.close()  # closing twice is harmless


def _zombie_or_gone(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_busy_core_says_when_the_child_died():
    core = cpuload.BusyCore()
    try:
        os.kill(core.pid, signal.SIGKILL)
        core._child.wait()
        with pytest.raises(RuntimeError, match="exited"):
            core.busy()
    finally:
        core.close()


def test_busy_core_without_job_control_signals_raises_a_sentence(monkeypatch):
    monkeypatch.delattr(cpuload.signal, "SIGSTOP")
    with pytest.raises(RuntimeError, match="SIGSTOP"):
        cpuload.BusyCore()


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="needs Linux /proc")
def test_busy_core_child_ends_when_its_parent_dies(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "parent.py"
    script.write_text(
        "import os, sys, time\n"
        "from gpubook import cpuload\n"
        "core = cpuload.BusyCore()\n"
        "core.busy()\n"
        "print(core.pid, flush=True)\n"
        "time.sleep(30)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env
    )
    child_pid = int(parent.stdout.readline())
    parent.kill()  # no cleanup runs in the parent
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _zombie_or_gone(child_pid):
        time.sleep(0.05)
    assert _zombie_or_gone(child_pid)


def test_busy_core_interrupted_inside_with_kills_the_child():
    with pytest.raises(KeyboardInterrupt):
        with cpuload.BusyCore() as core:
            pid = core.pid
            core.busy()
            raise KeyboardInterrupt
    assert _zombie_or_gone(pid)
    assert not core.spinning

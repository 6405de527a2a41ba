"""Tests for gpubook.models (chapter 7's plumbing) and gpubook.workshop."""

import json
import os
import time

import pytest
import torch

from gpubook import models, workshop


def test_kernel_category_names():
    assert models.kernel_category("fmha_cutlassF_f32_aligned_64x64_rf_sm80") == (
        "attention (fused)"
    )
    assert models.kernel_category("flash_fwd_kernel") == "attention (fused)"
    assert models.kernel_category("triton_poi_fused_gelu_0") == "fused (Triton)"
    assert models.kernel_category("triton_tem_fused_mm_1") == "GEMM (Triton)"
    assert models.kernel_category("nvjet_sm90_tst_192x128") == "GEMM"
    assert models.kernel_category("sm90_xmma_fprop_implicit_gemm") == "convolution"
    assert models.kernel_category("nchwToNhwcKernel") == "layout change"
    assert models.kernel_category("bfloat16_copy_kernel_cuda") == "copy/cast"
    assert models.kernel_category("something_else") == "other"
    with pytest.raises(TypeError):
        models.kernel_category(3)


def test_table_renders_and_rejects_empty():
    table = models.Table([{"a": 1, "b": "x|y"}, {"a": 2}], caption="note")
    assert "<table" in table._repr_html_() and "note" in table._repr_html_()
    assert "x\\|y" in table._repr_markdown_()
    assert str(table).splitlines()[0].split() == ["a", "b"]
    with pytest.raises(ValueError):
        models.Table([])


def test_kernel_summary_on_cpu_sees_attention_operators():
    q = torch.randn(1, 2, 8, 16)

    def attention(q):
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)

    summary = models.kernel_summary(attention, q, calls=2, warmup=1, label="sdpa")
    assert summary.kernels == 0 or torch.cuda.is_available()
    assert summary.aten.get("aten::scaled_dot_product_attention", 0) >= 1
    assert models.attention_path(summary) != "none seen"
    assert summary.row()["variant"] == "sdpa"
    with pytest.raises(ValueError):
        models.kernel_summary(attention, q, calls=0)


def test_unfused_attention_is_named():
    q = torch.randn(2, 8, 16)

    def unfused(q):
        return torch.softmax(torch.bmm(q, q.transpose(1, 2)), -1) @ q

    summary = models.kernel_summary(unfused, q, calls=1, warmup=1)
    assert models.attention_path(summary) == "unfused (bmm + softmax)"


@pytest.mark.slow
def test_fresh_process_reports_and_fails_clearly(tmp_path):
    result = models.fresh_process(
        "seconds, value = timed(lambda: 2 + 3)\n"
        "report(value=value, imp=IMPORT_TORCH_S)",
        cache_dir=str(tmp_path),
    )
    assert result["value"] == 5 and result["imp"] > 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        models.fresh_process("1 / 0")
    with pytest.raises(ValueError):
        models.fresh_process("   ")


@pytest.mark.slow
def test_fresh_processes_overlap_their_set_up_and_take_turns(tmp_path):
    # each set-up sleeps 4 s: side by side they end together, one after another they
    # would end 4 s apart and more
    note = tmp_path / "note.txt"
    setup = "import time\ntime.sleep(4.0)\nready_at = time.time()\n"
    code = (
        "import os\nstart = time.time()\n"
        f"seen = open({str(note)!r}).read() if os.path.exists({str(note)!r}) else ''\n"
        f"open({str(note)!r}, 'a').write('x')\n"
        "time.sleep(0.5)\n"
        "report(ready_at=ready_at, start=start, end=time.time(), seen=seen)"
    )
    results = models.fresh_processes([(setup, code, None)] * 3, timeout=120)
    # in order, each after the last
    assert [r["seen"] for r in results] == ["", "x", "xx"]
    for before, after in zip(results, results[1:]):
        assert after["start"] >= before["end"]  # one measured part at a time
    ready = [r["ready_at"] for r in results]
    assert max(ready) - min(ready) < 4.0  # the set-ups overlapped
    assert max(ready) <= results[0]["start"]  # every set-up done before the first turn


@pytest.mark.slow
def test_fresh_processes_name_the_job_that_failed():
    good = ("", "report(ok=1)", None)
    with pytest.raises(models.FreshProcessError, match="ZeroDivisionError") as caught:
        models.fresh_processes([good, ("1 / 0", "report(ok=2)", None), good])
    assert caught.value.job == 1 and caught.value.completed == [{"ok": 1}]
    with pytest.raises(models.FreshProcessError, match="ValueError") as caught:
        models.fresh_processes([good, ("", "raise ValueError('late')", None)])
    assert caught.value.job == 1 and caught.value.completed == [{"ok": 1}]


@pytest.mark.slow
def test_fresh_processes_time_out_as_such_stop_grandchildren_and_log(tmp_path):
    """A stuck set-up or turn raises with timed_out=True, and the processes it started
    are stopped with it; a failure that ends by itself has timed_out=False; log gets a
    line per step."""
    pid_file = tmp_path / "grandchild.pid"
    spawn = (
        "import subprocess, sys, time\n"
        "sleeper = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
        "child = subprocess.Popen(sleeper)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
    )
    with pytest.raises(models.FreshProcessError) as caught:
        models.fresh_processes(
            [(spawn + "time.sleep(60)\n", "report()", None)], timeout=25
        )
    assert caught.value.timed_out and caught.value.completed == []
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # killed with its group, then reaped by init
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the stuck child's own child outlived it")
    lines = []
    good = ("", "report(ok=1)", None)
    with pytest.raises(models.FreshProcessError) as caught:
        models.fresh_processes(
            [good, ("", "import time\ntime.sleep(90)", None)],
            timeout=30,  # the set-ups (importing torch) fit; the stuck turn does not
            log=lines.append,
        )
    assert caught.value.timed_out and caught.value.job == 1
    assert [line.split(" (+")[0] for line in lines] == [
        "fresh_processes: 2 set up",
        "fresh_processes: job 0 done",
    ]
    with pytest.raises(models.FreshProcessError) as caught:
        models.fresh_processes([("", "1 / 0", None)])
    assert not caught.value.timed_out
    with pytest.raises(models.FreshProcessError) as caught:
        models.fresh_process("import time\ntime.sleep(60)", timeout=2)
    assert caught.value.timed_out


@pytest.mark.slow
def test_fresh_processes_leave_at_once_and_stop_what_a_job_started(tmp_path):
    """A job that ends its code does not wait for a slow normal exit (the compile
    workers' shutdown), and what it started is stopped before the next turn, at once
    (the worker holds the job's output open: the next turn must not wait for it)."""
    pid_file = tmp_path / "worker.pid"
    code = (
        "import atexit, subprocess, sys, time\n"
        "atexit.register(time.sleep, 60)  # a normal exit would take a minute\n"
        "worker = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
        f"open({str(pid_file)!r}, 'w').write(str(subprocess.Popen(worker).pid))\n"
        "report(ok=1, at=time.time())\n"
    )
    check = (
        f"import os, time\nstart = time.time()\n"
        f"proc = '/proc/' + open({str(pid_file)!r}).read()\n"
        "for _ in range(50):  # killed, then reaped by init\n"
        "    if os.path.exists(proc):\n"
        "        time.sleep(0.1)\n"
        "report(alive=os.path.exists(proc), start=start)\n"
    )
    results = models.fresh_processes([("", code, None), ("", check, None)], timeout=40)
    assert results[0]["ok"] == 1 and results[1]["alive"] is False
    assert results[1]["start"] - results[0]["at"] < 5.0  # not the reader's 10 s


def test_fresh_processes_reject_bad_jobs():
    for jobs in ([], "code", [("", "report()")], [("", "  ", None)], [(1, "x", None)]):
        with pytest.raises(ValueError):
            models.fresh_processes(jobs)
    with pytest.raises(ValueError):
        models.fresh_processes([("", "report()", None)], timeout=0)


def test_baseline_log_checks_and_table():
    log = models.BaselineLog(lambda x: x + 1, torch.ones(4), min_run_time=0.01)
    log.check("first")
    log.check("second")
    assert list(log.timings) == ["first", "second"]
    assert "vs fresh process" in str(log.table(log.timings["first"].median))
    with pytest.raises(ValueError):
        log.check("")
    with pytest.raises(TypeError):
        models.BaselineLog(3)


def test_cudagraph_notes_counts_without_error():
    with models.CudagraphNotes() as notes:
        pass
    assert notes.skips == 0 and notes.messages == []


def test_section_times(tmp_path):
    def code(start, end):
        execution = {"iopub.execute_input": start, "shell.execute_reply": end}
        return {"cell_type": "code", "source": "", "metadata": {"execution": execution}}

    cells = [
        {"cell_type": "markdown", "source": "# Title\n## Learning objectives\n- a"},
        code("2026-01-01T00:00:00Z", "2026-01-01T00:00:02Z"),
        {"cell_type": "markdown", "source": "## First `part`"},
        code("2026-01-01T00:00:02Z", "2026-01-01T00:00:05Z"),
        code("2026-01-01T00:00:05Z", "2026-01-01T00:00:06Z"),
        {"cell_type": "markdown", "source": "## Summary"},
    ]
    path = tmp_path / "07_x.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}}))
    assert workshop.section_times(path) == [
        ("Setup", 2.0),
        ("First part", 4.0),
        ("Summary", None),
    ]
    assert "| First part | 4 s |" in workshop.page([path])
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{}")
    with pytest.raises(ValueError):
        workshop.section_times(bad)


def test_kernel_summary_counts_kernels_by_name_parts():
    summary = models.KernelSummary(
        kernels=3.0,
        launches=3.0,
        busy_ms=0.1,
        by_category={},
        counts={},
        aten={},
        attention_kernels=(),
        names={
            "triton_poi_fused__to_copy_0": 2.0,
            "bfloat16_copy_kernel_cuda": 1.0,
            "nvjet_gemm": 4.0,
        },
    )
    assert summary.count_named("to_copy", "copy_kernel") == 3.0
    assert summary.count_named("GEMM") == 4.0
    assert summary.count_named("nothing") == 0
    with pytest.raises(ValueError):
        summary.count_named()


@pytest.mark.slow
def test_fresh_process_names_a_crash(tmp_path):
    with pytest.raises(models.FreshProcessError) as caught:
        models.fresh_process("import ctypes\nctypes.string_at(0)")
    error = caught.value
    assert error.returncode == -11 and error.signal == "SIGSEGV"
    assert error.describe().startswith("crashed with a segmentation fault (exit -11)")
    assert "ctypes/__init__.py" in error.where and "string_at" in error.where
    assert "segmentation fault" in str(error) and isinstance(error, RuntimeError)
    assert error.reported is None  # it reported nothing before the crash


def test_fresh_process_keeps_a_report_made_before_a_crash():
    with pytest.raises(models.FreshProcessError) as caught:
        models.fresh_process("report(step=1)\nimport ctypes\nctypes.string_at(0)")
    assert caught.value.reported == {"step": 1} and caught.value.signal == "SIGSEGV"


def test_fresh_process_error_words():
    error = models.FreshProcessError("x", 1, "Traceback\nValueError: bad\n")
    assert error.signal is None and error.where is None
    assert error.describe() == "exited with status 1: ValueError: bad"
    assert models.FreshProcessError("timed out").describe() == "timed out"
    killed = models.FreshProcessError("x", -9, "")
    assert killed.signal == "SIGKILL" and "(exit -9)" in killed.describe()


def test_cudagraph_notes_keep_messages_off_stderr(capsys):
    import logging

    logger = logging.getLogger("torch._inductor.cudagraph_utils.__cudagraphs")
    stream = logging.StreamHandler()  # writes to stderr, as torch's handlers do
    logger.addHandler(stream)
    try:
        with models.CudagraphNotes() as notes:
            logger.warning("skipping cudagraphs due to mutated inputs (1 instances)")
        assert notes.messages == [
            "skipping cudagraphs due to mutated inputs (1 instances)"
        ]
        assert stream in logger.handlers and notes not in logger.handlers
    finally:
        logger.removeHandler(stream)
    assert "skipping cudagraphs" not in capsys.readouterr().err


def _event(cat, name, ts, dur, correlation=None):
    event = {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur}
    if correlation is not None:
        event["args"] = {"correlation": correlation}
    return event


def test_busy_per_call_ties_gpu_work_to_the_call_that_launched_it():
    events = [
        _event("user_annotation", "gpubook call 1", 50.0, 10.0),  # out of order
        _event("user_annotation", "gpubook call 0", 0.0, 10.0),
        _event("cuda_runtime", "cudaLaunchKernel", 2.0, 1.0, correlation=1),
        _event("cuda_runtime", "cudaMemsetAsync", 3.0, 1.0, correlation=2),
        _event("cuda_runtime", "cudaLaunchKernel", 52.0, 1.0, correlation=3),
        # GPU timestamps that would mislead a time window: the first kernel's start
        # is reported before its launch, the second runs past the next call's mark
        _event("kernel", "k", 1.0, 4.0, correlation=1),
        _event("gpu_memset", "Memset", 4.0, 48.0, correlation=2),
        _event("kernel", "k", 55.0, 7.0, correlation=3),
    ]
    names, busy, counts = models._busy_per_call(events)
    assert names == ["gpubook call 0", "gpubook call 1"]
    assert busy == [51.0, 7.0]  # the union: [1, 52) for call 0
    assert counts == [2, 1]


def test_busy_per_call_refuses_gpu_work_launched_outside_the_calls():
    events = [
        _event("user_annotation", "gpubook call 0", 0.0, 10.0),
        _event("cuda_runtime", "cudaLaunchKernel", 20.0, 1.0, correlation=1),
        _event("kernel", "k", 21.0, 4.0, correlation=1),
    ]
    with pytest.raises(RuntimeError, match="outside every call"):
        models._busy_per_call(events)
    events[-1]["args"] = {"correlation": 99}  # no launch recorded at all
    with pytest.raises(RuntimeError, match="outside every call"):
        models._busy_per_call(events)


def test_gpu_times_rejects_bad_input_and_needs_a_gpu():
    with pytest.raises(TypeError, match="non-empty dict"):
        models.gpu_times({})
    with pytest.raises(TypeError, match="not callable"):
        models.gpu_times({"a": 3})
    with pytest.raises(ValueError):
        models.gpu_times({"a": torch.relu}, torch.ones(2), rounds=0)
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        with pytest.raises(RuntimeError, match="CUDA device"):
            models.gpu_times({"a": torch.relu}, torch.ones(2))

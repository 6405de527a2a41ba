"""gpubook.dynamo: Dynamo's logs and errors, captured, without prefixes or paths."""

import logging
import os
import sys
import warnings

import pytest
import torch

from gpubook.dynamo import (
    CapturedLog,
    captured_logs,
    count_compiles,
    graph_report,
    logged_run,
    recompile_reasons,
    short_error,
    trim,
)


def test_trim_removes_log_prefix_and_paths():
    line = (
        "V1122 23:28:32.502000 11235 torch/_dynamo/symbolic_convert.py:5368] [0/0] "
        "[__graph_breaks] Graph break in user code at /tmp/ipykernel_123/4567.py:5"
    )
    assert trim(line) == "Graph break in user code at <cell>:5"
    assert trim(line, keep_ids=True) == "[0/0] Graph break in user code at <cell>:5"
    text = '  File "/home/someone/project/model.py", line 3'
    assert trim(text) == '  File "model.py", line 3'
    # PyTorch shortens some paths itself, leaving a relative tail of the folder names.
    guard = (
        "- 0/0: self.calls == 0  # self.calls += 1  # mp/sim_x1/sim/model.py:14 in f"
    )
    assert trim(guard).endswith("# model.py:14 in f")
    assert trim(r"C:\Users\me\x.py and 3.5/2.0") == "x.py and 3.5/2.0"


def test_trim_keeps_urls_and_drops_guard_comments_on_request():
    url = "see https://docs.pytorch.org/docs/main/torch.compiler.html"
    assert trim(url) == url
    guard = (
        "| +- EQUALS_MATCH: L['mode'] == 0          # if mode == 0:  # mp/x.py:4 in f"
    )
    assert trim(guard, drop_comments=True) == "| +- EQUALS_MATCH: L['mode'] == 0"
    assert "# if mode" in trim(guard)


def test_trim_width_and_bad_input():
    assert trim("x" * 50, width=20) == "x" * 17 + "..."
    with pytest.raises(TypeError):
        trim(None)
    with pytest.raises(ValueError):
        trim("text", width=3)
    with pytest.raises(ValueError):
        trim("text", width=True)


def test_captured_logs_collects_recompile_reasons_and_prints_nothing(capsys):
    def scale(x, mode):
        return x * 2 if mode == 0 else x * 3

    torch.compiler.reset()
    compiled = torch.compile(scale, backend="eager")
    compiled(torch.ones(4), 0)
    with captured_logs(recompiles=True) as log:
        compiled(torch.ones(4), 1)
    torch.compiler.reset()
    assert isinstance(log, CapturedLog)
    assert "Recompiling function scale" in log.text
    assert any("mode == 0" in line for line in log.lines("mode"))
    assert recompile_reasons(log) in (["mode == 0"], ["L['mode'] == 0"])
    assert "/" + "tmp/" not in log.text and sys.prefix not in log.text
    assert capsys.readouterr().err == ""


def test_captured_logs_shows_python_warnings_after_the_block():
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with captured_logs() as log:
            warnings.warn("look at me", UserWarning)
    assert log.warnings == ["look at me"]
    assert [str(w.message) for w in outside] == ["look at me"]
    assert "/" not in outside[0].filename and "\\" not in outside[0].filename
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with captured_logs(show_warnings=False) as log:
            warnings.warn("quiet", UserWarning)
    assert log.warnings == ["quiet"] and outside == []


def test_captured_logs_lists_torch_log_warnings():
    with captured_logs() as log:
        logging.getLogger("torch._dynamo").warning("hit config.recompile_limit (8)")
    assert "hit config.recompile_limit (8)" in log.warnings
    assert "hit config.recompile_limit (8)" in log.text


def test_captured_logs_restores_the_previous_logging_state():
    state = torch._logging._internal.log_state
    torch._logging.set_logs(recompiles=True)
    try:
        with captured_logs(graph_breaks=True):
            inside = torch._logging._internal.log_state
            assert inside.is_artifact_enabled("graph_breaks")
            assert not inside.is_artifact_enabled("recompiles")
        after = torch._logging._internal.log_state
        assert after.is_artifact_enabled("recompiles")
        assert not after.is_artifact_enabled("graph_breaks")
    finally:
        torch._logging.set_logs()
    assert not torch._logging._internal.log_state.is_artifact_enabled("recompiles")
    del state


def test_captured_logs_keeps_torch_logs_from_the_environment(monkeypatch):
    monkeypatch.setenv("TORCH_LOGS", "recompiles")
    try:
        torch._logging._internal._init_logs()
        with captured_logs(graph_breaks=True):
            assert os.environ.get("TORCH_LOGS") is None  # set aside inside the block
            inside = torch._logging._internal.log_state
            assert inside.is_artifact_enabled("graph_breaks")
        assert os.environ["TORCH_LOGS"] == "recompiles"
        assert torch._logging._internal.log_state.is_artifact_enabled("recompiles")
    finally:
        monkeypatch.delenv("TORCH_LOGS")
        torch._logging._internal._init_logs()


def test_captured_logs_rejects_unknown_artifacts_and_bad_flags():
    with pytest.raises((TypeError, ValueError)):
        with captured_logs(no_such_artifact=True):
            pass
    with pytest.raises(TypeError):
        with captured_logs(show_warnings="yes"):
            pass


def test_short_error_keeps_explanation_and_the_readers_file_and_line():
    error = RuntimeError(
        "Data-dependent branching\n  Hint: use torch.cond\n\nfrom user code:\n"
        '   File "/home/someone/proj/model.py", line 8, in forward\n'
        "    return torch.cos(inner(y))\n"
        "                     ^^^^^^^^^\n"
        '  File "/home/someone/proj/helpers.py", line 3, in inner\n'
        "    if y.sum() > 0:\n\n"
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace"
    )
    assert short_error(error) == (
        "RuntimeError: Data-dependent branching\n  Hint: use torch.cond\n"
        "from user code:\n"
        "  model.py:8 in forward: return torch.cos(inner(y))\n"
        "  helpers.py:3 in inner: if y.sum() > 0:"
    )
    assert short_error(error, frames=1).endswith(
        "helpers.py:3 in inner: if y.sum() > 0:"
    )
    assert "from user code" not in short_error(error, frames=0)
    assert "/home/" not in short_error(error)
    assert short_error(ValueError("a\nb\nc"), max_lines=2) == "ValueError: a\nb\n..."
    with pytest.raises(TypeError):
        short_error("not an exception")
    with pytest.raises(ValueError):
        short_error(error, max_lines=0)
    with pytest.raises(ValueError):
        short_error(error, frames=-1)


def test_short_error_on_a_real_graph_break_names_this_file():
    def branchy(x):
        if x.sum() > 0:
            return x - 1
        return x

    torch.compiler.reset()
    with pytest.raises(Exception) as caught:
        torch.compile(branchy, fullgraph=True, backend="eager")(torch.ones(3))
    text = short_error(caught.value, max_lines=2)
    assert (
        "test_dynamo.py:" in text and "in branchy" in text and "if x.sum() > 0" in text
    )


def test_graph_report_and_count_compiles():
    def branchy(x):
        y = torch.sin(x)
        if y.sum() > 0:
            y = y * 2
        return torch.cos(y)

    report = graph_report(branchy, torch.ones(5))
    graphs, breaks, reasons = report
    assert (graphs, breaks) == (2, 1) and len(reasons) == 1
    calls = [(torch.ones(n),) for n in (3, 4, 5)]
    assert count_compiles(torch.sin, calls) == 2  # static, then one dynamic version
    assert count_compiles(torch.sin, calls, dynamic=False) == 3
    with pytest.raises(TypeError):
        graph_report("not callable")
    with pytest.raises(ValueError):
        count_compiles(torch.sin, [])


def test_recompile_reasons_from_text():
    text = (
        "    - 0/1: L['n'] == 3  # x[:n]  # a.py:2 in f\n    - 0/0: L['n'] == 2\nother"
    )
    assert recompile_reasons(text) == ["L['n'] == 3", "L['n'] == 2"]


def test_logged_run_returns_output_and_trimmed_logs(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\n"
        "f = torch.compile(lambda x, k: x * k, backend='eager')\n"
        "for k in (2, 3):\n"
        "    f(torch.ones(2), k)\n"
        "print('ok')\n"
    )
    out, log = logged_run(script, "recompiles", cwd=tmp_path)
    assert out.strip() == "ok"
    assert "Recompiling function" in log and "[0/1]" in log
    assert str(tmp_path) not in log
    out, log = logged_run(script, "", cwd=tmp_path)  # no logs: TORCH_LOGS left unset
    assert out.strip() == "ok" and "Recompiling" not in log
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit(3)\n")
    with pytest.raises(RuntimeError):
        logged_run(bad)
    with pytest.raises(TypeError):
        logged_run(3)

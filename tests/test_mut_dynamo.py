"""gpubook.dynamo, case by case (tests written against the survivors of a mutation run,
CONTRIBUTING.md "Mutation testing"): log prefixes, paths, the reader's frames in an
error, the logging state, and the fresh-process run with a faked subprocess."""

import logging
import subprocess
import sys
import warnings

import pytest
import torch

from gpubook import dynamo
from gpubook.dynamo import (
    CapturedLog,
    GraphReport,
    captured_logs,
    count_compiles,
    graph_report,
    logged_run,
    recompile_reasons,
    short_error,
    trim,
)

PREFIX = "V1122 23:28:32.502000 11235 torch/_dynamo/guards.py:5014] "


def test_strip_prefix_keeps_ids_only_on_request():
    line = PREFIX + "[0/1] [__recompiles] Recompiling function f"
    assert dynamo._strip_prefix(line, keep_ids=False) == "Recompiling function f"
    assert dynamo._strip_prefix(line, keep_ids=True) == "[0/1] Recompiling function f"
    both = PREFIX + "[0/1] [1/0] body"
    assert dynamo._strip_prefix(both, keep_ids=True) == "[0/1] [1/0] body"
    bare = PREFIX + "no ids here"
    assert dynamo._strip_prefix(bare, keep_ids=True) == "no ids here"
    assert dynamo._strip_prefix("plain [0/1] text", keep_ids=True) == "plain [0/1] text"
    for level in "VDIWEC":
        assert trim(level + PREFIX[1:] + "x") == "x"
    assert trim("X" + PREFIX[1:] + "x") != "x"


def test_trim_paths_cells_comments_width_and_blank_edges():
    assert trim("at /tmp/ipykernel_42/1234.py:7 in f") == "at <cell>:7 in f"
    assert trim('File "/a/b/ipykernel_42/99.py", line 3') == 'File "<cell>", line 3'
    assert trim("see ./pkg/mod.py and ~/x/y.txt") == "see mod.py and y.txt"
    assert trim("ratio 3.5/2.0 and a/b") == "ratio 3.5/2.0 and a/b"
    assert trim("x = 1  # comment  # f.py:2 in g", drop_comments=True) == "x = 1"
    assert trim("x = 1  # comment") == "x = 1  # comment"
    assert trim("\n\nfirst\n\nsecond  \n\n") == "first\n\nsecond"
    assert trim("a" * 10, width=10) == "a" * 10
    assert trim("a" * 11, width=10) == "a" * 7 + "..."
    assert trim("") == ""
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        trim(b"x")
    with pytest.raises(ValueError, match="width must be an int of at least 10"):
        trim("x", width=9)
    with pytest.raises(ValueError, match="width"):
        trim("x", width=10.0)


def test_captured_log_text_and_lines():
    log = CapturedLog(raw=PREFIX + "[0/0] [__guards] one guard\n\n  \nother line\n")
    assert log.text == "one guard\n\n\nother line"
    assert log.lines() == ["one guard", "other line"]
    assert log.lines("guard") == ["one guard"]
    assert log.lines("missing") == [] and CapturedLog().lines() == []
    assert CapturedLog().warnings == [] and CapturedLog().warnings is not (
        CapturedLog().warnings
    )


def test_user_frames_source_lines_markers_and_cells():
    user_code = (
        '  File "/home/me/proj/model.py", line 8, in forward\n'
        "    return torch.cos(inner(y))\n"
        "           ^^^^^^^^~~~~~\n"
        '  File "/tmp/ipykernel_7/123.py", line 3, in inner\n'
        '  File "C:\\work\\helpers.py", line 5, in helper\n'
        "    if y.sum() > 0:\n"
        '  File "/x/last.py", line 9, in end'
    )
    assert dynamo._user_frames(user_code) == [
        "  model.py:8 in forward: return torch.cos(inner(y))",
        "  <cell>:3 in inner",  # the next line is another frame, not its source
        "  helpers.py:5 in helper: if y.sum() > 0:",
        "  last.py:9 in end",  # the last line of the text: no source
    ]
    assert dynamo._user_frames('  File "a.py", line 1, in f\n    ^^^\n') == [
        "  a.py:1 in f"
    ]
    assert dynamo._user_frames('  File "a.py", line 1, in f\n    ~ x ~\n') == [
        "  a.py:1 in f: ~ x ~"
    ]
    assert dynamo._user_frames("no frames at all") == []


def _error(lines=3, frames=4, verbose=True):
    text = "\n".join(f"explanation {i}" for i in range(lines))
    text += "\n\nfrom user code:\n"
    text += "\n".join(
        f'  File "/p/f{i}.py", line {i}, in g{i}\n    call_{i}()' for i in range(frames)
    )
    if verbose:
        text += "\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\nmore"
    return RuntimeError(text)


def test_short_error_defaults_cut_at_twelve_lines_and_three_frames():
    text = short_error(_error(lines=12))
    lines = text.splitlines()
    assert lines[0] == "RuntimeError: explanation 0" and lines[11] == "explanation 11"
    assert lines[12:] == [
        "from user code:",
        "  f1.py:1 in g1: call_1()",
        "  f2.py:2 in g2: call_2()",
        "  f3.py:3 in g3: call_3()",
    ]
    cut = short_error(_error(lines=13)).splitlines()
    assert cut[11:13] == ["explanation 11", "..."]
    assert short_error(_error(lines=2), max_lines=2).splitlines()[2] == (
        "from user code:"
    )
    assert short_error(_error(lines=1), frames=0) == "RuntimeError: explanation 0"
    assert "TORCHDYNAMO_VERBOSE" not in short_error(_error(frames=0))
    # the advice can also end the message when there is no user code
    plain = RuntimeError("broken\nSet TORCHDYNAMO_VERBOSE=1 for more\nSet again")
    assert short_error(plain) == "RuntimeError: broken"
    assert short_error(KeyError("k")) == "KeyError: 'k'"
    # the advice right after the last frame is not that frame's source line
    bare = RuntimeError(
        'why\nfrom user code:\n  File "/p/m.py", line 2, in f\n'
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace"
    )
    assert short_error(bare) == "RuntimeError: why\nfrom user code:\n  m.py:2 in f"


def test_short_error_checks_its_arguments():
    with pytest.raises(TypeError, match="error must be an exception, got str"):
        short_error("boom")
    with pytest.raises(
        ValueError, match="max_lines must be an int of at least 1, got 0"
    ):
        short_error(_error(), max_lines=0)
    with pytest.raises(ValueError, match="frames must be an int of at least 0, got -1"):
        short_error(_error(), frames=-1)
    with pytest.raises(ValueError, match="frames must be an int of at least 0"):
        short_error(_error(), frames=1.0)
    with pytest.raises(ValueError, match="max_lines"):
        short_error(_error(), max_lines=True)
    assert short_error(_error(lines=1, frames=1), max_lines=1, frames=0) == (
        "RuntimeError: explanation 0"
    )


def test_graph_report_unpacks_and_hides_what_fn_prints(monkeypatch, capsys):
    report = GraphReport(graphs=2, breaks=1, reasons=["r"])
    assert list(report) == [2, 1, ["r"]]

    class Explanation:
        graph_count, graph_break_count, break_reasons = 1, 0, []

    def explain(fn):
        def run(*args, **kwargs):
            fn(*args, **kwargs)
            return Explanation

        return run

    resets = []
    monkeypatch.setattr(torch._dynamo, "explain", explain)
    monkeypatch.setattr(torch.compiler, "reset", lambda: resets.append(1))
    graphs, breaks, reasons = graph_report(print, "printed inside")
    assert (graphs, breaks, reasons) == (1, 0, []) and resets == [1]
    assert capsys.readouterr().out == ""  # what fn prints is not shown


def test_graph_report_counts_break_reasons_when_explain_misses_them(monkeypatch):
    class Reason:
        def __init__(self, text):
            self.reason = text

    class Explanation:
        graph_count = 1
        graph_break_count = 0
        break_reasons = [Reason("  at /a/b/model.py:3\nsecond line"), Reason("two")]

    monkeypatch.setattr(
        torch._dynamo, "explain", lambda fn: lambda *a, **k: Explanation
    )
    report = graph_report(torch.sin, torch.ones(1))
    assert (report.graphs, report.breaks) == (1, 2)
    assert report.reasons == ["at model.py:3", "two"]


def test_count_compiles_keeps_dynamo_warnings_quiet():
    def f(x):
        warnings.warn("inside the compiled function")
        return x + 1

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert count_compiles(f, [(torch.ones(2),)]) == 1
    assert caught == []


def test_count_compiles_checks_its_arguments():
    with pytest.raises(TypeError, match="fn must be callable, got int"):
        count_compiles(3, [(1,)])
    with pytest.raises(ValueError, match="calls must hold at least one tuple"):
        count_compiles(torch.sin, [])
    with pytest.raises(TypeError, match="fn must be callable, got str"):
        graph_report("f")


def test_recompile_reasons_strip_ids_and_comments():
    log = CapturedLog(
        raw=PREFIX + "[0/2] [__recompiles] Recompiling function f\n"
        "    triggered by the following guard failure(s):\n"
        "    - 0/1: L['n'] == 3  # x[:n]  # a.py:2 in f\n"
        "    -  12/10:   tensor 'x' size mismatch\n"
        "    - not a guard\n"
    )
    assert recompile_reasons(log) == ["L['n'] == 3", "tensor 'x' size mismatch"]
    assert recompile_reasons("- 0/0: L['k'] == 1") == ["L['k'] == 1"]
    assert recompile_reasons("") == []


def test_captured_logs_lists_torch_warnings_and_python_warnings_in_order():
    with warnings.catch_warnings(record=True) as outside:
        warnings.simplefilter("always")
        with captured_logs() as log:
            warnings.warn("python warning at /home/me/x.py", UserWarning)
            logging.getLogger("torch._dynamo").warning("torch warning /a/b/c.py")
            logging.getLogger("torch._dynamo").info("below warning level")
    assert log.warnings == ["python warning at x.py", "torch warning c.py"]
    assert [w.category for w in outside] == [UserWarning]
    assert outside[0].filename == "test_mut_dynamo.py"
    assert log.raw.count("\n") >= 1 and "torch warning" in log.text


def test_captured_logs_restores_logging_after_an_error():
    torch._logging.set_logs()
    with pytest.raises(RuntimeError, match="inside"):
        with captured_logs(recompiles=True):
            raise RuntimeError("inside")
    state = torch._logging._internal.log_state
    assert not state.is_artifact_enabled("recompiles")


def test_captured_logs_without_the_internal_state(monkeypatch):
    calls = []
    monkeypatch.setattr(dynamo, "_logging_state", lambda: None)
    real = torch._logging.set_logs

    def spy(**kwargs):
        calls.append(kwargs)
        real(**kwargs)

    monkeypatch.setattr(torch._logging, "set_logs", spy)
    with captured_logs(recompiles=True):
        pass
    assert calls == [{"recompiles": True}, {}]  # set, then reset to the defaults


def test_logging_state_needs_the_internals(monkeypatch):
    internal = torch._logging._internal
    saved = dynamo._logging_state()
    assert saved[0] is internal and saved[1] is not internal.log_state
    monkeypatch.delattr(internal, "_init_logs")
    assert dynamo._logging_state() is None
    monkeypatch.undo()
    monkeypatch.delattr(internal, "log_state")
    assert dynamo._logging_state() is None


def test_restore_logging_clears_the_parse_cache(monkeypatch):
    internal = torch._logging._internal
    cleared = []
    parse = internal._parse_log_settings

    def fake_parse(*args, **kwargs):
        return parse(*args, **kwargs)

    fake_parse.cache_clear = lambda: cleared.append(True)
    monkeypatch.setattr(internal, "_parse_log_settings", fake_parse)
    dynamo._restore_logging((internal, type(internal.log_state)()))
    assert cleared == [True]
    monkeypatch.setattr(internal, "_parse_log_settings", lambda *a: parse(*a))
    dynamo._restore_logging((internal, type(internal.log_state)()))  # no cache: fine


def test_set_state_without_the_setter(monkeypatch):
    class Internal:
        log_state = "old"

    dynamo._set_state(Internal, "new")
    assert Internal.log_state == "new"
    seen = []
    Internal._set_log_state = staticmethod(seen.append)
    dynamo._set_state(Internal, "newer")
    assert seen == ["newer"] and Internal.log_state == "new"


class FakeRun:
    def __init__(self, returncode=0, stdout="", stderr=""):
        self.result = (returncode, stdout, stderr)
        self.calls = []

    def __call__(self, command, **kwargs):
        self.calls.append((command, kwargs))
        return subprocess.CompletedProcess(command, *self.result)


def test_logged_run_environment_and_trimmed_logs(monkeypatch, tmp_path):
    err = PREFIX + "[0/1] [__recompiles] Recompiling at /home/me/prog.py:3\n"
    fake = FakeRun(stdout="ok\n", stderr=err)
    monkeypatch.setattr(dynamo.subprocess, "run", fake)
    monkeypatch.setenv("TORCH_LOGS", "old")
    out, log = logged_run(tmp_path / "prog.py", "recompiles", cwd=tmp_path, timeout=9)
    assert (out, log) == ("ok\n", "[0/1] Recompiling at prog.py:3")
    command, kwargs = fake.calls[0]
    assert command == [sys.executable, str(tmp_path / "prog.py")]
    assert kwargs["cwd"] == tmp_path and kwargs["timeout"] == 9
    assert kwargs["capture_output"] is True and kwargs["text"] is True
    env = kwargs["env"]
    assert env["TORCH_LOGS"] == "recompiles" and env["PYTHONWARNINGS"] == "ignore"
    logged_run("prog.py", "", env={"EXTRA": "1"})
    command, kwargs = fake.calls[1]
    assert "TORCH_LOGS" not in kwargs["env"] and kwargs["env"]["EXTRA"] == "1"
    assert kwargs["timeout"] == 600 and kwargs["cwd"] is None
    assert logged_run("prog.py")[1] == "[0/1] Recompiling at prog.py:3"
    assert fake.calls[2][1]["env"]["TORCH_LOGS"] == "graph_breaks,recompiles"


def test_logged_run_failure_shows_the_last_twelve_lines(monkeypatch):
    stderr = "\n".join(f"/a/b/line{i}.py" for i in range(20))
    monkeypatch.setattr(dynamo.subprocess, "run", FakeRun(4, "", stderr))
    with pytest.raises(RuntimeError) as caught:
        logged_run("bad.py")
    assert str(caught.value) == "bad.py failed (exit 4):\n" + "\n".join(
        f"line{i}.py" for i in range(8, 20)
    )
    with pytest.raises(TypeError, match="script must be a path, got int"):
        logged_run(3)
    with pytest.raises(TypeError, match="logs must be a str"):
        logged_run("x.py", logs=["recompiles"])

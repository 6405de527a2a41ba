"""gpubook.dynamo: captured Dynamo logs and errors, trimmed of prefixes and machine paths."""

import sys

import pytest
import torch

from gpubook.dynamo import CapturedLog, captured_logs, short_error, trim


def test_trim_removes_log_prefix_and_paths():
    line = ("V1122 23:28:32.502000 11235 torch/_dynamo/symbolic_convert.py:5368] [0/0] [__graph_breaks] "
            "Graph break in user code at /tmp/ipykernel_123/4567.py:5")
    assert trim(line) == "Graph break in user code at <cell>:5"
    text = '  File "/home/someone/project/model.py", line 3'
    assert trim(text) == '  File "model.py", line 3'


def test_trim_keeps_urls_and_drops_guard_comments_on_request():
    url = "see https://docs.pytorch.org/docs/main/torch.compiler.html"
    assert trim(url) == url
    guard = "| +- EQUALS_MATCH: L['mode'] == 0          # if mode == 0:  # mp/x.py:4 in f"
    assert trim(guard, drop_comments=True) == "| +- EQUALS_MATCH: L['mode'] == 0"
    assert "# if mode" in trim(guard)


def test_trim_width_and_bad_input():
    assert trim("x" * 50, width=20) == "x" * 17 + "..."
    with pytest.raises(TypeError):
        trim(None)
    with pytest.raises(ValueError):
        trim("text", width=3)


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
    assert "/" + "tmp/" not in log.text and sys.prefix not in log.text
    assert capsys.readouterr().err == ""


def test_captured_logs_rejects_unknown_artifacts():
    with pytest.raises((TypeError, ValueError)):
        with captured_logs(no_such_artifact=True):
            pass


def test_short_error_cuts_user_traceback_and_paths():
    error = RuntimeError("Data-dependent branching\n  Hint: use torch.cond\n\nfrom user code:\n"
                         '   File "/home/someone/x.py", line 5, in f\n')
    assert short_error(error) == "RuntimeError: Data-dependent branching\n  Hint: use torch.cond"
    assert short_error(ValueError("a\nb\nc"), max_lines=2) == "ValueError: a\nb\n..."
    with pytest.raises(TypeError):
        short_error("not an exception")
    with pytest.raises(ValueError):
        short_error(error, max_lines=0)

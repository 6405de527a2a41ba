"""Seeing what ``torch.compile`` decided: Dynamo's logs and errors, trimmed for a page.

Dynamo explains itself through :mod:`torch._logging` artifacts (the same switches as the
``TORCH_LOGS`` environment variable: ``guards``, ``recompiles``, ``graph_breaks``, ...).
Those logs go to standard error with a timestamp, a process id, the path of the PyTorch
source file that wrote them and, in the message, paths of the user's own files. That is
right for a terminal and wrong for a book page. This module captures them and keeps what
a reader needs:

* :func:`captured_logs` switches artifacts on inside a ``with`` block and collects what
  they write (Python warnings raised inside are shown again after the block; the logging
  state the reader had, ``TORCH_LOGS`` included, is restored on exit);
* :func:`trim` removes log prefixes, machine paths and, optionally, the source comments
  Dynamo appends to each guard;
* :func:`short_error` turns an exception (for example the one ``fullgraph=True``
  raises at a graph break) into its first lines plus the reader's own file, line and
  source, without paths;
* :func:`graph_report`, :func:`count_compiles` and :func:`recompile_reasons` are the
  counting and reading helpers chapters 4 and 5 repeat;
* :func:`logged_run` runs a script in a fresh Python process with ``TORCH_LOGS`` set and
  returns what it logged, trimmed: the raw logs a reader sees in a terminal.

Nothing here changes what is compiled; it only changes where the explanations go.
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

__all__ = [
    "CapturedLog",
    "GraphReport",
    "captured_logs",
    "count_compiles",
    "graph_report",
    "logged_run",
    "recompile_reasons",
    "short_error",
    "trim",
]

# "V1122 23:28:32.502000 11235 torch/_dynamo/guards.py:5014] [0/0] [__guards] " and
# similar. The frame/compile id ("[0/1]") is kept when keep_ids=True; the artifact tag
# is always dropped.
_PREFIX = re.compile(r"^[VDIWEC]\d{4} [\d:.]+ +\d+ \S+\] ")
_IDS = re.compile(r"^((?:\[[^\]]*\] ?)*)")
# A file path with at least one folder (absolute, or relative as PyTorch sometimes
# shortens them): keep only the file name (a notebook cell becomes
# "<cell>").
_CELL_PATH = re.compile(r"[^\s\"'(]*ipykernel_\d+[\\/]\d+\.py")
_PATH = re.compile(
    r"(?<![\w:/.~-])(?:[A-Za-z]:)?[\w.+~-]*(?:[\\/][\w.+~-]+)*[\\/]([\w.+-]+\.[A-Za-z]\w*)"
)
# Guards and recompile reasons end in "  # <source line>  # <file>:<line> in
# <function>".
_COMMENT = re.compile(r"\s+#\s.*$")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')


def _strip_prefix(line: str, keep_ids: bool) -> str:
    match = _PREFIX.match(line)
    if not match:
        return line
    rest = line[match.end() :]
    ids = _IDS.match(rest).group(1)
    tags = re.findall(r"\[([^\]]*)\]", ids)
    kept = [f"[{t}]" for t in tags if keep_ids and not t.startswith("__")]
    body = rest[len(ids) :]
    return (" ".join(kept) + " " + body) if kept else body


def trim(
    text: str,
    *,
    drop_comments: bool = False,
    width: int | None = None,
    keep_ids: bool = False,
) -> str:
    """``text`` (a Dynamo log or message) without log prefixes or machine paths.

    ``drop_comments`` removes the ``# source line  # file:line in function`` comments
    that Dynamo appends to guards. ``width`` cuts lines longer than that many characters
    (marked with ``...``). ``keep_ids`` keeps the frame/compile id of each log line
    (``[0/1]``: frame 0, its second compile) and drops only the timestamp, process id
    and PyTorch source path. Blank lines at the start and end are removed.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if width is not None and (
        not isinstance(width, int) or isinstance(width, bool) or width < 10
    ):
        raise ValueError(f"width must be an int of at least 10 or None, got {width!r}")
    lines = []
    for line in text.splitlines():
        line = _strip_prefix(line, keep_ids)
        line = _CELL_PATH.sub("<cell>", line)
        line = _PATH.sub(r"\1", line)
        if drop_comments:
            line = _COMMENT.sub("", line)
        line = line.rstrip()
        if width is not None and len(line) > width:
            line = line[: width - 3] + "..."
        lines.append(line)
    return "\n".join(lines).strip("\n")


@dataclass
class CapturedLog:
    """What :func:`captured_logs` collected: the log text (trimmed) and the warnings."""

    raw: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The captured log without prefixes or machine paths (see :func:`trim`)."""
        return trim(self.raw)

    def lines(self, containing: str = "") -> list[str]:
        """Trimmed, non-empty lines of the log that contain ``containing``."""
        return [
            line
            for line in self.text.splitlines()
            if line.strip() and containing in line
        ]


def _logging_state():
    """A restorable copy of torch._logging's settings (None if the internals differ)."""
    internal = getattr(__import__("torch")._logging, "_internal", None)
    if (
        internal is None
        or not hasattr(internal, "log_state")
        or not hasattr(internal, "_init_logs")
    ):
        return None
    return internal, copy.deepcopy(internal.log_state)


def _restore_logging(saved) -> None:
    import torch

    if saved is None:
        torch._logging.set_logs()
        return
    internal, state = saved
    _set_state(internal, state)
    # _init_logs re-reads TORCH_LOGS when it is set, else applies `state`. Its parser
    # caches the object it returns, and set_logs edits the current state in place, so
    # drop the cache to parse TORCH_LOGS afresh.
    cache_clear = getattr(internal._parse_log_settings, "cache_clear", None)
    if cache_clear is not None:
        cache_clear()
    internal._init_logs()


def _set_state(internal, state) -> None:
    if hasattr(internal, "_set_log_state"):
        internal._set_log_state(state)
    else:
        internal.log_state = state


@contextlib.contextmanager
def captured_logs(
    show_warnings: bool = True, **artifacts: bool
) -> Iterator[CapturedLog]:
    """Switch on :func:`torch._logging.set_logs` artifacts in the block; capture them.

    Example: ``with captured_logs(recompiles=True) as log: ...``, then
    ``print(log.text)``.
    Everything PyTorch logs inside the block is captured instead of printed; its records
    of level WARNING and above (such as "hit config.recompile_limit") are also listed in
    ``log.warnings``. Python warnings raised inside the block are collected in
    ``log.warnings`` too and, with ``show_warnings=True`` (the default), issued again
    after the block, so the reader's warning filters decide whether they are shown. On
    exit the logging state from before the block is restored, including settings from
    ``TORCH_LOGS`` (which is set aside inside the block so that the requested artifacts
    take effect). Unknown artifact names raise PyTorch's own error.
    """
    import logging

    import torch

    if not isinstance(show_warnings, bool):
        raise TypeError(
            f"show_warnings must be a bool, got {type(show_warnings).__name__}"
        )
    captured = CapturedLog()
    buffer = io.StringIO()
    caught: list = []
    records: list[logging.LogRecord] = []

    class _Collect(logging.Handler):
        def emit(self, record):
            records.append(record)

    saved = _logging_state()
    env = os.environ.pop("TORCH_LOGS", None)
    collector = _Collect(level=logging.WARNING)
    # PyTorch's registered loggers do not propagate to their parents: listen on each.
    registry = getattr(getattr(torch._logging, "_internal", None), "log_registry", None)
    names = set(registry.get_log_qnames()) if registry is not None else set()
    listened = [logging.getLogger(name) for name in sorted(names | {"torch"})]
    try:
        # Older releases bind their stream handlers to sys.stderr as it is when set_logs
        # runs, newer ones follow sys.stderr: redirect it both while the handlers are
        # made and in the block.
        with (
            contextlib.redirect_stderr(buffer),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            if saved is not None:  # a fresh state object for set_logs to edit
                _set_state(saved[0], type(saved[1])())
            torch._logging.set_logs(**artifacts)
            for logger in listened:
                logger.addHandler(collector)
            yield captured
    finally:
        for logger in listened:
            logger.removeHandler(collector)
        if env is not None:
            os.environ["TORCH_LOGS"] = env
        _restore_logging(saved)
        captured.raw = buffer.getvalue()
        messages = [trim(r.getMessage()) for r in records]
        captured.warnings = [trim(str(w.message)) for w in caught or []] + messages
        if show_warnings:
            for w in caught or []:  # file name only: no machine path on the page
                name = re.split(r"[\\/]", str(w.filename))[-1]
                warnings.warn_explicit(w.message, w.category, name, w.lineno)


def _user_frames(user_code: str) -> list[str]:
    """``file:line in function: source`` per frame of Dynamo's "from user code:"."""
    frames, lines = [], user_code.splitlines()
    for index, line in enumerate(lines):
        match = _FRAME.match(line)
        if not match:
            continue
        path, number, function = match.groups()
        source = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if set(source) <= set("^~ ") or _FRAME.match(source):
            source = ""
        name = (
            "<cell>"
            if re.search(r"ipykernel_\d+", path)
            else re.split(r"[\\/]", path)[-1]
        )
        where = f"  {name}:{number} in {function}"
        frames.append(f"{where}: {source}" if source else where)
    return frames


def short_error(error: BaseException, max_lines: int = 12, frames: int = 3) -> str:
    """An exception's message, shortened for a page, without machine paths.

    Dynamo's errors have an explanation with hints, then ``from user code:`` (the
    reader's stack), then debugging advice. This keeps the class name and the first
    ``max_lines`` lines of the explanation (``...`` marks a cut), and the last
    ``frames`` frames of the user stack as ``file:line in function: source line``, the
    part that says where in the reader's code the problem is. ``frames=0`` leaves the
    stack out.
    """
    if not isinstance(error, BaseException):
        raise TypeError(f"error must be an exception, got {type(error).__name__}")
    for name, value in (("max_lines", max_lines), ("frames", frames)):
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or value < (name == "max_lines")
        ):
            raise ValueError(
                f"{name} must be an int of at least {int(name == 'max_lines')}, "
                f"got {value!r}"
            )
    message, _, user_code = str(error).partition("\nfrom user code:")
    message = message.split("\nSet TORCHDYNAMO_VERBOSE", 1)[0]
    user_code = user_code.split("\nSet TORCHDYNAMO_VERBOSE", 1)[0]
    lines = [line for line in trim(message).splitlines() if line.strip()]
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    stack = _user_frames(user_code)[-frames:] if frames else []
    if stack:
        lines += ["from user code:"] + stack
    return f"{type(error).__name__}: " + "\n".join(lines)


@dataclass
class GraphReport:
    """What :func:`graph_report` found: graphs, breaks, each reason's first line."""

    graphs: int
    breaks: int
    reasons: list[str]

    def __iter__(self):  # graphs, breaks, reasons = graph_report(...)
        return iter((self.graphs, self.breaks, self.reasons))


def graph_report(fn: Callable, *args: Any, **kwargs: Any) -> GraphReport:
    """``torch._dynamo.explain(fn)(*args, **kwargs)``, quietly, after a reset.

    Returns the number of graphs and of graph breaks and the first line of each break
    reason (machine paths removed). What ``fn`` prints and what Dynamo logs are not
    shown.
    """
    import torch

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    torch.compiler.reset()
    with captured_logs(show_warnings=False), contextlib.redirect_stdout(io.StringIO()):
        explanation = torch._dynamo.explain(fn)(*args, **kwargs)
    reasons = [
        trim(r.reason.strip().splitlines()[0]) for r in explanation.break_reasons
    ]
    # A break right before the end leaves an empty graph after it, which explain does
    # not count as a break; it still is one (Dynamo stopped tracing), so count the
    # reasons too.
    breaks = max(explanation.graph_break_count, len(reasons))
    return GraphReport(explanation.graph_count, breaks, reasons)


def count_compiles(
    fn: Callable, calls: Sequence[Sequence[Any]], **compile_options: Any
) -> int:
    """Graphs Dynamo compiled for the calls (the first compile included).

    ``fn`` is compiled afresh with a counting backend and called once per argument tuple
    in ``calls``."""
    import torch
    from torch._dynamo.testing import CompileCounter

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not calls:
        raise ValueError("calls must hold at least one tuple of arguments")
    torch.compiler.reset()
    counter = CompileCounter()
    compiled = torch.compile(fn, backend=counter, **compile_options)
    with captured_logs(show_warnings=False):
        for args in calls:
            compiled(*args)
    return counter.frame_count


def recompile_reasons(log: CapturedLog | str) -> list[str]:
    """The guard failures named in a ``recompiles`` log (``- 0/0: L['n'] == 3``).

    Without the ``0/0:`` id and without source comments."""
    text = log.text if isinstance(log, CapturedLog) else trim(log)
    return [
        trim(re.sub(r"^\s*-\s*\d+/\d+:\s*", "", line), drop_comments=True)
        for line in text.splitlines()
        if re.match(r"^\s*-\s*\d+/\d+:", line)
    ]


def logged_run(
    script: str,
    logs: str = "graph_breaks,recompiles",
    *,
    cwd: str | os.PathLike | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> tuple[str, str]:
    """Run ``python script`` in a fresh process with ``TORCH_LOGS=logs``.

    Returns ``(stdout, log)``: what the script printed, and what PyTorch logged to
    standard error with timestamps, process ids and machine paths removed but the
    frame/compile ids (``[0/1]``) kept (:func:`trim` with ``keep_ids=True``). A script
    that fails raises ``RuntimeError`` with the end of its standard error.
    """
    if not isinstance(script, (str, os.PathLike)):
        raise TypeError(f"script must be a path, got {type(script).__name__}")
    if not isinstance(logs, str):
        raise TypeError(
            f"logs must be a str such as 'graph_breaks,recompiles', got {logs!r}"
        )
    run_env = dict(os.environ, TORCH_LOGS=logs, PYTHONWARNINGS="ignore", **(env or {}))
    if not logs:  # an empty TORCH_LOGS makes `import torch` fail (torch 2.11 to 2.14)
        del run_env["TORCH_LOGS"]
    done = subprocess.run(
        [sys.executable, os.fspath(script)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=run_env,
        timeout=timeout,
    )
    if done.returncode != 0:
        tail = trim("\n".join(done.stderr.splitlines()[-12:]))
        raise RuntimeError(
            f"{os.fspath(script)} failed (exit {done.returncode}):\n{tail}"
        )
    return done.stdout, trim(done.stderr, keep_ids=True)

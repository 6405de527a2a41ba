"""Seeing what ``torch.compile`` decided: Dynamo's logs and errors, captured and trimmed for a page.

Dynamo explains itself through :mod:`torch._logging` artifacts (the same switches as the
``TORCH_LOGS`` environment variable: ``guards``, ``recompiles``, ``graph_breaks``, ...). Those logs
go to standard error with a timestamp, a process id, the path of the PyTorch source file that wrote
them and, in the message, paths of the user's own files. That is right for a terminal and wrong for
a book page. This module captures them and keeps what a reader needs:

* :func:`captured_logs` switches artifacts on inside a ``with`` block and collects what they write
  (and any Python warning) instead of printing it;
* :func:`trim` removes log prefixes, machine paths and, optionally, the source comments Dynamo
  appends to each guard;
* :func:`short_error` turns an exception (for example the one ``fullgraph=True`` raises at a graph
  break) into its first lines, without paths.

Nothing here changes what is compiled; it only changes where the explanations go.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass, field
from typing import Iterator

__all__ = ["CapturedLog", "captured_logs", "trim", "short_error"]

# "V1122 23:28:32.502000 11235 torch/_dynamo/guards.py:5014] [0/0] [__guards] " and similar.
_PREFIX = re.compile(r"^[VDIWEC]\d{4} [\d:.]+ +\d+ \S+\] (?:\[[^\]]*\] ?)*")
# A file path with at least one folder: keep only the file name (a notebook cell becomes "<cell>").
_CELL_PATH = re.compile(r"[^\s\"'(]*ipykernel_\d+[\\/]\d+\.py")
_PATH = re.compile(r"(?<![\w:/.])(?:[A-Za-z]:)?(?:[\\/][\w.+~-]+)+[\\/]([\w.+-]+\.\w+)")
# Guards and recompile reasons end in "  # <source line>  # <file>:<line> in <function>".
_COMMENT = re.compile(r"\s+#\s.*$")


def trim(text: str, *, drop_comments: bool = False, width: int | None = None) -> str:
    """``text`` (a Dynamo log or message) without log prefixes or machine paths.

    ``drop_comments`` removes the ``# source line  # file:line in function`` comments that Dynamo
    appends to guards. ``width`` cuts lines longer than that many characters (marked with ``...``).
    Blank lines at the start and end are removed.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if width is not None and (not isinstance(width, int) or width < 10):
        raise ValueError(f"width must be an int of at least 10 or None, got {width!r}")
    lines = []
    for line in text.splitlines():
        line = _PREFIX.sub("", line)
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
    """What :func:`captured_logs` collected: the log text (trimmed) and Python warnings."""

    raw: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The captured log without prefixes or machine paths (see :func:`trim`)."""
        return trim(self.raw)

    def lines(self, containing: str = "") -> list[str]:
        """Trimmed, non-empty lines of the log that contain ``containing`` (all when empty)."""
        return [line for line in self.text.splitlines() if line.strip() and containing in line]


@contextlib.contextmanager
def captured_logs(**artifacts: bool) -> Iterator[CapturedLog]:
    """Switch on :func:`torch._logging.set_logs` artifacts inside the block and capture their output.

    Example: ``with captured_logs(recompiles=True) as log: ...`` then ``print(log.text)``.
    Everything PyTorch logs inside the block (also warnings such as "hit config.recompile_limit")
    and every Python warning is captured instead of printed. On exit PyTorch's logging is reset to
    its defaults (``torch._logging.set_logs()``). Unknown artifact names raise PyTorch's own error.
    """
    import torch

    captured = CapturedLog()
    buffer = io.StringIO()
    caught: list = []
    try:
        # Older releases bind their stream handlers to sys.stderr as it is when set_logs runs, newer
        # ones follow sys.stderr: redirect it both while the handlers are made and in the block.
        with contextlib.redirect_stderr(buffer), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch._logging.set_logs(**artifacts)
            yield captured
    finally:
        torch._logging.set_logs()
        captured.raw = buffer.getvalue()
        captured.warnings = [trim(str(w.message)) for w in caught or []]


def short_error(error: BaseException, max_lines: int = 12) -> str:
    """The first ``max_lines`` meaningful lines of an exception's message, without machine paths.

    Dynamo's errors end in a user-code traceback and debugging advice; they are cut at
    ``from user code:`` so what remains is the explanation and the hints. The exception's class
    name comes first: ``Unsupported: Data-dependent branching ...``.
    """
    if not isinstance(error, BaseException):
        raise TypeError(f"error must be an exception, got {type(error).__name__}")
    if not isinstance(max_lines, int) or max_lines < 1:
        raise ValueError(f"max_lines must be a positive int, got {max_lines!r}")
    message = str(error).split("\nfrom user code:", 1)[0]
    message = message.split("\nSet TORCHDYNAMO_VERBOSE", 1)[0]
    lines = [line for line in trim(message).splitlines() if line.strip()]
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["..."]
    return f"{type(error).__name__}: " + "\n".join(lines)

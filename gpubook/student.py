"""The student edition: copies of the notebooks with outputs cleared and worked
solutions removed.

Usage::

    python -m gpubook.student notebooks/ --out student/  # every chapter, into student/
    python -m gpubook.student notebooks/05_graph_breaks.ipynb --out handout/

Instructors hand the copies out: every exercise is still there, its worked solution is
not, and no cell shows an output (learners produce their own). What is removed:

* every cell from a markdown cell that opens a ``{solution-start}`` directive through
  the markdown cell that opens the matching ``{solution-end}`` directive (text in those
  two cells before the start and after the end is kept, so an exercise written in the
  same cell as its ``{solution-start}`` survives);
* every single ``{solution}`` directive block inside a markdown cell (backtick, tilde or
  colon fence, nested fences included);
* all outputs and execution counts, and the reference run's provenance
  (``metadata.gpubook``), which no longer describes the copy.

Fenced blocks that are not solutions (an ``{exercise}``, a code sample) are copied
verbatim. A ``{solution-start}`` without its ``{solution-end}`` (or the reverse) is an
error that names the notebook and cell, never a silently truncated copy.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

__all__ = [
    "StudentSummary",
    "count_directives",
    "count_exercises",
    "count_solutions",
    "student_notebook",
    "write_student_edition",
    "main",
]

# An opening fence with a directive name: ```{name} args, ~~~{name}, :::{name} (MyST
# colon fence).
_DIRECTIVE = re.compile(
    r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[A-Za-z][\w-]*)\}"
)
# Any opening fence (a plain code block too), so that a block's contents are never read
# as markup.
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,}|:{3,})")

SOLUTION_BLOCK = "solution"
SOLUTION_START = "solution-start"
SOLUTION_END = "solution-end"
EXERCISE_NAMES = ("exercise", "exercise-start")
SOLUTION_NAMES = (SOLUTION_BLOCK, SOLUTION_START)

PROVENANCE_KEY = "gpubook"


def _closing_line(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the fenced block opened at ``lines[start]`` by
    ``fence``.

    A closing fence is a line of the same character, at least as long as the opening
    one, and nothing else. An unclosed block runs to the end of the cell (as in
    CommonMark): returns ``len(lines) - 1``.
    """
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for index in range(start + 1, len(lines)):
        if closing.match(lines[index]):
            return index
    return len(lines) - 1


def _directive_names(source: str) -> list[str]:
    """Names of the top-level directives opened in a markdown cell, in order.

    The contents of fenced blocks are not read: a code sample that shows directive
    markup is not a directive.
    """
    lines = source.splitlines()
    names = []
    index = 0
    while index < len(lines):
        directive = _DIRECTIVE.match(lines[index])
        fence = _FENCE.match(lines[index])
        if directive:
            names.append(directive.group("name"))
        if fence:
            index = _closing_line(lines, index, fence.group("fence"))
        index += 1
    return names


def count_directives(notebook: nbformat.NotebookNode, names: tuple[str, ...]) -> int:
    """How many top-level directives named one of ``names`` the notebook's markdown
    cells open."""
    return sum(
        name in names
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for name in _directive_names(cell.source)
    )


def count_exercises(notebook: nbformat.NotebookNode) -> int:
    """Number of exercises (``{exercise}`` and ``{exercise-start}`` directives) in
    ``notebook``."""
    return count_directives(notebook, EXERCISE_NAMES)


def count_solutions(notebook: nbformat.NotebookNode) -> int:
    """Number of worked solutions (``{solution}`` and ``{solution-start}``
    directives)."""
    return count_directives(notebook, SOLUTION_NAMES)


def _strip_markdown(
    source: str, in_solution: bool, where: str
) -> tuple[str | None, bool]:
    """Remove solution text from one markdown cell.

    Returns ``(text, in_solution)``: ``text`` is ``None`` when the cell is unchanged,
    else what is left of it (maybe empty); ``in_solution`` says whether a solution is
    still open after the cell.
    """
    lines = source.splitlines(keepends=True)
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        directive = _DIRECTIVE.match(line)
        name = directive.group("name") if directive else None
        if in_solution:
            if name == SOLUTION_END:
                in_solution = False
                index = _closing_line(lines, index, directive.group("fence")) + 1
            elif name == SOLUTION_START:
                raise ValueError(
                    f"{where}: a {{solution-start}} inside another solution (missing "
                    f"{{solution-end}})"
                )
            else:
                index += 1
            continue
        if name in (SOLUTION_START, SOLUTION_BLOCK):
            in_solution = name == SOLUTION_START
            index = _closing_line(lines, index, directive.group("fence")) + 1
            continue
        if name == SOLUTION_END:
            raise ValueError(
                f"{where}: a {{solution-end}} without a {{solution-start}} before it"
            )
        fence = _FENCE.match(line)
        if fence:  # any other fenced block: copied verbatim, contents not interpreted
            end = _closing_line(lines, index, fence.group("fence"))
            kept.extend(lines[index : end + 1])
            index = end + 1
            continue
        kept.append(line)
        index += 1
    return (None if kept == lines else "".join(kept).strip("\n")), in_solution


def _clear(cell: nbformat.NotebookNode) -> None:
    if cell.cell_type == "code":
        cell.outputs = []
        cell.execution_count = None
    cell.metadata.pop("execution", None)


def student_notebook(
    notebook: nbformat.NotebookNode, name: str = "notebook"
) -> nbformat.NotebookNode:
    """A copy of ``notebook`` with solutions removed and outputs cleared (``notebook``
    is unchanged).

    ``name`` is used in error messages. Raises :class:`ValueError` for unmatched
    ``{solution-start}``/``{solution-end}`` directives.
    """
    if not isinstance(notebook, nbformat.NotebookNode) or "cells" not in notebook:
        raise TypeError(
            f"notebook must be an nbformat NotebookNode, got {type(notebook).__name__}"
        )
    result = copy.deepcopy(notebook)
    result.metadata.pop(PROVENANCE_KEY, None)
    result.metadata.pop("widgets", None)
    cells = []
    in_solution = False
    start_cell = None
    for index, cell in enumerate(result.cells):
        if cell.cell_type != "markdown":
            if not in_solution:
                _clear(cell)
                cells.append(cell)
            continue
        was_in_solution = in_solution
        kept, in_solution = _strip_markdown(
            cell.source, in_solution, f"{name}, cell {index}"
        )
        if in_solution and not was_in_solution:
            start_cell = index
        if kept is None:  # nothing removed
            if not was_in_solution:
                cells.append(cell)
            continue
        if kept.strip():
            cell.source = kept
            _clear(cell)
            cells.append(cell)
    if in_solution:
        raise ValueError(
            f"{name}, cell {start_cell}: a {{solution-start}} without its "
            f"{{solution-end}}"
        )
    result.cells = cells
    return result


@dataclass(frozen=True)
class StudentSummary:
    """What :func:`write_student_edition` did to one notebook."""

    source: Path
    target: Path
    exercises: int
    solutions_removed: int
    cells_removed: int

    def __str__(self) -> str:
        return (
            f"{self.target}: {self.exercises} exercises kept, "
            f"{self.solutions_removed} solutions "
            f"and {self.cells_removed} cells removed, outputs cleared"
        )


def write_student_edition(
    targets: list[str | Path], out: str | Path
) -> list[StudentSummary]:
    """Write the student copy of every notebook in ``targets`` (files or folders) into
    ``out``.

    Folders are expanded into their ``NN_*.ipynb`` chapters, as for the reference run.
    Returns one :class:`StudentSummary` per notebook. Raises :class:`ValueError` if a
    copy would lose an exercise or keep a solution (a bug, never silently written).
    """
    from .reference import notebook_paths

    out = Path(out)
    paths = notebook_paths(list(targets))
    if not paths:
        raise FileNotFoundError(f"no notebooks found in {', '.join(map(str, targets))}")
    out.mkdir(parents=True, exist_ok=True)
    summaries = []
    for path in paths:
        original = nbformat.read(path, as_version=4)
        student = student_notebook(original, path.name)
        if count_exercises(student) != count_exercises(original) or count_solutions(
            student
        ):
            raise ValueError(
                f"{path.name}: the student copy lost an exercise or kept a solution"
            )
        nbformat.validate(student)
        target = out / path.name
        if target.resolve() == path.resolve():
            raise ValueError(
                f"--out must differ from the notebooks' folder: {target} would "
                f"overwrite {path}"
            )
        nbformat.write(student, target)
        summaries.append(
            StudentSummary(
                source=path,
                target=target,
                exercises=count_exercises(student),
                solutions_removed=count_solutions(original),
                cells_removed=len(original.cells) - len(student.cells),
            )
        )
    return summaries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpubook.student", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("targets", nargs="+", help="notebooks or folders of notebooks")
    parser.add_argument(
        "--out", required=True, help="folder for the student copies (e.g. student/)"
    )
    args = parser.parse_args(argv)
    try:
        summaries = write_student_edition(args.targets, args.out)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for summary in summaries:
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

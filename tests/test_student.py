"""The student edition (gpubook.student): outputs cleared, solutions gone, every
exercise kept, valid notebooks; checked on a small synthetic notebook and on every real
chapter."""

import re
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from conftest import NOTEBOOKS, ROOT
from gpubook import student

SOLUTION_MARKUP = re.compile(r"\{solution(?:-start|-end)?\}")
SECRET = "the worked answer"


def _synthetic():
    """Every way the book writes exercises and solutions, with outputs everywhere."""
    printed = new_output("stream", name="stdout", text="42\n")
    cells = [
        new_markdown_cell("# A chapter\n\nIntro text."),
        new_code_cell("x = 41 + 1\nprint(x)", execution_count=1, outputs=[printed]),
        # an exercise and the start of its gated solution in one cell
        new_markdown_cell(
            "## Exercises\n\n```{exercise} Quick: add one\n:label: ch99-ex1\n"
            "What is `x + 1`?\n```\n\n"
            "```{solution-start} ch99-ex1\n:class: dropdown\n```\n\nSolution prose: "
            + SECRET
            + "."
        ),
        new_code_cell(f"print('{SECRET}')", execution_count=2, outputs=[printed]),
        new_markdown_cell("More solution text: " + SECRET),
        # the end of the solution, followed by the next exercise in the same cell
        new_markdown_cell(
            "```{solution-end}\n```\n\n"
            "```{exercise-start} Change the measured example\n:label: ch99-ex2\n```"
        ),
        new_code_cell(
            "y = x * 2  # part of the exercise: kept",
            execution_count=3,
            outputs=[printed],
        ),
        new_markdown_cell("```{exercise-end}\n```"),
        # a single solution block, four backticks around a nested code fence
        new_markdown_cell(
            "````{solution} ch99-ex2\n:class: dropdown\n"
            + SECRET
            + "\n```python\ny = x * 2\n```\n````\n\nAfter the block."
        ),
        new_markdown_cell(
            ":::{exercise} Open question\n:label: ch99-ex3\nWhy?\n:::\n\n"
            ":::{solution} ch99-ex3\n" + SECRET + "\n:::"
        ),
        # a fenced code sample that merely shows the markup is copied verbatim
        new_markdown_cell("Markup sample:\n\n`````md\n```{solution} x\n```\n`````"),
    ]
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            },
            "gpubook": {"device_name": "H100", "code_hash": "abc"},
        },
    )
    nbformat.validate(notebook)
    return notebook


def _markdown(notebook):
    return "\n".join(
        cell.source for cell in notebook.cells if cell.cell_type == "markdown"
    )


def _assert_student_copy(original, copy, name):
    nbformat.validate(copy)
    for index, cell in enumerate(copy.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{name}, cell {index}: output left"
            )
        assert "execution" not in cell.metadata
    assert student.count_solutions(copy) == 0, f"{name}: a solution is left"
    assert student.count_exercises(copy) == student.count_exercises(original), (
        f"{name}: an exercise was lost"
    )
    assert "gpubook" not in copy.metadata, (
        f"{name}: the reference run's provenance was kept"
    )


def test_synthetic_notebook():
    original = _synthetic()
    before = nbformat.writes(original)
    copy = student.student_notebook(original, "synthetic")
    assert nbformat.writes(original) == before, "the original must not change"
    _assert_student_copy(original, copy, "synthetic")
    text = nbformat.writes(copy)
    assert SECRET not in text
    assert student.count_exercises(copy) == 3
    markdown = _markdown(copy)
    assert "What is `x + 1`?" in markdown and "After the block." in markdown
    assert "```{exercise-start} Change the measured example" in markdown
    assert "`````md\n```{solution} x\n```\n`````" in markdown, (
        "a code sample is not a solution"
    )
    sources = [cell.source for cell in copy.cells if cell.cell_type == "code"]
    assert sources == [
        "x = 41 + 1\nprint(x)",
        "y = x * 2  # part of the exercise: kept",
    ]
    assert len(copy.cells) == len(original.cells) - 2, (
        "the solution's code cell and prose cell are removed"
    )
    assert copy.metadata["kernelspec"]["language"] == "python"


@pytest.mark.parametrize(
    "cells, message",
    [
        (["```{solution-start} ex\n```", "text"], "without its {solution-end}"),
        (["```{solution-end}\n```"], "without a {solution-start}"),
        (
            ["```{solution-start} a\n```", "```{solution-start} b\n```"],
            "inside another solution",
        ),
    ],
)
def test_unmatched_solution_markers_are_errors(cells, message):
    notebook = new_notebook(cells=[new_markdown_cell(source) for source in cells])
    with pytest.raises(ValueError, match=re.escape(message)):
        student.student_notebook(notebook, "broken")


def test_bad_input():
    with pytest.raises(TypeError, match="NotebookNode"):
        student.student_notebook({"not": "a notebook"})
    with pytest.raises(FileNotFoundError):
        student.write_student_edition(["no-such-folder"], "out")


def test_summary_counts(tmp_path):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "99_synthetic.ipynb")
    [summary] = student.write_student_edition([source], tmp_path / "out")
    assert (summary.exercises, summary.solutions_removed, summary.cells_removed) == (
        3,
        3,
        2,
    )
    assert summary.source == source / "99_synthetic.ipynb"
    assert summary.target == tmp_path / "out" / "99_synthetic.ipynb"
    assert str(summary) == (
        f"{summary.target}: 3 exercises kept, 3 solutions and 2 cells removed, "
        "outputs cleared"
    )


def test_a_copy_that_loses_an_exercise_is_never_written(tmp_path, monkeypatch):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "99_synthetic.ipynb")
    real = student.student_notebook

    def lossy(notebook, name="notebook"):
        copy = real(notebook, name)
        copy.cells = [c for c in copy.cells if "ch99-ex3" not in c.source]
        return copy

    monkeypatch.setattr(student, "student_notebook", lossy)
    with pytest.raises(ValueError, match="lost an exercise"):
        student.write_student_edition([source], tmp_path / "out")
    assert not (tmp_path / "out" / "99_synthetic.ipynb").exists()


def test_main_in_process(tmp_path, capsys):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "99_synthetic.ipynb")
    assert student.main([str(source), "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out == (
        f"{tmp_path / 'out' / '99_synthetic.ipynb'}: 3 exercises kept, 3 solutions "
        "and 2 cells removed, "
        "outputs cleared\n"
    )
    assert (
        student.main([str(tmp_path / "nothing-here"), "--out", str(tmp_path / "out")])
        == 1
    )
    assert "error:" in capsys.readouterr().err


def test_directive_counts_skip_code_samples():
    notebook = new_notebook(
        cells=[
            new_markdown_cell(
                "```{exercise} a\n```\n\n````md\n```{exercise} sample\n```\n````"
            ),
            new_markdown_cell(":::{solution} a\ntext\n:::"),
            new_code_cell("```{exercise} not markdown```"),
        ]
    )
    assert student.count_exercises(notebook) == 1
    assert student.count_solutions(notebook) == 1
    assert student.count_directives(notebook, ("exercise", "solution")) == 2


@pytest.mark.slow
def test_command_line(tmp_path):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(_synthetic(), source / "99_synthetic.ipynb")
    out = tmp_path / "student"
    result = subprocess.run(
        [sys.executable, "-m", "gpubook.student", str(source), "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "3 exercises kept, 3 solutions" in result.stdout
    written = nbformat.read(out / "99_synthetic.ipynb", as_version=4)
    _assert_student_copy(_synthetic(), written, "99_synthetic")
    # the copy must never overwrite the originals
    assert student.main([str(source), "--out", str(source)]) == 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_real_notebooks(path, tmp_path):
    original = nbformat.read(path, as_version=4)
    (summary,) = student.write_student_edition([path], tmp_path)
    copy = nbformat.read(summary.target, as_version=4)
    _assert_student_copy(original, copy, path.name)
    assert not SOLUTION_MARKUP.search(_markdown(copy)), (
        f"{path.name}: solution markup left"
    )
    # counted here independently of gpubook.student: opening fences of solution
    # directives
    openings = re.findall(
        r"^ {0,3}(?:`{3,}|~{3,}|:{3,})\{solution(?:-start)?\}",
        _markdown(original),
        re.M,
    )
    assert summary.solutions_removed == len(openings)
    assert summary.exercises == len(
        re.findall(
            r"^ {0,3}(?:`{3,}|~{3,}|:{3,})\{exercise(?:-start)?\}",
            _markdown(original),
            re.M,
        )
    )
    assert summary.cells_removed == len(original.cells) - len(copy.cells)
    code = [cell.source for cell in copy.cells if cell.cell_type == "code"]
    assert code and code[0] == next(
        c.source for c in original.cells if c.cell_type == "code"
    ), "the setup cell is kept"

"""The reference run's bookkeeping: stored errors fail, stale notebooks are listed, and
the generated pages (book/reference-results.md, book/_generated/run-times.md) are in
step with the notebooks."""

import difflib
import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from conftest import NOTEBOOKS, ROOT
from gpubook import reference

REGENERATE = "python -m gpubook.reference results"


def _diff(expected: str, actual: str, name: str) -> str:
    lines = difflib.unified_diff(
        actual.splitlines(),
        expected.splitlines(),
        f"{name} (committed)",
        f"{name} (from the notebooks)",
        lineterm="",
        n=1,
    )
    return "\n".join(list(lines)[:40])


# --- The book's own notebooks
# ---------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_stored_errors(path):
    """``reference check`` finds no stored error outside cells tagged
    ``raises-exception``."""
    _, broken = reference.check_notebook(path)
    assert not broken, "\n".join(broken)


def test_check_lists_stale_notebooks_and_fails_only_on_errors(capsys):
    """``reference check`` over the book: one "stale" line per stale notebook
    (refreshing needs a GPU, so they do not fail it), and exit status 1 only for stored
    errors."""
    stale = [m for path in NOTEBOOKS for m in reference.check_notebook(path)[0]]
    broken = [m for path in NOTEBOOKS for m in reference.check_notebook(path)[1]]
    status = reference.main(["check", str(ROOT / "notebooks")])
    out = capsys.readouterr().out
    assert status == (1 if broken else 0)
    printed = [
        line
        for line in out.splitlines()
        if line.startswith("stale (refresh on a GPU): ")
    ]
    assert printed == [f"stale (refresh on a GPU): {m}" for m in stale]


@pytest.mark.parametrize(
    "relative, generate",
    [
        (reference.RESULTS_PAGE, reference.results_page),
        (reference.TIMES_PAGE, reference.times_page),
    ],
    ids=["reference-results", "run-times"],
)
def test_generated_page_is_in_step_with_the_notebooks(relative, generate):
    page = ROOT / relative
    assert page.exists(), f"{relative} is missing: run `{REGENERATE}` and commit it"
    expected, actual = generate(ROOT), page.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{relative} is out of step with the notebooks: run `{REGENERATE}` and "
        "commit it\n" + _diff(expected, actual, relative.name)
    )


# --- The machinery, on notebooks made here
# ---------------------------------------------------------


def _glued_headline(key, record):
    """A stored output exactly as myst-nb's glue writes it (hidden, text form of the
    dict)."""
    return new_output(
        "display_data",
        data={"application/papermill.record/text/plain": repr(record)},
        metadata={
            "scrapbook": {
                "name": f"headline_{key}",
                "mime_prefix": "application/papermill.record/",
            }
        },
    )


RECORD = {
    "case": "matmul 4096 | float32",
    "device": "NVIDIA H100 80GB HBM3",
    "torch": "2.11.0",
    "baseline": "eager",
    "baseline_seconds": 2e-3,
    "optimized": "compiled",
    "optimized_seconds": 5e-4,
    "speedup": 4.0,
    "limit_fraction": 0.62,
    "limit": "peak TF32",
}


def _book(tmp_path, *, profile="gpu", stale=False, error=False):
    """A small book folder: one chapter with a headline and provenance, one without a
    run."""
    (tmp_path / "notebooks").mkdir()
    code = new_code_cell(
        "gpubook.headline(...)",
        execution_count=1,
        outputs=[
            _glued_headline("matmul", RECORD),
            _glued_headline("copy", {**RECORD, "case": "copy", "limit_fraction": None}),
        ],
    )
    if error:
        code.outputs.append(
            new_output("error", ename="RuntimeError", evalue="boom", traceback=[])
        )
    chapter = new_notebook(
        cells=[new_markdown_cell("# Tensors on the GPU\n\nText."), code]
    )
    chapter.metadata["gpubook"] = {
        "device_name": "NVIDIA H100 80GB HBM3",
        "device": "cuda",
        "torch": "2.11.0",
        "triton": "3.5.0",
        "numpy": "2.3.0",
        "python": "3.11.7",
        "date": "2026-11-23 10:00 UTC",
        "profile": profile,
        "run_seconds": 123.4,
        "code_hash": "0" * 16 if stale else reference.code_hash(chapter),
    }
    nbformat.write(chapter, tmp_path / "notebooks" / "01_tensors.ipynb")
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# Setup check")]),
        tmp_path / "notebooks" / "00_setup.ipynb",
    )
    return tmp_path


def test_headlines_are_read_back_from_glued_outputs(tmp_path):
    notebook = nbformat.read(
        _book(tmp_path) / "notebooks" / "01_tensors.ipynb", as_version=4
    )
    records = reference.headlines(notebook)
    assert [r["key"] for r in records] == ["matmul", "copy"]
    assert (
        records[0]["optimized_seconds"] == 5e-4 and records[1]["limit_fraction"] is None
    )


def test_unreadable_headline_is_a_clear_error(tmp_path):
    notebook = new_notebook(
        cells=[new_code_cell("x", outputs=[_glued_headline("bad", "not a dict")])]
    )
    notebook.cells[0].outputs[0].data["application/papermill.record/text/plain"] = (
        "headline: <object at 0x1>"
    )
    with pytest.raises(ValueError, match="headline_bad"):
        reference.headlines(notebook, "demo.ipynb")


def test_results_page_has_the_table_and_provenance(tmp_path):
    page = reference.results_page(_book(tmp_path))
    assert page.startswith("<!-- Generated by `python -m gpubook.reference results`")
    assert (
        "| [Tensors on the GPU](../notebooks/01_tensors.ipynb) | matmul 4096 \\| "
        "float32 | NVIDIA H100" in page
    )
    assert "| – | eager: 2 ms | compiled: 500 µs | 4× | – | 62% of peak TF32 |" in page
    assert "| copy |" in page and "| 4× | – | – |" in page
    assert (
        "- [Tensors on the GPU](../notebooks/01_tensors.ipynb): NVIDIA H100 80GB "
        "HBM3 · torch 2.11.0 · "
        "Triton 3.5.0 · NumPy 2.3.0 · profile `gpu` · 2026-11-23 10:00 UTC · 2.1 min\n"
    ) in page
    assert "- [Setup check](../notebooks/00_setup.ipynb): no recorded run." in page
    assert "took 2.1 min in all (1 of 2 notebooks)" in page


def test_results_page_flags_stale_and_non_gpu_runs(tmp_path):
    page = reference.results_page(_book(tmp_path, profile="cpu", stale=True))
    assert (
        "2.1 min. **Note:** code changed since its recorded run; its recorded run "
        "used the 'cpu' profile, not 'gpu'." in page
    )


def test_results_page_without_headlines(tmp_path):
    (tmp_path / "notebooks").mkdir()
    assert "No chapter has recorded a headline figure yet." in reference.results_page(
        tmp_path
    )


def test_times_page_combines_gpu_run_and_cpu_times(tmp_path):
    root = _book(tmp_path)
    assert "| Tensors on the GPU | 2.1 min | – |" in reference.times_page(root)
    reference._record_cpu_time(
        root, root / "notebooks" / "01_tensors.ipynb", 95.04, after=[]
    )
    data = json.loads((root / reference.CPU_TIMES_FILE).read_text())
    assert data["notebooks"]["01_tensors.ipynb"]["seconds"] == 95.0
    page = reference.times_page(root)
    assert page.startswith("<!-- Generated by `python -m gpubook.reference times`")
    assert (
        "| Tensors on the GPU | 2.1 min | 1.6 min |" in page
        and "| Setup check | – | – |" in page
    )
    assert "| **Total** | **2.1 min** | **1.6 min** |" in page
    assert "GPU (NVIDIA H100 80GB HBM3, `gpu` sizes)" in page and "`cpu` sizes)" in page


def test_times_page_gives_each_gpu_kinds_chapters_apart(tmp_path):
    root = _book(tmp_path)
    assert "of which on" not in reference.times_page(root)  # one kind: no split
    first = root / "notebooks" / "01_tensors.ipynb"
    other = nbformat.read(first, as_version=4)
    other.metadata["gpubook"].update(device_name="NVIDIA H200", run_seconds=50.0)
    nbformat.write(other, root / "notebooks" / "09_more.ipynb")
    page = reference.times_page(root)
    assert "| **Total** | **2.9 min** |" in page
    assert "| *of which on NVIDIA H100 80GB HBM3 (1 chapter)* | *2.1 min* | |" in page
    assert "| *of which on NVIDIA H200 (1 chapter)* | *50 s* | |" in page


def test_cli_check_fails_on_stored_errors_only(tmp_path, capsys):
    root = _book(tmp_path, stale=True)
    assert reference.main(["check", str(root / "notebooks")]) == 0
    assert "stale (refresh on a GPU): 01_tensors.ipynb" in capsys.readouterr().out
    shutil.rmtree(root / "notebooks")
    root = _book(tmp_path, profile="cpu")
    assert reference.main(["check", str(root / "notebooks")]) == 0
    assert (
        "01_tensors.ipynb: its recorded run used the 'cpu' profile, not 'gpu'"
        in capsys.readouterr().out
    )
    shutil.rmtree(root / "notebooks")
    root = _book(tmp_path, error=True)
    assert reference.main(["check", str(root / "notebooks")]) == 1
    assert (
        "BROKEN: 01_tensors.ipynb, cell 1: stored error RuntimeError: boom"
        in capsys.readouterr().out
    )


def test_cli_writes_both_pages(tmp_path, capsys):
    root = _book(tmp_path)
    assert reference.main(["--root", str(root), "results"]) == 0
    assert (root / reference.RESULTS_PAGE).read_text() == reference.results_page(root)
    assert (root / reference.TIMES_PAGE).read_text() == reference.times_page(root)


@pytest.mark.slow
def test_run_records_provenance_and_cpu_times_leave_the_notebook_alone(
    tmp_path, monkeypatch
):
    """End to end, through a real kernel: ``run`` executes in place, records provenance
    and the headline that :func:`gpubook.headline` glued; ``cpu-times`` executes without
    writing."""
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "01_demo.ipynb"
    source = (
        "import gpubook\n"
        "gpubook.headline('demo', 'a case', baseline_seconds=2e-3, "
        "optimized_seconds=1e-3,"
        " limit_fraction=0.5, limit='copy bandwidth')\n"
        "print('done')"
    )
    notebook = new_notebook(cells=[new_markdown_cell("# Demo"), new_code_cell(source)])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, path)
    record = reference.run_notebook(path, profile="ci")
    assert record["profile"] == "ci" and record["code_hash"] == reference.code_hash(
        notebook
    )
    executed = nbformat.read(path, as_version=4)
    assert executed.metadata["gpubook"] == record
    [headline] = reference.headlines(executed)
    assert headline["case"] == "a case" and headline["speedup"] == pytest.approx(2.0)
    assert headline["limit_fraction"] == 0.5 and headline["limit"] == "copy bandwidth"
    before = path.read_bytes()
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    seconds = reference.cpu_time_notebook(path)
    assert path.read_bytes() == before
    assert 0 < seconds < 600


# --- Provenance, the profile variable, staleness of the helpers and of the CPU times
# ----------------


def test_run_notebook_restores_the_profile_variable(tmp_path, monkeypatch):
    """The profile is set for the kernel while the notebook runs, and put back
    afterwards."""
    path = tmp_path / "01_demo.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("1")]), path)
    seen = []
    monkeypatch.setattr(
        reference,
        "_execute",
        lambda nb, p, t: seen.append(os.environ.get("GPUBOOK_PROFILE")) or 1.5,
    )
    monkeypatch.setenv("GPUBOOK_PROFILE", "cpu")
    record = reference.run_notebook(path, profile="ci")
    assert seen == ["ci"] and record["profile"] == "ci" and record["run_seconds"] == 1.5
    assert os.environ["GPUBOOK_PROFILE"] == "cpu", "the caller's profile is restored"
    monkeypatch.delenv("GPUBOOK_PROFILE")
    reference.run_notebook(path, profile="gpu")
    assert seen[-1] == "gpu" and "GPUBOOK_PROFILE" not in os.environ, (
        "an unset variable stays unset"
    )

    def boom(nb, p, t):
        raise RuntimeError("kernel died")

    monkeypatch.setattr(reference, "_execute", boom)
    with pytest.raises(RuntimeError, match="kernel died"):
        reference.run_notebook(path, profile="ci")
    assert "GPUBOOK_PROFILE" not in os.environ, "restored after a failure too"
    with pytest.raises(ValueError, match="laptop"):
        reference.run_notebook(path, profile="laptop")


def test_cpu_time_notebook_restores_the_profile_variable(tmp_path, monkeypatch):
    path = tmp_path / "01_demo.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("1")]), path)
    seen = []
    monkeypatch.setattr(
        reference,
        "_execute",
        lambda nb, p, t: seen.append(os.environ.get("GPUBOOK_PROFILE")) or 2.0,
    )
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    monkeypatch.setenv("GPUBOOK_PROFILE", "ci")
    assert reference.cpu_time_notebook(path) == 2.0
    assert seen == ["cpu"] and os.environ["GPUBOOK_PROFILE"] == "ci"
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    with pytest.raises(RuntimeError, match="without a GPU"):
        reference.cpu_time_notebook(path)


def test_provenance_records_hardware_and_hashes(monkeypatch):
    from gpubook import environment

    facts = {
        "device_name": "NVIDIA H100 80GB HBM3",
        "device": "cuda",
        "torch": "2.11.0",
        "triton": "3.6.0",
        "numpy": "2.5.2",
        "python": "3.12.3",
        "date": "2026-11-23 10:00 UTC",
        "cpu": "Xeon",
        "cpu_count": 32,
        "cpu_physical_cores": 16,
        "sm_clock_mhz": 1980,
        "power_limit_w": 700.0,
        "max_sm_clock_mhz": None,
    }
    asked = []
    monkeypatch.setattr(
        environment,
        "collect",
        lambda hardware=False: asked.append(hardware) or dict(facts),
    )
    notebook = new_notebook(cells=[new_code_cell("x = 1")])
    record = reference.provenance(notebook, "gpu", 12.345)
    assert asked == [True]
    assert record["run_seconds"] == 12.3 and record["profile"] == "gpu"
    assert record["code_hash"] == reference.code_hash(notebook)
    assert record["gpubook_hash"] == reference.package_hash()
    assert record["bytecode_cache"] is True  # this test environment has the .pyc files
    assert (record["cpu"], record["cpu_count"], record["cpu_physical_cores"]) == (
        "Xeon",
        32,
        16,
    )
    assert record["sm_clock_mhz"] == 1980 and record["power_limit_w"] == 700.0
    assert "max_sm_clock_mhz" not in record, "facts NVML could not read are left out"


def test_code_hash_sees_code_cells_only():
    a = new_notebook(
        cells=[new_markdown_cell("# A"), new_code_cell("x = 1"), new_code_cell("y = 2")]
    )
    b = new_notebook(
        cells=[
            new_markdown_cell("# B, other prose"),
            new_code_cell("x = 1"),
            new_code_cell("y = 2"),
        ]
    )
    c = new_notebook(cells=[new_code_cell("y = 2"), new_code_cell("x = 1")])
    d = new_notebook(cells=[new_code_cell("x = 1y = 2")])
    assert reference.code_hash(a) == reference.code_hash(b)
    assert (
        len({reference.code_hash(a), reference.code_hash(c), reference.code_hash(d)})
        == 3
    )
    assert len(reference.code_hash(a)) == 16


def test_package_hash_changes_with_any_module(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("x = 1\n")
    (package / "b.py").write_text("y = 2\n")
    (package / "notes.txt").write_text("not code")
    before = reference.package_hash(package)
    (package / "notes.txt").write_text("changed, still not code")
    assert reference.package_hash(package) == before
    (package / "b.py").write_text("y = 3\n")
    assert reference.package_hash(package) != before
    (package / "b.py").write_text("y = 2\n")
    assert reference.package_hash(package) == before
    (package / "b.py").rename(package / "c.py")
    assert reference.package_hash(package) != before, "a renamed module counts too"
    assert len(before) == 16


def test_changed_helpers_are_a_note_not_staleness(tmp_path, capsys):
    root = _book(tmp_path)
    path = root / "notebooks" / "01_tensors.ipynb"
    notebook = nbformat.read(path, as_version=4)
    record = notebook.metadata["gpubook"]
    assert reference.package_notes(record) == [], (
        "a run recorded without the hash: no note"
    )
    record["gpubook_hash"] = reference.package_hash()
    assert reference.package_notes(record) == []
    record["gpubook_hash"] = "0" * 16
    [note] = reference.package_notes(record)
    assert "gpubook package changed" in note
    assert reference.staleness(notebook, record) == [], (
        "not stale: only the helpers changed"
    )
    nbformat.write(notebook, path)
    assert reference.main(["check", str(root / "notebooks")]) == 0
    out = capsys.readouterr().out
    assert "note: 01_tensors.ipynb: the gpubook package changed" in out
    assert "stale (refresh on a GPU): 01_tensors" not in out


def test_times_page_marks_cpu_times_of_older_code(tmp_path):
    root = _book(tmp_path)
    path = root / "notebooks" / "01_tensors.ipynb"
    reference._record_cpu_time(root, path, 95.04, after=[])
    assert "1.6 min |" in reference.times_page(
        root
    ) and "older code" not in reference.times_page(root)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[1].source += "\nprint('changed')"
    nbformat.write(notebook, path)
    page = reference.times_page(root)
    assert "| Tensors on the GPU | 2.1 min | 1.6 min (older code) |" in page
    assert (
        "*(older code)*: the CPU time was measured before the notebook's code last "
        "changed" in page
    )


def test_results_page_shows_interval_verdict_and_mode(tmp_path):
    root = tmp_path
    (root / "notebooks").mkdir()
    compared = {
        **RECORD,
        "speedup": 3.9,
        "speedup_low": 3.5,
        "speedup_high": 4.25,
        "verdict": "faster",
        "mode": "throughput",
        "comparable": True,
        "note": None,
    }
    dtypes = {
        **RECORD,
        "case": "float32 vs float64",
        "speedup": 2.0,
        "comparable": False,
        "note": "different dtypes",
    }
    cell = new_code_cell(
        "x", outputs=[_glued_headline("a", compared), _glued_headline("b", dtypes)]
    )
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# Chapter"), cell]),
        root / "notebooks" / "01_c.ipynb",
    )
    page = reference.results_page(root)
    assert (
        "| throughput | eager: 2 ms | compiled: 500 µs | 3.90× [3.50×, 4.25×] | faster "
        "| 62% of peak TF32 |" in page
    )
    table = page.split("## Where")[0]
    assert "float32 vs float64" not in table.split("Also recorded")[0], (
        "not a headline speedup"
    )
    assert (
        "- [Chapter](../notebooks/01_c.ipynb): float32 vs float64; eager: 2 ms, "
        "compiled: 500 µs. "
        "Not a like-for-like speedup: different dtypes."
    ) in page
    assert "2×" not in page


def test_execute_runs_the_notebook_in_its_folder_and_times_it(tmp_path, monkeypatch):
    """_execute with nbclient's client faked: the arguments it is given, and the wall
    time."""
    import nbclient

    made = []

    class FakeClient:
        def __init__(self, notebook, **options):
            made.append((notebook, options))

        def execute(self):
            clock.append(clock[-1] + 7.5)

    clock = [100.0]
    monkeypatch.setattr(nbclient, "NotebookClient", FakeClient)
    monkeypatch.setattr(reference.time, "perf_counter", lambda: clock[-1])
    notebook = new_notebook(cells=[new_code_cell("1")])
    seconds = reference._execute(notebook, tmp_path / "sub" / "01_x.ipynb", 123)
    assert seconds == 7.5
    [(given, options)] = made
    assert given is notebook
    hooks = {name: options.pop(name) for name in ("on_cell_start", "on_cell_executed")}
    assert options == {
        "timeout": 123,
        "kernel_name": "python3",
        "resources": {"metadata": {"path": str(tmp_path / "sub")}},
        "shutdown_kernel": "immediate",  # a graceful exit is no part of the run
    }
    assert all(callable(hook) for hook in hooks.values())


def test_execute_reports_slow_cells_and_where_it_stopped(tmp_path, monkeypatch, capsys):
    """A code cell over the threshold is printed with its time; a failure names the cell
    that was running."""
    import nbclient

    cells = [
        new_markdown_cell("# t"),
        new_code_cell("\nslow()  # long"),
        new_code_cell("x"),
    ]

    class FakeClient:
        def __init__(self, notebook, **options):
            self.options = options

        def execute(self):
            for index, cell in enumerate(cells):
                self.options["on_cell_start"](cell=cell, cell_index=index)
                clock.append(clock[-1] + (20.0 if index == 1 else 1.0))
                if index == 2 and fail:
                    raise KeyboardInterrupt
                self.options["on_cell_executed"](cell=cell, cell_index=index)

    clock = [0.0]
    monkeypatch.setattr(nbclient, "NotebookClient", FakeClient)
    monkeypatch.setattr(reference.time, "perf_counter", lambda: clock[-1])
    monkeypatch.delenv(reference.SLOW_CELL_VARIABLE, raising=False)
    fail = False
    reference._execute(new_notebook(cells=cells), tmp_path / "a.ipynb", 10)
    out = capsys.readouterr().out
    assert out == "    cell 1: 20.0 s | slow()  # long\n"
    fail = True
    with pytest.raises(KeyboardInterrupt):
        reference._execute(new_notebook(cells=cells), tmp_path / "a.ipynb", 10)
    assert capsys.readouterr().out.endswith("    stopped in cell 2 after 1 s | x\n")


def test_pages_fall_back_for_missing_fields(tmp_path):
    """Records and provenance from older runs lack fields: the pages say so instead of
    failing, and compute what they can."""
    (tmp_path / "notebooks").mkdir()
    minimal = {"case": "c", "baseline_seconds": 3e-3, "optimized_seconds": 1e-3}
    cell = new_code_cell(
        "x",
        outputs=[
            _glued_headline("a", minimal),
            _glued_headline("b", {**minimal, "case": "d", "speedup_low": 2.0}),
            _glued_headline("c", {**minimal, "case": "e", "limit_fraction": 0.5}),
            _glued_headline("d", {**minimal, "case": "f", "comparable": False}),
        ],
    )
    chapter = new_notebook(cells=[new_markdown_cell("# Ch"), cell])
    chapter.metadata["gpubook"] = {"code_hash": reference.code_hash(chapter)}
    nbformat.write(chapter, tmp_path / "notebooks" / "01_c.ipynb")
    page = reference.results_page(tmp_path)
    assert (
        "| [Ch](../notebooks/01_c.ipynb) | c |  | – | eager: 3 ms | compiled: 1 ms | "
        "3× | – | – |" in page
    )
    assert "| d |  | – | eager: 3 ms | compiled: 1 ms | 3× | – | – |" in page, (
        "half an interval: none"
    )
    assert "| 50% of the hardware limit |" in page
    assert "Not a like-for-like speedup: see the chapter." in page
    assert (
        "- [Ch](../notebooks/01_c.ipynb): ? · torch ? · Triton ? · NumPy ? · profile "
        "`?` · ? · 0 s" in page
    )
    empty = tmp_path / "empty"
    (empty / "notebooks").mkdir(parents=True)
    assert "No notebooks yet." in reference.results_page(empty)


def test_results_page_names_the_chapter_once_and_counts_gpu_time(tmp_path):
    root = _book(tmp_path)
    page = reference.results_page(root)
    rows = [
        line for line in page.splitlines() if line.startswith("| ") and "eager:" in line
    ]
    assert rows[0].startswith(
        "| [Tensors on the GPU](../notebooks/01_tensors.ipynb) | "
    )
    assert rows[1].startswith("|  | copy | ")
    assert "The recorded GPU runs took 2.1 min in all (1 of 2 notebooks)." in page


def test_unreadable_headline_names_the_notebook(tmp_path):
    notebook = new_notebook(
        cells=[new_code_cell("x", outputs=[_glued_headline("h", {"case": "c"})])]
    )
    with pytest.raises(
        ValueError, match=r"^demo\.ipynb: glued headline_h is not a headline record"
    ):
        reference.headlines(notebook, "demo.ipynb")
    with pytest.raises(ValueError, match=r"^notebook: glued headline_h"):
        reference.headlines(notebook)


def test_headlines_read_execute_results_and_skip_other_outputs():
    record = {"case": "c", "baseline_seconds": 2.0, "optimized_seconds": 1.0}
    result = new_output(
        "execute_result",
        data={"text/plain": repr(record)},
        metadata={"scrapbook": {"name": "headline_r"}},
        execution_count=1,
    )
    stream = new_output("stream", name="stdout", text="headline_x")
    unnamed = new_output("display_data", data={"text/plain": repr(record)})
    notebook = new_notebook(
        cells=[
            new_markdown_cell("# x"),
            new_code_cell("x", outputs=[stream, unnamed, result]),
        ]
    )
    assert reference.headlines(notebook) == [{**record, "key": "r"}]
    bare = new_notebook(cells=[new_code_cell("x")])
    del bare.cells[0]["outputs"]
    assert reference.headlines(bare) == []


def test_cpu_times_start_from_an_empty_compile_cache(tmp_path, monkeypatch):
    """``cpu-times`` runs the notebooks of one call in one new, empty compile cache,
    records which ran before each in it, restores the variables and removes the folder;
    the times page says so, and marks times recorded without it."""
    root = _book(tmp_path)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/warm/inductor")
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    seen = []

    def fake_cpu_time(path, timeout):
        folder = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
        assert Path(os.environ["TRITON_CACHE_DIR"]).parent == folder.parent
        seen.append((path.name, folder, sorted(folder.parent.rglob("*"))))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{path.stem}.kernel").write_text("compiled")
        return 10.0

    monkeypatch.setattr(reference, "cpu_time_notebook", fake_cpu_time)
    notebooks = [root / "notebooks" / n for n in ("00_setup.ipynb", "01_tensors.ipynb")]
    argv = ["--root", str(root), "cpu-times", *map(str, notebooks)]
    assert reference.main(argv) == 0
    (name0, folder0, content0), (name1, folder1, content1) = seen
    assert folder0 == folder1 and str(folder0) != "/warm/inductor"
    assert content0 == [], "the cache starts empty"
    assert folder0 / "00_setup.kernel" in content1, "shared by the call's notebooks"
    assert not folder0.parent.exists(), "removed after the call"
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == "/warm/inductor"
    assert "TRITON_CACHE_DIR" not in os.environ
    data = reference._read_cpu_times(root)["notebooks"]
    assert data["00_setup.ipynb"]["fresh_cache_after"] == []
    assert data["01_tensors.ipynb"]["fresh_cache_after"] == ["00_setup.ipynb"]
    page = reference.times_page(root)
    assert "starts from an empty compile cache" in page and "(cache?)" not in page
    reference._record_cpu_time(root, notebooks[1], 95.04)
    page = reference.times_page(root)
    assert "| Tensors on the GPU | 2.1 min | 1.6 min (cache?) |" in page
    assert "*(cache?)*: measured before `cpu-times` started from an empty" in page


def test_cpu_time_record_fields(tmp_path, monkeypatch):
    root = _book(tmp_path)
    path = root / "notebooks" / "01_tensors.ipynb"
    monkeypatch.setattr(reference, "_cpu_machine", lambda: "Xeon, 2 cores")
    monkeypatch.setattr("torch.__version__", "2.14.1+cu130")
    monkeypatch.setattr(reference.platform, "python_version", lambda: "3.11.7")
    reference._record_cpu_time(root, path, 95.04)
    reference._record_cpu_time(root, root / "notebooks" / "00_setup.ipynb", 1.26)
    data = json.loads((root / reference.CPU_TIMES_FILE).read_text(encoding="utf-8"))
    entry = data["notebooks"]["01_tensors.ipynb"]
    assert entry == {
        "seconds": 95.0,
        "machine": "Xeon, 2 cores",
        "torch": "2.14.1",
        "python": "3.11.7",
        "date": entry["date"],
        "code_hash": reference.code_hash(nbformat.read(path, as_version=4)),
    }
    assert (
        len(entry["date"]) == 10 and entry["date"][4] == "-" and entry["date"][7] == "-"
    )
    assert list(data["notebooks"]) == ["00_setup.ipynb", "01_tensors.ipynb"], (
        "sorted by name"
    )
    assert data["notebooks"]["00_setup.ipynb"]["seconds"] == 1.3
    (root / reference.CPU_TIMES_FILE).write_text('{"other": 1}', encoding="utf-8")
    assert reference._read_cpu_times(root) == {"other": 1, "notebooks": {}}


def test_write_pages_writes_both_files(tmp_path):
    root = _book(tmp_path)
    written = reference.write_pages(root)
    assert written == [root / reference.RESULTS_PAGE, root / reference.TIMES_PAGE]
    assert written[0].read_text(encoding="utf-8") == reference.results_page(root)
    assert written[1].read_text(encoding="utf-8") == reference.times_page(root)


@pytest.mark.parametrize(
    "margins, text",
    [
        ([None, None], "reaches into ±5% around 1)"),
        ([0.1, 0.1], "reaches into ±10% around 1)"),
        ([None, 0.1], "±5% or ±10% (the margin each chapter's run used) around 1)"),
    ],
)
def test_results_page_names_the_margins_its_verdicts_used(
    tmp_path, monkeypatch, margins, text
):
    root = _book(tmp_path)
    real = reference.headlines

    def with_margins(notebook, name="notebook"):
        records = real(notebook, name)
        for record, margin in zip(records, margins):
            record.update(verdict="faster", margin=margin)
        return records

    monkeypatch.setattr(reference, "headlines", with_margins)
    page = " ".join(reference.results_page(root).split())
    assert text in page


def test_a_failed_run_keeps_its_cells_in_the_failed_folder(tmp_path, monkeypatch):
    """GPUBOOK_FAILED_DIR gets the notebook as far as it ran; the original is kept."""
    path = tmp_path / "01_x.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("1")]), path)
    before = path.read_bytes()

    def stopped(notebook, path, timeout):
        notebook.cells[0].outputs = [new_output("stream", name="stdout", text="ran\n")]
        raise KeyboardInterrupt

    monkeypatch.setattr(reference, "_execute", stopped)
    monkeypatch.setenv(reference.FAILED_DIR_VARIABLE, str(tmp_path / "failed"))
    with pytest.raises(KeyboardInterrupt):
        reference.run_notebook(path, profile="ci")
    kept = nbformat.read(tmp_path / "failed" / "01_x.ipynb", as_version=4)
    assert kept.cells[0].outputs[0].text == "ran\n"
    assert path.read_bytes() == before
    monkeypatch.delenv(reference.FAILED_DIR_VARIABLE)
    (tmp_path / "failed" / "01_x.ipynb").unlink()
    with pytest.raises(KeyboardInterrupt):
        reference.run_notebook(path, profile="ci")
    assert not (tmp_path / "failed" / "01_x.ipynb").exists()


def test_adopt_run_refuses_a_notebook_that_this_code_did_not_run(tmp_path):
    """tools/adopt-run.sh stops, naming the notebook, when a run's notebook carries no
    `gpu` record for the code here (a chapter that failed comes back unexecuted), and
    changes nothing in notebooks/."""
    import subprocess
    import tarfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    name = "01_tensors_and_gpu_offload.ipynb"
    staged = tmp_path / "staged" / "notebooks"
    staged.mkdir(parents=True)
    notebook = nbformat.read(root / "notebooks" / name, as_version=4)
    notebook.metadata[reference.METADATA_KEY] = {"profile": "cpu", "code_hash": "x"}
    nbformat.write(notebook, staged / name)
    archive = tmp_path / "notebooks.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(staged, arcname="notebooks")
    before = (root / "notebooks" / name).read_bytes()
    done = subprocess.run(
        [
            "bash",
            str(root / "tools" / "adopt-run.sh"),
            str(tmp_path / "run"),
            str(archive),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert done.returncode != 0
    assert f"not executed from this code under the gpu profile: {name}" in done.stderr
    assert (root / "notebooks" / name).read_bytes() == before
    usage = subprocess.run(
        ["bash", str(root / "tools" / "adopt-run.sh")], text=True, capture_output=True
    )
    assert usage.returncode == 2 and "usage" in usage.stderr


def test_results_page_marks_a_one_sided_verdict(tmp_path):
    """A headline recorded with one-sided words shows them, marked, and the page says
    what the mark means; a page without one has no such note."""
    root = tmp_path
    (root / "notebooks").mkdir()
    one_sided = {
        **RECORD,
        "speedup": 1.18,
        "speedup_low": 1.17,
        "speedup_high": 1.19,
        "verdict": "at least as fast",
        "two_sided": "no clear difference",
        "margin": 0.2,
        "mode": "latency",
        "comparable": True,
        "note": None,
    }
    cell = new_code_cell("x", outputs=[_glued_headline("a", one_sided)])
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# Chapter"), cell]),
        root / "notebooks" / "01_c.ipynb",
    )
    page = reference.results_page(root)
    assert "| at least as fast *(one-sided)* |" in page
    assert "*(one-sided)*: the gain repeats in direction" in page
    (row,) = [line for line in page.splitlines() if "*(one-sided)* |" in line]
    assert "no clear difference" not in row  # the two-sided verdict is not shown
    assert "±20%" not in page  # the one-sided words use no margin
    two_sided = {**one_sided, "verdict": "faster", "two_sided": None}
    cell = new_code_cell("x", outputs=[_glued_headline("a", two_sided)])
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# Chapter"), cell]),
        root / "notebooks" / "01_c.ipynb",
    )
    assert "(one-sided)" not in reference.results_page(root)

"""``python -m gpubook.reference compare``: glued values of two runs, numbers and
verdicts."""

import math

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_notebook, new_output

from gpubook import reference

PREFIX = "application/papermill.record/"


def _glued(name, text, prefix=PREFIX):
    return new_output(
        "display_data",
        data={prefix + "text/plain": text},
        metadata={"scrapbook": {"name": name, "mime_prefix": prefix}},
    )


def _notebook(**glued):
    outputs = [_glued(name, text) for name, text in glued.items()]
    outputs.append(new_output("stream", name="stdout", text="not glued\n"))
    return new_notebook(cells=[new_code_cell("x", outputs=outputs)])


@pytest.mark.parametrize(
    "text, value",
    [
        ("2.5", 2.5),
        ("42", 42),
        ("np.float64(1.5)", 1.5),
        ("np.int64(7)", 7),
        ("268,435,456", 268435456.0),
        ("-1,000.5", -1000.5),
        ("faster", "faster"),
        ("'quoted'", "quoted"),
        ("no clear difference", "no clear difference"),
        ("1, 16, 32", [1, 16, 32]),
        ("(1, 2)", [1, 2]),
        ("[0.5, 2]", [0.5, 2]),
        ("True", True),
        ("{'a': 1}", {"a": 1}),
        ("233 µs", "233 µs"),
        ("<Figure size 640x480 with 1 Axes>", "<Figure size 640x480 with 1 Axes>"),
        ("(1, 'a')", "(1, 'a')"),
    ],
)
def test_parse_glued(text, value):
    parsed = reference.parse_glued(text)
    assert parsed == value and type(parsed) is type(value)


def test_glued_values_reads_both_prefixes_last_wins_and_skips_figures():
    figure = new_output(
        "display_data",
        data={PREFIX + "image/png": "iVBOR"},
        metadata={"scrapbook": {"name": "fig", "mime_prefix": PREFIX}},
    )
    shown = _glued(
        "shown", ["1", "2"], prefix=""
    )  # displayed glue, text stored as a list of lines
    notebook = new_notebook(
        cells=[
            new_code_cell("a", outputs=[_glued("x", "1.0"), figure, shown]),
            new_code_cell("b", outputs=[_glued("x", "2.0"), _glued("v", "faster")]),
        ]
    )
    assert reference.glued_values(notebook) == {"x": 2.0, "shown": 12, "v": "faster"}
    assert list(reference.glued_values(notebook)) == ["shown", "x", "v"], (
        "a re-glued name moves last"
    )


def test_flatten_headlines_strings_lists_bools():
    headline = {
        "case": "c",
        "baseline_seconds": 2.0,
        "optimized_seconds": 0.5,
        "speedup": 4.0,
        "speedup_low": 3.5,
        "speedup_high": 4.5,
        "verdict": "faster",
    }
    assert reference._flatten("headline_a", headline) == (
        {
            "headline_a.speedup": 4.0,
            "headline_a.speedup_low": 3.5,
            "headline_a.speedup_high": 4.5,
        },
        {"headline_a.verdict": "faster"},
    )
    old = {"case": "c", "baseline_seconds": 3.0, "optimized_seconds": 1.5}
    assert reference._flatten("h", old) == ({"h.speedup": 2.0}, {})
    assert reference._flatten("t", "233 µs") == ({"t": pytest.approx(233e-6)}, {})
    assert reference._flatten("t", "1.5 s") == ({"t": 1.5}, {})
    assert reference._flatten("t", "2 min") == ({"t": 120.0}, {})
    assert reference._flatten("r", "4.8x") == ({"r": 4.8}, {})
    assert reference._flatten("n", "a 3.5x gain in 20 ms") == (
        {"n#0": 3.5, "n#1": pytest.approx(0.02)},
        {"n": "a # gain in #"},
    )
    assert reference._flatten("d", "NVIDIA H100 80GB HBM3") == (
        {},
        {"d": "NVIDIA H100 80GB HBM3"},
    )
    assert reference._flatten("k", "triton_mm_14 won") == (
        {},
        {"k": "triton_mm_14 won"},
    )
    assert reference._flatten("l", [1, 2.5]) == ({"l[0]": 1.0, "l[1]": 2.5}, {})
    assert reference._flatten("b", True) == ({}, {"b": "True"})
    assert reference._flatten("i", 3) == ({"i": 3.0}, {})
    assert reference._flatten("o", {"x": 1, "y": "slow"}) == (
        {"o.x": 1.0},
        {"o.y": "slow"},
    )


def test_one_sided_headline_compares_by_its_shown_words_only():
    """A headline's two_sided verdict (kept beside one-sided words) is not compared:
    two runs with the same words and different two-sided verdicts agree; a record
    written before the one-sided words, with its two-sided verdict shown, differs."""
    one_sided = {
        "case": "c",
        "baseline_seconds": 1.2,
        "optimized_seconds": 1.0,
        "speedup": 1.2,
        "speedup_low": 1.15,
        "speedup_high": 1.25,
        "verdict": "at least as fast",
        "two_sided": "no clear difference",
    }
    passed_margin = {**one_sided, "speedup_low": 1.21, "two_sided": "faster"}
    _, words_a = reference._flatten("headline_f", one_sided)
    _, words_b = reference._flatten("headline_f", passed_margin)
    assert words_a == words_b == {"headline_f.verdict": "at least as fast"}
    older = {**one_sided, "verdict": "no clear difference"}
    del older["two_sided"]
    assert reference._flatten("headline_f", older)[1] != words_a


@pytest.mark.parametrize(
    "a, b, moved",
    [
        (1.0, 1.25, False),
        (1.0, 1.26, True),
        (1.0, 0.75, False),
        (1.0, 0.74, True),
        (-2.0, -2.4, False),
        (0.0, 0.0, False),
        (0.0, 1e-9, True),
        (2.0, math.inf, True),
        (math.nan, 1.0, True),
        (4.8, 12.8, True),
    ],
)
def test_moved_is_relative_to_the_first_run(a, b, moved):
    assert reference._moved(a, b, 0.25) is moved


@given(st.floats(1e-6, 1e6), st.floats(0.01, 0.9), st.floats(-0.99, 0.99))
def test_moved_property(a, threshold, change):
    b = a * (1 + change)
    assert reference._moved(a, b, threshold) == (abs(b - a) / a > threshold)


def _runs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    headline_a = repr(
        {
            "case": "c",
            "baseline_seconds": 2.0,
            "optimized_seconds": 0.5,
            "speedup": 4.8,
            "verdict": "faster",
        }
    )
    headline_b = repr(
        {
            "case": "c",
            "baseline_seconds": 2.0,
            "optimized_seconds": 0.2,
            "speedup": 12.8,
            "verdict": "faster",
        }
    )
    nbformat.write(
        _notebook(
            x="1.0",
            y="2.0",
            v="faster",
            s="3.0x in 20 ms",
            headline_h=headline_a,
            gone="1",
        ),
        a / "01_a.ipynb",
    )
    nbformat.write(
        _notebook(
            x="1.1",
            y="3.0",
            v="slower",
            s="3.1x in 21 ms",
            headline_h=headline_b,
            new="2",
        ),
        b / "01_a.ipynb",
    )
    nbformat.write(_notebook(z="5"), a / "02_only_a.ipynb")
    return a, b


def test_compare_runs_reports_moved_numbers_and_changed_verdicts(tmp_path):
    a, b = _runs(tmp_path)
    result = reference.compare_runs(a, b, threshold=0.25)
    assert result.moved == [
        ("01_a.ipynb", "y", 2.0, 3.0),
        ("01_a.ipynb", "headline_h.speedup", 4.8, 12.8),
    ]
    assert result.changed == [("01_a.ipynb", "v", "faster", "slower")]
    assert (result.numbers, result.numbers_within) == (
        5,
        3,
    )  # x, y, s#0, s#1, headline speedup
    assert (result.verdicts, result.verdicts_unchanged) == (
        3,
        2,
    )  # v, s's words, headline verdict
    assert result.only_a == ["01_a.ipynb: gone"] and result.only_b == [
        "01_a.ipynb: new"
    ]
    assert result.unmatched == [f"02_only_a.ipynb (only in {a})"]
    assert result.share_within == 0.6
    assert result.summary() == (
        "compare: 3 of 5 glued numbers within ±25% (60.0%); "
        "2 of 3 glued verdicts unchanged; "
        "2 glued values in one run only; 1 notebooks in one folder only"
    )


def test_compare_cli_prints_each_change_and_the_summary(tmp_path, capsys):
    a, b = _runs(tmp_path)
    assert reference.main(["compare", str(a), str(b), "--threshold", "0.6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "moved    01_a.ipynb  headline_h.speedup: 4.8 -> 12.8 (+167%)"
    assert "changed  01_a.ipynb  v: 'faster' -> 'slower'" in lines
    assert lines[-1].startswith(
        "compare: 4 of 5 glued numbers within ±60% (80.0%); 2 of 3 glued verdicts"
    )


def test_identical_runs_compare_clean(tmp_path):
    a, _ = _runs(tmp_path)
    result = reference.compare_runs(a, a)
    assert (
        result.moved == []
        and result.changed == []
        and result.only_a == result.only_b == []
    )
    assert result.summary() == (
        "compare: 7 of 7 glued numbers within ±25% (100.0%); "
        "3 of 3 glued verdicts unchanged"
    )


def test_compare_rejects_bad_input(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing"):
        reference.compare_runs(tmp_path / "missing", tmp_path)
    for threshold in (0, -0.1, math.inf, math.nan, True):
        with pytest.raises(ValueError, match="threshold"):
            reference.compare_runs(tmp_path, tmp_path, threshold)


def test_empty_comparison():
    result = reference.RunComparison(0.25)
    assert result.share_within == 1.0
    assert result.report() == (
        "compare: 0 of 0 glued numbers within ±25% (100.0%); "
        "0 of 0 glued verdicts unchanged"
    )


def test_comparison_markdown_escapes_a_bar_in_a_label():
    import gpubook

    result = gpubook.compare(
        {"a | b": lambda: None, "c": lambda: None},
        rounds=3,
        min_run_time=0.001,
    )
    table = result._repr_markdown_()
    row = next(line for line in table.splitlines() if line.startswith("| a"))
    assert row.startswith("| a \\| b |")
    assert row.count(" | ") == table.splitlines()[0].count(" | ")


def test_compare_reports_each_runs_host_probe(tmp_path):
    a, b = _runs(tmp_path)
    for folder, probe in ((a, [1.6, 1.7]), (b, [1.0, 1.1])):
        path = folder / "01_a.ipynb"
        notebook = nbformat.read(path, as_version=4)
        notebook.metadata[reference.METADATA_KEY] = {"host_add_us": probe}
        nbformat.write(notebook, path)
    result = reference.compare_runs(a, b)
    assert result.hosts == [("01_a.ipynb", [1.6, 1.7], [1.0, 1.1])]
    assert (
        "host     01_a.ipynb  torch.add on the CPU (before, after the run): "
        "1.60 µs, 1.70 µs -> 1.00 µs, 1.10 µs"
    ) in result.report().splitlines()
    assert reference.compare_runs(a, a).hosts[0][1] == [1.6, 1.7]


def test_host_notes_speak_only_when_the_host_drifted():
    assert reference.host_notes({}) == []
    assert reference.host_notes({"host_add_us": [1.6, 1.8]}) == []
    (note,) = reference.host_notes({"host_add_us": [1.58, 2.92]})
    assert "1.58 µs before, 2.92 µs after" in note
    assert reference.host_notes({"host_add_us": [0, 1.0]}) == []


def test_host_notes_speak_when_the_probe_toggled():
    steady = {
        "host_add_us": [1.4, 1.45],
        "host_add_us_samples": [[1.4] * 5, [1.45] * 5],
    }
    assert reference.host_notes(steady) == []
    toggled = {
        "host_add_us": [1.4, 1.45],
        "host_add_us_samples": [[1.35, 1.4, 2.9, 1.4, 1.41], [1.45] * 5],
    }
    (note,) = reference.host_notes(toggled)
    assert "toggled" in note and "1.35 to 2.90 µs" in note
    bad = {"host_add_us_samples": [[0, -1, "x"], []]}  # nothing usable: no note
    assert reference.host_notes(bad) == []


def test_host_gpu_classifications_are_counted_apart_from_verdicts():
    a = _notebook(
        split="'mixed (GPU busy 51% of the call)'",
        bound="'host-bound'",
        says="'faster'",
    )
    b = _notebook(
        split="'host-bound (GPU busy 44% of the call)'",
        bound="'host-bound'",
        says="'faster'",
    )
    result = reference.compare_notebooks(a, b, name="nb")
    assert (result.verdicts, result.verdicts_unchanged) == (1, 1)
    assert (result.classifications, result.classifications_unchanged) == (2, 1)
    assert result.changed == [] and len(result.reclassified) == 1
    assert "1 of 2 host/GPU classifications unchanged" in result.summary()
    assert "reclassified  nb  split" in result.report()
    # a sentence that merely contains the words is a verdict like any other
    assert not reference.is_classification("both calls are host-bound, so ...")
    assert reference.is_classification("GPU-bound (GPU busy # of the call)")


def test_classification_words_are_split_bound_words():
    # reference keeps its own copy of the words (no torch import there): in step
    from gpubook.profiling import Split

    words = {
        Split(wall=1.0, gpu=busy, kernels_per_call=1, launches_per_call=1).bound
        for busy in (None, 0.0, 0.29, 0.3, 0.79, 0.8, 1.0)
    }
    assert words == set(reference._BOUND_WORDS)


def test_host_dependent_numbers_are_counted_apart(tmp_path):
    # 00_setup_check lists smoke_compile (a compile time) as host-dependent
    for folder, (compile_s, speed) in {"a": (4.0, 2.0), "b": (2.0, 2.1)}.items():
        (tmp_path / folder).mkdir()
        nbformat.write(
            _notebook(smoke_compile=str(compile_s), other=str(speed)),
            tmp_path / folder / "00_setup_check.ipynb",
        )
    result = reference.compare_runs(tmp_path / "a", tmp_path / "b")
    assert (result.numbers, result.numbers_within) == (2, 1)
    assert (result.host_numbers, result.host_numbers_within) == (1, 0)
    assert (result.other_numbers, result.other_share_within) == (1, 1.0)
    assert result.summary().startswith(
        "compare: 1 of 2 glued numbers within ±25% (50.0%) [1 of 1 (100.0%) that do "
        "not depend on the host CPU; 0 of 1 (0.0%) that do]"
    )
    assert result.report().splitlines()[0].endswith("(-50%) (host)")


def test_host_dependent_verdicts_are_counted_apart(tmp_path):
    # 04 lists ch04_eager_vs_static (a host-bound call) and so its _verdict word too
    runs = {
        "a": ("'no clear difference'", "'faster'"),
        "b": ("'slower'", "'faster'"),
    }
    for folder, (host_word, other_word) in runs.items():
        (tmp_path / folder).mkdir()
        nbformat.write(
            _notebook(ch04_eager_vs_static_verdict=host_word, other_says=other_word),
            tmp_path / folder / "04_recompilation_and_dynamic_shapes.ipynb",
        )
    result = reference.compare_runs(tmp_path / "a", tmp_path / "b")
    assert (result.verdicts, result.verdicts_unchanged) == (2, 1)
    assert (result.host_verdicts, result.host_verdicts_unchanged) == (1, 0)
    assert (
        "1 of 2 glued verdicts unchanged [1 of 1 that do not depend on the host CPU; "
        "0 of 1 that do]"
    ) in result.summary()
    assert "'slower' (host)" in result.report()


def test_a_verdict_follows_its_listed_ratio_only():
    nb = "04_recompilation_and_dynamic_shapes.ipynb"
    assert reference.is_host_dependent_verdict(nb, "ch04_eager_vs_static_verdict")
    assert reference.is_host_dependent_verdict(nb, "ch04_mark_vs_true_says")
    assert not reference.is_host_dependent_verdict(nb, "ch04_eager_vs_static_x")
    assert not reference.is_host_dependent_verdict(nb, "ch04_unlisted_verdict")
    assert not reference.is_host_dependent_verdict("99_unknown.ipynb", "x_verdict")


def test_is_host_dependent_matches_whole_glue_names():
    assert reference.is_host_dependent("00_setup_check.ipynb", "smoke_compile")
    assert reference.is_host_dependent(
        "06_compiling_numpy.ipynb", "headline_ch06_rowsums.speedup_low"
    )
    assert reference.is_host_dependent(
        "x/02_modules_for_computation.ipynb", "ladder_python"
    )
    assert not reference.is_host_dependent("00_setup_check.ipynb", "smoke_compile_x")
    assert not reference.is_host_dependent(
        "01_tensors_and_gpu_offload.ipynb", "mul_gbs"
    )
    assert not reference.is_host_dependent("99_unknown.ipynb", "smoke_compile")


def test_host_dependent_file_rejects_an_undescribed_group(tmp_path):
    path = tmp_path / "host.json"
    path.write_text('{"groups": {}, "notebooks": {"a.ipynb": {"cpu": ["x"]}}}')
    with pytest.raises(ValueError, match="group 'cpu' is not described"):
        reference.host_dependent_patterns(path)


def test_every_host_dependent_pattern_names_a_glued_value():
    """A renamed glue key must not silently leave the list: each pattern matches a
    name the notebook glues (in its stored outputs) or references (in its prose)."""
    import re
    from pathlib import Path

    notebooks = Path(reference.__file__).resolve().parent.parent / "notebooks"
    patterns = reference.host_dependent_patterns()
    reference_name = re.compile(r"\{glue(?::\w+)?\}`([A-Za-z_]\w*)")
    for file_name, compiled in patterns.items():
        notebook = nbformat.read(notebooks / file_name, as_version=4)
        names = set(reference.glued_values(notebook))
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                names.update(reference_name.findall(cell.source))
        for pattern in compiled:
            assert any(pattern.fullmatch(name) for name in names), (
                file_name,
                pattern.pattern,
            )


def test_numbers_of_a_reworded_sentence_are_not_compared_slot_by_slot():
    # a branch chose another sentence: its numbers fill other slots, so comparing #0
    # with #0 would compare unrelated quantities; the change counts once, as a verdict
    a = _notebook(cause="'new memory: 17.5 to 37.3 ms, against 39.5 ms'", n="2.0")
    b = _notebook(
        cause="'no clear gap (46.7 ms vs 37.6 ms; ratio 1.24x [0.94x, 1.57x])'",
        n="2.1",
    )
    result = reference.compare_notebooks(a, b, name="nb")
    assert (result.numbers, result.numbers_within) == (1, 1)  # n only
    assert (result.verdicts, result.verdicts_unchanged) == (1, 0)
    assert result.unaligned == [("nb", "cause", 3)]
    assert result.only_a == result.only_b == [] and result.moved == []
    assert "; 3 numbers in 1 sentence that changed, not compared" in result.summary()
    assert "unaligned  nb  cause: 3 numbers in a changed sentence" in result.report()
    # the same words: compared slot by slot as before
    same = reference.compare_notebooks(a, a, name="nb")
    assert (same.numbers, same.unaligned) == (4, [])

"""gpubook.seeds: the claims as data, the verdict rules, the glued records, the page."""

from dataclasses import dataclass

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from conftest import ROOT
from gpubook import seeds


@dataclass
class FakeRatio:
    """The attributes of gpubook.Ratio that seeds reads."""

    estimate: float
    low: float
    high: float
    verdict: str


# --- the data ------------------------------------------------------------------


def test_every_seed_has_claims_with_what_the_table_needs():
    assert (
        {c["seed"] for c in seeds.CLAIMS.values()}
        == set(seeds.SEEDS)
        == {"000", "001", "002", "004"}
    )
    for key, data in seeds.CLAIMS.items():
        assert ("k" + key).isidentifier() and key.startswith(data["seed"] + "_"), key
        assert data["claim"] and data["chapter"] in ("06", "07"), key
        assert data["factor"] is None or data["factor"] > 1, key


def test_seed_001_is_quoted_exactly():
    claims = seeds.CLAIMS
    assert (
        claims["001_gpu_arrays_f64"]["factor"] == 8
        and claims["001_gpu_arrays_f64"]["dtype"] == "float64"
    )
    assert (
        claims["001_gpu_arrays_f32"]["factor"] == 11
        and claims["001_gpu_arrays_f32"]["dtype"] == "float32"
    )
    assert claims["001_gpu_tensors_f32"]["factor"] == 200
    assert "float32 arrays" in claims["001_gpu_tensors_f32"]["claim"]
    assert all(
        "RTX 2060" in claims[k]["seed_hardware"]
        for k in claims
        if k.startswith("001_gpu")
    )


# --- the verdict rules ---------------------------------------------------------


@pytest.mark.parametrize(
    "factor, measured, expected",
    [
        # far above the seed's figure: holds, with no "larger here" detail (it came
        # and went between runs with the interval's width)
        (8.0, FakeRatio(40.0, 38.0, 42.0, "faster"), ("holds", "")),
        (57.0, FakeRatio(67.4, 61.7, 78.3, "faster"), ("holds", "")),
        (1.3, FakeRatio(1.62, 1.35, 1.65, "faster"), ("holds", "")),
        (1.3, FakeRatio(1.61, 1.60, 1.66, "faster"), ("holds", "")),
        (8.0, FakeRatio(5.0, 4.0, 6.0, "faster"), ("holds", "")),  # 5 >= 1 + 7/2
        # the estimate decides, not a wide interval's upper end
        (
            9.0,
            FakeRatio(3.29, 3.21, 5.88, "faster"),
            ("does not hold", "faster, by less than half the claimed gain"),
        ),
        (
            8.0,
            FakeRatio(3.0, 2.8, 3.2, "faster"),
            ("does not hold", "faster, by less than half the claimed gain"),
        ),
        (
            8.0,
            FakeRatio(1.01, 0.97, 1.04, "no clear difference"),
            ("does not hold", "no clear difference here"),
        ),
        (1.3, FakeRatio(0.8, 0.7, 0.9, "slower"), ("does not hold", "slower here")),
        (None, FakeRatio(1.2, 1.1, 1.3, "faster"), ("holds", "")),
        (None, 0.5, ("does not hold", "slower here")),
        (9.0, 9.0, ("holds", "")),
        (None, True, ("holds", "")),
        (None, False, ("does not hold", "")),
        (9.0, None, ("not measured", "")),
    ],
)
def test_verdict_rules(factor, measured, expected):
    assert seeds.verdict(factor, measured) == expected


def test_not_comparable_wins_over_the_numbers():
    assert seeds.verdict(8.0, 40.0, comparable=False) == ("not comparable", "")


@pytest.mark.parametrize(
    "measured", ["8x", float("nan"), -2.0, FakeRatio(2.0, 1.5, 2.5, "wins")]
)
def test_bad_measurement_is_a_clear_error(measured):
    with pytest.raises(ValueError, match="measured"):
        seeds.verdict(8.0, measured)


# --- claim() -------------------------------------------------------------------


def test_claim_fills_in_the_catalogue_and_computes_the_verdict():
    record = seeds.claim(
        "001_gpu_tensors_f32",
        measured=FakeRatio(300.0, 280.0, 320.0, "faster"),
        how="NumPy float32 vs CUDA tensors, float32",
        glue=False,
    )
    assert (
        record["verdict"] == "holds"
        and record["seed"] == "001"
        and record["factor"] == 200
    )
    assert (
        record["measured_text"] == "300x [280x, 320x]"
        and record["seed_figure"] == "200x"
    )
    assert "RTX 2060" in record["seed_hardware"] and record["torch"]
    assert "holds" in repr(record)


def test_claim_of_fact_and_not_measured():
    assert (
        seeds.claim("001_device_context", measured=False, glue=False)["verdict"]
        == "does not hold"
    )
    record = seeds.claim("001_gpu_arrays_f64", measured=None, glue=False)
    assert (
        record["verdict"] == "not measured"
        and record["measured_text"] == "not measured in this run"
    )


def test_new_key_needs_its_seed_claim_and_hardware():
    with pytest.raises(ValueError, match="seed, claim, seed_hardware"):
        seeds.claim("002_resnet18_max_autotune", measured=1.5, glue=False)
    record = seeds.claim(
        "002_resnet18_max_autotune",
        measured=1.5,
        glue=False,
        seed="002",
        claim="ResNet-18 with max-autotune is faster",
        seed_hardware="L20",
    )
    assert record["verdict"] == "holds" and record["factor"] is None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(key="not a key"), "letters, digits"),
        (dict(key="001_cpu_1core", comparable=False), "why"),
        (dict(key="001_cpu_1core", comparable="no", why="x"), "comparable"),
        (dict(key="001_cpu_1core", factor=-1.0), "factor"),
        (
            dict(key="new_one", seed="003", claim="c", seed_hardware="h"),
            "seed must be one of",
        ),
    ],
)
def test_claim_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        seeds.claim(measured=2.0, glue=False, **kwargs)


# --- collecting and the page ---------------------------------------------------


def _glued(key, record):
    return new_output(
        "display_data",
        data={"application/papermill.record/text/plain": repr(dict(record))},
        metadata={
            "scrapbook": {
                "name": f"seedclaim_{key}",
                "mime_prefix": "application/papermill.record/",
            }
        },
    )


def test_page_has_every_claim_measured_or_not(tmp_path):
    (tmp_path / "notebooks").mkdir()
    measured = seeds.claim(
        "001_cpu_1core",
        measured=FakeRatio(8.0, 7.5, 8.5, "faster"),
        how="NumPy vs compiled, 1 thread | cache off",
        glue=False,
    )
    odd = seeds.claim(
        "001_gpu_arrays_f32",
        measured=30.0,
        comparable=False,
        why="NumPy baseline in float64",
        glue=False,
    )
    cell = new_code_cell(
        "seeds.claim(...)",
        outputs=[_glued("001_cpu_1core", measured), _glued("001_gpu_arrays_f32", odd)],
    )
    nbformat.write(
        new_notebook(cells=[cell]), tmp_path / "notebooks" / "06_numpy.ipynb"
    )
    records = seeds.collect([tmp_path / "notebooks" / "06_numpy.ipynb"])
    assert set(records) == {"001_cpu_1core", "001_gpu_arrays_f32"}
    page = seeds.page(tmp_path)
    assert page.startswith("<!-- Generated by `python -m gpubook.seeds`")
    for seed in seeds.SEEDS:
        assert f"## Seed {seed}:" in page
    assert page.count("\n| ") - 4 * 2 == len(
        seeds.CLAIMS
    )  # header and rule per seed, a row per claim
    assert "| 9x | 8.00x [7.50x, 8.50x]" in page and "**holds**" in page
    assert "1 thread \\| cache off ([ch. 6](../notebooks/06_numpy.ipynb))" in page
    assert "**not comparable**: NumPy baseline in float64" in page
    assert "| not measured | planned in ch. 7 |" in page
    assert seeds.main(["--root", str(tmp_path)]) == 0
    assert seeds.main(["--root", str(tmp_path), "--check"]) == 0
    (tmp_path / seeds.PAGE).write_text("stale", encoding="utf-8")
    assert seeds.main(["--root", str(tmp_path), "--check"]) == 1


def test_page_marks_a_verdict_that_depends_on_the_host(tmp_path):
    # chapter 6's file lists seed 000's claims as host-dependent; a file that is not
    # listed (06_x) gets no mark, whatever its claim
    (tmp_path / "notebooks").mkdir()
    host = seeds.claim(
        "000_sum_compiled_torch",
        measured=FakeRatio(2.5, 2.4, 2.6, "faster"),
        glue=False,
    )
    cell = new_code_cell("x", outputs=[_glued("000_sum_compiled_torch", host)])
    nbformat.write(
        new_notebook(cells=[cell]), tmp_path / "notebooks" / "06_compiling_numpy.ipynb"
    )
    other = seeds.claim(
        "001_cpu_1core", measured=FakeRatio(8, 7.5, 8.5, "faster"), glue=False
    )
    cell = new_code_cell("x", outputs=[_glued("001_cpu_1core", other)])
    nbformat.write(new_notebook(cells=[cell]), tmp_path / "notebooks" / "06_x.ipynb")
    page = seeds.page(tmp_path)
    row = next(line for line in page.splitlines() if "on the CPU 0.067 s" in line)
    assert "**does not hold** *(host)*:" in row
    row = next(line for line in page.splitlines() if "NumPy on 1 core" in line)
    assert "**holds** |" in row and "(host)" not in row


def test_page_quotes_the_seed_from_the_catalogue_not_a_stale_record(tmp_path):
    (tmp_path / "notebooks").mkdir()
    stale = dict(
        seeds.claim("000_poly_compiled", measured=6.0, glue=False), dtype="float64"
    )
    cell = new_code_cell("x", outputs=[_glued("000_poly_compiled", stale)])
    nbformat.write(new_notebook(cells=[cell]), tmp_path / "notebooks" / "06_x.ipynb")
    page = seeds.page(tmp_path)
    row = next(line for line in page.splitlines() if "Constrained polynomial (" in line)
    assert "float32 `torch.rand` tensors compiled vs NumPy on float64" in row
    assert "; float64)" not in row


def test_seed_000_dtypes_say_what_the_seed_ran():
    claims = seeds.CLAIMS
    for key in ("000_poly_compiled", "000_poly_gpu"):
        assert claims[key]["dtype"].startswith("float32"), key
    for key in ("000_sincos_compiled", "000_sincos_gpu"):
        assert "not given" in claims[key]["dtype"], key


def test_unreadable_record_is_a_clear_error(tmp_path):
    output = _glued("001_cpu_1core", {})
    output.data["application/papermill.record/text/plain"] = "<object at 0x1>"
    nbformat.write(
        new_notebook(cells=[new_code_cell("x", outputs=[output])]),
        tmp_path / "06_x.ipynb",
    )
    with pytest.raises(ValueError, match="seedclaim_001_cpu_1core"):
        seeds.collect([tmp_path / "06_x.ipynb"])


def test_committed_page_is_in_step_with_the_notebooks():
    page = ROOT / seeds.PAGE
    assert page.exists(), (
        f"{seeds.PAGE} is missing: run `python -m gpubook.seeds` and commit it"
    )
    assert page.read_text(encoding="utf-8") == seeds.page(ROOT), (
        f"{seeds.PAGE} is out of step with the notebooks: "
        "run `python -m gpubook.seeds` and commit it"
    )


def test_table_renders_the_records():
    record = seeds.claim("001_cpu_1core", measured=20.0, how="x", glue=False)
    shown = seeds.table([record])
    assert "| 001 | k-means step compiled" in shown._repr_markdown_()
    assert "<td>holds</td>" in shown._repr_html_()
    assert "20x" in str(shown)


def test_claims_of_fact_show_as_stated():
    assert (
        seeds.CLAIMS["002_python312"]["fact"]
        and seeds.CLAIMS["001_device_context"]["fact"]
    )
    record = seeds.claim("002_python312", measured=None, glue=False)
    assert record["seed_figure"] == "as stated" and record["verdict"] == "not measured"


@pytest.mark.parametrize("estimate", [5.0, 7.0, 7.5, 14.0])
def test_a_claim_with_a_history_on_both_sides_depends_on_the_host(estimate):
    """Seed 000's NumPy against pure Python fell on both sides of its threshold (7.25x)
    across the book's runs: whatever one run measures, the verdict says what it depends
    on, with the history, instead of one run's side."""
    record = seeds.claim(
        "000_sum_numpy",
        measured=FakeRatio(estimate, estimate * 0.9, estimate * 1.1, "faster"),
        glue=False,
    )
    assert record["verdict"] == "depends on the host"
    assert record["detail"] == (
        f"{estimate:.3g}x here; 6.1x to 14.8x in 33 runs up to 28 November 2026, "
        "9 of them below the threshold of 7.25x"
    )


@pytest.mark.parametrize("direction", ["slower", "no clear difference"])
def test_a_history_on_both_sides_holds_whatever_this_run_measured(direction):
    """A run that measured AlexNet 0.99x (no clear difference) is part of the history
    that makes the verdict depend on the host: such a run must not flip it."""
    record = seeds.claim(
        "004_alexnet", measured=FakeRatio(0.99, 0.97, 1.01, direction), glue=False
    )
    assert record["verdict"] == "depends on the host"
    assert record["detail"].startswith(f"0.99x here, {direction}; 0.99x to 1.68x in")


def test_a_history_does_not_turn_an_unmeasured_or_incomparable_claim():
    assert seeds.claim("000_sum_numpy", measured=None, glue=False)["verdict"] == (
        "not measured"
    )
    assert seeds.verdict(13.5, 2.0, comparable=False, history={"low": 1, "high": 20})[
        0
    ] == ("not comparable")


def test_a_history_on_one_side_of_the_threshold_keeps_the_rule(monkeypatch):
    history = dict(low=800, high=1100, runs=2, below=0, until="today")
    monkeypatch.setitem(seeds.CLAIMS["000_sum_gpu"], "history", history)
    record = seeds.claim(
        "000_sum_gpu", measured=FakeRatio(900, 850, 950, "faster"), glue=False
    )
    assert (record["verdict"], record["detail"]) == ("holds", "")


def test_alexnet_has_a_history_too():
    """Seed 004's AlexNet: 0.99x to 1.68x in 21 runs against 1.15x (one below)."""
    record = seeds.claim(
        "004_alexnet", measured=FakeRatio(1.6, 1.55, 1.65, "faster"), glue=False
    )
    assert record["verdict"] == "depends on the host"
    assert record["detail"].startswith("1.6x here; 0.99x to 1.68x in 21 runs")


def test_verdict_text_adds_the_detail_and_the_reason_where_there_are_some():
    assert seeds.verdict_text({"verdict": "holds", "detail": ""}) == "holds"
    assert seeds.verdict_text(
        {"verdict": "does not hold", "detail": "slower here"}
    ) == ("does not hold (slower here)")
    assert seeds.verdict_text(
        {"verdict": "not comparable", "detail": "", "why": "smaller sizes"}
    ) == ("not comparable: smaller sizes")


def test_page_gives_every_history_as_the_verdicts_do(tmp_path):
    """The page's sentence on host-dependent claims comes from the catalogue's
    histories, in the words of the verdicts' details: one source for both."""
    (tmp_path / "notebooks").mkdir()
    page = seeds.page(tmp_path)
    for key in ("000_sum_numpy", "004_alexnet"):
        detail = seeds.claim(
            key, measured=FakeRatio(9.0, 8.0, 10.0, "faster"), glue=False
        )["detail"]
        label = seeds.CLAIMS[key]["history"]["label"]
        assert f"{label}: {detail.split('; ', 1)[1]}" in page

"""gpubook.glue: glued values as myst-nb and the fallback store them, and headline
records."""

import importlib
import math
import sys
from types import SimpleNamespace

import pytest

from gpubook.glue import (
    GLUE_PREFIX,
    HEADLINE_PREFIX,
    Headline,
    glue,
    glue_ratio,
    headline,
)


@pytest.fixture
def myst_calls(monkeypatch):
    """myst_nb.glue replaced by a recorder: the values glue() hands to myst-nb."""
    import myst_nb

    calls = []
    monkeypatch.setattr(
        myst_nb,
        "glue",
        lambda name, value, display: calls.append((name, value, display)),
    )
    return calls


@pytest.fixture
def fallback_displays(monkeypatch):
    """No myst-nb (the GPU machine): what glue() displays itself, as (data, metadata,
    raw)."""
    import IPython.display

    monkeypatch.setitem(
        sys.modules, "myst_nb", None
    )  # import myst_nb now raises ImportError
    shown = []
    monkeypatch.setattr(
        IPython.display,
        "display",
        lambda data, raw=False, metadata=None: shown.append((data, metadata, raw)),
    )
    return shown


def test_glue_hands_numbers_to_myst_nb_hidden(myst_calls):
    glue("speedup", 2.5)
    glue("shown", 3, display=True)
    assert myst_calls == [("speedup", 2.5, False), ("shown", 3, True)]


def test_glued_strings_have_no_quotes(myst_calls):
    glue("verdict", "no clear difference")
    [(name, value, _)] = myst_calls
    assert value == "no clear difference" and repr(value) == "no clear difference"
    assert str(value) == "no clear difference"


def test_glue_without_myst_nb_writes_the_same_output(fallback_displays):
    glue("speedup", 2.5)
    glue("verdict", "faster")
    glue("visible", 7, display=True)
    (data, metadata, raw), (vdata, vmeta, _), (shown, smeta, _) = fallback_displays
    assert raw is True
    assert data == {GLUE_PREFIX + "text/plain": "2.5"}
    assert metadata["scrapbook"] == {"name": "speedup", "mime_prefix": GLUE_PREFIX}
    assert vdata == {GLUE_PREFIX + "text/plain": "faster"}, (
        "a string is stored without quotes"
    )
    assert shown == {"text/plain": "7"} and smeta["scrapbook"] == {
        "name": "visible",
        "mime_prefix": "",
    }


def test_fallback_glue_is_read_back_by_the_reference_tools(fallback_displays):
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from gpubook import reference

    glue("speedup", 2.5)
    glue("verdict", "slower")
    outputs = [
        new_output("display_data", data=d, metadata=m) for d, m, _ in fallback_displays
    ]
    notebook = new_notebook(cells=[new_code_cell("x", outputs=outputs)])
    assert reference.glued_values(notebook) == {"speedup": 2.5, "verdict": "slower"}


@pytest.mark.parametrize("name", ["not a name", "", "1x", None, 3])
def test_glue_rejects_bad_names(name, myst_calls):
    with pytest.raises(ValueError, match="name"):
        glue(name, 1.0)
    assert myst_calls == []


# --- headline
# --------------------------------------------------------------------------------------


@pytest.fixture
def glued(myst_calls):
    """The headline records glued, by name."""
    return lambda: {name: value for name, value, _ in myst_calls}


def test_headline_speedup_is_baseline_over_optimized(glued):
    record = headline(
        "demo",
        "a case",
        baseline_seconds=3e-3,
        optimized_seconds=1.2e-3,
        limit_fraction=0.5,
        limit="copy",
    )
    assert record["speedup"] == 3e-3 / 1.2e-3
    assert record["baseline_seconds"] == 3e-3 and record["optimized_seconds"] == 1.2e-3
    assert record["limit_fraction"] == 0.5 and record["limit"] == "copy"
    assert (
        record["speedup_low"] is None
        and record["verdict"] is None
        and record["mode"] is None
    )
    assert record["comparable"] is True
    assert glued() == {HEADLINE_PREFIX + "demo": dict(record)}
    assert isinstance(record, Headline)


def _ratio(estimate=2.0, low=1.8, high=2.2, verdict="faster"):
    return SimpleNamespace(estimate=estimate, low=low, high=high, verdict=verdict)


def test_headline_keeps_the_ratio_interval_verdict_and_mode(glued):
    record = headline(
        "demo",
        "a case",
        baseline_seconds=2e-3,
        optimized_seconds=1e-3,
        ratio=_ratio(1.9, 1.7, 2.1, "faster"),
        mode="latency",
    )
    assert (record["speedup"], record["speedup_low"], record["speedup_high"]) == (
        1.9,
        1.7,
        2.1,
    )
    assert record["verdict"] == "faster" and record["mode"] == "latency"
    assert glued()["headline_demo"]["speedup_high"] == 2.1


def test_headline_accepts_the_timing_ratio():
    from gpubook.timing import Ratio

    ratio = Ratio(estimate=1.02, low=0.97, high=1.08)
    record = headline(
        "demo",
        "a case",
        baseline_seconds=1.02,
        optimized_seconds=1.0,
        ratio=ratio,
        mode="throughput",
    )
    assert record["verdict"] == ratio.verdict == "no clear difference"
    assert record["speedup_low"] == 0.97
    assert record["margin"] == ratio.margin == 0.10
    plain = headline("plain", "a case", baseline_seconds=2.0, optimized_seconds=1.0)
    assert plain["margin"] is None
    ducked = headline(
        "ducked", "a case", baseline_seconds=2.0, optimized_seconds=1.0, ratio=_ratio()
    )
    assert ducked["margin"] is None  # a Ratio-like object without a margin


def test_headline_one_sided_words_replace_the_ratios_verdict(glued):
    """one_sided= shows the words that Ratio.not_slower/not_faster choose, and keeps
    the ratio's own verdict as two_sided; without it, two_sided is None."""
    from gpubook.glue import ONE_SIDED
    from gpubook.timing import Ratio

    def record(ratio, one_sided="not_slower", key="demo"):
        return headline(
            key,
            "a case",
            baseline_seconds=ratio.estimate,
            optimized_seconds=1.0,
            ratio=ratio,
            one_sided=one_sided,
        )

    gain_inside_margin = Ratio(estimate=1.18, low=1.17, high=1.19, margin=0.2)
    shown = record(gain_inside_margin)
    assert shown["verdict"] == "at least as fast" == ONE_SIDED["not_slower"][0]
    assert shown["two_sided"] == "no clear difference"
    assert glued()["headline_demo"]["verdict"] == "at least as fast"
    # a loss inside the margin is a loss, not "no clear difference"
    loss_inside_margin = Ratio(estimate=0.87, low=0.86, high=0.88, margin=0.2)
    assert record(loss_inside_margin)["verdict"] == "slower"
    assert record(Ratio(1.0, 0.97, 1.03))["verdict"] == "not clearly slower"
    assert record(loss_inside_margin, "not_faster")["verdict"] == "at most as fast"
    assert record(gain_inside_margin, "not_faster")["verdict"] == "faster"
    plain = record(gain_inside_margin, None)
    assert plain["verdict"] == "no clear difference" and plain["two_sided"] is None


def test_headline_one_sided_rejects_bad_input(myst_calls):
    from gpubook.timing import Ratio

    times = {"baseline_seconds": 2.0, "optimized_seconds": 1.0}
    with pytest.raises(ValueError, match="ratio="):
        headline("x", "a case", **times, one_sided="not_slower")
    for bad in ("", "faster", "at least as fast", 3):
        with pytest.raises(ValueError, match="one_sided"):
            headline("x", "a case", **times, ratio=Ratio(2, 1.9, 2.1), one_sided=bad)
    with pytest.raises(TypeError, match="Ratio"):  # a Ratio-like without the methods
        headline("x", "a case", **times, ratio=_ratio(), one_sided="not_slower")
    assert myst_calls == []


@pytest.mark.parametrize(
    "keyword, value, error",
    [
        ("baseline_seconds", math.inf, ValueError),
        ("baseline_seconds", math.nan, ValueError),
        ("baseline_seconds", True, TypeError),
        ("baseline_seconds", 0.0, ValueError),
        ("baseline_seconds", "1", TypeError),
        ("optimized_seconds", math.inf, ValueError),
        ("optimized_seconds", -1e-3, ValueError),
        ("limit_fraction", math.inf, ValueError),
        ("limit_fraction", -0.1, ValueError),
        ("limit_fraction", True, TypeError),
        ("mode", "warm", ValueError),
        ("ratio", 2.0, TypeError),
        ("ratio", _ratio(math.inf, 1.0, math.inf), ValueError),
        ("ratio", _ratio(2.0, 2.1, 2.2), ValueError),
        ("ratio", _ratio(verdict="wins"), ValueError),
        ("comparable", "no", TypeError),
    ],
)
def test_headline_rejects_bad_input(keyword, value, error, myst_calls):
    arguments = {"baseline_seconds": 2e-3, "optimized_seconds": 1e-3, keyword: value}
    with pytest.raises(
        error, match=keyword.split("_")[0] if keyword != "ratio" else "ratio"
    ):
        headline("demo", "a case", **arguments)
    assert myst_calls == [], "nothing is glued for rejected input"


def test_headline_rejects_bad_key_and_case(myst_calls):
    with pytest.raises(ValueError, match="key"):
        headline("not a key", "a case", baseline_seconds=1.0, optimized_seconds=1.0)
    with pytest.raises(ValueError, match="case"):
        headline("demo", "  ", baseline_seconds=1.0, optimized_seconds=1.0)


def test_headline_not_comparable_needs_a_note(myst_calls):
    with pytest.raises(ValueError, match="note"):
        headline(
            "demo",
            "float32 vs float64",
            baseline_seconds=2.0,
            optimized_seconds=1.0,
            comparable=False,
        )
    record = headline(
        "demo",
        "float32 vs float64",
        baseline_seconds=2.0,
        optimized_seconds=1.0,
        comparable=False,
        note="different dtypes",
    )
    assert record["comparable"] is False and record["note"] == "different dtypes"
    assert repr(record) == (
        "headline: float32 vs float64: eager 2 s, compiled 1 s "
        "(not a like-for-like speedup: different dtypes)"
    )


def test_headline_repr_of_older_records():
    """Records glued before ``comparable`` existed read as comparable; a record without
    a note still says where to look."""
    old = {
        "case": "c",
        "baseline": "eager",
        "baseline_seconds": 2.0,
        "optimized": "compiled",
        "optimized_seconds": 1.0,
        "speedup": 2.0,
        "limit_fraction": None,
        "limit": None,
    }
    assert repr(Headline(old)) == "headline: c: eager 2 s, compiled 1 s (2x)"
    assert repr(Headline({**old, "comparable": False})) == (
        "headline: c: eager 2 s, compiled 1 s (not a like-for-like speedup: see the "
        "chapter)"
    )
    assert repr(Headline({**old, "limit_fraction": 0.25})) == (
        "headline: c: eager 2 s, compiled 1 s (2x), 25% of the hardware limit"
    )


def test_headline_repr_reads_as_one_line(myst_calls):
    record = headline(
        "demo",
        "a case",
        baseline_seconds=2e-3,
        optimized_seconds=1e-3,
        ratio=_ratio(2.0, 1.8, 2.2),
        mode="throughput",
        limit_fraction=0.5,
        limit="copy",
    )
    assert repr(record) == (
        "headline: a case: eager 2 ms, compiled 1 ms (2.00x [1.80x, 2.20x]: faster), "
        "throughput, 50% of copy"
    )
    plain = headline("plain", "b", baseline_seconds=1.0, optimized_seconds=0.25)
    assert repr(plain) == "headline: b: eager 1 s, compiled 250 ms (4x)"


def test_module_names_the_allowed_values():
    glue_module = importlib.import_module("gpubook.glue")
    assert glue_module.VERDICTS == ("faster", "slower", "no clear difference")
    assert glue_module.MODES == ("latency", "throughput")


@pytest.mark.parametrize("text", ["268,435,456", "True", "(1, 2)", "3"])
def test_glued_strings_myst_nb_would_read_as_literals_keep_quotes(myst_calls, text):
    # myst-nb's format_plain_text runs ast.literal_eval on the text: "268,435,456"
    # unquoted would print as the tuple "(268, 435, 456)"
    from myst_nb.core.variables import format_plain_text

    glue("size", text)
    [(name, value, _)] = myst_calls
    assert repr(value) == repr(text)
    assert format_plain_text(repr(value), "") == text


def test_a_string_that_is_no_literal_stays_unquoted(myst_calls):
    from myst_nb.core.variables import format_plain_text

    glue("size", "4,096")  # "096" is no Python literal: printed as it is
    [(name, value, _)] = myst_calls
    assert repr(value) == "4,096" and format_plain_text("4,096", "") == "4,096"


def test_glued_prose_stays_unquoted_and_reads_back(myst_calls):
    from myst_nb.core.variables import format_plain_text

    glue("verdict", "1.34x as fast, 268,435,456 elements")
    [(name, value, _)] = myst_calls
    assert repr(value) == "1.34x as fast, 268,435,456 elements"
    assert format_plain_text(repr(value), "") == "1.34x as fast, 268,435,456 elements"


def test_glue_ratio_glues_estimate_interval_and_verdict_or_words(myst_calls):
    r = SimpleNamespace(estimate=1.5, low=1.2, high=1.8, verdict="faster")
    glue_ratio("gain", r)
    glue_ratio("gain2", r, says="took less time than")
    assert [(n, v) for n, v, _ in myst_calls] == [
        ("gain", 1.5),
        ("gain_low", 1.2),
        ("gain_high", 1.8),
        ("gain_verdict", "faster"),
        ("gain2", 1.5),
        ("gain2_low", 1.2),
        ("gain2_high", 1.8),
        ("gain2_says", "took less time than"),
    ]


def test_glue_ratio_rejects_what_is_not_a_ratio(myst_calls):
    with pytest.raises(TypeError, match="gpubook Ratio"):
        glue_ratio("gain", 1.5)
    with pytest.raises(TypeError, match="says must be"):
        glue_ratio(
            "gain", SimpleNamespace(estimate=1, low=1, high=1, verdict="x"), says=3
        )
    assert myst_calls == []

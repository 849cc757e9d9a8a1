"""One options object and one list of each choice (tauk.stats.options, tauk.conventions): IntervalOptions is checked
once and travels whole; options= gives the same numbers as the loose keywords; the command line and the widgets
offer exactly the library's choices; every default reads tauk.conventions."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import math

import pytest

import tauk
from conftest import SAMPLE_DATA
from tauk import conventions, stats
from tauk.cli import build_parser, main
from tauk.errors import TaukError
from tauk.stats.options import IntervalOptions, check_adjust, check_test, finite_or_none, interval_options

R = 199


@pytest.fixture(scope="module")
def res() -> tauk.Results:
    return tauk.load(str(SAMPLE_DATA), progress=False)


# ------------------------------------------------------------------------------------------- the object
def test_interval_options_are_checked_frozen_and_lower_case():
    o = IntervalOptions(ci=0.9, method="BCa", resamples=99, seed=3)
    assert (o.ci, o.method, o.resamples, o.seed, o.level) == (0.9, "bca", 99, 3, 0.9)
    assert o.tail == pytest.approx(0.05)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.ci = 0.5  # type: ignore[misc]
    assert o.replace(method="t") == IntervalOptions(0.9, "t", 99, 3)
    for bad in ({"ci": 0.0}, {"ci": 1.0}, {"ci": 1.5}, {"method": "nope"}, {"method": 3}, {"resamples": 0},
                {"resamples": 2.5}, {"resamples": True}):  # fmt: skip
        with pytest.raises(TaukError):
            IntervalOptions(**bad)
    with pytest.raises(TaukError, match="≤ 10,000,000 .* 8.0 GB each"):  # refused before any work: no 8 GB matrix
        IntervalOptions(resamples=10**9)
    assert IntervalOptions(resamples=conventions.MAX_RESAMPLES).resamples == conventions.MAX_RESAMPLES
    assert IntervalOptions(ci=None).level == conventions.CI_LEVEL  # where an interval is always given
    # a resampling interval needs its tail quantiles to be distinct resamples: resamples=1 gave the zero-width
    # [estimate, estimate] with no note (the statistics audit's open question)
    from tauk.stats.options import min_resamples

    for method in ("bca", "percentile", "bootstrap-t"):
        with pytest.raises(TaukError, match=r"resamples=1 is too few for a 95% .* at least 39"):
            IntervalOptions(method=method, resamples=1)
        assert IntervalOptions(method=method, resamples=min_resamples(0.95)).resamples == 39
    with pytest.raises(TaukError, match="at least 199"):
        IntervalOptions(ci=0.99, method="percentile", resamples=99)
    assert IntervalOptions(method="model", resamples=1).resamples == 1  # the model needs no resamples
    assert IntervalOptions(ci=None, method="bca", resamples=1).ci is None  # no interval asked


def test_defaults_are_the_conventions():
    o = IntervalOptions()
    assert (o.ci, o.method, o.resamples, o.seed) == (conventions.CI_LEVEL, conventions.CI_METHOD,
                                                     conventions.RESAMPLES, conventions.SEED)  # fmt: skip


def test_options_or_loose_keywords_but_not_both():
    assert interval_options(ci=0.8, method="t") == IntervalOptions(0.8, "t")
    o = IntervalOptions(0.8, "percentile", 50, 1)
    assert interval_options(o, ci=conventions.CI_LEVEL, method=conventions.CI_METHOD) is o  # defaults defer
    with pytest.raises(TaukError, match="options= or ci=, method="):
        interval_options(o, ci=0.9, method="t")
    with pytest.raises(TaukError, match="IntervalOptions"):
        interval_options({"ci": 0.9})  # type: ignore[arg-type]


@pytest.mark.parametrize("func, args", [
    (stats.pass_hat_k, ()), (stats.pass_at_k, ()), (stats.summarize, ()),
    (stats.compare, ("atlas-large", "baseline")), (stats.compare_all, ()),
])  # fmt: skip
def test_options_give_the_numbers_of_the_keywords(res, func, args):
    loose = func(res, *args, ci=0.9, method="percentile", resamples=R, seed=7)
    whole = func(res, *args, options=IntervalOptions(0.9, "percentile", R, 7))
    assert loose.to_frame().equals(whole.to_frame())
    assert whole.options == IntervalOptions(0.9, "percentile", R, 7)
    with pytest.raises(TaukError, match="give the interval options once"):
        func(res, *args, options=IntervalOptions(), seed=3)


def test_model_interval_takes_options_too():
    import numpy as np

    from tauk.stats.intervals import model_interval

    n, c = np.full(12, 4), np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 1])
    a = model_interval(n, c, ks=[1, 2], ci=0.9, seed=3)
    b = model_interval(n, c, ks=[1, 2], options=IntervalOptions(0.9, "model", conventions.RESAMPLES, 3))
    np.testing.assert_array_equal(a.lo, b.lo)
    np.testing.assert_array_equal(a.hi, b.hi)
    assert a.ci == 0.9
    with pytest.raises(TaukError, match="method 'model'"):
        model_interval(n, c, options=IntervalOptions(method="bca"))
    with pytest.warns(DeprecationWarning, match="level= is deprecated"):
        old = model_interval(n, c, ks=[1, 2], level=0.9, seed=3)
    np.testing.assert_array_equal(old.lo, a.lo)
    with pytest.warns(DeprecationWarning):
        assert old.level == 0.9


def test_one_nan_to_none_and_the_checks():
    assert [finite_or_none(x) for x in (0.25, float("nan"), math.inf, None, 1)] == [0.25, None, None, None, 1.0]
    assert check_test("T") == "t" and check_adjust("FDR_BH") == "bh" and check_adjust("") == "none"
    for bad in (check_test, check_adjust):
        with pytest.raises(TaukError):
            bad("nope")


# ------------------------------------------------------------------------------------------- one list each
def _choices(command: str) -> dict[str, list[str]]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[command]
    return {a.dest: list(a.choices) for a in parser._actions if a.choices is not None}


def test_the_command_line_offers_the_librarys_choices():
    from tauk.table import FORMATS

    for command in ("summary", "compare", "report"):
        assert _choices(command)["method"] == list(conventions.CI_METHODS) == list(stats.CI_METHODS)
        assert _choices(command)["infra"] == list(conventions.INFRA_RULES)
    cmp = _choices("compare")
    assert cmp["test"] == list(conventions.PAIRED_TESTS) == list(stats.PAIRED_TESTS)
    assert cmp["adjust"] == list(conventions.ADJUSTMENTS) == list(stats.ADJUSTMENTS)
    for command in ("summary", "compare", "audit", "consistency"):
        assert sorted(_choices(command)["format"]) == sorted([*FORMATS, "json"])


def test_every_listed_choice_is_accepted_by_the_library(res):
    for method in conventions.CI_METHODS:
        stats.pass_hat_k(res, by=None, k=1, method=method, resamples=R)
    for test in conventions.PAIRED_TESTS:
        stats.compare(res, "atlas-large", "baseline", test=test, resamples=R, permutations=R)
    for adjust in conventions.ADJUSTMENTS:
        stats.adjust_pvalues([0.01, 0.2], adjust=adjust)
    for infra in conventions.INFRA_RULES:
        stats.summarize(res, infra=infra, ci=None)
    table = stats.summarize(res, ci=None).summary()
    from tauk.table import FORMATS

    assert all(table.render(f).endswith("\n") for f in FORMATS)


def test_ci_zero_means_no_interval_or_is_refused_in_one_line(capsys):
    data = str(SAMPLE_DATA)
    assert main(["summary", data, "--ci", "0", "--format", "json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert '"ci_low": null' in out and '"interval_method": null' in out
    for argv in (["compare", data, "--a", "atlas-large", "--b", "baseline", "--ci", "0", "--quiet"],
                 ["report", data, "--out", "/tmp/never-written-i21", "--ci", "0", "--quiet"]):  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--ci 0 (no interval) does not apply" in err, err
    assert main(["summary", data, "--ci", "1.5", "--quiet"]) == 2
    assert "--ci must be a level in (0, 1)" in capsys.readouterr().err
    assert main(["compare", data, "--a", "atlas-large", "--b", "baseline", "--ci", "0.9", "--format", "json",
                 "--quiet"]) == 0  # fmt: skip
    assert '"interval_method": "score"' in capsys.readouterr().out


def test_widgets_and_internal_defaults_read_the_conventions():
    pytest.importorskip("ipywidgets")
    from tauk.stats.comparisons.paired_tests import paired_test
    from tauk.stats.comparisons.ranks import rank_intervals
    from tauk.stats.intervals import model_interval_batch
    from tauk.widgets.comparison import ComparisonWidget
    from tauk.widgets.explorer import Explorer

    want = {"ci": conventions.CI_LEVEL, "method": conventions.CI_METHOD, "resamples": conventions.RESAMPLES,
            "seed": conventions.SEED, "test": conventions.PAIRED_TEST}  # fmt: skip
    for func in (Explorer.__init__, ComparisonWidget.__init__, model_interval_batch, paired_test, rank_intervals,
                 stats.compare_all):  # fmt: skip
        for name, p in inspect.signature(func).parameters.items():
            if name in want:
                assert p.default == want[name], (func.__qualname__, name, p.default)
    assert inspect.signature(stats.compare_all).parameters["adjust"].default == conventions.ADJUST

"""One calling convention for tauk.stats and tauk.scoring: data first, options keyword-only with shared names and
defaults, old positional calls kept for one release (DeprecationWarning), ``reward=`` column, TaukError."""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import polars as pl
import pytest

import tauk
from conftest import SAMPLE_DATA
from stats.frames import make_trials
from tauk import conventions, scoring, stats
from tauk.errors import TaukError

R = 199  # resamples: enough to compare two calls, fast

# public function -> its data (positional) parameters; every other parameter must be keyword-only
PUBLIC = {
    stats.pass_hat_k: ("trials",),
    stats.pass_at_k: ("trials",),
    stats.per_task: ("trials",),
    stats.summarize: ("trials",),
    stats.compare: ("trials", "a", "b"),
    stats.compare_all: ("trials",),
    stats.power_analysis: ("pilot",),
    stats.tasks_needed: ("delta", "var_d"),
    stats.sign_flip_pvalue: ("d",),
    stats.adjust_pvalues: ("p",),
    scoring.score: ("results",),
    scoring.audit: ("results",),
    scoring.communicate_checks: ("results",),
    scoring.action_checks: ("results",),
}
SHARED_DEFAULTS = {
    "ci": conventions.CI_LEVEL,
    "method": conventions.CI_METHOD,
    "resamples": conventions.RESAMPLES,
    "permutations": conventions.RESAMPLES,
    "seed": conventions.SEED,
    "infra": conventions.INFRA,
    "reward": "reward",
    "progress": None,
}


@pytest.fixture(scope="module")
def res() -> tauk.Results:
    return tauk.load(str(SAMPLE_DATA), progress=False)


@pytest.fixture(scope="module")
def scored(res) -> pl.DataFrame:
    # a reward that differs from the recorded one: COMMUNICATE alone
    return tauk.score(res, evaluation="communicate", reward_basis=["COMMUNICATE"])


# ------------------------------------------------------------------------------------------- signatures
@pytest.mark.parametrize("func", list(PUBLIC), ids=lambda f: f.__name__)
def test_options_are_keyword_only_with_shared_defaults(func):
    params = list(inspect.signature(func).parameters.values())
    data = PUBLIC[func]
    assert tuple(p.name for p in params[: len(data)]) == data
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params[: len(data)])
    options = params[len(data) :]
    assert options, f"{func.__name__} has no options?"
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in options), [
        (p.name, p.kind) for p in options if p.kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    for p in options:
        if p.name in SHARED_DEFAULTS:
            assert p.default == SHARED_DEFAULTS[p.name], (func.__name__, p.name, p.default)
    # the statistics that group take by= and k=; those that bootstrap take every interval option
    names = {p.name for p in options}
    if func in (stats.pass_hat_k, stats.pass_at_k, stats.summarize, stats.compare, stats.compare_all):
        assert {"by", "k", "ci", "method", "resamples", "seed", "infra", "reward", "progress"} <= names
    if func is stats.per_task:
        assert {"by", "k", "infra", "reward"} <= names


def test_ci_defaults_to_the_convention_everywhere():
    for func in (stats.pass_hat_k, stats.pass_at_k, stats.summarize, stats.compare, stats.compare_all):
        assert inspect.signature(func).parameters["ci"].default == conventions.CI_LEVEL == 0.95
    for func in (stats.pass_hat_k, stats.summarize):
        assert inspect.signature(func).parameters["by"].default == ("run_id",)


# ------------------------------------------------------------------------------------- old calls still work
def _same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.equals(b), (a, b)


def test_old_positional_calls_warn_and_agree(res):
    t = res.trials
    cases = [
        (lambda: stats.pass_hat_k(t, "agent", "drop", 1, 0.9, "percentile", R),
         lambda: stats.pass_hat_k(t, by="agent", infra="drop", k=1, ci=0.9, method="percentile", resamples=R),
         "by, infra, k, ci, method, resamples"),
        (lambda: stats.pass_at_k(t, "agent", "fail", [1, 2], None),
         lambda: stats.pass_at_k(t, by="agent", infra="fail", k=[1, 2], ci=None), "by, infra, k, ci"),
        (lambda: stats.per_task(t, "agent", "drop", 2), lambda: stats.per_task(t, by="agent", k=2), "by, infra, k"),
        (lambda: stats.summarize(t, "agent", "drop", None, None),
         lambda: stats.summarize(t, by="agent", ci=None), "by, infra, k, ci"),
        (lambda: stats.compare(t, "atlas-large", "baseline", 1, "domain", "agent", "drop", 0.95, "bca", R),
         lambda: stats.compare(t, "atlas-large", "baseline", by="domain", method="bca", resamples=R), "k, by, label"),
        (lambda: stats.compare_all(t, ["baseline", "atlas-small"], 1, None, "agent", "bh", "drop", 0.9, "t"),
         lambda: stats.compare_all(t, agents=["baseline", "atlas-small"], adjust="bh", ci=0.9, method="t"),
         "agents, k, by, label, adjust"),
    ]  # fmt: skip
    for old, new, named in cases:
        with pytest.warns(DeprecationWarning, match="by position is deprecated") as rec:
            got = old()
        assert named in str(rec[0].message) and "use keywords:" in str(rec[0].message)
        assert rec[0].filename == __file__  # the warning points at the caller
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            want = new()
        _same(got if isinstance(got, pl.DataFrame) else got.to_frame(),
              want if isinstance(want, pl.DataFrame) else want.to_frame())  # fmt: skip


def test_old_positional_calls_of_the_scoring_functions(res):
    with pytest.warns(DeprecationWarning, match="tauk.scoring.score"):
        old = tauk.score(res, "communicate", ["COMMUNICATE"])
    _same(old, tauk.score(res, evaluation="communicate", reward_basis=["COMMUNICATE"]))
    with pytest.warns(DeprecationWarning, match="tasks"):
        assert tauk.audit(res, None).records() == tauk.audit(res).records()
    with pytest.warns(DeprecationWarning):
        _same(scoring.communicate_checks(res, None), scoring.communicate_checks(res))
    with pytest.warns(DeprecationWarning):
        _same(scoring.action_checks(res, None), scoring.action_checks(res))


def test_old_calls_of_the_pvalue_and_power_tools():
    d = np.array([0.5, -1.0, 1.0, 0.25] * 7)
    with pytest.warns(DeprecationWarning, match="permutations, seed"):
        assert stats.sign_flip_pvalue(d, 999, 2) == stats.sign_flip_pvalue(d, permutations=999, seed=2)
    p = [0.01, 0.04, 0.03]
    with pytest.warns(DeprecationWarning, match="adjust="):
        np.testing.assert_array_equal(stats.adjust_pvalues(p, "bh"), stats.adjust_pvalues(p, adjust="bh"))
    with pytest.warns(DeprecationWarning, match="method= is deprecated"):
        np.testing.assert_array_equal(stats.adjust_pvalues(p, method="bh"), stats.benjamini_hochberg(p))
    with pytest.warns(DeprecationWarning, match="target_power"):
        assert stats.tasks_needed(0.1, 0.25, 0.05, 0.9) == stats.tasks_needed(0.1, 0.25, target_power=0.9) == 265
    with pytest.warns(DeprecationWarning, match="power= is deprecated"):
        assert stats.tasks_needed(0.1, 0.25, power=0.9) == 265
    with pytest.warns(DeprecationWarning, match="power_analysis"):
        old = stats.power(0.1, 0.05, 0.9, 0.25)
    new = stats.power_analysis(delta=0.1, var_d=0.25, target_power=0.9)
    assert old.to_frame().equals(new.to_frame()) and old.tasks_needed == new.tasks_needed
    assert new.target_power == 0.9
    with pytest.warns(DeprecationWarning, match="target_power"):
        assert new.power == 0.9


def test_compat_rejects_ambiguous_calls(res):
    with pytest.raises(TaukError, match="multiple values"):
        stats.pass_hat_k(res, "agent", by="agent")
    with pytest.raises(TaukError, match="at most"):
        stats.per_task(res, "agent", "drop", 1, "extra")
    with pytest.raises(TaukError, match="both"):
        stats.adjust_pvalues([0.1], method="bh", adjust="holm")


# ------------------------------------------------------------------------------------------------ reward=
def test_reward_column_equals_renaming_by_hand(res, scored):
    by_hand = scored.with_columns(reward=pl.col("score_reward"))
    assert not scored["reward"].equals(scored["score_reward"])  # the test means something
    kw = {"by": "agent", "resamples": R}
    _same(stats.pass_hat_k(scored, reward="score_reward", **kw).to_frame(), stats.pass_hat_k(by_hand, **kw).to_frame())
    _same(stats.pass_at_k(scored, reward="score_reward", k=[1, 3], **kw).to_frame(),
          stats.pass_at_k(by_hand, k=[1, 3], **kw).to_frame())  # fmt: skip
    _same(stats.per_task(scored, by="agent", reward="score_reward"), stats.per_task(by_hand, by="agent"))
    s1 = stats.summarize(scored, reward="score_reward", **kw)
    s2 = stats.summarize(by_hand, **kw)
    assert s1.records() == s2.records() and s1.reward == "score_reward"
    c1 = stats.compare(scored, "atlas-large", "baseline", reward="score_reward", resamples=R)
    c2 = stats.compare(by_hand, "atlas-large", "baseline", resamples=R)
    _same(c1.to_frame(), c2.to_frame())
    _same(c1.tasks, c2.tasks)
    m1 = stats.compare_all(scored, reward="score_reward", resamples=R, permutations=R)
    m2 = stats.compare_all(by_hand, resamples=R, permutations=R)
    _same(m1.pairs, m2.pairs)
    _same(m1.ranks, m2.ranks)
    p1 = stats.power_analysis(scored, delta=0.1, a="atlas-small", b="baseline", reward="score_reward")
    p2 = stats.power_analysis(by_hand, delta=0.1, a="atlas-small", b="baseline")
    _same(p1.to_frame(), p2.to_frame())
    # and it really reads that column: the recorded reward gives other numbers
    assert not stats.pass_hat_k(scored, **kw).to_frame().equals(stats.pass_hat_k(by_hand, **kw).to_frame())


def test_reward_column_must_exist(res):
    with pytest.raises(TaukError, match="score_reward"):
        stats.pass_hat_k(res, reward="score_reward")
    with pytest.raises(TaukError):
        stats.summarize(res, reward=1)


# ------------------------------------------------------------------------------------------------- errors
def test_argument_errors_are_tauk_errors(res):
    with pytest.raises(TaukError, match="method"):
        stats.IntervalOptions(method="nope")
    with pytest.raises(TaukError, match="method"):
        stats.pass_hat_k(res, method="nope")
    with pytest.raises(TaukError, match="tauk.score needs"):
        tauk.score(object())
    with pytest.raises(TaukError, match="tasks="):
        tauk.score(res, tasks=42)
    with pytest.raises(TaukError):
        stats.as_trials(42)
    with pytest.raises(TaukError):
        stats.power_analysis(delta=0.1, var_d=0.1, alpha=2.0)


# ---------------------------------------------------------------------------------------- results, helpers
def test_every_result_has_frame_records_and_summary_table(res):
    t = res.trials
    objs = [
        stats.pass_hat_k(t, by="agent", resamples=R),
        stats.summarize(t, by="agent", resamples=R),
        stats.compare(t, "atlas-large", "baseline", resamples=R),
        stats.compare_all(t, resamples=R, permutations=R),
        stats.power_analysis(t, delta=0.1, a="atlas-small", b="baseline"),
        tauk.audit(res),
    ]
    for o in objs:
        assert isinstance(o.to_frame(), pl.DataFrame)
        assert isinstance(o.summary(), stats.SummaryTable)
        recs = o.records()
        assert isinstance(recs, list) and recs and all(isinstance(r, dict) for r in recs)
        json.dumps(recs)


def test_as_trials_is_public(res):
    assert stats.as_trials(res) is res.trials
    assert stats.as_trials(res.trials) is res.trials
    assert stats.as_trials(res.trials.lazy()).equals(res.trials)


def test_pair_tasks_returns_a_named_record():
    from tauk.stats.comparisons.pairing import PairedTasks, pair_tasks
    from tauk.stats.tasks import prepare_trials, task_groups

    rows = [{"agent": ag, "task_id": t, "trial": 0, "reward": float(r)}
            for ag, rs in (("A", [1, 0, 1]), ("B", [0, 0])) for t, r in enumerate(rs)]  # fmt: skip
    gs = {g.key[0]: g for g in task_groups(prepare_trials(make_trials(rows), "drop"), ("agent",))}
    p = pair_tasks(gs["A"], gs["B"], 1)
    assert isinstance(p, PairedTasks)
    assert (p.c_a.tolist(), p.c_b.tolist(), p.only_a, p.only_b, p.excluded) == ([1, 0], [0, 0], 1, 0, 0)


def test_pvalue_tools_have_their_module():
    from tauk.stats import comparisons
    from tauk.stats.comparisons import pvalues

    for name in ("sign_flip_pvalue", "holm", "benjamini_hochberg", "adjust_pvalues"):
        assert getattr(stats, name) is getattr(pvalues, name) is getattr(comparisons, name)


def test_latex_escape_is_public():
    assert stats.latex_escape("a_b & 50%") == r"a\_b \& 50\%"
    assert scoring.COMPONENTS is conventions.COMPONENTS

"""Paired comparisons, p-value adjustment, rank intervals and power."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from stats.frames import make_trials, two_agents
from tauk.errors import TaukError
from tauk.stats import (
    benjamini_hochberg,
    compare,
    compare_all,
    holm,
    power_analysis,
    sign_flip_pvalue,
)


def brute_force_sign_flip(d):
    d = np.asarray(d, float)
    obs = abs(d.sum())
    hits = sum(abs(np.dot(s, d)) >= obs - 1e-12 for s in itertools.product((-1.0, 1.0), repeat=d.size))
    return hits / 2**d.size


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=11))
def test_sign_flip_exact_equals_enumeration(d):
    p, how = sign_flip_pvalue(d)
    assert how == "exact"
    assert p == pytest.approx(brute_force_sign_flip(d), abs=1e-15)


def test_sign_flip_monte_carlo_close_to_exact_and_seeded():
    rng = np.random.default_rng(4)
    d = rng.choice([-1.0, 0.0, 1.0, 0.5], size=22, p=[0.2, 0.2, 0.4, 0.2])
    exact, how = sign_flip_pvalue(d, exact_max=30)
    assert how == "exact"
    mc, how = sign_flip_pvalue(d, permutations=20000, seed=1, exact_max=5)
    assert how == "monte-carlo"
    assert abs(mc - exact) < 4 * math.sqrt(exact * (1 - exact) / 20000) + 1e-4
    assert sign_flip_pvalue(d, permutations=2000, seed=3, exact_max=5) == sign_flip_pvalue(d, permutations=2000, seed=3, exact_max=5)


def test_holm_hand_worked():
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → monotone 0.06
    got = holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(got, [0.03, 0.06, 0.06, 0.02], atol=1e-15)
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])


def test_bh_hand_worked():
    # p sorted 0.01, 0.02, 0.03, 0.5 (m = 4): 0.04, 0.04, 0.04, 0.5
    np.testing.assert_allclose(benjamini_hochberg([0.03, 0.5, 0.01, 0.02]), [0.04, 0.5, 0.04, 0.04], atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_bh_equals_scipy(p):
    np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p, method="bh"), atol=1e-14)




def test_self_comparison_is_zero_with_p_one():
    rng = np.random.default_rng(0)
    df = make_trials(two_agents(rng.random(30) < 0.5, rng.random(30) < 0.5))
    c = compare(df, "A", "A", resamples=500)
    r = c.row()
    assert r["diff"] == 0.0 and r["p_perm"] == 1.0 and r["p_wilcoxon"] == 1.0 and r["p_t"] == 1.0
    assert r["p_value"] == 1.0 and r["p_mcnemar"] == 1.0
    # no task differs: never the zero-width [0, 0] (issue 23) — the score interval, c²/(T + c²) either side, and a note
    c = r["ci_high"]
    assert r["ci_low"] == pytest.approx(-c) and 0.05 < c < 0.3
    assert "no task differs" in r["interval_note"]
    assert r["interval_excludes_0"] is False and r["p_below_alpha"] is False
    rt = compare(df, "A", "A", resamples=500, test="t").row()  # the t interval is [0, 0], and says so
    assert (rt["ci_low"], rt["ci_high"]) == (0.0, 0.0) and "zero-width" in rt["interval_note"]


def test_mcnemar_hand_worked_and_equal_to_exact_permutation():
    # 6 tasks only A solves, 3 only B solves, 5 both, 6 neither: exact binomial two-sided p = 2·(1+9+36+84)/512
    a = [1] * 6 + [0] * 3 + [1] * 5 + [0] * 6
    b = [0] * 6 + [1] * 3 + [1] * 5 + [0] * 6
    r = compare(make_trials(two_agents(a, b)), "A", "B", resamples=500).row()
    assert (r["mcnemar_a_only"], r["mcnemar_b_only"]) == (6, 3)
    assert r["p_mcnemar"] == pytest.approx(260 / 512, abs=1e-12)
    assert r["p_perm"] == pytest.approx(260 / 512, abs=1e-12) and r["perm_method"] == "exact"
    assert r["diff"] == pytest.approx(3 / 20, abs=1e-15)
    assert r["n_tasks"] == 20


def test_no_mcnemar_with_several_trials_and_paired_bootstrap_is_paired():
    # A's per-task rates are B's + 0.25 on every task: the paired difference has no spread at all,
    # whereas an unpaired interval would be wide
    rng = np.random.default_rng(2)
    rows = []
    for t in range(25):
        cb = int(rng.integers(0, 3))
        rows += [{"agent": "B", "task_id": t, "trial": i, "reward": float(i < cb)} for i in range(4)]
        rows += [{"agent": "A", "task_id": t, "trial": i, "reward": float(i < cb + 1)} for i in range(4)]
    # the trial index decides every outcome here (trial i succeeds iff i < c): a pass effect by construction, which
    # the default would add to the interval (tests/stats/test_dependence.py); this test is about the pairing
    r = compare(make_trials(rows), "A", "B", resamples=999, test="t", run_effects="report").row()
    assert r["p_mcnemar"] is None
    assert r["diff"] == pytest.approx(0.25) and r["ci_low"] == pytest.approx(0.25) and r["ci_high"] == pytest.approx(0.25)
    s = compare(make_trials(rows), "A", "B", resamples=999, run_effects="report").row()  # the score interval: width, a note
    assert 0.0 < s["ci_low"] < 0.25 < s["ci_high"] < 1.0 and s["p_value"] < 0.05
    assert "every task differs by the same 0.25" in s["interval_note"]
    # exact on the lattice of d (2 of the 2^25 sign vectors reach |Σ d_t|); Monte Carlo (1/(1 + 9999)) before
    assert r["p_perm"] == pytest.approx(2.0**-24, rel=1e-9) and r["perm_method"] == "exact"


def test_unshared_tasks_are_reported_and_k_exclusions():
    a = two_agents([1, 0, 1, 1], [1, 1, 0], trials=2)
    r = compare(make_trials(a), "A", "B", resamples=200).row()
    assert (r["n_tasks"], r["n_tasks_only_a"], r["n_tasks_only_b"]) == (3, 1, 0)
    r3 = compare(make_trials(a), "A", "B", k=3, resamples=200).row()
    assert r3["n_tasks"] == 0 and r3["n_tasks_excluded"] == 3 and r3["diff"] is None
    with pytest.raises(TaukError):
        compare(make_trials(a), "A", "Z")


def test_compare_all_adjustment_and_ranks():
    rng = np.random.default_rng(5)
    p = {"good": 0.9, "mid": 0.5, "bad": 0.1}
    rows = []
    for dom in ("airline", "retail"):
        for name, pr in p.items():
            succ = rng.random(40) < pr
            rows += [{"agent": name, "domain": dom, "task_id": t, "reward": float(s)} for t, s in enumerate(succ)]
    df = make_trials(rows)
    ca = compare_all(df, by="domain", resamples=999)
    assert ca.pairs.height == 6
    np.testing.assert_allclose(ca.pairs["p_adjusted"].to_numpy(), holm(ca.pairs["p_value"].to_numpy()))
    bh = compare_all(df, by="domain", adjust="bh", resamples=999)
    np.testing.assert_allclose(bh.pairs["p_adjusted"].to_numpy(), stats.false_discovery_control(bh.pairs["p_value"].to_numpy()))
    good = ca.ranks.filter(pl.col("agent") == "good")
    assert good["rank"].to_list() == [1.0, 1.0] and good["rank_high"].to_list() == [1.0, 1.0]
    assert set(ca.ranks.filter(pl.col("agent") == "bad")["rank"].to_list()) == {3.0}
    with pytest.raises(TaukError):
        compare_all(df, adjust="bonferroni-ish")
    assert "holm" in str(ca.summary())


def test_compare_label_spanning_domains_keys_tasks_by_domain():
    rows = two_agents([1, 1, 0], [0, 1, 0], domain="airline") + two_agents([0, 0, 0], [1, 1, 1], domain="retail")
    r = compare(make_trials(rows), "A", "B", resamples=200, pool_setups=True).row()
    assert r["n_tasks"] == 6  # ids 0..2 in two domains are six tasks
    assert r["diff"] == pytest.approx((1 - 3) / 6)
    by = compare(make_trials(rows), "A", "B", by="domain", resamples=200).to_frame().sort("domain")
    assert by["diff"].to_list() == pytest.approx([1 / 3, -1.0])
    # by default the two domains (two setups) are compared apart, and the result says so
    c = compare(make_trials(rows), "A", "B", resamples=200)
    assert c.by == ("setup",) and c.to_frame().sort("setup")["diff"].to_list() == pytest.approx([1 / 3, -1.0])
    assert any("within each setup" in n for n in c.summary().notes)
    assert not any("pooled over" in n for n in c.summary().notes)


def test_pooled_setups_are_named_by_the_result_itself():
    """pool_setups=True: compare() and compare_all() say which setups they pooled (the command line only showed it
    in its own table before, and the Python result said nothing)."""
    rows = two_agents([1, 1, 0], [0, 1, 0], domain="airline") + two_agents([0, 0, 0], [1, 1, 1], domain="retail")
    c = compare(make_trials(rows), "A", "B", resamples=200, pool_setups=True)
    assert len(c.pooled_over) == 1 and "pooled over 2 setups" in c.pooled_over[0]
    assert c.pooled_over[0] in c.summary().notes and c.pooled_over[0] in c.caveats()
    m = compare_all(make_trials(rows), resamples=200, pool_setups=True)
    assert m.pooled_over == c.pooled_over and c.pooled_over[0] in m.summary().notes
    assert compare(make_trials(rows), "A", "B", resamples=200).pooled_over == ()


def test_every_result_object_renders_escaped():
    rows = two_agents([[1, 0], [1, 1], [0, 0]], [[0, 0], [1, 0], [0, 1]])
    rows = [{**r, "agent": "<i>A&</i>" if r["agent"] == "A" else "B_%"} for r in rows]
    df = make_trials(rows)
    from tauk.stats import pass_at_k, pass_hat_k, summarize

    objs = [
        summarize(df, by="agent", ci=0.9, resamples=200),
        pass_hat_k(df, by="agent", resamples=200),
        pass_at_k(df, by="agent", method="t"),
        compare(df, "<i>A&</i>", "B_%", resamples=200),
        compare_all(df, resamples=200),
        power_analysis(df, delta=0.1),
    ]
    for o in objs:
        with pytest.raises(AttributeError):
            o.seed = 1 if hasattr(o, "seed") else None
            o.delta = 1
        tab = o.summary()
        text, html, tex = str(tab), tab._repr_html_(), tab.to_latex()
        assert text and "<table>" in html and r"\begin{tabular}" in tex
        assert "<i>" not in html
        if "A&" in text:
            assert "&lt;i&gt;A&amp;&lt;/i&gt;" in html and r"A\&" in tex
        assert isinstance(o.to_frame(), pl.DataFrame)
        recs = o.records()
        assert isinstance(recs, list) and all(isinstance(r, dict) for r in recs)
        json.dumps(recs)  # JSON-ready


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["bca", "percentile", "bootstrap-t"]))
def test_bootstrap_interval_mirrors_under_swap_and_ignores_task_labels(seed, method):
    """The paired task bootstrap (method="bca" / "percentile" / "bootstrap-t") is seeded, so it must not depend on
    which agent is called a, nor on what the tasks are called. Before: T = 8, one trial each, A = 01100110,
    B = 00111011: bca [−0.625, 0.5] for A − B but [−0.375, 0.625] for B − A (the mirror would be [−0.5, 0.625]);
    renaming the tasks moved it too."""
    rng = np.random.default_rng(seed)
    T = int(rng.integers(3, 14))
    sa = [[int(x) for x in rng.random(int(rng.integers(1, 4))) < 0.6] for _ in range(T)]
    sb = [[int(x) for x in rng.random(int(rng.integers(1, 4))) < 0.4] for _ in range(T)]
    df = make_trials(two_agents(sa, sb))
    ab = compare(df, "A", "B", method=method, resamples=499).row()
    ba = compare(df, "B", "A", method=method, resamples=499).row()
    renamed = df.with_columns(pl.col("task_id").map_elements(lambda s: f"z{99 - int(s)}", return_dtype=pl.String))
    rn = compare(renamed, "A", "B", method=method, resamples=499).row()
    assert ba["difference"] == pytest.approx(-ab["difference"], abs=1e-12)
    assert ba["ci_low"] == pytest.approx(-ab["ci_high"], abs=1e-12)
    assert ba["ci_high"] == pytest.approx(-ab["ci_low"], abs=1e-12)
    assert ba["p_value"] == pytest.approx(ab["p_value"], abs=1e-12)
    assert (rn["ci_low"], rn["ci_high"]) == pytest.approx((ab["ci_low"], ab["ci_high"]), abs=1e-12)


@pytest.mark.parametrize("k", [0, -1, 1.5, None, "2"])
def test_a_k_that_is_not_a_positive_integer_is_refused_by_name(k):
    """Before: compare(k=0) compared pass^0 (every estimate 1, difference 0, p = 1, no word), k=1.5 silently compared
    pass^1, k=-1 raised math.comb's 'ValueError: k must be a non-negative integer', k=None a TypeError about int();
    pass_hat_k(k=1.5) raised "TypeError: 'float' object is not iterable"."""
    df = make_trials(two_agents([1, 0, 1, 1, 0], [0, 0, 1, 0, 1], trials=2))
    with pytest.raises(TaukError, match="k must be a positive integer"):
        compare(df, "A", "B", k=k)
    with pytest.raises(TaukError, match="k must be a positive integer"):
        compare_all(df, k=k)
    if k is not None:  # pass_hat_k's k=None: the default ks
        from tauk.stats import pass_hat_k

        with pytest.raises(TaukError, match="k must be a positive integer"):
            pass_hat_k(df, k=k)
    assert compare(df, "A", "B", k=2.0).row()["k"] == 2  # an integral float is that integer

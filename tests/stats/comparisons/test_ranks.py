"""Rank intervals by inverting the paired tests (tauk.stats.comparisons.ranks): Holm's rejections, coverage for close agents, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from tauk.stats.comparisons import holm
from tauk.stats.comparisons.ranks import holm_reject, rank_intervals

ALPHA = 0.05


def test_holm_reject_matches_holm_adjusted_pvalues():
    rng = np.random.default_rng(17)
    for _ in range(50):
        p = rng.uniform(0, 0.1, int(rng.integers(1, 12)))
        assert np.array_equal(holm_reject(p, ALPHA), holm(p) <= ALPHA)


def _close_agents(reps, seed):
    means = np.array([0.50, 0.52, 0.54, 0.56, 0.58])
    rng = np.random.default_rng(99)
    x = rng.normal(0, 1.5, 200_000) + rng.normal(0, 0.5, 200_000)
    a = []
    for m in means:
        lo, hi = -5.0, 5.0
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if special.expit(x + mid).mean() < m else (lo, mid)
        a.append(0.5 * (lo + hi))
    a = np.array(a)
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        p = special.expit(rng.normal(0, 1.5, (20, 1)) + a + rng.normal(0, 0.5, (20, 5)))
        yield rng.binomial(1, p).astype(float)


def test_rank_coverage_five_close_agents():
    """5 agents, pass^1 0.50 … 0.58, T = 20, one trial: true ranks 5 … 1."""
    from tauk.stats.intervals.bootstrap import bootstrap_means

    true = np.array([5, 4, 3, 2, 1])
    reps = 300
    cov = {"old": np.zeros(5), "per-agent": np.zeros(5), "simultaneous": np.zeros(5)}
    joint = dict.fromkeys(cov, 0)
    for r, U in enumerate(_close_agents(reps, 2024)):
        boot = bootstrap_means(U, 1999, r)  # compare_all()'s rank intervals: quantiles of bootstrap ranks
        br = stats.rankdata(-boot, axis=1, method="average")
        old = (np.quantile(br, 0.025, axis=0, method="inverted_cdf"), np.quantile(br, 0.975, axis=0, method="inverted_cdf"))
        for name, (lo, hi) in (("old", old), ("per-agent", rank_intervals(U)[1:]),
                               ("simultaneous", rank_intervals(U, simultaneous=True)[1:])):
            ok = (lo <= true) & (true <= hi)
            cov[name] += ok
            joint[name] += bool(ok.all())
    best, worst = 4, 0
    assert cov["per-agent"][best] / reps >= 0.95 and cov["per-agent"][worst] / reps >= 0.95
    assert cov["per-agent"].min() / reps >= 0.95
    assert joint["simultaneous"] / reps >= 0.95
    assert cov["old"][best] / reps < 0.90 and cov["old"][worst] / reps < 0.90
    assert joint["old"] / reps < 0.80


def test_rank_intervals_edge_cases():
    U = np.tile(np.array([0.9, 0.5, 0.1]), (40, 1)) + np.random.default_rng(0).normal(0, 0.05, (40, 3))
    rank, lo, hi = rank_intervals(U)
    assert rank.tolist() == [1, 2, 3] and lo.tolist() == [1, 2, 3] and hi.tolist() == [1, 2, 3]
    same = np.tile(np.random.default_rng(1).binomial(1, 0.5, (30, 1)).astype(float), (1, 4))
    r = rank_intervals(same, simultaneous=True)
    assert r.lo.tolist() == [1] * 4 and r.hi.tolist() == [4] * 4
    one = rank_intervals(np.array([[1.0, 0.0, 0.5]]))  # a single task tells nobody apart
    assert one.lo.tolist() == [1, 1, 1] and one.hi.tolist() == [3, 3, 3]
    with pytest.raises(ValueError):
        rank_intervals(np.full((5, 2), np.nan))


def test_null_ranks_are_explained_in_the_summary():
    """No task common to all agents (C ran other tasks): every rank is null. Before, the summary said nothing of
    the ranks at all; now a note says why they are null."""
    import warnings

    from stats.frames import make_trials, two_agents
    from tauk.stats import compare_all

    rows = two_agents([1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 1, 0], trials=2)
    rows += [{"run_id": "run-C", "agent": "C", "task_id": t, "trial": 0, "reward": 1.0} for t in (10, 11, 12)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mc = compare_all(make_trials(rows))
    assert mc.ranks["rank"].is_null().all()
    notes = mc.summary().notes
    assert any("no rank" in n and "A, B, C" in n and "common to all" in n for n in notes), notes


def test_no_null_rank_note_when_every_rank_is_computed():
    """Without ``by``, Polars' group_by(pl.lit(0)) over the (empty) null-rank rows still yields one empty group: every
    ungrouped summary said 'no rank interval for : …' although no rank was null."""
    import warnings

    from stats.frames import make_trials, two_agents
    from tauk.stats import compare_all

    rows = two_agents([1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 1, 0], trials=2)
    rows += [{"run_id": "run-C", "agent": "C", "task_id": t, "trial": 0, "reward": float(t % 2)} for t in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mc = compare_all(make_trials(rows))
    assert mc.by == () and mc.ranks["rank"].is_not_null().all()
    assert not any("no rank interval" in n for n in mc.summary().notes), mc.summary().notes

"""Power plans for the paired t test (tauk.stats.power.planning / variance): the noncentral t, plans that deliver their power, pilots."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from tauk.errors import TaukError
from tauk.stats import power_analysis
from tauk.stats.comparisons.paired_tests import paired_test, signflip_pvalue
from tauk.stats.power import (
    power_t,
    tasks_needed,
    variance_from_paired_pilot,
    variance_from_pilot,
)

ALPHA = 0.05


# ---------------------------------------------------------------------------------------------- power plans
def test_power_t_matches_simulated_t_test_and_tasks_needed_is_minimal():
    rng = np.random.default_rng(21)
    T, delta, var = 30, 0.1, 0.08
    d = rng.normal(delta, math.sqrt(var), (40_000, T))
    tstat = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(T))
    sim = np.mean(2 * stats.t.sf(np.abs(tstat), T - 1) < ALPHA)
    assert power_t(T, delta, var) == pytest.approx(sim, abs=0.01)
    for v in (0.02, 0.077, 0.3):
        n = tasks_needed(0.1, v)
        assert power_t(n, 0.1, v) >= 0.8 > power_t(n - 1, 0.1, v)


def _taubench_pairs(rng, T, shift):
    p = rng.beta(0.63, 0.88, T)
    return special.expit(special.logit(np.clip(p, 1e-12, 1 - 1e-12)) + shift), p


def test_plan_delivers_its_power_with_the_reported_test():
    """τ-bench fit, 4 trials per task, δ = 0.1, 80 %: noncentral-t plan + t p-value vs normal plan + old p_perm."""
    from tauk.stats.power import tasks_needed as public_tasks_needed

    def old_tasks_needed(delta, var):  # the normal formula power() used before this release
        z = stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(0.8)
        return math.ceil(z * z * var / delta**2 - 1e-12)

    rng = np.random.default_rng(31)
    shift = 0.6767  # logit shift giving E[p_A] − E[p_B] = 0.1 on Beta(0.63, 0.88)
    pa, pb = _taubench_pairs(rng, 400_000, shift)
    assert pa.mean() - pb.mean() == pytest.approx(0.1, abs=0.002)
    var = float(np.var(rng.binomial(4, pa) / 4 - rng.binomial(4, pb) / 4))
    T_new, T_old = tasks_needed(0.1, var), old_tasks_needed(0.1, var)
    assert T_new > T_old and public_tasks_needed(0.1, var) == T_new
    reps = 1500
    hits_new = hits_old = 0
    for _ in range(reps):
        a, b = _taubench_pairs(rng, T_new, shift)
        hits_new += paired_test(rng.binomial(4, a) / 4 - rng.binomial(4, b) / 4).p_value < ALPHA
        a, b = _taubench_pairs(rng, T_old, shift)
        hits_old += signflip_pvalue(rng.binomial(4, a) / 4 - rng.binomial(4, b) / 4, mid=False) < ALPHA
    assert abs(hits_new / reps - 0.80) <= 0.025, hits_new / reps  # MC SE ≈ 0.010
    assert hits_old / reps < 0.775, hits_old / reps


def test_single_agent_pilot_no_longer_overstates_the_variance():
    """Shared difficulty, n = 4: the old rule doubles Var(p̂_t) (independent agents); the new one uses 2·E[p(1−p)]
    — also through the public power_analysis."""
    import polars as pl

    from tauk.stats import power_analysis

    rng = np.random.default_rng(41)
    pa, pb = _taubench_pairs(rng, 400_000, 0.0)
    true_var = float(np.var(rng.binomial(4, pa) / 4 - rng.binomial(4, pb) / 4))
    new, old = [], []
    for _ in range(60):
        c = rng.binomial(4, rng.beta(0.63, 0.88, 50))
        new.append(variance_from_pilot(np.full(50, 4), c).var_d(4))
        frame = pl.DataFrame({
            "run_id": ["x"] * 200, "task_id": [f"t{i}" for i in np.repeat(np.arange(50), 4)],
            "trial": np.tile(np.arange(4), 50), "agent": ["X"] * 200,
            "reward": (np.tile(np.arange(4), 50) < np.repeat(c, 4)).astype(float),
        })
        old.append(2 * np.var(c / 4, ddof=1))  # the old rule: two independent agents
        if len(new) <= 3:
            assert power_analysis(frame, delta=0.1, trials_per_task=(4,)).var_d == pytest.approx(new[-1], rel=1e-12)
    assert np.mean(new) / true_var == pytest.approx(1.0, abs=0.08)
    assert np.mean(old) / true_var > 2.0


def test_one_trial_pilots_state_what_is_identified():
    rng = np.random.default_rng(51)
    c = rng.binomial(1, 0.4, 60)
    bound = variance_from_pilot(np.ones(60, int), c)
    assert not bound.identified and bound.within == pytest.approx(2 * c.mean() * (1 - c.mean()))
    given = variance_from_pilot(np.ones(60, int), c, icc=0.4)
    assert given.within == pytest.approx(0.6 * bound.within)
    cb = rng.binomial(1, 0.5, 60)
    m = variance_from_paired_pilot(np.ones(60, int), c, np.ones(60, int), cb)
    assert not m.identified and m.var_d(1) == pytest.approx(np.var(c - cb, ddof=1)) and m.var_d(8) == m.var_d(1)
    with pytest.raises(ValueError):
        variance_from_pilot(np.ones(1, int), np.ones(1, int))


@pytest.mark.parametrize("delta, var_d", [(0.1, math.nan), (0.1, math.inf), (math.nan, 0.1), (math.inf, 0.1)])
def test_tasks_needed_refuses_non_finite_inputs_by_name(delta, var_d):
    """Before: tasks_needed(0.1, nan) raised 'ValueError: cannot convert float NaN to integer' (var_d = inf an
    OverflowError), power_analysis(var_d=nan) the same — an exception naming nothing the caller passed."""
    name = "delta" if not math.isfinite(delta) else "var_d"
    with pytest.raises(TaukError, match=name):
        tasks_needed(delta, var_d)
    with pytest.raises(TaukError, match=name):
        power_analysis(delta=delta, var_d=var_d)

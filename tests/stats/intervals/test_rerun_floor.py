"""The variance floor of the fixed-task interval (tauk.stats.intervals.rerun_floor) and its generated table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

import tauk.stats.intervals.model as model_module
from tauk.stats import intervals as M
from tauk.stats.intervals.minorants import MINORANTS
from tauk.stats.intervals.rerun_floor import floor_variance, solve_minorant, variance_floor, variance_minorant
from tauk.stats.tasks import unbiased_means


@pytest.mark.parametrize("n, k", [(8, 1), (8, 4), (6, 2), (5, 3), (4, 4), (6, 4), (3, 2), (8, 8)])
def test_variance_minorant_is_the_variance_where_identified_and_below_it_everywhere_else(n, k):
    """E[b_c] over c ~ Binomial(n, p), summed exactly at 1,999 values of p (off the LP's grid): Var(Û | p) where
    n ≥ 2k, ≤ it for every p otherwise — and above 0 somewhere even at n = k (a real floor, not 0)."""

    cs = np.arange(n + 1)
    p = (np.arange(1999) + 0.5) / 1999
    pmf = special.comb(n, cs)[None, :] * p[:, None] ** cs * (1 - p[:, None]) ** (n - cs)
    u = special.comb(cs, k) / special.comb(n, k)
    true_var = pmf @ u**2 - (pmf @ u) ** 2
    floor = pmf @ variance_minorant(n, k)
    if n >= 2 * k:
        np.testing.assert_allclose(floor, true_var, rtol=1e-9, atol=1e-15)
    else:
        assert np.all(floor <= true_var + 1e-6)
        assert floor.max() > 0.1 * true_var.max()


@pytest.mark.parametrize("metric", ["pass^k", "pass@k"])
def test_rerun_variance_sums_the_task_terms_over_tasks_with_k_trials(metric):

    n = np.array([[8, 8, 4, 2, 0], [6, 6, 6, 6, 6]])
    c = np.array([[3, 8, 4, 1, 0], [0, 1, 5, 6, 6]])
    x = c if metric == "pass^k" else n - c
    got = floor_variance(n, c, 3, metric)
    row0 = (variance_minorant(8, 3)[x[0, 0]] + variance_minorant(8, 3)[x[0, 1]] + variance_minorant(4, 3)[x[0, 2]]) / 9
    row1 = sum(variance_minorant(6, 3)[x[1, t]] for t in range(5)) / 25
    np.testing.assert_allclose(got, [max(row0, 0), max(row1, 0)])


def test_variance_floor_only_widens_and_reaches_the_design_sd():
    rng = np.random.default_rng(5)
    n = np.full((50, 12), 8)
    c = rng.binomial(8, rng.choice([0.15, 0.85], (50, 12)))
    plain = M.model_interval_batch(n, c, [1, 4], estimand="fixed", variance_floor=False, seed=2)
    floored = M.model_interval_batch(n, c, [1, 4], estimand="fixed", seed=2)
    assert np.all(floored.lo <= plain.lo + 1e-12) and np.all(floored.hi >= plain.hi - 1e-12)
    z = special.ndtri(0.975)
    for j, k in enumerate([1, 4]):
        sd = np.sqrt(floor_variance(n, c, k, "pass^k"))
        half = (floored.hi[:, j] - floored.lo[:, j]) / 2
        inside = (floored.lo[:, j] > 0) & (floored.hi[:, j] < 1)  # clipping at 0 or 1 may cut a side
        assert np.all(half[inside] >= z * sd[inside] - 1e-9)
    assert np.any(floored.hi - floored.lo > plain.hi - plain.lo + 1e-6)  # it does act on this population


@pytest.mark.parametrize("T, n", [(10, 8), (20, 4)])
def test_calibration_cell_fixed_tasks_two_point_population(T, n):
    """p ∈ {0.15, 0.85}, k = 4, 400 replications, fixed estimand: the Beta model's posterior alone covers ~92 % (its
    shape misfits; n = 8: the variance is identified, n = 4: only a lower bound is); with the floor ≥ 94 %."""
    rng = np.random.default_rng(11)
    p = rng.choice([0.15, 0.85], (400, T))
    nn = np.full(p.shape, n)
    c = rng.binomial(nn, p)
    truth = (p**4).mean(1)

    def coverage(**kw):
        r = M.model_interval_batch(nn, c, [4], estimand="fixed", seed=4, **kw)
        return float(np.mean((r.lo[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= r.hi[:, 0])))

    old, new = coverage(variance_floor=False), coverage()
    assert old < 0.935, f"without the floor {old:.3f}"
    assert 0.94 <= new <= 0.98, f"with the floor {new:.3f}"


def test_variance_floor_keeps_the_skew_and_is_capped():
    """The width reaches 2·z·sd with both sides scaled by one factor (the model's skew kept); V̂ never exceeds
    θ̂(1 − θ̂)/T, so where Û is mostly 0 or 1 (k near n) the signed coefficients' noise cannot blow it up."""

    n, c = np.full((1, 4), 8), np.array([[2, 6, 2, 6]])
    half = special.ndtri(0.975) * np.sqrt(floor_variance(n, c, 1, "pass^k"))[0]
    lo, hi = variance_floor(np.array([[0.45]]), np.array([[0.6]]), np.array([[0.5]]), n, c, [1], "pass^k", 0.95)
    assert hi[0, 0] - lo[0, 0] == pytest.approx(2 * half)
    assert (hi[0, 0] - 0.5) / (0.5 - lo[0, 0]) == pytest.approx(0.1 / 0.05)
    # pass@8, every task solved 7 of 8 times: the estimate is 1, a re-run cannot move it much
    n, c = np.full((1, 10), 8), np.full((1, 10), 7)
    plain = M.model_interval_batch(n, c, [8], metric="pass@k", estimand="fixed", variance_floor=False, seed=1)
    floored = M.model_interval_batch(n, c, [8], metric="pass@k", estimand="fixed", seed=1)
    np.testing.assert_allclose([floored.lo, floored.hi], [plain.lo, plain.hi])
    rng = np.random.default_rng(8)
    n = np.full((200, 10), 16)
    c = rng.binomial(16, rng.beta(2, 2, (200, 10)))
    for k in (9, 12, 16):
        u = special.comb(c, k) / special.comb(16, k)
        theta = u.mean(1)
        assert np.all(floor_variance(n, c, k, "pass^k") <= theta * (1 - theta) / 10 + 1e-15)
    b = variance_minorant(4, 4)
    with pytest.raises(ValueError):
        b[0] = 1.0  # the cached coefficients are read-only
    assert np.all(variance_minorant(20, 12) >= 0)  # above n = 16 the simple p^n bound (never negative)


def test_minorant_table_is_the_programme_s_solution():
    """The stored coefficients (tauk/stats/_minorant_table.py) are the linear programme's optimum for every
    k ≤ n < 2k, n ≤ 16: the same objective (Σ b_c) and below the variance on a grid finer than the programme's."""

    assert set(MINORANTS) == {(n, k) for n in range(1, 17) for k in range(n // 2 + 1, n + 1)}
    p = (np.arange(4999) + 0.5) / 4999
    for (n, k), b in MINORANTS.items():
        b = np.asarray(b)
        assert b.sum() == pytest.approx(solve_minorant(n, k).sum(), abs=1e-7)
        cs = np.arange(n + 1)
        pmf = special.comb(n, cs)[None, :] * p[:, None] ** cs * (1 - p[:, None]) ** (n - cs)
        u = special.comb(cs, k) / special.comb(n, k)
        assert np.all(pmf @ b <= pmf @ u**2 - (pmf @ u) ** 2 + 1e-6), (n, k)


def test_variance_floor_also_holds_for_a_replaced_interval(monkeypatch):
    """fallback_mode="replace": where the check fails the fallback interval replaces the model's, and the re-run
    interval is still never narrower than the floor (here a degenerate fallback: the point estimate itself)."""

    rng = np.random.default_rng(4)
    n = np.full((20, 15), 8)
    c = rng.binomial(8, rng.beta(2, 2, (20, 15)))
    est = unbiased_means(n, c, 1, "pass^k")[0]
    monkeypatch.setattr(model_module, "task_intervals_by_group", lambda n_, c_, ks, *a: (est[:, None][: len(n_)].copy(),) * 2)
    r = M.model_interval_batch(n, c, [1], estimand="fixed", fallback_mode="replace", check_alpha=1.0, seed=1)
    assert not np.any(r.check_passed)
    half = special.ndtri(0.975) * np.sqrt(floor_variance(n, c, 1, "pass^k"))
    np.testing.assert_allclose(r.hi[:, 0] - r.lo[:, 0], 2 * half, rtol=1e-9)

"""tauk.stats.model: the beta-binomial posterior against brute force, its moments, edge cases, the model check and
a few seeded calibration cells where the old task-bootstrap intervals fail and the model passes."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest
from scipy import integrate, special

from tauk.errors import StatsWarning, TaukError
from tauk.stats import model as M
from tauk.stats._bootstrap import interval
from tauk.stats._minorant_table import MINORANTS
from tauk.stats._model_parts import _fixed_draws, _unbiased
from tauk.stats._posterior import _Loglik
from tauk.stats._rerun_floor import floor_variance, solve_minorant, variance_floor, variance_minorant
from tauk.stats.passk import unanimous_interval

# ---------------------------------------------------------------------------------------------------------------
# brute force: the posterior of E[p^k] on a fine midpoint grid over (μ, ρ) ∈ (0, 1)², where the default prior
# (μ, ρ uniform) is flat, with the likelihood written with scipy.special.betaln
# ---------------------------------------------------------------------------------------------------------------


def _brute(n, c, k, m=700, metric="pass^k"):
    mu = (np.arange(m) + 0.5) / m
    rho = (np.arange(m) + 0.5) / m
    MU, RHO = np.meshgrid(mu, rho, indexing="ij")
    kappa = (1 - RHO) / RHO
    a, b = MU * kappa, (1 - MU) * kappa
    ll = np.zeros_like(a)
    for nn, cc in zip(n, c, strict=True):
        ll += special.betaln(a + cc, b + nn - cc) - special.betaln(a, b)
    w = np.exp(ll - ll.max()).ravel()
    w /= w.sum()
    th = (M.beta_moment(a, b, k) if metric == "pass^k" else 1 - M.beta_moment(b, a, k)).ravel()
    order = np.argsort(th)
    cum = np.cumsum(w[order])
    q = np.interp([0.025, 0.975], cum - w[order] / 2, th[order])
    return float(np.sum(w * th)), q


@pytest.mark.parametrize(
    "n, c",
    [([4, 4], [1, 3]), ([8, 8, 8], [0, 2, 8]), ([3, 5, 2], [3, 0, 1]), ([8, 8], [8, 8])],
)
@pytest.mark.parametrize("k", [1, 2])
def test_population_posterior_matches_brute_force(n, c, k):
    n, c = np.array(n), np.array(c)
    r = M.model_interval(n, c, ks=[k], check=False)
    mean, q = _brute(n, c, k)
    assert r.posterior_mean[0] == pytest.approx(mean, abs=2e-3)
    assert r.lo[0] == pytest.approx(q[0], abs=6e-3)
    assert r.hi[0] == pytest.approx(q[1], abs=6e-3)


def test_posterior_mean_matches_dblquad():
    """E[E[p^2] | data] by adaptive quadrature over (μ, ρ), three tasks."""
    n, c = np.array([4, 6, 3]), np.array([1, 5, 3])

    def lik(mu, rho):
        kappa = (1 - rho) / rho
        a, b = mu * kappa, (1 - mu) * kappa
        return np.exp(np.sum(special.betaln(a + c, b + n - c) - special.betaln(a, b)))

    def theta(mu, rho):
        kappa = (1 - rho) / rho
        return float(M.beta_moment(mu * kappa, (1 - mu) * kappa, 2))

    opts = dict(epsabs=1e-10, epsrel=1e-7)
    Z = integrate.dblquad(lambda rho, mu: lik(mu, rho), 0, 1, 0, 1, **opts)[0]
    num = integrate.dblquad(lambda rho, mu: lik(mu, rho) * theta(mu, rho), 0, 1, 0, 1, **opts)[0]
    r = M.model_interval(n, c, ks=[2], check=False)
    assert r.posterior_mean[0] == pytest.approx(num / Z, abs=1.5e-3)


def test_pass_at_k_posterior_matches_brute_force():
    n, c = np.array([4, 4, 4]), np.array([0, 1, 4])
    r = M.model_interval(n, c, ks=[2], metric="pass@k", check=False)
    mean, q = _brute(n, c, 2, metric="pass@k")
    assert r.posterior_mean[0] == pytest.approx(mean, abs=2e-3)
    assert (r.lo[0], r.hi[0]) == pytest.approx(tuple(q), abs=6e-3)


def test_pass_at_k_is_pass_hat_k_of_failures():
    """With the symmetric default prior, pass@k of (n, c) is one minus the E[p^k]-interval of (n, n − c)."""
    rng = np.random.default_rng(3)
    n = np.full(12, 6)
    c = rng.binomial(n, rng.beta(1, 2, 12))
    at = M.model_interval(n, c, ks=[1, 3], metric="pass@k", check=False)
    hat = M.model_interval(n, n - c, ks=[1, 3], check=False)
    np.testing.assert_allclose(at.lo, 1 - hat.hi, atol=1e-12)
    np.testing.assert_allclose(at.hi, 1 - hat.lo, atol=1e-12)
    np.testing.assert_allclose(at.estimate, 1 - hat.estimate, atol=1e-12)


def test_loglik_equals_betaln_form():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 9, size=(3, 7))
    c = rng.binomial(n, 0.4)
    A = rng.gamma(1.0, 2.0, size=50)
    B = rng.gamma(1.0, 2.0, size=50)
    ll = _Loglik(n, c).shared(A, B)
    ref = np.stack(
        [np.sum(special.betaln(A[:, None] + c[r], B[:, None] + n[r] - c[r]) - special.betaln(A, B)[:, None], 1) for r in range(3)]
    )
    np.testing.assert_allclose(ll, ref, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(_Loglik(n, c).per_group(np.tile(A, (3, 1)), np.tile(B, (3, 1))), ref, rtol=1e-10, atol=1e-9)


def test_beta_moment_against_monte_carlo():
    rng = np.random.default_rng(0)
    for a, b, k in [(0.7, 1.5, 4), (2.0, 2.0, 1), (8.0, 1.0, 8), (0.5, 0.5, 3)]:
        p = rng.beta(a, b, 400_000)
        mc = np.mean(p**k)
        se = np.std(p**k) / np.sqrt(p.size)
        assert abs(float(M.beta_moment(a, b, k)) - mc) < 5 * se


def test_fixed_beta_approximation_matches_exact_draws():
    """The moment-matched Beta for mean_t p_t^k given (α, β) has the exact mean and variance of the per-task draws."""
    rng = np.random.default_rng(2)
    n = np.array([[8, 8, 4, 8, 2, 6]])
    c = np.array([[0, 8, 2, 5, 1, 6]])
    a = np.full((1, 200_000), 0.9)
    b = np.full((1, 200_000), 1.3)
    approx = _fixed_draws(a, b, n, c, [1, 2], rng, "beta")
    exact = _fixed_draws(a, b, n, c, [1, 2], rng, "exact")
    np.testing.assert_allclose(approx.mean(1), exact.mean(1), atol=2e-3)
    np.testing.assert_allclose(approx.std(1), exact.std(1), rtol=0.02)


# ---------------------------------------------------------------------------------------------------------------
# edge cases: finite, documented, never a silent NaN
# ---------------------------------------------------------------------------------------------------------------


def test_all_zero_and_all_one_groups():
    """Unanimous groups get a finite interval with room on the open side (not the point 0 or 1); the fixed-task
    one is narrower than the population one (the same tasks, 80 failed trials)."""
    n = np.full(10, 8)
    zero = M.model_interval(n, np.zeros(10, int), ks=[1, 4], estimand="both")
    one = M.model_interval(n, n.copy(), ks=[1, 4], estimand="both")
    zp, zf, op, of = zero["population"], zero["fixed"], one["population"], one["fixed"]
    for r in (zp, zf, op, of):
        assert np.all(np.isfinite(r.lo)) and np.all(np.isfinite(r.hi)) and np.all(r.lo < r.hi)
    assert np.all(zp.lo < 0.01) and np.all((zp.hi > 0.02) & (zp.hi < 0.4))
    assert np.all(op.hi > 0.99) and np.all((op.lo > 0.6) & (op.lo < 0.98))
    assert np.all(zf.lo == 0.0) and np.all(zf.hi > 0) and np.all(zf.hi < zp.hi)
    assert np.all(of.hi == 1.0) and np.all(of.lo < 1) and np.all(of.lo > op.lo)
    assert zp.estimate.tolist() == [0.0, 0.0] and op.estimate.tolist() == [1.0, 1.0]


def test_one_task_group():
    r = M.model_interval(np.array([8]), np.array([3]), ks=[1, 2])
    assert np.all(np.isfinite(r.lo)) and np.all(np.isfinite(r.hi))
    assert np.all(r.hi - r.lo > 0.5)  # one task says little about a population
    assert np.isnan(r.check_p) and r.check_passed and r.source == "model"
    f = M.model_interval(np.array([8]), np.array([3]), ks=[1], estimand="fixed")
    assert 0 < f.lo[0] < 3 / 8 < f.hi[0] < 1


def test_unequal_n_and_k_above_some_tasks():
    n = np.array([8, 8, 4, 2, 8, 4])
    c = np.array([3, 8, 4, 0, 0, 2])
    r = M.model_interval(n, c, ks=[1, 2, 4, 8], estimand="fixed")
    assert r.n_tasks.tolist() == [6, 6, 5, 3]
    assert np.all(np.isfinite(r.lo)) and np.all(r.lo <= r.hi)
    u8 = np.mean([special.comb(cc, 8) / special.comb(nn, 8) for nn, cc in zip(n, c, strict=True) if nn >= 8])
    assert r.estimate[3] == pytest.approx(u8)


def test_k_above_every_task_warns_and_is_nan():
    with pytest.warns(StatsWarning, match="k above every task"):
        r = M.model_interval(np.array([4, 4, 4]), np.array([1, 2, 4]), ks=[2, 5])
    assert np.isfinite(r.lo[0]) and np.isnan(r.lo[1]) and np.isnan(r.hi[1])


def test_one_trial_per_task_is_clopper_pearson():
    n = np.ones(20, int)
    c = np.r_[np.ones(7, int), np.zeros(13, int)]
    for est in ("population", "fixed"):
        r = M.model_interval(n, c, ks=[1], estimand=est)
        assert r.source == "binomial"
        assert r.lo[0] == pytest.approx(special.betaincinv(7, 14, 0.025))
        assert r.hi[0] == pytest.approx(special.betaincinv(8, 13, 0.975))
    at = M.model_interval(n, c, ks=[1], metric="pass@k")
    assert (at.lo[0], at.hi[0]) == pytest.approx((r.lo[0], r.hi[0]))


def test_batch_padding_and_empty_group():
    n = np.array([[8, 8, 8, 0], [4, 4, 0, 0], [0, 0, 0, 0]])
    c = np.array([[1, 5, 8, 0], [0, 4, 0, 0], [0, 0, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty group is NaN with source "empty", not a k warning
        r = M.model_interval_batch(n, c, [1], check=False)
    one = M.model_interval(np.array([8, 8, 8]), np.array([1, 5, 8]), ks=[1], check=False)
    assert r.lo[0, 0] == pytest.approx(one.lo[0]) and r.hi[0, 0] == pytest.approx(one.hi[0])
    assert np.isnan(r.lo[2, 0]) and r.source[2] == "empty"


def test_bad_input_raises():
    with pytest.raises(ValueError):
        M.model_interval(np.array([4, 4]), np.array([5, 1]))
    with pytest.raises(ValueError):
        M.model_interval(np.array([4, 4]), np.array([1, 1]), ks=[0])
    with pytest.raises(ValueError):
        M.model_interval(np.array([4, 4]), np.array([1, 1]), estimand="both-ways")
    with pytest.raises(ValueError):
        M.Prior((0.0, 1.0))


def test_same_seed_same_numbers():
    rng = np.random.default_rng(5)
    n = np.full(15, 4)
    c = rng.binomial(n, rng.beta(0.7, 1.5, 15))
    a = M.model_interval(n, c, ks=[1, 4], estimand="both", seed=11)
    b = M.model_interval(n, c, ks=[1, 4], estimand="both", seed=11)
    for e in ("population", "fixed"):
        np.testing.assert_array_equal(a[e].lo, b[e].lo)
        np.testing.assert_array_equal(a[e].hi, b[e].hi)


def test_doctests():
    res = doctest.testmod(M, raise_on_error=False, verbose=False)
    assert res.attempted > 0 and res.failed == 0


# ---------------------------------------------------------------------------------------------------------------
# the model check and the fallback
# ---------------------------------------------------------------------------------------------------------------


def test_check_passes_on_beta_and_fires_on_two_point_population():
    rng = np.random.default_rng(0)
    R, T, n = 40, 200, 8
    nn = np.full((R, T), n)
    beta = rng.binomial(nn, rng.beta(0.7, 1.5, (R, T)))
    two = rng.binomial(nn, np.where(rng.random((R, T)) < 0.5, 0.15, 0.85))
    pb = M.model_interval_batch(nn, beta, [1], fallback=None).check_p
    pt = M.model_interval_batch(nn, two, [1], fallback=None).check_p
    assert np.mean(pb < 0.05) <= 0.1
    assert np.mean(pt < 0.05) >= 0.9


@pytest.mark.parametrize("fallback", ["bca", "bootstrap-t"])
def test_failed_check_falls_back_to_a_task_interval(fallback):
    """A failed check reports the union of the model and the task-bootstrap interval (default BCa), or the
    bootstrap interval alone (``fallback_mode="replace"``); the model interval stays in model_lo / model_hi."""
    rng = np.random.default_rng(1)
    n = np.full(200, 8)
    c = rng.binomial(n, np.where(rng.random(200) < 0.5, 0.15, 0.85))
    U = np.stack([special.comb(c, k) / special.comb(n, k) for k in (1, 4)], 1)
    lo, hi = interval(fallback, U, 0.95, 1999, 0)
    lo, hi = unanimous_interval(U, np.clip(lo, 0, 1), np.clip(hi, 0, 1), 0.95)
    kw = {} if fallback == "bca" else {"fallback": fallback}
    r = M.model_interval(n, c, ks=[1, 4], **kw)
    assert not r.check_passed and r.source == f"fallback:{fallback}"
    np.testing.assert_allclose(r.lo, np.minimum(lo, r.model_lo))
    np.testing.assert_allclose(r.hi, np.maximum(hi, r.model_hi))
    rep = M.model_interval(n, c, ks=[1, 4], fallback_mode="replace", **kw)
    np.testing.assert_allclose(rep.lo, lo)
    np.testing.assert_allclose(rep.hi, hi)
    assert np.all(np.isfinite(rep.model_lo)) and not np.allclose(rep.model_lo, rep.lo)


# ---------------------------------------------------------------------------------------------------------------
# seeded calibration cells (seconds): the old intervals fail the tolerance, the model passes it
# ---------------------------------------------------------------------------------------------------------------


def _cell(a, b, T, n, k, R, seed):
    rng = np.random.default_rng(seed)
    p = rng.beta(a, b, (R, T))
    nn = np.full((R, T), n)
    return p, nn, rng.binomial(nn, p), float(M.beta_moment(a, b, k))


def _bca_coverage(nn, c, k, truth, resamples=999):
    hits = 0
    for r in range(nn.shape[0]):
        U = (special.comb(c[r], k) / special.comb(nn[r], k))[:, None]
        lo, hi = interval("bca", U, 0.95, resamples, r)
        lo, hi = unanimous_interval(U, np.clip(lo, 0, 1), np.clip(hi, 0, 1), 0.95)
        hits += bool(lo[0] <= truth <= hi[0])
    return hits / nn.shape[0]


def test_calibration_cell_population_skewed_beta():
    """T = 10, n = 8, k = 4, p ~ Beta(0.7, 1.5), 300 replications: BCa covers E[p^4] ~80 %, the model ≥ 92 %
    (tolerance 92–98 %: ±2.5 Monte-Carlo SEs around 95 %)."""
    warnings.simplefilter("ignore", RuntimeWarning)
    p, nn, c, truth = _cell(0.7, 1.5, 10, 8, 4, 300, 2024)
    old = _bca_coverage(nn, c, 4, truth)
    r = M.model_interval_batch(nn, c, [4], seed=1)
    new = float(np.mean((r.lo[:, 0] <= truth) & (truth <= r.hi[:, 0])))
    assert not 0.92 <= old <= 0.98, f"BCa coverage {old:.3f}"
    assert 0.92 <= new <= 0.98, f"model coverage {new:.3f}"


def test_calibration_cell_fixed_tasks():
    """Same cell, fixed-task estimand mean_t p_t^4: the re-run normal interval θ̂ ± z·se_rerun covers ~70 %."""
    p, nn, c, _ = _cell(0.7, 1.5, 10, 8, 4, 300, 7)
    truth = (p**4).mean(1)
    u4 = special.comb(c, 4) / special.comb(8, 4)
    u8 = special.comb(c, 8) / special.comb(8, 8)
    se = np.sqrt(np.maximum((u4**2 - u8).sum(1), 0)) / 10
    est = u4.mean(1)
    old = float(np.mean((est - 1.96 * se <= truth) & (truth <= est + 1.96 * se)))
    r = M.model_interval_batch(nn, c, [4], estimand="fixed", seed=3)
    new = float(np.mean((r.lo[:, 0] <= truth) & (truth <= r.hi[:, 0])))
    assert old < 0.92, f"re-run coverage {old:.3f}"
    assert new >= 0.92, f"model coverage {new:.3f}"


def test_calibration_cell_near_ceiling():
    """T = 20, n = 8, k = 1, p ~ Beta(8, 1) (BCa ~91 %): the model within 92–98 %."""
    p, nn, c, truth = _cell(8.0, 1.0, 20, 8, 1, 300, 99)
    r = M.model_interval_batch(nn, c, [1], seed=1)
    new = float(np.mean((r.lo[:, 0] <= truth) & (truth <= r.hi[:, 0])))
    assert 0.92 <= new <= 0.98, f"model coverage {new:.3f}"


def test_calibration_cell_impossible_tasks_at_200_tasks():
    """20 % impossible tasks + Beta(2, 2), T = 200, n = 4, k = 4, 400 replications: the Beta shape is wrong and at
    200 tasks its bias in E[p^4] is ~0.7 of the estimate's SD; the check at α = 0.05 fires in ~18 % and the interval
    covers ~93 % (92.7 ± 0.5 % in 3,000 replications); the default threshold at 200 tasks (0.20) fires in ~45 % and
    restores ≥ 94 %."""
    rng = np.random.default_rng(0)
    R, T, n = 400, 200, 4
    p = np.where(rng.random((R, T)) < 0.2, 0.0, rng.beta(2, 2, (R, T)))
    nn = np.full((R, T), n)
    c = rng.binomial(nn, p)
    truth = 0.8 * float(M.beta_moment(2, 2, 4))
    old = M.model_interval_batch(nn, c, [4], check_alpha=0.05, seed=1)
    new = M.model_interval_batch(nn, c, [4], seed=1)

    def cov(r):
        return float(np.mean((r.lo[:, 0] <= truth) & (truth <= r.hi[:, 0])))

    assert np.mean(~new.check_passed) > 2 * np.mean(~old.check_passed)
    assert cov(old) < 0.94, f"α = 0.05: {cov(old):.3f}"
    assert 0.94 <= cov(new) <= 0.98, f"default: {cov(new):.3f}"


def test_check_threshold():
    assert M.check_threshold([10, 50, 120, 200, 1000]).tolist() == [0.05, 0.05, 0.12, 0.2, 0.2]
    assert M.check_threshold([10, 300], 0.01).tolist() == [0.01, 0.01]
    with pytest.raises(TaukError, match="check_alpha"):
        M.check_threshold([10], "strict")


# ---------------------------------------------------------------------------------------------------------------
# the fixed-task interval's variance floor
# ---------------------------------------------------------------------------------------------------------------


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
    est = _unbiased(n, c, 1, "pass^k")[0]
    monkeypatch.setattr(M, "_nonparametric", lambda n_, c_, ks, *a: (est[:, None][: len(n_)].copy(),) * 2)
    r = M.model_interval_batch(n, c, [1], estimand="fixed", fallback_mode="replace", check_alpha=1.0, seed=1)
    assert not np.any(r.check_passed)
    half = special.ndtri(0.975) * np.sqrt(floor_variance(n, c, 1, "pass^k"))
    np.testing.assert_allclose(r.hi[:, 0] - r.lo[:, 0], 2 * half, rtol=1e-9)

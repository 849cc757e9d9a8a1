"""compare()'s default score interval and p-value (tauk.stats.comparisons.score, issue 23).

The checks that failed on the paired t default: a zero-width [0, 0] when no task differs, coverage of a true
difference of 0.07 at 10 tasks (exact trinomial sums), a worst-case type-I error above α at T = 20; and the ones
that must keep holding: the p-value and the interval agree on excluding 0, bad input gives a finite interval and
a note (never NaN, never an unexplained [0, 0]).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special, stats

from tauk.errors import StatsWarning
from tauk.stats import compare
from tauk.stats.comparisons.paired_tests import paired_test, signflip_pvalue
from tauk.stats.comparisons.score import (
    _restricted_var,
    _tango_var,
    score_pvalue,
    score_test,
    ternary_pvalue,
)

from ..frames import make_trials, two_agents
from .test_paired_tests import _benchmark_module

ALPHA = 0.05


def _ternary(a: int, b: int, T: int) -> np.ndarray:
    return np.array([1.0] * a + [-1.0] * b + [0.0] * (T - a - b))


def _trinomial(T: int, pp: float, pm: float, fn) -> float:
    """Σ over (m⁺, m⁻) of P(m⁺, m⁻) · fn(d): exact when d_t ∈ {−1, 0, 1} i.i.d."""
    total = 0.0
    for a in range(T + 1):
        for b in range(T + 1 - a):
            lw = math.lgamma(T + 1) - math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(T - a - b + 1)
            lw += a * math.log(pp) + b * math.log(pm) + (T - a - b) * math.log1p(-pp - pm)
            total += math.exp(lw) * fn(_ternary(a, b, T))
    return total


def _u_shaped_alternative(delta: float, k: int = 1) -> tuple[float, float]:
    """(P(d_t = +1), P(d_t = −1)) with p ~ Beta(0.3, 0.3) shared and A's logit shifted so that the pass^k difference
    is δ (few tasks differ: most are always or never solved); from a fixed sample of 200,000 tasks."""
    return _shared_beta_alternative(0.3, 0.3, delta, k)


def _shared_beta_alternative(a: float, b: float, delta: float, k: int = 1) -> tuple[float, float]:
    """(P(d_t = +1), P(d_t = −1)) with p ~ Beta(a, b) shared and A's logit shifted so that the pass^k difference is
    δ; from a fixed sample of 200,000 tasks."""
    p = np.random.default_rng(3).beta(a, b, 200_000)
    lg = special.logit(np.clip(p, 1e-12, 1 - 1e-12))
    lo, hi = -10.0, 10.0
    for _ in range(60):
        s = 0.5 * (lo + hi)
        pa = special.expit(lg + s)
        lo, hi = (s, hi) if np.mean(pa**k) - np.mean(p**k) < delta else (lo, s)
    ua, ub = pa**k, p**k
    return float(np.mean(ua * (1 - ub))), float(np.mean(ub * (1 - ua)))


def _covers(delta: float, test: str):
    def fn(d):
        r = paired_test(d, test=test)
        return float(r.lo - 1e-9 <= delta <= r.hi + 1e-9)

    return fn


# ---------------------------------------------------------------------------------------------- the construction
def test_ternary_score_is_tangos_and_the_general_construction_agrees():
    """Tango's closed form (2N x² + W x − bδ(1−δ) = 0) equals the constrained nonparametric MLE on {−1, 0, 1}."""
    for a, b, T in ((3, 1, 10), (0, 0, 10), (5, 0, 20), (2, 7, 30), (10, 10, 20)):
        d = _ternary(a, b, T)
        vals, cnt = np.unique(d, return_counts=True)
        delta = np.linspace(-0.95, 0.95, 39)
        np.testing.assert_allclose(_restricted_var(vals, cnt, delta), _tango_var(a, b, T, delta), rtol=1e-7,
                                   atol=1e-12)  # fmt: skip


def test_no_task_differs_gives_an_interval_with_width_and_a_note():
    """Old default: the paired t interval is [0, 0] whenever no task differs (13–24 % of 10-task benchmarks)."""
    r = paired_test(np.zeros(10))
    c = r.hi  # ±c²/(T + c²): Wilson's interval for the share of tasks that differ
    assert r.lo == pytest.approx(-c) and 0.2 < c < 0.4 and r.p_value == 1.0
    rng = np.random.default_rng(0)
    solved = rng.random(10) < 0.5
    row = compare(make_trials(two_agents(solved, solved)), "A", "B").row()
    assert row["ci_high"] - row["ci_low"] > 0.3 and row["diff"] == 0.0
    assert "no task differs" in row["interval_note"]


def test_coverage_at_a_true_difference_of_007_with_10_tasks_one_trial():
    """Exact trinomial sums, T = 10, one trial per task, U-shaped tasks (few differ), δ = ±0.07: the t interval
    covers < 90 %, the default ≥ 94 %."""
    for delta in (0.07, -0.07):
        pp, pm = _u_shaped_alternative(delta)
        assert pp - pm == pytest.approx(delta, abs=2e-3)
        t_cov = _trinomial(10, pp, pm, _covers(pp - pm, "t"))
        new = _trinomial(10, pp, pm, _covers(pp - pm, "score"))
        assert t_cov < 0.90, t_cov
        assert new >= 0.94, new


def test_exact_worst_case_type1_at_most_alpha_at_20_and_50_tasks():
    """sup over the null family P(±1) = q/2 of P(p < α) — the paired t's is 5.74 % at T = 20 (q = 0.69)."""
    bound = _benchmark_module("paired_bound")
    fine = np.linspace(0.0, 1.0, 20_001)
    for T in (20, 50):
        a, b = bound.outcomes(T)
        region = np.array([score_pvalue(_ternary(x, y, T)) < ALPHA for x, y in zip(a, b)])
        worst = float((bound.probs(T, a, b, fine) @ region).max())
        assert worst <= ALPHA + 1e-9, (T, worst)
        assert worst > 0.03, (T, worst)  # not a trivially conservative test
    a, b = bound.outcomes(20)
    assert float((bound.probs(20, a, b, fine) @ bound.t_test_region(20, a, b, ALPHA)).max()) > 0.057


def test_power_close_to_the_best_valid_test_and_above_exact_mcnemar():
    """T = 20, one trial per task, U-shaped tasks (few differ), δ = 0.15: the exact unconditional test (E+M
    ordering) has ≥ 0.95× the power of the best non-randomised swap-invariant test with type-I ≤ α at every null q
    (an integer programme; ordering by |z| alone reaches 0.63× here) and more than the exact conditional McNemar
    test (compare()'s valid headline before the t)."""
    bound = _benchmark_module("paired_bound")
    T = 20
    pp, pm = _u_shaped_alternative(0.15)
    best, _, _ = bound.best_power(T, pp, pm, ALPHA, grid=801, time_limit=60)
    score = _trinomial(T, pp, pm, lambda d: float(score_pvalue(d) < ALPHA))
    by_z = _trinomial(T, pp, pm, lambda d: float(d.any() and ternary_pvalue(T, abs(d.sum()) / math.sqrt(np.abs(d).sum()))
                                                 < ALPHA))  # fmt: skip
    mcnemar = _trinomial(T, pp, pm, lambda d: float(signflip_pvalue(d, mid=False) < ALPHA))
    assert score >= 0.95 * best, (score, best)
    assert by_z < 0.9 * best and score > mcnemar + 0.02, (by_z, mcnemar)


def _t_ends(d: np.ndarray) -> tuple[float, float]:
    T = d.size
    h = float(stats.t.ppf(1 - ALPHA / 2, T - 1)) * float(d.std(ddof=1)) / math.sqrt(T)
    return max(d.mean() - h, -1.0), min(d.mean() + h, 1.0)


def test_ternary_width_where_few_tasks_differ_against_the_t():
    """Exact sums, n = k = 4, U-shaped tasks, δ = 0 (1.2 and 6.2 tasks differ on average at T = 10 and 50), where
    the t covers ≥ 94 %: Tango's interval at z_{0.975} was 1.48× and 1.15× the t's mean width, the ternary interval
    (``ternary_ends``) ≤ 1.40× and ≤ 1.10× (issue 23's target is 1.10×, not met at T = 10:
    ``benchmarks/results/compare_ternary_search.txt``)."""
    pp, pm = _u_shaped_alternative(0.0, k=4)
    for T, bound in ((10, 1.40), (50, 1.10)):
        width = _trinomial(T, pp, pm, lambda d: (lambda r: r.hi - r.lo)(score_test(d)))
        t_width = _trinomial(T, pp, pm, lambda d: (lambda e: e[1] - e[0])(_t_ends(d)))
        assert width <= bound * t_width, (T, width / t_width)


def test_ternary_worst_case_coverage_near_the_edge():
    """Every task differs, nearly all won by B (p⁺ = p, p⁻ = 1 − p, p ≤ 0.05, T = 10; exact binomial sums on a
    fine grid of p): Tango's interval covered δ = 2p − 1 only 83.5 % of the time near p = 0.018 (its worst case over
    the trinomial parameters); the ternary interval ≥ 91 %."""
    T = 10
    ends = [score_test(_ternary(a, T - a, T)) for a in range(T + 1)]
    worst = 1.0
    for p in np.linspace(0.002, 0.05, 4801):
        pmf = stats.binom.pmf(np.arange(T + 1), T, p)
        worst = min(worst, sum(w for w, r in zip(pmf, ends) if r.lo - 1e-12 <= 2 * p - 1 <= r.hi + 1e-12))
    assert worst >= 0.91, worst


def test_ternary_interval_and_exact_test_agree_on_every_outcome():
    """Every ternary outcome at T = 10, 20, 50: p < α exactly when the interval excludes 0; never zero width."""
    for T in (10, 20, 50):
        for a in range(T + 1):
            for b in range(T + 1 - a):
                r = score_test(_ternary(a, b, T))
                assert r.hi - r.lo > 0.05, (a, b, T)
                assert (r.p_value < ALPHA) == (r.lo > 0 or r.hi < 0), (a, b, T, r)
                assert r.lo <= r.estimate <= r.hi


# ---------------------------------------------------------------------------------------------- agreement
def test_p_value_and_interval_agree_on_excluding_zero():
    rng = np.random.default_rng(23)
    for _ in range(150):
        T = int(rng.integers(1, 40))
        n = int(rng.choice([1, 2, 4, 8]))
        k = int(rng.integers(1, n + 1))
        pa, pb = rng.beta(0.5, 0.5, T), rng.beta(0.5, 0.5, T)
        ua = np.array([math.comb(c, k) / math.comb(n, k) for c in rng.binomial(n, pa)])
        ub = np.array([math.comb(c, k) / math.comb(n, k) for c in rng.binomial(n, pb)])
        d = ua - ub
        for ci in (0.95, 0.9):
            r = score_test(d, ci=ci)
            assert all(math.isfinite(x) for x in (r.lo, r.hi, r.p_value)), d
            assert r.lo < r.hi
            assert (r.p_value < 1 - ci) == (r.lo > 0 or r.hi < 0), (d, r)


def test_ternary_pvalue_is_monotone_and_one_at_zero():
    T = 20
    assert ternary_pvalue(T, 0.0) == 1.0
    zs = np.linspace(0.1, 4.0, 40)
    ps = [ternary_pvalue(T, z) for z in zs]
    assert all(x >= y - 1e-12 for x, y in zip(ps, ps[1:]))


# ---------------------------------------------------------------------------------------------- bad input
def test_bad_input_one_task_all_equal_and_tiny_benchmarks():
    # one task: a finite interval (no test can reject with one task), a note, and a StatsWarning from compare()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = compare(make_trials(two_agents([1], [0])), "A", "B").row()
    assert (row["ci_low"], row["ci_high"]) == (-1.0, 1.0) and row["p_value"] >= ALPHA
    assert "one shared task" in row["interval_note"]
    assert any(issubclass(w.category, StatsWarning) for w in caught)
    # every task differs by the same amount: the score interval has width (no assumption on the shape of d: a
    # 20 % chance of d_t = −1 would give twelve 0.25's 7 % of the time, so 0 is not excluded)
    r = paired_test(np.full(12, 0.25))
    assert -1.0 < r.lo < 0.25 < r.hi < 1.0 and r.p_value >= ALPHA
    r = paired_test(np.ones(12))  # every task won by A: [x, 1], p < α
    assert r.hi == 1.0 and 0.3 < r.lo < 1.0 and r.p_value < ALPHA
    # too few tasks for any valid test: [−1, 1], never NaN
    r = paired_test(np.ones(4))
    assert (r.lo, r.hi) == (-1.0, 1.0) and r.p_value >= ALPHA
    assert all(math.isnan(x) for x in paired_test(np.array([]))[:4])


# ---------------------------------------------------------------------------------------------- skewed differences
def _simulated_coverage(pop: str, T: int, n: int, k: int, delta: float, reps: int, seed: int) -> dict[str, float]:
    """Coverage of the true δ by the default and the paired t on ``reps`` simulated benchmarks of a population of
    ``benchmarks/calibration_compare_delta.py`` (A's logit shift fitted on 60,000 tasks)."""
    cal = _benchmark_module("calibration_compare_delta")
    shift = cal.shift_for(pop, k, delta, draws=60_000)
    tab = cal.u_table(n, k)
    sampler = cal.POPULATIONS[pop][1]
    rng = np.random.default_rng(seed)
    hits = {"score": 0, "t": 0}
    for _ in range(reps):
        pa, pb = sampler(rng, T, shift)
        d = tab[rng.binomial(n, pa)] - tab[rng.binomial(n, pb)]
        for test in hits:
            r = paired_test(d, test=test)
            hits[test] += r.lo - 1e-9 <= delta <= r.hi + 1e-9
    return {m: h / reps for m, h in hits.items()}


def test_skewed_differences_are_covered_where_the_t_misses():
    """n = 8 trials, pass^4, B better by 0.15 (τ-bench-like tasks), 20 tasks: the per-task differences of unbiased
    pass^4 estimates are skewed (most 0, a tail towards −1) and the paired t — the non-ternary default before —
    covers ~90.6 % (calibration, 1,000 benchmarks). The skewness-corrected default covers ≥ 94 % (seeded, 500
    benchmarks: MC SE ~1 point)."""
    cov = _simulated_coverage("taubench", 20, 8, 4, -0.15, reps=500, seed=23)
    assert cov["t"] < 0.93, cov
    assert cov["score"] >= 0.94, cov


def test_skew_t_contains_the_t_and_agrees_with_its_p_value():
    """The non-ternary interval is the union of the t and Hall's skewness-corrected interval: never shorter than the
    t on either side (so it rejects only where the t does), and its p-value is below α exactly when it excludes 0."""
    from scipy import stats

    from tauk.stats.comparisons.score import skew_t_ends, skew_t_pvalue

    rng = np.random.default_rng(5)
    for _ in range(300):
        T = int(rng.integers(6, 60))
        d = np.clip(np.round(rng.normal(rng.normal(0, 0.1), 0.3, T) ** 3 * 8) / 8, -1, 1)
        if np.count_nonzero(d) < 5 or np.all(d == d[0]):
            continue
        c = float(stats.t.ppf(0.975, T - 1))
        lo, hi = skew_t_ends(d, c)
        se = d.std(ddof=1) / math.sqrt(T)
        assert lo <= d.mean() - c * se + 1e-12 and hi >= d.mean() + c * se - 1e-12
        p = skew_t_pvalue(d)
        p_t = 2 * stats.t.sf(abs(d.mean() / se), T - 1)
        assert p >= p_t - 1e-12
        assert (p < 0.05) == (lo > 0 or hi < 0), (d, lo, hi, p)


# ---------------------------------------------------------------------------------------------- few tasks differing
def _simulated_width(pop: str, T: int, n: int, k: int, delta: float, reps: int, seed: int) -> dict[str, float]:
    """Coverage of the true δ and mean width of the default (given the trial counts, as compare() passes them) and
    of the paired t on ``reps`` simulated benchmarks of ``benchmarks/calibration_compare_delta.py``'s ``pop``."""
    from tauk.stats.comparisons.score import TrialCounts

    cal = _benchmark_module("calibration_compare_delta")
    shift = cal.shift_for(pop, k, delta, draws=60_000)
    tab = cal.u_table(n, k)
    sampler = cal.POPULATIONS[pop][1]
    rng = np.random.default_rng(seed)
    out = {"score_cover": 0.0, "score_width": 0.0, "t_cover": 0.0, "t_width": 0.0}
    nn = np.full(T, n)
    for _ in range(reps):
        pa, pb = sampler(rng, T, shift)
        ca, cb = rng.binomial(n, pa), rng.binomial(n, pb)
        d = tab[ca] - tab[cb]
        for name, r in (("score", paired_test(d, trials=TrialCounts(nn, ca, nn, cb, k))), ("t", paired_test(d, test="t"))):
            out[f"{name}_cover"] += (r.lo - 1e-9 <= delta <= r.hi + 1e-9) / reps
            out[f"{name}_width"] += (r.hi - r.lo) / reps
    return out


def test_few_differing_pass1_width_near_the_t():
    """u-shaped tasks (most always or never solved), 10 tasks, 8 trials, pass^1, no true difference: fewer than 5
    tasks differ in about half the benchmarks, where the default was the constrained-MLE score interval (its atom
    at ±1) — 1.89× the paired t's mean width, with the t already covering 97 %. Flooring the t's spread at the
    trial-level binomial variance instead keeps the width ≤ 1.25× the t (1.18× in the calibration) and the
    coverage ≥ 95 % at δ = 0 and δ = +0.07 (seeded, 300 benchmarks)."""
    at0 = _simulated_width("u-shaped", 10, 8, 1, 0.0, reps=300, seed=7)
    assert at0["score_width"] <= 1.25 * at0["t_width"], at0
    assert at0["score_cover"] >= 0.95, at0
    away = _simulated_width("u-shaped", 10, 8, 1, 0.07, reps=300, seed=8)
    assert away["score_cover"] >= 0.95, away


def test_floored_t_agrees_with_its_p_value_and_is_never_zero_width():
    """The floored t (k = 1, trial counts given, fewer than 5 non-ternary tasks differing): never zero width, never
    shorter than the paired t on either side, p below α exactly when 0 is outside; with one differing task out
    of many the floor, not the sample SD, sets the width."""
    from scipy import stats

    from tauk.stats.comparisons.score import TrialCounts, binomial_floor

    rng = np.random.default_rng(11)
    seen = 0
    for _ in range(400):
        T, n = int(rng.integers(3, 40)), int(rng.integers(2, 9))
        p = rng.beta(0.3, 0.3, T)
        ca, cb = rng.binomial(n, p), rng.binomial(n, np.clip(p + rng.normal(0, 0.2, T), 0, 1))
        d = (ca - cb) / n
        trials = TrialCounts(np.full(T, n), ca, np.full(T, n), cb, 1)
        r = score_test(d, trials=trials)
        if r.reference != "floored t":
            continue
        seen += 1
        assert r.hi - r.lo > 0 and math.isfinite(r.p_value)
        c = float(stats.t.ppf(0.975, T - 1))
        se = d.std(ddof=1) / math.sqrt(T)
        assert r.lo <= max(d.mean() - c * se, -1.0) + 1e-12 and r.hi >= min(d.mean() + c * se, 1.0) - 1e-12
        assert (r.p_value < ALPHA) == (r.lo > 0 or r.hi < 0), (d, r)
        assert r.p_value == pytest.approx(score_pvalue(d, trials=trials))
    assert seen > 50
    # 20 tasks, one differing by 1/4 (1 of 4 trials against 0), the rest solved always or never
    ca = np.array([1] + [0] * 10 + [4] * 9)
    cb = np.array([0] * 11 + [4] * 9)
    d = (ca - cb) / 4.0
    trials = TrialCounts(np.full(20, 4), ca, np.full(20, 4), cb, 1)
    r = score_test(d, trials=trials)
    half = float(stats.t.ppf(0.975, 19)) * math.sqrt(binomial_floor(trials) / 20)
    assert r.reference == "floored t" and r.hi - d.mean() >= half - 1e-12
    assert d.std(ddof=1) ** 2 < binomial_floor(trials)


def test_compare_passes_the_trial_counts():
    """compare() at n = 4 trials, k = 1, one task of 12 differing: the default interval is the floored t (narrower
    than the score construction it was, wider than the t), and its p-value agrees with it."""
    tasks_a = [[1, 1, 1, 1]] * 5 + [[0, 0, 0, 0]] * 6 + [[1, 0, 0, 0]]
    tasks_b = [[1, 1, 1, 1]] * 5 + [[0, 0, 0, 0]] * 6 + [[0, 0, 0, 0]]
    df = make_trials(two_agents(tasks_a, tasks_b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        row = compare(df, "A", "B", k=1).row()
    d = np.array([0.0] * 11 + [0.25])
    old = score_test(d)  # without the counts: the score construction
    assert old.reference == "normal"
    assert row["ci_high"] - row["ci_low"] < 0.8 * (old.hi - old.lo)
    assert row["ci_high"] - row["ci_low"] > row["t_high"] - row["t_low"]
    assert row["p_value"] >= ALPHA and row["ci_low"] < 0 < row["ci_high"]


def test_rank_pvalues_use_the_trial_counts_as_compare_does():
    """Rank intervals' pairwise p-values get the same trial counts as compare()'s rows: with one of 12 tasks
    differing at n = 4, k = 1, the floored t's p, not the score construction's."""
    from tauk.stats.comparisons.paired_tests import pairwise_pvalues
    from tauk.stats.comparisons.score import TrialCounts

    C = np.array([[4, 4, 4]] * 5 + [[0, 0, 0]] * 6 + [[1, 0, 3]])
    N = np.full(C.shape, 4)
    U = C / 4.0
    pairs = [(0, 1), (0, 2), (1, 2)]
    p, _ = pairwise_pvalues(U, pairs, counts=(N, C, 1))
    for q, (a, b) in enumerate(pairs):
        want = paired_test(U[:, a] - U[:, b], trials=TrialCounts(N[:, a], C[:, a], N[:, b], C[:, b], 1)).p_value
        assert p[q] == pytest.approx(want)
    assert p[0] != pytest.approx(score_pvalue(U[:, 0] - U[:, 1]))

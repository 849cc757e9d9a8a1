"""The score comparison: an interval for the mean paired difference that covers away from 0 too, and its p-value.

Per task d_t = Û_k^A − Û_k^B ∈ [−1, 1]; the estimand is δ = E[d_t]. The paired t interval d̄ ± t·s/√T uses the
spread of the observed d_t, which is small exactly when few tasks differ — and zero when none does ([0, 0]). Its
coverage of a true δ ≠ 0 falls to 75–92 % at 10–20 tasks (issue 23). The score interval asks instead, for each
candidate δ, how far d̄ is from δ in units of the spread d_t *would have if the mean were δ*:

    z(δ) = √T (d̄ − δ) / √V(δ),   interval = {δ : |z(δ)| < c},

with V(δ) the variance of d under the distribution on [−1, 1] that maximises the likelihood of the observed d_t
subject to mean δ (the constrained nonparametric MLE: weights n_j / (T + λ(v_j − δ)) on the observed values v_j,
plus an atom at +1 or −1 when δ lies beyond what re-weighting the observed values can reach). Where every d_t is
−1, 0 or 1 (one trial per task, or k = n) this is exactly Tango's (1998) score interval for a difference of paired
proportions (Newcombe 1998, method 10); elsewhere it is the same construction on the observed support. It never
has zero width: with no task differing it is ±c²/(T + c²) (Wilson's interval for the discordant share). For
ternary d the reported interval joins it with an adjusted Wald interval (below).

The p-value tests δ = 0 with the same statistic:

* ternary d_t (``"exact unconditional"``): z(0) = (m⁺ − m⁻)/√(m⁺ + m⁻) (McNemar's score statistic), and an exact
  unconditional p-value over the whole null family P(d_t = ±1) = q/2, P(d_t = 0) = 1 − q: outcomes are ordered by
  their estimated p-value P_{q̂}(|Z| ≥ |z|) at q̂ = (m⁺ + m⁻)/T (Lloyd's E+M) and p = sup_q P_q(at least as
  extreme), the sup over a grid of q (exact sums; up to :data:`EM_MAX_T` tasks, ordered by |z| above). Its size is
  ≤ α at every q by construction (4.93 % at T = 20, where the paired t's reaches 5.74 %), and at T = 20 it has
  ≥ 0.99× the power of the best valid non-randomised test in every measured cell (ordering by |z| alone — Suissa
  and Shuster's test — had 0.42–0.84×: ``benchmarks/results/compare_power_T20.txt``). The interval, at the 95 %
  level and with T in the designed range (:func:`~tauk.stats.comparisons.ternary_design.designed_range`), is read
  from a table designed by integer programming (:mod:`~tauk.stats.comparisons.ternary_design`): coverage ≥ 94 % at
  every trinomial parameter, 0 inside exactly where the exact test does not reject, the estimate inside, ends
  monotone in (m⁺, m⁻), no end beyond the union interval below at 99 %, and the least largest width relative to
  the paired t's over the calibration's ternary cells that the search found (``benchmarks/compare_ternary_design.py``,
  ``benchmarks/results/compare_ternary_design.txt``). Elsewhere (other levels, larger T) it is the union interval
  (:func:`ternary_ends`) of an Agresti–Min adjusted Wald interval (½ added to each discordant count,
  critical 2.0), Tango's score interval at c = 1.7 rising to z_{1−α/2} with the discordant share and, where every
  differing task went one way, the exact one-sided bound at 94 % ([−1, 1] when no outcome with T tasks has
  p < α): narrower than Tango's at z_{1−α/2} where few tasks differ, with a worst coverage over all
  trinomial parameters of 92.6–93.5 % instead of 83.5–83.8 % (T = 10–50;
  ``benchmarks/results/compare_ternary_search.txt``). The union reaches to 0 where
  it excludes 0 but the exact test does not reject, and where the test rejects but it still holds 0 (5 – 0 of 20)
  its end towards 0 is Tango's at z_{1−α/2}, so the two agree on excluding 0 (checked per row:
  ``interval_excludes_0``, ``p_below_alpha``, ``interval_note``);
* otherwise, where at least :data:`MIN_DIFFERING_FOR_T` = 5 tasks differ (``"skew t"``): the union of the paired t
  interval d̄ ± t_{T−1}·s/√T and Hall's (1992) skewness-corrected t interval {δ : |√T·h((d̄ − δ)/s)| < t_{T−1}},
  h(u) = u + γu²/3 + γ²u³/27 + γ/(6T) (monotone; γ the sample skewness shrunk towards 0 by its variance, the
  larger of the jackknife's and the normal-theory 6/T), with p = max(p_t, p_Hall) — below α exactly when 0 is
  outside the union. With n > k trials the differences of unbiased pass^k estimates are not ternary and, where one agent is clearly better at k > 1, skewed
  (most tasks 0, a tail towards ±1); the paired t then misses the true δ on the side of the tail (90.6 % at T = 20,
  n = 8, k = 4 in the calibration). Hall's interval reaches further towards the tail; the union keeps the t's end on
  the other side, so the test rejects only where the t does (no loss of power on the side of the effect) and the
  interval is never shorter than the t's. The score construction's atom at ±1 — the right model where a task's
  difference can only be −1, 0 or 1 — made the interval 1.3–2.2× the t's here (a first run of
  ``benchmarks/calibration_compare_delta.py``). Alternatives tried on the failing cells and not kept: a symmetric
  Edgeworth-calibrated critical value (widens where skewed, but on both sides, so it rejects far less often than the
  t where there is an effect) and Hall's interval alone (a noisy sample skewness pulls one end in: it under-covered
  δ = 0). Heavy-tailed, nearly symmetric differences (a quarter of the tasks differing a lot, n = 8, k = 1,
  T = 20) stay a case the t-based interval under-covers (93.5 / 93.0 % at δ = ±0.07 over 10,000 benchmarks): the
  misses fall on the side of the effect, in benchmarks that drew few of the differing tasks (coverage 69–84 % with
  1–2 of them), nine in ten with d̄ and three in four with the sample skewness of the other sign, so no skewness
  correction reaches them. What
  lifts them (fewer degrees of freedom where the sample kurtosis is high, Hall's interval unshrunk, the score
  construction, with or without keeping today's test) widens the same population at δ = 0 past 1.10× the t, or
  T = 10 cells (``benchmarks/results/compare_sparse_candidates.txt``, ``docs/calibration/comparisons.md``);
* non-ternary with fewer than 5 tasks differing, k = 1 and the trial counts given (:class:`TrialCounts`, as
  ``compare()`` passes them; ``"floored t"``): the skew t above with s floored at the trial-level SD the counts
  imply — √ of the mean over tasks of Var(Û^A) + Var(Û^B), each binomial at the task's Jeffreys posterior-mean rate
  (c + ½)/(n + 1) (:func:`binomial_floor`) — and γ scaled to the floored spread. Whatever the tasks' true
  differences, d_t varies at least by trial noise; a sample SD below that (one or two tasks differing, the rest at
  0) is what made the t miss, and the floor, not an atom at ±1, keeps the interval from collapsing. Measured at
  T = 10 (``benchmarks/results/compare_delta_coverage_nonternary.txt``): width 1.02–1.33× the t where the score
  construction was 1.10–1.89×, coverage ≥ 94.8 % in every T = 10, k = 1 cell (pseudo-counts ¼ or none: narrower,
  down to 93.5 %, ``benchmarks/results/compare_nonternary_tradeoff.txt``). Where k > 1 the per-task Û_k are
  themselves skewed (most mass at 0, the rest towards 1) and the same floor covered 84.8 % at T = 10, n = 8, k = 4,
  δ = −0.15 (the score construction 97.1 %), so k > 1 keeps the score construction;
* otherwise non-ternary with fewer than 5 tasks differing (``"normal"``): the score construction, p = 2·Φ(−|z(0)|)
  and c = z_{1−α/2}.

Measured coverage, width and power: ``benchmarks/calibration_compare_delta.py`` (``docs/calibration/comparisons.md``).

Examples
--------
>>> import numpy as np
>>> from tauk.stats.comparisons.score import score_test
>>> r = score_test(np.zeros(10))  # no task differs: a finite interval, not [0, 0]
>>> print(f"[{r.lo:.3f}, {r.hi:.3f}] p = {r.p_value:.2f} ({r.reference})")
[-0.250, 0.250] p = 1.00 (exact unconditional)
>>> d = np.array([1.0] * 8 + [-1.0] + [0.0] * 11)  # 8 tasks won by A, 1 by B, 11 ties
>>> r = score_test(d)
>>> print(f"{r.estimate:.2f} [{r.lo:.3f}, {r.hi:.3f}] p = {r.p_value:.4f}")
0.35 [0.025, 0.560] p = 0.0188
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy import special, stats

from tauk.conventions import CI_LEVEL

from ..options import check_level
from .skew_t import (
    MIN_DIFFERING_FOR_T,
    Spread,
    TrialCounts,
    binomial_floor,
    floored_spread,
    floored_t_ends,
    floored_t_pvalue,
    hall_ends,
    skew_t_ends,
    skew_t_pvalue,
    skewness,
    spread,
    union_ends,
    union_pvalue,
)
from .ternary_design import designed_ends

__all__ = ["EM_MAX_T", "MIN_DIFFERING_FOR_T", "TrialCounts", "binomial_floor", "floored_t_ends", "floored_t_pvalue", "hall_ends", "skew_t_ends", "skew_t_pvalue", "skewness", "ScoreTest", "ternary_em_pvalue", "score_pvalue", "score_test", "score_z", "ternary_pvalue", "ternary_critical", "ternary_ends", "is_ternary", "TERNARY_PSEUDO", "TERNARY_WALD_Z", "TERNARY_SCORE_C0", "TERNARY_EDGE_ALPHA"]

_Q_GRID = 4001  # q's the sup over the null family is taken on (then refined around the maximum)


class ScoreTest(NamedTuple):
    """Result of :func:`score_test`: ``(estimate, lo, hi, p_value, reference, critical)``; ``reference``:
    ``"exact unconditional"`` (ternary d_t), ``"skew t"`` (the union of the paired t and Hall's skewness-corrected
    t), ``"floored t"`` (the same with the spread floored at the trial-level binomial variance: k = 1, fewer than
    :data:`MIN_DIFFERING_FOR_T` tasks differing, trial counts given) or ``"normal"``; ``critical``: the c of
    {δ : |z(δ)| < c} (the t quantile for ``"skew t"``; for ternary d, z_{1−α/2}, the interval being
    :func:`ternary_ends`)."""

    estimate: float
    lo: float
    hi: float
    p_value: float
    reference: str
    critical: float


def is_ternary(d: np.ndarray) -> bool:
    """Every d_t is −1, 0 or 1."""
    return bool(np.all((d == 0) | (np.abs(d) == 1)))


# ---------------------------------------------------------------------------------------------- V(δ)
def _restricted_var(vals: np.ndarray, cnt: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """V(δ) for each δ in ``delta`` (−1 < δ < 1): the variance, about δ, of the mean-δ distribution on [−1, 1] with
    the largest likelihood of the observed values ``vals`` (counts ``cnt``).

    Lagrange: weights π_j = n_j/(N + λ r_j), r_j = v_j − δ, with Σ π_j r_j = 0; λ ∈ [−N/(1−δ), N/(1+δ)] (weights on
    an unobserved ±1 would need N + λ(±1 − δ) = 0). When the root lies beyond an end (δ too far to reach by
    re-weighting), λ sits at that end and the missing mass 1 − Σ π_j goes to the atom at +1 (λ < 0) or −1.
    """
    N = float(cnt.sum())
    delta = np.asarray(delta, dtype=np.float64)
    r = vals[None, :] - delta[:, None]
    c = cnt[None, :].astype(np.float64)
    lo = -N / (1.0 - delta)
    hi = N / (1.0 + delta)
    has_plus, has_minus = bool(np.any(vals == 1.0)), bool(np.any(vals == -1.0))

    def g(lam):
        return np.sum(c * r / (N + lam[:, None] * r), axis=1)

    lam = np.empty_like(delta)
    at_lo = np.zeros(delta.shape, bool)
    at_hi = np.zeros(delta.shape, bool)
    if not has_plus:
        at_lo = g(lo) <= 0.0
    if not has_minus:
        at_hi = g(hi) >= 0.0
    # safeguarded Newton on the interior roots (g decreasing in λ; bracket [a, b], bisection when Newton leaves it)
    a = np.where(at_lo | at_hi, 0.0, lo)
    b = np.where(at_lo | at_hi, 0.0, hi)
    width = b - a
    a = a + 1e-12 * width
    b = b - 1e-12 * width
    for _ in range(8):  # bisection first: Newton from far away overshoots the poles at the ends
        x = 0.5 * (a + b)
        gx = np.sum(c * r / (N + x[:, None] * r), axis=1)
        a = np.where(gx > 0, x, a)
        b = np.where(gx > 0, b, x)
    x = 0.5 * (a + b)
    for _ in range(40):
        den = N + x[:, None] * r
        gx = np.sum(c * r / den, axis=1)
        dg = -np.sum(c * r * r / (den * den), axis=1)
        a = np.where(gx > 0, x, a)
        b = np.where(gx > 0, b, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - gx / dg
        bad = ~np.isfinite(step) | (step < a) | (step > b)
        x_new = np.where(bad, 0.5 * (a + b), step)
        done = np.all((np.abs(x_new - x) <= 1e-11 * (1.0 + np.abs(x))) | (np.abs(gx) <= 1e-14 * N))
        x = x_new
        if done:
            break
    lam[:] = x
    lam = np.where(at_lo, lo, np.where(at_hi, hi, lam))
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = c / (N + lam[:, None] * r)
    pi = np.where(np.isfinite(pi), pi, 0.0)
    V = np.sum(pi * r * r, axis=1)
    atom = np.clip(1.0 - pi.sum(axis=1), 0.0, 1.0)
    V = V + np.where(at_lo, atom * (1.0 - delta) ** 2, 0.0) + np.where(at_hi, atom * (1.0 + delta) ** 2, 0.0)
    return V


def _tango_var(a: int, b: int, N: int, delta: np.ndarray) -> np.ndarray:
    """V(δ) for ternary d (a tasks at +1, b at −1 of N) in closed form (Tango 1998): 2x + δ − δ², x = P(d = −1)
    under the constraint, the root of 2N x² + W x − bδ(1 − δ) = 0, W = −a − b + (2N − a + b)δ."""
    W = -a - b + (2 * N - a + b) * delta
    x = (-W + np.sqrt(W * W + 8.0 * N * b * delta * (1.0 - delta))) / (4.0 * N)
    return np.maximum(2.0 * x + delta - delta * delta, 0.0)


def score_z(d: np.ndarray, delta: np.ndarray | float) -> np.ndarray:
    """z(δ) = √T (d̄ − δ)/√V(δ) for each δ (0 where d̄ = δ; ±inf at δ = ∓1 unless every d_t is there)."""
    d = np.asarray(d, dtype=np.float64).ravel()
    T = d.size
    vals, cnt = np.unique(d, return_counts=True)
    delta = np.atleast_1d(np.asarray(delta, dtype=np.float64))
    mean = float(d.mean())
    inner = (delta > -1.0) & (delta < 1.0)
    z = np.zeros(delta.shape)
    if np.any(inner) and is_ternary(vals):
        V = _tango_var(int(np.sum(d == 1)), int(np.sum(d == -1)), T, delta[inner])
    elif np.any(inner):
        V = _restricted_var(vals, cnt, delta[inner])
    if np.any(inner):
        diff = mean - delta[inner]
        with np.errstate(divide="ignore", invalid="ignore"):
            zi = np.where(diff == 0, 0.0, math.sqrt(T) * diff / np.sqrt(V))
        z[inner] = np.where(np.isnan(zi), 0.0, zi)
    with np.errstate(invalid="ignore"):
        z[~inner] = np.where(mean == delta[~inner], 0.0, np.sign(mean - delta[~inner]) * np.inf)
    return z


# ---------------------------------------------------------------------------------------------- the null family
@lru_cache(maxsize=64)
def _binom_rows(T: int) -> tuple[np.ndarray, np.ndarray]:
    """P(m discordant tasks | q) for q on the grid (rows) and m = 0…T (columns), and the grid."""
    q = np.linspace(0.0, 1.0, _Q_GRID if T <= 200 else 1001)
    m = np.arange(T + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = (special.gammaln(T + 1) - special.gammaln(m + 1) - special.gammaln(T - m + 1))[None, :] \
            + m[None, :] * np.log(q[:, None]) + (T - m)[None, :] * np.log1p(-q[:, None])  # fmt: skip
    lp[0, 0] = 0.0
    lp[-1, -1] = 0.0
    return np.exp(lp), q


def _conditional_tails(T: int, zabs: float) -> np.ndarray:
    """S_m = P(|2B − m| ≥ zabs·√m), B ~ Binomial(m, ½), for m = 0…T (the sign test given m discordant tasks)."""
    m = np.arange(T + 1)
    need = zabs * np.sqrt(m) - 1e-9  # |2B − m| ≥ need
    # B ≥ (m + need)/2 or B ≤ (m − need)/2
    up = np.ceil((m + need) / 2.0)
    dn = np.floor((m - need) / 2.0)
    tail = stats.binom.sf(up - 1, m, 0.5) + stats.binom.cdf(dn, m, 0.5)
    tail = np.where(up <= dn, 1.0, tail)  # the two tails overlap: everything
    return np.where(m == 0, 1.0 if zabs <= 1e-9 else 0.0, np.minimum(tail, 1.0))


def ternary_pvalue(T: int, zabs: float) -> float:
    """sup_q P_q(|Z| ≥ zabs) over the null family of ternary differences (exact sums; q on a grid, refined)."""
    if zabs <= 1e-9:
        return 1.0
    rows, q = _binom_rows(T)
    S = _conditional_tails(T, zabs)
    size = rows @ S
    i = int(size.argmax())
    # refine around the grid maximum (the size is a polynomial in q)
    lo, hi = q[max(i - 1, 0)], q[min(i + 1, q.size - 1)]
    fine = np.linspace(lo, hi, 41)
    m = np.arange(T + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = stats.binom.pmf(m[None, :], T, fine[:, None]) @ S
    return float(min(1.0, max(size.max(), np.nanmax(f))))


#: up to this many tasks the ternary p-value orders outcomes by their estimated p (E+M); above, by |z|
EM_MAX_T = 150


@lru_cache(maxsize=32)
def _em_table(T: int) -> np.ndarray:
    """P[m⁺, m⁻]: the exact unconditional p-value of every ternary outcome with T tasks, outcomes ordered by their
    *estimated* p-value (Lloyd's E+M): p̂(o) = P_{q̂}(|Z| ≥ |z_o|) at the MLE q̂ = (m⁺ + m⁻)/T of the discordance
    rate, then p(o) = sup_q P_q(p̂ ≤ p̂(o)). Ordering by p̂ rather than by |z| keeps the sparse outcomes (4 – 0 of
    20) that |z| ordering must give up to hold the size where most tasks differ."""
    a_, b_ = np.meshgrid(np.arange(T + 1), np.arange(T + 1), indexing="ij")
    keep = a_ + b_ <= T
    a, b = a_[keep], b_[keep]
    m = a + b
    z = np.where(m > 0, np.abs(a - b) / np.sqrt(np.maximum(m, 1)), 0.0)
    mm = np.arange(T + 1)
    # S[o, m'] = P(|2B − m'| ≥ z_o √m'), B ~ Binomial(m', ½)
    need = z[:, None] * np.sqrt(mm[None, :]) - 1e-9
    up = np.ceil((mm[None, :] + need) / 2.0)
    dn = np.floor((mm[None, :] - need) / 2.0)
    # cumulative Binomial(m', ½) table, cdf[m', j] = P(B ≤ j) for j = 0…T (indexed instead of scipy per cell)
    cdf = np.cumsum(stats.binom.pmf(mm[None, :], mm[:, None], 0.5), axis=1)
    cdf = np.minimum(cdf, 1.0)

    def cdf_at(j):  # P(B ≤ j) for B ~ Binomial(m', ½), m' along the columns
        jj = np.clip(j, -1, T).astype(np.int64)
        out = np.where(jj < 0, 0.0, cdf[mm[None, :], np.maximum(jj, 0)])
        return out

    S = (1.0 - cdf_at(up - 1)) + cdf_at(dn)
    S = np.where(up <= dn, 1.0, np.clip(S, 0.0, 1.0))
    S[:, 0] = np.where(z <= 1e-9, 1.0, 0.0)
    B = stats.binom.pmf(mm[None, :], T, (m / T)[:, None])
    p_est = np.where(z <= 1e-9, 1.0, np.round(np.sum(B * S, axis=1), 12))
    order = np.argsort(p_est, kind="stable")
    ps = p_est[order]
    last = np.r_[np.flatnonzero(np.diff(ps) > 0), ps.size - 1]  # the end of each tie group
    sup = np.zeros(last.size)
    q = np.linspace(0.0, 1.0, _Q_GRID if T <= 60 else 1001)
    logc = special.gammaln(T + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(T - a - b + 1)
    for lo in range(0, q.size, 256):
        qq = q[lo : lo + 256][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = logc[None, :] + m[None, :] * np.log(qq / 2.0) + (T - m)[None, :] * np.log1p(-qq)
        P = np.exp(np.nan_to_num(lp, nan=-np.inf))
        P[:, m == 0] = np.where(qq == 0.0, 1.0, P[:, m == 0])
        P[:, m == T] = np.where(qq == 1.0, np.exp(logc[m == T] + T * np.log(0.5))[None, :], P[:, m == T])
        cum = np.cumsum(P[:, order], axis=1)[:, last]
        sup = np.maximum(sup, cum.max(axis=0))
    group = np.searchsorted(last, np.arange(ps.size))
    p_sorted = np.minimum(np.maximum.accumulate(sup), 1.0)[group]
    out = np.full((T + 1, T + 1), np.nan)
    pv = np.empty(ps.size)
    pv[order] = p_sorted
    out[a, b] = np.where(z <= 1e-9, 1.0, pv)
    return out


def ternary_em_pvalue(a: int, b: int, T: int) -> float:
    """The exact unconditional p-value of m⁺ = a, m⁻ = b out of T (E+M ordering; :func:`_em_table`); above
    :data:`EM_MAX_T` tasks the |z|-ordered :func:`ternary_pvalue`."""
    if a + b == 0 or a == b:
        return 1.0
    if T > EM_MAX_T:
        return ternary_pvalue(T, abs(a - b) / math.sqrt(a + b))
    return float(_em_table(T)[a, b])


def _levels(T: int) -> np.ndarray:
    """Every attainable |z| = |m⁺ − m⁻|/√(m⁺ + m⁻) with T tasks, ascending."""
    m = np.arange(1, T + 1)
    out = [np.abs(2 * np.arange(0, mm + 1) - mm) / math.sqrt(mm) for mm in m]
    return np.unique(np.round(np.concatenate(out), 12))


@lru_cache(maxsize=256)
def _any_rejects(T: int, alpha: float) -> bool:
    """Some ternary outcome with T tasks has an exact unconditional p-value < α."""
    if T > EM_MAX_T:
        return True
    return bool(np.nanmin(_em_table(T)) < alpha)


@lru_cache(maxsize=256)
def ternary_critical(T: int, alpha: float) -> float:
    """The smallest attainable |z| whose exact unconditional p-value is < α (inf when none is): the test rejects
    exactly when |z| ≥ this, and the interval is {δ : |z(δ)| < this}."""
    lv = _levels(T)
    lv = lv[lv > 0]
    if lv.size == 0 or ternary_pvalue(T, float(lv[-1])) >= alpha:
        return math.inf
    lo, hi = 0, lv.size - 1  # p(lv[hi]) < α; find the first index with p < α (p decreases in |z|)
    while lo < hi:
        mid = (lo + hi) // 2
        if ternary_pvalue(T, float(lv[mid])) < alpha:
            hi = mid
        else:
            lo = mid + 1
    return float(lv[lo])


# ---------------------------------------------------------------------------------------------- the interval
def _edges(d: np.ndarray, c: float) -> tuple[float, float]:
    """The ends of {δ : |z(δ)| < c}: on each side of d̄, the first δ from d̄ towards ∓1 with |z(δ)| ≥ c (a 33-point
    scan of each side, four rounds of 17-point refinement, then the secant inside the last bracket: resolution
    ~1e-12; both sides in one vector)."""
    est = float(d.mean())
    ends = [-1.0, 1.0]
    brackets: list = [(est, -1.0), (est, 1.0)]
    zb: list = [None, None]
    npts = 33
    for _ in range(5):
        live = [i for i in range(2) if brackets[i] is not None and brackets[i][0] != brackets[i][1]]
        if not live:
            break
        grids = [np.linspace(*brackets[i], npts) for i in live]
        z = np.abs(score_z(d, np.concatenate(grids)))
        for n_, i in enumerate(live):
            zi = z[n_ * npts : (n_ + 1) * npts]
            out = np.flatnonzero(zi >= c)
            if out.size == 0:
                ends[i] = float(brackets[i][1])
                brackets[i] = None
            elif out[0] == 0:
                ends[i] = float(grids[n_][0])
                brackets[i] = None
            else:
                j = int(out[0])
                brackets[i] = (float(grids[n_][j - 1]), float(grids[n_][j]))
                zb[i] = (float(zi[j - 1]), float(zi[j]))
        npts = 17
    for i in range(2):
        if brackets[i] is not None:
            (x0, x1), (z0, z1) = brackets[i], zb[i] if zb[i] is not None else (0.0, 0.0)
            if z1 > z0 and math.isfinite(z1):
                ends[i] = x0 + (c - z0) / (z1 - z0) * (x1 - x0)
            else:
                ends[i] = x1
    return ends[0], ends[1]


#: the ternary interval (:func:`ternary_ends`) at α = 0.05: pseudo-count added to each discordant count of the adjusted
#: Wald interval (Agresti & Min 2005) and its critical value; the critical value of the Tango score interval it is
#: joined with when no task differs (it rises linearly in the discordant share m/T to z_{1−α/2} when every task
#: does). At other levels both critical values are scaled by z_{1−α/2}/1.96.
TERNARY_PSEUDO = 0.5
TERNARY_WALD_Z = 2.0
TERNARY_SCORE_C0 = 1.7
#: where every differing task went one way, the interval also reaches the exact one-sided (Clopper–Pearson) bound on
#: the discordant share at level 1 − this × α (0.94 at α = 0.05)
TERNARY_EDGE_ALPHA = 1.2


def ternary_ends(a: int, b: int, T: int, alpha: float) -> tuple[float, float]:
    """The ternary interval for δ = P(d = 1) − P(d = −1) from a tasks at +1 and b at −1 of T: the union of

    * the adjusted Wald interval with :data:`TERNARY_PSEUDO` added to each discordant count (Agresti–Min 2005;
      Bonett–Price 2012 add 1): p̃± = (m± + ½)/(T + 1), p̃⁺ − p̃⁻ ± z_W·√((p̃⁺ + p̃⁻ − (p̃⁺ − p̃⁻)²)/(T + 1)),
      z_W = :data:`TERNARY_WALD_Z` — short where few tasks differ;
    * Tango's score interval at c = c₀ + (z_{1−α/2} − c₀)·(a + b)/T, c₀ = :data:`TERNARY_SCORE_C0` — it reaches
      further where every differing task went one way (the Wald interval alone covers 91–93 % at δ = −0.15,
      T = 15–27) and, with c → z_{1−α/2} as the discordant share → 1, where nearly every task differs;
    * where b = 0 (a = 0), up to (down to minus) the exact one-sided Clopper–Pearson upper bound on P(d = 1)
      (P(d = −1)) at level 1 − :data:`TERNARY_EDGE_ALPHA`·α — 1 − 0.06^{1/T} when no task differs — so that a
      true δ next to 0 on the side no task went is missed at most 6 % of the time from below (without it, T = 17
      covered δ = −0.15 in the n = k = 4 τ-bench population 93.6 % of the time).

    The constants were chosen at α = 0.05 by exact trinomial sums over the calibration's ternary cells and a grid of
    all trinomial parameters (``benchmarks/compare_ternary_search.py``); both critical values are scaled by
    z_{1−α/2}/1.96 at other levels. Where few tasks differ it is narrower than Tango's interval at z_{1−α/2} (in the
    worst calibration cell 1.35 / 1.16 / 1.06× the paired t's mean width at T = 10 / 20 / 50, against 1.48 / 1.31 /
    1.15×), and its worst coverage over all trinomial parameters is 92.6 / 92.7 / 93.5 % at T = 10 / 20 / 50
    instead of 83.5–83.8 % (Tango's dips at δ near ±1). Fast for any T (closed forms and one score inversion)."""
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    scale = z / 1.959963984540054
    k = TERNARY_PSEUDO
    N = T + 2.0 * k
    pp, pm = (a + k) / N, (b + k) / N
    est = pp - pm
    half = TERNARY_WALD_Z * scale * math.sqrt(max(pp + pm - est * est, 0.0) / N)
    c0 = TERNARY_SCORE_C0 * scale
    d = np.r_[np.ones(a), -np.ones(b), np.zeros(T - a - b)]
    lo_s, hi_s = _edges(d, c0 + (z - c0) * (a + b) / T)
    lo, hi = min(est - half, lo_s), max(est + half, hi_s)
    level = 1.0 - TERNARY_EDGE_ALPHA * alpha
    if b == 0:
        hi = max(hi, float(stats.beta.ppf(level, a + 1, T - a)) if a < T else 1.0)
    if a == 0:
        lo = min(lo, -float(stats.beta.ppf(level, b + 1, T - b)) if b < T else -1.0)
    return max(lo, -1.0), min(hi, 1.0)


def _reference(d: np.ndarray, alpha: float, trials: TrialCounts | None = None) -> tuple[str, float]:
    """(reference, critical value c) of the test on ``d``: ``"exact unconditional"`` (ternary d), ``"skew t"`` (not
    ternary, ≥ :data:`MIN_DIFFERING_FOR_T` tasks differing, s > 0), ``"floored t"`` (not ternary, fewer differing,
    ``trials`` given with k = 1) or ``"normal"`` (the score construction)."""
    if is_ternary(d):
        # the interval: Tango's at z_{1−α/2}; [−1, 1] when with T tasks no outcome has p < α
        c = float(stats.norm.ppf(1.0 - alpha / 2.0))
        return "exact unconditional", c if _any_rejects(d.size, round(alpha, 12)) else math.inf
    if np.count_nonzero(d) >= MIN_DIFFERING_FOR_T and d.size > 1 and np.any(d != d[0]):
        return "skew t", float(stats.t.ppf(1.0 - alpha / 2.0, d.size - 1))
    if trials is not None and trials.k == 1 and d.size > 1 and binomial_floor(trials) > 0:
        return "floored t", float(stats.t.ppf(1.0 - alpha / 2.0, d.size - 1))
    return "normal", float(stats.norm.ppf(1.0 - alpha / 2.0))


def score_pvalue(d: np.ndarray, *, ci: float = CI_LEVEL, trials: TrialCounts | None = None) -> float:
    """The p-value of :func:`score_test` alone (no interval): NaN without tasks."""
    d, trials = _finite(d, trials)
    if d.size == 0:
        return math.nan
    reference, _ = _reference(d, 1.0 - check_level(ci), trials)
    return _pvalue(d, reference, _spread_of(d, reference, trials))


def _spread_of(d: np.ndarray, reference: str, trials: TrialCounts | None) -> Spread | None:
    """The skew t's :class:`~tauk.stats.comparisons.skew_t.Spread` of d (floored for ``"floored t"``), computed once
    for the p-value and the interval; None for the other references."""
    if reference == "skew t":
        return spread(d)
    return floored_spread(d, trials) if reference == "floored t" else None


def _pvalue(d: np.ndarray, reference: str, sp: Spread | None) -> float:
    if sp is not None:
        return union_pvalue(sp)
    if reference == "normal":
        return float(2.0 * stats.norm.sf(abs(float(score_z(d, 0.0)[0]))))
    return ternary_em_pvalue(int(np.sum(d == 1)), int(np.sum(d == -1)), d.size)


def _finite(d: np.ndarray, trials: TrialCounts | None) -> tuple[np.ndarray, TrialCounts | None]:
    """d without its NaN tasks, and ``trials`` restricted to the same tasks."""
    d = np.asarray(d, dtype=np.float64).ravel()
    keep = np.isfinite(d)
    return d[keep], _kept(trials, keep)


def _kept(trials: TrialCounts | None, keep: np.ndarray) -> TrialCounts | None:
    """``trials`` restricted to the tasks kept (finite d); None stays None."""
    if trials is None:
        return None
    n_a, c_a, n_b, c_b = (np.asarray(x).ravel() for x in trials[:4])
    if n_a.size != keep.size:
        raise ValueError(f"trials: {n_a.size} tasks for {keep.size} differences")
    return TrialCounts(n_a[keep], c_a[keep], n_b[keep], c_b[keep], int(trials.k))


def score_test(d: np.ndarray, *, ci: float = CI_LEVEL, trials: TrialCounts | None = None) -> ScoreTest:
    """Estimate, score interval and p-value for the mean of paired differences d_t ∈ [−1, 1] (see the module notes).

    Parameters
    ----------
    d : array of float
        Per-task differences (NaN entries dropped).
    ci : float
        Confidence level; α = 1 − ci.
    trials : TrialCounts, optional
        The trial counts behind d (``compare()`` passes them). With k = 1 and fewer than
        :data:`MIN_DIFFERING_FOR_T` non-ternary tasks differing, the interval is the skew t with the SD floored at
        the trial-level binomial SD (``"floored t"``) instead of the score construction; otherwise unused.

    Returns
    -------
    ScoreTest
        ``(estimate, lo, hi, p_value, reference, critical)``: ``lo ≤ 0 ≤ hi`` exactly when ``p_value ≥ 1 − ci``.
        No tasks: all NaN. One task, or too few for any valid ternary test to reject at α: the interval is what
        {δ : |z(δ)| < c} gives, [−1, 1] when c is infinite.

    Examples
    --------
    >>> score_test(np.array([1.0, 1.0, 0.0, 0.0, 0.0])).lo  # 5 tasks: no exact test rejects at 5 %
    -1.0
    """
    d, trials = _finite(d, trials)
    T = d.size
    alpha = 1.0 - check_level(ci)
    if T == 0:
        return ScoreTest(math.nan, math.nan, math.nan, math.nan, "none", math.nan)
    est = float(d.mean())
    reference, c = _reference(d, alpha, trials)
    sp = _spread_of(d, reference, trials)
    p = _pvalue(d, reference, sp)
    if math.isinf(c):
        return ScoreTest(est, -1.0, 1.0, float(p), reference, c)
    if sp is not None:  # "skew t", "floored t"
        lo, hi = union_ends(sp, c)
        return ScoreTest(est, max(lo, -1.0), min(hi, 1.0), float(p), reference, c)
    if reference != "exact unconditional":
        lo, hi = _edges(d, c)
        return ScoreTest(est, lo, hi, float(p), reference, c)
    a, b = int(np.sum(d == 1)), int(np.sum(d == -1))
    designed = designed_ends(a, b, T, alpha)
    if designed is not None:  # agrees with the exact test by construction (ternary_design)
        return ScoreTest(est, *designed, float(p), reference, c)
    lo, hi = ternary_ends(a, b, T, alpha)
    if p >= alpha:
        # the exact test keeps 0 where the interval alone would not (a few sparse outcomes, e.g. 4 – 0 of 10): the
        # interval reaches to 0, so it never claims more than the test
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    elif lo <= 0.0 <= hi:
        # the exact test rejects where the interval still holds 0 (e.g. 5 – 0 of 20): the end towards 0 is Tango's
        # at z_{1−α/2}, which excludes 0 wherever the exact test rejects
        lo_t, hi_t = _edges(d, c)
        lo, hi = (max(lo, lo_t), hi) if est > 0 else (lo, min(hi, hi_t))
    return ScoreTest(est, lo, hi, float(p), reference, c)

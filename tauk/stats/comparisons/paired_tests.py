"""Calibrated paired comparison of two agents on shared tasks (docs/spec.md §4): one test, one interval, and they agree.

Per task t = 1…T, d_t = Û_k^A − Û_k^B with Û_k = C(c_t, k)/C(n_t, k); the estimand is the mean difference in pass^k,
E[d_t] over tasks. :func:`paired_test` reports the estimate d̄, an interval and a two-sided p-value from the *same*
test, so the interval excludes 0 exactly when p < α.

Default: the score test (``test="score"``, :mod:`tauk.stats.comparisons.score`): for each candidate δ, |d̄ − δ| in
units of the spread d_t would have if its mean were δ — where every d_t is −1, 0 or 1 the designed exact interval
(:mod:`~tauk.stats.comparisons.ternary_design`; outside its range Tango's score interval joined with an adjusted
Wald one, ``score.ternary_ends``), with the exact unconditional p-value (size ≤ α at every null discordance rate), the same construction on the observed values
otherwise. It covers a true difference away from 0 where the t interval does not (few tasks differing) and never
has zero width. The paired t test below stays as ``test="t"`` (the default before) and as the ``t_low`` /
``t_high`` / ``p_t`` columns of a comparison.

The paired t test, T − 1 degrees of freedom
-------------------------------------------
    t = d̄ / (s/√T),  p = 2·P(t_{T−1} > |t|),  interval d̄ ± t_{T−1, 1−α/2}·s/√T (clipped to [−1, 1]),

s the sample SD of d_t. Claim: at α = 0.05 its type-I error is 4–6 % in 28 of 30 measured cells (T ∈ {20, 50},
n ∈ {1, 4}, k ∈ {1, 4}, five task populations), 2.2–5.4 % in all, and its interval covers a true difference of
0.1 in 93.0–95.8 % of benchmarks; the paired task bootstrap over-rejects (up to 10.1 %) and the exact sign-flip
test is conservative (0.1–3.8 %). The table, cell by cell, and the power of each: ``docs/calibration/comparisons.md``.

Why not the others
------------------
* Sign-flip permutation of Σ d_t (compare()'s headline ``p_perm`` before; now the cross-check ``p_signflip``) is
  exact under the paired null (A and B exchangeable within each task, so d_t is symmetric about 0) but very
  conservative at these sizes: with one trial per task (or k = n) d_t ∈ {−1, 0, 1}, only the m tasks with d_t ≠ 0
  carry information and the test is a sign test on Binomial(m, ½), whose attainable sizes are coarse. It *is* exact
  McNemar at n = 1, and it is also the permutation-t: Σ d_t² is invariant under sign flips, so |t| is an increasing
  function of |Σ s_t d_t| and the studentised and raw sign-flip tests reject on exactly the same flips. Mid-p (ties
  with the observed statistic counted by half) recovers size where m is moderate but stays conservative, and loses
  power to t, where m is small. A randomised sign-flip test has exact size, but its p-value depends on a coin as
  well as on the data (and has no more power than t here).
* The paired task bootstrap is too liberal at T = 20: the bootstrap distribution of a mean is too narrow (variance
  (T−1)/T·s²/T, and normal-like rather than t quantiles); BCa's bias and acceleration corrections, estimated from a
  handful of nonzero d_t, make it worse, and bootstrap-t's studentised replicates are unstable when many replicates
  have se* = 0. Its extra "power" is over-rejection.
* Wilcoxon and the score (McNemar χ²) test behave like t on these data with at most equal power and give no
  interval for the mean difference.

Limits: where d_t ∈ {−1, 0, 1} and few tasks differ (T = 20, k = n = 4: 2.5–3 per benchmark) t rejects less than
4 %; there no non-randomised test that treats the two agents alike does better (an integer programme over the
sufficient (m⁺, m⁻): ``benchmarks/paired_bound.py``; the figures in ``docs/calibration/comparisons.md``).

Degenerate data: every d_t = c. Then s = 0 and t is undefined; the exact sign-flip answer is used: p = 1 if c = 0,
else 2^{1−T}, and the interval is [c, c] when 2^{1−T} < α (T ≥ 6 at α = 0.05), [−1, 1] otherwise (every δ ≠ c has
sign-flip p = 2^{1−T}). T < 2: NaN interval and p.

``test="signflip"`` / ``"signflip-mid"`` give the exact (mid-p) sign-flip p-value with the interval obtained by
inverting the same test under the shift model (d_t − δ symmetric about 0): {δ : p(δ) ≥ α}, exact on the lattice of
d (a dynamic programme over the distinct values of d) or by seeded Monte Carlo when that lattice is too fine.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from tauk._compat import keyword_options
from tauk._lazy import lazy
from tauk.conventions import CI_LEVEL, INVERSION_PERMUTATIONS, PAIRED_TEST, SEED

from ..options import check_level, check_test
from .score import TrialCounts, score_pvalue, score_test

stats = lazy("scipy.stats")

__all__ = ["PairedTest", "SignFlipNull", "paired_test", "pairwise_pvalues", "signflip_null", "signflip_pvalue"]

#: largest (2Q+1)·(2T+1) lattice the exact joint sign-flip distribution is built on (else seeded Monte Carlo)
EXACT_CELLS = 4_000_000
_MAX_DEN = 10_080  # lcm(1..8)·12: every C(n,k)/C(n,k)-difference denominator for n ≤ 8, and many mixed ones


class PairedTest(NamedTuple):
    """Result of :func:`paired_test`: unpacks as ``(estimate, lo, hi, p_value, method)``."""

    estimate: float
    lo: float
    hi: float
    p_value: float
    method: str


class SignFlipNull(NamedTuple):
    """The sign-flip (randomisation) distribution of (Σ s_t q_t, Σ s_t), s_t = ±1 independently with prob. ½.

    ``s1``, ``s2``: support points (``s1`` in units of 1/``scale`` of d); ``w``: their probabilities (sum 1);
    ``obs1`` = Σ q_t, ``T`` = number of tasks (the observed Σ s_t, all signs +1); ``exact``: enumerated exactly
    (else ``w`` are equal Monte-Carlo weights and the identity flip is one of the draws).
    """

    s1: np.ndarray
    s2: np.ndarray
    w: np.ndarray
    obs1: float
    T: int
    scale: float
    exact: bool


def _lattice(d: np.ndarray) -> int | None:
    """Smallest L ≤ ``_MAX_DEN``-ish with every d_t·L an integer (within 1e-9), or None."""
    L = 1
    for v in np.unique(np.abs(d)):
        f = Fraction(float(v)).limit_denominator(_MAX_DEN)
        if abs(float(f) - v) > 1e-9 * max(1.0, abs(v)):
            return None
        L = L * f.denominator // math.gcd(L, f.denominator)
        if L > 10 * _MAX_DEN:
            return None
    return L


def signflip_null(d: np.ndarray, *, permutations: int = INVERSION_PERMUTATIONS, seed: int | None = SEED) -> SignFlipNull:
    """Exact (lattice dynamic programme) or seeded Monte-Carlo sign-flip distribution of (Σ s_t d_t, Σ s_t).

    Tasks with the same d_t are pooled: their signs contribute (q(2B − m), 2B − m), B ~ Binomial(m, ½), so the
    joint distribution is a convolution over the distinct values of d, exact on the lattice 1/L of d (L = the
    common denominator of the d_t, e.g. C(n, k) for pass^k with n trials).
    """
    d = np.asarray(d, dtype=np.float64)
    T = d.size
    L = _lattice(d) if T else 1
    if L is not None:
        q = np.rint(d * L).astype(np.int64)
        Q = int(np.abs(q).sum())
        if (2 * Q + 1) * (2 * T + 1) <= EXACT_CELLS:
            vals, mult = np.unique(q, return_counts=True)
            grid = np.zeros((2 * Q + 1, 2 * T + 1))
            grid[Q, T] = 1.0
            for v, m in zip(vals.tolist(), mult.tolist()):
                pmf = stats.binom.pmf(np.arange(m + 1), m, 0.5)
                new = np.zeros_like(grid)
                for b in range(m + 1):
                    j = 2 * b - m  # Σ of the m signs
                    a1, a2 = v * j, j
                    src = grid[max(0, -a1) : grid.shape[0] - max(0, a1), max(0, -a2) : grid.shape[1] - max(0, a2)]
                    new[max(0, a1) : max(0, a1) + src.shape[0], max(0, a2) : max(0, a2) + src.shape[1]] += pmf[b] * src
                grid = new
            i1, i2 = np.nonzero(grid > 0)
            return SignFlipNull(
                (i1 - Q).astype(np.float64), (i2 - T).astype(np.float64), grid[i1, i2], float(q.sum()), T, float(L), True
            )
    rng = np.random.default_rng(seed)
    signs = 1.0 - 2.0 * rng.integers(0, 2, size=(permutations, T), dtype=np.int8)
    s1 = np.concatenate([[d.sum()], signs @ d])
    s2 = np.concatenate([[float(T)], signs.sum(axis=1)])
    w = np.full(s1.size, 1.0 / s1.size)
    return SignFlipNull(s1, s2, w, float(d.sum()), T, 1.0, False)


def _p_at(null: SignFlipNull, delta: float, mid: bool) -> float:
    """Two-sided sign-flip p-value of H0: d_t − δ symmetric about 0, statistic |Σ s_t (d_t − δ)|."""
    dl = delta * null.scale
    obs = abs(null.obs1 - dl * null.T)
    stat = np.abs(null.s1 - dl * null.s2)
    tol = 1e-9 * max(1.0, obs)
    gt = float(null.w[stat > obs + tol].sum())
    eq = float(null.w[np.abs(stat - obs) <= tol].sum())
    return min(1.0, gt + (0.5 * eq if mid else eq))


def signflip_pvalue(d: np.ndarray, *, mid: bool = True, delta: float = 0.0, **kw) -> float:
    """Sign-flip p-value of |Σ (d_t − δ)|; ``mid=True`` counts ties with the observed statistic by half (mid-p)."""
    d = np.asarray(d, dtype=np.float64)
    if delta == 0.0:
        d = d[d != 0]
        if d.size == 0:
            return 1.0
        L = _lattice(d)
        if L is not None:
            q = np.abs(np.rint(d * L).astype(np.int64))
            Q = int(q.sum())
            if 2 * Q + 1 <= EXACT_CELLS:
                # δ = 0 needs only Σ s_t q_t: a 1-d convolution over the distinct |q|
                dist = np.zeros(2 * Q + 1)
                dist[Q] = 1.0
                for v, m in zip(*np.unique(q, return_counts=True)):
                    v, m = int(v), int(m)
                    pmf = stats.binom.pmf(np.arange(m + 1), m, 0.5)
                    new = np.zeros_like(dist)
                    for b in range(m + 1):
                        sh = v * (2 * b - m)
                        src = dist[max(0, -sh) : dist.size - max(0, sh)]
                        new[max(0, sh) : max(0, sh) + src.size] += pmf[b] * src
                    dist = new
                stat = np.abs(np.arange(-Q, Q + 1))
                obs = abs(int(np.rint(d * L).astype(np.int64).sum()))
                gt = float(dist[stat > obs].sum())
                eq = float(dist[stat == obs].sum())
                return min(1.0, gt + (0.5 * eq if mid else eq))
    return _p_at(signflip_null(d, **kw), delta, mid)


def _invert(null: SignFlipNull, d: np.ndarray, alpha: float, mid: bool, include: float = 0.0) -> tuple[float, float]:
    """Outermost δ in [−1, 1] on each side of d̄ with p(δ) ≥ α (64-point scan, then bisection to 1e-9).

    Beyond the smallest (largest) d_t every d_t − δ has one sign, so p(δ) is the same for every such δ (2^{1−T},
    mid-p 2^{−T}): where it is ≥ α (T ≤ 5, mid-p T ≤ 4, at α = 0.05) the interval reaches −1 (1)."""
    est = float(d.mean())
    out = []
    for edge, bound in ((float(d.min()), -1.0), (float(d.max()), 1.0)):
        if edge == est or _p_at(null, edge, mid) >= alpha:
            out.append(bound if edge != bound and _p_at(null, bound, mid) >= alpha else edge)
            continue
        grid = np.linspace(est, edge, 65)
        if min(est, edge) < include < max(est, edge):
            grid = np.sort(np.append(grid, include))
            if edge < est:
                grid = grid[::-1]
        ok = np.array([_p_at(null, g, mid) >= alpha for g in grid])
        i = int(np.flatnonzero(ok).max())
        a, b = grid[i], grid[i + 1]
        for _ in range(60):
            if abs(b - a) <= 1e-10:
                break
            m = 0.5 * (a + b)
            if _p_at(null, m, mid) >= alpha:
                a = m
            else:
                b = m
        out.append(float(a))
    return out[0], out[1]


def _t_columns(D: np.ndarray, alpha: float) -> tuple[np.ndarray, ...]:
    """Paired t on every column of D (T × P): mean, lower, upper, two-sided p (T − 1 df).

    Degenerate columns (every task the same difference c, so the SE is 0) fall back on the exact sign-flip test:
    p = 1 when c = 0, else 2^{1−T}; every δ ≠ c has p(δ) = 2^{1−T}, so the interval is [c, c] when 2^{1−T} < α
    and [−1, 1] otherwise.
    """
    T = D.shape[0]
    mean = D.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = D.std(axis=0, ddof=1) / math.sqrt(T) if T > 1 else np.full(D.shape[1], np.nan)
        q = stats.t.ppf(1 - alpha / 2, T - 1) if T > 1 else np.nan
        tstat = mean / se
        p = 2 * stats.t.sf(np.abs(tstat), T - 1) if T > 1 else np.full(D.shape[1], np.nan)
    lo = np.clip(mean - q * se, -1.0, 1.0)
    hi = np.clip(mean + q * se, -1.0, 1.0)
    const = np.all(D[:1] == D, axis=0) if T else np.zeros(D.shape[1], bool)
    if np.any(const):
        p_const = np.where(mean == 0, 1.0, 2.0 ** (1 - T))
        tight = alpha > 2.0 ** (1 - T)  # every δ ≠ c has sign-flip p = 2^{1−T}
        p = np.where(const, p_const, p)
        lo = np.where(const, np.where(tight, mean, -1.0), lo)
        hi = np.where(const, np.where(tight, mean, 1.0), hi)
    return mean, lo, hi, p


@keyword_options(("d",), renamed={"level": "ci", "method": "test"})
def paired_test(
    d: np.ndarray,
    *,
    ci: float = CI_LEVEL,
    test: str = PAIRED_TEST,
    permutations: int = INVERSION_PERMUTATIONS,
    seed: int | None = SEED,
    trials: TrialCounts | None = None,
) -> PairedTest:
    """Estimate, interval and two-sided p-value for the mean of paired differences d_t (one test, agreeing).

    Parameters
    ----------
    d : array of float
        Per-task differences d_t = Û_k^A − Û_k^B on the tasks both agents ran (NaN entries are dropped).
    ci : float
        Confidence level of the interval (default :data:`tauk.conventions.CI_LEVEL`); the test's α is 1 − ci.
        (Called ``level`` before; ``level=`` works for one release.)
    test : {"score", "t", "signflip", "signflip-mid"}
        ``"score"`` (default): the score test and interval of :mod:`tauk.stats.comparisons.score` (where every d_t
        is −1, 0 or 1 the designed exact interval or, outside its range, Tango's score interval joined with an
        adjusted Wald one, with the exact unconditional p-value; never zero width).
        ``"t"``: paired t with T − 1 df, t = d̄/(s/√T), p = 2·P(t_{T−1} > |t|), interval
        d̄ ± t_{T−1, 1−α/2}·s/√T clipped to [−1, 1] (see the module notes for the degenerate s = 0 case).
        ``"signflip"``: p = P(|Σ s_t d_t| ≥ |Σ d_t|) over independent fair signs s_t (exact; = exact McNemar with
        one trial per task), interval {δ : p(δ) ≥ α} with p(δ) the same test on d_t − δ.
        ``"signflip-mid"``: as ``"signflip"`` with ties counted by half, p = P(|·| > obs) + ½·P(|·| = obs).
        (Called ``method`` before; ``method=`` works for one release.)
    permutations, seed : int
        Monte-Carlo sign flips, used by the sign-flip tests only when the exact lattice would be too large
        (defaults :data:`~tauk.conventions.INVERSION_PERMUTATIONS`, :data:`~tauk.conventions.SEED`).
    trials : TrialCounts, optional
        The trial counts behind d (:class:`~tauk.stats.comparisons.score.TrialCounts`), used by ``"score"`` only:
        with k = 1 and few tasks differing it floors the spread at the trial-level binomial variance.

    Returns
    -------
    PairedTest
        ``(estimate, lo, hi, p_value, method)`` (``method``: the test); ``lo ≤ 0 ≤ hi`` exactly when
        ``p_value ≥ 1 − ci`` for ``"t"``
        (for the sign-flip methods, unless the accepted set {δ : p(δ) ≥ α} has a gap at 0).

    Examples
    --------
    >>> import numpy as np
    >>> from tauk.stats.comparisons.paired_tests import paired_test
    >>> d = np.array([1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, -1, 0, 1, 0, 0, 1, 0], dtype=float)  # 8 wins, 1 loss
    >>> r = paired_test(d, test="t")
    >>> print(f"{r.estimate:.2f} [{r.lo:.3f}, {r.hi:.3f}] p = {r.p_value:.4f} ({r.method})")
    0.35 [0.075, 0.625] p = 0.0153 (t)
    >>> est, lo, hi, p, test = paired_test(d, test="signflip")  # = exact McNemar: 2·P(Bin(9, ½) ≥ 8)
    >>> print(f"[{lo:.3f}, {hi:.3f}] p = {p:.4f}")
    [0.091, 0.625] p = 0.0391
    """
    d = np.asarray(d, dtype=np.float64).ravel()
    alpha = 1.0 - check_level(ci)
    method = check_test(test)
    if method == "score":
        r = score_test(d, ci=1.0 - alpha, trials=trials)  # drops the NaN tasks (and their trial counts) itself
        return PairedTest(r.estimate, r.lo, r.hi, r.p_value, method)
    d = d[np.isfinite(d)]
    T = d.size
    if T == 0:
        return PairedTest(math.nan, math.nan, math.nan, math.nan, method)
    est = float(d.mean())
    if method == "t":
        if T < 2:
            return PairedTest(est, math.nan, math.nan, math.nan, method)
        _, lo, hi, p = _t_columns(d[:, None], alpha)
        return PairedTest(est, float(lo[0]), float(hi[0]), float(p[0]), method)
    mid = method == "signflip-mid"
    null = signflip_null(d, permutations=permutations, seed=seed)
    p = _p_at(null, 0.0, mid) if np.any(d != 0) else 1.0
    lo, hi = _invert(null, d, alpha, mid)
    return PairedTest(est, lo, hi, p, method)


@keyword_options(("U", "pairs"), renamed={"level": "ci", "method": "test"})
def pairwise_pvalues(
    U: np.ndarray, pairs: list[tuple[int, int]], *, test: str = PAIRED_TEST, ci: float = CI_LEVEL, seed: int | None = SEED,
    counts: tuple[np.ndarray, np.ndarray, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided p-values of ``test`` and mean differences (column i − column j) of U (T × K) for each pair (i, j);
    ``counts`` = (trials N, successes C, both T × K, k) behind U, passed to the score test as compare() does."""
    U = np.asarray(U, dtype=np.float64)
    ii = np.array([a for a, _ in pairs], dtype=np.int64)
    jj = np.array([b for _, b in pairs], dtype=np.int64)
    D = U[:, ii] - U[:, jj]
    if test == "t":
        mean, _, _, p = _t_columns(D, 1.0 - ci)
        return p, mean
    if test == "score":
        if counts is None:
            return np.array([score_pvalue(D[:, q], ci=ci) for q in range(D.shape[1])]), D.mean(axis=0)
        N, C, k = counts
        return np.array([score_pvalue(D[:, q], ci=ci, trials=TrialCounts(N[:, a], C[:, a], N[:, b], C[:, b], k))
                         for q, (a, b) in enumerate(pairs)]), D.mean(axis=0)  # fmt: skip
    out = [paired_test(D[:, q], ci=ci, test=test, seed=seed) for q in range(D.shape[1])]
    return np.array([r.p_value for r in out]), np.array([r.estimate for r in out])

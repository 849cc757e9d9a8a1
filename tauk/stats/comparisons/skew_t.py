"""The non-ternary paths of the score comparison (:mod:`~tauk.stats.comparisons.score`): where per-task differences
d_t are not all −1, 0 or 1, the paired t joined with Hall's (1992) skewness-corrected t (``"skew t"``), and, with
few tasks differing, the same with its spread floored at the trial-level binomial variance the counts imply
(``"floored t"``). Why each, and what was measured: the :mod:`score` module's notes.

>>> import numpy as np
>>> d = np.array([0.0] * 14 + [0.25, 0.5, 0.75, 1.0, 1.0, -0.25])  # a tail towards +1
>>> lo, hi = skew_t_ends(d, 2.093)  # t_{19, 0.975}; the paired t alone: [-0.004, 0.329]
>>> print(f"[{lo:.3f}, {hi:.3f}] p = {skew_t_pvalue(d):.4f}")
[-0.004, 0.380] p = 0.0554
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import special, stats

__all__ = ["FLOOR_PSEUDO", "MIN_DIFFERING_FOR_T", "Spread", "TrialCounts", "binomial_floor", "floored_spread",
           "floored_t_ends", "floored_t_pvalue", "hall_ends", "skew_t_ends", "skew_t_pvalue", "skewness", "spread",
           "union_ends", "union_pvalue"]


#: with d not ternary, at least this many tasks differing (and a spread) → the skewness-corrected t ("skew t")
MIN_DIFFERING_FOR_T = 5


class TrialCounts(NamedTuple):
    """The trial counts behind per-task differences d_t = Û_k^A − Û_k^B: per task, trials ``n_a`` / ``n_b`` and
    successes ``c_a`` / ``c_b`` (arrays aligned with d), and k. Given to :func:`score_test` by ``compare()``."""

    n_a: np.ndarray
    c_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray
    k: int


#: pseudo-successes (and pseudo-failures) of the per-task success rate in :func:`binomial_floor` (Jeffreys: ½)
FLOOR_PSEUDO = 0.5


def _var_u(p: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """Var(Û_k | p) for Û_k = C(c, k)/C(n, k), c ~ Binomial(n, p), per task (n may differ between tasks)."""
    p = np.asarray(p, dtype=np.float64)
    n = np.asarray(n, dtype=np.int64)
    if k == 1:
        return p * (1.0 - p) / np.maximum(n, 1)
    out = np.zeros(p.shape)
    for nn in np.unique(n):
        if nn < k:
            continue
        sel = n == nn
        c = np.arange(nn + 1)
        u = special.comb(c, k) / special.comb(nn, k)
        pmf = stats.binom.pmf(c[None, :], nn, p[sel][:, None])
        m1 = pmf @ u
        out[sel] = np.maximum(pmf @ (u * u) - m1 * m1, 0.0)
    return out


def binomial_floor(trials: TrialCounts) -> float:
    """The trial-level part of Var(d_t) the counts imply: the mean over tasks of Var(Û_k^A) + Var(Û_k^B), each the
    binomial variance of the task's estimate at its Jeffreys posterior-mean success rate (c + ½)/(n + 1). Whatever
    the tasks' true differences, d_t varies at least this much from trial noise alone, so a sample SD below it (few
    tasks differing, most at 0) understates the spread; the ½ keeps it positive for tasks solved every time or never
    (their rate is not known to be exactly 0 or 1 from n trials)."""
    a = FLOOR_PSEUDO
    n_a = np.asarray(trials.n_a, dtype=np.float64)
    n_b = np.asarray(trials.n_b, dtype=np.float64)
    pa = (np.asarray(trials.c_a, dtype=np.float64) + a) / (n_a + 2.0 * a)
    pb = (np.asarray(trials.c_b, dtype=np.float64) + a) / (n_b + 2.0 * a)
    if pa.size == 0:
        return 0.0
    v = _var_u(pa, trials.n_a, trials.k) + _var_u(pb, trials.n_b, trials.k)
    return float(np.mean(v))


class Spread(NamedTuple):
    """What the skew t needs of d: its mean, SD and (shrunk) skewness; :func:`spread` of d as observed,
    :func:`floored_spread` with the SD floored at the trial-level binomial SD."""

    mean: float
    s: float
    g: float
    T: int


def spread(d: np.ndarray) -> Spread:
    """(d̄, s, :func:`skewness`, T) of d."""
    return Spread(float(d.mean()), float(d.std(ddof=1)), skewness(d), d.size)


def floored_spread(d: np.ndarray, trials: TrialCounts) -> Spread:
    """:func:`spread` with s floored: s_f = max(s, √:func:`binomial_floor`), skewness scaled to it, γ·(s/s_f)³."""
    mean = float(d.mean())
    s = float(d.std(ddof=1))
    sf = max(s, math.sqrt(binomial_floor(trials)))
    g = skewness(d) * (s / sf) ** 3 if sf > 0 else 0.0
    return Spread(mean, sf, g, d.size)


def _hall_ends_at(mean: float, s: float, g: float, T: int, c: float) -> tuple[float, float]:
    """Hall's interval {δ : |√T·h((d̄ − δ)/s)| < c} for given d̄, s and γ (closed-form inverse of the cubic)."""
    x = c / math.sqrt(T)
    if abs(g) < 1e-12:
        return mean - s * x, mean + s * x

    def hinv(y: float) -> float:
        return 3.0 / g * (float(np.cbrt(1.0 + g * (y - g / (6.0 * T)))) - 1.0)

    return mean - s * hinv(x), mean - s * hinv(-x)


def union_ends(sp: Spread, c: float) -> tuple[float, float]:
    """The union of d̄ ± c·s/√T and Hall's interval at (d̄, s, γ) (both contain d̄, so an interval): extended
    towards the long tail where d is skewed, never shorter than the t on either side."""
    se = sp.s / math.sqrt(sp.T)
    lo_h, hi_h = _hall_ends_at(sp.mean, sp.s, sp.g, sp.T, c)
    return min(sp.mean - c * se, lo_h), max(sp.mean + c * se, hi_h)


def union_pvalue(sp: Spread) -> float:
    """max(p of the t, p of Hall's statistic √T·h(d̄/s)), both against t_{T−1}: below α exactly when 0 is outside
    :func:`union_ends` at c = t_{T−1, 1−α/2}."""
    T = sp.T
    se = sp.s / math.sqrt(T)
    u = sp.mean / (se * math.sqrt(T))
    h = u + sp.g * u * u / 3.0 + sp.g * sp.g * u**3 / 27.0 + sp.g / (6.0 * T)
    p_t = 2.0 * stats.t.sf(abs(sp.mean / se), T - 1)
    p_h = 2.0 * stats.t.sf(abs(math.sqrt(T) * h), T - 1)
    return float(min(max(p_t, p_h), 1.0))


def floored_t_ends(d: np.ndarray, c: float, trials: TrialCounts) -> tuple[float, float]:
    """:func:`skew_t_ends` with the SD floored at the trial-level binomial SD (:func:`binomial_floor`): the union of
    d̄ ± c·s_f/√T and Hall's interval at s_f (skewness scaled to the floored spread). Never zero width."""
    return union_ends(floored_spread(d, trials), c)


def floored_t_pvalue(d: np.ndarray, trials: TrialCounts) -> float:
    """:func:`skew_t_pvalue` at the floored SD: below α exactly when 0 is outside :func:`floored_t_ends` at
    c = t_{T−1, 1−α/2}."""
    return union_pvalue(floored_spread(d, trials))


def skewness(d: np.ndarray) -> float:
    """The sample skewness g = m₃/s³ of d shrunk towards 0 by its variance v (positive-part James–Stein:
    g·max(0, 1 − v/g²)), v the larger of the normal-theory 6/T and the jackknife variance of g (spiky differences —
    most tasks 0, a few far out — make g much noisier than 6/T says): 0 where the sample shows no more skewness than
    noise, ≈ g where it clearly does."""
    T = d.size
    mean = float(d.mean())
    r = d - mean
    s = float(d.std(ddof=1))
    if not s > 0 or T < 3:
        return 0.0
    g = float(np.mean(r**3)) / s**3
    if g == 0.0:
        return 0.0
    # leave-one-out skewness from the power sums of the centred values (O(T))
    S1, S2, S3 = float(r.sum()), float((r * r).sum()), float((r**3).sum())
    n1 = T - 1
    a1 = (S1 - r) / n1
    a2 = (S2 - r * r) / n1
    a3 = (S3 - r**3) / n1
    m2 = a2 - a1 * a1
    m3 = a3 - 3.0 * a1 * a2 + 2.0 * a1**3
    var_loo = m2 * n1 / max(n1 - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g_loo = np.where(var_loo > 0, m3 / np.maximum(var_loo, 1e-300) ** 1.5, 0.0)
    v = max(6.0 / T, float(n1 / T * np.sum((g_loo - g_loo.mean()) ** 2)))
    return g * max(0.0, 1.0 - v / (g * g))


def hall_ends(d: np.ndarray, c: float) -> tuple[float, float]:
    """Hall's (1992) skewness-corrected t interval for the mean: {δ : |√T·h((d̄ − δ)/s)| < c} with the monotone
    cubic h(u) = u + γu²/3 + γ²u³/27 + γ/(6T) (γ :func:`skewness`), whose inverse is closed-form; it reaches
    further towards the long tail of d and less far on the other side."""
    sp = spread(d)
    return _hall_ends_at(sp.mean, sp.s, sp.g, sp.T, c)


def skew_t_ends(d: np.ndarray, c: float) -> tuple[float, float]:
    """The union of the paired t interval d̄ ± c·s/√T and :func:`hall_ends` (:func:`union_ends` of
    :func:`spread`)."""
    return union_ends(spread(d), c)


def skew_t_pvalue(d: np.ndarray) -> float:
    """max(p of the t, p of Hall's statistic √T·h(d̄/s)), both against t_{T−1} (:func:`union_pvalue` of
    :func:`spread`): below α exactly when 0 is outside :func:`skew_t_ends` at c = t_{T−1, 1−α/2}."""
    return union_pvalue(spread(d))

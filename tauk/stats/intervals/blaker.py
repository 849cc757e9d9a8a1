r"""Blaker's exact binomial interval: the interval tauk reports where every task has one trial (n = 1).

With one trial per task the successes are Binomial(T, μ) whatever the population of tasks, so an exact binomial
interval covers pass^1 = μ at least at its level at every μ. Clopper–Pearson inverts two one-sided tests, each at
α/2; Blaker (2000) inverts the test whose p-value is the *acceptability*

    a(p) = P_p( γ(X) ≤ γ(x) ),   γ(y) = min(P_p(X ≤ y), P_p(X ≥ y)),

so that the smaller tail of x is compared with whatever the other tail holds at most as much. The confidence set
{p : a(p) > α} lies inside Clopper–Pearson's interval and is still exact; it need not be an interval, so its hull is
reported (the outermost accepted points — still exact, as a superset of an exact set). Found by scanning a(p) from
each Clopper–Pearson end inward on a grid and bisecting the first change between accepted and rejected.

Measured (``benchmarks/blaker_n1.py``, exact binomial sums over a 10,001-point μ grid and the interval ends): ≥ 95 %
at every μ for T = 5 … 200, narrower than Clopper–Pearson on average over μ by 7.5 % at T = 5, 6.4 % at 10, 5.8 %
at 20, 4.3 % at 50, 3.0 % at 100 and 2.1 % at 200 (``docs/calibration/intervals.md``).

Examples
--------
>>> import numpy as np
>>> lo, hi = blaker(np.array([3.0]), np.array([10.0]), 0.95)
>>> round(float(lo[0]), 4), round(float(hi[0]), 4)
(0.0873, 0.6194)
>>> from tauk.stats.intervals.nonparametric import clopper_pearson
>>> [round(float(v[0]), 4) for v in clopper_pearson(np.array([3.0]), np.array([10.0]), 0.95)]
[0.0667, 0.6525]
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tauk._lazy import lazy

from .nonparametric import clopper_pearson

__all__ = ["acceptability", "blaker"]

stats = lazy("scipy.stats")

_SCAN = 129  # grid points between a Clopper–Pearson end and the estimate (the first scan)
_REFINE = 33  # grid points of each refining round
_ROUNDS = 7  # refining rounds: the end to ~ (1/128)·32⁻⁷ of the segment
_TIE = 1e-9  # relative tolerance of the tie γ(y) = γ(x)


def acceptability(x: int, N: int, p) -> np.ndarray:
    """Blaker's acceptability a(p) of x successes in N trials at each p (an array): the probability, under p, of an
    outcome whose smaller tail is no larger than x's.

    >>> round(float(acceptability(3, 10, np.array([0.3]))[0]), 4)
    1.0
    """
    p = np.atleast_1d(np.asarray(p, dtype=np.float64))
    pmf = stats.binom.pmf(np.arange(N + 1)[None, :], N, p[:, None])
    cdf = np.cumsum(pmf, axis=1)
    sf = np.concatenate([np.ones((p.size, 1)), 1.0 - cdf[:, :-1]], axis=1)  # P(X ≥ y)
    gamma = np.minimum(cdf, sf)
    gx = gamma[:, x]
    return np.minimum((pmf * (gamma <= gx[:, None] * (1.0 + _TIE))).sum(1), 1.0)


def _end(x: int, N: int, alpha: float, outer: float, inner: float) -> float:
    """The accepted point nearest ``outer`` on the segment from ``outer`` (a Clopper–Pearson end, where a(p) ≤ α)
    to ``inner`` (the estimate, where a = 1): a scan, then rounds of finer scans between the last rejected and the
    first accepted point."""
    a, b, m = outer, inner, _SCAN
    for _ in range(_ROUNDS + 1):
        ps = np.linspace(a, b, m)
        ok = acceptability(x, N, ps) > alpha
        i = int(np.argmax(ok))  # the first accepted point (ps[-1] is accepted: the estimate, or the last round's)
        if i == 0:
            return float(ps[0])
        a, b, m = ps[i - 1], ps[i], _REFINE
    return float(b)


def blaker(s, N, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Blaker's exact interval for a binomial proportion at level ``ci``: ``s`` successes of ``N`` (arrays of the
    same shape; N = 0 gives NaN). Inside Clopper–Pearson's, exact at every p."""
    s = np.asarray(s, dtype=np.float64)
    N = np.asarray(N, dtype=np.float64)
    lo, hi = clopper_pearson(s, N, ci)
    lo, hi = np.array(lo, dtype=np.float64, copy=True), np.array(hi, dtype=np.float64, copy=True)
    for idx in np.ndindex(s.shape):
        n_, x_ = N[idx], s[idx]
        if np.isfinite(n_) and n_ > 0:
            lo[idx], hi[idx] = _blaker_one(int(x_), int(n_), float(ci), float(lo[idx]), float(hi[idx]))
    return lo, hi


@lru_cache(maxsize=4096)
def _blaker_one(x: int, n: int, ci: float, cp_lo: float, cp_hi: float) -> tuple[float, float]:
    alpha, est = 1.0 - ci, x / n
    low = 0.0 if x == 0 else _end(x, n, alpha, cp_lo, est)
    high = 1.0 if x == n else _end(x, n, alpha, cp_hi, est)
    return low, high

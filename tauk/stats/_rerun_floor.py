"""The variance floor of the fixed-task (re-run) interval: a lower bound of a re-run's variance that the data
estimate without the model.

A task's Û = C(c, k)/C(n, k) has, given its p, the variance v(p) = E[Û² | p] − p^{2k}, a polynomial of degree 2k.
Any polynomial P(p) = Σ_c b_c · C(n, c) p^c (1 − p)^{n−c} of degree ≤ n has the unbiased estimate b_c (its Bernstein
coefficients), so Σ_t b_{c_t} / T² estimates Σ_t P(p_t) / T² without bias, whatever the population. With
P ≤ v on [0, 1] that is a lower bound of the variance of mean_t Û over a re-run of the same tasks:

* n ≥ 2k: P = v itself (b_c = Û_c² − C(c, 2k)/C(n, 2k)), the unbiased variance;
* k ≤ n < 2k: v has degree 2k > n and no unbiased estimate exists; P is the polynomial of degree ≤ n below v on
  [0, 1] with the largest average over p (a linear programme in the n + 1 coefficients, solved once per (n, k) on a
  2,001-point grid) — e.g. n = k = 4: b = (−0.059, 0.181, −0.443, 0.689, 0).

The interval is then widened about the unbiased estimate until its half-widths reach z·√V̂ (both sides by one
factor, keeping the model's skew), never narrowed: V̂ is noisy at T = 10, where the model's spread is the better one.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

__all__: list[str] = []

_GRID = np.linspace(0.0, 1.0, 2001)


@lru_cache(maxsize=512)
def variance_minorant(n: int, k: int) -> np.ndarray:
    """Bernstein coefficients b_0 … b_n of the floor polynomial P ≤ v for tasks of n trials (see the module docs).

    >>> variance_minorant(4, 2).round(4).tolist()  # n ≥ 2k: Û² − C(c, 4)/C(4, 4)
    [0.0, 0.0, 0.0278, 0.25, 0.0]
    >>> variance_minorant(4, 4).round(3).tolist()
    [-0.059, 0.181, -0.443, 0.689, -0.0]
    """
    cs = np.arange(n + 1)
    u = special.comb(cs, k) / special.comb(n, k)
    if n >= 2 * k:
        return u * u - special.comb(cs, 2 * k) / special.comb(n, 2 * k)
    basis = stats.binom.pmf(cs[None, :], n, _GRID[:, None])
    v = basis @ (u * u) - _GRID ** (2 * k)
    res = optimize.linprog(-np.ones(n + 1), A_ub=basis, b_ub=v, bounds=[(None, None)] * (n + 1), method="highs")
    return res.x if res.success else np.zeros(n + 1)


def rerun_variance(n: np.ndarray, c: np.ndarray, k: int, metric: str) -> np.ndarray:
    """V̂ per group (rows of ``n``, ``c``; tasks with n_t ≥ k): Σ_t b_{c_t}(n_t, k) / T_k², clipped at 0.

    Unbiased for a re-run's variance of mean_t Û_k where every n_t ≥ 2k, for a lower bound of it otherwise.
    pass@k: the same on the failure counts (1 − Û has Û's variance).
    """
    m = (n >= k) & (n > 0)
    x = c if metric == "pass^k" else n - c
    terms = np.zeros(n.shape)
    for size in np.unique(n[m]):
        at = m & (n == size)
        terms[at] = variance_minorant(int(size), int(k))[x[at]]
    Tk = m.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(Tk > 0, np.maximum(terms.sum(1), 0.0) / np.maximum(Tk, 1) ** 2, np.nan)


def variance_floor(lo, hi, estimate, n, c, ks, metric, level):
    """(lo, hi) widened about ``estimate`` until the half-widths, read as z·sd, reach √:func:`rerun_variance`."""
    z = special.ndtri((1.0 + level) / 2.0)
    lo, hi = lo.copy(), hi.copy()
    for j, k in enumerate(ks):
        sd = np.sqrt(rerun_variance(n, c, int(k), metric))
        e = estimate[:, j]
        dl, dh = np.maximum(e - lo[:, j], 0.0), np.maximum(hi[:, j] - e, 0.0)
        sd_model = (dl + dh) / (2.0 * z)
        ok = np.isfinite(sd) & np.isfinite(e) & np.isfinite(lo[:, j]) & (sd > sd_model)
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(sd_model > 0, sd / sd_model, np.inf)
            new_lo = np.where(sd_model > 0, e - f * dl, e - z * sd)
            new_hi = np.where(sd_model > 0, e + f * dh, e + z * sd)
        lo[:, j] = np.where(ok, np.clip(np.minimum(lo[:, j], new_lo), 0.0, 1.0), lo[:, j])
        hi[:, j] = np.where(ok, np.clip(np.maximum(hi[:, j], new_hi), 0.0, 1.0), hi[:, j])
    return lo, hi

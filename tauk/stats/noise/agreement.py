"""How much of the variance of success lies between tasks: the one-way ICC(1) with its F interval (a moment
estimate) and the beta-binomial over-dispersion ρ (its model-based twin). See
:mod:`tauk.stats.noise.analysis` for the definitions."""

from __future__ import annotations

import numpy as np

from tauk._lazy import lazy

from .noise_floor import ALPHA

special = lazy("scipy.special")
sstats = lazy("scipy.stats")


__all__ = ["icc_oneway", "beta_binomial_rho"]


def icc_oneway(n: np.ndarray, c: np.ndarray, alpha: float = ALPHA) -> dict[str, float | None]:
    """ICC(1) of binary success within tasks with its F-based interval (unequal n: the n0 correction).

    Returns ``icc, icc_low, icc_high, n0, F`` (None where undefined: fewer than 2 tasks, no task with 2 trials,
    or no variation at all; when no task varies within itself the ICC is 1 and the interval undefined).

    >>> r = icc_oneway(np.array([4, 4, 4]), np.array([0, 4, 2]))
    >>> round(r["icc"], 4), r["n0"]
    (0.6667, 4.0)
    """
    n = np.asarray(n, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    T, N = n.size, float(n.sum())
    out: dict[str, float | None] = dict.fromkeys(("icc", "icc_low", "icc_high", "n0", "F"))
    if T < 2 or N - T < 1:
        return out
    ybar = c.sum() / N
    msb = float(np.sum(n * (c / n - ybar) ** 2) / (T - 1))
    msw = float(np.sum(c * (n - c) / n) / (N - T))
    n0 = float((N - np.sum(n**2) / N) / (T - 1))
    out["n0"] = n0
    if msb == 0 and msw == 0:
        return out
    if msw == 0:
        out["icc"] = 1.0
        return out
    F = msb / msw
    out["F"] = F
    icc = (msb - msw) / (msb + (n0 - 1.0) * msw)
    out["icc"] = 0.0 if abs(icc) < 1e-12 else icc
    fl = F / sstats.f.ppf(1 - alpha / 2, T - 1, N - T)
    fu = F * sstats.f.ppf(1 - alpha / 2, N - T, T - 1)
    out["icc_low"] = (fl - 1.0) / (fl + n0 - 1.0)
    out["icc_high"] = min(1.0, (fu - 1.0) / (fu + n0 - 1.0))
    return out


def beta_binomial_rho(n: np.ndarray, c: np.ndarray) -> tuple[float | None, float | None]:
    """(μ, ρ) of a beta-binomial fitted by maximum marginal likelihood; ρ = 1/(1 + κ) is the over-dispersion
    (the share of success variance between tasks). (None, None) when it is not identifiable: no task with 2 trials,
    or every trial a success / every trial a failure.

    >>> mu, rho = beta_binomial_rho(np.array([4] * 6), np.array([0, 0, 4, 4, 2, 1]))
    >>> round(mu, 3), round(rho, 3)
    (0.479, 0.623)
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if n.size == 0 or not np.any(n >= 2) or c.sum() == 0 or c.sum() == n.sum():
        return None, None
    pairs, w = np.unique(np.stack([n, c], axis=1), axis=0, return_counts=True)  # distinct (n, c) with counts
    nn, cc = (pairs[:, i].astype(np.float64)[:, None] for i in (0, 1))
    w = w.astype(np.float64)

    def nll(mu: np.ndarray, rho: np.ndarray) -> np.ndarray:
        kappa = (1.0 - rho) / rho
        a, b = mu * kappa, (1.0 - mu) * kappa
        return -(w @ (special.betaln(cc + a, nn - cc + b) - special.betaln(a, b)))

    lo, hi = -10.0, 10.0  # search in logit(μ), logit(ρ): a coarse grid, then zoom in around the best point
    cu, cr, half = 0.0, 0.0, 10.0
    for _ in range(8):
        gu = np.clip(np.linspace(cu - half, cu + half, 41), lo, hi)
        gr = np.clip(np.linspace(cr - half, cr + half, 41), lo, hi)
        U, R = (x.ravel()[None, :] for x in np.meshgrid(gu, gr))
        best = int(np.argmin(nll(special.expit(U), special.expit(R))))
        cu, cr = float(U[0, best]), float(R[0, best])
        half /= 8.0
    mu, rho = float(special.expit(cu)), float(special.expit(cr))
    return mu, (0.0 if cr <= lo + 0.05 else 1.0 if cr >= hi - 0.05 else rho)

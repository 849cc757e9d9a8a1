"""The variance floor of the fixed-task (re-run) interval: a lower bound of a re-run's variance that the data
estimate without the model.

A task's Û = C(c, k)/C(n, k) has, given its p, the variance v(p) = E[Û² | p] − p^{2k}, a polynomial of degree 2k.
Any polynomial P(p) = Σ_c b_c · C(n, c) p^c (1 − p)^{n−c} of degree ≤ n has the unbiased estimate b_c (its Bernstein
coefficients), so Σ_t b_{c_t} / T² estimates Σ_t P(p_t) / T² without bias, whatever the population. With
P ≤ v on [0, 1] that is a lower bound of the variance of mean_t Û over a re-run of the same tasks:

* n ≥ 2k: P = v itself (b_c = Û_c² − C(c, 2k)/C(n, 2k)), the unbiased variance;
* k ≤ n < 2k, n ≤ 16: v has degree 2k > n and no unbiased estimate exists; P is the polynomial of degree ≤ n below
  v on [0, 1] with the largest average over p (a linear programme in the n + 1 coefficients on a 2,001-point
  grid, solved once per (n, k) and stored in :mod:`tauk.stats.intervals.minorants`) — e.g. n = k = 4:
  b = (−0.059, 0.181, −0.443, 0.689, 0);
* k ≤ n < 2k, n > 16: the simpler P = E[Û² | p] − p^n (p^n ≥ p^{2k}; b_c = Û_c² − [c = n], never negative) — the
  programme's coefficients grow and stop being unique there (|b| up to 19 at n = k = 32).

Signed coefficients make V̂ noisy where the true variance is small (a k near n, where Û is mostly 0), so V̂ is
capped at θ̂(1 − θ̂)/T, θ̂ the unbiased estimate: no [0, 1]-valued per-task estimate with mean θ can have a larger
variance of its average. The interval is then widened about the estimate until its width reaches 2·z·√V̂, both
sides scaled by one factor so that the model's skew is kept (measured against extending each side to z·√V̂ on its
own: same mean width, but 6 cells below 94 % instead of 0 — the misses follow the model's long side), clipped to
[0, 1]; it is never narrowed — V̂ is noisy at T = 10, where the model's spread is the better one.

Claim: with the floor no pass^k fixed-task cell of the calibration grid falls below 94 % (without it 11 of 140 do,
down to 90.6 %), at about 1.04× the width; a floor discounted for its own noise left cells below 94 % again. The
measurements: ``docs/calibration/intervals.md`` (the re-run floor section).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from tauk._lazy import lazy

from .. import _special
from ..tasks import unbiased_means
from .minorants import MINORANTS

optimize = lazy("scipy.optimize")
special = lazy("scipy.special")
stats = lazy("scipy.stats")

__all__: list[str] = []

_GRID = np.linspace(0.0, 1.0, 2001)
_LP_MAX_N = 16  # above: the p^n bound (the programme's coefficients grow and stop being unique)


def solve_minorant(n: int, k: int) -> np.ndarray:
    """The linear programme for k ≤ n < 2k: maximise Σ_c b_c (the average of P over p) subject to P ≤ v on the grid.

    Solved once for every n ≤ 16 by ``python -m tauk.stats.intervals.rerun_floor`` into
    :mod:`tauk.stats.intervals.minorants` (a
    test re-solves and compares), so that no programme runs when intervals are computed.
    """
    cs = np.arange(n + 1)
    u = _special.comb(cs, k) / _special.comb(n, k)
    basis = stats.binom.pmf(cs[None, :], n, _GRID[:, None])
    v = basis @ (u * u) - _GRID ** (2 * k)
    res = optimize.linprog(-np.ones(n + 1), A_ub=basis, b_ub=v, bounds=[(None, None)] * (n + 1), method="highs")
    if not res.success:
        raise RuntimeError(f"minorant programme n={n}, k={k}: {res.message}")
    return res.x + 0.0


@lru_cache(maxsize=1024)
def variance_minorant(n: int, k: int) -> np.ndarray:
    """Bernstein coefficients b_0 … b_n of the floor polynomial P ≤ v for tasks of n trials (see the module docs).

    >>> variance_minorant(4, 2).round(4).tolist()  # n ≥ 2k: Û² − C(c, 4)/C(4, 4)
    [0.0, 0.0, 0.0278, 0.25, 0.0]
    >>> (variance_minorant(4, 4).round(3) + 0.0).tolist()
    [-0.059, 0.181, -0.443, 0.689, 0.0]
    """
    if (n, k) in MINORANTS:
        b = np.array(MINORANTS[(n, k)], dtype=np.float64)
    else:  # n ≥ 2k: the variance itself; n > 16: the p^n bound
        cs = np.arange(n + 1)
        u = _special.comb(cs, k) / _special.comb(n, k)
        b = u * u - _special.comb(cs, min(2 * k, n)) / _special.comb(n, min(2 * k, n))
    b.setflags(write=False)
    return b


def floor_variance(n: np.ndarray, c: np.ndarray, k: int, metric: str) -> np.ndarray:
    """V̂ per group (rows of ``n``, ``c``; tasks with n_t ≥ k): Σ_t b_{c_t}(n_t, k) / T_k², clipped to
    [0, θ̂(1 − θ̂)/T_k].

    Unbiased for a re-run's variance of mean_t Û_k where every n_t ≥ 2k, for a lower bound of it otherwise.
    pass@k: the same on the failure counts (1 − Û has Û's variance).
    """
    m = (n >= k) & (n > 0)
    x = c if metric == "pass^k" else n - c
    terms = np.zeros(n.shape)
    for size in sorted(set(n[m].tolist())):  # not np.unique: its plain form imports numpy.ma (startup)
        at = m & (n == size)
        terms[at] = variance_minorant(int(size), int(k))[x[at]]
    theta, Tk = unbiased_means(n, c, k, metric)
    T = np.maximum(Tk, 1)
    cap = theta * (1.0 - theta) / T  # the largest variance an average of [0, 1] values with mean θ can have
    return np.where(Tk > 0, np.minimum(np.maximum(terms.sum(1), 0.0) / T**2, cap), np.nan)


def variance_floor(lo, hi, estimate, n, c, ks, metric, ci):
    """(lo, hi) widened about ``estimate`` until its width reaches 2·z·√:func:`floor_variance`, each side scaled by
    the same factor (the model's skew is kept: with the estimate at one end, all the width goes to the other side),
    clipped to [0, 1]; never narrowed."""
    z = _special.ndtri((1.0 + ci) / 2.0)
    lo, hi = lo.copy(), hi.copy()
    for j, k in enumerate(ks):
        sd = np.sqrt(floor_variance(n, c, int(k), metric))
        e = estimate[:, j]
        dl, dh = np.maximum(e - lo[:, j], 0.0), np.maximum(hi[:, j] - e, 0.0)
        sd_model = (dl + dh) / (2.0 * z)
        ok = np.isfinite(sd) & np.isfinite(e) & np.isfinite(lo[:, j]) & np.isfinite(hi[:, j]) & (sd > sd_model)
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(sd_model > 0, sd / sd_model, np.inf)
            new_lo = np.where(sd_model > 0, e - f * dl, e - z * sd)
            new_hi = np.where(sd_model > 0, e + f * dh, e + z * sd)
        lo[:, j] = np.where(ok, np.clip(np.minimum(lo[:, j], new_lo), 0.0, 1.0), lo[:, j])
        hi[:, j] = np.where(ok, np.clip(np.maximum(hi[:, j], new_hi), 0.0, 1.0), hi[:, j])
    return lo, hi


def _write_table() -> None:
    """Regenerate tauk/stats/intervals/minorants.py (every k ≤ n < 2k with n ≤ 16)."""
    from pathlib import Path

    rows = [f"    ({n}, {k}): ({', '.join(repr(float(x)) for x in solve_minorant(n, k))},),"
            for n in range(1, _LP_MAX_N + 1) for k in range(n // 2 + 1, n + 1)]  # fmt: skip
    text = ('"""Generated by ``python -m tauk.stats.intervals.rerun_floor``: the Bernstein coefficients of the variance\n'
            'floor for k ≤ n < 2k, n ≤ 16 (see :mod:`tauk.stats.intervals.rerun_floor`). Do not edit."""\n\n'
            "MINORANTS: dict[tuple[int, int], tuple[float, ...]] = {\n" + "\n".join(rows) + "\n}\n")  # fmt: skip
    Path(__file__).with_name("minorants.py").write_text(text)


if __name__ == "__main__":
    _write_table()

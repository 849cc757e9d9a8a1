"""p-value tools: the sign-flip permutation test of paired differences and many-comparison adjustment (docs/spec.md §4).

Re-exported from :mod:`tauk.stats`. The sign-flip p-value here is compare()'s conservative cross-check
(``p_signflip``); the headline tests and their inverted intervals are in :mod:`tauk.stats.comparisons.paired_tests`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tauk._compat import keyword_options
from tauk.conventions import ADJUST, RESAMPLES, SEED
from tauk.errors import TaukError

from ..options import check_adjust

__all__ = ["EXACT_MAX", "sign_flip_pvalue", "wilcoxon_pvalue", "holm", "benjamini_hochberg", "adjust_pvalues"]

EXACT_MAX = 20
"""Up to this many nonzero differences the sign-flip p-value is exact (all 2^m sign vectors)."""


@keyword_options(("d", "permutations", "seed", "exact_max"))
def sign_flip_pvalue(
    d: Sequence[float] | np.ndarray,
    *,
    permutations: int = RESAMPLES,
    seed: int | None = SEED,
    exact_max: int = EXACT_MAX,
) -> tuple[float, str]:
    """Two-sided sign-flip permutation p-value for H0: d_t symmetric about 0, statistic |Σ d_t|.

    Tasks with d_t = 0 do not change the statistic under any flip, so the exact enumeration runs over the nonzero
    ones: all 2^m sign vectors when m ≤ ``exact_max`` (p = share with |Σ s_t d_t| ≥ |Σ d_t|). Otherwise
    ``permutations`` seeded random flips, p = (1 + #{≥}) / (1 + permutations).

    Parameters
    ----------
    d
        Per-task paired differences.
    permutations
        Random sign vectors drawn when there are more than ``exact_max`` nonzero differences
        (default :data:`tauk.conventions.RESAMPLES`).
    seed
        Seed of those draws (default :data:`tauk.conventions.SEED`).
    exact_max
        Enumerate exactly up to this many nonzero differences.

    Returns
    -------
    tuple of (float, str)
        The p-value and ``"exact"`` or ``"monte-carlo"``.

    Examples
    --------
    >>> sign_flip_pvalue([1.0, 1.0, 1.0, 0.0, -0.5])
    (0.25, 'exact')
    """
    d = np.asarray(d, dtype=np.float64)
    if not np.isfinite(d).all():  # a NaN difference fell out of every comparison: p came out 0
        raise TaukError(f"sign_flip_pvalue: the differences must be finite numbers; {int((~np.isfinite(d)).sum())} "
                        "are NaN or infinite (drop the tasks without a difference first)")  # fmt: skip
    check_permutations(permutations)
    d = d[d != 0]
    m = d.size
    if m == 0:
        return 1.0, "exact"
    obs = abs(d.sum())
    tol = 1e-12 * max(1.0, np.abs(d).sum())
    if m <= exact_max:
        total = 1 << m
        hits = 0
        step = 1 << 16
        bits = np.arange(m, dtype=np.int64)
        for start in range(0, total, step):
            codes = np.arange(start, min(start + step, total), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            hits += int(np.count_nonzero(np.abs(signs @ d) >= obs - tol))
        return hits / total, "exact"
    rng = np.random.default_rng(seed)
    hits = 0
    step = max(1, (1 << 22) // m)
    for start in range(0, permutations, step):
        b = min(step, permutations - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(b, m), dtype=np.int8)
        hits += int(np.count_nonzero(np.abs(signs @ d) >= obs - tol))
    return (1 + hits) / (1 + permutations), "monte-carlo"


def wilcoxon_pvalue(d: Sequence[float] | np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value, normal approximation with the tie-corrected variance, zeros dropped
    (= ``scipy.stats.wilcoxon(d, zero_method="wilcox", method="approx")`` to rounding, at a fraction of its cost).

    compare()'s cross-check ``p_wilcoxon``: before issue 23 it called scipy's default (exact for small untied
    samples), which took most of compare()'s time. 1.0 when every difference is 0.

    Examples
    --------
    >>> round(wilcoxon_pvalue([1.0, 1.0, 1.0, 0.0, -1.0, 1.0]), 4)
    0.1797
    """
    d = np.asarray(d, dtype=np.float64)
    nz = d[d != 0]
    n = nz.size
    if n == 0:
        return 1.0
    a = np.abs(nz)
    _, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    from scipy import special

    ends = np.cumsum(counts)
    ranks = (ends - (counts - 1) / 2.0)[inv]  # average ranks of |d|
    r_plus = float(ranks[nz > 0].sum())
    r_minus = float(ranks[nz < 0].sum())
    stat = min(r_plus, r_minus)
    mn = n * (n + 1) / 4.0
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float(np.sum(counts**3 - counts)) / 48.0
    if var <= 0:
        return 1.0
    z = (stat - mn) / np.sqrt(var)
    return float(min(1.0, 2.0 * special.ndtr(-abs(z))))


def check_permutations(permutations: object) -> int:
    """``permutations`` (random sign vectors of a Monte Carlo p-value) as an integer ≥ 1, else a one-line
    :class:`~tauk.errors.TaukError` (0 gave p = 1 whatever the data, a negative number a ZeroDivisionError)."""
    if isinstance(permutations, bool) or not isinstance(permutations, int | np.integer) or permutations < 1:
        raise TaukError(f"permutations must be an integer ≥ 1, got {permutations!r}")
    return int(permutations)


def _sorted_finite(p: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p as floats, an all-NaN output, the indices of the finite p-values in ascending order): NaN entries are
    left out of the family and stay NaN; a p-value outside [0, 1] is a :class:`~tauk.errors.TaukError` (Holm
    turned -0.1 into an adjusted -0.2)."""
    p = np.asarray(p, dtype=np.float64)
    off = p[~np.isnan(p) & ~((p >= -1e-9) & (p <= 1 + 1e-9))]  # rounding past an end is not an error
    if off.size:
        raise TaukError(f"p-values must lie in [0, 1] (NaN: not in the family); got {off[:3].tolist()}")
    p = np.where(np.isnan(p), p, np.clip(p, 0.0, 1.0))
    ok = np.flatnonzero(np.isfinite(p))
    return p, np.full(p.shape, np.nan), ok[np.argsort(p[ok], kind="stable")]


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values.

    Parameters
    ----------
    p
        The family of p-values; NaN entries are left out of the family and stay NaN.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the order given.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    p, out, order = _sorted_finite(p)
    m = order.size
    if m:
        out[order] = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
    return out


def benjamini_hochberg(p: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (equal to ``scipy.stats.false_discovery_control(p, method='bh')``).

    Parameters
    ----------
    p
        The family of p-values; NaN entries are left out of the family and stay NaN.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the order given.

    Examples
    --------
    >>> benjamini_hochberg([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    p, out, order = _sorted_finite(p)
    m = order.size
    if m:
        ranked = p[order] * m / np.arange(1, m + 1)
        out[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return out


@keyword_options(("p", "method"), renamed={"method": "adjust"})
def adjust_pvalues(p: Sequence[float], *, adjust: str = ADJUST) -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    p
        The family of p-values; NaN entries are left out of the family and stay NaN.
    adjust
        One of :data:`tauk.conventions.ADJUSTMENTS`: ``"holm"`` (default, :func:`holm`), ``"bh"``
        (:func:`benjamini_hochberg`; ``"fdr_bh"`` and ``"benjamini-hochberg"`` too) or ``"none"``. (Called
        ``method`` before; ``method=`` still works for one release, with a DeprecationWarning.)

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the order given.

    Raises
    ------
    TaukError
        On an unknown adjustment.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04], adjust="bh").tolist()
    [0.02, 0.04]
    """
    method = check_adjust(adjust)
    if method == "holm":
        return holm(p)
    if method == "bh":
        return benjamini_hochberg(p)
    return np.asarray(p, dtype=np.float64)

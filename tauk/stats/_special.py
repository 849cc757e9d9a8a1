"""The few special functions a summary needs, in NumPy and :mod:`math`: importing ``scipy.special`` costs about
as much as importing polars, ``scipy.stats`` three times that, and ``tauk summary`` must start in ≤ 2× polars.

Each agrees with SciPy to ~1e-13 relative on the ranges tauk uses (``tests/stats/test_special.py`` checks them
against SciPy at 1e-12); outside them (a t with more than :data:`T_DF_MAX` degrees of freedom, a χ² with a
fractional one) they hand over to SciPy, imported then.

* :func:`gammaln`, :func:`betaln` — ``math.lgamma`` element-wise (SciPy's ``betaln`` is the same lgamma
  combination above 171, a gamma ratio below: both within a few ulp of ``lgamma(a + b)``);
* :func:`expit` — ``1 / (1 + exp(−x))``, SciPy's own formula;
* :func:`comb` — C(n, k) of integer n (0 where n < k or n < 0), exact via :func:`math.comb`;
* :func:`ndtri` — the normal quantile (:class:`statistics.NormalDist`, Wichura's AS 241);
* :func:`chi2_sf` — the χ² upper tail for an integer df, by its finite series (Q(m, h) = e^−h Σ h^j/j!; odd df
  from erfc);
* :func:`t_ppf` — Student's t quantile: Newton on log t for the two-sided tail I_{ν/(ν+t²)}(ν/2, ½), the
  incomplete beta by its continued fraction (Lentz), evaluated on whichever side is the small one.

>>> round(float(t_ppf(0.975, 4)), 10), round(float(ndtri(0.975)), 10)
(2.7764451052, 1.9599639845)
>>> round(chi2_sf(3.0, 3), 10), comb(np.array([4, 2, -1]), 2).tolist()
(0.3916251763, [6.0, 1.0, 0.0])
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = ["T_DF_MAX", "betaln", "chi2_sf", "comb", "expit", "gammaln", "ndtri", "t_ppf"]

T_DF_MAX = 200.0
"""Above this many degrees of freedom :func:`t_ppf` uses SciPy (the lgamma prefactor loses digits)."""


def _lg(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # 0, −1, −2, …: a pole, +∞ as in SciPy
        return math.inf


_LGAMMA = np.frompyfunc(_lg, 1, 1)


def gammaln(x):
    """log |Γ(x)| element-wise (+∞ at the poles)."""
    out = np.asarray(_LGAMMA(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return out[()] if out.ndim == 0 else out


def betaln(a, b):
    """log |B(a, b)| = lgamma(a) + lgamma(b) − lgamma(a + b)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return gammaln(a) + gammaln(b) - gammaln(a + b)


def expit(x):
    """The logistic function 1 / (1 + e^−x)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def comb(n, k: int):
    """C(n, k) as floats for integer ``n`` (array or scalar) and integer ``k``; 0 where n < k, n < 0 or k < 0."""
    n = np.asarray(n)
    k = int(k)
    top = int(n.max()) if n.size else 0
    table = np.array([float(math.comb(i, k)) if k >= 0 else 0.0 for i in range(max(top, 0) + 1)])
    out = np.where(n < 0, 0.0, table[np.clip(n, 0, None).astype(np.int64)])
    return out[()] if out.ndim == 0 else out


_NORMAL = NormalDist()


def _ndtri1(p: float) -> float:
    if p <= 0.0 or p >= 1.0:
        return -math.inf if p == 0.0 else math.inf if p == 1.0 else math.nan
    return _NORMAL.inv_cdf(p)


_NDTRI = np.frompyfunc(_ndtri1, 1, 1)


def ndtri(p):
    """The standard normal quantile (−∞ at 0, +∞ at 1)."""
    out = np.asarray(_NDTRI(np.asarray(p, dtype=np.float64)), dtype=np.float64)
    return out[()] if out.ndim == 0 else out


def chi2_sf(x: float, df: float) -> float:
    """P(χ²_df > x), exact series for an integer ``df`` ≥ 1 (SciPy's otherwise)."""
    x, df = float(x), float(df)
    if not (df >= 1 and df == int(df) and df <= 1e6) or math.isnan(x):
        from scipy import stats

        return float(stats.chi2.sf(x, df))
    if x <= 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    h = x / 2.0
    m, odd = divmod(int(df), 2)
    if odd:  # Q(m + ½, h) = erfc(√h) + Σ_{i=1..m} h^(i−½) e^−h / Γ(i + ½)
        logs = [(i - 0.5) * math.log(h) - h - math.lgamma(i + 0.5) for i in range(1, m + 1)]
        head = math.erfc(math.sqrt(h))
    else:  # Q(m, h) = Σ_{j<m} h^j e^−h / j!
        logs = [j * math.log(h) - h - math.lgamma(j + 1.0) for j in range(m)]
        head = 0.0
    if not logs:
        return head
    top = max(logs)
    return min(1.0, head + math.exp(top) * math.fsum(math.exp(v - top) for v in logs))


_TINY = 1e-300
_EPS = 3e-16


def _betacf(a: float, b: float, x: np.ndarray) -> np.ndarray:
    """The continued fraction of I_x(a, b) (modified Lentz), element-wise over ``x``."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    for m in range(1, 2001):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            de = d * c
            h = h * de
        if np.all(np.abs(de - 1.0) < _EPS):
            break
    return h


def _t_tails(t: np.ndarray, nu: float) -> tuple[np.ndarray, np.ndarray]:
    """(P(|T| > t), P(|T| ≤ t)) for t ≥ 0, each accurate where it is small."""
    t2 = t * t
    x, y = nu / (nu + t2), t2 / (nu + t2)
    a, b = nu / 2.0, 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * np.log(x) + b * np.log(y)
        bt = np.exp(lbt)
        direct = x < (a + 1.0) / (a + b + 2.0)
        upper = np.where(direct, bt * _betacf(a, b, np.where(direct, x, 0.0)) / a, np.nan)
        central = np.where(direct, np.nan, bt * _betacf(b, a, np.where(direct, 0.0, y)) / b)
    upper = np.where(direct, upper, 1.0 - central)
    central = np.where(direct, 1.0 - upper, central)
    return upper, central


def _t_logpdf2(t: np.ndarray, nu: float) -> np.ndarray:
    """log of the density of |T| (twice Student's)."""
    c = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi) + math.log(2.0)
    return c - (nu + 1) / 2 * np.log1p(t * t / nu)


def t_ppf(p, df: float):
    """Student's t quantile at ``p`` (array or scalar) with ``df`` > 0 degrees of freedom (as
    ``scipy.stats.t.ppf`` / ``scipy.special.stdtrit``); the normal's at df = ∞."""
    df = float(df)
    p_arr = np.asarray(p, dtype=np.float64)
    if math.isinf(df):
        return ndtri(p_arr)
    if not 1.0 <= df <= T_DF_MAX:
        from scipy import special

        out = np.asarray(special.stdtrit(df, p_arr), dtype=np.float64)
        return out[()] if out.ndim == 0 else out
    pf = p_arr.ravel()
    tail = 2.0 * np.minimum(pf, 1.0 - pf)  # P(|T| > t) at the answer; exact in floating point
    central = np.abs(2.0 * pf - 1.0)
    use_tail = tail < 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        target = np.log(np.where(use_tail, tail, central))
    ok = (pf > 0) & (pf < 1) & (pf != 0.5)
    z = np.abs(ndtri(np.where(ok, pf, 0.75)))
    s = np.log(np.where(ok, z, 1.0))  # Newton on s = log t from the normal quantile
    last = False
    for _ in range(100):
        t = np.exp(s)
        up, ce = _t_tails(t, df)
        f = np.where(use_tail, up, ce)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.log(f) - target
            dg = np.exp(_t_logpdf2(t, df) + s - np.log(f)) * np.where(use_tail, -1.0, 1.0)
            step = np.where(ok, np.clip(g / dg, -2.0, 2.0), 0.0)
        step = np.where(np.isfinite(step), step, 0.0)
        s = s - step
        if last:
            break
        last = bool(np.all(np.abs(step) < 1e-9))  # quadratic: one more step takes it to rounding
    t = np.exp(s)
    out = np.sign(pf - 0.5) * np.where(ok, t, 0.0)
    out = np.where(pf == 0.0, -np.inf, np.where(pf == 1.0, np.inf, out))
    out = np.where((pf < 0) | (pf > 1) | np.isnan(pf), np.nan, out).reshape(p_arr.shape)
    return out[()] if out.ndim == 0 else out

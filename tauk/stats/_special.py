"""The few special functions a summary needs, in NumPy and :mod:`math`: importing ``scipy.special`` costs about
as much as importing polars, ``scipy.stats`` three times that, and ``tauk summary`` must start in ≤ 2× polars.

Each agrees with SciPy to ~1e-13 relative on the ranges tauk uses (``tests/stats/test_special.py`` checks them
against SciPy at 1e-12); outside them (a t with more than :data:`T_DF_MAX` degrees of freedom, a χ² with a
fractional one) they hand over to SciPy, imported then.

* :func:`gammaln`, :func:`betaln` — ``math.lgamma`` element-wise (SciPy's ``betaln`` is the same lgamma
  combination above 171, a gamma ratio below: both within a few ulp of ``lgamma(a + b)``);
* :func:`expit` — ``1 / (1 + exp(−x))``, SciPy's own formula;
* :func:`comb` — C(n, k) of integer n (0 where n < k or n < 0), exact via :func:`math.comb`;
* :func:`ndtri` — the normal quantile (Wichura's AS 241, as :class:`statistics.NormalDist`; vectorised);
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


# Wichura's AS 241 (PPND16, Applied Statistics 37:477–484, 1988): rational approximations in three regions of p,
# coefficients from the paper, highest power first (Horner)
_AS241 = (
    ((2.5090809287301226727e3, 3.3430575583588128105e4, 6.7265770927008700853e4, 4.5921953931549871457e4,
      1.3731693765509461125e4, 1.9715909503065514427e3, 1.3314166789178437745e2, 3.3871328727963666080e0),
     (5.2264952788528545610e3, 2.8729085735721942674e4, 3.9307895800092710610e4, 2.1213794301586595867e4,
      5.3941960214247511077e3, 6.8718700749205790830e2, 4.2313330701600911252e1, 1.0)),
    ((7.7454501427834140764e-4, 2.2723844989269184583e-2, 2.4178072517745061177e-1, 1.2704582524523683826e0,
      3.6478483247632046050e0, 5.7694972214606914055e0, 4.6303378461565452959e0, 1.4234371107496835773e0),
     (1.0507500716444168432e-9, 5.4759380849953449460e-4, 1.5198666563616457197e-2, 1.4810397642748007459e-1,
      6.8976733498510000455e-1, 1.6763848301838038494e0, 2.0531916266377588219e0, 1.0)),
    ((2.0103343992922881327e-7, 2.7115555687434875782e-5, 1.2426609473880784386e-3, 2.6532189526576123093e-2,
      2.9656057182850489123e-1, 1.7848265399172913358e0, 5.4637849111641143699e0, 6.6579046435011037772e0),
     (2.0442631033899397856e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5, 7.8686913114561329059e-4,
      1.4875361290850614852e-2, 1.3692988092273580531e-1, 5.9983220655588793769e-1, 1.0)),
)  # fmt: skip


def _horner(coefs: tuple[float, ...], r: np.ndarray) -> np.ndarray:
    out = np.full_like(r, coefs[0])
    for c in coefs[1:]:
        out = out * r + c
    return out


def ndtri(p):
    """The standard normal quantile (−∞ at 0, +∞ at 1, NaN outside), by AS 241 (as :class:`statistics.NormalDist`,
    whose ``inv_cdf`` is the same algorithm; vectorised)."""
    p = np.asarray(p, dtype=np.float64)
    q = p - 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        r0 = 0.180625 - q * q
        central = q * _horner(_AS241[0][0], r0) / _horner(_AS241[0][1], r0)
        r = np.sqrt(-np.log(np.where(q <= 0.0, p, 1.0 - p)))
        r1, r2 = r - 1.6, r - 5.0
        tail = np.where(r <= 5.0, _horner(_AS241[1][0], r1) / _horner(_AS241[1][1], r1),
                        _horner(_AS241[2][0], r2) / _horner(_AS241[2][1], r2))  # fmt: skip
    out = np.where(np.abs(q) <= 0.425, central, np.where(q < 0.0, -tail, tail))
    out = np.where(p == 0.0, -np.inf, np.where(p == 1.0, np.inf, out))
    out = np.where((p < 0.0) | (p > 1.0) | np.isnan(p), np.nan, out)
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

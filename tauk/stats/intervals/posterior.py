"""The beta-binomial posterior behind :mod:`tauk.stats.intervals.model`: prior, likelihood, weighted posterior
points, and the draws of the fixed-task estimand.

(μ, κ) are integrated on (u, v) = (logit μ, log κ): a coarse product grid, then importance sampling on a Fibonacci
lattice through a Student-t proposal (see the :mod:`tauk.stats.intervals.model` docs). Everything is vectorised over
groups (rows of ``n``, ``c``; n = 0 pads).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from tauk._lazy import lazy
from tauk.errors import TaukError

from .. import _special

special = lazy("scipy.special")


__all__ = ["Prior", "DEFAULT_PRIOR", "RowStreams", "beta_moment", "beta_moments", "posterior_points", "weighted_quantiles",
           "resample", "pair_counts", "fixed_draws"]

_LOG_FORM_MAX_N = 512  # above this many trials in a task, the likelihood is summed per (n, c) pair with betaln

# ---------------------------------------------------------------------------------------------------------------
# prior and moments
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prior:
    """μ ~ Beta(*mu), ρ = 1/(1 + κ) ~ Beta(*rho), independent (defaults: both uniform)."""

    mu: tuple[float, float] = (1.0, 1.0)
    rho: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self):
        if min(self.mu + self.rho) <= 0:
            raise TaukError("prior parameters must be positive (a proper prior)")

    def swapped(self) -> Prior:
        """The prior of 1 − p (for pass@k, fitted on failure counts)."""
        return Prior((self.mu[1], self.mu[0]), self.rho)

    def logpdf_uv(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """log density in (u, v) = (logit μ, log κ), Jacobians included, up to a constant:
        am·log μ + bm·log(1 − μ) + ar·log ρ + br·log(1 − ρ)."""
        am, bm = self.mu
        ar, br = self.rho
        # log(1 + e^x) = max(x, 0) + log1p(e^−|x|) for x = ±u, ±v (np.logaddexp(0, x), 7× faster; within 2e-15)
        lu, lv = np.log1p(np.exp(-np.abs(u))), np.log1p(np.exp(-np.abs(v)))
        lmu = -am * (np.maximum(-u, 0.0) + lu) - bm * (np.maximum(u, 0.0) + lu)
        lrho = -ar * (np.maximum(v, 0.0) + lv) - br * (np.maximum(-v, 0.0) + lv)
        return lmu + lrho

    def bounds(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """A (u, v) box holding all but ~e^{−16} of the prior (the likelihood is bounded, so of the posterior)."""
        am, bm = self.mu
        ar, br = self.rho
        return (max(-40.0, -18.0 / am), min(40.0, 18.0 / bm)), (max(-30.0, -16.0 / br), min(30.0, 16.0 / ar))


DEFAULT_PRIOR = Prior()


def beta_moment(alpha, beta, k: int) -> np.ndarray:
    """E[p^k] for p ~ Beta(α, β): Π_{j<k} (α + j)/(α + β + j) (1 for k = 0); broadcasts.

    >>> float(beta_moment(2.0, 2.0, 4))  # 2·3·4·5 / (4·5·6·7)
    0.14285714285714285
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    out = np.ones(np.broadcast_shapes(alpha.shape, beta.shape))
    for j in range(int(k)):
        out = out * (alpha + j) / (alpha + beta + j)
    return out


def beta_moments(alpha, beta, ks):
    """:func:`beta_moment` at each k of ``ks`` (any order), one product step per k instead of k steps: the running
    product of an increasing run of k's is carried over (the same arithmetic, so the same numbers)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    out, done = None, 0
    for k in ks:
        k = int(k)
        if out is None or k < done:
            out, done = np.ones(np.broadcast_shapes(alpha.shape, beta.shape)), 0
        for j in range(done, k):
            out = out * (alpha + j) / (alpha + beta + j)
        done = k
        yield out


# ---------------------------------------------------------------------------------------------------------------
# posterior over (u, v) = (logit μ, log κ)
# ---------------------------------------------------------------------------------------------------------------


def _t_logpdf(x: np.ndarray, nu: float) -> np.ndarray:
    """log density of Student's t with ``nu`` degrees of freedom (as ``scipy.stats.t.logpdf``)."""
    return (math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * np.log(nu * np.pi)
            - (nu + 1) / 2 * np.log1p(x * x / nu))  # fmt: skip


def _uv_to_ab(u, v):
    kappa = np.exp(v)
    return _special.expit(u) * kappa, _special.expit(-u) * kappa


def _suff(n: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S_j, F_j, N_j (groups × max n): tasks with more than j successes / failures / trials."""
    N = max(int(n.max()) if n.size else 0, 1)
    S = np.zeros((n.shape[0], N))
    F = np.zeros((n.shape[0], N))
    Nn = np.zeros((n.shape[0], N))
    for j in range(N):
        S[:, j] = (c > j).sum(1)
        F[:, j] = (n - c > j).sum(1)
        Nn[:, j] = (n > j).sum(1)
    return S, F, Nn


class _Loglik:
    """Beta-binomial log-likelihood of each group (without Σ log C(n, c)) at grid points (α, β)."""

    def __init__(self, n: np.ndarray, c: np.ndarray):
        self.rows = n.shape[0]
        self.N = int(n.max()) if n.size else 0
        if self.N <= _LOG_FORM_MAX_N:
            self.S, self.F, self.Nn = _suff(n, c)
        else:  # long runs: Σ_pairs count · [betaln(α + c, β + n − c) − betaln(α, β)]
            self.pairs, self.cnt = pair_counts(n, c)

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """A, B: (R, G) points, one set per group, or (G,) shared by every group → (R, G). A sum over j (or over the
        (n, c) pairs) in a fixed order, not a matrix product, whose BLAS kernel and so its rounding would depend on
        how many groups there are: each group's value is the same alone or in a batch."""
        out = np.zeros(np.broadcast_shapes(A.shape, (self.rows, 1)))
        if self.N > _LOG_FORM_MAX_N:
            base = special.betaln(A, B)
            for p, (nn, cc) in enumerate(self.pairs):
                w = self.cnt[:, p : p + 1]
                if w.any():
                    out += w * (special.betaln(A + cc, B + nn - cc) - base)
            return out
        AB = A + B
        for j in range(self.S.shape[1]):
            s, f, m = self.S[:, j : j + 1], self.F[:, j : j + 1], self.Nn[:, j : j + 1]
            out += s * np.log(A + j) + f * np.log(B + j) - m * np.log(AB + j)
        return out


def pair_counts(n: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (n, c) pairs of real tasks (n > 0) and their counts per group (R × P)."""
    valid = n > 0
    if not valid.any():
        return np.zeros((0, 2), dtype=np.int64), np.zeros((n.shape[0], 0))
    pairs, inv = np.unique(np.stack([n[valid], c[valid]], 1), axis=0, return_inverse=True)
    rows = np.nonzero(valid)[0]
    cnt = np.zeros((n.shape[0], len(pairs)))
    np.add.at(cnt, (rows, np.asarray(inv).reshape(-1)), 1.0)
    return pairs, cnt


def _normalise(lp: np.ndarray) -> np.ndarray:
    lp = lp - lp.max(axis=1, keepdims=True)
    w = np.exp(lp)
    return w / w.sum(axis=1, keepdims=True)


def _lattice(G: int, g: int) -> np.ndarray:
    """A rank-1 (Fibonacci) lattice of G points in (0, 1)², G and g consecutive Fibonacci numbers."""
    i = np.arange(G) + 0.5
    return np.stack([i / G, np.mod(i * g / G, 1.0)], axis=1)


_LATTICES = {987: 610, 1597: 987, 2584: 1597, 4181: 2584, 6765: 4181}


@functools.lru_cache(maxsize=16)
def _coarse_grid(prior: Prior, coarse: tuple[int, int]):
    """The coarse (logit μ, log κ) product grid over :meth:`Prior.bounds`, its (α, β), the prior's log density there
    and the variance floors (h/2)² of its spacing — the same for every call with this prior (cached, read-only)."""
    (ulo, uhi), (vlo, vhi) = prior.bounds()
    ug, vg = np.linspace(ulo, uhi, coarse[0]), np.linspace(vlo, vhi, coarse[1])
    U, V = (x.ravel() for x in np.meshgrid(ug, vg, indexing="ij"))
    A, B = _uv_to_ab(U, V)
    out = (U, V, A, B, prior.logpdf_uv(U, V))
    for a in out:
        a.flags.writeable = False
    # the coarse grid cannot resolve a posterior narrower than its spacing: floor the variances at (h/2)²
    return (*out, (((ug[1] - ug[0]) / 2) ** 2, ((vg[1] - vg[0]) / 2) ** 2))


def _t4_ppf(p: np.ndarray) -> np.ndarray:
    """Student's t(4) quantile in closed form, with q = 4p(1 − p): t = ±2·√(cos(arccos(√q)/3)/√q − 1) (within
    1.5e-14 of SciPy's; the proposal's density is computed at these very points, so the weights stay exact)."""
    r = np.sqrt(4.0 * p * (1.0 - p))
    t = 2.0 * np.sqrt(np.cos(np.arccos(r) / 3.0) / r - 1.0)
    return np.where(p < 0.5, -t, t)


@functools.lru_cache(maxsize=8)
def _proposal_lattice(points: int, nu: float):
    """The Fibonacci lattice mapped to Student-t(ν) quantiles and its log density (cached, read-only)."""
    u = _lattice(points, _LATTICES[points])
    tq = _t4_ppf(u) if nu == 4.0 else _special.t_ppf(u, nu)  # Student-t quantiles
    logq = _t_logpdf(tq, nu).sum(1)
    tq.flags.writeable = logq.flags.writeable = False
    return tq, logq


def posterior_points(
    n: np.ndarray,
    c: np.ndarray,
    prior: Prior = DEFAULT_PRIOR,
    *,
    points: int = 1597,
    passes: int = 3,
    coarse: tuple[int, int] = (80, 56),
    nu: float = 4.0,
    scale: float = 1.5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Weighted points of the posterior of (α, β) for each group (row of ``n``, ``c``; n = 0 pads).

    A coarse ``coarse`` product grid over :meth:`Prior.bounds` in (logit μ, log κ), then ``passes`` rounds of
    importance sampling on a Fibonacci lattice of ``points`` points (987, 1597, 2584, 4181 or 6765) mapped through a
    product Student-t(``nu``) proposal with the previous round's mean and covariance (Cholesky, × ``scale``).

    Returns (A, B, W, ess), each (R × points) but ess (R,): α, β, normalised weights, effective sample size 1/Σw².
    """
    if points not in _LATTICES:
        raise TaukError(f"points must be one of {sorted(_LATTICES)}")
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    R = n.shape[0]
    ll = _Loglik(n, c)
    U, V, A, B, lprior, (floor_u, floor_v) = _coarse_grid(prior, coarse)
    W = _normalise(ll(A, B) + lprior[None, :])
    Ur, Vr = np.broadcast_to(U, (R, U.size)), np.broadcast_to(V, (R, V.size))
    tq, logq = _proposal_lattice(points, nu)
    A, B = np.broadcast_to(A, (R, A.size)), np.broadcast_to(B, (R, B.size))
    for _ in range(passes):
        mu_u, mu_v = (W * Ur).sum(1), (W * Vr).sum(1)
        du, dv = Ur - mu_u[:, None], Vr - mu_v[:, None]
        vu = np.maximum((W * du * du).sum(1), floor_u)
        vv = np.maximum((W * dv * dv).sum(1), floor_v)
        cuv = (W * du * dv).sum(1)
        l11 = np.sqrt(vu)
        l21 = cuv / l11
        l22 = np.sqrt(np.maximum(vv - l21 * l21, 0.05 * vv))
        Ur = mu_u[:, None] + scale * l11[:, None] * tq[None, :, 0]
        Vr = mu_v[:, None] + scale * (l21[:, None] * tq[None, :, 0] + l22[:, None] * tq[None, :, 1])
        Vr = np.clip(Vr, -40.0, 40.0)
        A, B = _uv_to_ab(Ur, Vr)
        W = _normalise(ll(A, B) + prior.logpdf_uv(Ur, Vr) - logq[None, :])
        floor_u = floor_v = 0.0
    return A, B, W, 1.0 / (W * W).sum(1)


def weighted_quantiles(x: np.ndarray, w: np.ndarray, qs) -> np.ndarray:
    """Row-wise weighted quantiles (CDF at the points' midpoints, linear interpolation): (R, G) → (R, len(qs))."""
    order = np.argsort(x, axis=1)
    xs = np.take_along_axis(x, order, 1)
    ws = np.take_along_axis(w, order, 1)
    cum = np.cumsum(ws, axis=1) - 0.5 * ws
    R, G = x.shape
    rows = np.arange(R)[:, None]
    qv = np.asarray(qs, dtype=np.float64).reshape(-1)
    out = np.empty((R, qv.size))
    step = max(1, int(4_000_000 // max(R * G, 1)))  # quantiles per block (memory: R × G × step booleans)
    for s0 in range(0, qv.size, step):
        q = qv[s0 : s0 + step]
        idx = (cum[:, :, None] < q[None, None, :]).sum(axis=1)  # (R, block)
        hi = np.minimum(idx, G - 1)
        lo = np.maximum(np.minimum(idx - 1, G - 1), 0)
        c0, c1 = cum[rows, lo], cum[rows, hi]
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(c1 > c0, (q[None, :] - c0) / (c1 - c0), 0.0)
        x0 = xs[rows, lo]
        out[:, s0 : s0 + step] = x0 + np.minimum(np.maximum(t, 0.0), 1.0) * (xs[rows, hi] - x0)
    return out


class RowStreams:
    """One random stream per row (group): ``random``, ``beta`` and ``multinomial`` split their arrays along the first
    axis and draw each row from its own generator, so that a group's draws — and so its interval — are those of a call
    with that group alone, whatever else is in the batch. A row whose multinomial counts are all 0 draws nothing (as
    a one-group call skips it).

    >>> s = RowStreams.seeded(0, 2)
    >>> bool((s.random((2, 3))[1] == np.random.default_rng(0).random((1, 3))[0]).all())
    True
    """

    def __init__(self, gens: list[np.random.Generator]):
        self.gens = gens

    @classmethod
    def seeded(cls, seed: int | None, rows: int) -> RowStreams:
        """``rows`` streams, each ``np.random.default_rng(seed)``."""
        return cls([np.random.default_rng(seed) for _ in range(rows)])

    def take(self, rows: np.ndarray) -> RowStreams:
        """The streams of ``rows`` (indices)."""
        return RowStreams([self.gens[int(r)] for r in rows])

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.random(shape[1:]) for g in self.gens])

    def beta(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        return np.stack([g.beta(a[r], b[r]) for r, g in enumerate(self.gens)])

    def multinomial(self, n: np.ndarray, pvals: np.ndarray) -> np.ndarray:
        out = np.zeros(pvals.shape, dtype=np.int64)
        for r, g in enumerate(self.gens):
            if np.any(n[r]):
                out[r] = g.multinomial(n[r][None, ...], pvals[r][None, ...])[0]
        return out


def resample(W: np.ndarray, S: int, rng: np.random.Generator | RowStreams) -> np.ndarray:
    """Systematic resampling: (R, S) indices of S draws from each row's weights."""
    cw = np.cumsum(W, axis=1)
    cw[:, -1] = 1.0
    pos = (rng.random((W.shape[0], 1)) + np.arange(S)[None, :]) / S
    return np.stack([np.searchsorted(cw[r], pos[r]) for r in range(W.shape[0])])


def fixed_draws(a, b, n, c, ks, rng, within="beta") -> np.ndarray:
    """Draws (R, S, K) of the fixed-task estimand mean_t p_t^k over tasks with n_t ≥ k, given (α, β) draws a, b
    (R, S): per distinct (n, c) pair the exact mean and variance of p^k under the task posterior
    Beta(α + c, β + n − c), then a moment-matched Beta (``within="beta"``), or per-task draws (``"exact"``, slow;
    for checking the approximation)."""
    R, S = a.shape
    out = np.full((R, S, len(ks)), np.nan)
    if within == "exact":  # per-task posterior draws (slow; for checking the Beta approximation)
        for j, k in enumerate(ks):
            m = (n >= k) & (n > 0)
            acc = np.zeros((R, S))
            for t in range(n.shape[1]):
                p = rng.beta(a + c[:, t : t + 1], b + np.maximum(n - c, 0)[:, t : t + 1] + (n[:, t : t + 1] == 0))
                acc += np.where(m[:, t : t + 1], p**k, 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, :, j] = acc / m.sum(1)[:, None]
        return out
    pairs, cnt = pair_counts(n, c)
    K = len(ks)
    kk = [int(k) for k in ks]
    mean = np.zeros((K, R, S))  # k first: each k's (R, S) slab contiguous; moved to (R, S, K) for the draw
    var = np.zeros((K, R, S))
    Tk = np.zeros((K, R))
    need = set(kk) | {2 * k for k in kk}
    ab = a + b
    for p, (nn, cc) in enumerate(pairs):
        w = cnt[:, p]
        if not w.any() or min(kk) > nn:
            continue
        # E[x^m] of the task posterior Beta(α + c, β + n − c), m = 1 … 2·max k: the running product of
        # (α + c + j)/(α + β + n + j), j < m, kept at the m's needed
        moments, cur = {}, None
        ac, abn = a + cc, ab + nn  # (α + c) + j and (α + β + n) + j: the same sums, in the same order, as before
        for j in range(2 * max(k for k in kk if k <= nn)):
            term = (ac + j) / (abn + j)
            cur = term if cur is None else cur * term
            if j + 1 in need:
                moments[j + 1] = cur
        wc = w[:, None]
        for i, k in enumerate(kk):
            if k > nn:
                continue
            e1, e2 = moments[k], moments[2 * k]
            mean[i] += wc * e1
            var[i] += wc * np.maximum(e2 - e1 * e1, 0.0)
            Tk[i] += w
    mean, var, Tk = np.moveaxis(mean, 0, -1), np.moveaxis(var, 0, -1), Tk.T
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = mean / Tk[:, None, :]
        var = var / (Tk**2)[:, None, :]
        phi = mean * (1.0 - mean) / var - 1.0
    ok = np.isfinite(phi) & (phi > 0) & (mean > 0) & (mean < 1)
    draw = rng.beta(np.where(ok, mean * phi, 1.0), np.where(ok, (1.0 - mean) * phi, 1.0))
    return np.where(ok, draw, mean)

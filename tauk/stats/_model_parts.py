"""Pieces of :mod:`tauk.stats.model` beside the posterior: the fixed-task draws of mean_t p_t^k, the posterior
predictive check, and the non-model intervals the model falls back on (task bootstrap, Clopper–Pearson).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special

from tauk.errors import TaukError

from ._posterior import _pair_counts, _resample

ESTIMANDS = ("population", "fixed", "both")
METRICS = ("pass^k", "pass@k")

__all__ = ["check_threshold", "check_threshold_text", "ppc_pvalue"]

# the check's "auto" threshold: T / _TASKS_PER_UNIT clipped to [_ALPHA_LOW, _ALPHA_HIGH]
_ALPHA_LOW, _ALPHA_HIGH, _TASKS_PER_UNIT = 0.05, 0.20, 1000


def _fixed_draws(a, b, n, c, ks, rng, within="beta") -> np.ndarray:
    """Draws (R, S, K) of mean_t p_t^k over tasks with n_t ≥ k, given (α, β) draws a, b (R, S)."""
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
    pairs, cnt = _pair_counts(n, c)
    K = len(ks)
    kk = np.asarray(ks)
    mean = np.zeros((R, S, K))
    var = np.zeros((R, S, K))
    Tk = np.zeros((R, K))
    steps = np.arange(2 * int(kk.max()), dtype=np.float64)
    for p, (nn, cc) in enumerate(pairs):
        w = cnt[:, p]
        use = kk <= nn
        if not w.any() or not use.any():
            continue
        # E[x^m] of the task posterior Beta(α + c, β + n − c), m = 1 … 2·max k, as cumulative products
        cp = np.cumprod((a[..., None] + cc + steps) / ((a + b)[..., None] + nn + steps), axis=-1)
        e1 = cp[..., kk - 1]
        e2 = cp[..., 2 * kk - 1]
        wk = w[:, None] * use[None, :]  # (R, K)
        mean += wk[:, None, :] * e1
        var += wk[:, None, :] * np.maximum(e2 - e1 * e1, 0.0)
        Tk += wk
    with np.errstate(invalid="ignore", divide="ignore"):
        mean /= Tk[:, None, :]
        var /= (Tk**2)[:, None, :]
        phi = mean * (1.0 - mean) / var - 1.0
    ok = np.isfinite(phi) & (phi > 0) & (mean > 0) & (mean < 1)
    draw = rng.beta(np.where(ok, mean * phi, 1.0), np.where(ok, (1.0 - mean) * phi, 1.0))
    return np.where(ok, draw, mean)


# ---------------------------------------------------------------------------------------------------------------
# posterior predictive check
# ---------------------------------------------------------------------------------------------------------------

_NBINS = 6


def _bin_of(n, c):
    """Bin of a task's c/n: 0 = none; 1–4 = (0, ¼], (¼, ½], (½, ¾], (¾, 1); 5 = all."""
    n = np.asarray(n)
    c = np.asarray(c)
    q = np.clip(np.ceil(4 * c / np.maximum(n, 1)).astype(np.int64), 1, 4)
    return np.where(c == 0, 0, np.where(c == n, 5, q))


def ppc_pvalue(n, c, A, B, W, rng: np.random.Generator, draws: int = 400) -> np.ndarray:
    """Posterior predictive p-value of the binned χ² discrepancy, per group (R,); NaN where not testable.

    For each of ``draws`` posterior draws of (α, β): E_b = Σ_t P(c_t/n_t ∈ bin b | n_t, α, β) (exact beta-binomial
    probabilities), a replicated data set with the same n_t (multinomial bin counts per distinct n), and
    χ² = Σ_b (O_b − E_b)²/E_b for the observed and the replicated counts; p = share of draws where the replicate's
    χ² is at least the observed one. Testable when T ≥ 2 and some n_t ≥ 3.
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    R = n.shape[0]
    valid = n > 0
    testable = (valid.sum(1) >= 2) & (np.where(valid, n, 0).max(1) >= 3)
    p = np.full(R, np.nan)
    if not testable.any():
        return p
    idx = _resample(W, draws, rng)
    a, b = np.take_along_axis(A, idx, 1), np.take_along_axis(B, idx, 1)
    obs = np.where(valid, _bin_of(n, c), -1)
    obs_counts = np.stack([(obs == j).sum(1) for j in range(_NBINS)], 1).astype(np.float64)
    E = np.zeros((R, draws, _NBINS))
    Orep = np.zeros((R, draws, _NBINS))
    for nv in np.unique(n[valid]):
        m = ((n == nv) & valid).sum(1)
        if not m.any():
            continue
        cs = np.arange(nv + 1)
        lp = special.gammaln(nv + 1) - special.gammaln(cs + 1) - special.gammaln(nv - cs + 1)
        lp = lp + special.betaln(a[..., None] + cs, b[..., None] + nv - cs) - special.betaln(a, b)[..., None]
        pmf = np.exp(lp)
        pmf /= pmf.sum(-1, keepdims=True)
        bins = _bin_of(nv, cs)
        pb = np.stack([pmf[..., bins == j].sum(-1) for j in range(_NBINS)], -1)
        E += m[:, None, None] * pb
        Orep += rng.multinomial(np.broadcast_to(m[:, None], (R, draws)), pb / pb.sum(-1, keepdims=True))
    Ec = np.maximum(E, 1e-3)
    d_obs = ((obs_counts[:, None, :] - E) ** 2 / Ec).sum(-1)
    d_rep = ((Orep - E) ** 2 / Ec).sum(-1)
    return np.where(testable, (d_rep >= d_obs).mean(1), np.nan)


def check_threshold(n_tasks, check_alpha: float | str = "auto") -> np.ndarray:
    """The model check's threshold per group: ``check_alpha`` itself, or for "auto" 0.05 up to 50 tasks, T/1000
    between, 0.20 from 200 tasks. A misfitting Beta shape biases E[p^k] by a fixed amount while the interval narrows
    like 1/√T, so a misfit harmless at 20 tasks is not at 200 (measured in ARCHITECTURE.md: 20 % impossible tasks,
    T = 200, n = k = 4 covered 92.7 % at 0.05, 94.1 % at 0.20).

    >>> check_threshold([10, 50, 100, 200, 500]).tolist()
    [0.05, 0.05, 0.1, 0.2, 0.2]
    """
    T = np.asarray(n_tasks, dtype=np.float64)
    if isinstance(check_alpha, str):
        if check_alpha != "auto":
            raise TaukError(f"check_alpha must be a number or 'auto', got {check_alpha!r}")
        return np.clip(T / _TASKS_PER_UNIT, _ALPHA_LOW, _ALPHA_HIGH)
    return np.full(T.shape, float(check_alpha))


def check_threshold_text(check_alpha: float | str = "auto") -> str:
    """What :func:`check_threshold` does, for notes.

    >>> check_threshold_text()
    'α = 0.05 up to 50 tasks, T/1000 to 0.20 at 200'
    """
    if isinstance(check_alpha, str):
        check_threshold([], check_alpha)  # validates
        lo, hi = _ALPHA_LOW * _TASKS_PER_UNIT, _ALPHA_HIGH * _TASKS_PER_UNIT
        return f"α = {_ALPHA_LOW:.2f} up to {lo:g} tasks, T/{_TASKS_PER_UNIT} to {_ALPHA_HIGH:.2f} at {hi:g}"
    return f"α = {float(check_alpha):g}"


def _unbiased(n, c, k, metric):
    """mean_t Û_k over tasks with n_t ≥ k (pass@k: 1 − mean_t C(n−c,k)/C(n,k)) and the task count, per group."""
    m = (n >= k) & (n > 0)
    x = c if metric == "pass^k" else n - c
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where(m, special.comb(x, k) / np.where(m, special.comb(n, k), 1.0), 0.0)
        Tk = m.sum(1)
        est = np.where(Tk > 0, u.sum(1) / np.maximum(Tk, 1), np.nan)
    return (est if metric == "pass^k" else 1.0 - est), Tk


def _nonparametric(n, c, ks, metric, level, method, resamples, seed):
    """The existing task-bootstrap (or t) interval as tauk reports it, one group at a time: (R, K) each."""
    from ._intervals import task_interval

    R = n.shape[0]
    lo = np.full((R, len(ks)), np.nan)
    hi = np.full((R, len(ks)), np.nan)
    for r in range(R):
        m = n[r] > 0
        nn, cc = n[r][m], c[r][m]
        if nn.size < 2:
            continue
        x = cc if metric == "pass^k" else nn - cc
        U = np.full((nn.size, len(ks)), np.nan)
        for j, k in enumerate(ks):
            ok = nn >= k
            u = np.where(ok, special.comb(x, k) / special.comb(np.where(ok, nn, k), k), np.nan)
            U[:, j] = u if metric == "pass^k" else 1.0 - u
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            lo[r], hi[r] = task_interval(method, U, level, resamples, seed)
    return lo, hi


def _clopper_pearson(s, T, level):
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        lo = np.where(s > 0, special.betaincinv(s, T - s + 1, a), 0.0)
        hi = np.where(s < T, special.betaincinv(s + 1, T - s, 1.0 - a), 1.0)
    return lo, hi



def _check_inputs(n, c, ks, metric, estimand, level):
    n = np.asarray(n)
    c = np.asarray(c)
    if n.shape != c.shape:
        raise TaukError(f"n and c must have the same shape, got {n.shape} and {c.shape}")
    if n.ndim != 2:
        raise TaukError("n and c must be (groups × tasks) arrays here; use model_interval for one group")
    if not (np.issubdtype(n.dtype, np.integer) or np.all(np.mod(n, 1) == 0)) or not (
        np.issubdtype(c.dtype, np.integer) or np.all(np.mod(c, 1) == 0)
    ):
        raise TaukError("n and c must be whole numbers of trials / successes")
    n = n.astype(np.int64)
    c = c.astype(np.int64)
    if np.any(n < 0) or np.any(c < 0) or np.any(c > n):
        raise TaukError("need 0 ≤ c_t ≤ n_t for every task (n_t = 0 marks padding)")
    ks = np.atleast_1d(np.asarray(ks, dtype=np.int64)).ravel()
    if ks.size == 0 or ks.min() < 1:
        raise TaukError(f"ks must be positive integers, got {ks.tolist()}")
    if metric not in METRICS:
        raise TaukError(f"metric must be one of {METRICS}, got {metric!r}")
    if estimand not in ESTIMANDS:
        raise TaukError(f"estimand must be one of {ESTIMANDS}, got {estimand!r}")
    if not 0.0 < level < 1.0:
        raise TaukError(f"level must be in (0, 1), got {level!r}")
    return n, c, [int(k) for k in ks]

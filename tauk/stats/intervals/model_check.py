"""The model's posterior predictive check: does a Beta population of tasks fit these tasks' outcomes?

The tasks' outcomes c_t/n_t are binned (0; (0, ¼]; (¼, ½]; (½, ¾]; (¾, 1); 1), the discrepancy is
χ² = Σ_b (O_b − E_b)² / E_b with E_b the expected bin counts under (α, β), and the p-value is
P(χ²(y_rep; α, β) ≥ χ²(y; α, β)) over posterior draws and replicated data sets with the same n_t
(:func:`ppc_pvalue`). The check fails below a threshold that grows with the number of tasks
(:func:`check_threshold`): a misfitting shape biases E[p^k] by a fixed amount while the interval narrows like 1/√T.
Where it fails, :mod:`tauk.stats.intervals.model` joins its interval with a task-bootstrap one.
"""

from __future__ import annotations

import math

import numpy as np

from tauk._lazy import lazy
from tauk.errors import TaukError

from .posterior import resample

special = lazy("scipy.special")

__all__ = ["CHECK_ALPHA", "ppc_pvalue", "check_threshold", "check_threshold_text"]

CHECK_ALPHA = "auto"
"""The model check fails below this posterior predictive p-value: "auto" = 0.05 up to 50 tasks, T/1000 between,
0.20 from 200 tasks (:func:`check_threshold`)."""

# the check's "auto" threshold: T / _TASKS_PER_UNIT clipped to [_ALPHA_LOW, _ALPHA_HIGH]
_ALPHA_LOW, _ALPHA_HIGH, _TASKS_PER_UNIT = 0.05, 0.20, 1000

_NBINS = 6


def _bin_of(n, c):
    """Bin of a task's c/n: 0 = none; 1–4 = (0, ¼], (¼, ½], (½, ¾], (¾, 1); 5 = all."""
    n = np.asarray(n)
    c = np.asarray(c)
    q = np.clip(np.ceil(4 * c / np.maximum(n, 1)).astype(np.int64), 1, 4)
    return np.where(c == 0, 0, np.where(c == n, 5, q))


def _beta_binomial_logpmf(nv: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log P(c | nv, a, b) for c = 0..nv (last axis), by the rising factorials of an integer count:
    C(nv, c)·(a)_c·(b)_{nv−c} / (a + b)_{nv} — the same value as the betaln form, without lgamma per element."""
    j = np.arange(nv, dtype=np.float64)
    zero = np.zeros((*a.shape, 1))
    la = np.concatenate([zero, np.cumsum(np.log(a[..., None] + j), -1)], -1)
    lb = np.concatenate([zero, np.cumsum(np.log(b[..., None] + j), -1)], -1)
    lab = np.log((a + b)[..., None] + j).sum(-1, keepdims=True)
    logcomb = np.array([math.log(math.comb(nv, c)) for c in range(nv + 1)])
    return logcomb + la + lb[..., ::-1] - lab


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
    idx = resample(W, draws, rng)
    a, b = np.take_along_axis(A, idx, 1), np.take_along_axis(B, idx, 1)
    obs = np.where(valid, _bin_of(n, c), -1)
    obs_counts = np.stack([(obs == j).sum(1) for j in range(_NBINS)], 1).astype(np.float64)
    E = np.zeros((R, draws, _NBINS))
    Orep = np.zeros((R, draws, _NBINS))
    for nv in sorted(set(n[valid].tolist())):  # not np.unique: its plain form imports numpy.ma (startup)
        m = ((n == nv) & valid).sum(1)
        if not m.any():
            continue
        cs = np.arange(nv + 1)
        lp = _beta_binomial_logpmf(int(nv), a, b)
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
    like 1/√T, so a misfit harmless at 20 tasks is not at 200 (measured: docs/calibration/intervals.md).

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

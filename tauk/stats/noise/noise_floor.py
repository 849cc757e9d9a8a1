"""The noise floor of run-to-run consistency: the re-run variance of a run's pass^1 and the exact null distribution
of the difference between two runs of one setup, whose mid-p threshold is the smallest significant gap (the MDD).
See :mod:`tauk.stats.noise.analysis` for the definitions; the calibration of the MDD (rejection rate of
identical setups 5 % ± 1.5 wherever about five or more tasks are flaky): ``docs/calibration/consistency.md``."""

from __future__ import annotations

import numpy as np

from tauk.conventions import CI_LEVEL

__all__ = ["ALPHA", "MIN_FLAKY", "FEW_FLAKY", "MS", "rerun_variance", "difference_null", "mdd_threshold",
           "noise_floor"]

ALPHA = round(1.0 - CI_LEVEL, 10)
"""Default significance level of the noise floors and 1 − level of the ICC interval."""
MS = (1, 2, 4, 8)
"""Default trials per task of the m-trial runs whose SD and MDD are reported."""
MIN_FLAKY = 3
"""Fewest flaky tasks (0 < c < n) a noise floor is estimated from."""
FEW_FLAKY = 10
"""Below this many flaky tasks the result notes that the noise floor is itself uncertain."""

def rerun_variance(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Per-task v_t = c_t(n_t − c_t)/(n_t(n_t − 1)), unbiased for p_t(1 − p_t); NaN where n_t < 2. Works on arrays of
    any shape (e.g. (datasets × tasks) in a simulation).

    >>> rerun_variance(np.array([4, 4, 1]), np.array([2, 4, 1]))
    array([0.33333333, 0.        ,        nan])
    """
    n = np.asarray(n, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n >= 2, c * (n - c) / (n * (n - 1.0)), np.nan)


def difference_null(v: np.ndarray, m: int = 1) -> np.ndarray:
    """Distribution of ΔS = Σ_t Σ_{j≤m} (y_{t,j} − y'_{t,j}), the difference of the success counts of two m-trial runs
    of the same tasks, when task t's two outcomes differ in each direction with probability v_t (exact convolution
    through the characteristic function). ``v`` is (tasks,) or (datasets × tasks); returns probabilities of
    |ΔS| = 0, 1, …, mT on the last axis.

    >>> difference_null(np.array([0.25, 0.25])).round(4)      # two tasks with p = 1/2
    array([0.375, 0.5  , 0.125])
    """
    v_in = np.asarray(v, dtype=np.float64)
    v = np.atleast_2d(v_in)
    T = v.shape[-1]
    L = 2 * m * T + 1
    cos_w = np.cos(2.0 * np.pi * np.arange(L) / L)
    phi = np.ones((v.shape[0], L))
    for t in range(T):
        phi *= (1.0 - 2.0 * v[:, t : t + 1] * (1.0 - cos_w)) ** m
    p = np.clip(np.fft.ifft(phi, axis=-1).real, 0.0, None)  # p[j] = P(ΔS ≡ j mod L), symmetric
    out = np.empty((v.shape[0], m * T + 1))
    out[:, 0] = p[:, 0]
    out[:, 1:] = 2.0 * p[:, 1 : m * T + 1]
    out /= out.sum(axis=-1, keepdims=True)
    return out[0] if v_in.ndim == 1 else out


def mdd_threshold(dist: np.ndarray, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """The mid-p threshold on |ΔS| from :func:`difference_null`: the smallest s ≥ 1 with
    P(|ΔS| > s) + ½ P(|ΔS| = s) ≤ α, and its size P(|ΔS| ≥ s). Vectorised over rows.

    >>> s, size = mdd_threshold(difference_null(np.full(20, 0.25)), 0.05)
    >>> int(s), round(float(size), 4)
    (7, 0.0385)
    """
    d = np.atleast_2d(dist)
    ge = np.cumsum(d[:, ::-1], axis=1)[:, ::-1]  # ge[:, s] = P(|ΔS| ≥ s)
    gt = np.concatenate([ge[:, 1:], np.zeros((d.shape[0], 1))], axis=1)
    mid = gt + 0.5 * d
    ok = mid <= alpha + 1e-12
    ok[:, 0] = False
    s = np.where(ok.any(axis=1), np.argmax(ok, axis=1), d.shape[1])
    size = np.where(s < d.shape[1], ge[np.arange(d.shape[0]), np.minimum(s, d.shape[1] - 1)], 0.0)
    if np.ndim(dist) == 1:
        return s[0], size[0]
    return s, size


def noise_floor(n: np.ndarray, c: np.ndarray, m: int = 1, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """The noise floor of two m-trial runs on the lattice of |ΔS|: (threshold s, its size), from per-task trial
    counts ``n`` and successes ``c`` — (tasks,) or (datasets × tasks). The mdd is s/(mT). Tasks with one trial get
    the mean v_t of the others. Where fewer than :data:`MIN_FLAKY` tasks varied, s is −1 and the size NaN (no floor:
    a null built on one or two tasks claims gaps are impossible that are not).

    >>> s, size = noise_floor(np.full(50, 4), np.r_[np.zeros(20), np.full(20, 4), np.full(10, 2)].astype(int))
    >>> int(s), round(float(size), 4)
    (6, 0.0302)
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    one = n.ndim == 1
    n2, c2 = np.atleast_2d(n), np.atleast_2d(c)
    v = rerun_variance(n2, c2)
    with np.errstate(invalid="ignore"):
        vbar = np.nanmean(np.where(n2 >= 2, v, np.nan), axis=1, keepdims=True) if np.any(n2 < 2) else None
    if vbar is not None:
        v = np.where(n2 >= 2, v, np.nan_to_num(vbar, nan=0.0))
    flaky = ((n2 >= 2) & (c2 > 0) & (c2 < n2)).sum(axis=1)
    s, size = mdd_threshold(difference_null(v, m), alpha)
    s, size = np.atleast_1d(s), np.atleast_1d(size).astype(np.float64)
    none = (flaky < MIN_FLAKY) | (s > m * n2.shape[1])
    s = np.where(none, -1, s)
    size = np.where(none, np.nan, size)
    return (s[0], size[0]) if one else (s, size)


"""Intervals that need no model of the tasks: the task bootstrap / t interval as tauk reports it, clipped to
[0, 1], and the exact Clopper–Pearson interval where the data are all at one end.

* :func:`task_interval` — the interval of ``options.method`` (:mod:`tauk.stats.intervals.bootstrap`) of each column
  of per-task values, clipped to [0, 1]; where every task (of at least 2) is at 0, or every task at 1, a resampling
  interval would be the point itself, so there it is Clopper–Pearson over the tasks (:func:`unanimous_interval`);
* :func:`task_intervals_by_group` — the same for many groups at once (the model's fallback where its check fails);
* :func:`clopper_pearson` — a binomial proportion's exact interval (the model's interval where every task has one
  trial).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tauk._lazy import lazy

from ..options import IntervalOptions
from .bootstrap import interval

special = lazy("scipy.special")

__all__ = ["unanimous_interval", "unanimous_columns", "task_interval", "task_intervals_by_group", "clopper_pearson"]


def unanimous_interval(U: np.ndarray, lo: np.ndarray, hi: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Where every task (of at least 2) is at 0, or every task at 1, a resampling or t interval is the point
    itself — the data cannot say the population value is exactly 0 or 1. There the interval is Clopper–Pearson
    for T tasks (every one a success, or every one a failure): [(α/2)^(1/T), 1] or [0, 1 − (α/2)^(1/T)]. It holds
    for any [0, 1]-valued per-task estimate X with mean μ: P(X = 1) ≤ μ, so T ones have probability ≤ μ^T (and
    P(X = 0) ≤ 1 − μ for T zeros).

    >>> lo, hi = unanimous_interval(np.ones((10, 1)), np.ones(1), np.ones(1), 0.95)
    >>> round(float(lo[0]), 4), float(hi[0])
    (0.6915, 1.0)
    """
    lo, hi = lo.copy(), hi.copy()
    tail = (1.0 - ci) / 2.0
    for j in np.flatnonzero(unanimous_columns(U)):
        u = U[:, j][np.isfinite(U[:, j])]
        bound = tail ** (1.0 / u.size)
        if u[0] == 1.0:
            lo[j], hi[j] = bound, 1.0
        else:
            lo[j], hi[j] = 0.0, 1.0 - bound
    return lo, hi


def task_interval(U: np.ndarray, options: IntervalOptions, progress: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The task-resampling (or t) interval (``options.method``) of each column of per-task values ``U`` as tauk
    reports it: clipped to [0, 1], Clopper–Pearson over tasks where every task is at 0 or every task at 1
    (:func:`unanimous_interval`)."""
    lo, hi = interval(U, options, progress)
    return unanimous_interval(U, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0), options.ci)


def unanimous_columns(U: np.ndarray) -> np.ndarray:
    """Per column: at least 2 defined tasks, all at 1 or all at 0."""
    out = np.zeros(U.shape[1], dtype=bool)
    for j in range(U.shape[1]):
        u = U[:, j][np.isfinite(U[:, j])]
        out[j] = u.size >= 2 and (bool(np.all(u == 1.0)) or bool(np.all(u == 0.0)))
    return out


def task_intervals_by_group(n, c, ks, metric: str, options: IntervalOptions) -> tuple[np.ndarray, np.ndarray]:
    """:func:`task_interval` of each group (rows of padded (groups × tasks) arrays ``n``, ``c``; n = 0 pads) at each
    k: (groups × K) lower and upper ends, NaN for a group of fewer than 2 tasks."""
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
            lo[r], hi[r] = task_interval(U, options)
    return lo, hi


def clopper_pearson(s, T, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact (Clopper–Pearson) interval of a binomial proportion: ``s`` successes of ``T``, at level ``ci``.

    >>> lo, hi = clopper_pearson(np.array([3.0]), np.array([10.0]), 0.95)
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (0.0667, 0.6525)
    """
    a = (1.0 - ci) / 2.0
    with np.errstate(invalid="ignore"):
        lo = np.where(s > 0, special.betaincinv(s, T - s + 1, a), 0.0)
        hi = np.where(s < T, special.betaincinv(s + 1, T - s, 1.0 - a), 1.0)
    return lo, hi

"""The per-group estimation shared by :func:`pass_hat_k`, :func:`pass_at_k` and :func:`summarize`: one row per k
with the estimate, both standard errors and the intervals, plus the long frame, records and notes built from them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from scipy import special

from tauk.conventions import CI_LEVEL, CI_METHOD, RESAMPLES, SEED
from tauk.errors import StatsWarning

from ._bootstrap import column_stats, interval
from ._core import GroupTasks, u_hat

__all__ = [
    "ESTIMATE_FIELDS",
    "LONG_SCHEMA",
    "ci_note",
    "estimate_group",
    "long_frame",
    "metric_key",
    "records_by_k",
    "resolve_ks",
    "unanimous_interval",
    "warn_excluded",
]

ESTIMATE_FIELDS = ("estimate", "ci_low", "ci_high", "se_tasks", "se_rerun")


def _u_matrix(g: GroupTasks, ks: Sequence[int], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(T × K) per-task estimates and (T × K) unbiased per-task variances Û_k² − Û_2k (NaN when n_t < 2k)."""
    T = g.T
    U = np.empty((T, len(ks)))
    V = np.empty((T, len(ks)))
    cc = g.c if metric == "pass^k" else g.n - g.c
    for j, k in enumerate(ks):
        uk = u_hat(g.n, cc, k)
        u2k = u_hat(g.n, cc, 2 * k)
        U[:, j] = uk if metric == "pass^k" else 1.0 - uk
        V[:, j] = uk**2 - u2k
    return U, V


def estimate_group(
    g: GroupTasks,
    ks: Sequence[int],
    metric: str = "pass^k",
    ci: float | None = None,
    method: str = CI_METHOD,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    progress: bool | None = None,
) -> list[dict[str, Any]]:
    """One row per k: estimate, SEs, intervals, and how many tasks entered / were left out (n_t < k)."""
    if not ks or g.T == 0:
        return [_empty_row(k, g) for k in ks]
    U, V = _u_matrix(g, ks, metric)
    est, se, T = column_stats(U)
    rows = []
    lo = hi = np.full(len(ks), np.nan)
    if ci is not None:
        lo, hi = interval(method, U, ci, resamples, seed, progress)
        lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
        lo, hi = unanimous_interval(U, lo, hi, ci)
    z = special.ndtri(0.5 + (ci if ci is not None else CI_LEVEL) / 2.0)
    for j, k in enumerate(ks):
        defined = np.isfinite(U[:, j])
        n_used = int(defined.sum())
        ok_rerun = n_used > 0 and bool(np.all(g.n[defined] >= 2 * k))
        se_rerun = np.sqrt(max(float(np.sum(V[defined, j])), 0.0)) / n_used if ok_rerun else None
        e = float(est[j]) if n_used else None
        rows.append(
            {
                "k": int(k),
                "n_tasks": n_used,
                "n_tasks_excluded": int(g.T - n_used),
                "estimate": e,
                "se_tasks": _f(se[j]),
                "se_rerun": se_rerun,
                "ci_low": _f(lo[j]),
                "ci_high": _f(hi[j]),
                "rerun_ci_low": None if se_rerun is None or ci is None else e - z * se_rerun,
                "rerun_ci_high": None if se_rerun is None or ci is None else e + z * se_rerun,
            }
        )
    return rows


def unanimous_interval(U: np.ndarray, lo: np.ndarray, hi: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
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
    edge = (1.0 - level) / 2.0
    for j in range(U.shape[1]):
        u = U[:, j][np.isfinite(U[:, j])]
        if u.size < 2:
            continue
        bound = edge ** (1.0 / u.size)
        if np.all(u == 1.0):
            lo[j], hi[j] = bound, 1.0
        elif np.all(u == 0.0):
            lo[j], hi[j] = 0.0, 1.0 - bound
    return lo, hi


def _f(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if np.isnan(x) else x


def _empty_row(k: int, g: GroupTasks) -> dict[str, Any]:
    return {
        "k": int(k),
        "n_tasks": 0,
        "n_tasks_excluded": int(g.T),
        **{f: None for f in ("estimate", "se_tasks", "se_rerun", "ci_low", "ci_high", "rerun_ci_low", "rerun_ci_high")},
    }


LONG_SCHEMA = {
    "k": pl.Int64,
    "n_tasks": pl.Int64,
    "n_tasks_excluded": pl.Int64,
    "estimate": pl.Float64,
    "se_tasks": pl.Float64,
    "se_rerun": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "rerun_ci_low": pl.Float64,
    "rerun_ci_high": pl.Float64,
}


def long_frame(by: tuple[str, ...], schema: pl.Schema, keyed_rows: list[tuple[tuple, list[dict]]]) -> pl.DataFrame:
    data: dict[str, list] = {c: [] for c in by}
    data.update({c: [] for c in LONG_SCHEMA})
    for key, rows in keyed_rows:
        for r in rows:
            for i, c in enumerate(by):
                data[c].append(key[i])
            for c in LONG_SCHEMA:
                data[c].append(r[c])
    sch = {c: schema[c] for c in by}
    sch.update(LONG_SCHEMA)
    return pl.DataFrame(data, schema=sch)


def metric_key(metric: str) -> str:
    return "pass_hat_k" if metric == "pass^k" else "pass_at_k"


def ci_note(ci, method, resamples, seed) -> str:
    if ci is None:
        return "no interval requested (ci=None); se_tasks = sd_t(Û_k)/√T, se_rerun for the same tasks re-run"
    boot = "" if method == "t" else f", {resamples} task resamples, seed {seed}"
    return f"{ci:.0%} {method} interval over tasks{boot}"


def records_by_k(frame: pl.DataFrame, by: tuple[str, ...], name: str) -> list[dict[str, Any]]:
    out: dict[tuple, dict[str, Any]] = {}
    for r in frame.iter_rows(named=True):
        key = tuple(r[c] for c in by)
        rec = out.setdefault(key, {**{c: r[c] for c in by}, name: {}})
        rec[name][str(r["k"])] = {f: r[f] for f in ESTIMATE_FIELDS}
    return list(out.values())


def resolve_ks(g: GroupTasks, ks: tuple[int, ...] | None) -> tuple[int, ...]:
    return g.default_ks() if ks is None else ks


def warn_excluded(by: tuple[str, ...], keyed_rows: list[tuple[tuple, list[dict]]], stacklevel: int = 3) -> None:
    """A :class:`StatsWarning` naming the (group, k) cells whose k exceeds some tasks' trials (an explicit k:
    the default ks never exceed them), so a partial or null figure is not taken for the whole benchmark."""
    cells = [
        (key, r["k"], r["n_tasks_excluded"], r["n_tasks"])
        for key, rows in keyed_rows
        for r in rows
        if r["n_tasks_excluded"]
    ]
    if not cells:
        return
    shown = "; ".join(
        (f"{', '.join(map(str, key))}: " if by else "") + f"k={k} leaves out {x} of {x + n} task(s)"
        for key, k, x, n in cells[:5]
    )
    more = f" (and {len(cells) - 5} more)" if len(cells) > 5 else ""
    warnings.warn(
        f"k above the trials of some tasks — {shown}{more}; those tasks are left out of that k (n_tasks_excluded) "
        "and a k no task reaches has a null estimate",
        StatsWarning,
        stacklevel=stacklevel,
    )



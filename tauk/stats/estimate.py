"""One group's pass^k / pass@k at each k — the estimate, both standard errors and the two intervals — and the long
frame, records and warnings built from them; shared by :func:`~tauk.stats.pass_hat_k`,
:func:`~tauk.stats.pass_at_k` and :func:`~tauk.stats.summarize`.

Per group, over tasks t = 1…T with n_t trials and c_t successes:

* pass^k = mean_t Û_k, Û_k = C(c_t, k) / C(n_t, k) (unbiased for E[p^k]); pass@k = mean_t 1 − C(n_t − c_t, k) / C(n_t, k);
* ``se_tasks`` = sd_t(Û_k)/√T (a new draw of tasks); ``se_rerun`` = √(Σ_t (Û_k² − Û_2k)) / T (the same tasks
  re-run; Û_k² − Û_2k is unbiased for the per-task variance of Û_k) when every n_t ≥ 2k;
* the intervals: :mod:`tauk.stats.intervals`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from tauk.errors import StatsWarning

from .intervals.bootstrap import column_stats
from .intervals.group import INTERVAL_FIELDS, MODEL, N_NO_K, group_intervals, group_models
from .options import IntervalOptions, finite_or_none
from .tasks import GroupTasks, u_hat

__all__ = [
    "ESTIMATE_FIELDS",
    "LONG_SCHEMA",
    "UNEVALUATED",
    "estimate_group",
    "group_models_for",
    "long_frame",
    "metric_key",
    "records_by_k",
    "resolve_ks",
    "warn_excluded",
]

NO_INTERVAL = IntervalOptions(ci=None)
"""The options of a figure without an interval."""

ESTIMATE_FIELDS = (
    "estimate", "ci_low", "ci_high", "se_tasks", "se_rerun", "rerun_ci_low", "rerun_ci_high", "interval_method",
    "rerun_interval_method", "model_check_p", "model_check_passed",
)  # fmt: skip
"""The fields of one (group, k) in ``records()``: the estimate, both SEs, both intervals and what made them."""


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
    options: IntervalOptions = NO_INTERVAL,
    progress: bool | None = None,
    model: dict | None = None,
) -> list[dict[str, Any]]:
    """One row per k: estimate, SEs, intervals (``options``; none when ``options.ci`` is None) and what made them,
    and how many tasks entered / were left out (n_t < k). See :mod:`tauk.stats.intervals` for the intervals.
    ``model``: the group's model intervals at ``ks`` if the caller fitted them already (see
    :func:`~tauk.stats.intervals.group.group_intervals`)."""
    ci = options.ci
    if not ks or g.T == 0:
        return [_empty_row(k, g, ci) for k in ks]
    if not g.evaluated:  # no reward anywhere: not an agent that failed everything, an unevaluated run
        return [_unevaluated_row(k, g, ci) for k in ks]
    U, V = _u_matrix(g, ks, metric)
    est, se, T = column_stats(U)
    se_rerun: list[float | None] = []
    n_used: list[int] = []
    for j, k in enumerate(ks):
        defined = np.isfinite(U[:, j])
        n_used.append(int(defined.sum()))
        ok_rerun = n_used[j] > 0 and bool(np.all(g.n[defined] >= 2 * k))
        se_rerun.append(np.sqrt(max(float(np.sum(V[defined, j])), 0.0)) / n_used[j] if ok_rerun else None)
    if ci is None:
        ivs = [dict.fromkeys(INTERVAL_FIELDS) for _ in ks]
    else:
        ivs = group_intervals(g, ks, U, est, se_rerun, metric, options, progress, model)
    rows = []
    for j, k in enumerate(ks):
        rows.append(
            {
                "k": int(k),
                "n_tasks": n_used[j],
                "n_tasks_excluded": int(g.T - n_used[j]),
                "estimate": float(est[j]) if n_used[j] else None,
                "se_tasks": finite_or_none(se[j]),
                "se_rerun": se_rerun[j],
                **ivs[j],
            }
        )
    return rows


def group_models_for(items: Sequence[tuple[GroupTasks, Sequence[int]]], metric: str,
                     options: IntervalOptions) -> list[dict | None]:  # fmt: skip
    """The model intervals :func:`estimate_group` would fit for each (group, ks), fitted together
    (:func:`~tauk.stats.intervals.group.group_models`: the same numbers as one call per group, to rounding), to be
    passed as its ``model=``; None where it fits none (another method, no ci, no task, no reward, no k)."""
    out: list[dict | None] = [None] * len(items)
    if options.ci is None or options.method != MODEL:
        return out
    use = [i for i, (g, ks) in enumerate(items) if ks and g.T > 0 and g.evaluated]
    for i, m in zip(use, group_models([items[i] for i in use], metric, options)):
        out[i] = m
    return out


def _empty_row(k: int, g: GroupTasks, ci: float | None = None) -> dict[str, Any]:
    row = {"k": int(k), "n_tasks": 0, "n_tasks_excluded": int(g.T), "estimate": None, "se_tasks": None,
           "se_rerun": None, **dict.fromkeys(INTERVAL_FIELDS)}  # fmt: skip
    if ci is not None:
        row["interval_method"] = row["rerun_interval_method"] = N_NO_K
    return row


UNEVALUATED = "none: no simulation of this group was evaluated (no reward information)"


def _unevaluated_row(k: int, g: GroupTasks, ci: float | None = None) -> dict[str, Any]:
    row = {"k": int(k), "n_tasks": 0, "n_tasks_excluded": int(g.T), "estimate": None, "se_tasks": None,
           "se_rerun": None, **dict.fromkeys(INTERVAL_FIELDS)}  # fmt: skip
    row["interval_method"] = row["rerun_interval_method"] = UNEVALUATED
    return row


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
    "interval_method": pl.String,
    "rerun_interval_method": pl.String,
    "model_check_p": pl.Float64,
    "model_check_passed": pl.Boolean,
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
    unevaluated = [key for key, rows in keyed_rows if any(r["interval_method"] == UNEVALUATED for r in rows)]
    if unevaluated:  # its tasks are left out for want of a reward, not of trials
        names = "; ".join(", ".join(map(str, key)) or "the group" for key in unevaluated[:5])
        more = f" (and {len(unevaluated) - 5} more)" if len(unevaluated) > 5 else ""
        warnings.warn(f"no simulation evaluated (no reward information) in {names}{more}: its estimate is null, not 0",
                      StatsWarning, stacklevel=stacklevel)  # fmt: skip
    cells = [
        (key, r["k"], r["n_tasks_excluded"], r["n_tasks"])
        for key, rows in keyed_rows
        for r in rows
        if r["n_tasks_excluded"] and r["interval_method"] != UNEVALUATED
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

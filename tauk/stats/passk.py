"""pass^k and pass@k with honest, task-level uncertainty (SPEC §3–4).

Estimators (per group, over tasks t = 1…T with n_t trials and c_t successes):

* pass^k = mean_t Û_k,   Û_k = C(c_t, k) / C(n_t, k)        (unbiased for E[p^k])
* pass@k = mean_t 1 − C(n_t − c_t, k) / C(n_t, k)           (unbiased for E[1 − (1−p)^k])

Uncertainty, for two different questions:

* *population* (new tasks drawn from the same pool): ``se_tasks = sd_t(Û_k)/√T`` and a task-bootstrap interval
  (BCa by default, or percentile, bootstrap-t) or a t interval with T−1 df;
* *fixed tasks* (re-running the same T tasks): ``se_rerun = √(Σ_t (Û_k² − Û_2k)) / T`` — Û_k² − Û_2k is unbiased
  for the per-task variance of Û_k — only when every n_t ≥ 2k, with a normal interval.

Trials are never resampled within tasks: that centres pass^k on (c/n)^k (biased upward for k > 1) and a two-stage
bootstrap counts trial noise twice (SPEC §4). One matrix of resampled task indices per group serves every k.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import special

from tauk.errors import StatsWarning, TaukError
from tauk.table import SummaryTable

from ._bootstrap import CI_METHODS, bootstrap_means, bootstrap_t_interval, column_stats, interval
from ._core import GroupTasks, normalize_by, normalize_k, prepare_trials, task_groups, u_hat

__all__ = ["PassKResult", "pass_hat_k", "pass_at_k", "per_task", "estimate_group", "as_trials", "unanimous_interval"]

ESTIMATE_FIELDS = ("estimate", "ci_low", "ci_high", "se_tasks", "se_rerun")


def as_trials(data: Any) -> pl.DataFrame:
    """Accept a trials frame or anything with a ``.trials`` frame (e.g. :class:`tauk.Results`)."""
    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    trials = getattr(data, "trials", None)
    if isinstance(trials, pl.DataFrame):
        return trials
    raise TaukError(f"expected a trials frame or Results, got {type(data).__name__}")


def _check_ci(ci: float | None, method: str, resamples: int) -> None:
    if ci is not None and not (0.0 < ci < 1.0):
        raise TaukError(f"ci must be a level in (0, 1), e.g. 0.95; got {ci!r}")
    if method.lower() not in CI_METHODS:
        raise TaukError(f"method must be one of {CI_METHODS}, got {method!r}")
    if resamples < 1:
        raise TaukError("resamples must be ≥ 1")


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
    method: str = "bca",
    resamples: int = 9999,
    seed: int | None = 0,
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
    z = special.ndtri(0.5 + (ci if ci is not None else 0.95) / 2.0)
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


@dataclass(frozen=True)
class PassKResult:
    """pass^k or pass@k per group and k. ``frame``: group keys, k, n_tasks, n_tasks_excluded (n_t < k), estimate,
    se_tasks, se_rerun, ci_low, ci_high (task bootstrap / t), rerun_ci_low, rerun_ci_high (fixed-task normal)."""

    metric: str
    by: tuple[str, ...]
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    frame: pl.DataFrame
    n_tasks_no_kept: pl.DataFrame  # group keys + count of tasks whose every trial was dropped

    def to_frame(self) -> pl.DataFrame:
        return self.frame

    def estimate(self, k: int = 1, **group: Any) -> float | None:
        """The point estimate for one k (and one group, given as keyword filters on the group keys)."""
        df = self.frame.filter(pl.col("k") == k)
        for col, val in group.items():
            df = df.filter(pl.col(col) == val)
        if df.height != 1:
            raise TaukError(f"{df.height} rows match k={k}, {group}; give every group key")
        return df["estimate"][0]

    def records(self) -> list[dict[str, Any]]:
        """One dict per group: group keys and ``{metric: {"k": {estimate, ci_low, ci_high, se_tasks, se_rerun}}}``."""
        return _records(self.frame, self.by, _metric_key(self.metric))

    def summary(self) -> SummaryTable:
        cols = [*self.by, "k", "tasks", self.metric, "se_tasks", "se_rerun", "ci_low", "ci_high"]
        rows = [
            [*(r[c] for c in self.by), r["k"], r["n_tasks"], r["estimate"], r["se_tasks"], r["se_rerun"], r["ci_low"], r["ci_high"]]
            for r in self.frame.iter_rows(named=True)
        ]
        notes = [_ci_note(self.ci, self.method, self.resamples, self.seed), f"infrastructure errors: {self.infra}"]
        excl = self.frame.filter(pl.col("n_tasks_excluded") > 0)
        if excl.height:
            notes.append(f"{excl.height} (group, k) cells left out tasks with fewer than k trials (see n_tasks_excluded)")
        return SummaryTable.build(self.metric, cols, rows, notes)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _metric_key(metric: str) -> str:
    return "pass_hat_k" if metric == "pass^k" else "pass_at_k"


def _ci_note(ci, method, resamples, seed) -> str:
    if ci is None:
        return "no interval requested (ci=None); se_tasks = sd_t(Û_k)/√T, se_rerun for the same tasks re-run"
    boot = "" if method == "t" else f", {resamples} task resamples, seed {seed}"
    return f"{ci:.0%} {method} interval over tasks{boot}"


def _records(frame: pl.DataFrame, by: tuple[str, ...], name: str) -> list[dict[str, Any]]:
    out: dict[tuple, dict[str, Any]] = {}
    for r in frame.iter_rows(named=True):
        key = tuple(r[c] for c in by)
        rec = out.setdefault(key, {**{c: r[c] for c in by}, name: {}})
        rec[name][str(r["k"])] = {f: r[f] for f in ESTIMATE_FIELDS}
    return list(out.values())


def _resolve_ks(g: GroupTasks, ks: tuple[int, ...] | None) -> tuple[int, ...]:
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


def _run(
    metric: str,
    trials: Any,
    by: str | Sequence[str] | None,
    infra: str,
    k: int | Iterable[int] | None,
    ci: float | None,
    method: str,
    resamples: int,
    seed: int | None,
    progress: bool | None,
) -> PassKResult:
    by_t = normalize_by(by)
    _check_ci(ci, method, resamples)
    ks = normalize_k(k)
    df = prepare_trials(as_trials(trials), infra)
    groups = task_groups(df, by_t)
    keyed = [(g.key, estimate_group(g, _resolve_ks(g, ks), metric, ci, method, resamples, seed, progress)) for g in groups]
    if ks is not None:
        warn_excluded(by_t, keyed, stacklevel=4)
    frame = long_frame(by_t, df.schema, keyed)
    dropped = pl.DataFrame(
        {**{c: [g.key[i] for g in groups] for i, c in enumerate(by_t)}, "n_tasks_no_kept": [g.n_tasks_no_kept for g in groups]},
        schema={**{c: df.schema[c] for c in by_t}, "n_tasks_no_kept": pl.Int64},
    )
    return PassKResult(metric, by_t, infra, ci, method.lower(), resamples, seed, frame, dropped)


def pass_hat_k(
    trials: Any,
    by: str | Sequence[str] | None = ("run_id",),
    infra: str = "drop",
    k: int | Iterable[int] | None = None,
    ci: float | None = 0.95,
    method: str = "bca",
    resamples: int = 9999,
    seed: int | None = 0,
    progress: bool | None = None,
) -> PassKResult:
    """pass^k per group: mean over tasks of C(c_t,k)/C(n_t,k), with se_tasks, se_rerun and a task-bootstrap interval.

    ``k`` defaults to 1 … min(num_trials, min_t n_t) per group; any k may be asked for, tasks with n_t < k are left
    out of that k and counted in ``n_tasks_excluded``. ``method``: "bca" (default), "percentile", "bootstrap-t" or
    "t" (T−1 df); where every task is at 0 or every task at 1 the interval is Clopper–Pearson over the tasks
    (:func:`unanimous_interval`) instead of the point. Resampling is over tasks only (never trials within tasks:
    biased, see module docs). The same seed gives the same numbers; every k of a group shares one resample matrix.
    """
    return _run("pass^k", trials, by, infra, k, ci, method, resamples, seed, progress)


def pass_at_k(
    trials: Any,
    by: str | Sequence[str] | None = ("run_id",),
    infra: str = "drop",
    k: int | Iterable[int] | None = None,
    ci: float | None = 0.95,
    method: str = "bca",
    resamples: int = 9999,
    seed: int | None = 0,
    progress: bool | None = None,
) -> PassKResult:
    """pass@k per group: mean over tasks of 1 − C(n_t−c_t,k)/C(n_t,k); same options and uncertainty as
    :func:`pass_hat_k` (the fixed-task SE uses the failure counts: Var = Û_k(f)² − Û_2k(f))."""
    return _run("pass@k", trials, by, infra, k, ci, method, resamples, seed, progress)


def per_task(
    trials: Any,
    by: str | Sequence[str] | None = ("run_id",),
    infra: str = "drop",
    k: int | Iterable[int] | None = None,
) -> pl.DataFrame:
    """The per-task table: group keys, domain, task_id, n (denominator), c (successes), n_trials (kept trials
    present; differs from n only for τ-bench runs with missing trials), U_1 … U_K (Û_k; null where n < k).

    Without ``k``, K is the largest default k of any group.
    """
    by_t = normalize_by(by)
    ks = normalize_k(k)
    df = prepare_trials(as_trials(trials), infra)
    groups = task_groups(df, by_t)
    if ks is None:
        K = max((len(g.default_ks()) for g in groups), default=0)
        ks = tuple(range(1, K + 1))
    parts = []
    task_cols = [c for c in ("domain", "task_id") if c not in by_t]
    for g in groups:
        data: dict[str, Any] = {c: [g.key[i]] * g.T for i, c in enumerate(by_t)}
        if "domain" in task_cols:
            data["domain"] = list(g.domain)
        data["task_id"] = list(g.task_id)
        data["n"] = g.n
        data["c"] = g.c
        data["n_trials"] = g.n_trials
        for kk in ks:
            u = u_hat(g.n, g.c, kk)
            data[f"U_{kk}"] = [None if np.isnan(x) else float(x) for x in u]
        schema = {c: df.schema[c] for c in by_t}
        if "domain" in task_cols:
            schema["domain"] = pl.String
        schema.update({"task_id": pl.String, "n": pl.Int64, "c": pl.Int64, "n_trials": pl.Int64})
        schema.update({f"U_{kk}": pl.Float64 for kk in ks})
        parts.append(pl.DataFrame(data, schema=schema))
    if not parts:
        schema = {c: df.schema[c] for c in by_t}
        if "domain" in task_cols:
            schema["domain"] = pl.String
        schema.update({"task_id": pl.String, "n": pl.Int64, "c": pl.Int64, "n_trials": pl.Int64})
        schema.update({f"U_{kk}": pl.Float64 for kk in ks})
        return pl.DataFrame(schema=schema)
    return pl.concat(parts)


# re-exported for the benchmark and tests that need the raw machinery
__all__ += ["bootstrap_means", "bootstrap_t_interval"]

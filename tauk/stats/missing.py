"""Dropped and missing trials: what share of the planned trials a group kept (its *trial coverage*), and how far
the trials it lacks could move pass^k — the bounds with every dropped trial counted as a failure and as a success,
each with its interval.

A trial is *planned* when its run planned it: per (run, task), the most of the run's ``num_trials``, the run's
distinct trial indices (τ-bench's N) and the task's rows. It is *dropped* when it was planned and not kept: an
infrastructure error under ``infra="drop"``, or a trial index the run lacks (a crash, a partial upload). Trial
coverage = kept / planned over the group. A task absent from a run altogether cannot be seen here (nothing says it
was planned); a task every trial of which was dropped counts (planned, none kept).

Dropping is not neutral when failures are dropped more often than successes (some failures surface as
infrastructure errors): pass^k is then overstated. Whatever the missingness, the pass^k the full planned trials
would have given lies between two figures computed on the planned trials — dropped trials all failed
(``estimate_dropped_fail``) and all succeeded (``estimate_dropped_success``) — because Û_k = C(c, k)/C(n, k) grows
with c. Each bound gets its interval by the group's own method (:mod:`tauk.stats.intervals`), so
[``ci_low_dropped_fail``, ``ci_high_dropped_success``] covers the population value whatever the missingness as often
as the full-data interval would (Manski-type worst-case bounds). Measured under informative missingness in
``docs/calibration/intervals.md`` (``benchmarks/missing_calibration.py``).

The bounds' intervals are population intervals (a new draw of tasks: the ``ci`` of the row, by the row's method;
with the default model both bounds come from one call); the re-run interval has no bound here.

A group whose trial coverage is below ``min_coverage`` (default :data:`tauk.conventions.MIN_COVERAGE`) is flagged
(``low_coverage``) and not ranked (``rankable`` false).

Examples
--------
>>> import numpy as np
>>> b = bound_rows(np.array([4, 4, 4]), np.array([4, 2, 4]), np.array([3, 1, 0]), ks=[1])
>>> round(b[0]["estimate_dropped_fail"], 4), round(b[0]["estimate_dropped_success"], 4)
(0.3333, 0.5)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from tauk.conventions import MIN_COVERAGE, TASK_KEY
from tauk.errors import StatsWarning, TaukError

from .estimate import NO_INTERVAL, estimate_group
from .intervals.group import MODEL, group_model
from .intervals.model import FALLBACK, fit_posterior, model_interval_batch
from .intervals.model_check import CHECK_ALPHA
from .options import IntervalOptions, finite_or_none
from .tasks import GroupTasks, is_task_counts, reward_flags

__all__ = [
    "BOUND_FIELDS",
    "COVERAGE_FIELDS",
    "N_ALL_DROPPED",
    "PlannedTasks",
    "add_missing",
    "bound_rows",
    "bound_counts",
    "check_min_coverage",
    "coverage_notes",
    "model_with_bounds",
    "stacks_bounds",
    "planned_tasks",
]

BOUND_FIELDS = (
    "estimate_dropped_fail", "ci_low_dropped_fail", "ci_high_dropped_fail",
    "estimate_dropped_success", "ci_low_dropped_success", "ci_high_dropped_success",
)  # fmt: skip
"""The (group, k) fields of the bounds: pass^k and its interval with every dropped trial a failure / a success."""

COVERAGE_FIELDS = ("n_planned", "n_dropped", "trial_coverage", "low_coverage", "rankable")
"""The group fields: planned trials, dropped (planned − kept), kept / planned, below ``min_coverage``, rankable."""

N_ALL_DROPPED = "none: every trial of the group was dropped (see estimate_dropped_fail / _success)"


def check_min_coverage(x: Any) -> float:
    """``min_coverage`` checked to be a share in [0, 1]."""
    if isinstance(x, bool) or not isinstance(x, int | float) or not 0.0 <= float(x) <= 1.0:
        raise TaukError(f"min_coverage must be a share of the planned trials in [0, 1], e.g. {MIN_COVERAGE}; "
                        f"got {x!r}")  # fmt: skip
    return float(x)


class PlannedTasks(NamedTuple):
    """One group's planned tasks: per task the planned trials, the kept trials and their successes."""

    key: tuple
    task_id: np.ndarray
    planned: np.ndarray  # int64
    kept: np.ndarray  # int64
    c: np.ndarray  # int64: successes among the kept trials
    num_trials: int | None
    evaluated: bool  # False: kept trials but none with a reward (an unevaluated run: no bound either)

    @property
    def n_planned(self) -> int:
        return int(self.planned.sum())

    @property
    def n_dropped(self) -> int:
        return int((self.planned - self.kept).sum())

    def default_ks(self) -> tuple[int, ...]:
        """k = 1 … min(num_trials, min_t planned_t): the ks of a group that kept nothing."""
        if self.planned.size == 0:
            return ()
        kmax = int(self.planned.min())
        if self.num_trials is not None:
            kmax = min(kmax, int(self.num_trials))
        return tuple(range(1, kmax + 1))


def planned_tasks(prepared: pl.DataFrame, by: tuple[str, ...]) -> dict[tuple, PlannedTasks]:
    """Per group (keyed as :func:`~tauk.stats.tasks.task_groups` keys them) the :class:`PlannedTasks` of a frame
    from :func:`~tauk.stats.tasks.prepare_trials` (trials or per-task counts)."""
    keys = list(by) or ["__all__"]
    df = prepared if by else prepared.with_columns(pl.lit(0).alias("__all__"))
    tkeys = [c for c in TASK_KEY if c not in keys]
    per = [*keys, *tkeys, *([] if "run_id" in keys else ["run_id"])]
    if is_task_counts(df):
        n_run = df.group_by("run_id").agg(
            pl.col("trial_indices").explode().drop_nulls().n_unique().cast(pl.Int64).alias("_N"))
        per_run = df.join(n_run, on="run_id", how="left").group_by(per).agg(
            pl.col("trials").sum().alias("_rows"), pl.col("kept").sum().alias("_nk"),
            pl.col("successes").sum().alias("_c"), pl.col("rewarded").sum().alias("_ne"),
            pl.col("num_trials").min().alias("_nt"), pl.col("_N").first().alias("_N"),
        )  # fmt: skip
    else:
        rewarded, _ = reward_flags()
        per_run = df.with_columns(pl.col("trial").drop_nulls().n_unique().over("run_id").alias("_N")).group_by(
            per).agg(
            pl.len().alias("_rows"), pl.col("_kept").sum().alias("_nk"),
            (pl.col("_success") & pl.col("_kept")).sum().alias("_c"), rewarded.sum().alias("_ne"),
            pl.col("num_trials").min().alias("_nt"), pl.col("_N").first().alias("_N"),
        )  # fmt: skip
    per_run = per_run.with_columns(
        pl.max_horizontal(pl.col("_rows"), pl.col("_nt").fill_null(0), pl.col("_N").fill_null(0),
                          pl.col("_nk")).cast(pl.Int64).alias("_p")  # fmt: skip
    )
    per_task = (
        per_run.group_by([*keys, *tkeys])
        .agg(pl.col("_p").sum(), pl.col("_nk").sum(), pl.col("_c").sum(), pl.col("_ne").sum(), pl.col("_nt").min())
        .sort([*keys, *tkeys], nulls_last=True)
    )
    out: dict[tuple, PlannedTasks] = {}
    for key, part in per_task.group_by(keys, maintain_order=True):
        nt = part["_nt"].min()
        kept = part["_nk"].to_numpy().astype(np.int64)
        k = tuple(key) if by else ()
        out[k] = PlannedTasks(k, np.array(part["task_id"].to_list(), dtype=object),
                              part["_p"].to_numpy().astype(np.int64), kept,
                              part["_c"].to_numpy().astype(np.int64), None if nt is None else int(nt),
                              not (kept.sum() > 0 and int(part["_ne"].sum()) == 0))  # fmt: skip
    return out


def _bound_group(planned: np.ndarray, kept: np.ndarray, c: np.ndarray, side: str, num_trials: int | None
                 ) -> GroupTasks:  # fmt: skip
    m = planned > 0
    cc = c if side == "fail" else c + planned - kept
    T = int(m.sum())
    return GroupTasks(key=(), domain=np.full(T, None, dtype=object), task_id=np.arange(T).astype(str).astype(object),
                      n=planned[m].astype(np.int64), c=cc[m].astype(np.int64), n_trials=planned[m].astype(np.int64),
                      num_trials=num_trials, n_tasks_no_kept=0)  # fmt: skip


def bound_rows(planned: Any, kept: Any, c: Any, ks: Sequence[int], options: IntervalOptions = NO_INTERVAL,
               metric: str = "pass^k", num_trials: int | None = None, posterior=None) -> list[dict[str, Any]]:  # fmt: skip
    """The :data:`BOUND_FIELDS` of each k from per-task planned trials, kept trials and successes among the kept
    (the array core of :func:`add_missing`; intervals by ``options``, none when its ``ci`` is None). ``posterior``:
    the two bounds' fitted posterior points (rows: dropped = fail, = success) when the caller fitted them with others
    (:func:`model_with_bounds`); the model method only.

    >>> r = bound_rows([4, 4], [2, 4], [2, 1], ks=[1, 2])
    >>> [(round(x["estimate_dropped_fail"], 4), round(x["estimate_dropped_success"], 4)) for x in r]
    [(0.375, 0.625), (0.0833, 0.5)]
    """
    planned, kept, c = (np.asarray(a, dtype=np.int64) for a in (planned, kept, c))
    if planned.shape != kept.shape or kept.shape != c.shape or np.any(kept > planned) or np.any(c > kept) or \
            np.any(c < 0):  # fmt: skip
        raise TaukError("bound_rows needs per-task counts with 0 ≤ successes ≤ kept ≤ planned")
    out = [dict.fromkeys(BOUND_FIELDS) for _ in ks]
    if not ks or not np.any(planned > 0):
        return out
    if options.ci is not None and options.method == MODEL:  # both bounds from one call, population interval only
        n2, c2 = bound_counts(planned, kept, c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StatsWarning)  # k above every task: the rows say so already
            warnings.simplefilter("ignore", RuntimeWarning)
            r = model_interval_batch(n2, c2, list(ks), metric=metric, estimand="population", check_alpha=CHECK_ALPHA,
                                     fallback=FALLBACK, options=options, posterior=posterior)  # fmt: skip
        for i, side in enumerate(("fail", "success")):
            for j, o in enumerate(out):
                e = o[f"estimate_dropped_{side}"] = finite_or_none(r.estimate[i, j])
                lo, hi = finite_or_none(r.lo[i, j]), finite_or_none(r.hi[i, j])
                if e in (0.0, 1.0) and lo is not None and hi is not None:  # unanimous: reach the estimate, as
                    lo, hi = min(lo, e), max(hi, e)  # tauk.stats.intervals.group does for the kept trials
                o[f"ci_low_dropped_{side}"], o[f"ci_high_dropped_{side}"] = lo, hi
        return out
    for side in ("fail", "success"):
        rows = estimate_group(_bound_group(planned, kept, c, side, num_trials), list(ks), metric, options)
        for o, r in zip(out, rows):
            o[f"estimate_dropped_{side}"] = r["estimate"]
            o[f"ci_low_dropped_{side}"], o[f"ci_high_dropped_{side}"] = r["ci_low"], r["ci_high"]
    return out


def bound_counts(planned: np.ndarray, kept: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (n, c) of the two bounds as one (2 × T) pair: the planned trials, with the dropped ones failures (row 0)
    and successes (row 1), over the tasks with a planned trial."""
    m = planned > 0
    return np.stack([planned[m], planned[m]]), np.stack([c[m], (c + planned - kept)[m]])


def model_with_bounds(g: GroupTasks, ks: Sequence[int], p: PlannedTasks, options: IntervalOptions,
                      metric: str = "pass^k") -> tuple[dict, list[dict[str, Any]]]:  # fmt: skip
    """One group's model intervals (both estimands, as :func:`~tauk.stats.intervals.group.group_model` gives them)
    and its dropped-trial :data:`BOUND_FIELDS` at ``ks``, the three posteriors (the kept trials, dropped = fail,
    dropped = success) fitted in one vectorised call (:func:`~tauk.stats.intervals.model.fit_posterior`). Each
    result is what the separate calls give (the same checks, fallbacks and random streams), to rounding."""
    bn, bc = bound_counts(p.planned, p.kept, p.c)
    T = max(g.T, bn.shape[1])
    N = np.zeros((3, T), dtype=np.int64)
    C = np.zeros((3, T), dtype=np.int64)
    N[0, : g.T], C[0, : g.T] = g.n, g.c
    N[1:, : bn.shape[1]], C[1:, : bn.shape[1]] = bn, bc
    post = fit_posterior(N, C, metric)
    main = group_model(g, ks, metric, options, "both", posterior=tuple(x[:1] for x in post))
    bounds = bound_rows(p.planned, p.kept, p.c, ks, options, metric, p.num_trials,
                        posterior=tuple(x[1:] for x in post))  # fmt: skip
    return main, bounds


def stacks_bounds(options: IntervalOptions, g: GroupTasks, ks: Sequence[int], p: PlannedTasks | None) -> bool:
    """Whether :func:`model_with_bounds` applies: the model's interval, a group with tasks, a reward and ks, that
    dropped trials (its bounds would otherwise be fitted apart by :func:`add_missing`)."""
    return (options.ci is not None and options.method == MODEL and bool(ks) and g.T > 0 and g.evaluated
            and p is not None and p.n_dropped > 0 and p.evaluated and bool(np.any(p.planned > 0)))  # fmt: skip


def add_missing(long: pl.DataFrame, groups: pl.DataFrame, prepared: pl.DataFrame, by: tuple[str, ...],
                ks: Sequence[int] | None, options: IntervalOptions, min_coverage: float, metric: str = "pass^k",
                plan: dict[tuple, PlannedTasks] | None = None, fitted: dict[tuple, tuple[tuple, list]] | None = None,
                ) -> tuple[pl.DataFrame, pl.DataFrame]:  # fmt: skip
    """``long`` with the :data:`BOUND_FIELDS` (equal to the estimate and its interval where nothing was dropped;
    rows added, estimate null, for the ks of a group that kept no trial) and ``groups`` with the
    :data:`COVERAGE_FIELDS` (null for a group with no planned trial, e.g. a run without simulations).

    ``plan``: :func:`planned_tasks` of ``prepared`` if the caller has it; ``fitted``: per group key, (ks, bound
    rows) the caller already computed (:func:`model_with_bounds`) — used where the ks match."""
    plan = planned_tasks(prepared, by) if plan is None else plan
    fitted = fitted or {}
    bykeys = list(by)
    base = long.with_columns(
        pl.col("estimate").alias("estimate_dropped_fail"), pl.col("ci_low").alias("ci_low_dropped_fail"),
        pl.col("ci_high").alias("ci_high_dropped_fail"), pl.col("estimate").alias("estimate_dropped_success"),
        pl.col("ci_low").alias("ci_low_dropped_success"), pl.col("ci_high").alias("ci_high_dropped_success"),
    )  # fmt: skip
    had = {}
    for r in long.select([*bykeys, "k"]).iter_rows():
        had.setdefault(tuple(r[:-1]), []).append(int(r[-1]))
    extra_rows, fixes = [], []
    for key, p in plan.items():
        if not p.n_dropped or not p.evaluated:
            continue
        kk = had.get(key) or list(ks if ks is not None else p.default_ks())
        done = fitted.get(key)
        if done is not None and list(done[0]) == list(kk):
            rows = done[1]
        else:
            rows = bound_rows(p.planned, p.kept, p.c, kk, options, metric, p.num_trials)
        for k, r in zip(kk, rows):
            rec = {**dict(zip(bykeys, key)), "k": k, **r}
            (fixes if key in had else extra_rows).append(rec)
    schema = {**{c: long.schema[c] for c in bykeys}, "k": pl.Int64, **dict.fromkeys(BOUND_FIELDS, pl.Float64)}
    if fixes:
        fx = pl.DataFrame(fixes, schema=schema)
        base = base.join(fx, on=[*bykeys, "k"], how="left", nulls_equal=True, suffix="_b", maintain_order="left")
        base = base.with_columns(pl.coalesce(f"{f}_b", f).alias(f) for f in BOUND_FIELDS).drop(
            [f"{f}_b" for f in BOUND_FIELDS])
    if extra_rows:  # a group that kept no trial: rows at its ks, estimate null, the bounds given
        T = {key: int((p.planned > 0).sum()) for key, p in plan.items()}
        for rec in extra_rows:
            key = tuple(rec[c] for c in bykeys)
            rec.update(n_tasks=0, n_tasks_excluded=T.get(key, 0), interval_method=N_ALL_DROPPED,
                       rerun_interval_method=N_ALL_DROPPED)  # fmt: skip
        add = pl.DataFrame(extra_rows, schema={**schema, "n_tasks": pl.Int64, "n_tasks_excluded": pl.Int64,
                                               "interval_method": pl.String, "rerun_interval_method": pl.String},
                           )  # fmt: skip
        base = pl.concat([base, add], how="diagonal_relaxed").select(base.columns)
        if bykeys:  # keep the groups' order
            order = {tuple(r): i for i, r in enumerate(groups.select(bykeys).iter_rows())}
            rank = [order.get(tuple(r), len(order)) for r in base.select(bykeys).iter_rows()]
            base = base.with_columns(pl.Series("_o", rank)).sort(["_o", "k"], maintain_order=True).drop("_o")
    cov = []
    for r in groups.select(bykeys).iter_rows() if bykeys else [()] * groups.height:
        p = plan.get(tuple(r))
        if p is None or p.n_planned == 0:
            cov.append((*r, None, None, None, None, None))
            continue
        share = (p.n_planned - p.n_dropped) / p.n_planned
        low = share < min_coverage
        cov.append((*r, p.n_planned, p.n_dropped, share, low, not low))
    cschema = {**{c: groups.schema[c] for c in bykeys}, "n_planned": pl.Int64, "n_dropped": pl.Int64,
               "trial_coverage": pl.Float64, "low_coverage": pl.Boolean, "rankable": pl.Boolean}  # fmt: skip
    cf = pl.DataFrame(cov, schema=cschema, orient="row")
    g = (groups.join(cf, on=bykeys, how="left", nulls_equal=True, maintain_order="left") if bykeys
         else pl.concat([groups, cf], how="horizontal"))  # fmt: skip
    return base, g


def coverage_notes(groups: pl.DataFrame, by: tuple[str, ...], min_coverage: float) -> list[str]:
    """The notes of a summary whose groups lack planned trials: how many were dropped, the bounds, the flag."""
    if "n_dropped" not in groups.columns or not groups.height:
        return []
    hit = groups.filter(pl.col("n_dropped").fill_null(0) > 0)
    if not hit.height:
        return []
    name = (lambda r: " · ".join(str(r[c]) for c in by)) if by else (lambda r: "all")
    notes = [f"{hit.height} group(s) lack planned trials ({int(hit['n_dropped'].sum())} of "
             f"{int(hit['n_planned'].sum())} dropped: infrastructure errors or missing trial indices); kept/planned "
             "is their trial coverage, and pass^k if dropped=fail / =success bound the figure the planned trials "
             "would have given (each with its interval)"]  # fmt: skip
    low = groups.filter(pl.col("low_coverage").fill_null(False))
    if low.height:
        names = [name(r) for r in low.iter_rows(named=True)]
        shown = "; ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        notes.append(f"⚠ trial coverage below min_coverage {min_coverage:.0%} in {low.height} group(s) ({shown}): "
                     "flagged and not ranked (rankable false) — the dropped trials could move pass^k anywhere "
                     "between its bounds")  # fmt: skip
    none = groups.filter((pl.col("n_planned").fill_null(0) > 0) & (pl.col("n_dropped") == pl.col("n_planned")))
    if none.height:
        notes.append(f"every trial was dropped in {none.height} group(s) "
                      f"({'; '.join(name(r) for r in none.iter_rows(named=True))}): pass^k is not defined there (no "
                      "interval), only its bounds (dropped=fail 0, dropped=success 1, with their intervals)")  # fmt: skip
    return notes

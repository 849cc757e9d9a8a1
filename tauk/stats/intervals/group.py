"""The intervals tauk reports for one group's pass^k / pass@k, and the words that say what made each
(docs/spec.md §4).

Two intervals per (group, k):

* ``ci_low`` / ``ci_high`` — the **population** value E[p^k] (a new draw of tasks from the same pool);
* ``rerun_ci_low`` / ``rerun_ci_high`` — the **fixed-task** value mean_t p_t^k (the same tasks run again).

``method="model"`` (the default, :data:`tauk.conventions.CI_METHOD`) takes both from one beta-binomial posterior
(:mod:`tauk.stats.intervals.model`): where its posterior predictive check fails, each is the union with a BCa task
interval; where every task has one trial, Blaker's exact interval on (Σ c_t, T). The other methods keep their behaviour: a
task bootstrap (or t) interval for the population, Clopper–Pearson over the tasks where every task is at 0 or every
task at 1, and θ̂ ± z·se_rerun for a re-run — except that where se_rerun = 0 (every task always or never solved)
that normal interval would be the point itself, so the model's fixed-task interval is reported there instead.

Every row says what made its intervals (``interval_method``, ``rerun_interval_method``) and, when the model made
one, the check's p-value (``model_check_p``; null when not testable: fewer than 2 tasks, or no task with 3 trials)
and verdict (``model_check_passed``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from tauk._lazy import lazy
from tauk.errors import StatsWarning

from ..options import CI_METHODS, IntervalOptions, finite_or_none
from ..tasks import GroupTasks
from .model import FALLBACK, ModelInterval, model_interval, model_interval_batch
from .model_check import CHECK_ALPHA, check_threshold_text
from .nonparametric import task_interval, unanimous_columns

special = lazy("scipy.special")

__all__ = [
    "MODEL",
    "INTERVAL_FIELDS",
    "group_intervals",
    "group_model",
    "group_models",
    "interval_notes",
]

MODEL = CI_METHODS[0]

INTERVAL_FIELDS = (
    "ci_low", "ci_high", "rerun_ci_low", "rerun_ci_high", "interval_method", "rerun_interval_method",
    "model_check_p", "model_check_passed",
)  # fmt: skip

# what made an interval (the values of interval_method / rerun_interval_method)
M_MODEL = "model"
M_FAILED = f"model+{FALLBACK} (check failed)"
M_BINOMIAL = "blaker (n=1)"
M_UNANIMOUS = "clopper-pearson over tasks (unanimous)"
M_NORMAL = "normal (se_rerun)"
M_RERUN_ZERO = "model (se_rerun = 0)"
N_NO_K = "none: no task has k trials"
N_ONE_TASK = "none: fewer than 2 tasks"
N_RERUN = "none: se_rerun needs every n_t ≥ 2k"
R_SHORT = " (n<2k: a re-run's variance is only bounded below)"
"""Appended to the model's rerun_interval_method where a task has k ≤ n_t < 2k trials: the data do not identify a
re-run's variance there, only a lower bound (:mod:`~tauk.stats.intervals.rerun_floor`), so the interval leans on the
Beta shape; calibrated to ≥ 93 % there, ≥ 94 % where every n_t ≥ 2k (``docs/calibration/intervals.md``)."""


def group_model(g: GroupTasks, ks: Sequence[int], metric: str, options: IntervalOptions, estimand: str,
                posterior=None):  # fmt: skip
    """The model's interval(s) of one group as tauk reports them (its check, its fallback); ``posterior``: the group's
    fitted posterior points when a caller fitted it together with others (:func:`~.model.fit_posterior`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)  # k above every task: reported by the caller (n_tasks)
        warnings.simplefilter("ignore", RuntimeWarning)
        return model_interval(g.n, g.c, list(ks), metric=metric, estimand=estimand, check_alpha=CHECK_ALPHA,
                              fallback=FALLBACK, options=options, posterior=posterior)  # fmt: skip


def group_models(items: Sequence[tuple[GroupTasks, Sequence[int]]], metric: str,
                 options: IntervalOptions) -> list[dict[str, ModelInterval]]:  # fmt: skip
    """:func:`group_model` (both estimands) of many (group, ks) at once: one vectorised fit per distinct ks, each
    group on its own random stream (``seed_per_group``), so each result is the one-group call's (to rounding: the
    fit is shared). Every group must have a task."""
    out: list[Any] = [None] * len(items)
    by_ks: dict[tuple[int, ...], list[int]] = {}
    for i, (g, ks) in enumerate(items):
        if g.T == 0 or not ks:
            raise ValueError("group_models needs groups with tasks and ks")
        by_ks.setdefault(tuple(int(k) for k in ks), []).append(i)
    for ks, idx in by_ks.items():
        T = max(items[i][0].T for i in idx)
        n = np.zeros((len(idx), T), dtype=np.int64)
        c = np.zeros((len(idx), T), dtype=np.int64)
        for r, i in enumerate(idx):
            g = items[i][0]
            n[r, : g.T], c[r, : g.T] = g.n, g.c
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StatsWarning)  # k above every task: reported by the caller (n_tasks)
            warnings.simplefilter("ignore", RuntimeWarning)
            both = model_interval_batch(n, c, list(ks), metric=metric, estimand="both", check_alpha=CHECK_ALPHA,
                                        fallback=FALLBACK, options=options, seed_per_group=True)  # fmt: skip
        for r, i in enumerate(idx):
            out[i] = {e: both[e].group(r) for e in ("population", "fixed")}
    return out


def _label(source: str) -> str:
    if source == "binomial":
        return M_BINOMIAL
    if source.startswith("fallback:"):
        return M_FAILED
    return M_MODEL


def _check(m) -> tuple[float | None, bool | None]:
    p = finite_or_none(m.check_p)
    return p, (None if p is None else bool(m.check_passed))


def _reach(r: dict[str, Any], lo: str, hi: str, e: float) -> None:
    """Extend the interval ``r[lo]``–``r[hi]`` (when there is one) to hold the estimate ``e``."""
    if r[lo] is not None and r[hi] is not None:
        r[lo], r[hi] = min(r[lo], e), max(r[hi], e)


def group_intervals(
    g: GroupTasks,
    ks: Sequence[int],
    U: np.ndarray,
    est: np.ndarray,
    se_rerun: Sequence[float | None],
    metric: str,
    options: IntervalOptions,
    progress: bool | None = None,
    model: dict | None = None,
) -> list[dict[str, Any]]:
    """The :data:`INTERVAL_FIELDS` of each k of one group (``U``: T × K per-task values, ``est``: their means) at
    ``options`` (a ci is required). ``model``: the model's {"population", "fixed"} intervals of this group at these
    ks when the caller already has them (:func:`group_model` with ``estimand="both"``)."""
    K = len(ks)
    out = [dict.fromkeys(INTERVAL_FIELDS) for _ in range(K)]
    defined = np.isfinite(U).sum(axis=0)
    method = options.method
    if method == MODEL:
        both = group_model(g, ks, metric, options, "both") if model is None else model
        pop, fix = both["population"], both["fixed"]
        p, passed = _check(pop)
        label = _label(pop.source)
        for j in range(K):
            r = out[j]
            r["ci_low"], r["ci_high"] = finite_or_none(pop.lo[j]), finite_or_none(pop.hi[j])
            r["rerun_ci_low"], r["rerun_ci_high"] = finite_or_none(fix.lo[j]), finite_or_none(fix.hi[j])
            if est[j] in (0.0, 1.0):  # every task's Û_k 0 (1): the posterior alone excludes the boundary
                _reach(r, "ci_low", "ci_high", float(est[j]))
                _reach(r, "rerun_ci_low", "rerun_ci_high", float(est[j]))
            r["interval_method"] = label if r["ci_low"] is not None else N_NO_K
            r["rerun_interval_method"] = label if r["rerun_ci_low"] is not None else N_NO_K
            if r["rerun_ci_low"] is not None and label != M_BINOMIAL and bool(np.any((g.n >= ks[j]) & (g.n < 2 * ks[j]))):
                r["rerun_interval_method"] += R_SHORT
            r["model_check_p"], r["model_check_passed"] = p, passed
        return out
    lo, hi = task_interval(U, options, progress)
    unanimous = unanimous_columns(U)
    z = special.ndtri(0.5 + options.ci / 2.0)
    zero = [j for j in range(K) if se_rerun[j] == 0.0]
    fix = group_model(g, [ks[j] for j in zero], metric, options.replace(method=MODEL), "fixed") if zero else None
    for j in range(K):
        r = out[j]
        r["ci_low"], r["ci_high"] = finite_or_none(lo[j]), finite_or_none(hi[j])
        if r["ci_low"] is None:
            r["interval_method"] = N_NO_K if defined[j] == 0 else N_ONE_TASK
        else:
            r["interval_method"] = M_UNANIMOUS if unanimous[j] else method
        if se_rerun[j] is None:
            r["rerun_interval_method"] = N_RERUN if defined[j] else N_NO_K
        elif j in zero:
            i = zero.index(j)
            r["rerun_ci_low"], r["rerun_ci_high"] = finite_or_none(fix.lo[i]), finite_or_none(fix.hi[i])
            r["rerun_interval_method"] = M_RERUN_ZERO if fix.source == "model" else f"{_label(fix.source)} (se_rerun = 0)"
            r["model_check_p"], r["model_check_passed"] = _check(fix)
        else:
            half = z * se_rerun[j]
            r["rerun_ci_low"], r["rerun_ci_high"] = max(float(est[j] - half), 0.0), min(float(est[j] + half), 1.0)
            r["rerun_interval_method"] = M_NORMAL
    return out


def _group_names(frame, by: tuple[str, ...], mask) -> list[str]:
    rows = frame.filter(mask).select(list(by)).unique(maintain_order=True).rows() if by else [()]
    return [", ".join(f"{c}={v}" for c, v in zip(by, r)) or "the group" for r in rows]


def interval_notes(frame: pl.DataFrame, by: tuple[str, ...], options: IntervalOptions) -> list[str]:
    """The notes of a long pass^k / pass@k frame saying what made its intervals (method, model, check)."""
    ci, method, resamples, seed = options.ci, options.method, options.resamples, options.seed
    if ci is None:
        return ["no interval requested (ci=None); se_tasks = sd_t(Û_k)/√T over tasks, se_rerun for the same tasks "
                "re-run"]  # fmt: skip
    notes = []
    if method == MODEL:
        notes.append(
            f"{ci:.0%} intervals from a beta-binomial model (p_t ~ Beta, μ and ρ = 1/(1+κ) uniform): ci for a new "
            "draw of tasks (E[p^k]), rerun_ci for these tasks run again (mean_t p_t^k)"
        )
    else:
        boot = "" if method == "t" else f", {resamples} task resamples, seed {seed}"
        notes.append(f"{ci:.0%} {method} interval over tasks{boot}; rerun_ci: estimate ± z·se_rerun")
    if "interval_method" not in frame.columns or frame.height == 0:
        return notes
    by_group = frame.group_by(list(by) or pl.lit(0), maintain_order=True).agg(
        pl.col("model_check_passed").drop_nulls().first().alias("passed"),
        pl.col("model_check_p").is_not_null().any().alias("tested"),
        pl.col("interval_method").is_in([M_BINOMIAL]).any().alias("binomial"),
        pl.col("interval_method").is_in([M_UNANIMOUS]).any().alias("unanimous"),
        pl.col("rerun_interval_method").str.contains("se_rerun = 0", literal=True).any().alias("zero"),
    )
    G = by_group.height
    failed = by_group.filter(pl.col("passed") == False)  # noqa: E712
    if method == MODEL:
        tested = int(by_group["tested"].sum())
        check = f"model check (posterior predictive, {check_threshold_text(CHECK_ALPHA)})"
        if failed.height:
            names = _group_names(failed, by, pl.lit(True))
            shown = "; ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            notes.append(
                f"{check} failed in {failed.height} of {G} group(s) "
                f"({shown}): there each interval is the union of the model's and a {FALLBACK} task interval "
                f"({resamples} resamples, seed {seed})"
            )
        else:
            notes.append(f"{check} passed in every group where testable ({tested} of {G})")
        if tested < G:
            notes.append(f"model check not testable in {G - tested} group(s): fewer than 2 tasks, no task with ≥ 3 "
                         "trials, or one trial per task")  # fmt: skip
        edge = frame.filter(pl.col("interval_method").is_in([M_MODEL, M_FAILED])
                            & (((pl.col("estimate") == 0.0) & (pl.col("ci_low") == 0.0))
                               | ((pl.col("estimate") == 1.0) & (pl.col("ci_high") == 1.0))))  # fmt: skip
        if edge.height:
            notes.append(f"{edge.height} (group, k) cell(s) where every task's estimate is 0 (or every one 1): the "
                         "model's interval is extended to reach the estimate (the posterior of E[p^k] alone excludes "
                         "the boundary, where its uniform prior puts no mass)")  # fmt: skip
        nb = int(by_group["binomial"].sum())
        if nb:
            notes.append(f"{nb} group(s) with one trial per task: Blaker's exact interval on the successes over the tasks "
                         "(inside Clopper–Pearson's, ≥ 95 % at every pass^1)")
        shape = frame.filter(pl.col("se_rerun").is_null() & pl.col("rerun_ci_low").is_not_null()
                             & ~pl.col("rerun_interval_method").is_in([M_BINOMIAL]))  # fmt: skip
        if shape.height:
            ks = ", ".join(str(k) for k in sorted(set(shape["k"].to_list())))
            notes.append(f"rerun_ci at k = {ks} ({shape.height} (group, k) cell(s) with a task of fewer than 2k trials, "
                         "se_rerun null): the trials identify only a lower bound of a re-run's variance there, so that "
                         "interval rests more on the population's Beta shape (floored by that bound)")  # fmt: skip
    else:
        nu = int(by_group["unanimous"].sum())
        if nu:
            notes.append(f"{nu} group(s) with every task at 0 or every task at 1: Clopper–Pearson over the tasks")
        nz = int(by_group["zero"].sum())
        if nz:
            notes.append(f"{nz} group(s) with se_rerun = 0 at some k: rerun_ci from the model's fixed-task interval "
                         "(a normal interval would be the point)")  # fmt: skip
        if failed.height:
            notes.append(f"model check failed in {failed.height} of those group(s): union with a {FALLBACK} interval")
    undefined = frame.filter(pl.col("interval_method").str.starts_with("none"))
    if undefined.height:
        why = sorted({m.removeprefix("none: ") for m in undefined["interval_method"].to_list()})
        notes.append(f"{undefined.height} (group, k) cell(s) without an interval ({'; '.join(why)})")
    return notes

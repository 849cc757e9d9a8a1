"""pass^k on the **substantive** tasks — those an agent that does nothing would fail — beside pass^k on all, for
every summary (:func:`~tauk.stats.summarize`).

A task is *inaction-passable* when an agent that calls no tool and ends the conversation normally gets reward 1
(:func:`tauk.tasks.validity`, on the definitions each run was graded with: the ones its file embeds, τ-bench
records included). Per group the summary adds:

* ``n_tasks_inaction_passable`` / ``n_tasks_inaction_unknown`` / ``n_tasks_substantive`` — the group's tasks (with
  a kept trial) by verdict; a task of several runs whose verdicts differ, or without a definition, is *unknown*;
* ``share_successes_inaction_passable`` — successes on inaction-passable tasks / all successes (kept trials);
* ``task_definitions`` — where the verdicts came from: ``"embedded"`` (the runs' own definitions), ``"given"``
  (``marks=``), ``"none"`` (no task of the group has a definition: every figure above is null — not known, never
  guessed), ``"not computed"`` (``marks=False``);

and per (group, k) the ``substantive_*`` columns: pass^k over the substantive tasks (unknown ones left out) with
its own standard errors and intervals — the same estimator and :class:`~tauk.stats.IntervalOptions` as pass^k on
all (:func:`~tauk.stats.estimate.estimate_group` on the group's substantive tasks), identical to it where the group
has no inaction-passable or unknown task.

Examples
--------
>>> import tauk
>>> s = tauk.stats.summarize(tauk.load("data/baseline_airline.json"), ci=None)
>>> s.groups.select("n_tasks", "n_tasks_inaction_passable", "n_tasks_substantive").row(0)
(25, 2, 23)
>>> s.pass_hat_k.filter(k=1).select("estimate", "substantive_estimate").row(0)
(0.3, 0.2826086956521739)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from tauk.errors import StatsWarning, TaukError

from .estimate import ESTIMATE_FIELDS, estimate_group
from .options import IntervalOptions
from .tasks import GroupTasks

__all__ = [
    "DEFINITIONS",
    "GROUP_FIELDS",
    "SUBSTANTIVE_FIELDS",
    "SUBSTANTIVE_NOTE",
    "Substantive",
    "SubstantivePlan",
    "ResolvedMarks",
    "resolve_marks",
    "substantive_figures",
    "substantive_notes",
    "substantive_plan",
]

DEFINITIONS = ("embedded", "given", "none", "not computed")
"""The values of ``task_definitions``: where a group's inaction verdicts came from."""

GROUP_FIELDS = {
    "n_tasks_inaction_passable": pl.Int64,
    "n_tasks_inaction_unknown": pl.Int64,
    "n_tasks_substantive": pl.Int64,
    "share_successes_inaction_passable": pl.Float64,
    "task_definitions": pl.String,
}
"""The columns the summary's ``groups`` frame gains."""

SUBSTANTIVE_FIELDS = ("n_tasks", *ESTIMATE_FIELDS)
"""The fields of pass^k on the substantive tasks; the long frame's columns are ``substantive_<field>``."""

_LONG = {"n_tasks": pl.Int64, "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
         "se_tasks": pl.Float64, "se_rerun": pl.Float64, "rerun_ci_low": pl.Float64, "rerun_ci_high": pl.Float64,
         "interval_method": pl.String, "rerun_interval_method": pl.String, "model_check_p": pl.Float64,
         "model_check_passed": pl.Boolean}  # fmt: skip

SUBSTANTIVE_NOTE = (
    "substantive: tasks an agent that does nothing would fail (not inaction-passable by tauk.tasks.validity on "
    "the definitions each run was graded with); their pass^k has its own interval (same method); share: "
    "successes on inaction-passable tasks / all successes"
)
NO_DEFINITIONS = "not known: no task definitions"
MARK_COLUMNS = ("run_id", "task_id", "inaction_passable")


class ResolvedMarks(NamedTuple):
    """What :func:`resolve_marks` found, kept to be handed to several summaries of the same results (``marks=``)
    so that the definitions are audited once: ``frame`` (or None), ``source`` (``"embedded"``, ``"given"``, …) and
    ``audit`` (the :class:`tauk.tasks.TaskValidity` it came from, when embedded)."""

    frame: pl.DataFrame | None
    source: str
    audit: Any = None

    @classmethod
    def of(cls, source: Any, marks: Any = None) -> ResolvedMarks:
        """:func:`resolve_marks` of ``source`` (and ``marks``), with the audit it made."""
        found: list[Any] = []
        frame, where = resolve_marks(source, marks, _audit=found)
        return cls(frame, where, found[0] if found else None)


def resolve_marks(source: Any, marks: Any = None, _audit: list[Any] | None = None) -> tuple[pl.DataFrame | None, str]:
    """``(marks, task_definitions)``: the inaction verdict of every (run, task) with a definition —
    ``run_id, task_id, inaction_passable`` (null: cannot tell) — and where it came from.

    ``marks``: None (the definitions ``source`` embeds, if it is a results set: :func:`tauk.tasks.validity` with
    its default evidence), a frame with :data:`MARK_COLUMNS` (e.g. :func:`tauk.tasks.inaction_marks` of a run
    with a task file: ``given``), or False (``not computed``).
    """
    if marks is False:
        return None, "not computed"
    if isinstance(marks, ResolvedMarks):
        return marks.frame, marks.source
    if isinstance(marks, pl.DataFrame):
        missing = [c for c in MARK_COLUMNS if c not in marks.columns]
        if missing:
            raise TaukError(f"marks= needs columns {list(MARK_COLUMNS)} (tauk.tasks.inaction_marks); lacks {missing}")
        m = marks.select(pl.col("run_id").cast(pl.String), pl.col("task_id").cast(pl.String),
                         pl.col("inaction_passable").cast(pl.Boolean))  # fmt: skip
        return m.unique(subset=["run_id", "task_id"], keep="first"), "given"
    if marks is not None:
        raise TaukError(f"marks= takes None, False or a frame of tauk.tasks.inaction_marks, not {type(marks).__name__}")
    tasks = getattr(source, "tasks", None)
    if not isinstance(tasks, pl.DataFrame) or tasks.height == 0 or "run_id" not in tasks.columns:
        return None, "none"
    from tauk.tasks import validity

    try:
        audit = validity(source)
    except TaukError as exc:  # unreadable definitions: the figures are not known, the summary still is
        warnings.warn(f"summary: inaction-passable tasks not known ({exc})", StatsWarning, stacklevel=4)
        return None, "none"
    if _audit is not None:
        _audit.append(audit)
    v = audit.tasks
    return v.select(run_id="task_set", task_id="task_id", inaction_passable="inaction_passable"), "embedded"


class Substantive(NamedTuple):
    """The substantive figures of one summary: ``groups`` (group keys + :data:`GROUP_FIELDS`) and ``long`` (group
    keys, ``k`` and the ``substantive_*`` columns)."""

    by: tuple[str, ...]
    groups: pl.DataFrame
    long: pl.DataFrame

    def with_groups(self, gframe: pl.DataFrame) -> pl.DataFrame:
        """``gframe`` with :data:`GROUP_FIELDS` (runs without a simulation: null counts)."""
        if not self.by:
            return pl.concat([gframe, self.groups], how="horizontal") if gframe.height else \
                gframe.with_columns([pl.lit(None, t).alias(c) for c, t in GROUP_FIELDS.items()])  # fmt: skip
        return gframe.join(self.groups, on=list(self.by), how="left", nulls_equal=True, maintain_order="left")

    def with_long(self, long: pl.DataFrame) -> pl.DataFrame:
        """``long`` with the ``substantive_*`` columns."""
        return long.join(self.long, on=[*self.by, "k"], how="left", nulls_equal=True, maintain_order="left")


def _task_verdicts(df: pl.DataFrame, by: tuple[str, ...], marks: pl.DataFrame) -> dict[tuple, dict]:
    """Per group key: ``{(domain, task_id): (verdict, defined)}`` — the verdict True / False where every run of the
    group that has the task has its definition and they agree, else None; ``defined``: some run has a definition."""
    keys = list(by)
    extra = [c for c in ("domain", "task_id") if c not in keys]
    pairs = df.select(*keys, *extra, pl.col("run_id").cast(pl.String).alias("_run")).with_columns(
        pl.col("task_id").cast(pl.String)).unique()  # fmt: skip
    joined = pairs.join(marks.with_columns(_def=pl.lit(True)), left_on=["_run", "task_id"],
                        right_on=["run_id", "task_id"], how="left")  # fmt: skip
    ip = pl.col("inaction_passable")
    per = joined.group_by(*keys, *extra).agg(
        _v=pl.when(pl.col("_def").is_null().any() | ip.is_null().any()).then(None)
        .when(ip.all()).then(True).when((~ip).all()).then(False),  # fmt: skip
        _d=pl.col("_def").is_not_null().any(),
    )
    out: dict[tuple, dict] = {}
    for r in per.iter_rows(named=True):
        out.setdefault(tuple(r[c] for c in keys), {})[(r["domain"], r["task_id"])] = (r["_v"], r["_d"])
    return out


def _null_rows(ks: Sequence[int]) -> list[dict[str, Any]]:
    return [{"k": int(k), **dict.fromkeys(SUBSTANTIVE_FIELDS)} for k in ks]


class SubstantivePlan(NamedTuple):
    """Which tasks of each group are substantive, before any figure: per group (in ``groups`` order) its
    :data:`GROUP_FIELDS` values (``counts``) and ``part`` — None (no definitions: null figures), the group itself
    (every task substantive: the figures on all tasks) or the group restricted to its substantive tasks."""

    counts: list[list[Any]]
    parts: list[GroupTasks | None]
    groups: list[GroupTasks]

    def to_fit(self) -> list[int]:
        """The groups whose substantive part needs its own figures (some task is not substantive)."""
        return [i for i, (g, p) in enumerate(zip(self.groups, self.parts)) if p is not None and p is not g]


def substantive_plan(source: Any, df: pl.DataFrame, by: tuple[str, ...], groups: list[GroupTasks],
                     marks: Any = None) -> SubstantivePlan:  # fmt: skip
    """The :class:`SubstantivePlan` of ``groups`` (from the prepared trials ``df`` grouped by ``by``) with the marks
    of :func:`resolve_marks` (``source``, ``marks``)."""
    m, where = resolve_marks(source, marks)
    verdicts = _task_verdicts(df, by, m) if m is not None else {}
    counts, parts = [], []
    for g in groups:
        got = verdicts.get(g.key, {})
        both = [got.get((d, t), (None, False)) for d, t in zip(g.domain, g.task_id)]
        if m is None or (g.T and not any(d for _, d in both)):  # no task of the group has a definition
            counts.append([None, None, None, None, where if m is None else "none"])
            parts.append(None)
            continue
        ip = np.array([x is True for x, _ in both], dtype=bool)
        sub = np.array([x is False for x, _ in both], dtype=bool)
        c_all = int(g.c.sum())
        share = float(g.c[ip].sum()) / c_all if c_all else None
        counts.append([int(ip.sum()), int(g.T - ip.sum() - sub.sum()), int(sub.sum()), share, where])
        parts.append(g if sub.all() else g._replace(domain=g.domain[sub], task_id=g.task_id[sub], n=g.n[sub],
                                                 c=g.c[sub], n_trials=g.n_trials[sub], n_tasks_no_kept=0))  # fmt: skip
    return SubstantivePlan(counts, parts, list(groups))


def substantive_figures(source: Any, df: pl.DataFrame, by: tuple[str, ...], keyed: list[tuple[tuple, list[dict]]],
                        groups: list[GroupTasks], options: IntervalOptions, progress: bool | None = None,
                        marks: Any = None, plan: SubstantivePlan | None = None,
                        models: dict[int, dict] | None = None) -> Substantive:  # fmt: skip
    """The substantive figures of each group (``groups``, whose pass^k rows on all tasks are ``keyed``), from the
    prepared trials ``df`` grouped by ``by`` and the marks of :func:`resolve_marks` (``source``, ``marks``).
    ``plan``: its :func:`substantive_plan` if the caller made it; ``models``: per group index of
    :meth:`SubstantivePlan.to_fit`, the part's model intervals if the caller fitted them
    (:func:`~tauk.stats.estimate.group_models_for`)."""
    plan = substantive_plan(source, df, by, groups, marks) if plan is None else plan
    models = models or {}
    grows: dict[str, list] = {c: [] for c in (*by, *GROUP_FIELDS)}
    lrows: dict[str, list] = {c: [] for c in (*by, "k", *(f"substantive_{f}" for f in SUBSTANTIVE_FIELDS))}
    for i, (g, (_, all_rows)) in enumerate(zip(groups, keyed)):
        ks = [r["k"] for r in all_rows]
        part = plan.parts[i]
        if part is None:
            rows = _null_rows(ks)
        elif part is g:
            rows = [{f: r.get(f) for f in ("k", *SUBSTANTIVE_FIELDS)} for r in all_rows]
        else:
            rows = estimate_group(part, ks, "pass^k", options, progress, model=models.get(i))
        for j, c in enumerate(by):
            grows[c].append(g.key[j])
        for c, x in zip(GROUP_FIELDS, plan.counts[i]):
            grows[c].append(x)
        for r in rows:
            for j, c in enumerate(by):
                lrows[c].append(g.key[j])
            lrows["k"].append(int(r["k"]))
            for f in SUBSTANTIVE_FIELDS:
                lrows[f"substantive_{f}"].append(r.get(f))
    kschema = {c: df.schema[c] for c in by}
    gschema = {**kschema, **GROUP_FIELDS}
    lschema = {**kschema, "k": pl.Int64, **{f"substantive_{f}": t for f, t in _LONG.items()}}
    return Substantive(by, pl.DataFrame(grows, schema=gschema), pl.DataFrame(lrows, schema=lschema))


def substantive_notes(groups: pl.DataFrame, by: Sequence[str]) -> list[str]:
    """The notes of a summary table: what *substantive* means, and which groups have no definitions."""
    if "task_definitions" not in groups.columns or not groups.height:
        return []
    notes = [SUBSTANTIVE_NOTE]
    for what, text in (("none", NO_DEFINITIONS), ("not computed", "not computed (marks=False)")):
        hit = groups.filter(pl.col("task_definitions") == what)
        if hit.height:
            names = ", ".join(" · ".join(str(r[c]) for c in (by or ("agent",)) if c in r) for r in
                              hit.head(8).iter_rows(named=True))  # fmt: skip
            more = f" and {hit.height - 8} more" if hit.height > 8 else ""
            notes.append(f"{names}{more}: inaction-passable tasks {text}; the substantive figures are null")
    unknown = groups.filter(pl.col("n_tasks_inaction_unknown") > 0)
    if unknown.height:
        notes.append(f"{int(unknown['n_tasks_inaction_unknown'].sum())} task(s) of {unknown.height} group(s) cannot "
                     "be told inaction-passable or not (an LLM-judged NL assertion, an ENV assertion the data do not "
                     "tell, an unknown tool): left out of the substantive pass^k, counted in the share's "
                     "denominator only")  # fmt: skip
    return notes

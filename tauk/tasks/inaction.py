"""Inaction-passable tasks in a results set: the marks statistics join on, and the counts a summary reports.

:func:`inaction_marks` marks every (run, task) of a trials frame ``inaction_passable`` / ``substantive`` (joinable
on ``run_id, task_id``), from the definitions each run embeds or from given ones; :func:`inaction_summary` is the
table the summaries and the report show beside pass^k: per group, how many tasks pass by doing nothing, pass^1 on
all tasks and on the substantive ones (point estimates — intervals come from ``tauk.stats`` on the trials joined
to the marks), and the share of the agent's successes that fall on inaction-passable tasks.

Examples
--------
>>> import tauk
>>> res = tauk.load("data")
>>> m = tauk.tasks.inaction_marks(res)
>>> m.columns, m.get_column("inaction_passable").sum()
(['run_id', 'task_id', 'inaction_passable', 'substantive'], 15)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from tauk.conventions import INFRA, success_expr
from tauk.errors import TaukError
from tauk.table import SummaryTable
from tauk.tasks.validity import validity

__all__ = ["inaction_marks", "inaction_section", "inaction_summary"]

MARK_SCHEMA = {"run_id": pl.String, "task_id": pl.String, "inaction_passable": pl.Boolean, "substantive": pl.Boolean}


def _trials(results: Any) -> pl.DataFrame:
    if isinstance(results, pl.DataFrame):
        return results
    t = results.get("trials") if isinstance(results, Mapping) else getattr(results, "trials", None)
    if not isinstance(t, pl.DataFrame):
        raise TaukError(f"expected a trials frame or a tauk.Results, got {type(results).__name__}")
    return t


def inaction_marks(results: Any, tasks: Any = None, *, evidence: Any = "auto") -> pl.DataFrame:
    """``run_id, task_id, inaction_passable, substantive`` for every (run, task) of the trials.

    Parameters
    ----------
    results
        A ``tauk.Results`` (its embedded definitions are used when ``tasks`` is None) or a trials frame (then
        ``tasks`` is required).
    tasks
        Definitions to judge every run's tasks by (a task file, frames, … as :func:`tauk.tasks.validity` takes —
        one task set): e.g. the task file of a wrapper-format run, which embeds none. A run of another domain raises.
    evidence
        As for :func:`tauk.tasks.validity` (``"auto"``: the results' own do-nothing simulations).

    Returns
    -------
    polars.DataFrame
        One row per (run, task): ``inaction_passable`` (null: cannot tell — no definition, an unknown gold tool, ENV
        assertions whose initial value the data do not tell), ``substantive`` (its negation).
    """
    trials = _trials(results)
    keys = trials.select(pl.col("run_id").cast(pl.String), pl.col("task_id").cast(pl.String)).unique(maintain_order=True)
    if evidence == "auto":
        evidence = None if isinstance(results, pl.DataFrame) else results
    if tasks is None:
        if isinstance(results, pl.DataFrame):
            raise TaukError("inaction_marks(trials): give tasks= (a trials frame carries no task definitions)")
        v = validity(results, evidence=evidence).tasks
        marks = v.select(run_id="task_set", task_id="task_id", inaction_passable="inaction_passable")
        out = keys.join(marks, on=["run_id", "task_id"], how="left")
    else:
        v = validity(tasks, evidence=evidence).tasks
        sets = v.get_column("task_set").unique().to_list()
        if len(sets) != 1:
            raise TaukError(f"inaction_marks(tasks=): give one task set, not {len(sets)}: {sorted(sets)[:5]}")
        domains = v.get_column("domain").drop_nulls().unique().to_list()
        if len(domains) == 1 and "domain" in trials.columns:
            other = trials.filter(pl.col("domain").is_not_null() & (pl.col("domain") != domains[0]))
            if other.height:
                rid, dom = other.select("run_id", "domain").row(0)
                raise TaukError(f"inaction_marks: the tasks are {domains[0]}, but run {rid} is {dom}")
        out = keys.join(v.select("task_id", "inaction_passable"), on="task_id", how="left")
    return out.with_columns(substantive=~pl.col("inaction_passable")).select(list(MARK_SCHEMA)).cast(MARK_SCHEMA)


SUMMARY_FIELDS = (
    "n_tasks", "n_tasks_inaction_passable", "n_tasks_inaction_unknown", "n_tasks_substantive", "pass1",
    "pass1_substantive", "n_successes", "n_successes_inaction_passable", "share_successes_inaction_passable",
)  # fmt: skip


def inaction_summary(results: Any, tasks: Any = None, *, by: Sequence[str] = ("agent", "domain"),
                     infra: str = INFRA, reward: str = "reward", marks: pl.DataFrame | None = None) -> pl.DataFrame:  # fmt: skip
    """Per group: the tasks that pass by doing nothing and what they do to pass^1.

    Columns: the ``by`` keys, ``n_tasks``, ``n_tasks_inaction_passable``, ``n_tasks_inaction_unknown``,
    ``n_tasks_substantive`` (known not inaction-passable), ``pass1`` (mean over tasks of the success rate — a
    point estimate), ``pass1_substantive`` (the same over the substantive tasks), ``n_successes``,
    ``n_successes_inaction_passable``, ``share_successes_inaction_passable``. Success is ``reward`` within
    ``tauk.conventions.SUCCESS_TOL`` of 1; ``infra="drop"`` leaves infrastructure errors out, ``"fail"`` counts
    them as failures. ``marks``: precomputed :func:`inaction_marks` (else computed from ``results`` / ``tasks``).

    Examples
    --------
    >>> import tauk
    >>> s = inaction_summary(tauk.load("data"), by=("domain",))
    >>> s.select("domain", "n_tasks", "n_tasks_inaction_passable", "n_successes_inaction_passable").rows()
    [('airline', 25, 2, 15), ('retail', 25, 3, 24)]
    """
    if infra not in ("drop", "fail"):
        raise TaukError(f"infra must be 'drop' or 'fail', not {infra!r}")
    trials = _trials(results)
    missing = [c for c in (*by, reward) if c not in trials.columns]
    if missing:
        raise TaukError(f"inaction_summary: the trials have no column(s) {missing}")
    if marks is None:
        marks = inaction_marks(results, tasks)
    tr = trials.with_columns(pl.col("run_id").cast(pl.String), pl.col("task_id").cast(pl.String))
    if infra == "drop" and "is_infra_error" in tr.columns:
        tr = tr.filter(~pl.col("is_infra_error").fill_null(False))
    tr = tr.join(marks, on=["run_id", "task_id"], how="left").with_columns(_ok=success_expr(reward))
    per_task = tr.group_by(*by, "task_id").agg(
        _rate=pl.col("_ok").mean(), _succ=pl.col("_ok").sum(), _ip=pl.col("inaction_passable").first()
    ).sort(*by, "task_id", nulls_last=True)  # task order: pass1's float mean is the same on every call
    ip = pl.col("_ip")
    out = per_task.group_by(*by, maintain_order=True).agg(
        n_tasks=pl.len().cast(pl.Int64),
        n_tasks_inaction_passable=(ip == True).sum().cast(pl.Int64),  # noqa: E712
        n_tasks_inaction_unknown=ip.is_null().sum().cast(pl.Int64),
        n_tasks_substantive=(ip == False).sum().cast(pl.Int64),  # noqa: E712
        pass1=pl.col("_rate").mean(),
        pass1_substantive=pl.col("_rate").filter(ip == False).mean(),  # noqa: E712
        n_successes=pl.col("_succ").sum().cast(pl.Int64),
        n_successes_inaction_passable=pl.col("_succ").filter(ip == True).sum().cast(pl.Int64),  # noqa: E712
    ).with_columns(
        share_successes_inaction_passable=pl.when(pl.col("n_successes") > 0)
        .then(pl.col("n_successes_inaction_passable") / pl.col("n_successes"))
    )
    return out.select(*by, *SUMMARY_FIELDS).sort(list(by))


def inaction_section(results: Any, tasks: Any = None, *, by: Sequence[str] = ("agent", "domain"),
                     infra: str = INFRA, reward: str = "reward") -> SummaryTable:  # fmt: skip
    """The report's section: :func:`inaction_summary` as a titled :class:`tauk.table.SummaryTable`.

    Examples
    --------
    >>> import tauk
    >>> print(inaction_section(tauk.load("data"), by=("domain",)).title)
    Tasks an agent passes by doing nothing
    """
    s = inaction_summary(results, tasks, by=by, infra=infra, reward=reward)
    cols = (*by, "tasks", "inaction-passable", "unknown", "pass^1 (all)", "pass^1 (substantive)",
            "successes", "on inaction-passable", "share")  # fmt: skip
    fields = (*by, "n_tasks", "n_tasks_inaction_passable", "n_tasks_inaction_unknown", "pass1", "pass1_substantive",
              "n_successes", "n_successes_inaction_passable", "share_successes_inaction_passable")  # fmt: skip
    notes = [
        "inaction-passable: an agent that calls no tool and ends the conversation normally gets reward 1 on the "
        "task (tauk.tasks.validity); substantive: every other task whose verdict is known",
        "pass^1 = mean over tasks of the trials' success rate (point estimates; intervals: tauk.stats on the "
        "trials joined to tauk.tasks.inaction_marks and filtered on substantive)",
        f"share = successes on inaction-passable tasks / all successes; infra={infra}",
    ]
    return SummaryTable.build("Tasks an agent passes by doing nothing", cols, s.select(list(fields)).rows(),
                              notes, fields=fields, keys=len(by))  # fmt: skip

"""The report's task-validity section: what the runs' scores can see.

* :func:`definitions_table` — the audit (:func:`tauk.tasks.validity`) of the task definitions the runs were graded
  with, one row per domain and set of definitions (runs embedding the same definitions share a row): tasks,
  inaction-passable, unknown, the do-nothing bound, components that pass by themselves, live and unscored NL
  assertions, unscored gold actions;
* :func:`substantive_table` — per group of a summary: pass^k on all tasks and on the substantive ones, each with its
  interval, the inaction-passable count and the share of successes on them (:mod:`tauk.stats.substantive`);
* :func:`validity_section` — both, what could not be written and why, and the lines the report's index shows.

Examples
--------
>>> import tauk
>>> res = tauk.load("data")
>>> t = definitions_table(res)
>>> [(r[0], r[2], r[3], r[4]) for r in t.rows]
[('airline', 3, 25, 2), ('retail', 3, 25, 3)]
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.stats.substantive import substantive_notes
from tauk.table import Interval, SummaryTable, markdown_escape
from tauk.tasks import validity

__all__ = ["ReportSection", "definitions_table", "substantive_table", "validity_section"]

_DEF_COLUMNS = ("task_id", "reward_basis", "communicate_info", "nl_assertions", "n_actions", "n_env_assertions",
                "user_scenario", "initial_state", "env_assertions")  # fmt: skip
"""What a run's definitions are fingerprinted by (those present): everything its grade depends on, with the gold
actions (name, arguments, requestor)."""

_COUNTS = ("n_tasks", "n_inaction_passable", "n_inaction_unknown", "do_nothing_pass1", "do_nothing_pass1_max",
           "n_no_state_change", "n_auto_communicate", "n_auto_nl_assertion", "n_nl_live", "n_nl_unscored",
           "n_tasks_unscored_actions")  # fmt: skip
_HEADERS = ("tasks", "inaction-passable", "unknown", "do-nothing pass^1", "do-nothing pass^1 (max)", "no state change",
            "COMMUNICATE auto", "NL auto", "NL live", "NL unscored", "tasks w/ unscored gold actions")  # fmt: skip


@dataclass(frozen=True)
class ReportSection:
    """What a report section writes: ``tables`` (file name, description, table), ``skipped`` (name, why) and
    ``markdown`` (lines for the report's index)."""

    tables: list[tuple[str, str, SummaryTable]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)


def _fingerprints(results: Any) -> dict[str, str]:
    """run id → a short fingerprint of its embedded definitions (``#`` + 6 hex digits)."""
    tasks = results.tasks
    cols = [c for c in _DEF_COLUMNS if c in tasks.columns]
    actions = getattr(results, "expected_actions", None)
    acols = [c for c in ("task_id", "action_idx", "name", "arguments", "requestor")
             if isinstance(actions, pl.DataFrame) and c in actions.columns]  # fmt: skip
    out = {}
    for (rid,), part in tasks.group_by("run_id", maintain_order=True):
        h = hashlib.sha256(part.select(cols).sort("task_id").write_json().encode())
        if acols:
            a = actions.filter(pl.col("run_id") == rid).select(acols)
            h.update(a.sort(acols[:2]).write_json().encode())
        out[str(rid)] = "#" + h.hexdigest()[:6]
    return out


def definitions_table(results: Any, audit: Any = None) -> SummaryTable | None:
    """The audit of the definitions the runs embed, one row per domain and set of definitions (None when no run
    embeds any); ``audit``: :func:`tauk.tasks.validity` of ``results`` if already made."""
    runs = getattr(results, "runs", None)
    tasks = getattr(results, "tasks", None)
    if not isinstance(tasks, pl.DataFrame) or tasks.height == 0 or not isinstance(runs, pl.DataFrame):
        return None
    b = (audit if audit is not None else validity(results)).bounds.filter(pl.col("split").is_null())
    fp = _fingerprints(results)
    b = b.with_columns(definitions=pl.col("task_set").replace_strict(fp, default=None))
    rows_by: dict[tuple, list] = {}
    for r in b.iter_rows(named=True):
        key = (r["domain"], r["definitions"], *(r[c] for c in _COUNTS))
        rows_by.setdefault(key, []).append(r["task_set"])
    rows = [[k[0], k[1], len(ids), *k[2:], ids[0]] for k, ids in rows_by.items()]
    without = runs.filter(~pl.col("run_id").cast(pl.String).is_in(list(fp)))
    for (dom,), part in without.group_by("domain", maintain_order=True):
        rows.append([dom, "none", part.height, *([None] * len(_COUNTS)), part["run_id"][0]])
    rows.sort(key=lambda r: (str(r[0]), str(r[1])))
    cols = ("domain", "definitions", "runs", *_HEADERS, "first run")
    fields = ("domain", "definitions", "n_runs", *_COUNTS, "first_run")
    notes = [
        "definitions: a fingerprint of the task definitions a run embeds (ids, reward basis, criteria, scenario, "
        "initial state, gold actions) — runs with the same one were graded with the same tasks; 'none': the run "
        "embeds no definitions (not known, never guessed)",
        "inaction-passable: an agent that calls no tool and ends the conversation normally gets reward 1 "
        "(tauk.tasks.validity); do-nothing pass^1 = inaction-passable / tasks, (max) counting the unknown ones too",
        "auto: the component is in the basis with an empty check list (passes for every trajectory); NL live: "
        "NL_ASSERTION in the basis with assertions (needs an LLM judge); unscored: written but not in the basis",
    ]
    return SummaryTable.build("task validity: the definitions the runs were graded with", cols, rows, notes,
                              fields=fields, keys=2)  # fmt: skip


def substantive_table(summary: Any, k: int = 1) -> SummaryTable:
    """Per group of ``summary``: pass^k on all tasks and on the substantive ones (each with its interval), the
    inaction-passable and unknown counts and the share of successes on inaction-passable tasks."""
    if "task_definitions" not in summary.groups.columns:
        raise TaukError("substantive_table takes a tauk.stats.Summary with substantive figures (summarize(...))")
    by = list(summary.by)
    labels = [c for c in ("agent", "domain") if c not in by]
    rows = []
    for r in summary.records():
        v = r["pass_hat_k"].get(str(k)) or {}
        s = v.get("substantive") or {}
        rows.append([*(r.get(c) for c in (*by, *labels)), r["n_tasks"], r["n_tasks_inaction_passable"],
                     r["n_tasks_inaction_unknown"], Interval(v.get("estimate"), v.get("ci_low"), v.get("ci_high")),
                     Interval(s.get("estimate"), s.get("ci_low"), s.get("ci_high")), s.get("n_tasks"),
                     r["share_successes_inaction_passable"]])  # fmt: skip
    cols = (*by, *labels, "tasks", "inaction-passable", "unknown", f"pass^{k} (all)", f"pass^{k} (substantive)",
            "substantive tasks", "successes on inaction-passable")  # fmt: skip
    fields = (*by, *labels, "n_tasks", "n_tasks_inaction_passable", "n_tasks_inaction_unknown", f"pass_hat_{k}",
              f"substantive_pass_hat_{k}", "substantive_n_tasks", "share_successes_inaction_passable")  # fmt: skip
    return SummaryTable.build(f"pass^{k} on all tasks and on the substantive ones", cols, rows,
                              substantive_notes(summary.groups, by), fields=fields, keys=len(by) + len(labels))  # fmt: skip


def validity_section(results: Any, summary: Any, k: int = 1, audit: Any = None) -> ReportSection:
    """The task-validity section of ``tauk report`` for ``results`` and its per agent × domain ``summary``
    (``audit``: :func:`tauk.tasks.validity` of ``results`` if already made)."""
    sec = ReportSection()
    defs = definitions_table(results, audit)
    if defs is None:
        sec.skipped.append(("task_validity", "no run embeds task definitions"))
    else:
        sec.tables.append(("task_validity", "the audit of the task definitions the runs were graded with: "
                           "inaction-passable tasks, the do-nothing bound, components that pass by themselves", defs))  # fmt: skip
    known = summary.groups.filter(pl.col("task_definitions").is_in(["embedded", "given"]))
    if known.height:
        sub = substantive_table(summary, k)
        sec.tables.append(("substantive", f"pass^{k} on all tasks beside the substantive ones (not "
                           "inaction-passable), each with its interval", sub))  # fmt: skip
    else:
        sub = None
        sec.skipped.append(("substantive", "no task definitions: which tasks are inaction-passable is not known"))
    sec.markdown.extend(["## Task validity", ""])
    if defs is not None:
        for r in defs.rows:
            if r[1] == "none":
                sec.markdown.append(f"- {markdown_escape(r[0])}: {r[2]} run(s) without task definitions (not known)")
                continue
            bound = "—" if r[6] is None else f"{r[6]:.2f}"
            if r[5] and r[7] is not None:
                bound += f" (up to {r[7]:.2f} if the unknown ones pass)"
            sec.markdown.append(
                f"- {markdown_escape(r[0])} {markdown_escape(r[1])} ({r[2]} run(s)): {r[4]} of {r[3]} tasks "
                f"inaction-passable ({r[5]} unknown) — an agent that does nothing scores pass^1 {bound}"
            )
        sec.markdown.append("")
    if sub is not None:
        sec.markdown.append(sub.to_markdown(level=3).rstrip())
        sec.markdown.append("")
    elif defs is None:
        sec.markdown.extend(["No run embeds task definitions: the do-nothing bound and the substantive figures are "
                             "not known.", ""])  # fmt: skip
    return sec

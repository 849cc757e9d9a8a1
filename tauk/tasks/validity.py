"""``tauk.tasks.validity``: what each task's score can see — inaction-passable tasks, components that pass by
themselves, gold actions and assertions that are never scored — and the do-nothing bound per task set.

A task's reward is the product, over its ``reward_basis``, of the components (docs/spec.md §2; τ²-bench's
default ``evaluation="all"``). For an agent that calls no tool and ends the conversation normally, each component:

========== ===================================================================================================
DB         passes iff no gold action changes state (the gold database is then the initial one); a gold action of
           unknown type leaves it unknown
COMMUNICATE passes iff ``communicate_info`` is empty (the check list is empty: reward 1 for any trajectory)
NL_ASSERTION passes iff ``nl_assertions`` is empty; else an LLM judge decides (some assertions a silent agent
           meets — "the agent should refuse to cancel" —, others not): unknown
ACTION     passes iff there are no gold actions (every gold action, read-only ones included, must be matched)
ENV_ASSERTION passes iff ``env_assertions`` is empty, or they hold on the initial state — known only where the
           data tell (``evidence=``), else unknown
========== ===================================================================================================

A task is **inaction-passable** when every component of its basis passes for that agent (Kleene logic: False if
one fails, null if none fails but one is unknown); a task without evaluation criteria scores 1 for every
trajectory and is inaction-passable. Which gold actions change state: :func:`tauk.tasks.classify_tools` (recorded
tool types first, then the shipped table; unknown tools are never guessed).

Examples
--------
>>> import tauk
>>> v = tauk.tasks.validity("data/baseline_airline.json")
>>> v.bounds.select("domain", "n_tasks", "n_no_state_change", "n_inaction_passable").row(0)
('airline', 25, 7, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import polars as pl

from tauk.conventions import COMPONENTS
from tauk.table import SummaryTable
from tauk.tasks._input import TaskSets, resolve
from tauk.tasks.evidence import initial_env_evidence

__all__ = ["TaskValidity", "validity"]

_AUTO_COUNT = {"COMMUNICATE": "n_communicate_info", "NL_ASSERTION": "n_nl_assertions",
               "ENV_ASSERTION": "n_env_assertions", "ACTION": "n_actions"}  # fmt: skip
"""Components whose empty check list passes for every trajectory, and the count that tells."""

TASK_FIELDS = (
    "task_set", "domain", "task_id", "basis", "n_actions", "n_state_changing_actions", "n_unknown_tool_actions",
    "no_state_change", "gold_state_unchanged", "n_communicate_info", "n_nl_assertions", "n_env_assertions", "auto_pass",
    "env_holds_initially", "inaction_passable", "inaction_fails", "inaction_unknown", "nl_live",
    "nl_unscored", "communicate_unscored", "unscored_actions", "n_unscored_actions",
)  # fmt: skip

BOUND_FIELDS = (
    "task_set", "domain", "split", "n_tasks", "n_inaction_passable", "n_inaction_unknown", "do_nothing_pass1",
    "do_nothing_pass1_max", "n_no_state_change", "n_auto_communicate", "n_auto_nl_assertion",
    "n_auto_env_assertion", "n_auto_action", "n_nl_live", "n_nl_unscored", "n_communicate_unscored",
    "n_tasks_unscored_actions", "n_tasks_unknown_tools", "n_env_holds_initially", "n_split_tasks_missing",
)  # fmt: skip


@dataclass(frozen=True)
class TaskValidity:
    """The task-validity audit. Immutable; build it with :func:`validity`.

    ``tasks``: one row per (task set, task) — the flags below; ``bounds``: one row per (task set, domain) and per
    split of it — the do-nothing bound and the counts. ``to_frame()`` is ``tasks``; ``records()`` its rows;
    ``summary()`` the bounds as a :class:`tauk.table.SummaryTable`.

    Task columns: ``basis``; ``n_actions``, ``n_state_changing_actions``, ``n_unknown_tool_actions``,
    ``no_state_change`` (no gold action changes state; null when a gold tool is unknown), ``gold_state_unchanged``
    (the gold database equals the initial one: evidence where given, else ``no_state_change``) — DB's verdict for a
    do-nothing agent; ``n_communicate_info``,
    ``n_nl_assertions``, ``n_env_assertions``; ``auto_pass`` (components of the basis with an empty check list:
    they pass for every trajectory); ``env_holds_initially`` (the ENV assertions hold on the initial state, where
    the data tell; null otherwise or without assertions); ``inaction_passable`` (bool, null = cannot tell),
    ``inaction_fails`` / ``inaction_unknown`` (the components that fail / cannot be told for a do-nothing agent);
    ``nl_live`` (NL_ASSERTION in the basis with assertions: needs an LLM judge); ``nl_unscored`` /
    ``communicate_unscored`` (assertions / communicate strings written but their component not in the basis);
    ``unscored_actions`` / ``n_unscored_actions`` (gold actions neither matched — ACTION not in the basis — nor
    state-changing: nothing checks them).
    """

    tasks: pl.DataFrame = field(repr=False)
    splits: pl.DataFrame = field(repr=False, compare=False, default_factory=pl.DataFrame)

    @cached_property
    def bounds(self) -> pl.DataFrame:
        """One row per (task set, domain) and per split of it: the do-nothing bound and the counts (made when first
        read: a summary needs only ``tasks``)."""
        return _bounds(self.tasks, self.splits)

    def to_frame(self) -> pl.DataFrame:
        """One row per (task set, task) (a copy)."""
        return self.tasks.clone()

    def records(self) -> list[dict[str, Any]]:
        """The task rows as JSON-ready dicts."""
        return self.tasks.to_dicts()

    def summary(self) -> SummaryTable:
        """The do-nothing bound per task set (whole sets; splits in ``bounds``).

        Examples
        --------
        >>> import tauk
        >>> print(tauk.tasks.validity("data/baseline_retail.json").summary().columns[:4])
        ('task set', 'domain', 'tasks', 'inaction-passable')
        """
        b = self.bounds.filter(pl.col("split").is_null())
        cols = ("task set", "domain", "tasks", "inaction-passable", "unknown", "do-nothing pass^1",
                "no state change", "COMMUNICATE auto", "NL auto", "NL live", "NL unscored",
                "tasks w/ unscored gold actions")  # fmt: skip
        fields_ = ("task_set", "domain", "n_tasks", "n_inaction_passable", "n_inaction_unknown", "do_nothing_pass1",
                   "n_no_state_change", "n_auto_communicate", "n_auto_nl_assertion", "n_nl_live", "n_nl_unscored",
                   "n_tasks_unscored_actions")  # fmt: skip
        rows = b.select(list(fields_)).rows()
        notes = [
            "inaction-passable: an agent that calls no tool and ends the conversation normally gets reward 1 "
            "(every component of the basis passes for it); do-nothing pass^1 = inaction-passable / tasks",
            "auto: the component is in the basis with an empty check list (passes for every trajectory); "
            "NL live: NL_ASSERTION in the basis with assertions (needs an LLM judge)",
            "which gold actions change state: recorded tool types, else tauk's tool table (τ²-bench "
            "decorators); unknown tools are not guessed (their tasks: 'unknown')",
        ]
        unknown = b.filter(pl.col("n_inaction_unknown") > 0)
        if unknown.height:  # the bound above counts them as failed: give the other end
            notes.append("do-nothing pass^1 counts the unknown tasks as failed; if they passed: " + "; ".join(
                f"{r['task_set']} up to {r['do_nothing_pass1_max']:.2f}" for r in unknown.iter_rows(named=True)))  # fmt: skip
        return SummaryTable.build("task validity: the do-nothing bound per task set", cols, rows, notes,
                                  fields=fields_, keys=2)  # fmt: skip

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()


def _action_stats(ts: TaskSets) -> pl.DataFrame:
    a = ts.actions
    return a.group_by("task_set", "task_id").agg(
        n_state_changing_actions=(pl.col("state_changing") == True).sum().cast(pl.Int64),  # noqa: E712
        n_unknown_tool_actions=pl.col("state_changing").is_null().sum().cast(pl.Int64),
        _readonly=pl.col("name").filter(pl.col("state_changing") == False),  # noqa: E712
    )


def validity(tasks: Any, *, domain: str | None = None, evidence: Any = "auto") -> TaskValidity:
    """Audit task definitions: per task, what its score can see; per task set (and split), the do-nothing bound.

    Parameters
    ----------
    tasks
        A task file, a folder of task files (``*_split_tasks.json`` files add per-split bounds), a list or a
        mapping ``label → file``, a ``(tasks, expected_actions)`` pair, or a ``tauk.Results`` (its embedded
        definitions: one task set per run, the run's domain and recorded tool types).
    domain
        The domain of every task (default: inferred — the run's, the task's ``user_scenario``, the file name, the
        tool table).
    evidence
        What the data tell about the initial state: a ``tauk.Results`` (simulations that changed no state record
        the ENV assertions' values on it: :func:`tauk.tasks.initial_env_evidence`); a frame ``task_set, task_id``
        with ``env_holds_initially`` and/or ``gold_state_unchanged`` (the gold actions leave the database as it
        was — e.g. from replaying an empty trajectory and the gold actions; it overrides the tool-table rule
        for DB, which cannot see a gold write that fails); None; or ``"auto"`` (default: the results themselves
        when ``tasks`` is a results set).

    Returns
    -------
    TaskValidity
        ``tasks`` (per task), ``bounds`` (per task set / split), ``summary()``.

    Examples
    --------
    >>> import tauk
    >>> v = tauk.tasks.validity("data/baseline_retail.json")
    >>> v.tasks.filter(inaction_passable=True).select("task_id", "basis", "auto_pass").rows()[0]
    ('0', ['DB', 'COMMUNICATE'], ['COMMUNICATE'])
    """
    ts = resolve(tasks, domain=domain)
    t = ts.tasks
    if isinstance(evidence, str) and evidence == "auto":
        evidence = ts.results
    ev = _evidence_frame(evidence)

    basis = pl.col("reward_basis").list.eval(pl.element().str.to_uppercase())
    t = t.select(
        "task_set", "domain", "task_id", "has_evaluation_criteria", "n_actions", "n_communicate_info",
        "n_nl_assertions", "n_env_assertions", "initial_state", "env_assertions", basis=basis,
    ).join(_action_stats(ts), on=["task_set", "task_id"], how="left")  # fmt: skip
    t = t.with_columns(
        n_state_changing_actions=pl.col("n_state_changing_actions").fill_null(0),
        n_unknown_tool_actions=pl.col("n_unknown_tool_actions").fill_null(0),
    )
    if ev is not None:
        frame, keys = ev
        join_keys = []
        for k in keys:
            if k in ("initial_state", "env_assertions"):
                t = t.with_columns(pl.col(k).fill_null("").alias(f"_k_{k}"))
                frame = frame.with_columns(pl.col(k).fill_null("")).rename({k: f"_k_{k}"})
                join_keys.append(f"_k_{k}")
            else:
                join_keys.append(k)
        t = t.join(frame, on=join_keys, how="left").drop([k for k in join_keys if k.startswith("_k_")])
    for c in ("env_holds_initially", "gold_state_unchanged"):
        if c not in t.columns:
            t = t.with_columns(pl.lit(None, pl.Boolean).alias(c))
    t = t.with_columns(
        env_holds_initially=pl.when(pl.col("n_env_assertions") > 0).then(pl.col("env_holds_initially")),
        no_state_change=pl.when(pl.col("n_state_changing_actions") > 0)
        .then(False)
        .when(pl.col("n_unknown_tool_actions") > 0)
        .then(None)
        .otherwise(True),
    ).with_columns(gold_state_unchanged=pl.coalesce("gold_state_unchanged", "no_state_change"))
    in_b = {c: pl.col("basis").list.contains(c) for c in COMPONENTS}
    # each component's verdict for a do-nothing agent (null: cannot tell)
    passes = {
        "DB": pl.col("gold_state_unchanged"),
        "COMMUNICATE": pl.col("n_communicate_info") == 0,
        "NL_ASSERTION": pl.when(pl.col("n_nl_assertions") == 0).then(True),  # else an LLM judge decides: unknown
        "ACTION": pl.col("n_actions") == 0,
        "ENV_ASSERTION": pl.when(pl.col("n_env_assertions") == 0).then(True).otherwise(pl.col("env_holds_initially")),
    }
    comp = {c: pl.when(in_b[c]).then(passes[c]).otherwise(True) for c in COMPONENTS}
    unknown_component = pl.col("basis").list.eval(pl.element().is_in(list(COMPONENTS)).not_()).list.any()
    criteria = pl.col("has_evaluation_criteria")
    verdict = pl.all_horizontal(*comp.values())
    t = t.with_columns(
        auto_pass=pl.concat_list([pl.when(in_b[c] & (pl.col(n) == 0)).then(pl.lit(c)) for c, n in _AUTO_COUNT.items()])
        .list.drop_nulls(),
        inaction_passable=pl.when(~criteria).then(True).when(unknown_component).then(None).otherwise(verdict),
        inaction_fails=pl.when(criteria).then(
            pl.concat_list([pl.when(in_b[c] & (passes[c] == False)).then(pl.lit(c)) for c in COMPONENTS])  # noqa: E712
        ).otherwise(pl.lit([], pl.List(pl.String))).list.drop_nulls(),
        inaction_unknown=pl.when(criteria).then(
            pl.concat_list([pl.when(in_b[c] & passes[c].is_null()).then(pl.lit(c)) for c in COMPONENTS])
        ).otherwise(pl.lit([], pl.List(pl.String))).list.drop_nulls(),
        nl_live=criteria & in_b["NL_ASSERTION"] & (pl.col("n_nl_assertions") > 0),
        nl_unscored=criteria & ~in_b["NL_ASSERTION"] & (pl.col("n_nl_assertions") > 0),
        communicate_unscored=criteria & ~in_b["COMMUNICATE"] & (pl.col("n_communicate_info") > 0),
        unscored_actions=pl.when(criteria & ~in_b["ACTION"])
        .then(pl.col("_readonly"))
        .otherwise(pl.lit([], pl.List(pl.String)))
        .fill_null(pl.lit([], pl.List(pl.String))),
    ).with_columns(n_unscored_actions=pl.col("unscored_actions").list.len().cast(pl.Int64))
    t = t.select(list(TASK_FIELDS)).sort("task_set", "task_id", maintain_order=True)
    return TaskValidity(t, ts.splits)


def _bounds(t: pl.DataFrame, splits: pl.DataFrame) -> pl.DataFrame:
    def agg(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        ip = pl.col("inaction_passable")
        auto = pl.col("auto_pass")
        return frame.group_by(keys, maintain_order=True).agg(
            n_tasks=pl.len().cast(pl.Int64),
            n_inaction_passable=(ip == True).sum().cast(pl.Int64),  # noqa: E712
            n_inaction_unknown=ip.is_null().sum().cast(pl.Int64),
            n_no_state_change=(pl.col("no_state_change") == True).sum().cast(pl.Int64),  # noqa: E712
            n_auto_communicate=auto.list.contains("COMMUNICATE").sum().cast(pl.Int64),
            n_auto_nl_assertion=auto.list.contains("NL_ASSERTION").sum().cast(pl.Int64),
            n_auto_env_assertion=auto.list.contains("ENV_ASSERTION").sum().cast(pl.Int64),
            n_auto_action=auto.list.contains("ACTION").sum().cast(pl.Int64),
            n_nl_live=pl.col("nl_live").sum().cast(pl.Int64),
            n_nl_unscored=pl.col("nl_unscored").sum().cast(pl.Int64),
            n_communicate_unscored=pl.col("communicate_unscored").sum().cast(pl.Int64),
            n_tasks_unscored_actions=(pl.col("n_unscored_actions") > 0).sum().cast(pl.Int64),
            n_tasks_unknown_tools=(pl.col("n_unknown_tool_actions") > 0).sum().cast(pl.Int64),
            n_env_holds_initially=(pl.col("env_holds_initially") == True).sum().cast(pl.Int64),  # noqa: E712
        ).with_columns(
            do_nothing_pass1=pl.col("n_inaction_passable") / pl.col("n_tasks"),
            do_nothing_pass1_max=(pl.col("n_inaction_passable") + pl.col("n_inaction_unknown")) / pl.col("n_tasks"),
        )

    whole = agg(t, ["task_set", "domain"]).with_columns(split=pl.lit(None, pl.String),
                                                        n_split_tasks_missing=pl.lit(0, pl.Int64))  # fmt: skip
    parts = [whole]
    if splits.height:
        sp = splits.join(t.select("task_set", "task_id", "domain"), on=["task_set", "task_id"], how="left")
        missing = sp.group_by("task_set", "split").agg(n_split_tasks_missing=pl.col("domain").is_null().sum()
                                                         .cast(pl.Int64))  # fmt: skip
        per = agg(t.join(splits, on=["task_set", "task_id"], how="inner"), ["task_set", "domain", "split"])
        per = per.join(missing, on=["task_set", "split"], how="left")
        # a split whose tasks are not all defined here has no bound (its counts cover only the defined ones)
        per = per.with_columns(
            [pl.when(pl.col("n_split_tasks_missing") == 0).then(pl.col(c)).alias(c)
             for c in ("do_nothing_pass1", "do_nothing_pass1_max")]  # fmt: skip
        )
        parts.append(per)
    out = pl.concat([p.select(list(BOUND_FIELDS)) for p in parts], how="vertical_relaxed")
    return out.sort("task_set", pl.col("split").is_not_null(), "split", maintain_order=True)


def _evidence_frame(evidence: Any) -> tuple[pl.DataFrame, list[str]] | None:
    """The evidence as a frame and its join keys: ``task_set, task_id`` when it names the task sets (e.g. from
    replaying an empty trajectory on the audited definitions), else ``task_id, initial_state, env_assertions``
    (recorded simulations of the same definitions)."""
    from tauk.errors import TaukError

    if evidence is None:
        return None
    verdicts = ("env_holds_initially", "gold_state_unchanged")
    if isinstance(evidence, pl.DataFrame):
        have = [c for c in verdicts if c in evidence.columns]
        if "task_id" not in evidence.columns or not have:
            raise TaukError("evidence= frame needs task_id and env_holds_initially and/or gold_state_unchanged "
                            f"(with task_set, or initial_state / env_assertions, to match definitions); got "
                            f"{evidence.columns}")  # fmt: skip
        if "gold_state_unchanged" in have and "task_set" not in evidence.columns:
            raise TaukError("evidence= gold_state_unchanged needs a task_set column (gold actions differ between "
                            "versions of a task)")  # fmt: skip
        ev = evidence.with_columns(pl.col("task_id").cast(pl.String))
    elif isinstance(evidence, Mapping) or hasattr(evidence, "trials"):
        ev, have = initial_env_evidence(evidence), ["env_holds_initially"]
    else:
        raise TaukError(f"evidence= takes a tauk.Results, a frame or None, not {type(evidence).__name__}")
    if "task_set" in ev.columns:
        keys = ["task_set", "task_id"]
    else:
        keys = ["task_id", "initial_state", "env_assertions"]
        for c in ("initial_state", "env_assertions"):
            if c not in ev.columns:
                ev = ev.with_columns(pl.lit(None, pl.String).alias(c))
    # one verdict per definition; definitions whose evidence disagrees are not told
    return ev.group_by(keys).agg(
        [pl.when(pl.col(c).drop_nulls().n_unique() == 1).then(pl.col(c).drop_nulls().first()).alias(c) for c in have]
    ), keys

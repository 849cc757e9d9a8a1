"""Is a re-grade valid? What changed between the task definitions a run was graded with and new ones, and which
(run, task) pairs can be re-graded offline.

:func:`task_changes` compares two versions of a task set, task by task. :func:`regrade_eligibility` classifies every
(run, task) of a results set against new definitions (the run's embedded definitions are the old ones):

================ =====================================================================================================
``unchanged``    nothing the grade or the conversation depends on changed: the re-grade is the grade
``regradable``   re-gradable offline: every component of the new basis is recomputed (``recomputable``: COMMUNICATE
                 and ACTION from the trajectory), passes for every trajectory (an empty check list), or is carried
                 validly from the record (its definition is unchanged and the record has its verdict)
``needs_replay`` DB or ENV_ASSERTION is in the new basis and cannot be carried: the gold state moved (the
                 state-changing gold actions changed, or a gold tool is of unknown type), the assertions changed, or
                 the record has no verdict — it needs the environment replayed
``needs_judge``  NL_ASSERTION with assertions is in the new basis and the record has no verdict for these assertions:
                 it needs an LLM judge
``not_comparable`` the user scenario or the initial state changed (the old trajectory is of another task), the task
                 is missing from either version, the record was graded with other gold actions than the run embeds
                 (its action checks name them: ``tasks.graded_as_embedded`` is false), the run has no trajectory for
                 a changed COMMUNICATE / ACTION, or a component is unknown
================ =====================================================================================================

The classes are ordered: a pair that needs both replay and a judge is ``needs_judge``. With replay
(``recomputable=(*RECOMPUTED_OFFLINE, "DB", "ENV_ASSERTION")``) ``needs_replay`` becomes ``regradable``. Runs of
another domain than the new definitions raise :class:`tauk.TaukError`.

Examples
--------
>>> import tauk
>>> ch = tauk.tasks.task_changes("data/baseline_airline.json", "data/baseline_airline.json")
>>> ch.select(pl.col("changed").sum()).item()
0
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import polars as pl

from tauk.conventions import COMPONENTS
from tauk.errors import EvaluationError, TaukError
from tauk.tasks._input import TaskSets, resolve

__all__ = ["RECOMPUTED_OFFLINE", "REGRADE_CLASSES", "REGRADED", "regrade_eligibility", "task_changes"]

REGRADE_CLASSES = ("unchanged", "regradable", "needs_replay", "needs_judge", "not_comparable")
"""The re-grade classes, from the best to the worst."""

REGRADED = ("unchanged", "regradable")
"""The classes whose re-graded reward is reported."""

RECOMPUTED_OFFLINE = ("COMMUNICATE", "ACTION")
"""The components tauk recomputes from a trajectory without an environment or a judge."""

CHANGE_FIELDS = (
    "task_set", "task_id", "domain", "domain_new", "in_new", "scenario_changed", "initial_state_changed",
    "gold_actions_changed", "gold_state_changed", "env_assertions_changed", "communicate_changed",
    "nl_assertions_changed", "basis_changed", "criteria_changed", "changed",
)  # fmt: skip

_EMPTY = pl.lit([], pl.List(pl.String))


def _action_keys(ts: TaskSets) -> pl.DataFrame:
    """Per task: the gold actions as one comparable string, and the state-changing ones (unknown included)."""
    a = ts.actions
    if "compare_args" not in a.columns:
        a = a.with_columns(compare_args=pl.lit(None, pl.List(pl.String)))
    one = pl.concat_str(
        [
            pl.col("name").fill_null(""),
            pl.col("arguments").fill_null("{}"),
            pl.col("requestor").fill_null("assistant"),
            pl.when(pl.col("compare_args").is_null()).then(pl.lit("~"))
            .otherwise(pl.col("compare_args").list.join("\x1f")),
        ],
        separator="\x1e",
    )  # fmt: skip
    return (
        a.sort("task_set", "task_id", "action_idx")
        .with_columns(_one=one, _sc=pl.col("state_changing") != False)  # noqa: E712 (null: unknown, kept)
        .group_by("task_set", "task_id", maintain_order=True)
        .agg(
            _actions=pl.col("_one").str.join("\x1d"),
            _state=pl.col("_one").filter(pl.col("_sc").fill_null(True)).str.join("\x1d"),
            _unknown=pl.col("state_changing").is_null().any(),
        )
    )


def _task_keys(ts: TaskSets) -> pl.DataFrame:
    t = ts.tasks
    return t.select(
        "task_set", "task_id", "domain",
        _scenario="user_scenario", _initial="initial_state",
        _env=pl.col("env_assertions").fill_null("[]"),
        _comm=pl.col("communicate_info").fill_null(_EMPTY),
        _nl=pl.col("nl_assertions").fill_null(_EMPTY),
        _basis=pl.col("reward_basis").list.eval(pl.element().str.to_uppercase()).list.unique().list.sort(),
        _criteria="has_evaluation_criteria",
        _complete="_complete",
        _graded=pl.col("graded_as_embedded") if "graded_as_embedded" in t.columns else pl.lit(None, pl.Boolean),
        _n_env="n_env_assertions", _n_nl="n_nl_assertions", _n_comm="n_communicate_info", _n_actions="n_actions",
    ).join(_action_keys(ts), on=["task_set", "task_id"], how="left").with_columns(
        _actions=pl.col("_actions").fill_null(""), _state=pl.col("_state").fill_null(""),
        _unknown=pl.col("_unknown").fill_null(False),
    )  # fmt: skip


def _one_set(ts: TaskSets, what: str) -> TaskSets:
    sets = ts.tasks.get_column("task_set").unique().to_list()
    if len(sets) != 1:
        raise TaukError(f"{what}: give one task set (a task file, a frame pair), not {len(sets)}: {sorted(sets)[:5]}")
    return ts


def _compare(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    new = new.drop("task_set").rename({c: f"{c}_new" for c in new.columns if c not in ("task_set", "task_id")})
    j = old.join(new, on="task_id", how="left").with_columns(in_new=pl.col("_criteria_new").is_not_null())

    def diff(c: str) -> pl.Expr:
        return pl.when(pl.col("in_new")).then(pl.col(c) != pl.col(f"{c}_new"))

    def diff_nullable(c: str) -> pl.Expr:  # null = null is "unchanged"; a frame without the column: unknown
        known = pl.col("_complete") & pl.col("_complete_new")
        return pl.when(pl.col("in_new") & known).then(pl.col(c).ne_missing(pl.col(f"{c}_new")))

    state_moved = pl.col("_state") != pl.col("_state_new")
    return j.with_columns(
        scenario_changed=diff_nullable("_scenario"),
        initial_state_changed=diff_nullable("_initial"),
        gold_actions_changed=diff("_actions"),
        gold_state_changed=pl.when(pl.col("in_new")).then(
            pl.when(~state_moved).then(False).when(pl.col("_unknown") | pl.col("_unknown_new")).then(None)
            .otherwise(True)
        ),
        env_assertions_changed=diff("_env"),
        communicate_changed=diff("_comm"),
        nl_assertions_changed=diff("_nl"),
        basis_changed=diff("_basis"),
        criteria_changed=diff("_criteria"),
    ).with_columns(  # fmt: skip
        changed=pl.when(pl.col("in_new")).then(
            pl.any_horizontal(
                "scenario_changed", "initial_state_changed", "gold_actions_changed", "env_assertions_changed",
                "communicate_changed", "nl_assertions_changed", "basis_changed", "criteria_changed",
            )
        )
    )  # fmt: skip


def task_changes(old: Any, new: Any, *, domain: str | None = None) -> pl.DataFrame:
    """What changed, task by task, from ``old`` to ``new`` definitions (each: a task file, frames, a results set).

    Returns one row per task of ``old`` (per run for a results set): ``task_set``, ``task_id``, ``domain``,
    ``domain_new``, ``in_new``, and, null where ``in_new`` is False: ``scenario_changed`` (``user_scenario``),
    ``initial_state_changed``, ``gold_actions_changed`` (name, arguments, requestor or compare_args of any gold
    action), ``gold_state_changed`` (the state-changing gold actions, in order; null when a gold tool's type is
    unknown and the lists differ), ``env_assertions_changed``, ``communicate_changed``, ``nl_assertions_changed``,
    ``basis_changed`` (as sets), ``criteria_changed`` (evaluation criteria present or not), ``changed`` (any of
    them). Descriptions are not compared (they do not grade).

    Examples
    --------
    >>> import tauk
    >>> ch = task_changes("data/baseline_retail.json", "data/baseline_retail.json")
    >>> ch.height, ch.get_column("in_new").all()
    (25, True)
    """
    o = resolve(old, domain=domain)
    n = _one_set(resolve(new, domain=domain), "task_changes(new)")
    return _compare(_task_keys(o), _task_keys(n)).select(list(CHANGE_FIELDS))


def _trial_evidence(results: Any) -> pl.DataFrame:
    """Per (run, task): which recorded verdicts exist and whether every simulation has its trajectory."""
    trials = results.get("trials") if isinstance(results, Mapping) else getattr(results, "trials", None)
    if not isinstance(trials, pl.DataFrame):
        raise TaukError("regrade_eligibility needs a results set with a trials frame")

    def has(c: str) -> pl.Expr:
        return pl.col(c).is_not_null().any() if c in trials.columns else pl.lit(False)

    msgs = pl.col("n_messages").is_not_null().all() if "n_messages" in trials.columns else pl.lit(False)
    return trials.group_by(pl.col("run_id").cast(pl.String), pl.col("task_id").cast(pl.String)).agg(
        _rec_DB=has("recorded_db"), _rec_ENV_ASSERTION=has("recorded_env_assertion"),
        _rec_NL_ASSERTION=has("recorded_nl_assertion"), _rec_COMMUNICATE=has("recorded_communicate"),
        _rec_ACTION=has("recorded_action"), _trajectory=msgs, n_simulations=pl.len().cast(pl.Int64),
    )  # fmt: skip


def _check_domains(results: Any, new_domain: str | None, old: TaskSets) -> None:
    runs = results.get("runs") if isinstance(results, Mapping) else getattr(results, "runs", None)
    if new_domain is None:
        return
    if isinstance(runs, pl.DataFrame) and "domain" in runs.columns:
        bad = runs.filter(pl.col("domain").is_not_null() & (pl.col("domain") != new_domain))
        pairs = bad.select("run_id", "domain").rows()
    else:
        bad = old.tasks.filter(pl.col("domain").is_not_null() & (pl.col("domain") != new_domain))
        pairs = bad.select("task_set", "domain").unique().rows()
    if pairs:
        shown = "; ".join(f"{r} is {d}" for r, d in pairs[:5])
        raise EvaluationError(f"re-grading with {new_domain} task definitions, but {shown}: these are another "
                              "domain's tasks (a domain's runs are graded only with that domain's tasks)")  # fmt: skip


def regrade_eligibility(results: Any, tasks: Any, *, recomputable: Collection[str] = RECOMPUTED_OFFLINE,
                        domain: str | None = None) -> pl.DataFrame:  # fmt: skip
    """Classify every (run, task) of ``results`` for a re-grade against ``tasks`` (see the module's table).

    Parameters
    ----------
    results
        A ``tauk.Results`` (or frames ``runs``, ``trials``, ``tasks``, ``expected_actions``): the runs and the
        definitions they were graded with.
    tasks
        The new definitions: a task file, a ``(tasks, expected_actions)`` pair, a tasks frame or a results set
        (one task set).
    recomputable
        The components that can be recomputed for a trajectory (default :data:`RECOMPUTED_OFFLINE`; add
        ``"DB"``, ``"ENV_ASSERTION"`` where the environment can be replayed, ``"NL_ASSERTION"`` with a judge).
    domain
        The domain of the new definitions when it cannot be inferred.

    Returns
    -------
    polars.DataFrame
        ``run_id, task_id, n_simulations, regrade_class, regrade_reason`` and the components each needs:
        ``carried`` (taken from the record), ``recomputed``, ``automatic`` (empty check list), ``blocked``
        (what stops the re-grade), plus the :func:`task_changes` flags.

    Raises
    ------
    EvaluationError
        A run of another domain than the new definitions (an :class:`EvaluationError` is a :class:`TaukError`).

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data/baseline_airline.json")
    >>> e = regrade_eligibility(res, "data/baseline_airline.json")
    >>> e.group_by("regrade_class").len().rows()
    [('unchanged', 25)]
    """
    recomputable = {str(c).upper() for c in recomputable}
    unknown = recomputable - set(COMPONENTS)
    if unknown:
        raise TaukError(f"recomputable names unknown component(s) {sorted(unknown)}; known: {', '.join(COMPONENTS)}")
    old = resolve(results)
    new = _one_set(resolve(tasks, domain=domain), "regrade_eligibility(tasks=)")
    domains = new.tasks.get_column("domain").drop_nulls().unique().to_list()
    _check_domains(results, domains[0] if len(domains) == 1 else None, old)
    ch = _compare(_task_keys(old), _task_keys(new)).rename({"task_set": "run_id"})
    ev = _trial_evidence(results)
    j = ev.join(ch, on=["run_id", "task_id"], how="left").with_columns(
        _defined_old=pl.col("in_new").is_not_null(), in_new=pl.col("in_new").fill_null(False)
    )
    # the trials' task ids the new definitions lack, where the run itself embeds no definition of them
    new_ids = new.tasks.select("task_id", _in_new2=pl.lit(True))
    j = j.join(new_ids, on="task_id", how="left").with_columns(in_new=pl.col("in_new") | pl.col("_in_new2").fill_null(False))

    basis_new = pl.col("_basis_new").fill_null(_EMPTY)
    empty_new = {
        "COMMUNICATE": pl.col("_n_comm_new") == 0, "NL_ASSERTION": pl.col("_n_nl_new") == 0,
        "ENV_ASSERTION": pl.col("_n_env_new") == 0, "ACTION": pl.col("_n_actions_new") == 0, "DB": pl.lit(False),
    }  # fmt: skip
    same = {
        "DB": pl.col("gold_state_changed") == False,  # noqa: E712
        "ENV_ASSERTION": pl.col("env_assertions_changed") == False,  # noqa: E712
        "NL_ASSERTION": pl.col("nl_assertions_changed") == False,  # noqa: E712
        "COMMUNICATE": pl.col("communicate_changed") == False,  # noqa: E712
        "ACTION": pl.col("gold_actions_changed") == False,  # noqa: E712
    }
    status = {}
    for c in COMPONENTS:
        in_basis = basis_new.list.contains(c)
        carried = (same[c] & pl.col(f"_rec_{c}")).fill_null(False)
        recomputed = pl.lit(c in recomputable) & (pl.col("_trajectory") | pl.lit(c not in RECOMPUTED_OFFLINE))
        status[c] = (
            pl.when(~in_basis).then(None)
            .when(empty_new[c].fill_null(False)).then(pl.lit("automatic"))
            .when(carried).then(pl.lit("carried"))
            .when(recomputed).then(pl.lit("recomputed"))
            .otherwise(pl.lit("blocked"))
        )  # fmt: skip
    j = j.with_columns(**{f"_st_{c}": status[c] for c in COMPONENTS})

    def listed(kind: str) -> pl.Expr:
        return pl.concat_list([pl.when(pl.col(f"_st_{c}") == kind).then(pl.lit(c)) for c in COMPONENTS]).list.drop_nulls()

    blocked = listed("blocked")
    unknown_comp = basis_new.list.eval(pl.element().is_in(list(COMPONENTS)).not_()).list.any()
    cls = (
        pl.when(~pl.col("in_new")).then(pl.lit("not_comparable"))
        .when(~pl.col("_defined_old")).then(pl.lit("not_comparable"))
        .when(pl.col("_graded") == False).then(pl.lit("not_comparable"))  # noqa: E712
        .when(pl.col("scenario_changed").fill_null(True) | pl.col("initial_state_changed").fill_null(True))
        .then(pl.lit("not_comparable"))
        .when(unknown_comp).then(pl.lit("not_comparable"))
        .when(~pl.col("changed")).then(pl.lit("unchanged"))
        .when(blocked.list.contains("COMMUNICATE") | blocked.list.contains("ACTION")).then(pl.lit("not_comparable"))
        .when(blocked.list.contains("NL_ASSERTION")).then(pl.lit("needs_judge"))
        .when(blocked.list.contains("DB") | blocked.list.contains("ENV_ASSERTION")).then(pl.lit("needs_replay"))
        .otherwise(pl.lit("regradable"))
    )  # fmt: skip
    why_blocked = {
        "DB": pl.when(pl.col("gold_state_changed").is_null()).then(pl.lit("DB: a gold tool of unknown type changed"))
        .when(pl.col("gold_state_changed")).then(pl.lit("DB: the state-changing gold actions changed"))
        .otherwise(pl.lit("DB: no recorded verdict")),
        "ENV_ASSERTION": pl.when(pl.col("env_assertions_changed")).then(pl.lit("ENV_ASSERTION: assertions changed"))
        .otherwise(pl.lit("ENV_ASSERTION: no recorded verdict")),
        "NL_ASSERTION": pl.when(pl.col("nl_assertions_changed")).then(pl.lit("NL_ASSERTION: assertions changed"))
        .otherwise(pl.lit("NL_ASSERTION: no recorded verdict")),
        "COMMUNICATE": pl.lit("COMMUNICATE changed and no trajectory is recorded"),
        "ACTION": pl.lit("ACTION changed and no trajectory is recorded"),
    }  # fmt: skip
    blocked_text = pl.concat_str(
        [pl.when(pl.col(f"_st_{c}") == "blocked").then(why_blocked[c]) for c in COMPONENTS],
        separator="; ", ignore_nulls=True,
    )  # fmt: skip
    reason = (
        pl.when(~pl.col("in_new")).then(pl.lit("not in the new task definitions"))
        .when(~pl.col("_defined_old")).then(pl.lit("the run embeds no definition of this task to compare with"))
        .when(pl.col("_graded") == False)  # noqa: E712
        .then(pl.lit("the record was graded with other gold actions than the run embeds (its action checks name them)"))
        .when(pl.col("scenario_changed").is_null()).then(pl.lit("cannot tell whether the user scenario changed"))
        .when(pl.col("scenario_changed")).then(pl.lit("the user scenario changed"))
        .when(pl.col("initial_state_changed").fill_null(True)).then(pl.lit("the initial state changed"))
        .when(unknown_comp).then(pl.lit("the new basis names an unknown component"))
        .when(~pl.col("changed")).then(pl.lit("definitions equal"))
        .when(blocked.list.len() > 0).then(blocked_text)
        .otherwise(pl.concat_str(
            [pl.when(listed(k).list.len() > 0).then(pl.lit(f"{k}: ") + listed(k).list.join(", "))
             for k in ("recomputed", "carried", "automatic")], separator="; ", ignore_nulls=True))
    )  # fmt: skip
    out = j.with_columns(
        regrade_class=cls, regrade_reason=reason, carried=listed("carried"), recomputed=listed("recomputed"),
        automatic=listed("automatic"), blocked=blocked,
    ).select(
        "run_id", "task_id", "n_simulations", "regrade_class", "regrade_reason", "carried", "recomputed", "automatic",
        "blocked", *[c for c in CHANGE_FIELDS if c not in ("task_set", "task_id")],
    )  # fmt: skip
    return out.sort("run_id", "task_id")

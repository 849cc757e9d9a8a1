"""Where the data tell whether a task's ENV assertions hold on its initial state: recorded simulations that
changed no state.

A simulation whose every tool call (agent and user side) is known not to change state ends in the task's initial
state (initialisation data and actions applied), so the ENV assertions recorded for it are their values on that
state. Calls of unknown tools make a simulation no evidence; so do simulations without a recorded ENV verdict or
without readable tool calls. (Replaying an empty trajectory — ``tauk.replay`` where τ²-bench is installed —
tells the same for every task; pass its verdicts to :func:`tauk.tasks.validity` as an ``evidence=`` frame.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from tauk.conventions import SUCCESS_TOL
from tauk.tasks.tools import classify_tools

__all__ = ["initial_env_evidence"]

_SCHEMA = {"run_id": pl.String, "simulation_id": pl.String, "task_id": pl.String, "initial_state": pl.String,
           "env_assertions": pl.String, "env_holds_initially": pl.Boolean}  # fmt: skip


def _frame(results: Any, name: str) -> pl.DataFrame | None:
    v = results.get(name) if isinstance(results, Mapping) else getattr(results, name, None)
    return v if isinstance(v, pl.DataFrame) else None


def initial_env_evidence(results: Any) -> pl.DataFrame:
    """``run_id, simulation_id, task_id, initial_state, env_assertions, env_holds_initially`` — one row per
    simulation that changed no state and records an ENV verdict for a task with ENV assertions.

    Examples
    --------
    >>> import tauk
    >>> initial_env_evidence(tauk.load("data")).height  # the sample has no ENV assertions
    0
    """
    trials, tasks = _frame(results, "trials"), _frame(results, "tasks")
    empty = pl.DataFrame(schema=_SCHEMA)
    if trials is None or tasks is None or "recorded_env_assertion" not in trials.columns:
        return empty
    defs = tasks.select(
        pl.col("run_id").cast(pl.String),
        pl.col("task_id").cast(pl.String),
        pl.col("initial_state") if "initial_state" in tasks.columns else pl.lit(None, pl.String).alias("initial_state"),
        pl.col("env_assertions") if "env_assertions" in tasks.columns else pl.lit(None, pl.String).alias("env_assertions"),
        "n_env_assertions",
    ).unique(subset=["run_id", "task_id"], keep="first")
    calls_n = pl.col("n_tool_calls") if "n_tool_calls" in trials.columns else pl.lit(None, pl.Int64)
    cand = (
        trials.select(
            pl.col("run_id").cast(pl.String), pl.col("simulation_id").cast(pl.String),
            pl.col("task_id").cast(pl.String),
            domain=pl.col("domain") if "domain" in trials.columns else pl.lit(None, pl.String),
            env=pl.col("recorded_env_assertion"), n_calls=calls_n,
        )
        .join(defs, on=["run_id", "task_id"], how="inner")
        .filter(pl.col("env").is_not_null() & (pl.col("n_env_assertions") > 0) & pl.col("n_calls").is_not_null())
    )  # fmt: skip
    if cand.height == 0:
        return empty
    with_calls = cand.filter(pl.col("n_calls") > 0)
    changed = pl.DataFrame(schema={"run_id": pl.String, "simulation_id": pl.String, "_no_change": pl.Boolean})
    if with_calls.height:
        calls = _frame(results, "tool_calls")
        if calls is None:
            cand = cand.filter(pl.col("n_calls") == 0)
        else:
            calls = calls.join(with_calls.select("run_id", "simulation_id", "domain"),
                               on=["run_id", "simulation_id"], how="inner")  # fmt: skip
            actions = _frame(results, "expected_actions")
            recorded = None
            if actions is not None and "tool_type" in actions.columns:
                recorded = actions.select("run_id", "name", "tool_type")
            calls = classify_tools(calls, recorded=recorded)
            changed = calls.group_by("run_id", "simulation_id").agg(  # an unknown tool (null) may have changed it
                _no_change=(pl.col("state_changing") == False).fill_null(False).all()  # noqa: E712
            )
    out = cand.join(changed, on=["run_id", "simulation_id"], how="left").filter(
        (pl.col("n_calls") == 0) | pl.col("_no_change").fill_null(False)
    )
    return out.select(
        "run_id", "simulation_id", "task_id", "initial_state", "env_assertions",
        env_holds_initially=pl.col("env") >= 1.0 - SUCCESS_TOL,
    )  # fmt: skip

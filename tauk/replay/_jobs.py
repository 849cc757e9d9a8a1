"""From tauk's frames to replay jobs: which simulations can be replayed, their task definitions and messages.

Everything decided here is decided without τ²-bench (Polars over the frames); what needs an environment (is there
one for this domain? does the trajectory pair up?) is decided by the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.conventions import NORMAL_ENDINGS
from tauk.errors import TaukError
from tauk.replay._engine import Job, Outcome, TaskDef

__all__ = ["Plan", "plan"]

TRIAL_COLUMNS = ("run_id", "simulation_id", "task_id", "domain", "format", "termination_reason", "mode",
                 "agent_implementation", "user_implementation", "n_messages", "n_tool_calls", "n_ticks")  # fmt: skip
MESSAGE_COLUMNS = ("run_id", "simulation_id", "message_idx", "role", "content", "n_tool_calls", "tool_call_id")
"""The columns of ``messages`` replay reads."""
TASK_COLUMNS = ("initial_state", "env_assertions", "actions_null")
"""The columns of ``tasks`` replay needs beyond the scoring ones (stores written before replay lack them)."""


def _get(results: Any, name: str) -> Any:
    return results.get(name) if isinstance(results, Mapping) else getattr(results, name, None)


def _frame(results: Any, name: str) -> pl.DataFrame:
    v = _get(results, name)
    if not isinstance(v, pl.DataFrame):
        raise TaukError(f"tauk.replay needs a tauk.Results (or an object/mapping with a `{name}` Polars frame); "
                        f"got {type(results).__name__} without `{name}`")  # fmt: skip
    return v


def _tick_frames(results: Any) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """The ``ticks`` and ``tick_tool_calls`` frames (None where the results hold no ticks: a store)."""
    try:
        ticks, calls = _get(results, "ticks"), _get(results, "tick_tool_calls")
    except AttributeError:  # pragma: no cover - an object without them
        return None
    if isinstance(ticks, pl.DataFrame) and isinstance(calls, pl.DataFrame) and "paired" in calls.columns:
        return ticks, calls
    return None


def _tick_messages(calls: pl.DataFrame) -> dict[tuple[str, str], tuple]:
    """Per simulation, the messages τ²-bench's full-duplex environment evaluator replays
    (``FullDuplexEnvironmentEvaluator.ticks_to_message_history``): per tick, the user's tool calls as one message
    followed by its tool results, then the agent's likewise. A side whose results do not answer its calls one to
    one, in order, is followed by a tool message that says so: ``Environment.set_state`` then raises on it as it
    raises on the recorded results (the simulation fails, as τ²-bench's evaluation does)."""
    out: dict[tuple[str, str], list] = {}
    rows = calls.sort("run_id", "simulation_id", "call_idx").select(
        "run_id", "simulation_id", "tick_idx", "role", "tool_call_id", "name", "arguments", "requestor", "result",
        "paired").iter_rows()  # fmt: skip
    group: list = []
    key = None

    def flush() -> None:
        if not group:
            return
        rid, sid, tick, role = key
        msgs = out.setdefault((rid, sid), [])
        msgs.append((role, None, None, tuple((c[0], c[1], c[2], c[3]) for c in group)))
        if all(c[5] for c in group):
            msgs.extend(("tool", c[4], c[0], ()) for c in group)
        else:
            side = "agent" if role == "assistant" else "user"
            msgs.append(("tool", None, f"<the {side}'s tool results recorded in tick {tick} do not answer its tool "
                                       "calls one to one, in order>", ()))  # fmt: skip

    for rid, sid, tick, role, cid, name, args, requestor, result, paired in rows:
        k = (rid, sid, tick, role)
        if k != key:
            flush()
            group, key = [], k
        group.append((cid, name, args, requestor, result, paired))
    flush()
    return {k: tuple(v) for k, v in out.items()}


def _messages(results: Any) -> pl.DataFrame:
    pick = getattr(results, "message_columns", None)
    if callable(pick) and not isinstance(results, Mapping):
        return pick(MESSAGE_COLUMNS)
    m = _frame(results, "messages")
    return m.select([c for c in MESSAGE_COLUMNS if c in m.columns])


@dataclass
class Plan:
    """The jobs for the engine, the task definitions they name, and the outcomes decided without replaying."""

    keys: pl.DataFrame  # run_id, simulation_id, task_id in the order of the trials
    jobs: list[Job]
    tasks: dict[str, TaskDef]
    decided: list[Outcome]


def _tasks_for(results: Any, tasks: Any) -> tuple[pl.DataFrame, pl.DataFrame | None, list[str]]:
    if tasks is None:
        return _frame(results, "tasks"), _get(results, "expected_actions"), ["run_id", "task_id"]
    from tauk.io.load import load_tasks

    if isinstance(tasks, str) or hasattr(tasks, "__fspath__"):
        t, a = load_tasks(tasks)
    elif isinstance(tasks, pl.DataFrame):
        t, a = tasks, None
    elif isinstance(tasks, tuple | list) and len(tasks) == 2:
        t, a = tasks
    elif isinstance(_get(tasks, "tasks"), pl.DataFrame):
        t, a = _get(tasks, "tasks"), _get(tasks, "expected_actions")
    else:
        raise TaukError("tasks= takes a task file path, a tasks frame, a (tasks, expected_actions) pair or a "
                        f"tauk.Results; got {type(tasks).__name__}")  # fmt: skip
    return t, a, ["task_id"]


def plan(results: Any, tasks: Any = None) -> Plan:
    """The replay jobs of ``results`` (optionally against other task definitions ``tasks``)."""
    trials = _frame(results, "trials")
    cols = [c for c in TRIAL_COLUMNS if c in trials.columns]
    tr = trials.select(cols).with_row_index("_pos").with_columns(pl.col("task_id").cast(pl.String))
    for c in TRIAL_COLUMNS:
        if c not in tr.columns:
            tr = tr.with_columns(pl.lit(None, pl.Int64 if c.startswith("n_") else pl.String).alias(c))
    t, a, keys = _tasks_for(results, tasks)
    missing = [c for c in TASK_COLUMNS if c not in t.columns]
    t = t.with_columns(pl.col("task_id").cast(pl.String)).unique(subset=keys, keep="first", maintain_order=True)
    if a is None or missing:
        t = t.with_columns(_defs_missing=pl.lit(True))
    else:
        t = t.with_columns(_defs_missing=pl.lit(False))
    if missing:
        t = t.with_columns(*[pl.lit(None).alias(c) for c in missing])
    t = t.with_row_index("_tid")
    tr = tr.join(t.select(*keys, "_tid"), on=keys, how="left", maintain_order="left")
    # full-duplex (voice) runs: their tool calls are in ticks, replayed as τ²-bench's full-duplex evaluator does
    tr = tr.with_columns(_fd=((pl.col("mode") == "full_duplex")
                              | (pl.col("user_implementation") == "voice_streaming_user_simulator")).fill_null(False))
    ticks = _tick_frames(results) if tr["_fd"].any() else None
    if ticks is not None:
        read = ticks[0].group_by("run_id", "simulation_id").len("_n_ticks_read")
        tr = tr.join(read, on=["run_id", "simulation_id"], how="left", maintain_order="left")
    else:
        tr = tr.with_columns(_n_ticks_read=pl.lit(None, pl.UInt32))

    # what is decided without an environment
    reason = (
        pl.when(pl.col("format") == "taubench")
        .then(pl.lit("a τ-bench (v1) run: τ²-bench's environments do not replay τ-bench trajectories"))
        .when(pl.col("domain").is_null())
        .then(pl.lit("the run names no domain"))
        .when(pl.col("_tid").is_null())
        .then(pl.lit("the task definition is missing" + (" from the given task definitions" if keys == ["task_id"]
                                                          else " from the results")))  # fmt: skip
        .when(pl.col("_fd") & pl.lit(ticks is None))
        .then(pl.lit("a full-duplex (voice) run whose ticks are not held here (a store keeps no ticks: replay the "
                     "loaded files)"))
        .when(pl.col("_fd") & pl.col("n_ticks").is_null())
        .then(pl.lit("a full-duplex (voice) run with no ticks recorded"))
        .when(pl.col("_fd") & (pl.col("_n_ticks_read").fill_null(0) != pl.col("n_ticks")))
        .then(pl.lit("a full-duplex (voice) run whose ticks could not be read (see the load report)"))
        .when(pl.col("_fd"))
        .then(pl.lit(None, pl.String))
        .when(pl.col("n_messages").is_null())
        .then(pl.lit("no messages recorded"))
        .when(pl.col("n_tool_calls").is_null())
        .then(pl.lit("some tool calls could not be read (see the load report)"))
    )
    gate = pl.col("termination_reason").is_in(list(NORMAL_ENDINGS)).fill_null(False)
    tr = tr.with_columns(_why=reason).join(
        t.select("_tid", "_defs_missing", "has_evaluation_criteria"), on="_tid", how="left", maintain_order="left"
    ).with_columns(
        _why=pl.when(pl.col("_why").is_null() & pl.col("_defs_missing").fill_null(False)).then(
            pl.lit("the task definitions lack initial_state / env_assertions / gold actions (a store ingested "
                   "before replay existed: ingest it again)")  # fmt: skip
        ).otherwise(pl.col("_why")),
        _not_eval=pl.when(~gate).then(
            pl.lit("terminated by ") + pl.col("termination_reason").fill_null("unknown")
            + pl.lit(": τ²-bench evaluates no environment")
        ).when(~pl.col("has_evaluation_criteria").fill_null(True)).then(pl.lit("the task has no evaluation criteria")),
    )
    decided: list[Outcome] = []
    for pos, why, not_eval in tr.filter(pl.col("_why").is_not_null() | pl.col("_not_eval").is_not_null()).select(
        "_pos", "_why", "_not_eval"
    ).iter_rows():
        if why is not None:
            decided.append(Outcome(pos, "not_replayable", why))
        else:
            decided.append(Outcome(pos, "not_evaluated", not_eval))
    todo = tr.filter(pl.col("_why").is_null() & pl.col("_not_eval").is_null())
    keys_frame = trials.select("run_id", "simulation_id", pl.col("task_id").cast(pl.String))
    if todo.height == 0:
        return Plan(keys_frame, [], {}, decided)

    # task definitions, per (definition, domain)
    need = todo.select("_tid", "domain").unique()
    defs: dict[tuple[int, str], TaskDef] = {}
    acts: dict[int, list[tuple]] = {}
    if a is not None and a.height:
        a = a.with_columns(pl.col("task_id").cast(pl.String)).join(t.select(*keys, "_tid"), on=keys, how="inner")
        a = a.filter(pl.col("_tid").is_in(need["_tid"].implode())).unique(
            subset=["_tid", "action_idx"], keep="first", maintain_order=True
        ).sort("_tid", "action_idx")
        for tid, aid, name, args, req in a.select("_tid", "action_id", "name", "arguments", "requestor").iter_rows():
            acts.setdefault(tid, []).append((aid, name, args, req))
    trow = t.filter(pl.col("_tid").is_in(need["_tid"].implode())).select(
        "_tid", "task_id", "has_evaluation_criteria", "initial_state", "env_assertions", "actions_null"
    )
    info = {r[0]: r[1:] for r in trow.iter_rows()}
    for tid, domain in need.iter_rows():
        task_id, has_crit, init, assertions, actions_null = info[tid]
        defs[(tid, domain)] = TaskDef(
            task_id=task_id, domain=domain, has_criteria=bool(has_crit), initial_state=init,
            actions=None if actions_null else tuple(acts.get(tid, ())), env_assertions=assertions,
        )  # fmt: skip
    by_key = {d.key: d for d in defs.values()}

    # messages and tool calls of the simulations to replay
    want = todo.select("run_id", "simulation_id")
    msgs = _messages(results).join(want, on=["run_id", "simulation_id"], how="semi")
    calls = _frame(results, "tool_calls").join(want, on=["run_id", "simulation_id"], how="semi")
    calls = calls.sort("run_id", "simulation_id", "message_idx", "call_idx").group_by(
        "run_id", "simulation_id", "message_idx", maintain_order=True
    ).agg(_calls=pl.struct("tool_call_id", "name", "arguments", "requestor"))
    msgs = (
        msgs.sort("run_id", "simulation_id", "message_idx")
        .join(calls, on=["run_id", "simulation_id", "message_idx"], how="left", maintain_order="left")
        .group_by("run_id", "simulation_id", maintain_order=True)
        .agg(
            "role",
            pl.when(pl.col("role") == "tool").then(pl.col("content")).alias("content"),
            "tool_call_id",
            "_calls",
        )
    )
    by_sim = {(r, s): rest for r, s, *rest in msgs.iter_rows()}
    fd_sims = todo.filter(pl.col("_fd")).select("run_id", "simulation_id")
    by_ticks = _tick_messages(ticks[1].join(fd_sims, on=["run_id", "simulation_id"], how="semi")) \
        if ticks is not None and fd_sims.height else {}  # fmt: skip
    jobs = []
    for pos, run_id, sim_id, tid, domain, agent_impl, user_impl, fd in todo.select(
        "_pos", "run_id", "simulation_id", "_tid", "domain", "agent_implementation", "user_implementation", "_fd"
    ).iter_rows():
        solo = agent_impl == "llm_agent_solo" and user_impl == "dummy_user"  # τ²-bench's own test of solo mode
        if fd:
            jobs.append(Job(pos, domain, solo, defs[(tid, domain)].key, by_ticks.get((run_id, sim_id), ())))
            continue
        roles, contents, ids, call_lists = by_sim.get((run_id, sim_id), ([], [], [], []))
        messages = tuple(
            (role, content, tool_id, tuple(
                (c["tool_call_id"], c["name"], c["arguments"], c["requestor"]) for c in calls_ or ()
            ))
            for role, content, tool_id, calls_ in zip(roles, contents, ids, call_lists)
        )  # fmt: skip
        jobs.append(Job(pos, domain, solo, defs[(tid, domain)].key, messages))
    return Plan(keys_frame, jobs, by_key, decided)

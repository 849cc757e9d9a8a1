"""Running the jobs: in this process, or over worker processes that each keep their own long-lived environments."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import sys
from collections.abc import Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.replay._engine import Outcome, run_chunk
from tauk.replay._jobs import Plan

__all__ = ["REPLAY_SCHEMA", "executor", "run_plan", "to_frame"]

REPLAY_SCHEMA = {
    "run_id": pl.String,
    "simulation_id": pl.String,
    "task_id": pl.String,
    "replay_status": pl.String,
    "replay_reason": pl.String,
    "replayed_db": pl.Float64,
    "replayed_env_assertion": pl.Float64,
    "replayed_db_agent_match": pl.Boolean,
    "replayed_db_user_match": pl.Boolean,
}


def workers_count(workers: int | str | None) -> int:
    if workers in (None, "auto"):
        return max(1, os.cpu_count() or 1)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise TaukError(f"workers= takes a positive integer or 'auto', not {workers!r}")
    return workers


def executor(workers: int) -> Executor:
    """Worker processes for replay: started by a fork server that has imported τ²-bench once (each worker then
    starts warm), or spawned where there is no fork server."""
    if sys.platform != "win32" and "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["tauk.replay._preload"])
    else:  # pragma: no cover
        ctx = mp.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)


def _chunks(plan: Plan, workers: int) -> list[list]:
    jobs = sorted(plan.jobs, key=lambda j: (j.domain, j.solo, j.task, j.pos))
    size = max(8, min(400, math.ceil(len(jobs) / (workers * 6))))
    return [jobs[i:i + size] for i in range(0, len(jobs), size)]


def run_plan(plan: Plan, *, pool: Executor | None = None, workers: int = 1, verify: bool = False,
             bar: Any = None) -> list[Outcome]:  # fmt: skip
    """The outcomes of every simulation of ``plan`` (decided ones included), in no particular order."""
    out = list(plan.decided)
    if bar is not None and plan.decided:
        bar.update(len(plan.decided))
    if not plan.jobs:
        return out
    if pool is None:
        chunks = _chunks(plan, 1)
        for chunk in chunks:
            out += run_chunk(chunk, plan.tasks, verify)
            if bar is not None:
                bar.update(len(chunk))
        return out
    futures = {}
    for chunk in _chunks(plan, workers):
        need = {j.task for j in chunk}
        futures[pool.submit(run_chunk, chunk, {k: plan.tasks[k] for k in need}, verify)] = len(chunk)
    for f in as_completed(futures):
        out += f.result()
        if bar is not None:
            bar.update(futures[f])
    return out


def store_parts(results: Any) -> list[dict[str, Any]] | None:
    """A store's parts as file names (a worker process reads its part itself), or None for other results."""
    entries, root = getattr(results, "_entries", None), getattr(results, "root", None)
    if not isinstance(entries, list) or root is None:
        return None
    out = []
    for e in entries:
        files = e["files"]
        shared = {name: files[name] for name in ("runs", "tasks", "expected_actions")}
        for t, m, c in zip(files["trials"], files["messages"], files["tool_calls"]):
            out.append({"root": str(root), **shared, "trials": [t], "messages": [m], "tool_calls": [c]})
    return out


def _read_part(part: dict[str, Any]) -> dict[str, pl.DataFrame]:
    from pathlib import Path

    root = Path(part["root"])
    return {name: pl.read_parquet([root / f for f in part[name]]) for name in ("runs", "tasks", "expected_actions",
                                                                                "trials", "messages", "tool_calls")}


def replay_part(part: Any, tasks: Any = None, verify: bool = False) -> pl.DataFrame:
    """Plan and replay one part of a store in this process (what a worker process does with a part; a part given
    as file names is read here)."""
    from tauk.replay._jobs import plan

    if "root" in part:
        part = _read_part(part)
    p = plan(part, tasks)
    return to_frame(p.keys, run_plan(p, verify=verify))


def replay_parts(parts: Iterable[Any], pool: Executor | None, workers: int, tasks: Any, verify: bool,
                 bar: Any = None) -> list[pl.DataFrame]:  # fmt: skip
    """Replay a store part by part: here, or each part planned and replayed by a worker process (at most two
    parts per worker in flight, so memory stays that of a few parts)."""
    out: dict[int, pl.DataFrame] = {}
    if pool is None:
        for i, part in enumerate(parts):
            out[i] = replay_part(part, tasks, verify)
            if bar is not None:
                bar.update(out[i].height)
        return [out[i] for i in sorted(out)]
    pending: dict[Any, int] = {}
    it = iter(enumerate(parts))

    def submit() -> bool:
        nxt = next(it, None)
        if nxt is None:
            return False
        pending[pool.submit(replay_part, nxt[1], tasks, verify)] = nxt[0]
        return True

    while len(pending) < 2 * workers and submit():
        pass
    while pending:
        done = next(as_completed(list(pending)))
        i = pending.pop(done)
        out[i] = done.result()
        if bar is not None:
            bar.update(out[i].height)
        submit()
    return [out[i] for i in sorted(out)]


def to_frame(keys: pl.DataFrame, outcomes: Iterable[Outcome]) -> pl.DataFrame:
    """The replay frame: one row per simulation of ``keys``, in its order."""
    rows = sorted(outcomes, key=lambda o: o.pos)
    if len(rows) != keys.height or any(o.pos != i for i, o in enumerate(rows)):  # pragma: no cover - a bug
        raise AssertionError("replay lost or duplicated a simulation")
    cols = {
        "replay_status": [o.status for o in rows],
        "replay_reason": [o.reason for o in rows],
        "replayed_db": [o.db for o in rows],
        "replayed_env_assertion": [o.env_assertion for o in rows],
        "replayed_db_agent_match": [o.agent_match for o in rows],
        "replayed_db_user_match": [o.user_match for o in rows],
    }
    extra = pl.DataFrame(cols, schema={k: REPLAY_SCHEMA[k] for k in cols})
    return keys.select(pl.col(c).cast(REPLAY_SCHEMA[c]) for c in ("run_id", "simulation_id", "task_id")).hstack(
        extra
    )

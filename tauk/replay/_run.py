"""Running the jobs: in this process, and optionally over worker processes as well, each process keeping its own
long-lived environments (``workers=n``: this process and n − 1 others)."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, ProcessPoolExecutor, wait
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.replay._engine import Outcome, engine, run_chunk
from tauk.replay._jobs import Plan

__all__ = ["LAST_RUN", "REPLAY_SCHEMA", "executor", "run_plan", "spread", "to_frame"]

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
    """The outcomes of every simulation of ``plan`` (decided ones included), in no particular order: in this
    process, and with a ``pool`` also on its worker processes (this process takes chunks too)."""
    out = list(plan.decided)
    if bar is not None and plan.decided:
        bar.update(len(plan.decided))
    if not plan.jobs:
        return out

    def done(outcomes: list[Outcome]) -> None:
        out.extend(outcomes)
        if bar is not None:
            bar.update(len(outcomes))

    chunks = _chunks(plan, workers if pool is not None else 1)
    if pool is None:
        for chunk in chunks:
            done(run_chunk(chunk, plan.tasks, verify))
        return out
    spread(((c, {k: plan.tasks[k] for k in {j.task for j in c}}) for c in chunks), run_chunk, pool, workers - 1,
           verify, done)
    return out


LAST_RUN: dict[str, Any] = {}
"""How the last :func:`spread` shared its work (for ``benchmarks/bench_replay.py``): items done here, and per worker
process its items, its CPU seconds since it started, its gold states and environment builds."""


def _noop() -> None:
    return None


def _remote(fn: Callable, item: Any, tasks: Any, verify: bool, golds: dict) -> tuple:
    """What a worker process runs: ``fn`` on one item, after taking the gold states other processes computed;
    returns the result, the gold states computed here since, and this process's accounts."""
    eng = engine(verify)
    eng.add_gold_states(golds)
    before = set(eng.golds)
    result = fn(item, tasks, verify)
    mine = eng.gold_states(exclude=before)
    return result, mine, set(eng.golds), (os.getpid(), time.process_time(), eng.n_golds, eng.n_states_built)


def spread(items: Iterable[tuple[Any, Any]], fn: Callable, pool: Executor, n_pool: int, verify: bool,
           done: Callable[[Any], None]) -> None:
    """``fn(item, tasks, verify)`` for every ``(item, tasks)`` of ``items``, each taken by whichever process is free:
    this one, and the ``n_pool`` worker processes of ``pool`` (one item each in flight, so the last items are not
    queued behind a busy worker while this process idles). This process starts at once (τ²-bench is imported here
    already); a worker gets items once it has started (no item waits behind a worker's start); gold
    states computed by any process are handed to the others with their next item (each distinct one computed
    ~once, not once per process). ``done`` gets every result, in this thread or the feeder's, under a lock."""
    it = iter(items)
    take_lock, done_lock = threading.Lock(), threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []
    eng = engine(verify)
    held: dict[int, set] = {}  # per worker process, the gold states it holds
    stats: dict[int, dict[str, Any]] = {}
    here = {"items": 0}
    LAST_RUN.clear()
    LAST_RUN.update(here=here, workers=stats)

    exhausted = threading.Event()

    def take() -> tuple[Any, Any] | None:
        with take_lock:
            nxt = None if stop.is_set() else next(it, None)
            if nxt is None:
                exhausted.set()
            return nxt

    def finish(result: Any) -> None:
        with done_lock:
            done(result)

    def golds_to_send() -> dict:
        known = set.intersection(*held.values()) if len(held) >= n_pool else set()
        return eng.gold_states(exclude=known)

    def feeder() -> None:
        # a worker gets an item only once it has started (the fork server may still be importing τ²-bench): until
        # then this process takes them all (the pool's shutdown still waits for a worker to have started)
        pending: set = {pool.submit(_noop) for _ in range(n_pool)}
        warm = set(pending)
        try:
            while pending:
                if exhausted.is_set() and pending <= warm:  # every item taken; no worker result outstanding
                    return
                finished, pending = wait(pending, timeout=0.05, return_when=FIRST_COMPLETED)
                free = 0
                for f in finished:
                    free += 1
                    if f in warm:
                        f.result()
                        continue
                    result, golds, keys, (pid, cpu, n_golds, n_builds) = f.result()
                    eng.add_gold_states(golds)
                    held[pid] = keys
                    s = stats.setdefault(pid, {"items": 0})
                    s.update(items=s["items"] + 1, cpu=cpu, golds=n_golds, builds=n_builds)
                    finish(result)
                for _ in range(free):
                    nxt = take()
                    if nxt is None:
                        break
                    pending.add(pool.submit(_remote, fn, nxt[0], nxt[1], verify, golds_to_send()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            errors.append(exc)
            stop.set()
            for f in pending:
                f.cancel()

    thread = threading.Thread(target=feeder, name="tauk-replay-feeder", daemon=True)
    thread.start()
    try:
        while not errors:
            nxt = take()
            if nxt is None:
                break
            finish(fn(nxt[0], nxt[1], verify))
            here["items"] += 1
    except BaseException:
        stop.set()
        raise
    finally:
        thread.join()
    if errors:
        raise errors[0]


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
    """Replay a store part by part: here, and with a ``pool`` also each part planned and replayed by whichever of
    this process and the worker processes is free (one part each in flight, so memory stays that of a few parts)."""
    out: dict[int, pl.DataFrame] = {}

    def done(result: tuple[int, pl.DataFrame]) -> None:
        out[result[0]] = result[1]
        if bar is not None:
            bar.update(result[1].height)

    if pool is None:
        for i, part in enumerate(parts):
            done((i, replay_part(part, tasks, verify)))
    else:
        items = (((i, part), tasks) for i, part in enumerate(parts))
        spread(items, _numbered_part, pool, workers - 1, verify, done)
    return [out[i] for i in sorted(out)]


def _numbered_part(item: tuple[int, Any], tasks: Any, verify: bool) -> tuple[int, pl.DataFrame]:
    return item[0], replay_part(item[1], tasks, verify)


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

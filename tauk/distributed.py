"""Beyond one machine: the same scoring, audit and per-task counts over a store's parts, on a Dask cluster.

The partition function is the public :func:`tauk.score` on one part of whole simulations (read by the worker
from the store's Parquet files, so only paths travel to the workers); the reduction is the same as on one machine:
scored frames are concatenated and audited (:func:`tauk.scoring.audit_scored`), per-task counts are summed and
handed to the statistics. Every number equals the single-process one (tests/test_distributed.py runs it on a
local cluster of two worker processes).

Why Dask (and not Ray): the people who analyse τ²-bench logs work in notebooks and on laptops or a lab's shared
machine first; Dask installs from the registries as two pure-Python packages (``pip install tauk[distributed]``),
starts a local cluster in-process in a notebook (``distributed.Client(n_workers=2)``), scales the same code to an
existing Dask deployment (Kubernetes, SLURM via dask-jobqueue), and ships Polars frames as Arrow between processes.
Ray brings a larger runtime (its own object store and raylet, a much larger wheel) whose strengths — actors, GPU
scheduling, ML pipelines — this workload (independent, embarrassingly parallel parts and a small reduction) does not
need.

Examples
--------
>>> import tauk, tempfile
>>> from distributed import Client, LocalCluster
>>> store = tempfile.mkdtemp()
>>> _ = tauk.ingest("data", store, progress=False)
>>> with LocalCluster(n_workers=1, threads_per_worker=1, processes=False) as cluster, Client(cluster) as client:
...     scored = score_distributed(store, client=client)
>>> scored.height
600
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import polars as pl

__all__ = ["score_distributed", "audit_distributed", "replay_distributed", "task_counts_distributed", "parts"]


def parts(store: str | os.PathLike, **filters: Any) -> list[dict[str, Any]]:
    """The parts of a store as picklable descriptions (root and file names) for the workers."""
    from tauk.store import open_store

    res = open_store(store, **filters)
    out = []
    for e in res._entries:
        shared = {name: e["files"][name] for name in ("runs", "tasks", "expected_actions")}
        for t, m, c in zip(e["files"]["trials"], e["files"]["messages"], e["files"]["tool_calls"]):
            out.append({"root": str(res.root), **shared, "trials": [t], "messages": [m], "tool_calls": [c]})
    return out


def _read(part: dict[str, Any]) -> dict[str, pl.DataFrame]:
    root = Path(part["root"])
    return {name: pl.read_parquet([root / f for f in part[name]])
            for name in ("runs", "tasks", "expected_actions", "trials", "messages", "tool_calls")}  # fmt: skip


def _score_part(part: dict[str, Any], options: dict[str, Any]) -> pl.DataFrame:
    from tauk.scoring import score

    frames = _read(part)
    options = dict(options)
    if options.get("replay") is True:  # replayed here, on this worker's long-lived environments
        options["replay"] = _replay_frames(frames, options.get("tasks"))
    return score(frames, **options)


def _replay_frames(frames: dict[str, pl.DataFrame], tasks: Any) -> pl.DataFrame:
    from tauk.replay import replay

    return replay(frames, tasks=tasks, workers=1, progress=False)


def _replay_part(part: dict[str, Any], options: dict[str, Any]) -> pl.DataFrame:
    return _replay_frames(_read(part), options.get("tasks"))


def _counts_part(part: dict[str, Any], options: dict[str, Any]) -> pl.DataFrame:
    from tauk.stats import task_counts

    return task_counts(_read(part)["trials"], **options)


def _client(client: Any) -> Any:
    if client is not None:
        return client
    from distributed import get_client

    return get_client()  # the client of the running cluster (raises when there is none)


def score_distributed(store: str | os.PathLike, *, client: Any = None, evaluation: str = "all",
                      reward_basis: Any = None, tasks: Any = None, replay: bool = False,
                      **filters: Any) -> pl.DataFrame:  # fmt: skip
    """:func:`tauk.score` of a store, one task per part on the cluster of ``client`` (default: the current one).
    ``replay=True``: DB and ENV_ASSERTION replayed on the workers (each keeps its environments between parts)."""
    c = _client(client)
    options = {"evaluation": evaluation, "reward_basis": reward_basis, "tasks": _tasks_value(tasks), "strict": True,
               "replay": bool(replay)}  # fmt: skip
    futures = c.map(_score_part, parts(store, **filters), options=options, pure=False)
    frames = c.gather(futures)
    return pl.concat(frames, how="vertical_relaxed") if frames else pl.DataFrame()


def audit_distributed(store: str | os.PathLike, *, client: Any = None, tasks: Any = None, replay: bool = False,
                      **filters: Any) -> Any:  # fmt: skip
    """:func:`tauk.audit` of a store, the scoring (and ``replay``) on the cluster (see :func:`score_distributed`)."""
    from tauk.scoring import audit_scored
    from tauk.store import open_store

    scored = score_distributed(store, client=client, tasks=tasks, replay=replay, **filters)
    return audit_scored(scored, open_store(store, **filters).runs)


def replay_distributed(store: str | os.PathLike, *, client: Any = None, tasks: Any = None,
                       **filters: Any) -> pl.DataFrame:  # fmt: skip
    """:func:`tauk.replay.replay` of a store, one task per part on the cluster: each worker process keeps its own
    long-lived τ²-bench environments and gold states between parts (τ²-bench must be installed on the workers).
    The frame equals the single-process one (row order: part by part)."""
    c = _client(client)
    futures = c.map(_replay_part, parts(store, **filters), options={"tasks": _tasks_value(tasks)}, pure=False)
    frames = c.gather(futures)
    if not frames:
        from tauk.replay import REPLAY_SCHEMA

        return pl.DataFrame(schema=REPLAY_SCHEMA)
    return pl.concat(frames, how="vertical_relaxed")


def _tasks_value(tasks: Any) -> Any:
    """A tasks file is read once here, and its frames travel to the workers (the path may not exist there)."""
    if isinstance(tasks, str | os.PathLike):
        from tauk.io.load import load_tasks

        return load_tasks(tasks)
    return tasks


def task_counts_distributed(store: str | os.PathLike, *, client: Any = None, by: Any = ("run_id",),
                            infra: str = "drop", reward: str = "reward", **filters: Any) -> Any:  # fmt: skip
    """The per-task counts (mergeable sufficient statistics of every pass^k / pass@k statistic) of a store,
    computed part by part on the cluster and summed; feed them to :mod:`tauk.stats` like a trials frame."""
    from tauk.stats import merge_task_counts

    c = _client(client)
    options = {"by": by, "infra": infra, "reward": reward}
    futures = c.map(_counts_part, parts(store, **filters), options=options, pure=False)
    return merge_task_counts(c.gather(futures))

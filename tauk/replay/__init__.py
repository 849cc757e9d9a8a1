"""DB and ENV_ASSERTION computed, not read: the trajectories replayed through τ²-bench's own environments.

τ²-bench grades DB by replaying a simulation's tool calls (agent and user side, in order) on the domain's initial
state, the task's gold actions on a second copy of it, and comparing the two databases' hashes; ENV_ASSERTION runs
the task's assertions on the replayed state. :func:`replay` does the same through τ²-bench's environments (which
the user installs: ``pip install "tauk[replay]"`` and τ²-bench, Python ≥ 3.12), with the verdict of
``evaluate_simulation(..., strict_replay=False)`` — what ``tau2 evaluate-trajs`` computes — but on environments
built once per (domain, worker) and put back after each simulation by restoring only the records it reached, and
with each distinct gold state computed once (see :mod:`tauk.replay._state` for why the comparison is exact).

``tauk.score(results, replay=True)`` and ``tauk.audit(results, replay=True)`` use it: DB and ENV_ASSERTION then
come from the replay (``db_source = "replayed"``) wherever it could be done, the reward is recomputed from them,
and the audit counts where the replay and the record disagree. With ``tasks=`` the replay grades against the
other task definitions' gold actions and assertions, so a re-graded reward is a full re-evaluation (as
``tau2 evaluate-trajs --fresh-tasks``).

Statuses (``replay_status``): ``replayed`` (``replayed_db`` and ``replayed_env_assertion`` set); ``not_evaluated``
(τ²-bench evaluates no environment: a premature ending, a task without evaluation criteria); ``not_replayable``
(no environment for the domain, a τ-bench run, a full-duplex run whose ticks are not held here — full-duplex runs
are replayed from their ticks, as τ²-bench's full-duplex evaluator does —, no task definition or messages, a
banking_knowledge retrieval configuration that cannot be built here, a task definition τ²-bench rejects);
``failed`` (what τ²-bench itself raises on: tool calls and tool messages that do not pair up, a replay or gold
state that raises).
``replay_reason`` says which, in one line. Nothing is guessed: a simulation without a verdict keeps its record.

Examples
--------
>>> import tauk
>>> from tauk.replay import REPLAY_STATUSES, available
>>> REPLAY_STATUSES
('replayed', 'not_evaluated', 'not_replayable', 'failed')
>>> frame = replay(tauk.load("data/baseline_airline.json")) if available() else None   # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tauk.replay._run import (
    REPLAY_SCHEMA,
    executor,
    replay_parts,
    run_plan,
    store_parts,
    to_frame,
    workers_count,
)
from tauk.replay._upstream import INSTALL_HINT, ReplayUnavailable, available, require, tau2_version

__all__ = ["INSTALL_HINT", "REPLAY_SCHEMA", "REPLAY_STATUSES", "ReplayUnavailable", "available", "replay",
           "tau2_version"]  # fmt: skip

REPLAY_STATUSES = ("replayed", "not_evaluated", "not_replayable", "failed")


def replay(results: Any, *, tasks: Any = None, workers: int | str = 1, progress: bool | None = None,
           verify: bool = False) -> pl.DataFrame:  # fmt: skip
    """Replay every simulation of ``results`` through τ²-bench's environments: its DB and ENV_ASSERTION verdicts.

    Parameters
    ----------
    results
        A :class:`tauk.Results`, a store opened with :func:`tauk.open` (replayed part by part: memory stays flat in
        the number of simulations), or a mapping of frames.
    tasks
        Grade against other task definitions (a task file path, a tasks frame pair, a Results), as
        :func:`tauk.score` ``tasks=``: their gold actions, initial states and assertions.
    workers
        Processes replaying (``"auto"``: one per CPU): this one and ``workers - 1`` worker processes, each taking
        the next part (or chunk of simulations) when free and keeping its own environments; gold states computed
        in one process are handed to the others. The verdicts do not depend on the number.
    progress
        A progress bar over simulations (default: when there are more than 200).
    verify
        After every simulation, check that the environment is back in its starting state (a full database hash;
        slow — for tests).

    Returns
    -------
    polars.DataFrame
        One row per simulation, in the order of ``results.trials``: ``run_id``, ``simulation_id``, ``task_id``,
        ``replay_status``, ``replay_reason``, ``replayed_db``, ``replayed_env_assertion`` (1.0 / 0.0, null
        unless replayed; ENV_ASSERTION is 1.0 for a task without assertions), ``replayed_db_agent_match``,
        ``replayed_db_user_match`` (which side's database matched the gold one).

    Raises
    ------
    ReplayUnavailable
        τ²-bench is not installed (one line saying what to install).
    """
    require()
    n_workers = workers_count(workers)
    from tauk.replay._jobs import plan

    if callable(getattr(results, "partitions", None)) and not isinstance(results, Mapping):
        if isinstance(tasks, str | Path):
            from tauk.io.load import load_tasks

            tasks = load_tasks(tasks)
        total = int(results.trials_columns(["simulation_id"]).height) if hasattr(results, "trials_columns") else None
        with _pool(n_workers) as pool, _bar(total, progress) as bar:
            files = store_parts(results) if pool is not None else None
            parts = files if files is not None else results.partitions()
            out = replay_parts(parts, pool, n_workers, tasks, verify, bar)
        return pl.concat(out) if out else pl.DataFrame(schema=REPLAY_SCHEMA)
    with _pool(n_workers) as pool:  # its workers start while the jobs are planned here
        p = plan(results, tasks)
        with _bar(p.keys.height, progress) as bar:
            outcomes = run_plan(p, pool=pool if len(p.jobs) > 1 else None, workers=n_workers, verify=verify,
                                bar=bar)  # fmt: skip
    return to_frame(p.keys, outcomes)


def _noop() -> None:
    return None


def _warm(pool: Any, n: int) -> None:
    try:
        for _ in range(n):
            pool.submit(_noop)
    except RuntimeError:  # the pool was shut down first
        pass


class _pool:
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool = None

    def __enter__(self) -> Any:
        if self.workers > 1:  # this process works too: n − 1 others
            self.pool = executor(self.workers - 1)
            # start the workers in the background (the fork server imports τ²-bench first, for seconds) while this
            # process plans the jobs and starts replaying
            threading.Thread(target=_warm, args=(self.pool, self.workers - 1), daemon=True).start()
        return self.pool

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:  # not waiting for a worker still starting that got nothing to do
            self.pool.shutdown(wait=False, cancel_futures=True)


class _bar:
    def __init__(self, total: int | None, progress: bool | None) -> None:
        show = progress if progress is not None else (total or 0) > 200
        self.bar = None
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc="replay", unit="sim")

    def __enter__(self) -> Any:
        return self.bar

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()

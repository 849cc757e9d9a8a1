"""Your own runs as leaderboard rows, with their trajectories: rank them among (or instead of) the published rows.

:func:`board_from_runs` turns results (one run per agent × domain) into the frame of
:func:`tauk.io.leaderboard.load_leaderboard` — pass^1 … pass^n at full precision, computed with tauk's rules — and
returns the trajectories and task counts that :func:`tauk.leaderboard.analyze` needs for the paired view.

>>> import tauk
>>> from tauk.leaderboard import analyze, board_from_runs
>>> runs = board_from_runs(tauk.load("data"))
>>> a = analyze(runs.board, trajectories=runs.trajectories, tasks=runs.tasks)
>>> a.ranking.to_frame().filter(domain="retail").select("submission_id", "rank_low_paired", "rank_high_paired").rows()
[('atlas-large', 1, 1), ('atlas-small', 2, 3), ('baseline', 2, 3)]
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import polars as pl

from tauk.conventions import INFRA
from tauk.errors import StatsWarning, TaukError
from tauk.io.leaderboard import LEADERBOARD_SCHEMA
from tauk.results import load

from ._stats import pass_hat_k

__all__ = ["RunsBoard", "board_from_runs"]


class RunsBoard(NamedTuple):
    """What :func:`board_from_runs` returns: the leaderboard ``board`` frame, the ``trajectories`` mapping
    (submission_id, domain) → trials frame, and ``tasks`` (submission_id, domain) → T."""

    board: pl.DataFrame
    trajectories: dict[tuple[str, str], pl.DataFrame]
    tasks: dict[tuple[str, str], int]


def board_from_runs(results: Any, *, label: str = "agent", infra: str = INFRA, modality: str = "text") -> RunsBoard:
    """Leaderboard rows from results: one row per (``label`` value, domain), pass^1 … pass^min(n, 4) as
    percentages at full precision (infrastructure errors per ``infra``), ``submission_id`` = the label value.

    Parameters
    ----------
    results
        A :class:`tauk.Results`, a trials frame, or what :func:`tauk.load` takes.
    label
        The trials column naming the agents (default ``"agent"``).
    infra
        ``"drop"`` or ``"fail"``, as in every statistic.
    modality
        ``"text"`` or ``"voice"`` for every row.
    """
    trials = results if isinstance(results, pl.DataFrame) else getattr(results, "trials", None)
    if trials is None:
        trials = load(results, progress=False).trials
    if label not in trials.columns:
        raise TaukError(f"label {label!r} is not a column of the trials")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        est = pass_hat_k(trials, by=(label, "domain"), ci=None, infra=infra, pool_setups=True).to_frame()
    rows, traj, tasks = [], {}, {}
    for (name, dom), part in est.group_by([label, "domain"], maintain_order=True):
        sid, dom = str(name), str(dom)
        row: dict[str, Any] = {c: None for c in LEADERBOARD_SCHEMA}
        row.update(submission_id=sid, model=sid, submission_type="standard", modality=modality, domain=dom,
                   source=f"{label}={sid}")  # fmt: skip
        for k, e in part.select("k", "estimate").rows():
            if 1 <= k <= 4 and e is not None:
                row[f"pass_{k}_pct"], row[f"pass_{k}"] = 100.0 * e, e
        rows.append(row)
        t = trials.filter((pl.col(label).cast(pl.String) == sid) & (pl.col("domain") == dom))
        traj[(sid, dom)] = t
        tasks[(sid, dom)] = int(part["n_tasks"].max())
    return RunsBoard(pl.DataFrame(rows, schema=LEADERBOARD_SCHEMA), traj, tasks)

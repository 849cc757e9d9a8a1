"""The whole leaderboard analysis in one call: recovery, per-row intervals, per-domain ranking, voice metrics.

>>> from tauk.leaderboard import analyze
>>> a = analyze("../shared/data/leaderboard")  # doctest: +SKIP
>>> print(a.ranking.summary(domain="airline"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tauk.conventions import CI_LEVEL, CI_METHOD, RESAMPLES, SEED
from tauk.errors import TaukError
from tauk.io.leaderboard import INTERACTION_SCHEMA, load_interaction_metrics, load_leaderboard
from tauk.results import load
from tauk.table import SummaryTable

from .choices import TABLES
from .ranking import DomainRanking, domain_ranking
from .recovery import Recovery, recover
from .rows import ROW_KEYS, RowIntervals, row_intervals
from .verify import find_trajectories
from .voice import InteractionIntervals, interaction_intervals

__all__ = ["LeaderboardAnalysis", "analyze", "TABLES"]



@dataclass(frozen=True)
class LeaderboardAnalysis:
    """Everything :func:`analyze` computes (immutable): ``recovery``, ``rows``, ``ranking`` and ``voice`` (each a
    result with ``summary()`` and ``to_frame()``), and ``trajectories``: the (submission_id, domain) rows whose
    trajectories were used."""

    recovery: Recovery
    rows: RowIntervals
    ranking: DomainRanking
    voice: InteractionIntervals
    trajectories: tuple[tuple[str, str], ...] = ()

    def to_frame(self) -> pl.DataFrame:
        """One row per (submission_id, domain): the per-row statistics with the row's rank interval and tier."""
        rank = self.ranking.to_frame().drop("model", "modality", "k", "estimate", "ci_low", "ci_high")
        return self.rows.to_frame().join(rank, on=list(ROW_KEYS), how="left")

    def table(self, name: str, *, domain: str | Sequence[str] | None = None) -> SummaryTable:
        """One table by name (:data:`TABLES`), optionally for some domains."""
        if name == "ranking":
            return self.ranking.summary(domain=domain)
        if name == "rows":
            return self.rows.summary(domain=domain)
        if name == "pairs":
            return self.ranking.pairs_summary(domain=domain)
        if name == "voice":
            return self.voice.summary(domain=domain)
        if name == "recovery":
            return self.recovery.summary(domain=domain)
        raise TaukError(f"table must be one of {TABLES}, got {name!r}")

    def summary(self) -> SummaryTable:
        """The ranking table (the headline); :meth:`table` gives the others."""
        return self.ranking.summary()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _load_trajectories(path: Any, board: pl.DataFrame, given: Any) -> dict[tuple[str, str], Any]:
    if given is None:
        return {}
    if isinstance(given, Mapping):
        return {(str(k[0]), str(k[1])): v for k, v in given.items()}
    folder = Path(given)
    if not folder.is_dir():
        raise TaukError(f"trajectories: {folder} is not a folder")
    out: dict[tuple[str, str], Any] = {}
    for src in board["source"].unique().to_list():
        sid = Path(src).parent.name if Path(src).name == "submission.json" else Path(src).stem
        for dom, p in find_trajectories(src, search=folder / sid if (folder / sid).is_dir() else folder).items():
            if p is not None:
                out[(sid, dom)] = p
    return out


def analyze(board: Any, *, k: int = 1, ci: float = CI_LEVEL, method: str = CI_METHOD, resamples: int = RESAMPLES,
            seed: int | None = SEED, question: str = "population", trajectories: Any = None,
            trials: int | Mapping[Any, int] | None = None, tasks: Mapping[Any, int] | None = None,
            decimals: int | None = None, tolerance: float | None = None, listed_only: bool = False,
            templates: bool = False, progress: bool | None = None) -> LeaderboardAnalysis:  # fmt: skip
    """Recover every row's per-task counts, then the per-row intervals, the per-domain ranking and the voice rows'
    interaction metrics (see :mod:`tauk.leaderboard`).

    Parameters
    ----------
    board
        A leaderboard folder or submission file (or the frame of :func:`tauk.io.leaderboard.load_leaderboard`; the
        voice metrics then come out empty).
    k, question
        Rank by pass^k; ``"population"`` or ``"rerun"`` (:func:`~tauk.leaderboard.ranking.domain_ranking`).
    ci, method, resamples, seed, progress
        As for :func:`tauk.stats.pass_hat_k`.
    trajectories
        Trials of some rows, for the paired view: a mapping (submission_id, domain) → path / Results / trials frame,
        or a folder holding the files the submissions name in ``trajectory_files`` (``<folder>/<submission_id>/…``
        or ``<folder>/…``). Their rows' trials per task come from the trajectories.
    trials, tasks, decimals, tolerance
        As for :func:`~tauk.leaderboard.recovery.recover`.
    listed_only, templates
        Keep only manifest-listed rows; keep upstream's ``A_EXAMPLE_*`` templates (left out by default).
    """
    if isinstance(board, pl.DataFrame):
        frame, metrics = board, None
    else:
        frame, metrics = load_leaderboard(board), load_interaction_metrics(board)
    if not templates:
        frame = frame.filter(~pl.col("submission_id").str.starts_with("A_EXAMPLE"))
        if metrics is not None:
            metrics = metrics.filter(~pl.col("submission_id").str.starts_with("A_EXAMPLE"))
    if listed_only:
        frame = frame.filter(pl.col("manifest_section").is_not_null())
        if metrics is not None:
            metrics = metrics.filter(pl.col("submission_id").is_in(frame["submission_id"].unique().to_list()))
    traj_src = _load_trajectories(board, frame, trajectories)
    traj: dict[tuple[str, str], pl.DataFrame] = {}
    per_row: dict[Any, int] = dict(trials) if isinstance(trials, Mapping) else {}
    for key, src in traj_src.items():
        t = _as_trials(src)
        traj[key] = t
        if not isinstance(trials, int) and t.height:
            per_row.setdefault(key, int(t.group_by("task_id").len()["len"].max()))
    rec = recover(frame, trials=trials if isinstance(trials, int) else (per_row or None), tasks=tasks,
                  decimals=decimals, tolerance=tolerance, metrics=metrics, templates=True)  # fmt: skip
    rows = row_intervals(rec, ci=ci, method=method, resamples=resamples, seed=seed, progress=progress)
    ranking = domain_ranking(rows, k=k, question=question, trajectories=traj or None)
    voice = interaction_intervals(metrics if metrics is not None else pl.DataFrame(schema=INTERACTION_SCHEMA), ci=ci)
    return LeaderboardAnalysis(rec, rows, ranking, voice, tuple(sorted(traj)))


def _as_trials(src: Any) -> pl.DataFrame:
    if isinstance(src, pl.DataFrame):
        return src
    if hasattr(src, "trials"):
        return src.trials
    return load(src, strict=False, progress=False).trials

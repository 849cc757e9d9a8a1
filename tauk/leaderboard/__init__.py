"""The leaderboard with honest uncertainty, from the published numbers alone (and the trajectories where they exist).

A leaderboard row that publishes pass^1 … pass^n over T tasks with n trials each determines the whole per-task
success histogram; once recovered, every tauk statistic applies to it. One module per question:

* :mod:`~tauk.leaderboard.recovery` — the histogram of each row, exact within the published rounding, or a flag
  with the residual in points (and the other conventions and task sets tried): :func:`recover`, as a
  :func:`tauk.stats.task_counts` frame;
* :mod:`~tauk.leaderboard.rows` — per row: pass^k with the default interval and the re-run interval, the noise
  floor, what the row claims: :func:`row_intervals`;
* :mod:`~tauk.leaderboard.ranking` — per domain: rank intervals, possibly-best sets, tie groups, adjacent pairs
  (unpaired and conservative from the histograms; paired where trajectories exist): :func:`domain_ranking`;
* :mod:`~tauk.leaderboard.voice` — the voice rows' interaction metrics with their counts and exact intervals:
  :func:`interaction_intervals`;
* :mod:`~tauk.leaderboard.verify` — a submission against its own trajectories, both conventions:
  :func:`verify_submission`;
* :func:`analyze` — all of it in one call; :func:`board_from_runs` — your own runs as rows (with trajectories);
  :func:`report_section` — the tables, figures and text of a report's leaderboard section.

Every table carries the join keys ``submission_id`` and ``domain``.

>>> from tauk.leaderboard import recover_row
>>> recover_row({1: 42.0, 2: 27.3, 3: 22.0, 4: 20.0}, tasks=50, trials=4).histogram
(14, 12, 10, 4, 10)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .choices import QUESTIONS, STATUSES, TABLES

if TYPE_CHECKING:  # pragma: no cover
    from .analysis import LeaderboardAnalysis, analyze
    from .ranking import DomainRanking, domain_ranking
    from .recovery import (
        HistogramFit,
        Layout,
        Recovery,
        RowRecovery,
        fit_histogram,
        histogram_counts,
        recover,
        recover_row,
    )
    from .rows import RowIntervals, row_intervals, task_values
    from .runs import RunsBoard, board_from_runs
    from .section import ReportSection, report_section
    from .task_sets import TASK_SETS
    from .verify import Verification, find_trajectories, verify_submission
    from .voice import InteractionIntervals, interaction_intervals

_LAZY = {
    "LeaderboardAnalysis": "analysis", "analyze": "analysis",
    "DomainRanking": "ranking", "domain_ranking": "ranking",
    "HistogramFit": "recovery", "Layout": "recovery", "Recovery": "recovery", "RowRecovery": "recovery",
    "fit_histogram": "recovery", "histogram_counts": "recovery", "recover": "recovery", "recover_row": "recovery",
    "RowIntervals": "rows", "row_intervals": "rows", "task_values": "rows",
    "RunsBoard": "runs", "board_from_runs": "runs",
    "ReportSection": "section", "report_section": "section",
    "TASK_SETS": "task_sets",
    "Verification": "verify", "find_trajectories": "verify", "verify_submission": "verify",
    "InteractionIntervals": "voice", "interaction_intervals": "voice",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    """The statistics are imported on first use (PEP 562), so the command line's option lists stay quick."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tauk.leaderboard' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DomainRanking",
    "HistogramFit",
    "InteractionIntervals",
    "Layout",
    "LeaderboardAnalysis",
    "QUESTIONS",
    "Recovery",
    "RowIntervals",
    "RowRecovery",
    "ReportSection",
    "RunsBoard",
    "STATUSES",
    "TABLES",
    "TASK_SETS",
    "Verification",
    "analyze",
    "board_from_runs",
    "domain_ranking",
    "find_trajectories",
    "fit_histogram",
    "histogram_counts",
    "interaction_intervals",
    "recover",
    "recover_row",
    "report_section",
    "row_intervals",
    "task_values",
    "verify_submission",
]

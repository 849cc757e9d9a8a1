"""The statistics this package uses, imported in one place.

Everything :mod:`tauk.leaderboard` needs from :mod:`tauk.stats` is named here, so a move of a module changes this
file and nothing else.
"""

from __future__ import annotations

from tauk.stats import compare, holm, pass_hat_k, summarize, task_counts
from tauk.stats.noise.noise_floor import noise_floor, rerun_variance
from tauk.stats.tasks import COUNT_COLUMNS, LABEL_COLUMNS, is_task_counts

__all__ = [
    "COUNT_COLUMNS",
    "LABEL_COLUMNS",
    "compare",
    "holm",
    "is_task_counts",
    "noise_floor",
    "pass_hat_k",
    "rerun_variance",
    "summarize",
    "task_counts",
]

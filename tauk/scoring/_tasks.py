"""Task definitions -> the ``tasks`` / ``expected_actions`` frames of ARCHITECTURE.md (for re-grading and tests).

Thin wrappers over the loaders (:func:`tauk.load_tasks`), which accept τ²-bench task objects and τ-bench v1 ones
(``actions[{name, kwargs}]``, ``outputs``; the outputs become ``communicate_info``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from tauk.conventions import DEFAULT_REWARD_BASIS
from tauk.io.frames import tasks_from_list
from tauk.io.load import load_tasks as read_tasks_file
from tauk.io.load import task_list

__all__ = ["DEFAULT_BASIS", "read_tasks_file", "task_frames"]

DEFAULT_BASIS = list(DEFAULT_REWARD_BASIS)  # as a list, for pl.lit(..., dtype=List(String))


def task_frames(
    tasks: Iterable[Mapping[str, Any]], run_id: str | None = None, source: str = "<tasks>"
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Build ``(tasks, expected_actions)`` frames from task dicts (τ²-bench or τ-bench v1).

    >>> tasks, actions = task_frames([{"id": "1", "evaluation_criteria": {"communicate_info": ["42"]}}])
    >>> tasks["n_communicate_info"].to_list()
    [1]
    """
    return tasks_from_list(task_list(list(tasks), source), run_id)

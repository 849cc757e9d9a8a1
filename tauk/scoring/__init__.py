"""Scoring: the τ²-bench reward kernel over frames, per-check explanations, failure attribution and the audit.

Public API: :func:`score`, :func:`communicate_checks`, :func:`action_checks`, :func:`audit` / :class:`Audit`,
:func:`read_tasks_file`, :data:`EVALUATION_TYPES`, :data:`COMPONENTS`.
"""

from tauk.scoring import namespace as _namespace  # noqa: F401  (registers DataFrame.tauk)
from tauk.scoring._score import (
    COMPONENTS,
    EVALUATION_TYPES,
    RegradeWarning,
    action_checks,
    communicate_checks,
    score,
)
from tauk.scoring._tasks import read_tasks_file, task_frames
from tauk.scoring.audit import Audit, audit

__all__ = [
    "Audit",
    "audit",
    "COMPONENTS",
    "EVALUATION_TYPES",
    "RegradeWarning",
    "action_checks",
    "communicate_checks",
    "read_tasks_file",
    "score",
    "task_frames",
]

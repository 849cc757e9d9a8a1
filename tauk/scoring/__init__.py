"""Scoring: the τ²-bench reward kernel over frames, per-check explanations, failure attribution and the audit.

Public API: :func:`score`, :func:`communicate_checks`, :func:`action_checks`, :func:`audit` / :class:`Audit`,
:func:`read_tasks_file`, :func:`deviations` / :func:`trial_deviations` (action-level failure attribution),
:data:`EVALUATION_TYPES`, :data:`COMPONENTS` (the same tuple as
``tauk.conventions.COMPONENTS``, re-exported for compatibility). Like the statistics, every function takes the
results first and its options by keyword (``evaluation=``, ``reward_basis=``, ``tasks=``).
"""

from tauk.scoring import namespace as _namespace  # noqa: F401  (registers DataFrame.tauk)
from tauk.scoring._evaluation import COMPONENTS, EVALUATION_TYPES
from tauk.scoring._explain import action_checks, communicate_checks
from tauk.scoring._score import RegradeWarning, score
from tauk.scoring._tasks import read_tasks_file, task_frames
from tauk.scoring.audit import Audit, audit, audit_scored
from tauk.scoring.deviations import DEVIATION_KINDS, NEUTRAL_REASONS, deviations, trial_deviations

__all__ = [
    "Audit",
    "audit",
    "audit_scored",
    "COMPONENTS",
    "DEVIATION_KINDS",
    "NEUTRAL_REASONS",
    "deviations",
    "trial_deviations",
    "EVALUATION_TYPES",
    "RegradeWarning",
    "action_checks",
    "communicate_checks",
    "read_tasks_file",
    "score",
    "task_frames",
]

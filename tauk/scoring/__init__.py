"""Scoring: the τ²-bench reward kernel over frames, per-check explanations, failure attribution and the audit.

Public API: :func:`score`, :func:`communicate_checks`, :func:`action_checks`, :func:`audit` / :class:`Audit`,
:func:`read_tasks_file`, :func:`deviations` / :func:`trial_deviations` (action-level failure attribution),
:data:`EVALUATION_TYPES`, :data:`COMPONENTS` (the same tuple as
``tauk.conventions.COMPONENTS``, re-exported for compatibility). Like the statistics, every function takes the
results first and its options by keyword (``evaluation=``, ``reward_basis=``, ``tasks=``).
"""

from tauk._lazy import lazy_exports as _lazy_exports
from tauk.scoring import namespace as _namespace  # noqa: F401  (registers DataFrame.tauk)

_lazy_exports(__name__, {  # imported on first use (the statistics need only tauk.scoring.counters)
    **dict.fromkeys(("COMPONENTS", "EVALUATION_TYPES"), "._evaluation"),
    **dict.fromkeys(("action_checks", "communicate_checks"), "._explain"),
    **dict.fromkeys(("RegradeWarning", "score"), "._score"),
    **dict.fromkeys(("read_tasks_file", "task_frames"), "._tasks"),
    **dict.fromkeys(("Audit", "audit", "audit_scored"), ".audit"),
    **dict.fromkeys(("DEVIATION_KINDS", "NEUTRAL_REASONS", "deviations", "trial_deviations"), ".deviations"),
})

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

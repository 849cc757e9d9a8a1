"""Task definitions: which tools change state, what a task's score can see, and whether a re-grade is valid.

One function per table, every table keyed to join the others (``task_set``/``run_id``, ``task_id``):

- :func:`tool_table` — the shipped per-domain tool table (source: :data:`TOOL_TABLE_SOURCE`); :func:`classify_tools`
  / :func:`lookup_tool` — which tools change state (recorded tool types first; unknown tools are never guessed);
  :func:`recorded_tool_types` — what a run's action checks record.
- :func:`validity` — per task: inaction-passable, components that pass by themselves, unscored gold actions and
  assertions; per task set and split: the do-nothing bound (:class:`TaskValidity`). :func:`initial_env_evidence` —
  what recorded simulations tell about the initial state.
- :func:`inaction_marks` — ``run_id, task_id, inaction_passable, substantive`` for statistics;
  :func:`inaction_summary` / :func:`inaction_section` — the counts a summary and the report show.
- :func:`task_changes` — what changed between two versions; :func:`regrade_eligibility` — the re-grade class of
  every (run, task) (used by ``tauk.score(..., tasks=)``).

Measurements and rules: docs/task_validity.md.

Examples
--------
>>> import tauk
>>> v = tauk.tasks.validity("data/baseline_airline.json")
>>> v.bounds.select("n_tasks", "n_inaction_passable", "do_nothing_pass1").row(0)
(25, 2, 0.08)
"""

from tauk.tasks.evidence import initial_env_evidence
from tauk.tasks.inaction import inaction_marks, inaction_section, inaction_summary
from tauk.tasks.regrade import (
    RECOMPUTED_OFFLINE,
    REGRADE_CLASSES,
    REGRADED,
    regrade_eligibility,
    task_changes,
)
from tauk.tasks.tools import (
    SIDES,
    TOOL_TABLE_SOURCE,
    TOOL_TYPES,
    UNKNOWN,
    ToolInfo,
    classify_tools,
    lookup_tool,
    recorded_tool_types,
    tool_table,
)
from tauk.tasks.validity import TaskValidity, validity

__all__ = [
    "RECOMPUTED_OFFLINE",
    "REGRADED",
    "REGRADE_CLASSES",
    "regrade_eligibility",
    "task_changes",
    "SIDES",
    "TOOL_TABLE_SOURCE",
    "TOOL_TYPES",
    "UNKNOWN",
    "TaskValidity",
    "ToolInfo",
    "classify_tools",
    "inaction_marks",
    "inaction_section",
    "inaction_summary",
    "initial_env_evidence",
    "lookup_tool",
    "recorded_tool_types",
    "tool_table",
    "validity",
]

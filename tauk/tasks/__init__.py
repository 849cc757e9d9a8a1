"""Task definitions: which tools change state, what a task's score can see, and whether a re-grade is valid."""

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

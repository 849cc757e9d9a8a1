"""The choice lists of :mod:`tauk.leaderboard` (light: the command line builds its options from them without
importing the statistics)."""

from __future__ import annotations

__all__ = ["STATUSES", "QUESTIONS", "TABLES"]

STATUSES = ("recovered", "ambiguous", "flagged", "insufficient")
"""A row's recovery status (see :mod:`tauk.leaderboard.recovery`)."""

QUESTIONS = ("population", "rerun")
"""What a separation means: ``population`` (a new draw of tasks; Welch on per-task values, conservative) or
``rerun`` (the same tasks run again; z on the re-run standard errors)."""

TABLES = ("ranking", "rows", "recovery", "pairs", "voice")
"""The tables of an analysis, by name (the CLI's ``--table`` choices)."""

"""How many tasks (and trials per task) does a comparison need? Power of the paired t test and plans from pilots.

* :mod:`~tauk.stats.power.analysis` — :func:`power_analysis` (a pilot or a variance → the tasks needed at each
  number of trials per task) and its :class:`PowerResult`;
* :mod:`~tauk.stats.power.planning` — the power of the paired t test (noncentral t), averaged over a pilot's
  uncertainty, and :func:`tasks_needed`;
* :mod:`~tauk.stats.power.variance` — Var(d_t) from a paired or a single-agent pilot, split into between- and
  within-task parts, and the pilot's degrees of freedom.

Whether the plans deliver their power: ``docs/calibration/comparisons.md`` (power plans).

Examples
--------
>>> from tauk.stats.power import tasks_needed
>>> tasks_needed(0.1, 0.25)
199
"""

from __future__ import annotations

from .analysis import TRIALS_PER_TASK, PowerResult, power, power_analysis
from .planning import ALPHA, TARGET_POWER, expected_power_t, plan, power_t, tasks_needed
from .variance import VarianceModel, pilot_df, variance_from_paired_pilot, variance_from_pilot

__all__ = [
    "ALPHA",
    "TARGET_POWER",
    "TRIALS_PER_TASK",
    "PowerResult",
    "VarianceModel",
    "expected_power_t",
    "pilot_df",
    "plan",
    "power",
    "power_analysis",
    "power_t",
    "tasks_needed",
    "variance_from_paired_pilot",
    "variance_from_pilot",
]

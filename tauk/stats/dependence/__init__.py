"""What makes tasks or trials not independent draws, and how the intervals account for it.

* :mod:`~tauk.stats.dependence.run_effects` — a shared per-pass effect (API drift, a user-simulator change, a bad
  day): each pass over the benchmark (a run's trial index, or a run) shifts every task's chance of success alike.
  Detected by Cochran's Q over the (task × pass) table, its variance estimated by moments, and added to the
  intervals (crossed task × pass variance, Satterthwaite degrees of freedom);
* :mod:`~tauk.stats.dependence.clusters` — task families (telecom's issue types × personas, tasks sharing a user):
  cluster-robust (CR2) intervals and comparisons, and the per-domain default families.

How often the adjusted intervals cover, and what they cost where there is no dependence:
``docs/calibration/dependence.md`` (``benchmarks/dependence_calibration.py``).
"""

from __future__ import annotations

from .clusters import FAMILY, ClusterInfo, cluster_info, cluster_keys, cluster_variance, task_family
from .run_effects import PassMatrix, RunEffect, pass_matrices, run_effect, run_variance

__all__ = [
    "FAMILY",
    "ClusterInfo",
    "PassMatrix",
    "RunEffect",
    "cluster_info",
    "cluster_keys",
    "cluster_variance",
    "pass_matrices",
    "run_effect",
    "run_variance",
    "task_family",
]

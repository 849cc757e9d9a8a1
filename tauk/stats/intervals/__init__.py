"""How an interval is made: every interval of pass^k / pass@k, from the per-task counts (n_t, c_t) to the two
intervals of a row and the words that say what made them.

Two intervals per (group, k): ``ci_low`` / ``ci_high`` for the **population** value E[p^k] (a new draw of tasks),
``rerun_ci_low`` / ``rerun_ci_high`` for the **fixed-task** value mean_t p_t^k (the same tasks run again). The
options that ask for them travel as one :class:`~tauk.stats.IntervalOptions` (``ci``, ``method``, ``resamples``,
``seed``). The modules, in the order the data flows:

* :mod:`~tauk.stats.intervals.group` — one group's intervals as tauk reports them: picks the method, calls the
  modules below, labels each interval (``interval_method``, ``rerun_interval_method``) and writes the notes;
* :mod:`~tauk.stats.intervals.model` — ``method="model"`` (the default): a beta-binomial posterior of the tasks,
  both intervals from one fit, checked against the data;

  * :mod:`~tauk.stats.intervals.posterior` — its prior, likelihood, weighted posterior points and the fixed-task
    draws;
  * :mod:`~tauk.stats.intervals.model_check` — its posterior predictive check (where it fails, the interval is
    joined with a task-bootstrap one);
  * :mod:`~tauk.stats.intervals.rerun_floor` — the variance floor of the fixed-task interval, with its generated
    table :mod:`~tauk.stats.intervals.minorants`;

* :mod:`~tauk.stats.intervals.blaker` — Blaker's exact binomial interval, the model's interval where every task has
  one trial;
* :mod:`~tauk.stats.intervals.nonparametric` — the task bootstrap / t interval as reported (clipped, Clopper–Pearson
  where every task is at 0 or at 1), and Clopper–Pearson on its own;
* :mod:`~tauk.stats.intervals.bootstrap` — the task-bootstrap kernels (BCa, percentile, bootstrap-t, t): one seeded
  resample matrix serves every k.

How well each holds its level at benchmark sizes (10–200 tasks, 1–8 trials) is measured in
``docs/calibration/intervals.md``, generated from ``benchmarks/results/``.

Examples
--------
>>> import numpy as np
>>> from tauk.stats.intervals import model_interval
>>> r = model_interval(np.full(10, 4), np.array([0, 0, 1, 1, 2, 2, 3, 4, 4, 4]), ks=[1])
>>> r.source, round(float(r.estimate[0]), 3)
('model', 0.525)
"""

from __future__ import annotations

from .bootstrap import BOOTSTRAP_METHODS, bootstrap_means, column_stats, interval
from .group import INTERVAL_FIELDS, MODEL, group_intervals, interval_notes
from .model import FALLBACK, ModelInterval, model_interval, model_interval_batch
from .model_check import CHECK_ALPHA, check_threshold, ppc_pvalue
from .nonparametric import clopper_pearson, task_interval, unanimous_interval
from .posterior import DEFAULT_PRIOR, Prior, beta_moment, posterior_points

__all__ = [
    "BOOTSTRAP_METHODS",
    "CHECK_ALPHA",
    "DEFAULT_PRIOR",
    "FALLBACK",
    "INTERVAL_FIELDS",
    "MODEL",
    "ModelInterval",
    "Prior",
    "beta_moment",
    "bootstrap_means",
    "check_threshold",
    "clopper_pearson",
    "column_stats",
    "group_intervals",
    "interval",
    "interval_notes",
    "model_interval",
    "model_interval_batch",
    "posterior_points",
    "ppc_pvalue",
    "task_interval",
    "unanimous_interval",
]

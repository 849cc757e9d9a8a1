"""Statistics on the trials frame, one folder or module per question: upstream metrics, pass^k / pass@k with
task-level uncertainty, comparisons, power, run-to-run consistency.

* :mod:`~tauk.stats.options` — the options every statistic shares (:class:`IntervalOptions`) and the lists of choices;
* :mod:`~tauk.stats.tasks` — trials (or mergeable task counts) → per-task (n, c);
* :mod:`~tauk.stats.intervals` — how an interval is made (the beta-binomial model, the task bootstrap, …);
* :mod:`~tauk.stats.dependence` — run effects shared by a pass, and task families (``cluster=``);
* :mod:`~tauk.stats.estimate` — one group's estimate, standard errors and intervals at each k;
* :mod:`~tauk.stats.passk` — :func:`pass_hat_k`, :func:`pass_at_k`, :func:`per_task`;
* :mod:`~tauk.stats.summary` — :func:`summarize` (the upstream metrics) and :func:`overall` (the leaderboard's mean);
* :mod:`~tauk.stats.comparisons` — is A better than B: :func:`compare`, :func:`compare_all`, p-values, rank intervals;
* :mod:`~tauk.stats.power` — how many tasks a comparison needs: :func:`power_analysis`, :func:`tasks_needed`;
* :mod:`~tauk.stats.noise` — run-to-run noise: :func:`consistency`.

One calling convention: the data first (a trials frame or a :class:`tauk.Results`, see :func:`as_trials`), every
option by keyword, with the same names and defaults everywhere — ``by=``, ``k=``, ``ci=``, ``method=``,
``resamples=``, ``seed=`` (or the last four as one ``options=``), ``infra=``, ``reward=``, ``progress=`` (defaults
from :mod:`tauk.conventions`). Every result is an immutable object with ``.to_frame()``, ``.records()`` (JSON-ready)
and ``.summary()`` (a :class:`SummaryTable`). No plotting here (see ``tauk.plot``).

>>> import tauk
>>> res = tauk.load("data")
>>> tauk.stats.pass_hat_k(res, by=("agent", "domain"), k=1, ci=None).to_frame()["estimate"].to_list()
[0.74, 0.79, 0.55, 0.47, 0.3, 0.37]
"""

import importlib as _importlib

from tauk.table import SummaryTable, latex_escape

from . import _old_paths
from .comparisons import Comparison, MultipleComparison, compare, compare_all
from .comparisons.pvalues import adjust_pvalues, benjamini_hochberg, holm, sign_flip_pvalue
from .deviation_profile import DeviationProfile, deviation_profile
from .noise import ConsistencyResult, consistency
from .options import ADJUSTMENTS, CI_METHODS, PAIRED_TESTS, IntervalOptions
from .passk import PassKResult, pass_at_k, pass_hat_k, per_task
from .power import PowerResult, power, power_analysis, tasks_needed
from .reliability import ReliabilityProfile, reliability
from .summary import Overall, Summary, overall, summarize
from .tasks import as_trials, merge_task_counts, task_counts

_old_paths.install()


def __getattr__(name: str):
    """``tauk.stats.model`` and the other old module paths (deprecated: :mod:`tauk.stats._old_paths`)."""
    if f"{__name__}.{name}" in _old_paths.MOVED:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ADJUSTMENTS",
    "CI_METHODS",
    "PAIRED_TESTS",
    "Comparison",
    "ConsistencyResult",
    "DeviationProfile",
    "IntervalOptions",
    "ReliabilityProfile",
    "MultipleComparison",
    "Overall",
    "PassKResult",
    "PowerResult",
    "Summary",
    "SummaryTable",
    "adjust_pvalues",
    "as_trials",
    "benjamini_hochberg",
    "compare",
    "compare_all",
    "consistency",
    "holm",
    "latex_escape",
    "deviation_profile",
    "merge_task_counts",
    "overall",
    "reliability",
    "pass_at_k",
    "pass_hat_k",
    "per_task",
    "power",
    "power_analysis",
    "sign_flip_pvalue",
    "summarize",
    "task_counts",
    "tasks_needed",
]

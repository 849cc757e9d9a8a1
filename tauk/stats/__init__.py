"""Statistics on the trials frame, one folder or module per question: upstream metrics, pass^k / pass@k with
task-level uncertainty, comparisons, power, run-to-run consistency.

* :mod:`~tauk.stats.options` — the options every statistic shares (:class:`IntervalOptions`) and the lists of choices;
* :mod:`~tauk.stats.tasks` — trials (or mergeable task counts) → per-task (n, c);
* :mod:`~tauk.stats.intervals` — how an interval is made (the beta-binomial model, the task bootstrap, …);
* :mod:`~tauk.stats.dependence` — run effects shared by a pass, and task families (``cluster=``);
* :mod:`~tauk.stats.estimate` — one group's estimate, standard errors and intervals at each k;
* :mod:`~tauk.stats.passk` — :func:`pass_hat_k`, :func:`pass_at_k`, :func:`per_task`;
* :mod:`~tauk.stats.summary` — :func:`summarize` (the upstream metrics); :mod:`~tauk.stats.setup_mean` —
  :func:`overall` (the leaderboard's mean over setups);
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

from tauk._lazy import lazy_exports as _lazy_exports
from tauk.table import SummaryTable, latex_escape

from . import _old_paths

# every public name, imported from its module on first use: `tauk summary` does not pay for the
# comparisons, power, reliability or deviation modules (nor SciPy's statistics) it does not call
_LAZY = {
    **dict.fromkeys(("Comparison", "MultipleComparison", "compare", "compare_all"), ".comparisons"),
    **dict.fromkeys(("adjust_pvalues", "benjamini_hochberg", "holm", "sign_flip_pvalue"), ".comparisons.pvalues"),
    **dict.fromkeys(("DeviationProfile", "deviation_profile"), ".deviation_profile"),
    **dict.fromkeys(("ConsistencyResult", "consistency"), ".noise"),
    **dict.fromkeys(("ADJUSTMENTS", "CI_METHODS", "PAIRED_TESTS", "IntervalOptions"), ".options"),
    **dict.fromkeys(("PassKResult", "pass_at_k", "pass_hat_k", "per_task"), ".passk"),
    **dict.fromkeys(("PowerResult", "power", "power_analysis", "tasks_needed"), ".power"),
    **dict.fromkeys(("ReliabilityProfile", "reliability"), ".reliability"),
    **dict.fromkeys(("Overall", "overall"), ".setup_mean"),
    **dict.fromkeys(("Summary", "summarize"), ".summary"),
    **dict.fromkeys(("as_trials", "merge_task_counts", "task_counts"), ".tasks"),
}

_old_paths.install()
_lazy_exports(__name__, _LAZY)


def __getattr__(name: str):
    if f"{__name__}.{name}" in _old_paths.MOVED:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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

"""Statistics on the trials frame: upstream metrics, pass^k / pass@k with task-level uncertainty, comparisons, power.

One calling convention: the data first (a trials frame or a :class:`tauk.Results`, see :func:`as_trials`), every
option by keyword, with the same names and defaults everywhere — ``by=``, ``k=``, ``ci=``, ``method=``,
``resamples=``, ``seed=``, ``infra=``, ``reward=``, ``progress=`` (defaults from :mod:`tauk.conventions`).
Every result is an immutable object with ``.to_frame()``, ``.records()`` (JSON-ready) and ``.summary()`` (a
:class:`SummaryTable`). No plotting here (see ``tauk.plot``).

>>> import tauk
>>> res = tauk.load("data")
>>> tauk.stats.pass_hat_k(res, by=("agent", "domain"), k=1, ci=None).to_frame()["estimate"].to_list()
[0.74, 0.79, 0.55, 0.47, 0.3, 0.37]
"""

from tauk.table import SummaryTable, latex_escape

from ._core import as_trials
from .compare import Comparison, MultipleComparison, compare, compare_all
from .consistency import ConsistencyResult, consistency
from .counts import merge_task_counts, task_counts
from .deviation_profile import DeviationProfile, deviation_profile
from .overall import Overall, overall
from .passk import PassKResult, pass_at_k, pass_hat_k, per_task
from .power import PowerResult, power, power_analysis, tasks_needed
from .pvalues import adjust_pvalues, benjamini_hochberg, holm, sign_flip_pvalue
from .reliability import ReliabilityProfile, reliability
from .summary import Summary, summarize

__all__ = [
    "Comparison",
    "Overall",
    "overall",
    "ConsistencyResult",
    "DeviationProfile",
    "deviation_profile",
    "consistency",
    "task_counts",
    "merge_task_counts",
    "MultipleComparison",
    "adjust_pvalues",
    "as_trials",
    "benjamini_hochberg",
    "compare",
    "compare_all",
    "holm",
    "latex_escape",
    "sign_flip_pvalue",
    "PassKResult",
    "PowerResult",
    "ReliabilityProfile",
    "reliability",
    "power",
    "power_analysis",
    "tasks_needed",
    "Summary",
    "SummaryTable",
    "pass_at_k",
    "pass_hat_k",
    "per_task",
    "summarize",
]

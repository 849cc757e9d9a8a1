"""Statistics on the trials frame: upstream metrics, pass^k / pass@k with task-level uncertainty, comparisons, power.

No plotting here (see ``tauk.plot``); every result is an immutable object with ``.to_frame()`` and ``.summary()``.
"""

from tauk.table import SummaryTable

from .compare import (
    Comparison,
    MultipleComparison,
    adjust_pvalues,
    benjamini_hochberg,
    compare,
    compare_all,
    holm,
    sign_flip_pvalue,
)
from .consistency import ConsistencyResult, consistency
from .passk import PassKResult, pass_at_k, pass_hat_k, per_task
from .power import PowerResult, power, tasks_needed
from .summary import Summary, summarize

__all__ = [
    "Comparison",
    "ConsistencyResult",
    "consistency",
    "MultipleComparison",
    "adjust_pvalues",
    "benjamini_hochberg",
    "compare",
    "compare_all",
    "holm",
    "sign_flip_pvalue",
    "PassKResult",
    "PowerResult",
    "power",
    "tasks_needed",
    "Summary",
    "SummaryTable",
    "pass_at_k",
    "pass_hat_k",
    "per_task",
    "summarize",
]

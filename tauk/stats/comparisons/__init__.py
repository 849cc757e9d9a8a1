"""Is A really better than B? Paired comparisons of agents on the tasks both ran, many-comparison control and rank
intervals.

* :mod:`~tauk.stats.comparisons.pairwise` — :func:`compare` (two agents) and :func:`compare_all` (every pair, adjusted
  p-values, rank intervals): the public entry points;
* :mod:`~tauk.stats.comparisons.pairing` — which tasks a comparison uses (both agents, n_t ≥ k);
* :mod:`~tauk.stats.comparisons.paired_tests` — the headline tests (paired t, exact and mid-p sign-flip), each with the
  interval that agrees with it;
* :mod:`~tauk.stats.comparisons.pvalues` — the sign-flip cross-check and the adjustments (Holm, Benjamini–Hochberg);
* :mod:`~tauk.stats.comparisons.ranks` — rank intervals by inverting the paired tests;
* :mod:`~tauk.stats.comparisons.results` — :class:`Comparison`, :class:`MultipleComparison` and the words of their notes.
* :mod:`~tauk.stats.comparisons.unseen` — what no interval over T tasks can see: decisive tasks not drawn (the floor
  under any interval that stays valid when some tasks are, quoted in ``interval_note``).

How well the tests hold their level and what power they have: ``docs/calibration/comparisons.md``.

Examples
--------
>>> import tauk
>>> c = tauk.stats.compare(tauk.load("data"), "atlas-large", "baseline", pool_setups=True)
>>> round(c.diff, 2), c.row()["interval_method"]
(0.43, 'score')
"""

from __future__ import annotations

from .paired_tests import PairedTest, paired_test
from .pairwise import compare, compare_all
from .pvalues import adjust_pvalues, benjamini_hochberg, holm, sign_flip_pvalue
from .ranks import RankIntervals, rank_intervals
from .results import RANK_FIELDS, Comparison, MultipleComparison, comparison_notes

__all__ = [
    "Comparison",
    "MultipleComparison",
    "PairedTest",
    "RANK_FIELDS",
    "RankIntervals",
    "adjust_pvalues",
    "benjamini_hochberg",
    "compare",
    "compare_all",
    "comparison_notes",
    "holm",
    "paired_test",
    "rank_intervals",
    "sign_flip_pvalue",
]

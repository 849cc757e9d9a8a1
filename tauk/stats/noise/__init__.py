"""How much of a score is the agent, and how much the dice: run-to-run consistency of repeated trials.

* :mod:`~tauk.stats.noise.analysis` — :func:`consistency` and its :class:`ConsistencyResult` (every definition
  is in its docstring);
* :mod:`~tauk.stats.noise.groups` — one group's figures from its trials' outcomes;
* :mod:`~tauk.stats.noise.agreement` — the ICC(1) and the beta-binomial ρ (how much variance lies between
  tasks);
* :mod:`~tauk.stats.noise.noise_floor` — the re-run variance and the noise floor (the smallest significant gap
  between two runs of one setup);
* :mod:`~tauk.stats.noise.ranking` — signal to noise of a ranking, and the trials that resolve it.

The calibration of the noise floor: ``docs/calibration/consistency.md``.

Examples
--------
>>> import tauk
>>> c = tauk.stats.consistency(tauk.load("data"))
>>> c.records()[0]["pass1"], c.records()[0]["mdd_single_runs"]
(0.74, 0.24)
"""

from __future__ import annotations

from .agreement import beta_binomial_rho, icc_oneway
from .analysis import ConsistencyResult, consistency
from .noise_floor import FEW_FLAKY, MIN_FLAKY, difference_null, mdd_threshold, noise_floor, rerun_variance

__all__ = [
    "ConsistencyResult",
    "consistency",
    "MIN_FLAKY",
    "FEW_FLAKY",
    "icc_oneway",
    "beta_binomial_rho",
    "rerun_variance",
    "difference_null",
    "mdd_threshold",
    "noise_floor",
]

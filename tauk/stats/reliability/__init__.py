"""The reliability profile (:func:`reliability`): outcome consistency by an unbiased U-statistic (HAL's plug-in
beside it), resource consistency (coefficients of variation) and trajectory consistency of successful trials, each
a mean over tasks of a value whose expectation does not depend on the number of trials, with a task-level interval.

Modules: :mod:`~tauk.stats.reliability.estimators` (array kernels), :mod:`~tauk.stats.reliability.profile` (the
function and its result). Measurements: docs/failure_attribution_and_reliability.md.
"""

from .estimators import (
    c4,
    cv_unbiased_sd,
    edit_similarity,
    outcome_plugin,
    outcome_u,
    skew_t_interval,
    subsample_prediction_interval,
    t_interval,
)
from .profile import METRICS, RESOURCES, ReliabilityProfile, reliability

__all__ = [
    "METRICS",
    "RESOURCES",
    "ReliabilityProfile",
    "c4",
    "cv_unbiased_sd",
    "edit_similarity",
    "outcome_plugin",
    "outcome_u",
    "reliability",
    "skew_t_interval",
    "subsample_prediction_interval",
    "t_interval",
]

"""The rules of the format and of the metrics, each written once (see ``docs/spec.md``).

Every other module imports these names; nothing else spells out the success tolerance, the normal endings, the
reward components, the domain order or the statistical defaults.

Examples
--------
>>> from tauk.conventions import SUCCESS_TOL, NORMAL_ENDINGS, is_success
>>> SUCCESS_TOL, NORMAL_ENDINGS
(1e-06, ('user_stop', 'agent_stop'))
>>> is_success(0.9999995), is_success(0.5), is_success(None)
(True, False, False)
"""

from __future__ import annotations

from typing import Any

import polars as pl

__all__ = [
    "SUCCESS_TOL",
    "NORMAL_ENDINGS",
    "INFRA_REASON",
    "TERMINATION_REASONS",
    "PREMATURE_ENDINGS",
    "COMPONENTS",
    "DEFAULT_REWARD_BASIS",
    "DOMAIN_ORDER",
    "OVERALL_DOMAINS",
    "TASK_KEY",
    "CI_LEVEL",
    "CI_METHOD",
    "CI_METHODS",
    "RESAMPLES",
    "SEED",
    "INFRA",
    "INFRA_RULES",
    "PAIRED_TEST",
    "PAIRED_TESTS",
    "RUN_EFFECTS",
    "CLUSTER_FAMILY",
    "INVERSION_PERMUTATIONS",
    "ADJUST",
    "ADJUSTMENTS",
    "is_success",
    "success_expr",
    "domain_sort_key",
]

# ---- success (docs/spec.md §3) -------------------------------------------------------------------------------
SUCCESS_TOL = 1e-6
"""A trial succeeds when ``1 - SUCCESS_TOL <= reward <= 1 + SUCCESS_TOL``; a null reward is a failure."""


def is_success(reward: Any) -> bool:
    """The success rule for one reward value (None is a failure).

    >>> is_success(1.0), is_success(1 + 2e-6)
    (True, False)
    """
    if reward is None:
        return False
    r = float(reward)
    return 1.0 - SUCCESS_TOL <= r <= 1.0 + SUCCESS_TOL


def success_expr(column: str = "reward") -> pl.Expr:
    """The success rule as a Polars expression on ``column`` (null is a failure).

    >>> pl.DataFrame({"reward": [1.0, 0.0, None]}).select(success_expr()).to_series().to_list()
    [True, False, False]
    """
    c = pl.col(column).cast(pl.Float64)
    return c.is_between(1.0 - SUCCESS_TOL, 1.0 + SUCCESS_TOL).fill_null(False).alias("success")


# ---- termination (docs/spec.md §1.1, §2.1) -------------------------------------------------------------------
NORMAL_ENDINGS: tuple[str, ...] = ("user_stop", "agent_stop")
"""Termination reasons that pass the termination gate; every other reason scores 0."""

INFRA_REASON = "infrastructure_error"
"""The termination reason of an infrastructure error (dropped or counted as a failure: ``infra=``)."""

TERMINATION_REASONS: tuple[str, ...] = (
    "user_stop", "agent_stop", "max_steps", "too_many_errors",  # all versions
    "agent_error", "user_error",  # 0.2.1+
    "timeout", "infrastructure_error", "context_window_exceeded", "unexpected_error",  # 1.0+
)  # fmt: skip
"""Every termination reason τ²-bench has written, oldest first (loaders keep unknown values too)."""

PREMATURE_ENDINGS: tuple[str, ...] = tuple(r for r in TERMINATION_REASONS if r not in NORMAL_ENDINGS)
"""The known reasons that fail the termination gate."""

# ---- reward components (docs/spec.md §2.3) -------------------------------------------------------------------
COMPONENTS: tuple[str, ...] = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
"""Reward components, in the fixed order used by the ``failure`` column and the figures."""

DEFAULT_REWARD_BASIS: tuple[str, ...] = ("DB", "COMMUNICATE")
"""The reward basis of a task that names none."""

# ---- domains -------------------------------------------------------------------------------------------------
DOMAIN_ORDER: tuple[str, ...] = ("airline", "retail", "telecom", "banking_knowledge", "banking", "mock")
"""Display order of the known domains (others follow alphabetically); also the names a τ-bench file name is
searched for."""

OVERALL_DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom")
"""The leaderboard's "overall" is the unweighted mean of pass^1 over these domains."""


def domain_sort_key(name: Any) -> tuple[int, str]:
    """Sort key putting the known domains first, in :data:`DOMAIN_ORDER`, then the rest alphabetically.

    >>> sorted(["zoo", "retail", "airline"], key=domain_sort_key)
    ['airline', 'retail', 'zoo']
    """
    s = "" if name is None else str(name)
    return (DOMAIN_ORDER.index(s) if s in DOMAIN_ORDER else len(DOMAIN_ORDER), s)


# ---- statistics ------------------------------------------------------------------------------------------------
TASK_KEY: tuple[str, ...] = ("domain", "task_id")
"""A task is identified by (domain, task_id): a label spanning domains never merges unrelated tasks."""

CI_LEVEL = 0.95
"""Default confidence level of every interval (API, CLI, report, widgets, notebooks)."""

CI_METHOD = "model"
"""Default interval method: ``"model"``, the beta-binomial posterior of :mod:`tauk.stats.intervals.model`
(population and re-run intervals from one posterior, with a model check); ``"bca"``, ``"percentile"``,
``"bootstrap-t"`` and ``"t"`` are the task-bootstrap / t alternatives. Comparisons read ``"model"`` as "the paired
test's own interval"."""

CI_METHODS: tuple[str, ...] = ("model", "bca", "percentile", "t", "bootstrap-t")
"""Every interval ``method=`` (and the command line's ``--method`` choices): the model first, then the task
bootstrap / t methods (:data:`tauk.stats.intervals.BOOTSTRAP_METHODS`)."""

RESAMPLES = 9999
"""Default number of bootstrap resamples (and sign-flip permutations)."""

SEED = 0
"""Default seed of every resampling: the same data give the same interval everywhere."""

INFRA = "drop"
"""Default treatment of infrastructure errors (``"drop"``: τ²-bench ≥ 1.0; ``"fail"``: the leaderboard's)."""

INFRA_RULES: tuple[str, ...] = ("drop", "fail")
"""Every ``infra=``: drop infrastructure errors before every metric, or count them as failed trials."""

PAIRED_TEST = "t"
"""Default headline test of a comparison: the paired t test with T − 1 degrees of freedom."""

PAIRED_TESTS: tuple[str, ...] = ("t", "signflip", "signflip-mid")
"""Every ``test=`` of :func:`tauk.stats.compare` (the paired t test, the exact sign-flip test, its mid-p version)."""

INVERSION_PERMUTATIONS = 19_999
"""Monte-Carlo sign flips of an inverted sign-flip interval (and of the rank intervals' sign-flip tests), used only
when the exact lattice of the differences is too large; more than :data:`RESAMPLES` because an interval's ends sit
in the tails."""

RUN_EFFECTS: tuple[str, ...] = ("adjust", "report")
"""Every ``run_effects=`` of summarize / compare (tauk.stats.dependence): widen the intervals by a run effect
shared by a pass (the first, default), or only report it."""

CLUSTER_FAMILY = "family"
"""``cluster=CLUSTER_FAMILY``: the task families the task ids encode (telecom's issue type × persona)."""

ADJUST = "holm"
"""Default multiple-comparison adjustment of :func:`tauk.stats.compare_all` (Holm's step-down)."""

ADJUSTMENTS: tuple[str, ...] = ("holm", "bh", "none")
"""Every ``adjust=`` (Holm, Benjamini–Hochberg, none); ``"fdr_bh"`` and ``"benjamini-hochberg"`` are read as
``"bh"``."""

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
    "MIN_SIMULATIONS",
    "MIN_TASKS",
    "INFRA",
    "INFRA_RULES",
    "MIN_COVERAGE",
    "PAIRED_TEST",
    "PAIRED_TESTS",
    "PAIRED_TEST_DESCRIPTIONS",
    "RUN_EFFECTS",
    "CLUSTER_FAMILY",
    "INVERSION_PERMUTATIONS",
    "ADJUST",
    "ADJUSTMENTS",
    "is_success",
    "success_expr",
    "domain_sort_key",
    "small_reason",
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

MAX_RESAMPLES = 10_000_000
"""The most ``resamples`` accepted: a bootstrap keeps one float per resample and statistic (80 MB each at this cap;
10⁹ would need 8 GB each and hours), so more is refused before any work starts."""

DEFAULT_K_MAX = 16
"""The largest k of the *default* k list (1 … min(num_trials, min_t n_t, this)): 10⁴ trials a task would otherwise
give 10⁴ columns. Any larger k is still computed when asked for (``k=``, ``--k``)."""

SEED = 0
"""Default seed of every resampling: the same data give the same interval everywhere."""

MIN_SIMULATIONS = 20
"""A headline row (a setup, a run) with fewer simulations is flagged and left out of rankings and means unless asked
(``include_small=True``): one or a few simulations say little about an agent."""

MIN_TASKS = 10
"""… and likewise a row with fewer tasks."""

INFRA = "drop"
"""Default treatment of infrastructure errors (``"drop"``: τ²-bench ≥ 1.0; ``"fail"``: the leaderboard's)."""

INFRA_RULES: tuple[str, ...] = ("drop", "fail")
"""Every ``infra=``: drop infrastructure errors before every metric, or count them as failed trials."""

MIN_COVERAGE = 0.8
"""Default ``min_coverage`` of a summary (``tauk summary --min-coverage``): a group whose kept trials are fewer than
this share of its planned trials (infrastructure errors dropped, trial indices missing) is flagged and not ranked."""

PAIRED_TEST = "score"
"""Default headline test of a comparison: the score test and its interval (where every per-task difference is −1, 0 or 1 an
exact interval designed by integer programming, or Tango's joined with an adjusted Wald one outside its range, with the exact unconditional p-value; :mod:`tauk.stats.comparisons.score`). Until 0.x it was ``"t"``."""

PAIRED_TESTS: tuple[str, ...] = ("score", "t", "signflip", "signflip-mid")
"""Every ``test=`` of :func:`tauk.stats.compare` (the score test, the paired t test, the exact sign-flip test, its
mid-p version)."""

PAIRED_TEST_DESCRIPTIONS: dict[str, str] = {
    "score": "score test (exact unconditional where every d_t is −1, 0 or 1)",
    "t": "paired t test (T − 1 df)",
    "signflip": "exact sign-flip test",
    "signflip-mid": "mid-p sign-flip test",
}
"""Each ``test=`` in words (comparison notes, the command line's help)."""

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


def small_reason(n_simulations: Any, n_tasks: Any) -> str | None:
    """Why a headline row is too small to rank or average (None when it is not): under :data:`MIN_SIMULATIONS`
    simulations or :data:`MIN_TASKS` tasks.

    >>> small_reason(1, 1), small_reason(40, 40), small_reason(20, 5)
    ('1 sim < 20', None, '5 tasks < 10')
    """
    if n_simulations is not None and n_simulations < MIN_SIMULATIONS:
        return f"{n_simulations} sim{'s' if n_simulations != 1 else ''} < {MIN_SIMULATIONS}"
    if n_tasks is not None and n_tasks < MIN_TASKS:
        return f"{n_tasks} task{'s' if n_tasks != 1 else ''} < {MIN_TASKS}"
    return None

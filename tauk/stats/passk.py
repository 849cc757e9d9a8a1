"""pass^k and pass@k with honest, task-level uncertainty (docs/spec.md §3–4).

Estimators (per group, over tasks t = 1…T with n_t trials and c_t successes):

* pass^k = mean_t Û_k,   Û_k = C(c_t, k) / C(n_t, k)        (unbiased for E[p^k])
* pass@k = mean_t 1 − C(n_t − c_t, k) / C(n_t, k)           (unbiased for E[1 − (1−p)^k])

Uncertainty, for two different questions:

* *population* (new tasks drawn from the same pool): ``se_tasks = sd_t(Û_k)/√T`` and ``ci_low`` / ``ci_high``;
* *fixed tasks* (re-running the same T tasks): ``se_rerun = √(Σ_t (Û_k² − Û_2k)) / T`` — Û_k² − Û_2k is unbiased
  for the per-task variance of Û_k — when every n_t ≥ 2k, and ``rerun_ci_low`` / ``rerun_ci_high``.

Both intervals come by default (``method="model"``) from one beta-binomial posterior (:mod:`tauk.stats.intervals`,
calibrated at 10–50 tasks where the task bootstrap is not: ``docs/calibration/intervals.md``); ``method="bca"``,
``"percentile"``, ``"bootstrap-t"`` give a task-bootstrap population interval and ``"t"`` a t interval with T−1
df, each with the normal re-run interval. Trials are never resampled within tasks: that centres pass^k on (c/n)^k
(biased upward for k > 1) and a two-stage bootstrap counts trial noise twice (docs/spec.md §4). One matrix of resampled task
indices per group serves every k.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk._compat import keyword_options
from tauk.conventions import CI_LEVEL, CI_METHOD, INFRA, RESAMPLES, SEED
from tauk.errors import TaukError
from tauk.table import SummaryTable

from ._old_paths import moved_names
from .estimate import (
    estimate_group,
    group_models_for,
    long_frame,
    metric_key,
    records_by_k,
    resolve_ks,
    warn_excluded,
)
from .intervals.group import interval_notes
from .options import IntervalOptions, interval_options
from .tasks import (
    SETUP_NOTE,
    as_trials,
    normalize_by,
    normalize_k,
    prepare_trials,
    resolve_by,
    task_groups,
    u_hat,
)

__all__ = ["PassKResult", "pass_hat_k", "pass_at_k", "per_task"]

# names this module re-exported before the statistics were arranged by question (one release, with a warning)
__getattr__ = moved_names(__name__, {
    "estimate_group": "tauk.stats.estimate",
    "as_trials": "tauk.stats.tasks",
    "unanimous_interval": "tauk.stats.intervals.nonparametric",
    "bootstrap_means": "tauk.stats.intervals.bootstrap",
    "bootstrap_t_interval": "tauk.stats.intervals.bootstrap",
})

# the order of the parameters before they became keyword-only (kept working, with a DeprecationWarning)
_OLD_ORDER = ("trials", "by", "infra", "k", "ci", "method", "resamples", "seed", "progress")


@dataclass(frozen=True)
class PassKResult:
    """pass^k or pass@k per group and k (immutable; from :func:`pass_hat_k` / :func:`pass_at_k`).

    ``frame``: group keys, k, n_tasks, n_tasks_excluded (n_t < k), estimate, se_tasks, se_rerun, ci_low, ci_high
    (population: a new draw of tasks), rerun_ci_low, rerun_ci_high (fixed tasks: the same tasks re-run),
    interval_method and rerun_interval_method (what made each interval: ``"model"``, ``"model+bca (check
    failed)"``, ``"blaker (n=1)"``, ``"bca"``, ``"clopper-pearson over tasks (unanimous)"``, ``"normal
    (se_rerun)"``, ``"model (se_rerun = 0)"``, or ``"none: …"`` saying why an interval is null), model_check_p and
    model_check_passed (the model's posterior predictive check; null when the model made no interval of the row or
    could not be checked). ``n_tasks_no_kept``: group keys and the count of tasks whose every trial was dropped.
    """

    metric: str
    by: tuple[str, ...]
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    frame: pl.DataFrame
    n_tasks_no_kept: pl.DataFrame  # group keys + count of tasks whose every trial was dropped
    reward: str = "reward"
    split_by_setup: bool = False  # ``setup`` was added to the grouping (groups spanned several setups)

    @property
    def options(self) -> IntervalOptions:
        """The interval options the result was made with."""
        return IntervalOptions(self.ci, self.method, self.resamples, self.seed)

    def to_frame(self) -> pl.DataFrame:
        """The long frame: one row per (group, k)."""
        return self.frame

    def estimate(self, k: int = 1, **group: Any) -> float | None:
        """The point estimate for one k (and one group, given as keyword filters on the group keys).

        Examples
        --------
        >>> import tauk
        >>> res = tauk.load("data")
        >>> tauk.stats.pass_hat_k(res, by=("agent", "domain"), ci=None).estimate(2, agent="baseline", domain="retail")
        0.2
        """
        df = self.frame.filter(pl.col("k") == k)
        for col, val in group.items():
            df = df.filter(pl.col(col) == val)
        if df.height != 1:
            raise TaukError(f"{df.height} rows match k={k}, {group}; give every group key")
        return df["estimate"][0]

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per group: group keys and ``{metric: {"k": {estimate, ci_low, ci_high, se_tasks,
        se_rerun, rerun_ci_low, rerun_ci_high, interval_method, rerun_interval_method, model_check_p,
        model_check_passed}}}`` (metric ``pass_hat_k`` or ``pass_at_k``)."""
        return records_by_k(self.frame, self.by, metric_key(self.metric))

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX) of every (group, k); the notes say what made the intervals."""
        cols = [*self.by, "k", "tasks", self.metric, "se_tasks", "se_rerun", "ci_low", "ci_high", "rerun_low",
                "rerun_high"]  # fmt: skip
        rows = [
            [*(r[c] for c in self.by), r["k"], r["n_tasks"], r["estimate"], r["se_tasks"], r["se_rerun"], r["ci_low"],
             r["ci_high"], r["rerun_ci_low"], r["rerun_ci_high"]]
            for r in self.frame.iter_rows(named=True)
        ]  # fmt: skip
        notes = interval_notes(self.frame, self.by, self.options)
        notes.append(f"infrastructure errors: {self.infra}")
        if self.split_by_setup:
            notes.append(SETUP_NOTE)
        excl = self.frame.filter(pl.col("n_tasks_excluded") > 0)
        if excl.height:
            notes.append(f"{excl.height} (group, k) cells left out tasks with fewer than k trials (see n_tasks_excluded)")
        fields = [*self.by, "k", "n_tasks", "estimate", "se_tasks", "se_rerun", "ci_low", "ci_high", "rerun_ci_low",
                  "rerun_ci_high"]  # fmt: skip
        return SummaryTable.build(self.metric, cols, rows, notes, fields=fields, keys=len(self.by) + 1)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _run(
    metric: str,
    trials: Any,
    by: str | Sequence[str] | None,
    infra: str,
    k: int | Iterable[int] | None,
    options: IntervalOptions,
    progress: bool | None,
    reward: str,
    pool_setups: bool = False,
) -> PassKResult:
    asked = normalize_by(by)
    ks = normalize_k(k)
    df = prepare_trials(as_trials(trials, [*asked, reward]), infra, reward)
    by_t = resolve_by(df, asked, pool_setups)
    groups = task_groups(df, by_t)
    items = [(g, resolve_ks(g, ks)) for g in groups]
    models = group_models_for(items, metric, options)  # one vectorised fit, each group's own numbers
    keyed = [(g.key, estimate_group(g, gks, metric, options, progress, model=m)) for (g, gks), m in zip(items, models)]
    if ks is not None:
        warn_excluded(by_t, keyed, stacklevel=5)
    frame = long_frame(by_t, df.schema, keyed)
    dropped = pl.DataFrame(
        {**{c: [g.key[i] for g in groups] for i, c in enumerate(by_t)}, "n_tasks_no_kept": [g.n_tasks_no_kept for g in groups]},
        schema={**{c: df.schema[c] for c in by_t}, "n_tasks_no_kept": pl.Int64},
    )
    return PassKResult(metric, by_t, infra, options.ci, options.method, options.resamples, options.seed, frame, dropped,
                       reward, by_t != asked)  # fmt: skip


@keyword_options(_OLD_ORDER)
def pass_hat_k(
    trials: Any,
    *,
    by: str | Sequence[str] | None = ("run_id",),
    k: int | Iterable[int] | None = None,
    ci: float | None = CI_LEVEL,
    method: str = CI_METHOD,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    infra: str = INFRA,
    reward: str = "reward",
    progress: bool | None = None,
    pool_setups: bool = False,
    options: IntervalOptions | None = None,
) -> PassKResult:
    """pass^k per group: the mean over tasks of Û_k = C(c_t,k)/C(n_t,k), with se_tasks, se_rerun and intervals for
    a new draw of tasks (``ci_low``/``ci_high``) and for these tasks re-run (``rerun_ci_low``/``rerun_ci_high``).

    The default intervals come from a beta-binomial model of the tasks, checked against the data (see
    :mod:`tauk.stats.intervals.model`); the columns ``interval_method``, ``rerun_interval_method``, ``model_check_p`` and
    ``model_check_passed`` say what made them. The same seed gives the same numbers.

    Parameters
    ----------
    trials
        A trials frame, or anything with a ``.trials`` frame (:class:`tauk.Results`); see :func:`as_trials`.
        A scored frame (:func:`tauk.score`) works too, with ``reward="score_reward"``.
    by
        Column(s) to group by (default one group per run); ``None`` for a single group.
    k
        An int or several; default 1 … min(num_trials, min_t n_t, 16) per group (:data:`~tauk.conventions.DEFAULT_K_MAX`). Any k may be asked for: tasks with
        n_t < k are left out of that k, counted in ``n_tasks_excluded`` and reported with a
        :class:`tauk.StatsWarning`.
    ci
        Confidence level of the interval (default :data:`tauk.conventions.CI_LEVEL`); ``None`` for no interval.
    method
        ``"model"`` (default, :data:`tauk.conventions.CI_METHOD`): the beta-binomial posterior — both intervals from
        one fit; where its posterior predictive check fails (p < 0.05; up to 0.20 from 200 tasks), the union with a
        BCa task interval; every task with one trial: Blaker's exact interval on (Σ c_t, T). ``"bca"``, ``"percentile"``, ``"bootstrap-t"``
        (task bootstrap) or ``"t"`` (T−1 df) for the population and θ̂ ± z·se_rerun for a re-run (the model's
        fixed-task interval where se_rerun = 0); where every task is at 0 or every task at 1, the population
        interval is Clopper–Pearson over the tasks instead of the point.
    resamples, seed
        Bootstrap resamples (the bootstrap methods and the model's fallback) and seed (also of the model's
        re-run draws and check); defaults :data:`~tauk.conventions.RESAMPLES`, :data:`~tauk.conventions.SEED`.
    options
        The four interval options as one :class:`~tauk.stats.IntervalOptions`, instead of ``ci``, ``method``,
        ``resamples`` and ``seed`` (giving both is an error unless those are at their defaults).
    infra
        ``"drop"`` (default) removes infrastructure errors before every metric; ``"fail"`` counts them as failures.
    reward
        The column holding the reward (default ``"reward"``; ``"score_reward"`` for a frame from :func:`tauk.score`).
    progress
        Show a progress bar (default: only for very large bootstraps).
    pool_setups
        Pool trials of different setups (``setup`` column: domain, mode, user model, reward bases) into one group.
        By default a group spanning several setups is reported per setup (``setup`` joins the grouping and the
        result says so): they are not repeated trials of one experiment.

    Returns
    -------
    PassKResult
        ``to_frame()``: one row per (group, k); ``records()``, ``summary()``.

    Raises
    ------
    TaukError
        On a bad option or a trials frame lacking a needed column.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> r = tauk.stats.pass_hat_k(res, by=("agent", "domain"), k=1)
    >>> r.to_frame().filter(domain="airline")["estimate"].to_list()
    [0.74, 0.55, 0.3]
    >>> row = r.to_frame().filter(agent="baseline", domain="airline")
    >>> lo, hi, how = row.select("ci_low", "ci_high", "interval_method").row(0)
    >>> round(lo, 4), round(hi, 4), how
    (0.208, 0.4269, 'model')
    >>> scored = tauk.score(res)
    >>> tauk.stats.pass_hat_k(scored, by="agent", k=1, ci=None, reward="score_reward", pool_setups=True).estimate(
    ...     agent="baseline")
    0.335
    """
    opts = interval_options(options, ci=ci, method=method, resamples=resamples, seed=seed)
    return _run("pass^k", trials, by, infra, k, opts, progress, reward, pool_setups)


@keyword_options(_OLD_ORDER)
def pass_at_k(
    trials: Any,
    *,
    by: str | Sequence[str] | None = ("run_id",),
    k: int | Iterable[int] | None = None,
    ci: float | None = CI_LEVEL,
    method: str = CI_METHOD,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    infra: str = INFRA,
    reward: str = "reward",
    progress: bool | None = None,
    pool_setups: bool = False,
    options: IntervalOptions | None = None,
) -> PassKResult:
    """pass@k per group: the mean over tasks of 1 − C(n_t−c_t,k)/C(n_t,k).

    Same options and uncertainty as :func:`pass_hat_k` (the fixed-task SE uses the failure counts:
    Var = Û_k(f)² − Û_2k(f)).

    Parameters
    ----------
    trials
        A trials frame or :class:`tauk.Results` (see :func:`as_trials`).
    by, k, ci, method, resamples, seed, infra, reward, progress, pool_setups, options
        As for :func:`pass_hat_k`.

    Returns
    -------
    PassKResult
        With ``metric == "pass@k"``.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> r = tauk.stats.pass_at_k(res, by=("agent", "domain"), k=[1, 4], ci=None)
    >>> [round(x, 4) for x in r.to_frame().filter(agent="baseline", domain="airline")["estimate"]]
    [0.3, 0.68]
    """
    opts = interval_options(options, ci=ci, method=method, resamples=resamples, seed=seed)
    return _run("pass@k", trials, by, infra, k, opts, progress, reward, pool_setups)


@keyword_options(("trials", "by", "infra", "k"))
def per_task(
    trials: Any,
    *,
    by: str | Sequence[str] | None = ("run_id",),
    k: int | Iterable[int] | None = None,
    infra: str = INFRA,
    reward: str = "reward",
    pool_setups: bool = False,
) -> pl.DataFrame:
    """The per-task table: counts and Û_k of every task in every group.

    Parameters
    ----------
    trials
        A trials frame or :class:`tauk.Results` (see :func:`as_trials`).
    by
        Column(s) to group by (default one group per run); ``None`` for a single group.
    k
        The k of the ``U_k`` columns; without it, 1 … the largest default k of any group.
    infra, reward
        As for :func:`pass_hat_k`.

    Returns
    -------
    polars.DataFrame
        Group keys, domain, task_id, n (denominator), c (successes), n_trials (kept trials present; differs from
        n only for τ-bench runs with missing trials), U_1 … U_K (Û_k; null where n < k).

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> pt = tauk.stats.per_task(res, by=("agent", "domain"), k=[1, 2])
    >>> pt.columns
    ['agent', 'domain', 'task_id', 'n', 'c', 'n_trials', 'U_1', 'U_2']
    >>> pt.height
    150
    """
    ks = normalize_k(k)
    df = prepare_trials(as_trials(trials, [*normalize_by(by), reward]), infra, reward)
    by_t = resolve_by(df, normalize_by(by), pool_setups)
    groups = task_groups(df, by_t)
    if ks is None:
        K = max((len(g.default_ks()) for g in groups), default=0)
        ks = tuple(range(1, K + 1))
    task_cols = [c for c in ("domain", "task_id") if c not in by_t]
    schema = {c: df.schema[c] for c in by_t}
    if "domain" in task_cols:
        schema["domain"] = pl.String
    schema.update({"task_id": pl.String, "n": pl.Int64, "c": pl.Int64, "n_trials": pl.Int64})
    schema.update({f"U_{kk}": pl.Float64 for kk in ks})
    parts = []
    for g in groups:
        data: dict[str, Any] = {c: [g.key[i]] * g.T for i, c in enumerate(by_t)}
        if "domain" in task_cols:
            data["domain"] = list(g.domain)
        data["task_id"] = list(g.task_id)
        data["n"] = g.n
        data["c"] = g.c
        data["n_trials"] = g.n_trials
        for kk in ks:
            data[f"U_{kk}"] = pl.Series(u_hat(g.n, g.c, kk), dtype=pl.Float64).fill_nan(None)
        parts.append(pl.DataFrame(data, schema=schema))
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat(parts)

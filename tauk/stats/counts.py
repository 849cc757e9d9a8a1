"""Per-task counts: the mergeable sufficient statistics of every pass^k / pass@k / summary figure.

A corpus too large for one frame (a store of millions of simulations, a cluster) reduces each part to counts per
(run, task) — trials, kept trials, successes, rewarded and fractional trials, infrastructure errors, the sums of
reward and cost, the distinct trial indices — merges the parts' counts by summing them, and hands the result to
:mod:`tauk.stats` in place of a trials frame: :func:`~tauk.stats.pass_hat_k`, :func:`~tauk.stats.pass_at_k`,
:func:`~tauk.stats.per_task`, :func:`~tauk.stats.summarize` and :func:`~tauk.stats.compare` give the very numbers
they give on the trials (checked by tests/test_distributed.py). Statistics that need each trial's outcome (the
run-to-run consistency) refuse counts with a :class:`~tauk.TaukError`.

Examples
--------
>>> import tauk
>>> res = tauk.load("data")
>>> halves = [task_counts(res.trials.head(300)), task_counts(res.trials.tail(300))]
>>> counts = merge_task_counts(halves)
>>> a = tauk.stats.pass_hat_k(counts, by=("agent", "domain"), k=2, ci=None).to_frame()["estimate"]
>>> b = tauk.stats.pass_hat_k(res, by=("agent", "domain"), k=2, ci=None).to_frame()["estimate"]
>>> a.equals(b)
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from tauk.conventions import INFRA, TASK_KEY
from tauk.errors import TaukError

from ._core import as_trials, normalize_by, prepare_trials, reward_flags

__all__ = ["task_counts", "merge_task_counts", "is_task_counts", "COUNT_COLUMNS", "LABEL_COLUMNS"]

LABEL_COLUMNS: tuple[str, ...] = ("run_id", "format", "agent", "setup", *TASK_KEY)
"""The keys every counts frame carries (a row is one task of one run); ``by=`` adds more."""

COUNT_COLUMNS: tuple[str, ...] = ("trials", "kept", "successes", "rewarded", "fractional", "infra", "reward_sum",
                                  "cost_sum", "cost_n", "num_trials", "trial_indices")  # fmt: skip
"""What a counts row holds: trials (rows), kept (after the infra rule), successes (kept), rewarded (kept with a
reward), fractional (kept with a reward neither 0 nor 1), infra (infrastructure errors), reward_sum (kept), cost_sum
and cost_n (kept, non-null cost), num_trials (the runs' ``num_trials``, min), trial_indices (distinct, for τ-bench's
per-run N). All but the last two are sums; ``infra_rule`` and ``reward_column`` record how they were made."""

_RULES = ("infra_rule", "reward_column")


def is_task_counts(frame: Any) -> bool:
    """True when ``frame`` is a counts frame of :func:`task_counts` (rather than a trials frame)."""
    return isinstance(frame, pl.DataFrame) and set(COUNT_COLUMNS).issubset(frame.columns) and \
        "simulation_id" not in frame.columns  # fmt: skip


def task_counts(data: Any, *, by: str | Sequence[str] | None = None, infra: str = INFRA,
                reward: str = "reward") -> pl.DataFrame:  # fmt: skip
    """The per-(run, task) counts of a trials frame (or anything :func:`~tauk.stats.as_trials` accepts).

    Parameters
    ----------
    data
        Trials frame, ``LazyFrame`` or :class:`tauk.Results` (a store opened with :func:`tauk.open` reads only the
        columns needed).
    by
        Extra columns to keep as keys (the run, format, agent, setup, domain and task are always kept), so that
        statistics can later group by them.
    infra, reward
        As in every statistic; they are recorded in the frame, and a statistic asked for another rule refuses it.

    Returns
    -------
    polars.DataFrame
        One row per (run, task) (per extra key), columns :data:`LABEL_COLUMNS`, the ``by`` columns,
        :data:`COUNT_COLUMNS`, ``infra_rule`` and ``reward_column``.

    Examples
    --------
    >>> import tauk
    >>> c = task_counts(tauk.load("data"))
    >>> c.height, int(c["trials"].sum()), int(c["successes"].sum())
    (150, 600, 322)
    """
    extra = [c for c in normalize_by(by) if c not in LABEL_COLUMNS]
    df = prepare_trials(as_trials(data, [*extra, reward]), infra, reward)
    for c in extra:
        if c not in df.columns:
            raise TaukError(f"cannot keep {c!r}: not a column of the trials frame")
    kept = pl.col("_kept")
    rewarded, fractional = reward_flags()
    cost = kept & pl.col("agent_cost").is_not_null()
    return (
        df.group_by([*LABEL_COLUMNS, *extra], maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("trials"),
            kept.sum().cast(pl.Int64).alias("kept"),
            (pl.col("_success") & kept).sum().cast(pl.Int64).alias("successes"),
            rewarded.sum().cast(pl.Int64).alias("rewarded"),
            fractional.sum().cast(pl.Int64).alias("fractional"),
            pl.col("_infra").sum().cast(pl.Int64).alias("infra"),
            pl.col("reward").filter(rewarded).sum().alias("reward_sum"),
            pl.col("agent_cost").filter(cost).sum().alias("cost_sum"),
            cost.sum().cast(pl.Int64).alias("cost_n"),
            pl.col("num_trials").min().cast(pl.Int64).alias("num_trials"),
            pl.col("trial").cast(pl.Int64).drop_nulls().unique().sort().alias("trial_indices"),
        )
        .with_columns(infra_rule=pl.lit(infra), reward_column=pl.lit(reward))
    )


def merge_task_counts(parts: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Counts of several parts (of one corpus, made with the same ``by``, ``infra`` and ``reward``) as one frame:
    the sums of the parts' counts per (run, task). Parts may split a task's trials between them. The float sums
    (``reward_sum``, ``cost_sum``) are added in another order than in one pass, so they agree to rounding.

    Examples
    --------
    >>> import tauk
    >>> t = tauk.load("data").trials
    >>> merged = merge_task_counts([task_counts(t.head(1)), task_counts(t.slice(1))])
    >>> whole = task_counts(t)
    >>> merged.drop("reward_sum", "cost_sum").equals(whole.drop("reward_sum", "cost_sum"))  # float sums: to rounding
    True
    """
    frames = [p for p in parts if p.height or p.width]
    if not frames:
        raise TaukError("no task counts to merge")
    for p in frames:
        if not is_task_counts(p):
            raise TaukError("merge_task_counts takes frames made by tauk.stats.task_counts")
    first = frames[0].columns
    if any(p.columns != first for p in frames[1:]):
        raise TaukError("the task counts to merge were made with different by= columns")
    both = pl.concat(frames, how="vertical_relaxed")
    for rule in _RULES:
        if both[rule].n_unique() > 1:
            raise TaukError(f"the task counts to merge were made with different {rule}s: "
                            f"{sorted(both[rule].unique().to_list())}")  # fmt: skip
    keys = [c for c in first if c not in COUNT_COLUMNS]
    sums = [c for c in COUNT_COLUMNS if c not in ("num_trials", "trial_indices")]
    return (
        both.group_by(keys, maintain_order=True)
        .agg(
            *[pl.col(c).sum() for c in sums],
            pl.col("num_trials").min(),
            pl.col("trial_indices").explode().drop_nulls().unique().sort(),
        )
        .with_columns(pl.col(c).cast(pl.Int64) for c in sums if c not in ("reward_sum", "cost_sum"))
        .select(first)
    )


def prepare_counts(counts: pl.DataFrame, infra: str, reward: str) -> pl.DataFrame:
    """A counts frame checked against the rule asked for (the statistics' ``prepare_trials`` for counts)."""
    for rule, asked in zip(_RULES, (infra, reward)):
        made = counts[rule].unique().to_list()
        if made and made != [asked]:
            name = rule.split("_")[0]
            raise TaukError(f"these task counts were made with {name}={made[0]!r}, not {asked!r}: make them again "
                            f"with task_counts(..., {name}={asked!r})")  # fmt: skip
    return counts


def per_run_counts(counts: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The per-(keys, run) aggregates ``task_groups`` builds from trials (``_ne, _nf, _nk, _c, _den, _nt``),
    from counts; τ-bench's N is the number of distinct trial indices over all of the run's rows."""
    n_run = counts.group_by("run_id").agg(
        pl.col("trial_indices").explode().drop_nulls().n_unique().cast(pl.Int64).alias("_N"),
        (pl.col("format") == "taubench").any().alias("_tb"),
    )
    by_run = keys + ([] if "run_id" in keys else ["run_id"])
    return (
        counts.join(n_run, on="run_id", how="left")
        .group_by(by_run)
        .agg(
            pl.col("rewarded").sum().alias("_ne"),
            pl.col("fractional").sum().alias("_nf"),
            pl.col("kept").sum().alias("_nk"),
            pl.col("successes").sum().alias("_c"),
            pl.when(pl.col("_tb").first()).then(pl.col("_N").first()).otherwise(None).alias("_den"),
            pl.col("num_trials").min().alias("_nt"),
        )
    )

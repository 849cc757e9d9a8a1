"""Trials (or mergeable task counts) → per-task (n, c): the one place the statistics read the data (docs/spec.md §3–4).

Everything here works on the ``trials`` frame of ARCHITECTURE.md, or on the per-(run, task) counts of
:func:`task_counts`, which stand in for it. Conventions:

* success = ``1 - SUCCESS_TOL <= reward <= 1 + SUCCESS_TOL`` (:mod:`tauk.conventions`); a null reward is a failure
  (and is left out of avg_reward); a NaN reward is a null reward. The reward is read from the column named by ``reward=`` (default ``"reward"``).
* ``infra="drop"`` removes ``termination_reason == "infrastructure_error"`` simulations before every metric;
  ``infra="fail"`` keeps them as failed trials. The count is always reported.
* A task is identified by ``("domain", "task_id")`` within a group, so a label spanning several domains does not
  merge unrelated tasks that happen to share an id.
* τ-bench runs (``format == "taubench"``) divide by C(N, k), N = distinct trial indices in the run (missing trials are
  failures), exactly as ``tau-bench``'s ``display_metrics`` does.
* Trials of different setups are not repeated trials of one experiment: :func:`resolve_by` adds ``setup`` to a
  grouping that spans several.

Per-task counts are the mergeable sufficient statistics of every pass^k / pass@k / summary figure. A corpus too
large for one frame (a store of millions of simulations, a cluster) reduces each part to counts per (run, task) —
trials, kept trials, successes, rewarded and fractional trials, infrastructure errors, the sums of reward and cost,
the distinct trial indices — merges the parts' counts by summing them (:func:`merge_task_counts`), and hands the
result to :mod:`tauk.stats` in place of a trials frame: :func:`~tauk.stats.pass_hat_k`, :func:`~tauk.stats.pass_at_k`,
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

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache
from math import comb as _math_comb
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from tauk._lazy import lazy
from tauk.conventions import DEFAULT_K_MAX, INFRA, INFRA_REASON, SUCCESS_TOL, TASK_KEY, success_expr
from tauk.errors import TaukError, check_columns

from . import _special
from .options import check_infra

special = lazy("scipy.special")


__all__ = [
    "STAT_COLUMNS",
    "as_trials",
    "normalize_by",
    "normalize_k",
    "u_hat",
    "u_hat_at",
    "unbiased_means",
    "prepare_trials",
    "kept_expr",
    "GroupTasks",
    "task_groups",
    "resolve_by",
    "pooling_notes",
    "SETUP_NOTE",
    "LABEL_COLUMNS",
    "COUNT_COLUMNS",
    "is_task_counts",
    "task_counts",
    "merge_task_counts",
]

_REQUIRED = ("run_id", "task_id")


STAT_COLUMNS = ("run_id", "simulation_id", "task_id", "trial", "format", "agent", "domain", "setup", "num_trials",
                "termination_reason", "is_infra_error", "reward", "agent_cost")
"""The trials columns the statistics read (besides the grouping and reward columns asked for)."""


def as_trials(data: Any, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The trials frame of ``data``: a trials frame itself, a ``LazyFrame`` (collected), or anything with a
    ``.trials`` frame (a :class:`tauk.Results`).

    Every statistic accepts these three; use this helper to do the same in your own code.

    Parameters
    ----------
    data
        A Polars trials frame (ARCHITECTURE.md), a ``LazyFrame`` of one, or an object with a ``trials`` frame
        (e.g. :class:`tauk.Results`, a scored frame from :func:`tauk.score` is a trials frame too).
    columns
        Extra columns needed (grouping, reward) when ``data`` can read a subset of its trials columns (a store
        opened with :func:`tauk.open`): then only :data:`STAT_COLUMNS` and these are read.

    Returns
    -------
    polars.DataFrame
        The trials frame (the same object, not a copy).

    Raises
    ------
    TaukError
        When ``data`` is none of these.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> tauk.stats.as_trials(res).height, tauk.stats.as_trials(res.trials.lazy()).height
    (600, 600)
    """
    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    pick = getattr(data, "trials_columns", None)
    if columns is not None and callable(pick) and "trials" not in getattr(data, "__dict__", {}):
        return pick([*STAT_COLUMNS, *(c for c in columns if c not in STAT_COLUMNS)])  # a store: read only these
    trials = getattr(data, "trials", None)
    if isinstance(trials, pl.DataFrame):
        return trials
    raise TaukError(f"expected a trials frame or Results, got {type(data).__name__}")


def normalize_by(by: str | Sequence[str] | None) -> tuple[str, ...]:
    """``by`` as a tuple of column names; a column named twice is a :class:`~tauk.errors.TaukError` (one line, not
    Polars' duplicate-key error from deep inside a grouping).

    >>> normalize_by("agent"), normalize_by(None), normalize_by(["agent", "domain"])
    (('agent',), (), ('agent', 'domain'))
    """
    if by is None:
        return ()
    if isinstance(by, str):
        return (by,)
    out = tuple(by)
    twice = sorted({str(c) for c in out if out.count(c) > 1})
    if twice:
        raise TaukError(f"by names {', '.join(map(repr, twice))} more than once: give each column once")
    return out


def check_k(k: Any) -> int:
    """One k of pass^k: a positive integer (an integral float such as 2.0 is that integer), else a
    :class:`~tauk.errors.TaukError` naming it (k = 0 would be pass^0 = 1 for every task, k = 1.5 silently pass^1)."""
    ok = isinstance(k, int | np.integer | float | np.floating) and not isinstance(k, bool) and \
        math.isfinite(k) and float(k).is_integer() and k >= 1  # fmt: skip
    if not ok:
        raise TaukError(f"k must be a positive integer, got {k!r}")
    return int(k)


def normalize_k(k: int | Iterable[int] | None) -> tuple[int, ...] | None:
    if k is None:
        return None
    if isinstance(k, str) or not isinstance(k, Iterable):
        return (check_k(k),)
    ks = tuple(sorted({check_k(x) for x in k}))
    if not ks:
        raise TaukError(f"k must be a positive integer or a list of them, got {k!r}")
    return ks


@lru_cache(maxsize=65536)
def _u_exact(n: int, c: int, k: int) -> float:
    """C(c,k)/C(n,k) with exact integer arithmetic, correctly rounded to float64 (NaN when k > n)."""
    if k > n or n <= 0:
        return float("nan")
    if c < k:
        return 0.0
    return _math_comb(c, k) / _math_comb(n, k)


_EXACT_TABLE_N = 56  # C(56, 28) < 2^53 < C(57, 28)


@lru_cache(maxsize=4096)
def _comb_table(top: int, k: int) -> np.ndarray:
    """C(i, k) for i = 0 … top as float64 (exact for top ≤ 56); read-only."""
    t = np.array([float(_math_comb(i, k)) for i in range(top + 1)])
    t.flags.writeable = False
    return t


def u_hat(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Vectorised Û_k = C(c,k)/C(n,k) per task (NaN where n < k); exact on every distinct (n, c) pair."""
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if n.size == 0:
        return np.empty(0, dtype=np.float64)
    top = int(n.max())
    if top <= _EXACT_TABLE_N and int(n.min()) >= 0 and int(c.min()) >= 0:
        # C(i, k) for i ≤ 56 is below 2^53, so exact as a float, and the quotient of two exact floats is correctly
        # rounded: the same number as _u_exact's integer division, without a Python call per distinct pair
        table = _comb_table(top, k)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where((n >= k) & (n > 0), table[np.minimum(c, top)] / table[n], np.nan)
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    vals = np.array([_u_exact(int(a), int(b), k) for a, b in pairs], dtype=np.float64)
    return vals[np.asarray(inverse).reshape(-1)]


def u_hat_at(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Per-task unbiased pass@k estimate 1 − C(n−c,k)/C(n,k) (NaN where n < k)."""
    n = np.asarray(n, dtype=np.int64)
    return 1.0 - u_hat(n, n - np.asarray(c, dtype=np.int64), k)


def unbiased_means(n: np.ndarray, c: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per group (rows of padded (groups × tasks) arrays, n = 0 pads): mean_t Û_k over the tasks with n_t ≥ k
    (pass@k: 1 − mean_t C(n−c,k)/C(n,k)) and that task count."""
    m = (n >= k) & (n > 0)
    x = c if metric == "pass^k" else n - c
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.where(m, _special.comb(x, k) / np.where(m, _special.comb(n, k), 1.0), 0.0)
        Tk = m.sum(1)
        est = np.where(Tk > 0, u.sum(1) / np.maximum(Tk, 1), np.nan)
    return (est if metric == "pass^k" else 1.0 - est), Tk


def reward_flags() -> tuple[pl.Expr, pl.Expr]:
    """``(rewarded, fractional)`` of a prepared trial: kept with a reward, and kept with a reward that is neither a
    success nor 0 — the one rule by which the trials and the task counts both count evaluated trials."""
    rewarded = pl.col("_kept") & pl.col("reward").is_not_null()
    binary = pl.col("reward").is_between(-SUCCESS_TOL, SUCCESS_TOL) | pl.col("_success")
    return rewarded, rewarded & ~binary


def kept_expr(infra: str) -> pl.Expr:
    """The ``_kept`` column of :func:`prepare_trials` under an infrastructure convention — the only column the two
    conventions make differently from the same trials."""
    check_infra(infra)
    return (~pl.col("_infra") if infra == "drop" else pl.lit(True)).alias("_kept")


def prepare_trials(trials: pl.DataFrame, infra: str, reward: str = "reward") -> pl.DataFrame:
    """Add ``_infra``, ``_success`` and ``_den`` (the τ-bench per-run N, else null); apply the infra convention.

    ``reward`` names the column holding the reward; it is copied into ``reward`` (as renaming it by hand would).
    Returns *all* rows with a boolean ``_kept`` column (so callers can count dropped tasks and infra errors).
    """
    check_infra(infra)
    if is_task_counts(trials):  # per-task counts (mergeable) stand in for the trials
        return prepare_counts(trials, infra, reward)
    if not isinstance(trials, pl.DataFrame):
        raise TaukError(f"expected a Polars trials DataFrame, got {type(trials).__name__}")
    if not isinstance(reward, str):
        raise TaukError(f"reward must be a column name, got {type(reward).__name__}")
    missing = [c for c in (*_REQUIRED, reward) if c not in trials.columns]
    if missing:
        hint = "" if reward == "reward" else f" (reward={reward!r})"
        raise TaukError(f"trials frame lacks column(s) {missing}{hint}; see ARCHITECTURE.md (trials frame)")
    df = trials if reward == "reward" else trials.with_columns(pl.col(reward).alias("reward"))
    defaults = {
        "domain": pl.lit(None, dtype=pl.String),
        "format": pl.lit("tau2"),
        "trial": pl.lit(None, dtype=pl.Int64),
        "num_trials": pl.lit(None, dtype=pl.Int64),
        "agent": pl.lit(None, dtype=pl.String),
        "agent_cost": pl.lit(None, dtype=pl.Float64),
    }
    df = df.with_columns([expr.alias(name) for name, expr in defaults.items() if name not in df.columns])
    if "setup" not in df.columns:  # a frame built by hand: its domains are its setups
        df = df.with_columns(setup=pl.col("domain").cast(pl.String).fill_null("?"))
    if "termination_reason" in df.columns:
        infra_expr = (pl.col("termination_reason") == INFRA_REASON).fill_null(False)
    elif "is_infra_error" in df.columns:
        infra_expr = pl.col("is_infra_error").fill_null(False)
    else:
        infra_expr = pl.lit(False)
    df = df.lazy().with_columns(  # the two steps in one query
        pl.col("task_id").cast(pl.String),
        pl.col("reward").cast(pl.Float64).fill_nan(None),  # a NaN reward is a missing reward, as null is
        pl.col("agent_cost").cast(pl.Float64),
        infra_expr.alias("_infra"),
    )
    df = df.with_columns(
        (success_expr("reward") & ~pl.col("_infra")).alias("_success"),
        kept_expr(infra),
        # τ-bench: N = number of distinct trial indices in the run (over all of the run's rows)
        pl.when(pl.col("format") == "taubench")
        .then(pl.col("trial").drop_nulls().n_unique().over("run_id"))
        .otherwise(None)
        .cast(pl.Int64)
        .alias("_den"),
    )
    return df.collect()


class GroupTasks(NamedTuple):
    """One group's per-task counts, tasks sorted by (domain, task_id)."""

    key: tuple  # values of the `by` columns
    domain: np.ndarray  # object array (may hold None)
    task_id: np.ndarray  # object array of str
    n: np.ndarray  # int64: denominators (kept trials, or τ-bench N per contributing run)
    c: np.ndarray  # int64: successes
    n_trials: np.ndarray  # int64: kept trials actually present
    num_trials: int | None  # min of the runs' info.num_trials (None if unknown)
    n_tasks_no_kept: int  # tasks seen in the group whose every trial was dropped
    n_evaluated: int = -1  # kept trials with a reward (-1: not counted); 0 = an unevaluated group
    n_fractional: int = 0  # kept trials whose reward is neither 0 nor 1 (a fork grading on a scale)

    @property
    def evaluated(self) -> bool:
        """False when no kept trial of the group has a reward (e.g. a voice run without evaluation): its pass^k
        is not defined, rather than 0."""
        return self.n_evaluated != 0

    @property
    def T(self) -> int:
        return int(self.n.size)

    def default_ks(self) -> tuple[int, ...]:
        """k = 1 … min(num_trials, min_t n_t, :data:`~tauk.conventions.DEFAULT_K_MAX`) (docs/spec.md §3); empty when
        there are no tasks."""
        if self.T == 0:
            return ()
        kmax = min(int(self.n.min()), DEFAULT_K_MAX)
        if self.num_trials is not None:
            kmax = min(kmax, int(self.num_trials))
        return tuple(range(1, kmax + 1))


def _group_col(by: tuple[str, ...]) -> tuple[list[str], pl.Expr | None]:
    if by:
        return list(by), None
    return ["__all__"], pl.lit(0).alias("__all__")


def task_groups(prepared: pl.DataFrame, by: tuple[str, ...]) -> list[GroupTasks]:
    """Per-group, per-task (n, c) from a frame returned by :func:`prepare_trials`."""
    check_columns(by, prepared.columns)
    keys, extra = _group_col(by)
    df = prepared.with_columns(extra) if extra is not None else prepared
    tkeys = [c for c in TASK_KEY if c not in keys]
    all_keys = keys + tkeys
    if is_task_counts(df):
        per_run = per_run_counts(df, all_keys)
    else:
        rewarded, fractional = reward_flags()
        per_run = df.lazy().group_by(all_keys + ([] if "run_id" in all_keys else ["run_id"])).agg(
            rewarded.sum().cast(pl.Int64).alias("_ne"),
            fractional.sum().cast(pl.Int64).alias("_nf"),
            pl.col("_kept").sum().cast(pl.Int64).alias("_nk"),
            (pl.col("_success") & pl.col("_kept")).sum().cast(pl.Int64).alias("_c"),
            pl.col("_den").first().alias("_den"),
            pl.col("num_trials").min().alias("_nt"),
        )
    per_run = per_run.lazy().with_columns(  # τ-bench's N, never fewer than the records c is counted over (c ≤ n_k ≤ n)
        pl.when(pl.col("_den").is_not_null() & (pl.col("_nk") > 0))
        .then(pl.max_horizontal("_den", "_nk"))
        .otherwise(pl.col("_nk"))
        .alias("_n")
    )
    per_task = per_run.group_by(all_keys).agg(
        pl.col("_n").sum().alias("n"),
        pl.col("_c").sum().alias("c"),
        pl.col("_nk").sum().alias("n_trials"),
        pl.col("_nt").min().alias("_nt"),
        pl.col("_ne").sum().alias("_ne"),
        pl.col("_nf").sum().alias("_nf"),
    )
    per_task = per_task.sort([*keys, *tkeys], nulls_last=True).collect()  # one query from the trials
    over = per_task.filter(pl.col("c") > pl.col("n"))  # only from counts made by hand: C(c,k)/C(n,k) would pass 1
    if over.height:
        raise TaukError(f"task {over['task_id'][0]!r} has {over['c'][0]} successes in {over['n'][0]} trials: these "
                        "counts were not made by tauk.stats.task_counts (successes must be among the kept trials)")
    out: list[GroupTasks] = []
    for key, part in per_task.group_by(keys, maintain_order=True):
        has = part["n_trials"].to_numpy() > 0  # the tasks with a kept trial (a mask, not another query)
        nt = part["_nt"].min()
        out.append(
            GroupTasks(
                key=tuple(key) if by else (),
                domain=np.array(part["domain"].to_list() if "domain" in part.columns else [None] * part.height,
                                dtype=object)[has],  # fmt: skip
                task_id=np.array(part["task_id"].to_list(), dtype=object)[has],
                n=part["n"].to_numpy().astype(np.int64)[has],
                c=part["c"].to_numpy().astype(np.int64)[has],
                n_trials=part["n_trials"].to_numpy().astype(np.int64)[has],
                num_trials=None if nt is None else int(nt),
                n_tasks_no_kept=int(part.height - has.sum()),
                n_evaluated=int(part["_ne"].sum()),
                n_fractional=int(part["_nf"].sum()),
            )
        )
    return out


def resolve_by(prepared: pl.DataFrame, by: tuple[str, ...], pool_setups: bool = False,
               also: tuple[str, ...] = ()) -> tuple[str, ...]:  # fmt: skip
    """The grouping actually used: ``by``, plus ``setup`` when a group (of ``by`` + ``also``, e.g. the agent label
    of a comparison) spans several setups and ``pool_setups`` is false — trials of different setups are not
    repeated trials of one experiment and are never pooled into one figure unless asked.

    Examples
    --------
    >>> import tauk
    >>> trials = tauk.load("data").trials
    >>> resolve_by(prepare_trials(trials, "drop"), ("agent",))
    ('agent', 'setup')
    >>> resolve_by(prepare_trials(trials, "drop"), ("agent", "domain")), resolve_by(prepare_trials(trials, "drop"),
    ...                                                                              ("agent",), pool_setups=True)
    (('agent', 'domain'), ('agent',))
    """
    check_columns((*by, *also), prepared.columns)  # before any grouping: one line, not a Polars traceback
    if pool_setups or "setup" in by:
        return by
    keys = [*by, *also]
    if keys:
        spread = prepared.group_by(keys).agg(pl.col("setup").n_unique().alias("_n"))["_n"].max()
    else:
        spread = prepared["setup"].n_unique()
    return (*by, "setup") if (spread or 0) > 1 else by


def pooling_notes(trials: Any, prepared: pl.DataFrame, by: tuple[str, ...]) -> tuple[str, ...]:
    """``pool_setups=True``: for each group of ``by`` that spans several setups, the sentence saying which setup
    fields it pooled over (:func:`tauk.io.frames.runs.pooling_note`, from ``trials.runs`` where the input has them,
    else the setup labels)."""
    from tauk.io.frames.runs import pooling_note

    runs = getattr(trials, "runs", None)
    frame = runs if isinstance(runs, pl.DataFrame) and "setup" in runs.columns else prepared.select("setup").unique()
    out = []
    for key, part in (prepared.group_by(list(by), maintain_order=True) if by else [((), prepared)]):
        note = pooling_note(frame, part.get_column("setup").unique().to_list())
        if note:
            name = " · ".join(str(v) for v in key) if by else "all"
            out.append(f"{name}: {note}")
    return tuple(out)


SETUP_NOTE = ("grouped by setup too: the groups asked for span several setups, which are not repeated trials of "
              "one experiment (pool_setups=True pools them; tauk.stats.overall gives the leaderboard's mean of "
              "per-setup figures)")
"""The note of a result whose grouping gained ``setup``."""


# ---- per-task counts: mergeable stand-ins for the trials -----------------------------------------------------
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
    check_columns(extra, df.columns, "keep")
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

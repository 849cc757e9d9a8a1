"""Paired comparisons of agents on shared tasks, many-comparison adjustment and rank intervals (SPEC §4).

A comparison is paired by task: a task is (domain, task_id), so a label (agent) spanning several runs or domains
keeps its tasks apart, and the two agents are compared only on tasks both ran (the others are counted and reported).
Per task, d_t = Û_k^A − Û_k^B. Reported: the mean difference with a t interval (T−1 df) and a paired task-bootstrap
interval (BCa by default; the *same* resampled task indices for both agents, since d_t is resampled as a unit), a
sign-flip permutation p-value (exact enumeration when at most 20 tasks have d_t ≠ 0, seeded Monte Carlo otherwise),
the Wilcoxon signed-rank p (scipy; a cross-check), and an exact McNemar test (binomial test on the discordant tasks)
when each agent has exactly one trial per task and k = 1. Trials are never resampled within tasks.

The pairing lives in :mod:`tauk.stats._pairing` (shared with the power analysis), the p-value tools in
:mod:`tauk.stats.pvalues`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from tauk._compat import keyword_options
from tauk.conventions import CI_LEVEL, CI_METHOD, INFRA, RESAMPLES, SEED
from tauk.errors import TaukError
from tauk.table import SummaryTable

from ._bootstrap import bootstrap_means
from ._core import GroupTasks, check_ci, normalize_by, u_hat
from ._pairing import groups_by_label, nn, paired, rows_frame, task_index
from .pvalues import adjust_pvalues, benjamini_hochberg, holm, sign_flip_pvalue

__all__ = [
    "Comparison",
    "MultipleComparison",
    "compare",
    "compare_all",
    # p-value tools: defined in tauk.stats.pvalues, importable from here as before
    "sign_flip_pvalue",
    "holm",
    "benjamini_hochberg",
    "adjust_pvalues",
]


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Comparison:
    """A paired comparison of ``a`` against ``b`` (difference = a − b), one row per ``by`` group (immutable; from
    :func:`compare`).

    ``frame`` columns: group keys, a, b, k, n_tasks (shared, n_t ≥ k for both), n_tasks_only_a, n_tasks_only_b,
    n_tasks_excluded (shared but n_t < k), estimate_a, estimate_b, diff, se, t_low/t_high (t, T−1 df),
    ci_low/ci_high (paired task bootstrap, ``method``), p_t, p_perm (sign-flip; ``perm_method`` exact|monte-carlo),
    p_wilcoxon, mcnemar_a_only / mcnemar_b_only (discordant tasks) and p_mcnemar (only with one trial per task).
    ``tasks``: the per-task table (group keys, domain, task_id, n_a, c_a, n_b, c_b, u_a, u_b, d).
    """

    a: str
    b: str
    k: int
    label: str
    by: tuple[str, ...]
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    frame: pl.DataFrame
    tasks: pl.DataFrame
    permutations: int = RESAMPLES
    reward: str = "reward"

    def to_frame(self) -> pl.DataFrame:
        """One row per ``by`` group (the columns listed above)."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per ``by`` group: the row of :meth:`to_frame` as a dict."""
        return self.frame.to_dicts()

    def row(self, **group: Any) -> dict[str, Any]:
        """The row of one group (keyword filters on the group keys; none when there is a single group)."""
        df = self.frame
        for c, v in group.items():
            df = df.filter(pl.col(c) == v)
        if df.height != 1:
            raise TaukError(f"{df.height} rows match {group}; give every group key")
        return df.row(0, named=True)

    @property
    def diff(self) -> float | None:
        """The difference when there is a single group."""
        return self.row()["diff"]

    @property
    def p_value(self) -> float | None:
        """The sign-flip permutation p-value when there is a single group."""
        return self.row()["p_perm"]

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): one row per group."""
        cols = [*self.by, "tasks", f"pass^{self.k} {self.a}", f"pass^{self.k} {self.b}", "diff", "ci_low", "ci_high",
                "p_perm", "p_wilcoxon", "p_mcnemar"]
        rows = [
            [*(r[c] for c in self.by), r["n_tasks"], r["estimate_a"], r["estimate_b"], r["diff"], r["ci_low"],
             r["ci_high"], r["p_perm"], r["p_wilcoxon"], r["p_mcnemar"]]
            for r in self.frame.iter_rows(named=True)
        ]
        notes = [
            f"paired on shared tasks (domain, task_id); diff = {self.a} − {self.b}",
            f"{self.ci if self.ci is not None else CI_LEVEL:.0%} {self.method} paired task bootstrap, {self.resamples} resamples, seed {self.seed}",
            "p_perm: sign-flip permutation test (exact when ≤ 20 nonzero differences)",
        ]
        only = self.frame.select(pl.col("n_tasks_only_a").sum(), pl.col("n_tasks_only_b").sum()).row(0)
        if any(only):
            notes.append(f"tasks run by only one agent, left out: {only[0]} ({self.a}), {only[1]} ({self.b})")
        fields = [*self.by, "n_tasks", "estimate_a", "estimate_b", "diff", "ci_low", "ci_high", "p_perm", "p_wilcoxon",
                  "p_mcnemar"]  # fmt: skip
        return SummaryTable.build(f"{self.a} vs {self.b}", cols, rows, notes, fields=fields, keys=max(len(self.by), 1))

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


@dataclass(frozen=True)
class MultipleComparison:
    """All pairwise comparisons and rank intervals (immutable; from :func:`compare_all`).

    ``pairs``: Comparison columns + ``p_adjusted`` (family = every pair in every group, adjusted on p_perm);
    ``ranks``: group keys, label value, n_tasks (common to all agents of the group), estimate, rank (1 = best, ties
    averaged), rank_low, rank_high (bootstrap).
    """

    k: int
    label: str
    by: tuple[str, ...]
    adjust: str
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    pairs: pl.DataFrame
    ranks: pl.DataFrame
    permutations: int = RESAMPLES
    reward: str = "reward"

    def to_frame(self) -> pl.DataFrame:
        """The ``pairs`` frame (one row per pair and group)."""
        return self.pairs

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per pair and group (the rows of ``pairs``), each with the two agents' rank rows
        under ``"rank_a"`` / ``"rank_b"`` (``rank``, ``rank_low``, ``rank_high``; null when not ranked)."""
        ranks = {
            (tuple(r[c] for c in self.by), r[self.label]): {f: r[f] for f in ("rank", "rank_low", "rank_high")}
            for r in self.ranks.iter_rows(named=True)
        }
        out = []
        for r in self.pairs.iter_rows(named=True):
            key = tuple(r[c] for c in self.by)
            out.append({**r, "rank_a": ranks.get((key, r["a"])), "rank_b": ranks.get((key, r["b"]))})
        return out

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): one row per pair; the rank intervals as notes."""
        cols = [*self.by, "a", "b", "tasks", "diff", "ci_low", "ci_high", "p_perm", f"p_{self.adjust}"]
        fields = [*self.by, "a", "b", "n_tasks", "diff", "ci_low", "ci_high", "p_perm", "p_adjusted"]
        shown = self.pairs.filter(pl.col("n_tasks") > 0)
        empty = self.pairs.filter(pl.col("n_tasks").fill_null(0) == 0)
        rows = [
            [*(r[c] for c in self.by), r["a"], r["b"], r["n_tasks"], r["diff"], r["ci_low"], r["ci_high"], r["p_perm"],
             r["p_adjusted"]]
            for r in shown.iter_rows(named=True)
        ]
        family = int(self.pairs["p_adjusted"].is_not_null().sum())
        notes = [f"p adjusted by {self.adjust} over the {family} comparison(s) with a p-value"
                 + (f" (of {self.pairs.height} pairs)" if family != self.pairs.height else "")]  # fmt: skip
        if empty.height:
            listed = "; ".join(
                ", ".join(str(r[c]) for c in self.by) + (": " if self.by else "") + f"{r['a']} vs {r['b']}"
                for r in empty.iter_rows(named=True)
            )
            notes.append(f"{empty.height} pair(s) share no task with at least k={self.k} trials and are not shown: "
                         f"{listed}")  # fmt: skip
        for r in self.ranks.filter(pl.col("n_tasks") > 0).iter_rows(named=True):
            g = ", ".join(str(r[c]) for c in self.by)
            notes.append(
                f"{g + ': ' if g else ''}{r[self.label]} rank {r['rank']:g} "
                f"[{r['rank_low']:g}, {r['rank_high']:g}] on {r['n_tasks']} common tasks"
                if r["rank_low"] is not None else
                f"{g + ': ' if g else ''}{r[self.label]} rank {r['rank']:g} on {r['n_tasks']} common task(s)"
            )
        return SummaryTable.build(f"pairwise pass^{self.k} comparisons", cols, rows, notes, fields=fields,
                                  keys=len(self.by) + 2)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


# ---------------------------------------------------------------------------------------------- public API
@keyword_options(
    ("trials", "a", "b", "k", "by", "label", "infra", "ci", "method", "resamples", "seed", "permutations", "progress")
)
def compare(
    trials: Any,
    a: str,
    b: str,
    *,
    k: int = 1,
    by: str | Sequence[str] | None = None,
    label: str = "agent",
    ci: float | None = CI_LEVEL,
    method: str = CI_METHOD,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    permutations: int = RESAMPLES,
    infra: str = INFRA,
    reward: str = "reward",
    progress: bool | None = None,
) -> Comparison:
    """Paired comparison of label value ``a`` against ``b`` on the tasks both ran (see the module docs).

    Parameters
    ----------
    trials
        A trials frame or :class:`tauk.Results` (see :func:`as_trials`).
    a, b
        The two values of the ``label`` column to compare (difference = a − b).
    k
        Compare pass^k at this k (default 1); tasks with n_t < k for either agent are left out and counted.
    by
        Column(s) splitting the comparison (e.g. ``"domain"``); default one comparison. Tasks are always keyed by
        (domain, task_id).
    label
        The column naming the agents (default ``"agent"``).
    ci
        Level of the t and paired-bootstrap intervals (default :data:`tauk.conventions.CI_LEVEL`). A comparison
        always reports its intervals: ``None`` means the default level.
    method, resamples, seed
        Interval method, bootstrap resamples and seed, as for :func:`pass_hat_k`.
    permutations
        Random sign flips of the permutation test when more than 20 tasks differ (default
        :data:`tauk.conventions.RESAMPLES`); seeded by ``seed``.
    infra, reward, progress
        As for :func:`pass_hat_k`.

    Returns
    -------
    Comparison
        ``to_frame()`` (one row per group), ``tasks`` (the per-task table), ``records()``, ``summary()``, and
        ``diff`` / ``p_value`` when there is a single group.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> c = tauk.stats.compare(res, "atlas-large", "baseline", resamples=999)
    >>> round(c.diff, 4), c.records()[0]["n_tasks"], c.row()["perm_method"]
    (0.43, 50, 'monte-carlo')
    """
    by_t = normalize_by(by)
    check_ci(ci, method, resamples)
    df, table = groups_by_label(trials, by_t, label, infra, labels=[a, b], reward=reward)
    keyed, task_parts = [], []
    for key in sorted(table, key=_sort_key):
        gs = table[key]
        res = paired(gs.get(a), gs.get(b), a, b, int(k), ci, method.lower(), resamples, seed, permutations, progress)
        keyed.append((key, res.row))
        tp = res.tasks
        for i, c in enumerate(by_t):
            if c not in tp.columns:
                tp = tp.with_columns(pl.lit(key[i], dtype=df.schema[c]).alias(c))
        task_parts.append(tp.select([*by_t, *(c for c in res.tasks.columns if c not in by_t)]))
    frame = rows_frame(by_t, df.schema, keyed)
    tasks = pl.concat(task_parts) if task_parts else pl.DataFrame()
    return Comparison(str(a), str(b), int(k), label, by_t, infra, ci, method.lower(), resamples, seed, frame, tasks,
                      permutations, reward)  # fmt: skip


def _sort_key(key: tuple) -> tuple:
    return tuple((v is None, str(v)) for v in key)


@keyword_options(
    ("trials", "agents", "k", "by", "label", "adjust", "infra", "ci", "method", "resamples", "seed", "permutations",
     "progress")  # fmt: skip
)
def compare_all(
    trials: Any,
    *,
    agents: Sequence[str] | None = None,
    k: int = 1,
    by: str | Sequence[str] | None = None,
    label: str = "agent",
    adjust: str = "holm",
    ci: float | None = CI_LEVEL,
    method: str = CI_METHOD,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    permutations: int = RESAMPLES,
    infra: str = INFRA,
    reward: str = "reward",
    progress: bool | None = None,
) -> MultipleComparison:
    """Every pair of label values (per ``by`` group) with adjusted p-values, and a bootstrap interval for each
    agent's rank.

    The p-values are adjusted over the whole family (every pair in every group). The rank intervals draw one
    resample matrix over the tasks common to all agents of the group, apply it to every agent and rank per replicate.

    Parameters
    ----------
    trials
        A trials frame or :class:`tauk.Results` (see :func:`as_trials`).
    agents
        The label values to compare, in this order (default: every value, sorted).
    k, by, label
        As for :func:`compare`.
    adjust
        ``"holm"`` (default), ``"bh"`` (Benjamini–Hochberg) or ``"none"``; see :func:`adjust_pvalues`.
    ci, method, resamples, seed, permutations, infra, reward, progress
        As for :func:`compare` (``ci`` is also the level of the rank intervals).

    Returns
    -------
    MultipleComparison
        ``pairs`` (= ``to_frame()``), ``ranks``, ``records()``, ``summary()``.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> mc = tauk.stats.compare_all(res, resamples=999, permutations=999)
    >>> mc.pairs.select("a", "b").rows()
    [('atlas-large', 'atlas-small'), ('atlas-large', 'baseline'), ('atlas-small', 'baseline')]
    >>> mc.ranks["rank"].to_list()
    [1.0, 2.0, 3.0]
    """
    by_t = normalize_by(by)
    check_ci(ci, method, resamples)
    adjust_pvalues([], adjust=adjust)  # validate early
    labels = list(agents) if agents is not None else None
    df, table = groups_by_label(trials, by_t, label, infra, labels=labels, reward=reward)
    keyed, rank_rows = [], []
    level = ci if ci is not None else CI_LEVEL
    for key in sorted(table, key=_sort_key):
        gs = table[key]
        names = list(agents) if agents is not None else sorted(gs, key=lambda x: (x is None, str(x)))
        for a, b in itertools.combinations(names, 2):
            res = paired(gs.get(a), gs.get(b), a, b, int(k), ci, method.lower(), resamples, seed, permutations, progress)
            keyed.append((key, res.row))
        rank_rows += [(key, r) for r in _rank_intervals(gs, names, int(k), level, resamples, seed, progress)]
    pairs = rows_frame(by_t, df.schema, keyed)
    p_adj = adjust_pvalues(pairs["p_perm"].to_numpy(), adjust=adjust)
    pairs = pairs.with_columns(pl.Series("p_adjusted", p_adj, dtype=pl.Float64))
    pairs = pairs.with_columns(pl.col("p_adjusted").fill_nan(None))
    rsch = {c: df.schema[c] for c in by_t}
    rsch.update({label: df.schema[label], "n_tasks": pl.Int64, "estimate": pl.Float64, "rank": pl.Float64,
                 "rank_low": pl.Float64, "rank_high": pl.Float64})
    rdata: dict[str, list] = {c: [] for c in rsch}
    for key, r in rank_rows:
        for i, c in enumerate(by_t):
            rdata[c].append(key[i])
        for c in rsch:
            if c not in by_t:
                rdata[c].append(r[c if c != label else "label"])
    ranks = pl.DataFrame(rdata, schema=rsch)
    return MultipleComparison(int(k), label, by_t, adjust.lower(), infra, ci, method.lower(), resamples, seed, pairs,
                              ranks, permutations, reward)  # fmt: skip


def _rank_intervals(gs: dict[Any, GroupTasks], names, k, level, resamples, seed, progress) -> list[dict]:
    present = [n for n in names if n in gs]
    idx = {n: task_index(gs[n]) for n in present}
    common = None
    for n in present:
        ok = {t for t, i in idx[n].items() if gs[n].n[i] >= k}
        common = ok if common is None else common & ok
    common = sorted(common or set(), key=lambda t: (t[0] is None, t[0] or "", t[1]))
    out = []
    if not present:
        return out
    T = len(common)
    if T == 0:
        return [{"label": n, "n_tasks": 0, "estimate": None, "rank": None, "rank_low": None, "rank_high": None} for n in names]
    U = np.empty((T, len(present)))
    for j, n in enumerate(present):
        sel = np.array([idx[n][t] for t in common], dtype=np.int64)
        U[:, j] = u_hat(gs[n].n[sel], gs[n].c[sel], k)
    est = U.mean(axis=0)
    point = stats.rankdata(-est, method="average")
    if T > 1:
        boot = bootstrap_means(U, resamples, seed, progress)  # one matrix, every agent
        ranks = stats.rankdata(-boot, axis=1, method="average")
        alpha = (1 - level) / 2
        lo = np.quantile(ranks, alpha, axis=0, method="inverted_cdf")
        hi = np.quantile(ranks, 1 - alpha, axis=0, method="inverted_cdf")
    else:
        lo = hi = np.full(len(present), np.nan)
    for j, n in enumerate(present):
        out.append({"label": n, "n_tasks": T, "estimate": float(est[j]), "rank": float(point[j]),
                    "rank_low": nn(lo[j]), "rank_high": nn(hi[j])})
    for n in names:
        if n not in gs:
            out.append({"label": n, "n_tasks": 0, "estimate": None, "rank": None, "rank_low": None, "rank_high": None})
    return out

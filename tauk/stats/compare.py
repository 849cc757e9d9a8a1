"""Paired comparisons of agents on shared tasks, many-comparison adjustment and rank intervals (SPEC §4).

A comparison is paired by task: a task is (domain, task_id), so a label (agent) spanning several runs or domains
keeps its tasks apart, and the two agents are compared only on tasks both ran (the others are counted and reported).
Per task, d_t = Û_k^A − Û_k^B. Reported: the mean difference with a t interval (T−1 df) and a paired task-bootstrap
interval (BCa by default; the *same* resampled task indices for both agents, since d_t is resampled as a unit), a
sign-flip permutation p-value (exact enumeration when at most 20 tasks have d_t ≠ 0, seeded Monte Carlo otherwise),
the Wilcoxon signed-rank p (scipy; a cross-check), and an exact McNemar test (binomial test on the discordant tasks)
when each agent has exactly one trial per task and k = 1. Trials are never resampled within tasks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from tauk.errors import TaukError
from tauk.table import SummaryTable

from ._bootstrap import bootstrap_means, column_stats, interval, t_interval
from ._core import GroupTasks, normalize_by, prepare_trials, task_groups, u_hat
from .passk import _check_ci, as_trials

__all__ = [
    "Comparison",
    "MultipleComparison",
    "compare",
    "compare_all",
    "sign_flip_pvalue",
    "holm",
    "benjamini_hochberg",
    "adjust_pvalues",
]

EXACT_MAX = 20


# ---------------------------------------------------------------------------------------------- p-value tools
def sign_flip_pvalue(
    d: np.ndarray, permutations: int = 9999, seed: int | None = 0, exact_max: int = EXACT_MAX
) -> tuple[float, str]:
    """Two-sided sign-flip permutation p-value for H0: d_t symmetric about 0, statistic |Σ d_t|.

    Tasks with d_t = 0 do not change the statistic under any flip, so the exact enumeration runs over the nonzero
    ones: all 2^m sign vectors when m ≤ ``exact_max`` (p = share with |Σ s_t d_t| ≥ |Σ d_t|). Otherwise ``permutations``
    seeded random flips, p = (1 + #{≥}) / (1 + permutations). Returns (p, "exact" | "monte-carlo").
    """
    d = np.asarray(d, dtype=np.float64)
    d = d[d != 0]
    m = d.size
    if m == 0:
        return 1.0, "exact"
    obs = abs(d.sum())
    tol = 1e-12 * max(1.0, np.abs(d).sum())
    if m <= exact_max:
        total = 1 << m
        hits = 0
        step = 1 << 16
        bits = np.arange(m, dtype=np.int64)
        for start in range(0, total, step):
            codes = np.arange(start, min(start + step, total), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            hits += int(np.count_nonzero(np.abs(signs @ d) >= obs - tol))
        return hits / total, "exact"
    rng = np.random.default_rng(seed)
    hits = 0
    step = max(1, (1 << 22) // m)
    for start in range(0, permutations, step):
        b = min(step, permutations - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(b, m), dtype=np.int8)
        hits += int(np.count_nonzero(np.abs(signs @ d) >= obs - tol))
    return (1 + hits) / (1 + permutations), "monte-carlo"


def _sorted_finite(p: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p as floats, an all-NaN output, the indices of the finite p-values in ascending order): NaN entries are
    left out of the family and stay NaN."""
    p = np.asarray(p, dtype=np.float64)
    ok = np.flatnonzero(np.isfinite(p))
    return p, np.full(p.shape, np.nan), ok[np.argsort(p[ok], kind="stable")]


def holm(p: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values (NaN entries are left out of the family and stay NaN)."""
    p, out, order = _sorted_finite(p)
    m = order.size
    if m:
        out[order] = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
    return out


def benjamini_hochberg(p: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (equal to ``scipy.stats.false_discovery_control(p, method='bh')``)."""
    p, out, order = _sorted_finite(p)
    m = order.size
    if m:
        ranked = p[order] * m / np.arange(1, m + 1)
        out[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return out


def adjust_pvalues(p: Sequence[float], method: str = "holm") -> np.ndarray:
    method = method.lower()
    if method == "holm":
        return holm(p)
    if method in ("bh", "fdr_bh", "benjamini-hochberg"):
        return benjamini_hochberg(p)
    if method in ("none", ""):
        return np.asarray(p, dtype=np.float64)
    raise TaukError(f"adjust must be 'holm', 'bh' or 'none', got {method!r}")


# ---------------------------------------------------------------------------------------------- pairing
def _task_index(g: GroupTasks) -> dict[tuple, int]:
    return {(dom, tid): i for i, (dom, tid) in enumerate(zip(g.domain, g.task_id))}


def _pair_tasks(ga: GroupTasks | None, gb: GroupTasks | None, k: int):
    """Aligned arrays on tasks both agents ran with n_t ≥ k, plus the counts of tasks left out."""
    ia = _task_index(ga) if ga is not None else {}
    ib = _task_index(gb) if gb is not None else {}
    shared = sorted(set(ia) & set(ib), key=lambda t: (t[0] is None, t[0] or "", t[1]))
    only_a = len(set(ia) - set(ib))
    only_b = len(set(ib) - set(ia))
    sa = np.array([ia[t] for t in shared], dtype=np.int64)
    sb = np.array([ib[t] for t in shared], dtype=np.int64)
    if shared:
        na, ca, nta = ga.n[sa], ga.c[sa], ga.n_trials[sa]
        nb, cb, ntb = gb.n[sb], gb.c[sb], gb.n_trials[sb]
    else:
        na = ca = nta = nb = cb = ntb = np.empty(0, dtype=np.int64)
    keep = (na >= k) & (nb >= k)
    excluded = int((~keep).sum())
    sel = np.flatnonzero(keep)
    tasks = [shared[i] for i in sel]
    return tasks, na[sel], ca[sel], nta[sel], nb[sel], cb[sel], ntb[sel], only_a, only_b, excluded


@dataclass(frozen=True)
class _Paired:
    row: dict[str, Any]
    tasks: pl.DataFrame


def _paired(
    ga, gb, a, b, k, ci, method, resamples, seed, permutations, progress
) -> _Paired:
    tasks, na, ca, nta, nb, cb, ntb, only_a, only_b, excluded = _pair_tasks(ga, gb, k)
    ua = u_hat(na, ca, k)
    ub = u_hat(nb, cb, k)
    d = ua - ub
    T = d.size
    row: dict[str, Any] = {
        "a": a,
        "b": b,
        "k": k,
        "n_tasks": T,
        "n_tasks_only_a": only_a,
        "n_tasks_only_b": only_b,
        "n_tasks_excluded": excluded,
    }
    level = ci if ci is not None else 0.95
    if T == 0:
        row.update(dict.fromkeys(_NUM_FIELDS))
        row["perm_method"] = None
    else:
        mean, se, _ = column_stats(d)
        diff = float(mean[0])
        se0 = float(se[0]) if T > 1 else float("nan")
        tl, th = t_interval(mean, se, np.array([T]), level)
        if T > 1:
            # the paired bootstrap: resampling tasks resamples (Û_A, Û_B) together, i.e. d_t
            bl, bh = interval(method, d, level, resamples, seed, progress)
        else:
            bl = bh = np.array([np.nan])
        if T > 1 and se0 > 0:
            tstat = diff / se0
            p_t = float(2 * stats.t.sf(abs(tstat), T - 1))
        elif T > 1 and diff == 0:
            p_t = 1.0
        else:
            p_t = None
        p_perm, perm_method = sign_flip_pvalue(d, permutations, seed)
        nz = d[d != 0]
        if nz.size == 0:
            p_w = 1.0
        else:
            p_w = float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
        one_trial = bool(k == 1 and np.all(nta == 1) and np.all(ntb == 1) and np.all(na == 1) and np.all(nb == 1))
        if one_trial:
            n10 = int(np.sum((ca == 1) & (cb == 0)))
            n01 = int(np.sum((ca == 0) & (cb == 1)))
            p_mc = float(stats.binomtest(n10, n10 + n01, 0.5).pvalue) if n10 + n01 else 1.0
        else:
            n10 = n01 = p_mc = None
        row.update(
            {
                "estimate_a": float(np.mean(ua)),
                "estimate_b": float(np.mean(ub)),
                "diff": diff,
                "se": _nn(se0),
                "t_low": _nn(tl[0]),
                "t_high": _nn(th[0]),
                "ci_low": _nn(bl[0]),
                "ci_high": _nn(bh[0]),
                "p_t": p_t,
                "p_perm": float(p_perm),
                "p_wilcoxon": p_w,
                "mcnemar_a_only": n10,
                "mcnemar_b_only": n01,
                "p_mcnemar": p_mc,
            }
        )
        row["perm_method"] = perm_method
    tframe = pl.DataFrame(
        {
            "domain": [t[0] for t in tasks],
            "task_id": [t[1] for t in tasks],
            "n_a": na,
            "c_a": ca,
            "n_b": nb,
            "c_b": cb,
            "u_a": ua,
            "u_b": ub,
            "d": d,
        },
        schema={"domain": pl.String, "task_id": pl.String, "n_a": pl.Int64, "c_a": pl.Int64, "n_b": pl.Int64,
                "c_b": pl.Int64, "u_a": pl.Float64, "u_b": pl.Float64, "d": pl.Float64},
    )
    return _Paired(row, tframe)


def _nn(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


_NUM_FIELDS = (
    "estimate_a", "estimate_b", "diff", "se", "t_low", "t_high", "ci_low", "ci_high", "p_t", "p_perm",
    "p_wilcoxon", "mcnemar_a_only", "mcnemar_b_only", "p_mcnemar",
)
_ROW_SCHEMA = {
    "a": pl.String, "b": pl.String, "k": pl.Int64, "n_tasks": pl.Int64, "n_tasks_only_a": pl.Int64,
    "n_tasks_only_b": pl.Int64, "n_tasks_excluded": pl.Int64, "estimate_a": pl.Float64, "estimate_b": pl.Float64,
    "diff": pl.Float64, "se": pl.Float64, "t_low": pl.Float64, "t_high": pl.Float64, "ci_low": pl.Float64,
    "ci_high": pl.Float64, "p_t": pl.Float64, "p_perm": pl.Float64, "perm_method": pl.String,
    "p_wilcoxon": pl.Float64, "mcnemar_a_only": pl.Int64, "mcnemar_b_only": pl.Int64, "p_mcnemar": pl.Float64,
}


def _groups_by_label(trials, by, label, infra, labels=None):
    if label in by:
        raise TaukError(f"label column {label!r} cannot also be a `by` column")
    df = prepare_trials(as_trials(trials), infra)
    if label not in df.columns:
        raise TaukError(f"label column {label!r} is not in the trials frame")
    if labels is not None:
        present = set(df[label].drop_nulls().unique().to_list())
        missing = [x for x in labels if x not in present]
        if missing:
            raise TaukError(f"{label} value(s) {missing} not found; have {sorted(present)}")
        df = df.filter(pl.col(label).is_in(list(labels)))
    groups = task_groups(df, (*by, label))
    table: dict[tuple, dict[Any, GroupTasks]] = {}
    for g in groups:
        table.setdefault(g.key[:-1], {})[g.key[-1]] = g
    return df, table


def _frame(by, schema, keyed_rows, extra_schema=None):
    sch = {c: schema[c] for c in by}
    sch.update(_ROW_SCHEMA)
    if extra_schema:
        sch.update(extra_schema)
    data = {c: [] for c in sch}
    for key, row in keyed_rows:
        for i, c in enumerate(by):
            data[c].append(key[i])
        for c in sch:
            if c not in by:
                data[c].append(row.get(c))
    return pl.DataFrame(data, schema=sch)


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Comparison:
    """A paired comparison of ``a`` against ``b`` (difference = a − b), one row per ``by`` group.

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

    def to_frame(self) -> pl.DataFrame:
        return self.frame

    def row(self, **group: Any) -> dict[str, Any]:
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
        cols = [*self.by, "tasks", f"pass^{self.k} {self.a}", f"pass^{self.k} {self.b}", "diff", "ci_low", "ci_high",
                "p_perm", "p_wilcoxon", "p_mcnemar"]
        rows = [
            [*(r[c] for c in self.by), r["n_tasks"], r["estimate_a"], r["estimate_b"], r["diff"], r["ci_low"],
             r["ci_high"], r["p_perm"], r["p_wilcoxon"], r["p_mcnemar"]]
            for r in self.frame.iter_rows(named=True)
        ]
        notes = [
            f"paired on shared tasks (domain, task_id); diff = {self.a} − {self.b}",
            f"{self.ci if self.ci is not None else 0.95:.0%} {self.method} paired task bootstrap, {self.resamples} resamples, seed {self.seed}",
            "p_perm: sign-flip permutation test (exact when ≤ 20 nonzero differences)",
        ]
        only = self.frame.select(pl.col("n_tasks_only_a").sum(), pl.col("n_tasks_only_b").sum()).row(0)
        if any(only):
            notes.append(f"tasks run by only one agent, left out: {only[0]} ({self.a}), {only[1]} ({self.b})")
        return SummaryTable.build(f"{self.a} vs {self.b}", cols, rows, notes)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


@dataclass(frozen=True)
class MultipleComparison:
    """All pairwise comparisons (``pairs``: Comparison columns + ``p_adjusted``, family = every pair in every group,
    adjusted on p_perm) and bootstrap rank intervals (``ranks``: group keys, label value, n_tasks (common to all
    agents of the group), estimate, rank (1 = best, ties averaged), rank_low, rank_high)."""

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

    def to_frame(self) -> pl.DataFrame:
        return self.pairs

    def summary(self) -> SummaryTable:
        cols = [*self.by, "a", "b", "tasks", "diff", "ci_low", "ci_high", "p_perm", f"p_{self.adjust}"]
        rows = [
            [*(r[c] for c in self.by), r["a"], r["b"], r["n_tasks"], r["diff"], r["ci_low"], r["ci_high"], r["p_perm"],
             r["p_adjusted"]]
            for r in self.pairs.iter_rows(named=True)
        ]
        notes = [f"p adjusted by {self.adjust} over all {self.pairs.height} comparisons"]
        for r in self.ranks.iter_rows(named=True):
            g = ", ".join(str(r[c]) for c in self.by)
            notes.append(
                f"{g + ': ' if g else ''}{r[self.label]} rank {r['rank']} "
                f"[{r['rank_low']}, {r['rank_high']}] on {r['n_tasks']} common tasks"
            )
        return SummaryTable.build(f"pairwise pass^{self.k} comparisons", cols, rows, notes)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


# ---------------------------------------------------------------------------------------------- public API
def compare(
    trials: Any,
    a: str,
    b: str,
    k: int = 1,
    by: str | Sequence[str] | None = None,
    label: str = "agent",
    infra: str = "drop",
    ci: float = 0.95,
    method: str = "bca",
    resamples: int = 9999,
    seed: int | None = 0,
    permutations: int = 9999,
    progress: bool | None = None,
) -> Comparison:
    """Paired comparison of label value ``a`` against ``b`` on the tasks both ran (see module docs).

    ``by`` splits the comparison (e.g. ``by="domain"``); tasks are always keyed by (domain, task_id).
    """
    by_t = normalize_by(by)
    _check_ci(ci, method, resamples)
    df, table = _groups_by_label(trials, by_t, label, infra, labels=[a, b])
    keyed, task_parts = [], []
    for key in sorted(table, key=_sort_key):
        gs = table[key]
        res = _paired(gs.get(a), gs.get(b), a, b, int(k), ci, method.lower(), resamples, seed, permutations, progress)
        keyed.append((key, res.row))
        tp = res.tasks
        for i, c in enumerate(by_t):
            if c not in tp.columns:
                tp = tp.with_columns(pl.lit(key[i], dtype=df.schema[c]).alias(c))
        task_parts.append(tp.select([*by_t, *(c for c in res.tasks.columns if c not in by_t)]))
    frame = _frame(by_t, df.schema, keyed)
    tasks = pl.concat(task_parts) if task_parts else pl.DataFrame()
    return Comparison(str(a), str(b), int(k), label, by_t, infra, ci, method.lower(), resamples, seed, frame, tasks)


def _sort_key(key: tuple) -> tuple:
    return tuple((v is None, str(v)) for v in key)


def compare_all(
    trials: Any,
    agents: Sequence[str] | None = None,
    k: int = 1,
    by: str | Sequence[str] | None = None,
    label: str = "agent",
    adjust: str = "holm",
    infra: str = "drop",
    ci: float = 0.95,
    method: str = "bca",
    resamples: int = 9999,
    seed: int | None = 0,
    permutations: int = 9999,
    progress: bool | None = None,
) -> MultipleComparison:
    """Every pair of label values (per ``by`` group), p-values adjusted over the whole family by Holm (default) or
    Benjamini–Hochberg (``adjust="bh"``), and a bootstrap interval for each agent's rank: one resample matrix over the
    tasks common to all agents of the group, applied to every agent, ranks taken per replicate."""
    by_t = normalize_by(by)
    _check_ci(ci, method, resamples)
    adjust_pvalues([], adjust)  # validate early
    df, table = _groups_by_label(trials, by_t, label, infra, labels=list(agents) if agents is not None else None)
    keyed, rank_rows = [], []
    level = ci if ci is not None else 0.95
    for key in sorted(table, key=_sort_key):
        gs = table[key]
        names = list(agents) if agents is not None else sorted(gs, key=lambda x: (x is None, str(x)))
        for a, b in itertools.combinations(names, 2):
            res = _paired(gs.get(a), gs.get(b), a, b, int(k), ci, method.lower(), resamples, seed, permutations, progress)
            keyed.append((key, res.row))
        rank_rows += [(key, r) for r in _rank_intervals(gs, names, int(k), level, resamples, seed, progress)]
    pairs = _frame(by_t, df.schema, keyed)
    pairs = pairs.with_columns(pl.Series("p_adjusted", adjust_pvalues(pairs["p_perm"].to_numpy(), adjust), dtype=pl.Float64))
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
    return MultipleComparison(int(k), label, by_t, adjust.lower(), infra, ci, method.lower(), resamples, seed, pairs, ranks)


def _rank_intervals(gs: dict[Any, GroupTasks], names, k, level, resamples, seed, progress) -> list[dict]:
    present = [n for n in names if n in gs]
    idx = {n: _task_index(gs[n]) for n in present}
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
                    "rank_low": _nn(lo[j]), "rank_high": _nn(hi[j])})
    for n in names:
        if n not in gs:
            out.append({"label": n, "n_tasks": 0, "estimate": None, "rank": None, "rank_low": None, "rank_high": None})
    return out

"""Paired comparisons of agents on shared tasks, many-comparison adjustment and rank intervals (docs/spec.md §4).

A comparison is paired by task: a task is (domain, task_id), so a label (agent) spanning several runs or domains
keeps its tasks apart, and the two agents are compared only on tasks both ran (the others are counted and reported).
Per task, d_t = Û_k^A − Û_k^B. Reported:

* the headline: the mean difference with the **score test** (``test="score"``, the default;
  :mod:`tauk.stats.comparisons.score`) — its two-sided ``p_value`` and its own interval ``ci_low`` / ``ci_high``,
  which excludes 0 exactly when p < α: where every d_t is −1, 0 or 1 an exact interval (coverage ≥ 94 % at every
  trinomial parameter) designed by integer programming for 6–50 tasks at 95 %, else Tango's score interval joined
  with an adjusted Wald one, with the exact unconditional p-value (type-I ≤ α at every null discordance rate), where they are not the paired t widened towards a skewed tail
  (Hall's skewness-corrected t, unioned with the t) once ≥ 5 tasks differ; below that, at k = 1, the same with its SD
  floored at the trial-level binomial SD of the counts (:class:`~tauk.stats.comparisons.score.TrialCounts`), at
  k > 1 the score construction; never a zero-width interval. It covers a true difference away
  from 0 as well as at 0 (``docs/calibration/comparisons.md``, ``benchmarks/calibration_compare_delta.py``).
  ``test="t"`` reports the **paired t test** (T − 1 df, the default before) — its p and interval d̄ ± t·s/√T are
  always in ``p_t`` / ``t_low`` / ``t_high``; it is calibrated at δ = 0 (type-I 4–6 % in 28 of 30 measured
  cells, T = 20–50, n = 1–4; :mod:`tauk.stats.comparisons.paired_tests`) but covers a true difference of 0.07 in
  as little as 75 % of benchmarks where few tasks differ. ``test="signflip"`` / ``"signflip-mid"`` report the exact
  (mid-p) sign-flip test and its inverted interval instead;
* with ``method="bca"`` (or ``"percentile"``, ``"bootstrap-t"``, ``"t"``) ``ci_low`` / ``ci_high`` are the paired
  task-bootstrap interval instead (the *same* resampled tasks for both agents) — the p-value stays the test's;
  ``method="model"`` (the default, :data:`tauk.conventions.CI_METHOD`) means the test's own interval;
* cross-checks: the exact sign-flip p (``p_signflip``: exact on the lattice of d, else enumeration up to 20 tasks
  with d_t ≠ 0, seeded Monte Carlo beyond; conservative here: 0.1–3.8 % under the null), the Wilcoxon signed-rank
  p (normal approximation, tie-corrected) and an exact McNemar test (binomial test on the discordant tasks) when each agent has one trial per task and k = 1.
  ``p_perm`` / ``perm_method`` are deprecated aliases of ``p_signflip`` / ``signflip_method`` (one release).

:func:`compare_all` adjusts the headline p-values (Holm or Benjamini–Hochberg) and gives each agent a rank interval
by inverting the same paired tests (:mod:`tauk.stats.comparisons.ranks`): per agent (Holm over its K − 1 comparisons)
and simultaneous (Holm over all pairs). Trials are never resampled within tasks.

The pairing lives in :mod:`tauk.stats.comparisons.pairing` (shared with the power analysis), the result objects in
:mod:`tauk.stats.comparisons.results`, the p-value tools in :mod:`tauk.stats.comparisons.pvalues`.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tauk._compat import keyword_options
from tauk._lazy import lazy
from tauk.conventions import ADJUST, CI_LEVEL, CI_METHOD, INFRA, PAIRED_TEST, RESAMPLES, SEED
from tauk.errors import StatsWarning, TaukError

from ..dependence.adjust import (
    COUNTS_NOTE,
    PAIR_SCHEMA,
    check_run_effects,
    comparison_dependence,
    group_run_effects,
)
from ..dependence.clusters import FAMILY, cluster_keys
from ..intervals.bootstrap import column_stats, interval
from ..options import IntervalOptions, check_adjust, check_test, finite_or_none, interval_options
from ..tasks import GroupTasks, check_k, normalize_by, pooling_notes, u_hat
from .paired_tests import EXACT_CELLS, _lattice, paired_test, signflip_pvalue
from .pairing import groups_by_label, pair_tasks, task_index
from .pvalues import adjust_pvalues, check_permutations, sign_flip_pvalue, wilcoxon_pvalue
from .ranks import rank_intervals
from .results import (
    NUM_FIELDS,
    RANK_FIELDS,
    Comparison,
    MultipleComparison,
    interval_agreement,
    interval_label,
    rows_frame,
)
from .score import TrialCounts
from .unseen import refresh_unseen_note

stats = lazy("scipy.stats")

__all__ = ["compare", "compare_all", "compare_pair", "Paired"]


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
    test: str = PAIRED_TEST,
    pool_setups: bool = False,
    options: IntervalOptions | None = None,
    cluster: str | None = None,
    run_effects: str = "adjust",
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
        Level of the intervals (default :data:`tauk.conventions.CI_LEVEL`); the test's α is 1 − ci. A comparison
        always reports its intervals: ``None`` means the default level.
    method
        The interval ``ci_low`` / ``ci_high``: ``"model"`` (the default, :data:`tauk.conventions.CI_METHOD`) is the
        test's own interval (score: {δ : |z(δ)| < c}; paired t: d̄ ± t_{T−1}·s/√T); ``"bca"``, ``"percentile"``, ``"bootstrap-t"`` give the
        paired task-bootstrap interval (``resamples``, ``seed``), ``"t"`` the t interval. The p-value is always the
        test's.
    resamples, seed
        Bootstrap resamples and seed (bootstrap intervals; ``seed`` also seeds Monte-Carlo sign flips).
    permutations
        Random sign flips of the sign-flip p-value (``p_signflip``) when more than 20 tasks differ (default
        :data:`tauk.conventions.RESAMPLES`).
    infra, reward, progress
        As for :func:`pass_hat_k`.
    test
        The headline test of ``p_value`` (one of :data:`tauk.conventions.PAIRED_TESTS`): ``"score"`` (default, the
        score test and interval, :mod:`tauk.stats.comparisons.score`), ``"t"`` (the paired t test with T − 1 df;
        calibrated at δ = 0 at 20–50 tasks, under-covers δ ≠ 0 where few tasks differ), ``"signflip"`` (exact sign-flip, = exact McNemar
        with one trial per task; conservative) or ``"signflip-mid"`` (its mid-p version); see
        :func:`tauk.stats.comparisons.paired_tests.paired_test`.
    pool_setups
        Pool an agent's trials of different setups; by default the comparison is made within each setup (``setup``
        joins ``by`` when the agents' trials span several): trials of another setup are not repeated trials.
    options
        ``ci``, ``method``, ``resamples`` and ``seed`` as one :class:`~tauk.stats.IntervalOptions` (as for
        :func:`~tauk.stats.pass_hat_k`).
    cluster
        Task families (a trials column constant within a task, or ``"family"``: telecom's issue type × persona from
        the ids; :mod:`tauk.stats.dependence.clusters`): the headline p-value and interval come from a
        cluster-robust (CR2) t test with G − 1 degrees of freedom (``n_clusters``, ``se_cluster``).
    run_effects
        ``"adjust"`` (default): where an agent's passes (trial indices of its runs) differ beyond chance
        (σ̂²_run > 0; ``run_effect_p_a`` / ``_b``, ``run_var_a`` / ``_b``), the headline test and its interval
        are joined (hull, larger p) with a t test that adds both agents' run-level variance (``se_run``; each part with its own t quantile, ``df`` the equivalent one) and ``adjusted_for`` says so;
        ``"report"``: report them only. With one pass per agent a run effect cannot be told from the agent
        difference (a note says so; see :mod:`tauk.stats.noise`).

    Returns
    -------
    Comparison
        ``to_frame()`` (one row per group), ``tasks`` (the per-task table), ``records()``, ``summary()``, and
        ``diff`` / ``p_value`` when there is a single group.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> c = tauk.stats.compare(res, "atlas-large", "baseline", pool_setups=True)
    >>> round(c.diff, 4), c.records()[0]["n_tasks"], c.row()["interval_method"], f"{c.p_value:.1e}"
    (0.43, 50, 'score', '1.0e-07')
    >>> round(c.row()["ci_low"], 4), round(c.row()["ci_high"], 4), c.row()["signflip_method"]
    (0.3345, 0.5255, 'exact')
    >>> round(c.row()["t_low"], 4), round(c.row()["t_high"], 4), f'{c.row()["p_t"]:.1e}'  # the paired t (test="t")
    (0.3415, 0.5185, '4.5e-13')
    >>> c.row()["adjusted_for"]  # atlas-large's 8 passes (4 trial indices × 2 runs) differ a little
    'run variance (passes 8/8, t_(R−1) each)'
    """
    asked = normalize_by(by)
    k = check_k(k)
    check_permutations(permutations)
    opts = interval_options(options, ci=ci, method=method, resamples=resamples, seed=seed)
    test = check_test(test)
    widen_runs = check_run_effects(run_effects) == "adjust"
    df, table, by_t = groups_by_label(trials, asked, label, infra, labels=[a, b], reward=reward,
                                      pool_setups=pool_setups, extra=_cluster_col(cluster))  # fmt: skip
    dep = _Dependence(df, by_t, label, cluster, opts.level, widen_runs)
    keyed, task_parts = [], []
    for key in sorted(table, key=_sort_key):
        gs = table[key]
        res = compare_pair(gs.get(a), gs.get(b), a, b, int(k), opts, permutations=permutations, test=test,
                           progress=progress)  # fmt: skip
        keyed.append((key, dep.row(key, a, b, int(k), res)))
        tp = res.tasks
        for i, c in enumerate(by_t):
            if c not in tp.columns:
                tp = tp.with_columns(pl.lit(key[i], dtype=df.schema[c]).alias(c))
        task_parts.append(tp.select([*by_t, *(c for c in res.tasks.columns if c not in by_t)]))
    frame = rows_frame(by_t, df.schema, keyed, PAIR_SCHEMA)
    tasks = pl.concat(task_parts) if task_parts else pl.DataFrame()
    return Comparison(str(a), str(b), int(k), label, by_t, infra, opts.ci, opts.method, opts.resamples, opts.seed,
                      frame, tasks, permutations, reward, test, by_t != asked, cluster, dep.notes(),
                      pooling_notes(trials, df, by_t) if pool_setups else ())  # fmt: skip


def _cluster_col(cluster: str | None) -> tuple[str, ...]:
    return (cluster,) if cluster and cluster != FAMILY else ()


class _Dependence:
    """Run effects per (group, agent) and task families per group, applied to each comparison row
    (:func:`tauk.stats.dependence.adjust.comparison_dependence`)."""

    def __init__(self, df: pl.DataFrame, by: tuple[str, ...], label: str, cluster: str | None, level: float,
                 adjust: bool) -> None:  # fmt: skip
        self.runs = group_run_effects(df, (*by, label))
        self.cmaps = cluster_keys(df, by, cluster) if cluster else {}
        self.cluster, self.level, self.adjust = cluster, level, adjust
        self._notes: list[str] = [] if self.runs or "_success" in df.columns else [COUNTS_NOTE]

    def row(self, key: tuple, a: Any, b: Any, k: int, res: Paired) -> dict[str, Any]:
        ra, rb = self.runs.get((*key, a)), self.runs.get((*key, b))
        row, notes = comparison_dependence(res.row, res.tasks, k, ra[1] if ra else None, rb[1] if rb else None,
                                           self.cmaps.get(key), self.cluster, self.level, self.adjust)  # fmt: skip
        self._notes += [n for n in notes if n not in self._notes]
        if row.get("adjusted_for") and row.get("ci_low") is not None and row.get("ci_high") is not None:
            row["interval_note"] = refresh_unseen_note(row.get("interval_note"), int(row["n_tasks"]),
                                                       row["ci_high"] - row["ci_low"], self.level)  # fmt: skip
        return row

    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)


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
    adjust: str = ADJUST,
    ci: float | None = CI_LEVEL,
    method: str = CI_METHOD,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    permutations: int = RESAMPLES,
    infra: str = INFRA,
    reward: str = "reward",
    progress: bool | None = None,
    test: str = PAIRED_TEST,
    pool_setups: bool = False,
    options: IntervalOptions | None = None,
    cluster: str | None = None,
    run_effects: str = "adjust",
) -> MultipleComparison:
    """Every pair of label values (per ``by`` group) with adjusted p-values, and an interval for each agent's rank.

    The headline p-values (``test``) are adjusted over the whole family (every pair in every group). The rank
    intervals invert the same paired tests on the tasks common to all agents of the group
    (:func:`tauk.stats.comparisons.ranks.rank_intervals`): ``rank_low`` / ``rank_high`` cover each agent's rank with
    probability ≥ ``ci`` (Holm over its K − 1 comparisons), ``rank_low_simultaneous`` /
    ``rank_high_simultaneous`` every agent's at once (Holm over all pairs); how often they cover:
    ``docs/calibration/comparisons.md``.

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
    ci, method, resamples, seed, permutations, infra, reward, progress, test, pool_setups, options, cluster, run_effects
        As for :func:`compare` (``ci`` is also the level of the rank intervals; the rank intervals invert the
        task-level tests: they do not see run effects or clusters).

    Returns
    -------
    MultipleComparison
        ``pairs`` (= ``to_frame()``), ``ranks``, ``records()``, ``summary()``.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> mc = tauk.stats.compare_all(res, by="domain", resamples=999, permutations=999)
    >>> mc.pairs.filter(domain="airline").select("a", "b").rows()
    [('atlas-large', 'atlas-small'), ('atlas-large', 'baseline'), ('atlas-small', 'baseline')]
    >>> mc.ranks.filter(domain="retail").select("rank", "rank_low", "rank_high", "rank_low_simultaneous").rows()
    [(1.0, 1.0, 1.0, 1.0), (2.0, 2.0, 3.0, 2.0), (3.0, 2.0, 3.0, 2.0)]
    """
    asked = normalize_by(by)
    if isinstance(agents, str):
        raise TaukError(f"agents takes a list of {label} values (at least two), got the string {agents!r}")
    if agents is not None:
        twice = sorted({str(x) for x in agents if list(agents).count(x) > 1})
        if twice:  # each pair with it twice in the family (and the agent against itself): Holm over too many
            raise TaukError(f"agents names {', '.join(map(repr, twice))} more than once: give each agent once")
    k = check_k(k)
    check_permutations(permutations)
    opts = interval_options(options, ci=ci, method=method, resamples=resamples, seed=seed)
    test = check_test(test)
    check_adjust(adjust)  # early
    labels = list(agents) if agents is not None else None
    widen_runs = check_run_effects(run_effects) == "adjust"
    df, table, by_t = groups_by_label(trials, asked, label, infra, labels=labels, reward=reward,
                                      pool_setups=pool_setups, extra=_cluster_col(cluster))  # fmt: skip
    dep = _Dependence(df, by_t, label, cluster, opts.level, widen_runs)
    keyed, rank_rows = [], []
    for key in sorted(table, key=_sort_key):
        gs = table[key]
        names = list(agents) if agents is not None else sorted(gs, key=lambda x: (x is None, str(x)))
        for a, b in itertools.combinations(names, 2):
            res = compare_pair(gs.get(a), gs.get(b), a, b, int(k), opts, permutations=permutations, test=test,
                               progress=progress)  # fmt: skip
            keyed.append((key, dep.row(key, a, b, int(k), res)))
        rank_rows += [(key, r) for r in _rank_intervals(gs, names, int(k), opts.level, test)]
    pairs = rows_frame(by_t, df.schema, keyed, PAIR_SCHEMA)
    p_adj = adjust_pvalues(pairs["p_value"].to_numpy(), adjust=adjust)
    pairs = pairs.with_columns(pl.Series("p_adjusted", p_adj, dtype=pl.Float64))
    pairs = pairs.with_columns(pl.col("p_adjusted").fill_nan(None))
    rsch = {c: df.schema[c] for c in by_t}
    rsch.update({label: df.schema[label], "n_tasks": pl.Int64, "estimate": pl.Float64,
                 **dict.fromkeys(RANK_FIELDS, pl.Float64)})
    rdata: dict[str, list] = {c: [] for c in rsch}
    for key, r in rank_rows:
        for i, c in enumerate(by_t):
            rdata[c].append(key[i])
        for c in rsch:
            if c not in by_t:
                rdata[c].append(r[c if c != label else "label"])
    ranks = pl.DataFrame(rdata, schema=rsch)
    return MultipleComparison(int(k), label, by_t, adjust.lower(), infra, opts.ci, opts.method, opts.resamples,
                              opts.seed, pairs, ranks, permutations, reward, test, by_t != asked, cluster,
                              dep.notes(), pooling_notes(trials, df, by_t) if pool_setups else ())  # fmt: skip


def _rank_intervals(gs: dict[Any, GroupTasks], names, k, ci, test) -> list[dict]:
    """Per-agent and simultaneous rank intervals of the agents present, on the tasks all of them ran (n_t ≥ k)."""
    present = [n for n in names if n in gs]
    idx = {n: task_index(gs[n]) for n in present}
    common = None
    for n in present:
        ok = {t for t, i in idx[n].items() if gs[n].n[i] >= k}
        common = ok if common is None else common & ok
    common = sorted(common or set(), key=lambda t: (t[0] is None, t[0] or "", t[1]))
    if not present:
        return []
    T = len(common)
    empty = {"n_tasks": 0, "estimate": None, **dict.fromkeys(RANK_FIELDS)}
    if T == 0:
        return [{"label": n, **empty} for n in names]
    U = np.empty((T, len(present)))
    N = np.empty((T, len(present)), dtype=np.int64)
    C = np.empty((T, len(present)), dtype=np.int64)
    for j, n in enumerate(present):
        sel = np.array([idx[n][t] for t in common], dtype=np.int64)
        N[:, j], C[:, j] = gs[n].n[sel], gs[n].c[sel]
        U[:, j] = u_hat(N[:, j], C[:, j], k)
    per = rank_intervals(U, ci=ci, simultaneous=False, test=test, counts=(N, C, k))
    sim = rank_intervals(U, ci=ci, simultaneous=True, test=test, counts=(N, C, k))
    out = [{"label": n, "n_tasks": T, "estimate": float(U[:, j].mean()), "rank": float(per.rank[j]),
            "rank_low": float(per.lo[j]), "rank_high": float(per.hi[j]), "rank_low_simultaneous": float(sim.lo[j]),
            "rank_high_simultaneous": float(sim.hi[j])} for j, n in enumerate(present)]  # fmt: skip
    return out + [{"label": n, **empty} for n in names if n not in gs]


def _signflip_cross_check(d: np.ndarray, permutations: int, seed: int | None) -> tuple[float, str]:
    """``p_signflip``: the exact sign-flip p on the lattice of d (a convolution, fast) when d has one, else
    :func:`~tauk.stats.comparisons.pvalues.sign_flip_pvalue` (enumeration up to 20 nonzero d_t, else Monte Carlo)."""
    nz = d[d != 0]
    if nz.size == 0:
        return 1.0, "exact"
    L = _lattice(nz)
    if L is not None and 2 * int(np.abs(np.rint(nz * L)).sum()) + 1 <= EXACT_CELLS:
        return float(signflip_pvalue(d, mid=False)), "exact"
    return sign_flip_pvalue(d, permutations=permutations, seed=seed)


@dataclass(frozen=True)
class Paired:
    """One paired comparison: its row of the comparison frame and its per-task table."""

    row: dict[str, Any]
    tasks: pl.DataFrame


def compare_pair(ga: GroupTasks | None, gb: GroupTasks | None, a: Any, b: Any, k: int, options: IntervalOptions, *,
                 permutations: int = RESAMPLES, test: str = PAIRED_TEST, progress: bool | None = None) -> Paired:
    """Compare label values ``a`` and ``b`` (their groups ``ga``, ``gb``) on shared tasks at one k: one row of the
    comparison frame (:data:`~tauk.stats.comparisons.results.ROW_SCHEMA`) and the per-task table.

    The headline ``p_value`` (and, with ``options.method == "model"``, ``ci_low`` / ``ci_high``) come from the
    paired test ``test`` (:func:`tauk.stats.comparisons.paired_tests.paired_test`); another ``options.method`` gives the
    paired task-bootstrap interval. ``options.ci`` None means the default level.
    """
    method = options.method
    pair = pair_tasks(ga, gb, k)
    tasks, only_a, only_b, excluded = pair.tasks, pair.only_a, pair.only_b, pair.excluded
    na, ca, nta, nb, cb, ntb = pair.n_a, pair.c_a, pair.n_trials_a, pair.n_b, pair.c_b, pair.n_trials_b
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
        "test": test,
        "interval_method": interval_label(method, test),
    }
    level = options.level
    if T == 0:
        row.update(dict.fromkeys(NUM_FIELDS))
        row["signflip_method"] = row["perm_method"] = None
        row["interval_note"] = "no shared task with at least k trials for both agents: nothing to compare"
    else:
        mean, se, _ = column_stats(d)
        se0 = float(se[0]) if T > 1 else float("nan")
        tt = paired_test(d, ci=level, test="t")
        head = tt if test == "t" else paired_test(d, ci=level, test=test, permutations=permutations, seed=options.seed,
                                                  trials=TrialCounts(na, ca, nb, cb, k))
        if method == "model":
            lo, hi = head.lo, head.hi
        elif T > 1:
            # the paired bootstrap: resampling tasks resamples (Û_A, Û_B) together, i.e. d_t. Seeded, so drawn on
            # one canonical copy of d — sorted (task labels do not matter) and oriented by the agents' names (b − a
            # gives the mirror of a − b exactly)
            sign = 1.0 if _sort_key((a,)) <= _sort_key((b,)) else -1.0
            bl, bh = interval(np.sort(sign * d), options.replace(ci=level), progress)
            lo, hi = (bl[0], bh[0]) if sign > 0 else (-bh[0], -bl[0])
        else:
            lo = hi = float("nan")
        p_sf, sf_method = _signflip_cross_check(d, permutations, options.seed)
        p_w = wilcoxon_pvalue(d)
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
                "difference": float(mean[0]),
                "diff": float(mean[0]),  # deprecated alias (one release)
                "se": finite_or_none(se0),
                "t_low": finite_or_none(tt.lo),
                "t_high": finite_or_none(tt.hi),
                "ci_low": finite_or_none(lo),
                "ci_high": finite_or_none(hi),
                "p_value": finite_or_none(head.p_value),
                "p_t": finite_or_none(tt.p_value),
                "p_signflip": float(p_sf),
                "p_wilcoxon": p_w,
                "mcnemar_a_only": n10,
                "mcnemar_b_only": n01,
                "p_mcnemar": p_mc,
                "p_perm": float(p_sf),
            }
        )
        row["signflip_method"] = row["perm_method"] = sf_method
        row.update(interval_agreement(d, lo, hi, head.p_value, level, method, test))
        if T == 1:
            warnings.warn(f"compare({a!r}, {b!r}, k={k}): one shared task — the interval is "
                          f"[{finite_or_none(lo)}, {finite_or_none(hi)}] and says little; see interval_note",
                          StatsWarning, stacklevel=3)  # fmt: skip
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
    return Paired(row, tframe)

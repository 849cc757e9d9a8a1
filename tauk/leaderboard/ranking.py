r"""Per domain: rank intervals, tie groups and adjacent-pair separability of leaderboard rows.

Rows are ranked within (domain, modality) — text and voice rows are different setups — by pass^k (k = 1 by
default), over the rows whose histogram was recovered. Two rows are compared by a test on their per-task values
Û_k = C(c, k)/C(n, k), which the recovered histograms give:

* **unpaired** (every pair; all a row's published numbers allow): Welch's t on the two sets of per-task values
  (Welch–Satterthwaite df). The rows ran the *same* tasks, so their per-task values are positively correlated
  (task difficulty) and the variance of the difference is Var_A + Var_B − 2·Cov, not Var_A + Var_B: the test is
  **conservative** (it separates fewer pairs than the data would with the pairing). Measured in
  ``benchmarks/leaderboard_calibration.py`` (kept in ``benchmarks/results/leaderboard_calibration.txt``).
* **paired** (where trajectories exist for both rows): :func:`tauk.stats.compare`'s default paired test (the score
  test) on the shared tasks replaces the unpaired test for that pair, and the table says which test each pair got.

``question="rerun"`` asks instead whether the gap exceeds run-to-run noise on these fixed tasks: a z test on the
rows' re-run standard errors (independent runs, so unpaired is exact here; needs n ≥ 2 trials per task).

From the pairwise p-values (two-sided, α = 1 − ci):

* **rank interval** of row i: [1 + #{j significantly better}, K − #{j significantly worse}], Holm over i's K − 1
  comparisons (per row) or over all pairs (``rank_low_simultaneous`` …): the test-inversion construction of
  :mod:`tauk.stats` rank intervals, with these tests;
* **possibly best**: the rows whose rank interval reaches 1;
* **tie groups** (``tier``): rows sorted by estimate; a new group starts after an adjacent pair that is separable
  after Holm over the domain's K − 1 adjacent pairs (``separable``; ``p`` is unadjusted). A group is a run of rows
  no adjacent step of which the data can resolve; non-adjacent rows in one group may still differ.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from tauk._lazy import lazy
from tauk.conventions import PAIRED_TEST, PAIRED_TEST_DESCRIPTIONS, domain_sort_key
from tauk.errors import TaukError
from tauk.results import load
from tauk.table import Interval, SummaryTable

from ._stats import compare, holm
from .choices import QUESTIONS
from .recovery import PUBLISHED_SETUP_FIELDS
from .rows import ROW_KEYS, RowIntervals, row_intervals, task_values

_SHORT = PAIRED_TEST_DESCRIPTIONS[PAIRED_TEST].split(" (")[0]
PAIRED_VIEW_TEST = _SHORT if _SHORT.startswith("paired") else f"paired {_SHORT}"
"""The ``test`` of a pair compared on shared tasks in the paired view: :func:`tauk.stats.compare`'s default test
(``"paired score test"``)."""

sps = lazy("scipy.stats")

__all__ = ["DomainRanking", "domain_ranking", "QUESTIONS", "welch_pvalue", "rank_bounds"]


def welch_pvalue(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(mean(x) − mean(y), two-sided Welch p). Both samples constant: p = 0 when the means differ, else 1.

    >>> d, p = welch_pvalue(np.array([0.0, 1, 1, 1]), np.array([0.0, 0, 0, 1]))
    >>> d, round(p, 4)
    (0.5, 0.207)
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    d = float(x.mean() - y.mean())
    vx = x.var(ddof=1) / x.size if x.size > 1 else 0.0
    vy = y.var(ddof=1) / y.size if y.size > 1 else 0.0
    se2 = vx + vy
    if se2 <= 0:
        return d, (1.0 if d == 0 else 0.0)
    df = se2**2 / ((vx**2 / (x.size - 1) if x.size > 1 else 0.0) + (vy**2 / (y.size - 1) if y.size > 1 else 0.0))
    t = d / math.sqrt(se2)
    return d, float(2.0 * sps.t.sf(abs(t), df))


def _z_pvalue(d: float, se_a: float | None, se_b: float | None) -> float:
    if se_a is None or se_b is None:
        return float("nan")
    se = math.hypot(se_a, se_b)
    if se <= 0:
        return 1.0 if d == 0 else 0.0
    return float(2.0 * sps.norm.sf(abs(d) / se))


def rank_bounds(p: np.ndarray, d: np.ndarray, alpha: float, simultaneous: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """[1 + #significantly better, K − #significantly worse] from K × K two-sided p-values and differences
    d[i, j] = μ_i − μ_j (Holm per row over its K − 1 comparisons, or over all pairs when ``simultaneous``).

    >>> p = np.array([[np.nan, 0.001, 0.001], [0.001, np.nan, 0.5], [0.001, 0.5, np.nan]])
    >>> d = np.array([[0, 0.3, 0.4], [-0.3, 0, 0.1], [-0.4, -0.1, 0]])
    >>> [b.tolist() for b in rank_bounds(p, d, 0.05)]
    [[1, 2, 2], [1, 3, 3]]
    """
    K = p.shape[0]
    better = np.zeros(K, dtype=np.int64)
    worse = np.zeros(K, dtype=np.int64)
    pairs = list(itertools.combinations(range(K), 2))
    if not pairs:
        return np.ones(K, dtype=np.int64), np.full(K, K, dtype=np.int64)

    def reject(ps: list[float]) -> np.ndarray:
        arr = np.asarray(ps, dtype=np.float64)
        ok = np.isfinite(arr)
        out = np.zeros(arr.size, dtype=bool)
        if ok.any():
            out[ok] = np.asarray(holm(arr[ok].tolist())) <= alpha
        return out

    if simultaneous:
        rej = reject([p[i, j] for i, j in pairs])
        for (i, j), r in zip(pairs, rej):
            if r and d[i, j] > 0:
                better[j] += 1
                worse[i] += 1
            elif r and d[i, j] < 0:
                better[i] += 1
                worse[j] += 1
    else:
        for i in range(K):
            others = [j for j in range(K) if j != i]
            rej = reject([p[i, j] for j in others])
            for j, r in zip(others, rej):
                if r and d[i, j] > 0:
                    worse[i] += 1
                elif r and d[i, j] < 0:
                    better[i] += 1
    return 1 + better, K - worse


@dataclass(frozen=True)
class DomainRanking:
    """Rank intervals, tie groups and adjacent pairs per (domain, modality) (immutable; from
    :func:`domain_ranking`).

    ``frame`` (:meth:`to_frame`): one row per ranked leaderboard row — submission_id, domain (the join keys),
    modality, model, k, estimate, ci_low, ci_high (its default interval), rank (point, ties averaged), rank_low,
    rank_high (per row), rank_low_simultaneous, rank_high_simultaneous, possibly_best, tier (tie group, 1 = top),
    the same four with the suffix ``_paired`` (the paired test where both rows have trajectories; equal to the
    unpaired ones elsewhere), has_trajectories.
    ``pairs``: every pair within a (domain, modality): a, b (a ranked above b), adjacent, difference, p_unpaired,
    p_paired (null without trajectories for both), test (of ``p``: "welch (unpaired, conservative)", "z (re-run)"
    or :data:`PAIRED_VIEW_TEST`), p (the one used in the paired view), separable_unpaired, separable (adjacent pairs only, Holm
    over the domain's adjacent pairs).
    ``domains``: one row per (domain, modality): rows ranked, rows left out (not recovered), possibly-best count,
    tiers, adjacent pairs separable (unpaired / paired view), mdd range (points), setups_differ (the published
    setup fields on which the ranked rows differ, with their values: :func:`published_setup_differences`; null
    when none).
    """

    frame: pl.DataFrame
    pairs: pl.DataFrame
    domains: pl.DataFrame
    k: int
    ci: float
    question: str
    rows: RowIntervals = field(repr=False)

    def to_frame(self) -> pl.DataFrame:
        """One row per ranked leaderboard row; see the class docs."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per ranked row."""
        return self.frame.to_dicts()

    def summary(self, *, domain: str | Sequence[str] | None = None, paired: bool | None = None) -> SummaryTable:
        """The ranking table (text / HTML / LaTeX) per domain: estimate with interval, rank interval, possibly best,
        tie group; with ``paired`` (default: when some row has trajectories) the paired view beside it."""
        f = self.frame
        if domain is not None:
            f = f.filter(pl.col("domain").is_in([domain] if isinstance(domain, str) else list(domain)))
        show_paired = bool(f["has_trajectories"].any()) if paired is None else paired
        lvl = f"{self.ci:.0%}"
        cols = ["domain", "modality", "submission", f"pass^{self.k} [{lvl}]", "rank [interval]", "best?", "tier"]
        fields = ["domain", "modality", "submission_id", "estimate", "rank_interval", "possibly_best", "tier"]
        if show_paired:
            cols += ["rank [paired]", "best? paired", "tier paired"]
            fields += ["rank_interval_paired", "possibly_best_paired", "tier_paired"]
        rows = []
        for r in f.iter_rows(named=True):
            row = [r["domain"], r["modality"], r["submission_id"] + (" *" if r["has_trajectories"] else ""),
                   Interval(100 * r["estimate"], _pt(r["ci_low"]), _pt(r["ci_high"])),
                   f"{r['rank']:g} [{r['rank_low']}, {r['rank_high']}]", "yes" if r["possibly_best"] else "",
                   r["tier"]]  # fmt: skip
            if show_paired:
                row += [f"[{r['rank_low_paired']}, {r['rank_high_paired']}]",
                        "yes" if r["possibly_best_paired"] else "", r["tier_paired"]]  # fmt: skip
            rows.append(row)
        test = "Welch t on per-task values, unpaired (conservative: the rows ran the same tasks)" \
            if self.question == "population" else "z on the re-run standard errors (the same tasks run again)"  # fmt: skip
        notes = [
            f"ranked within domain × modality by pass^{self.k} over the rows whose per-task counts were recovered; "
            f"tests: {test}; α = {1 - self.ci:g}",
            "rank interval: [1 + rows significantly better, K − rows significantly worse], Holm over each row's K − 1 "
            "comparisons; best?: the interval reaches 1",
            "tier: rows in rank order, a new tier after each adjacent pair separable after Holm over the domain's "
            "adjacent pairs",
        ]
        for d in self.domains.iter_rows(named=True):
            if domain is not None and d["domain"] not in ([domain] if isinstance(domain, str) else domain):
                continue
            notes.append(f"{d['domain']} ({d['modality']}): {d['n_ranked']} rows ranked, {d['n_possibly_best']} "
                         f"possibly best, {d['n_tiers']} tier(s); {d['adjacent_separable']} of {d['n_adjacent']} "
                         f"adjacent pairs separable" + (f" ({d['adjacent_separable_paired']} with the pairing)"
                                                        if show_paired else "")
                         + (f"; two single runs must differ by {d['mdd_min']:.1f}–{d['mdd_max']:.1f} points"
                            if d["mdd_min"] is not None else "")
                         + (f"; {d['n_left_out']} row(s) not recovered, left out" if d["n_left_out"] else ""))  # fmt: skip
            if d["setups_differ"]:
                notes.append(f"{d['domain']} ({d['modality']}): the ranked rows ran different setups — "
                             f"{d['setups_differ']}; a gap between two rows of different setups is not the agents' "
                             "alone (the leaderboard ranks them together; so does this table)")  # fmt: skip
        if show_paired:
            notes.append(f"* trajectories given: pairs of two such rows use the {PAIRED_VIEW_TEST} on shared tasks "
                         "(tauk.stats.compare) in the paired view")
        return SummaryTable.build(f"Leaderboard ranking: pass^{self.k}, rank intervals and tie groups", cols, rows,
                                  notes, digits=1, fields=fields, keys=3)  # fmt: skip

    def pairs_summary(self, *, adjacent_only: bool = True, domain: str | Sequence[str] | None = None) -> SummaryTable:
        """The adjacent pairs (or all pairs): difference, unpaired and paired p, separability."""
        f = self.pairs.filter(pl.col("adjacent")) if adjacent_only else self.pairs
        if domain is not None:
            f = f.filter(pl.col("domain").is_in([domain] if isinstance(domain, str) else list(domain)))
        cols = ["domain", "modality", "a", "b", "difference (pt)", "p unpaired", "p paired", "test", "separable"]
        fields = ["domain", "modality", "a", "b", "difference", "p_unpaired", "p_paired", "test", "separable"]
        rows = [[r["domain"], r["modality"], r["a"], r["b"], 100 * r["difference"], r["p_unpaired"], r["p_paired"],
                 r["test"], None if r["separable"] is None else ("yes" if r["separable"] else "no")]
                for r in f.iter_rows(named=True)]  # fmt: skip
        notes = ["a is ranked above b; separable: adjacent pairs, Holm over the domain's adjacent pairs, using the "
                 "paired p where both rows have trajectories"]  # fmt: skip
        return SummaryTable.build("Leaderboard: adjacent pairs", cols, rows, notes, digits=4, fields=fields, keys=4)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _pt(x: float | None) -> float | None:
    return None if x is None else 100.0 * x


def _trials_of(value: Any) -> pl.DataFrame:
    if isinstance(value, pl.DataFrame):
        return value
    if hasattr(value, "trials"):
        return value.trials
    return load(value, progress=False).trials


def _tiers(order: list[int], sep: dict[tuple[int, int], bool]) -> dict[int, int]:
    tier, out = 1, {}
    for pos, i in enumerate(order):
        if pos and sep.get((order[pos - 1], i), False):
            tier += 1
        out[i] = tier
    return out


def domain_ranking(rows: Any, *, k: int = 1, ci: float | None = None, question: str = "population",
                   trajectories: Mapping[Any, Any] | None = None, domains: Sequence[str] | None = None,
                   modality: str | None = None) -> DomainRanking:  # fmt: skip
    """Rank intervals, tie groups and adjacent-pair separability per (domain, modality) (see the module docs).

    Parameters
    ----------
    rows
        A :class:`~tauk.leaderboard.rows.RowIntervals` (or what :func:`~tauk.leaderboard.rows.row_intervals` takes).
    k
        Rank by pass^k (default 1; rows without a recovered pass^k are left out).
    ci
        Level of the tests (α = 1 − ci; default the rows' level).
    question
        ``"population"`` (default) or ``"rerun"``, see :data:`QUESTIONS`.
    trajectories
        Trials of some rows: a mapping (submission_id, domain) → a trials frame, :class:`tauk.Results` or a path.
        Pairs of two such rows are compared with :func:`tauk.stats.compare`'s default paired test on shared tasks in
        the paired view.
    domains, modality
        Keep some domains / one modality.

    Returns
    -------
    DomainRanking
    """
    if not isinstance(rows, RowIntervals):
        rows = row_intervals(rows)
    if question not in QUESTIONS:
        raise TaukError(f"question must be one of {QUESTIONS}, got {question!r}")
    level = rows.ci if ci is None else float(ci)
    if not 0.0 < level < 1.0:
        raise TaukError(f"ci must lie in (0, 1), got {ci!r}")
    alpha = 1.0 - level
    traj: dict[tuple[str, str], pl.DataFrame] = {}
    for key, v in (trajectories or {}).items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise TaukError(f"trajectories are keyed by (submission_id, domain), got {key!r}")
        traj[(str(key[0]), str(key[1]))] = _trials_of(v).with_columns(pl.lit(str(key[0])).alias("submission_id"))
    pk = rows.passk.filter(pl.col("k") == k).select(*ROW_KEYS, "estimate", "ci_low", "ci_high", "se_rerun")
    base = rows.frame.select(*ROW_KEYS, "model", "modality", "status", "mdd_single_runs").join(pk, on=list(ROW_KEYS),
                                                                                                how="left")  # fmt: skip
    if domains is not None:
        base = base.filter(pl.col("domain").is_in(list(domains)))
    if modality is not None:
        base = base.filter(pl.col("modality") == modality)
    out_rows, pair_rows, dom_rows = [], [], []
    for (dom, mod), part in base.group_by(["domain", "modality"], maintain_order=True):
        ranked = part.filter(pl.col("estimate").is_not_null()).sort(["estimate", "submission_id"],
                                                                    descending=[True, False])  # fmt: skip
        left_out = part.height - ranked.height
        recs = ranked.to_dicts()
        K = len(recs)
        if K == 0:
            continue
        vals = [task_values(rows.recovery.row(r["submission_id"], dom).cells, k) for r in recs]
        P_un = np.full((K, K), np.nan)
        D = np.zeros((K, K))
        for i, j in itertools.combinations(range(K), 2):
            if question == "population":
                d, p = welch_pvalue(vals[i], vals[j])
            else:
                d = recs[i]["estimate"] - recs[j]["estimate"]
                p = _z_pvalue(d, recs[i]["se_rerun"], recs[j]["se_rerun"])
            P_un[i, j] = P_un[j, i] = p
            D[i, j], D[j, i] = d, -d
        P_pa = P_un.copy()
        paired_p: dict[tuple[int, int], float] = {}
        has = [(r["submission_id"], dom) in traj for r in recs]
        if question == "population" and sum(has) >= 2:
            for i, j in itertools.combinations(range(K), 2):
                if has[i] and has[j]:
                    a, b = recs[i]["submission_id"], recs[j]["submission_id"]
                    both = pl.concat([traj[(a, dom)], traj[(b, dom)]], how="diagonal_relaxed")
                    cmp = compare(both, a, b, k=k, label="submission_id", ci=level, pool_setups=True)
                    p = cmp.row()["p_value"]
                    paired_p[(i, j)] = p
                    P_pa[i, j] = P_pa[j, i] = p
        rank = sps.rankdata([-r["estimate"] for r in recs], method="average")
        views = {}
        for view, P in (("", P_un), ("_paired", P_pa)):
            lo, hi = rank_bounds(P, D, alpha, False)
            slo, shi = rank_bounds(P, D, alpha, True)
            adj = [(i, i + 1) for i in range(K - 1)]
            padj = [P[i, j] for i, j in adj]
            sep = {}
            if adj:
                fin = [x for x in padj if np.isfinite(x)]
                adjusted = iter(np.asarray(holm(fin)) if fin else [])
                for (i, j), x in zip(adj, padj):
                    sep[(i, j)] = bool(next(adjusted) <= alpha) if np.isfinite(x) else False
            tiers = _tiers(list(range(K)), sep)
            views[view] = (lo, hi, slo, shi, sep, tiers)
        for i, r in enumerate(recs):
            lo, hi, slo, shi, _, tiers = views[""]
            plo, phi, _, _, _, ptiers = views["_paired"]
            out_rows.append({
                "submission_id": r["submission_id"], "domain": dom, "modality": mod, "model": r["model"], "k": k,
                "estimate": r["estimate"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "rank": float(rank[i]),
                "rank_low": int(lo[i]), "rank_high": int(hi[i]), "rank_low_simultaneous": int(slo[i]),
                "rank_high_simultaneous": int(shi[i]), "possibly_best": bool(lo[i] == 1), "tier": tiers[i],
                "rank_low_paired": int(plo[i]), "rank_high_paired": int(phi[i]),
                "possibly_best_paired": bool(plo[i] == 1), "tier_paired": ptiers[i], "has_trajectories": has[i],
            })  # fmt: skip
        test_un = "welch (unpaired, conservative)" if question == "population" else "z (re-run)"
        for i, j in itertools.combinations(range(K), 2):
            adjacent = j == i + 1
            pp = paired_p.get((i, j))
            pair_rows.append({
                "domain": dom, "modality": mod, "a": recs[i]["submission_id"], "b": recs[j]["submission_id"],
                "adjacent": adjacent, "difference": float(D[i, j]), "p_unpaired": _nan_none(P_un[i, j]),
                "p_paired": pp, "test": PAIRED_VIEW_TEST if pp is not None else test_un, "p": _nan_none(P_pa[i, j]),
                "separable_unpaired": views[""][4].get((i, j)) if adjacent else None,
                "separable": views["_paired"][4].get((i, j)) if adjacent else None,
            })  # fmt: skip
        mdd = [r["mdd_single_runs"] for r in recs if r["mdd_single_runs"] is not None]
        metas = [rows.recovery.meta.get((r["submission_id"], dom), {}) for r in recs]
        differ = published_setup_differences(metas)
        dom_rows.append({
            "domain": dom, "modality": mod, "n_ranked": K, "n_left_out": left_out,
            "n_possibly_best": int(sum(views[""][0] == 1)), "n_tiers": max(views[""][5].values()),
            "n_adjacent": K - 1, "adjacent_separable": int(sum(views[""][4].values())),
            "adjacent_separable_paired": int(sum(views["_paired"][4].values())),
            "n_possibly_best_paired": int(sum(views["_paired"][0] == 1)),
            "n_tiers_paired": max(views["_paired"][5].values()), "n_with_trajectories": int(sum(has)),
            "mdd_min": 100 * min(mdd) if mdd else None, "mdd_max": 100 * max(mdd) if mdd else None,
            "setups_differ": differ,
        })  # fmt: skip
    order = {(d["domain"], d["modality"]): i for i, d in enumerate(
        sorted(dom_rows, key=lambda d: (d["modality"] != "text", str(d["modality"]), domain_sort_key(d["domain"]))))}
    key = pl.struct("domain", "modality").map_elements(lambda s: order[(s["domain"], s["modality"])],
                                                        return_dtype=pl.Int64)  # fmt: skip
    frame = pl.DataFrame(out_rows, schema=_FRAME_SCHEMA)
    pairs = pl.DataFrame(pair_rows, schema=_PAIR_SCHEMA)
    doms = pl.DataFrame(dom_rows, schema=_DOMAIN_SCHEMA)
    if order:
        frame, pairs, doms = (f.with_row_index("_r").with_columns(key.alias("_o")).sort("_o", "_r").drop("_o", "_r")
                              for f in (frame, pairs, doms))  # fmt: skip
    return DomainRanking(frame, pairs, doms, int(k), level, question, rows)


def published_setup_differences(metas: Sequence[Mapping[str, Any]], *, width: int = 30) -> str | None:
    """The published setup fields (:data:`~tauk.leaderboard.recovery.PUBLISHED_SETUP_FIELDS`) on which some rows
    differ, with their values (each cut to ``width`` characters); None when the rows agree on all of them.

    Examples
    --------
    >>> published_setup_differences([{"user_simulator": "gpt-4.1", "tau2_bench_version": "0.1.3"},
    ...                    {"user_simulator": "gpt-5.2", "tau2_bench_version": "v0.1.3"}])
    'user_simulator (gpt-4.1 | gpt-5.2)'
    """
    def shown(f: str, v: Any) -> str:
        if v is None:
            return "not published"
        return str(v).removeprefix("v") if f == "tau2_bench_version" else str(v)  # "v0.1.3" is "0.1.3"

    parts = []
    for f in PUBLISHED_SETUP_FIELDS:
        values = sorted({shown(f, m.get(f)) for m in metas})
        if len(values) > 1:
            cut = [v if len(v) <= width else v[: width - 1] + "…" for v in values]
            parts.append(f"{f} ({' | '.join(cut)})")
    return "; ".join(parts) or None


def _nan_none(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


_FRAME_SCHEMA = {
    "submission_id": pl.String, "domain": pl.String, "modality": pl.String, "model": pl.String, "k": pl.Int64,
    "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "rank": pl.Float64, "rank_low": pl.Int64,
    "rank_high": pl.Int64, "rank_low_simultaneous": pl.Int64, "rank_high_simultaneous": pl.Int64,
    "possibly_best": pl.Boolean, "tier": pl.Int64, "rank_low_paired": pl.Int64, "rank_high_paired": pl.Int64,
    "possibly_best_paired": pl.Boolean, "tier_paired": pl.Int64, "has_trajectories": pl.Boolean,
}  # fmt: skip
_PAIR_SCHEMA = {
    "domain": pl.String, "modality": pl.String, "a": pl.String, "b": pl.String, "adjacent": pl.Boolean,
    "difference": pl.Float64, "p_unpaired": pl.Float64, "p_paired": pl.Float64, "test": pl.String, "p": pl.Float64,
    "separable_unpaired": pl.Boolean, "separable": pl.Boolean,
}  # fmt: skip
_DOMAIN_SCHEMA = {
    "domain": pl.String, "modality": pl.String, "n_ranked": pl.Int64, "n_left_out": pl.Int64,
    "n_possibly_best": pl.Int64, "n_tiers": pl.Int64, "n_adjacent": pl.Int64, "adjacent_separable": pl.Int64,
    "adjacent_separable_paired": pl.Int64, "n_possibly_best_paired": pl.Int64, "n_tiers_paired": pl.Int64,
    "n_with_trajectories": pl.Int64, "mdd_min": pl.Float64, "mdd_max": pl.Float64, "setups_differ": pl.String,
}  # fmt: skip

"""The hooks by which summaries and comparisons report run effects and task families and widen their intervals
(:mod:`~tauk.stats.dependence.run_effects`, :mod:`~tauk.stats.dependence.clusters`).

* :func:`summary_dependence` — for :func:`tauk.stats.summarize`: per group ``n_passes``, ``run_effect_q``,
  ``run_effect_p``, ``run_var`` (and ``n_clusters`` with ``cluster=``); per (group, k) ``se_run`` (√V_run(k)) and
  ``se_cluster`` (CR2), with ``ci_low`` / ``ci_high`` (and the re-run interval, for V_run) widened and the
  ``adjusted_for`` saying so;
* :func:`comparison_dependence` — for :func:`tauk.stats.compare`: the same per agent, and where either agent has a
  run variance or ``cluster=`` is given, the headline p-value and interval from one t test whose variance is
  (cluster-robust or task-level) + V_run(A) + V_run(B), each part with its own t quantile — joined with the
  task-level test (the hull of the two intervals, the larger p), so an adjustment never narrows a comparison.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from tauk.conventions import RUN_EFFECTS
from tauk.errors import StatsWarning, TaukError

from ..tasks import GroupTasks, u_hat
from .clusters import FAMILY, cluster_info, cluster_keys, cluster_variance
from .run_effects import (
    NOT_IDENTIFIED,
    RUN_NOTE_ONE_PASS,
    PassMatrix,
    RunEffect,
    pass_matrices,
    run_effect,
    run_variance,  # fmt: skip
    satterthwaite,
    t_quantile,
    widen,
)

__all__ = [
    "GROUP_FIELDS",
    "K_FIELDS",
    "PAIR_SCHEMA",
    "comparison_dependence",
    "group_run_effects",
    "summary_dependence",
]

GROUP_SCHEMA = {"n_passes": pl.Int64, "run_effect_q": pl.Float64, "run_effect_p": pl.Float64, "run_var": pl.Float64,
                "n_clusters": pl.Int64}  # fmt: skip
GROUP_FIELDS = tuple(GROUP_SCHEMA)
"""Per group of a summary: passes, Cochran's Q and its p, σ̂²_run (probability scale), clusters (with ``cluster=``)."""
K_SCHEMA = {"se_run": pl.Float64, "se_cluster": pl.Float64, "adjusted_for": pl.String}
K_FIELDS = tuple(K_SCHEMA)
"""Per (group, k) of a summary: √V_run(k), the CR2 cluster-robust standard error, and what the intervals were
widened for (null: nothing; ``interval_method`` still names what made them)."""

PAIR_SCHEMA = {
    "n_passes_a": pl.Int64, "n_passes_b": pl.Int64, "run_effect_p_a": pl.Float64, "run_effect_p_b": pl.Float64,
    "run_var_a": pl.Float64, "run_var_b": pl.Float64, "se_run": pl.Float64, "n_clusters": pl.Int64,
    "se_cluster": pl.Float64, "df": pl.Float64, "adjusted_for": pl.String,
}  # fmt: skip
"""The comparison columns added here (``df``: the t test's degrees of freedom where it was adjusted;
``adjusted_for``: what the headline test and interval account for beyond the tasks, null when nothing)."""



COUNTS_NOTE = ("per-task counts carry no pass (trial index): run effects are not tested and the intervals are the "
               "task-level ones (the trials frame tests them)")


def check_run_effects(value: str) -> str:
    """``value`` if it is one of :data:`RUN_EFFECTS`, else a :class:`~tauk.errors.TaukError` listing them."""
    if value not in RUN_EFFECTS:
        raise TaukError(f"run_effects must be one of {RUN_EFFECTS}, got {value!r}")
    return value




def group_run_effects(df: pl.DataFrame, by: tuple[str, ...]) -> dict[tuple, tuple[PassMatrix, RunEffect]]:
    """Each group's pass matrix and run-effect test (empty for per-task counts: they carry no pass)."""
    return {key: (pm, run_effect(pm.Y)) for key, pm in pass_matrices(df, by).items()}


def _theta(g_n: np.ndarray, g_c: np.ndarray, k: int) -> float:
    if k <= 1:
        return 1.0
    u = u_hat(g_n, g_c, k - 1)
    u = u[np.isfinite(u) & (g_n >= k)]
    return float(u.mean()) if u.size else 1.0


def _labels(g: GroupTasks, cmap: dict[tuple, Any] | None) -> list[Any]:
    cmap = cmap or {}
    return [cmap.get((d, t), ("\x00task", d, t)) for d, t in zip(g.domain, g.task_id)]


def summary_dependence(df: pl.DataFrame, by: tuple[str, ...], groups: Sequence[GroupTasks], long: pl.DataFrame,
                       level: float | None, cluster: str | None, metric: str = "pass^k", adjust: bool = True,
                       ) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:  # fmt: skip
    """``long`` with :data:`K_FIELDS` (intervals widened), the per-group :data:`GROUP_FIELDS` frame (keyed by
    ``by``) and the notes. ``level`` None: no interval to widen (the tests and variances are still given);
    ``adjust`` False: the run variance is reported (``se_run``) but the intervals are not widened by it."""
    runs = group_run_effects(df, by)
    cmaps = cluster_keys(df, by, cluster) if cluster else {}
    grow: dict[str, list] = {c: [] for c in (*by, *GROUP_FIELDS)}
    per_k: dict[tuple, dict[str, Any]] = {}
    notes: list[str] = []
    one_pass, few_clusters, single = [], [], []
    ks_of: dict[tuple, set[int]] = {}
    for r in long.select(*by, "k").iter_rows():
        ks_of.setdefault(tuple(r[:-1]), set()).add(int(r[-1]))
    for g in groups:
        pm_re = runs.get(g.key)
        re = pm_re[1] if pm_re else NOT_IDENTIFIED
        labels = _labels(g, cmaps.get(g.key)) if cluster else None
        info = cluster_info(cluster, labels) if cluster else None
        for i, c in enumerate(by):
            grow[c].append(g.key[i])
        grow["n_passes"].append(re.n_passes if pm_re else None)
        grow["run_effect_q"].append(re.statistic)
        grow["run_effect_p"].append(re.p_value)
        grow["run_var"].append(re.var)
        grow["n_clusters"].append(info.n_clusters if info else None)
        name = " · ".join(str(v) for v in g.key) if by else "all"
        if pm_re and re.n_passes < 2:
            one_pass.append(name)
        if info and info.n_clusters < 2:
            few_clusters.append(name)
        elif info and info.n_single == info.n_clusters:
            single.append(name)
        cc = g.c if metric == "pass^k" else g.n - g.c
        for k in sorted(ks_of.get(g.key, ())) if g.T else ():
            v_run = run_variance(re, k, _theta(g.n, cc, k))
            se_cl, G = None, None
            if info and info.n_clusters >= 2:
                u = u_hat(g.n, cc, k)
                u = u if metric == "pass^k" else 1.0 - u
                ok = g.n >= k
                V, G = cluster_variance(np.where(ok, u, np.nan), labels)
                se_cl = math.sqrt(V) if np.isfinite(V) else None
            per_k[(g.key, k)] = {"v_run": v_run, "df_run": re.n_passes - 1, "se_cluster": se_cl, "G": G,
                                 "adjust": adjust}
    if not runs and groups and "_success" not in df.columns:
        notes.append(COUNTS_NOTE)
    if one_pass:
        notes.append(f"{', '.join(one_pass[:6])}{' …' if len(one_pass) > 6 else ''}: "
                     + RUN_NOTE_ONE_PASS.format(what="figure"))  # fmt: skip
    if few_clusters:
        msg = (f"cluster={cluster!r}: {', '.join(few_clusters[:6])} ha(s|ve) fewer than 2 clusters; no cluster-robust "
               "variance can be made there, the task-level interval is kept")  # fmt: skip
        warnings.warn(msg, StatsWarning, stacklevel=4)
        notes.append(msg)
    if single:
        notes.append(f"cluster={cluster!r}: every cluster of {', '.join(single[:6])} is one task — the cluster-robust "
                     "interval is the task-level one")  # fmt: skip
    long = _widen_long(long, by, per_k, level)
    sch = {c: long.schema[c] for c in by}
    sch.update(GROUP_SCHEMA)
    return long, pl.DataFrame(grow, schema=sch), notes


def _widen_long(long: pl.DataFrame, by: tuple[str, ...], per_k: dict, level: float | None) -> pl.DataFrame:
    rows = long.to_dicts()
    se_run, se_cl, adj = [], [], []
    for r in rows:
        key = tuple(r[c] for c in by)
        info = per_k.get((key, r["k"]))
        if info is None or r["estimate"] is None:
            se_run.append(None)
            se_cl.append(None)
            adj.append(None)
            continue
        v_run = info["v_run"]
        se_run.append(math.sqrt(v_run) if info["df_run"] >= 1 and v_run is not None else None)
        se_cl.append(info["se_cluster"])
        if level is None or r["ci_low"] is None:
            adj.append(None)
            continue
        est = r["estimate"]
        what = []
        if info["se_cluster"] is not None and info["G"] and info["G"] >= 2:
            q = t_quantile(level, info["G"] - 1)
            lo_c = max(0.0, est - q * info["se_cluster"])
            hi_c = min(1.0, est + q * info["se_cluster"])
            if lo_c < r["ci_low"] or hi_c > r["ci_high"]:
                what.append(f"clusters ({info['G']}, CR2 hull, t_{info['G'] - 1})")
            r["ci_low"], r["ci_high"] = min(r["ci_low"], lo_c), max(r["ci_high"], hi_c)
        if v_run and info["adjust"]:
            r["ci_low"], r["ci_high"] = widen(est, r["ci_low"], r["ci_high"], v_run, info["df_run"], level)
            if r["rerun_ci_low"] is not None:
                r["rerun_ci_low"], r["rerun_ci_high"] = widen(est, r["rerun_ci_low"], r["rerun_ci_high"], v_run,
                                                              info["df_run"], level)  # fmt: skip
            what.append(f"run variance ({info['df_run'] + 1} passes, t_{info['df_run']})")
        adj.append("; ".join(what) if what else None)
    out = pl.DataFrame(rows, schema=long.schema) if rows else long
    return out.with_columns(pl.Series("se_run", se_run, dtype=pl.Float64),
                            pl.Series("se_cluster", se_cl, dtype=pl.Float64),
                            pl.Series("adjusted_for", adj, dtype=pl.String))


def summary_notes(groups: pl.DataFrame, by: tuple[str, ...], alpha: float = 0.05) -> list[str]:
    """The run-effect lines of a summary table: the groups whose passes differ (p < ``alpha``), with σ̂_run."""
    if "run_effect_p" not in groups.columns:
        return []
    hit = groups.filter(pl.col("run_effect_p") < alpha)
    tested = int(groups["run_effect_p"].is_not_null().sum())
    if not tested:
        return []
    line = (f"run effect (Cochran's Q over task × pass, a pass = one trial index of one run): tested in {tested} "
            f"group(s); intervals include the run-level variance σ̂²_run where it is > 0 (adjusted_for says so)")
    if hit.height:
        parts = [(" · ".join(str(r[c]) for c in by) if by else "all")
                 + f" p={r['run_effect_p']:.2g}, σ̂_run={math.sqrt(r['run_var']):.3f}" for r in
                 hit.iter_rows(named=True)]  # fmt: skip
        line += f"; passes differ (p < {alpha:g}): " + "; ".join(parts[:8]) + (" …" if len(parts) > 8 else "")
    return [line]


def comparison_dependence(row: dict[str, Any], tasks: pl.DataFrame, k: int, re_a: RunEffect | None,
                          re_b: RunEffect | None, cmap: dict[tuple, Any] | None, cluster: str | None,
                          level: float, adjust: bool = True) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
    """The comparison row with :data:`PAIR_SCHEMA` and, where a run variance or a cluster applies, the headline
    ``p_value`` / ``ci_low`` / ``ci_high`` from the adjusted t test (see the module notes); and its notes."""
    notes: list[str] = []
    out = dict(row)
    a_re = re_a or NOT_IDENTIFIED
    b_re = re_b or NOT_IDENTIFIED
    out.update({"n_passes_a": a_re.n_passes if re_a else None, "n_passes_b": b_re.n_passes if re_b else None,
                "run_effect_p_a": a_re.p_value, "run_effect_p_b": b_re.p_value, "run_var_a": a_re.var,
                "run_var_b": b_re.var, "se_run": None, "n_clusters": None, "se_cluster": None, "df": None,
                "adjusted_for": None})  # fmt: skip
    T = tasks.height
    if T == 0:
        return out, notes
    if (re_a and a_re.n_passes < 2) or (re_b and b_re.n_passes < 2):
        notes.append(RUN_NOTE_ONE_PASS.format(what="agent difference"))
    d = tasks["d"].to_numpy()
    na, nb = tasks["n_a"].to_numpy(), tasks["n_b"].to_numpy()
    va = run_variance(a_re, k, _theta(na, tasks["c_a"].to_numpy(), k))
    vb = run_variance(b_re, k, _theta(nb, tasks["c_b"].to_numpy(), k))
    out["se_run"] = math.sqrt(va + vb) if (a_re.identifiable or b_re.identifiable) else None
    if not adjust:
        va = vb = 0.0
    parts: list[tuple[float, float]] = []
    label = []
    if cluster:
        labels = [(cmap or {}).get((dm, t), ("\x00task", dm, t)) for dm, t in zip(tasks["domain"].to_list(),
                                                                                   tasks["task_id"].to_list())]  # fmt: skip
        V, G = cluster_variance(d, labels)
        out["n_clusters"] = G
        if G >= 2 and np.isfinite(V) and V > 0:
            out["se_cluster"] = math.sqrt(V)
            parts.append((V, G - 1))
            label.append(f"clusters ({G}, CR2, t_{G - 1})")
        elif G >= 2 and V == 0:  # a zero-width CR2 t interval: the task-level test stands, and says so
            out["se_cluster"] = 0.0
            msg = (f"cluster={cluster!r}: the cluster-robust variance is 0 (every cluster's mean difference the "
                   "same); the task-level test is kept")  # fmt: skip
            warnings.warn(msg, StatsWarning, stacklevel=4)
            notes.append(msg)
        else:
            msg = f"cluster={cluster!r}: fewer than 2 clusters among the shared tasks; the task-level test is kept"
            warnings.warn(msg, StatsWarning, stacklevel=4)
            notes.append(msg)
    if va + vb > 0:
        if not parts:
            parts.append((float(np.var(d, ddof=1)) / T if T > 1 else 0.0, T - 1))
        if va > 0:
            parts.append((va, a_re.n_passes - 1))
        if vb > 0:
            parts.append((vb, b_re.n_passes - 1))
        label.append(f"run variance (passes {a_re.n_passes}/{b_re.n_passes}, t_(R−1) each)")
    if not parts or sum(v for v, _ in parts) <= 0:
        return out, notes
    lo, hi, p, nu = satterthwaite(float(np.mean(d)), parts, level)
    if not np.isfinite(p):
        return out, notes
    # never narrower than the task-level test: the hull of its interval and the adjusted one, the larger p (where
    # the run variance estimate is small the adjusted t alone can be narrower than the score interval at k = n)
    lo0, hi0, p0 = row.get("ci_low"), row.get("ci_high"), row.get("p_value")
    if lo0 is not None and hi0 is not None and np.isfinite(lo0) and np.isfinite(hi0):
        lo, hi = min(lo, lo0), max(hi, hi0)
    if p0 is not None and np.isfinite(p0):
        p = max(p, p0)
    out.update({"ci_low": lo, "ci_high": hi, "p_value": p, "df": nu, "adjusted_for": "; ".join(label)})
    if "interval_excludes_0" in out:  # each test's p is the α where its interval reaches 0, so the hull and the
        out["interval_excludes_0"] = bool(lo > 0 or hi < 0)  # larger p agree
        out["p_below_alpha"] = bool(p < 1.0 - level)
    return out, notes


__all__ += ["summary_notes", "FAMILY", "RUN_EFFECTS", "COUNTS_NOTE", "check_run_effects"]

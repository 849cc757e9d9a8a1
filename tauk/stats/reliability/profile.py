"""The reliability profile: how consistently an agent does the same thing when a task is run again.

Per group (default: agent × domain; setups are never pooled silently) and per task t with n_t kept trials:

**Outcome consistency** — how predictable a task's outcome is: (2p_t − 1)², 1 when the task always or never
succeeds, 0 at a coin flip. Estimated per task by the U-statistic 1 − 4c_t(n_t − c_t)/(n_t(n_t − 1)), unbiased
for (2p_t − 1)² at every n_t ≥ 2, then averaged over the tasks. HAL's reliability profile (Rabanser, Kapoor et al.
2026) reports the plug-in (2ĉ_t/n_t − 1)², whose expectation is (2p_t − 1)² + 4p_t(1 − p_t)/n_t: it is shown beside
(``outcome_consistency_plugin``) to compare with published numbers, never as the estimate — two agents run with
different numbers of trials are not comparable through it.

**Resource consistency** — the coefficient of variation across a task's trials of cost (agent + user), duration,
turns (messages that are not tool results: ``n_messages − n_tool_calls``) and tool calls: (s_t/c4(n_t))/ȳ_t, the SD
corrected by c4 so that it does not shrink with n_t, averaged over tasks (lower = more consistent).

**Trajectory consistency** of successful trials — among the successful trials of a task (≥ 2 of them), the mean
over their *pairs* of the Jensen–Shannon divergence (base 2) between the tool-name distributions and of the
normalised edit similarity 1 − Levenshtein/max length of the tool-call sequences; averaged over tasks.

Every figure is a mean over tasks of a per-task value whose expectation does not depend on the number of trials, and
its interval is the task-level t interval (tasks are the sampling unit; it covers the mean over a population of
tasks, ``benchmarks/reliability_calibration.py``); outcome consistency's is shifted by Johnson's skewness correction
(:func:`~tauk.stats.reliability.estimators.skew_t_interval`), or with 2 trials a task the Wilson interval of the share
of tasks whose trials disagree.

Examples
--------
>>> import tauk, polars as pl
>>> prof = tauk.stats.reliability(tauk.load("data"))
>>> prof.to_frame().select("agent", "domain", pl.col("outcome_consistency", "outcome_consistency_plugin").round(3)
...                        ).head(2).rows()
[('atlas-large', 'airline', 0.307, 0.48), ('atlas-large', 'retail', 0.533, 0.65)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import sparse

from tauk.conventions import CI_LEVEL, INFRA, success_expr
from tauk.errors import TaukError, check_columns
from tauk.table import Interval, SummaryTable

from ..tasks import normalize_by, resolve_by
from .estimators import (
    c4,
    edit_similarity_padded,
    outcome_plugin,
    outcome_u,
    skew_t_interval,
    t_interval,
    wilson_outcome_interval,
)

__all__ = ["METRICS", "RESOURCES", "ReliabilityProfile", "reliability"]

RESOURCES = {"cost": "cost (agent + user)", "duration": "duration (s)", "turns": "turns", "tool_calls": "tool calls"}
"""Resource columns of the profile → what they measure."""

METRICS = (
    ("outcome_consistency", "outcome consistency (U)"),
    ("outcome_consistency_plugin", "outcome, HAL plug-in (biased)"),
    *((f"cv_{r}", f"CV {label}") for r, label in RESOURCES.items()),
    ("trajectory_jsd", "tool-name JSD (successes)"),
    ("trajectory_edit_similarity", "edit similarity (successes)"),
)
"""Every metric of the profile, in order, with its label."""

_TRIAL_COLS = ("run_id", "simulation_id", "task_id", "agent", "domain", "setup", "reward", "is_infra_error",
               "agent_cost", "user_cost", "duration", "n_messages", "n_tool_calls")  # fmt: skip


def _trials(data: Any) -> pl.DataFrame:
    if isinstance(data, pl.DataFrame):
        return data
    pick = getattr(data, "trials_columns", None)
    if callable(pick):
        return pick(_TRIAL_COLS)
    tr = data.get("trials") if isinstance(data, Mapping) else getattr(data, "trials", None)
    if not isinstance(tr, pl.DataFrame):
        raise TaukError(f"reliability: give a trials frame or a tauk.Results, not {type(data).__name__}")
    return tr


def _tool_calls(data: Any, sims: pl.DataFrame) -> pl.DataFrame | None:
    """``run_id, simulation_id, call_idx, name`` of the given simulations, read as narrowly as the source allows."""
    cols = ["run_id", "simulation_id", "call_idx", "name"]
    scan = getattr(data, "scan", None)
    if callable(scan):
        lf = scan("tool_calls").select(cols)
        return lf.join(sims.lazy(), on=["run_id", "simulation_id"], how="semi").collect()
    tc = data.get("tool_calls") if isinstance(data, Mapping) else getattr(data, "tool_calls", None)
    if not isinstance(tc, pl.DataFrame):
        return None
    return tc.select(cols).join(sims, on=["run_id", "simulation_id"], how="semi")


@dataclass(frozen=True)
class ReliabilityProfile:
    """The reliability profile of each group (see :func:`reliability`).

    ``groups``: one row per group — ``n_tasks``, ``trials_min`` / ``trials_max`` / ``trials_mean`` and, for every
    metric of :data:`METRICS`, the estimate, ``_se``, ``_low``, ``_high`` (task-level t interval at ``ci``) and
    ``_tasks`` (the tasks it averages). ``tasks``: one row per (group, task) with each per-task value.
    """

    groups: pl.DataFrame
    tasks: pl.DataFrame
    by: tuple[str, ...]
    ci: float
    infra: str
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pl.DataFrame:
        """One row per group."""
        return self.groups.clone()

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready rows (NaN → None)."""
        return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
                for r in self.groups.iter_rows(named=True)]  # fmt: skip

    def summary(self, metrics: Sequence[str] | None = None) -> SummaryTable:
        """One row per group and metric: estimate [interval] and the tasks it rests on (text / HTML / LaTeX /
        Markdown / CSV through :class:`tauk.table.SummaryTable`)."""
        names = [m for m, _ in METRICS] if metrics is None else list(metrics)
        unknown = set(names) - {m for m, _ in METRICS}
        if unknown:
            raise TaukError(f"reliability summary: unknown metric(s) {sorted(unknown)}; choose from "
                            f"{[m for m, _ in METRICS]}")  # fmt: skip
        labels = dict(METRICS)
        rows = []
        for r in self.groups.iter_rows(named=True):
            for m in names:
                rows.append([*(r[k] for k in self.by), labels[m], Interval(r[m], r[f"{m}_low"], r[f"{m}_high"]),
                             r[f"{m}_tasks"]])  # fmt: skip
        pct = f"{round(self.ci * 100, 6):g} %"
        notes = (
            f"intervals: task-level t interval at {pct} over the per-task values (tasks are the sampling unit); "
            "outcome consistency: the t interval shifted by Johnson's skewness correction m3/(6 s^2 T); with 2 trials "
            "a task: the Wilson interval of the share of tasks whose trials disagree",
            "outcome consistency: mean over tasks with >= 2 kept trials of 1 - 4c(n-c)/(n(n-1)), unbiased for "
            "(2p-1)^2 at any number of trials; the HAL plug-in is shown for comparison with published numbers only",
            "CV: (s/c4(n))/mean per task (lower = more consistent); cost = agent + user cost; turns = messages that "
            "are not tool results",
            "JSD: Jensen-Shannon divergence (base 2) of tool-name distributions; edit similarity: 1 - Levenshtein / "
            "max length of tool-call sequences",
            "trajectory: tasks with >= 2 successful trials; mean over pairs of those trials",
            f"infrastructure errors: {self.infra}",
            *self.notes,
            *self._interval_notes(names),
        )
        return SummaryTable.build("Reliability profile", [*self.by, "metric", "estimate [interval]", "tasks"],
                                  rows, notes, digits=3, fields=[*self.by, "metric", "estimate", "tasks"],
                                  keys=len(self.by) + 1)  # fmt: skip

    def _interval_notes(self, names: Sequence[str]) -> list[str]:
        """Rows whose interval is a point (every task the same value: a t interval of zero width, which states no
        uncertainty about the tasks not run) or missing beside an estimate (one task), named."""
        labels = dict(METRICS)
        point, single = [], []
        for r in self.groups.iter_rows(named=True):
            who = " · ".join(str(r[k]) for k in self.by) or "all"
            for m in names:
                est, lo, hi = r[m], r[f"{m}_low"], r[f"{m}_high"]
                if est is None:
                    continue
                if lo is None or hi is None:
                    single.append(f"{who} {labels[m]}")
                elif lo == hi:
                    point.append(f"{who} {labels[m]}")
        out = []
        if point:
            out.append(f"zero-width interval (every task the same value, so the task-level interval is the point; it "
                       f"says nothing of tasks not run): {'; '.join(point)}")  # fmt: skip
        if single:
            out.append(f"no interval (fewer than 2 tasks with a value): {'; '.join(single)}")
        return out

    def __repr__(self) -> str:
        return f"ReliabilityProfile({self.groups.height} groups, by={self.by})"

    def _repr_html_(self) -> str:
        return self.summary().to_html()


def _task_values(tr: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per (group, task): n, c, the outcome values and the resource CVs."""
    res = {
        "cost": pl.col("agent_cost").fill_null(0.0) + pl.col("user_cost").fill_null(0.0)
        if {"agent_cost", "user_cost"} <= set(tr.columns) else pl.col("agent_cost") if "agent_cost" in tr.columns
        else pl.lit(None, pl.Float64),
        "duration": pl.col("duration") if "duration" in tr.columns else pl.lit(None, pl.Float64),
        "turns": (pl.col("n_messages") - pl.col("n_tool_calls")).cast(pl.Float64)
        if {"n_messages", "n_tool_calls"} <= set(tr.columns) else pl.lit(None, pl.Float64),
        "tool_calls": pl.col("n_tool_calls").cast(pl.Float64) if "n_tool_calls" in tr.columns
        else pl.lit(None, pl.Float64),
    }  # fmt: skip
    if {"agent_cost", "user_cost"} <= set(tr.columns):  # no cost recorded at all: null, not 0
        res["cost"] = pl.when(pl.col("agent_cost").is_null() & pl.col("user_cost").is_null()).then(None).otherwise(
            res["cost"])  # fmt: skip
    agg = tr.with_columns(**{f"_r_{k}": v.cast(pl.Float64) for k, v in res.items()}).group_by(keys).agg(
        pl.len().alias("n"), pl.col("_success").sum().alias("c"),
        *[e for k in RESOURCES for e in (pl.col(f"_r_{k}").count().alias(f"_n_{k}"),
                                         pl.col(f"_r_{k}").mean().alias(f"_m_{k}"),
                                         pl.col(f"_r_{k}").std(ddof=1).alias(f"_s_{k}"))],
    )  # fmt: skip
    n, c = agg["n"].to_numpy(), agg["c"].to_numpy()
    cols = {"outcome_consistency": outcome_u(n, c), "outcome_consistency_plugin": outcome_plugin(n, c)}
    cols["outcome_consistency_plugin"] = np.where(n >= 2, cols["outcome_consistency_plugin"], np.nan)
    for k in RESOURCES:
        nk = agg[f"_n_{k}"].to_numpy().astype(np.float64)
        m = agg[f"_m_{k}"].fill_null(np.nan).to_numpy()
        s = agg[f"_s_{k}"].fill_null(np.nan).to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            cv = np.where((nk >= 2) & (m > 0), s / c4(nk) / m, np.where((nk >= 2) & (m == 0) & (s == 0), 0.0, np.nan))
        cols[f"cv_{k}"] = cv
    return agg.select(*keys, "n", "c").with_columns(
        **{k: pl.Series(k, v, dtype=pl.Float64) for k, v in cols.items()})  # fmt: skip


def _trajectory_values(tr: pl.DataFrame, calls: pl.DataFrame | None, keys: list[str]) -> pl.DataFrame:
    """Per (group, task) with ≥ 2 successful trials: the mean pairwise JSD and edit similarity."""
    schema = {**{k: tr.schema[k] for k in keys}, "n_success": pl.UInt32, "trajectory_jsd": pl.Float64,
              "trajectory_edit_similarity": pl.Float64}  # fmt: skip
    if calls is None:
        return pl.DataFrame(schema=schema)
    ok = tr.filter(pl.col("_success")).select(*keys, "run_id", "simulation_id").with_columns(
        n_success=pl.len().over(keys)).filter(pl.col("n_success") >= 2)  # fmt: skip
    if ok.height == 0:
        return pl.DataFrame(schema=schema)
    ok = ok.with_row_index("_i")
    # every order fixed (codes, pairs, counts): the float sums below are then the same on every call
    codes = calls.select("name").unique().sort("name", nulls_last=True).with_row_index("_code")
    seq = (
        calls.join(ok.select("run_id", "simulation_id", "_i"), on=["run_id", "simulation_id"], how="inner")
        .join(codes, on="name", how="left", nulls_equal=True)
        .sort("_i", "call_idx")
    )
    # pairs of successful trials of one task (i < j)
    grp = ok.select("_i", *keys)
    pairs = grp.join(grp, on=keys, how="inner", suffix="_b", nulls_equal=True).filter(pl.col("_i") < pl.col("_i_b"))
    pairs = pairs.select(*keys, _a="_i", _b="_i_b").sort("_a", "_b").with_row_index("_p")
    # Jensen-Shannon divergence (base 2) of the two tool-name distributions: each trial's distribution a sparse row
    # over the tool codes, H(M) − (H(A) + H(B))/2 with scipy.sparse, a chunk of pairs at a time
    dist = seq.group_by("_i", "_code").agg(_k=pl.len()).sort("_i", "_code", nulls_last=True)
    n_codes = codes.height + 1  # a null name gets the last code
    rows = dist["_i"].to_numpy().astype(np.int64)
    k = dist["_k"].to_numpy().astype(np.float64)
    tot = np.bincount(rows, weights=k, minlength=ok.height)
    q = k / tot[rows]
    P = sparse.csr_matrix((q, (rows, dist["_code"].cast(pl.Int64).fill_null(n_codes - 1).to_numpy())),
                          shape=(ok.height, n_codes))  # fmt: skip
    h = np.bincount(rows, weights=-q * np.log2(q), minlength=ok.height)
    ia, ib = pairs["_a"].to_numpy(), pairs["_b"].to_numpy()
    jsd = np.empty(ia.size, dtype=np.float64)
    step = 1 << 18
    for s0 in range(0, ia.size, step):
        a, b = ia[s0:s0 + step], ib[s0:s0 + step]
        m = ((P[a] + P[b]) * 0.5).tocsr()
        m.data = -m.data * np.log2(m.data)
        jsd[s0:s0 + step] = np.asarray(m.sum(axis=1)).ravel() - (h[a] + h[b]) / 2
    jsd = np.clip(jsd, 0.0, 1.0)
    # two trials without any tool call have the same (empty) distribution; one empty and one not: maximal
    ea, eb = tot[ia] == 0, tot[ib] == 0
    jsd = np.where(ea & eb, 0.0, np.where(ea | eb, 1.0, jsd))
    j = pairs.with_columns(_jsd=pl.Series(jsd)).sort("_p")
    # every successful trial's tool-call sequence as a padded row of integer codes (row = _i)
    seq = seq.with_columns(_pos=pl.int_range(pl.len()).over("_i"))
    width = int(seq["_pos"].max() or 0) + 1
    mat = np.full((ok.height, width), -1, dtype=np.int64)
    mat[seq["_i"].to_numpy(), seq["_pos"].to_numpy()] = seq["_code"].cast(pl.Int64).fill_null(-3).to_numpy()
    lens = np.zeros(ok.height, dtype=np.int64)
    cnt = seq.group_by("_i").len()
    lens[cnt["_i"].to_numpy()] = cnt["len"].to_numpy()
    ia, ib = j["_a"].to_numpy(), j["_b"].to_numpy()
    pb = mat[ib]
    pb[pb == -1] = -2  # the two paddings must differ
    j = j.with_columns(_sim=pl.Series(edit_similarity_padded(mat[ia], lens[ia], pb, lens[ib])))
    out = j.group_by(keys).agg(trajectory_jsd=pl.col("_jsd").mean(),
                               trajectory_edit_similarity=pl.col("_sim").mean())  # fmt: skip
    n_ok = ok.group_by(keys).agg(n_success=pl.len())
    return n_ok.join(out, on=keys, how="left", nulls_equal=True).select(list(schema))


def reliability(
    data: Any,
    *,
    by: Sequence[str] = ("agent", "domain"),
    ci: float = CI_LEVEL,
    infra: str = INFRA,
    reward: str = "reward",
    pool_setups: bool = False,
    trajectory: bool = True,
) -> ReliabilityProfile:
    """The reliability profile of each group: outcome, resource and trajectory consistency with task-level intervals.

    Parameters
    ----------
    data
        A :class:`tauk.Results` (a store too: only the trial columns and the tool names of successful trials are
        read) or a trials frame (then no trajectory consistency).
    by
        Trial columns that define a group (``setup`` is added when a group spans several).
    ci
        Interval level.
    infra
        ``"drop"`` (infrastructure errors are not trials) or ``"fail"`` (they count as failures).
    reward
        The reward column (e.g. ``"score_reward"`` of :func:`tauk.score`).
    pool_setups
        Pool groups that span several setups.
    trajectory
        Compute trajectory consistency (reads the tool calls of successful trials).

    Returns
    -------
    ReliabilityProfile
    """
    if infra not in ("drop", "fail"):
        raise TaukError(f"infra= takes 'drop' or 'fail', not {infra!r}")
    if not 0 < ci < 1:
        raise TaukError(f"ci= takes a level in (0, 1), not {ci!r}")
    tr = _trials(data)
    by = normalize_by(by)
    check_columns(by, tr.columns)
    missing = [c for c in ("task_id", reward) if c not in tr.columns]
    if missing:
        raise TaukError(f"reliability: the trials have no column(s) {missing}")
    infra_col = pl.col("is_infra_error").fill_null(False) if "is_infra_error" in tr.columns else pl.lit(False)
    if infra == "drop":
        tr = tr.filter(~infra_col)
    tr = tr.with_columns(_success=(success_expr(reward) & ~infra_col).fill_null(False))
    by = resolve_by(tr, by, pool_setups) if "setup" in tr.columns else by
    keys = [*by, "task_id"]
    tv = _task_values(tr, keys)
    notes: list[str] = []
    if {"agent_cost", "user_cost"} <= set(tr.columns):  # the cost CV adds the two; without an agent cost it is the user's
        user_only = tr.group_by(list(by), maintain_order=True).agg(
            a=pl.col("agent_cost").is_not_null().any(), u=pl.col("user_cost").is_not_null().any()
        ).filter(~pl.col("a") & pl.col("u"))  # fmt: skip
        if user_only.height:
            names = ("; ".join(" · ".join(str(v) for v in r) for r in user_only.select(list(by)).iter_rows()) if by
                     else "all")  # no by: one group, the whole frame
            notes.append(f"CV cost: no agent cost recorded for {names} (e.g. τ-bench lists): the user simulator's "
                         "cost alone")  # fmt: skip
    calls = None
    if trajectory and not isinstance(data, pl.DataFrame) and {"run_id", "simulation_id"} <= set(tr.columns):
        ok = tr.filter(pl.col("_success")).select("run_id", "simulation_id")
        calls = _tool_calls(data, ok)
    if calls is None:
        notes.append("trajectory consistency: no tool calls given (a trials frame), not computed")
    traj = _trajectory_values(tr, calls, keys)
    # in task order: the per-task values are summed in one order on every call (a hash group_by's order is not
    # fixed, and the interval's float sums differed in the last bits between two calls on the same trials)
    tv = (tv.join(traj, on=keys, how="left", nulls_equal=True).with_columns(pl.col("n_success").fill_null(0))
          .sort(keys, nulls_last=True))  # fmt: skip
    rows = []
    for key, g in tv.group_by(list(by), maintain_order=True):
        row: dict[str, Any] = dict(zip(by, key))
        n = g["n"].to_numpy()
        row.update(n_tasks=g.height, trials_min=int(n.min()), trials_max=int(n.max()), trials_mean=float(n.mean()))
        two = bool(((n == 2) | (n < 2)).all() and (n == 2).any())
        for m, _ in METRICS:
            values = g[m].fill_null(np.nan).to_numpy()
            if m == "outcome_consistency" and two:
                est, se, lo, hi, T = wilson_outcome_interval(values, ci)
            elif m == "outcome_consistency":
                est, se, lo, hi, T = skew_t_interval(values, ci)
            else:
                est, se, lo, hi, T = t_interval(values, ci)
            row.update({m: est, f"{m}_se": se, f"{m}_low": lo, f"{m}_high": hi, f"{m}_tasks": T})
        rows.append(row)
    groups = pl.DataFrame(rows, infer_schema_length=None).sort(list(by)) if rows else pl.DataFrame()
    groups = groups.with_columns(pl.col(pl.Float64).fill_nan(None))  # not computed: null, as records() says
    return ReliabilityProfile(groups, tv.sort(keys), by, ci, infra, tuple(notes))

"""Upstream metrics per group (τ²-bench ``compute_metrics`` / τ-bench ``display_metrics``), plus uncertainty:
:func:`summarize` and its :class:`Summary`.

Trials of different setups are never pooled into one pass^k (:func:`~tauk.stats.tasks.resolve_by`); the one figure
per agent a leaderboard wants is :func:`tauk.stats.overall` (:mod:`tauk.stats.setup_mean`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk._compat import keyword_options
from tauk.conventions import (
    CI_LEVEL,
    CI_METHOD,
    INFRA,
    MIN_COVERAGE,
    MIN_SIMULATIONS,
    MIN_TASKS,
    RESAMPLES,
    SEED,
    small_reason,
)
from tauk.scoring.counters import COUNTER_COLUMNS, head_counters
from tauk.table import Interval, SummaryTable

from .dependence.adjust import K_FIELDS as DEP_K_FIELDS
from .dependence.adjust import check_run_effects, summary_dependence, summary_notes
from .estimate import (
    ESTIMATE_FIELDS,
    LONG_SCHEMA,
    estimate_group,
    group_models_for,
    long_frame,
    resolve_ks,
    warn_excluded,
)
from .intervals.group import interval_notes
from .missing import (
    BOUND_FIELDS,
    add_missing,
    check_min_coverage,
    coverage_notes,
    model_with_bounds,
    planned_tasks,
    stacks_bounds,
)
from .options import IntervalOptions, interval_options
from .substantive import SUBSTANTIVE_FIELDS, substantive_figures, substantive_notes, substantive_plan
from .tasks import (
    SETUP_NOTE,
    as_trials,
    is_task_counts,
    kept_expr,
    normalize_by,
    normalize_k,
    pooling_notes,
    prepare_trials,
    resolve_by,
    task_groups,
)

__all__ = ["Summary", "summarize"]

GROUP_SCHEMA = {
    "agent": pl.String,
    "domain": pl.String,
    "n_simulations": pl.Int64,
    "n_tasks": pl.Int64,
    "n_tasks_no_kept": pl.Int64,
    "infra_error_count": pl.Int64,
    "avg_reward": pl.Float64,
    "avg_agent_cost": pl.Float64,
    "n_evaluated": pl.Int64,
    "rewards": pl.String,
}


@dataclass(frozen=True)
class Summary:
    """Per-group upstream metrics (immutable; from :func:`summarize`).

    ``groups``: one row per group — group keys, agent, domain (the group's unique value, null if mixed),
    n_simulations (kept), n_tasks (with ≥ 1 kept trial), n_tasks_no_kept (tasks every trial of which was dropped),
    infra_error_count (always, whatever ``infra``), avg_reward (mean non-null reward over kept simulations),
    avg_agent_cost (mean non-null agent_cost; null if none), n_evaluated (kept simulations with a reward) and rewards
    (``"binary"``; ``"fractional"`` when some reward is neither 0 nor 1 — pass^k then counts only the rewards of 1,
    as the upstream does, and says so; ``"none"`` when no simulation was evaluated: pass^k is null, not 0).
    ``pass_hat_k``: long frame — group keys, k, n_tasks, n_tasks_excluded, estimate, se_tasks, se_rerun, ci_low,
    ci_high, rerun_ci_low, rerun_ci_high, interval_method, rerun_interval_method, model_check_p, model_check_passed
    (as :class:`~tauk.stats.PassKResult`'s frame), and the point estimate under the other infrastructure convention:
    ``estimate_infra_fail`` (with ``infra="drop"``: infrastructure errors counted as failed trials, the leaderboard's
    older convention) or ``estimate_infra_drop`` (with ``infra="fail"``) — equal to ``estimate`` where a group has
    no infrastructure error (per-task counts carry their infrastructure errors, so they give it too).
    ``counters``: upstream HEAD's metric counters per group (:func:`tauk.scoring.counters.head_counters`: DB match /
    mismatch / not checked, authentication, terminations by reason, read and write action accuracy,
    responsiveness, review errors) with their denominator ``n_counted`` (the simulations counted: infrastructure
    errors excluded); None for per-task counts.
    Dropped and missing trials (:mod:`tauk.stats.missing`): ``groups`` also has n_planned, n_dropped,
    trial_coverage (kept / planned trials), low_coverage (below ``min_coverage``) and rankable (not flagged);
    ``pass_hat_k`` has estimate_dropped_fail / _success with ci_low_… / ci_high_… (pass^k and its interval with
    every dropped trial a failure / a success; the estimate and its interval where nothing was dropped).
    Task validity (:mod:`tauk.stats.substantive`): ``groups`` gains ``n_tasks_inaction_passable``,
    ``n_tasks_inaction_unknown``, ``n_tasks_substantive``, ``share_successes_inaction_passable`` and
    ``task_definitions``; ``pass_hat_k`` the ``substantive_*`` columns (pass^k on the tasks a do-nothing agent fails,
    with its own interval; null where the runs embed no task definitions).
    Run effects and task families (:mod:`tauk.stats.dependence`): ``groups`` also has ``n_passes``,
    ``run_effect_q``, ``run_effect_p``, ``run_var`` and ``n_clusters`` (with ``cluster=``); ``pass_hat_k`` has
    ``se_run``, ``se_cluster`` and ``adjusted_for`` (what the intervals were widened for; null: nothing).
    """

    by: tuple[str, ...]
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    groups: pl.DataFrame
    pass_hat_k: pl.DataFrame
    reward: str = "reward"
    split_by_setup: bool = False  # ``setup`` was added to the grouping (groups spanned several setups)
    counters: pl.DataFrame | None = None  # upstream HEAD's counters per group (tauk.scoring.counters.head_counters)
    pooling: tuple[str, ...] = ()  # pool_setups=True: what each pooled group pooled over; and a group whose agent
    # (or domain) cell is empty because it holds several: which ones
    min_coverage: float = MIN_COVERAGE  # below this trial coverage a group is flagged and not ranked
    cluster: str | None = None  # cluster=: the column (or "family") whose clusters the intervals are robust to
    dependence_notes: tuple[str, ...] = ()  # run effects / clusters (tauk.stats.dependence)

    @property
    def options(self) -> IntervalOptions:
        """The interval options the summary was made with."""
        return IntervalOptions(self.ci, self.method, self.resamples, self.seed)

    def to_frame(self) -> pl.DataFrame:
        """One row per group; pass^k nested as ``pass_hat_k``: list of structs {k, n_tasks, estimate, …,
        substantive_estimate, …, estimate_dropped_fail, …, se_run, …}."""
        fields = [*LONG_SCHEMA, *(c for c in self.pass_hat_k.columns if c.startswith("substantive_")),
                  *(f for f in BOUND_FIELDS if f in self.pass_hat_k.columns),
                  *(c for c in DEP_K_FIELDS if c in self.pass_hat_k.columns)]
        if not self.by:
            nested = self.pass_hat_k.select(pl.struct(fields).implode().alias("pass_hat_k"))
            if self.groups.height == 0:
                return self.groups.with_columns(pl.lit(None).alias("pass_hat_k"))
            return pl.concat([self.groups, nested], how="horizontal")
        nested = self.pass_hat_k.group_by(list(self.by), maintain_order=True).agg(
            pl.struct(fields).alias("pass_hat_k")
        )
        return self.groups.join(nested, on=list(self.by), how="left", nulls_equal=True, maintain_order="left")

    def long(self) -> pl.DataFrame:
        """pass^k in long form joined to the group columns."""
        if not self.by:
            return self.pass_hat_k
        return self.groups.join(self.pass_hat_k, on=list(self.by), how="inner", nulls_equal=True, maintain_order="left")

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready dicts (``tauk summary --format json``): group keys, group metrics and
        ``pass_hat_k: {"1": {"estimate", "ci_low", "ci_high", "se_tasks", "se_rerun", "rerun_ci_low", "rerun_ci_high",
        "interval_method", "rerun_interval_method", "model_check_p", "model_check_passed", "substantive": {"n_tasks",
        "estimate", "ci_low", …}}, …}`` (null where undefined; the substantive tasks: :mod:`tauk.stats.substantive`,
        whose counts and share are group metrics)."""
        by = list(self.by)
        per: dict[tuple, dict[str, Any]] = {}
        other = self.other_infra_column
        for r in self.pass_hat_k.iter_rows(named=True):
            fields = (*ESTIMATE_FIELDS, other, *BOUND_FIELDS, *(f for f in DEP_K_FIELDS if f in r))
            per.setdefault(tuple(r[c] for c in by), {})[str(r["k"])] = {f: r.get(f) for f in fields}
            if "substantive_estimate" in r:
                per[tuple(r[c] for c in by)][str(r["k"])]["substantive"] = {f: r[f"substantive_{f}"]
                                                                            for f in SUBSTANTIVE_FIELDS}  # fmt: skip
        counted: dict[tuple, dict[str, Any]] = {}
        if self.counters is not None:
            for r in self.counters.iter_rows(named=True):
                counted[tuple(r[c] for c in by)] = {c: v for c, v in r.items() if c not in by}
        out = []
        for g in self.groups.iter_rows(named=True):
            rec = dict(g)
            key = tuple(g[c] for c in by)
            rec["pass_hat_k"] = per.get(key, {})
            if self.counters is not None:
                rec["counters"] = counted.get(key)
            out.append(rec)
        return out

    @property
    def other_infra_column(self) -> str:
        """The ``pass_hat_k`` column with the estimate under the other infrastructure convention."""
        return "estimate_infra_fail" if self.infra == "drop" else "estimate_infra_drop"

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): one row per group with its n (sims, tasks), one ``pass^k`` column per k
        with its interval, and a ``flag`` column when a row is under :data:`~tauk.conventions.MIN_SIMULATIONS`
        simulations or :data:`~tauk.conventions.MIN_TASKS` tasks."""
        ks = sorted(set(self.pass_hat_k["k"].to_list())) if self.pass_hat_k.height else []
        labels = [c for c in ("agent", "domain") if c not in self.by]
        cols = [*self.by, *labels, "sims", "tasks", "infra", "avg_reward", "avg_cost"] + [f"pass^{k}" for k in ks]
        fields = [*self.by, *labels, "n_simulations", "n_tasks", "infra_error_count", "avg_reward", "avg_agent_cost"]
        fields += [f"pass_hat_{k}" for k in ks]
        dropped = "n_dropped" in self.groups.columns and bool(self.groups["n_dropped"].fill_null(0).sum())
        if dropped:  # kept / planned, and pass^k's bounds with the dropped trials failed / succeeded
            cols += ["kept/planned"] + [f"pass^{k} if dropped={s}" for k in ks for s in ("fail", "success")]
            fields += ["trial_coverage"] + [f"pass_hat_{k}_dropped_{s}" for k in ks for s in ("fail", "success")]
        sub = "task_definitions" in self.groups.columns  # the substantive figures (tauk.stats.substantive)
        if sub:
            cols += ["inaction-passable", *(f"substantive pass^{k}" for k in ks), "successes on inaction-passable"]
            fields += ["n_tasks_inaction_passable", *(f"substantive_pass_hat_{k}" for k in ks),
                       "share_successes_inaction_passable"]  # fmt: skip
        rows = []
        for r in self.records():
            cells: list[Any] = [r[c] for c in self.by]
            cells += [r[c] for c in labels]
            cells += [r["n_simulations"], r["n_tasks"], r["infra_error_count"], r["avg_reward"], r["avg_agent_cost"]]
            for k in ks:
                v = r["pass_hat_k"].get(str(k)) or {}
                cells.append(Interval(v.get("estimate"), v.get("ci_low"), v.get("ci_high")))
            if dropped:
                cov = r.get("trial_coverage")
                cells.append(None if cov is None else f"{cov:.2f}" + (" ⚠ low" if r.get("low_coverage") else ""))
                for k in ks:
                    v = r["pass_hat_k"].get(str(k)) or {}
                    for s in ("fail", "success"):
                        cells.append(Interval(v.get(f"estimate_dropped_{s}"), v.get(f"ci_low_dropped_{s}"),
                                              v.get(f"ci_high_dropped_{s}")))  # fmt: skip
            if sub:
                cells.append(r["n_tasks_inaction_passable"])
                for k in ks:
                    v = (r["pass_hat_k"].get(str(k)) or {}).get("substantive") or {}
                    cells.append(Interval(v.get("estimate"), v.get("ci_low"), v.get("ci_high")))
                cells.append(r["share_successes_inaction_passable"])
            rows.append(cells)
        flags = [small_reason(r["n_simulations"], r["n_tasks"]) for r in self.records()]
        if any(flags):  # headline rows too small to rank or average say so
            cols.append("flag")
            fields.append("flag")
            rows = [[*cells, f or ""] for cells, f in zip(rows, flags)]
        notes = [
            f"infrastructure errors: {'dropped before every metric' if self.infra == 'drop' else 'counted as failed trials'}",
            *interval_notes(self.pass_hat_k, self.by, self.options),
        ]
        if any(flags):
            notes.append(f"flag: {sum(1 for f in flags if f)} row(s) with fewer than {MIN_SIMULATIONS} simulations or "
                         f"{MIN_TASKS} tasks — too few to rank; tauk.stats.overall leaves them out of its means")  # fmt: skip
        nk = int(self.groups["n_tasks_no_kept"].sum()) if self.groups.height else 0
        if nk:
            notes.append(f"{nk} task(s) had no kept trial and were left out")
        notes += coverage_notes(self.groups, self.by, self.min_coverage)
        if self.split_by_setup:
            notes.append(SETUP_NOTE)
        notes += list(self.pooling)
        notes += substantive_notes(self.groups, self.by)
        notes += [*summary_notes(self.groups, self.by), *self.dependence_notes]
        note = self._other_infra_note()
        if note:
            notes.append(note)
        for kind, what in (("none", "no simulation was evaluated (no reward information): pass^k is not defined, "
                                    "not 0"),
                           ("fractional", "rewards are fractional (neither 0 nor 1): pass^k counts only rewards of "
                                          "1 (the upstream rule); avg_reward is the informative figure")):  # fmt: skip
            hit = self.groups.filter(pl.col("rewards") == kind) if "rewards" in self.groups.columns else self.groups[:0]
            if hit.height:
                names = ", ".join(" · ".join(str(r[c]) for c in (self.by or ("agent",)) if c in r) for r in
                                  hit.iter_rows(named=True))  # fmt: skip
                notes.append(f"{names}: {what}")
        notes += self._unrewarded_notes()
        return SummaryTable.build("pass^k summary", cols, rows, notes, fields=fields, keys=len(self.by) + len(labels))

    def _unrewarded_notes(self) -> list[str]:
        """Groups where some (not all) kept simulations have no reward (no reward_info, a null or NaN reward): pass^k
        counts them as failed trials — τ²-bench's rule, a missing reward is not a success — while avg_reward
        averages only the rewarded ones, so the two rest on different trials; said, with the count."""
        g = self.groups
        if not g.height or not {"n_simulations", "n_evaluated", "infra_error_count"} <= set(g.columns):
            return []
        infra = pl.col("infra_error_count").fill_null(0) if self.infra == "fail" else pl.lit(0)
        hit = g.with_columns(_miss=pl.col("n_simulations") - pl.col("n_evaluated") - infra).filter(
            (pl.col("n_evaluated") > 0) & (pl.col("_miss") > 0))  # fmt: skip
        out = []
        for r in hit.iter_rows(named=True):
            name = " · ".join(str(r[c]) for c in self.by) if self.by else "all"
            aside = " (infrastructure errors aside)" if self.infra == "fail" else ""
            out.append(f"{name}: {r['_miss']} of {r['n_simulations']} simulation(s) kept have no reward{aside}: pass^k "
                       "counts them as failed trials (τ²-bench's rule), avg_reward leaves them out")  # fmt: skip
        return out

    def _other_infra_note(self) -> str | None:
        """Where infrastructure errors occurred: pass^1 (or the smallest k) under the other convention, so a
        published figure made under it can be matched."""
        if not self.groups.height or not int(self.groups["infra_error_count"].fill_null(0).sum()):
            return None
        by = list(self.by)
        col = self.other_infra_column
        k0 = self.pass_hat_k["k"].min() if self.pass_hat_k.height else None
        hit = self.groups.filter(pl.col("infra_error_count") > 0)
        rows = hit.join(self.pass_hat_k.filter(pl.col("k") == k0), on=by, how="inner", nulls_equal=True) if by \
            else self.pass_hat_k.filter(pl.col("k") == k0)  # fmt: skip
        parts = []
        for r in rows.iter_rows(named=True):
            if r[col] is None:
                continue
            name = " · ".join(str(r[c]) for c in by) if by else "all"
            parts.append(f"{name} {r[col]:.4g}")
        if not parts:
            return None
        how = ("counted as failed trials (the leaderboard's older convention)" if self.infra == "drop"
               else "dropped (τ²-bench ≥ 1.0)")  # fmt: skip
        shown = "; ".join(parts[:8]) + (f"; … ({len(parts) - 8} more: {col})" if len(parts) > 8 else "")
        return f"with infrastructure errors {how}, pass^{k0} would be: {shown}"

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _ratio(total: str, count: str) -> pl.Expr:
    """The mean of a counts frame's ``total`` over ``count`` (null when there is nothing to average)."""
    return pl.when(pl.col(count).sum() > 0).then(pl.col(total).sum() / pl.col(count).sum()).otherwise(None)


def _unique_or_null(col: str) -> pl.Expr:
    return pl.when(pl.col(col).n_unique() == 1).then(pl.col(col).first()).otherwise(None).alias(col)


@keyword_options(("trials", "by", "infra", "k", "ci", "method", "resamples", "seed", "progress"))
def summarize(
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
    min_coverage: float = MIN_COVERAGE,
    marks: Any = None,
    cluster: str | None = None,
    run_effects: str = "adjust",
) -> Summary:
    """The upstream metrics per group (docs/spec.md §3) with se_tasks / se_rerun and intervals (the beta-binomial model by
    default; see :func:`pass_hat_k`).

    Point estimates equal the upstream code's (τ²-bench ``compute_metrics`` / τ-bench ``display_metrics``).

    Parameters
    ----------
    trials
        A trials frame or a :class:`tauk.Results` (see :func:`as_trials`). With a Results and
        ``by=("run_id",)``, runs without any simulation are reported too (n_simulations 0, metrics null).
    by
        Column(s) to group by (default one group per run); ``None`` for a single group.
    k
        The k of pass^k (default 1 … min(num_trials, min_t n_t, 16) per group); see :func:`pass_hat_k`.
    ci
        Confidence level (default :data:`tauk.conventions.CI_LEVEL`); ``None`` for no interval (then only the
        standard errors; much faster).
    method, resamples, seed, infra, reward, progress, pool_setups, options
        As for :func:`pass_hat_k`; ``avg_reward`` is the mean of the ``reward`` column too.
    min_coverage
        A group that kept fewer than this share of its planned trials (infrastructure errors dropped, trial indices
        missing) is flagged (``low_coverage``) and not ranked (default :data:`tauk.conventions.MIN_COVERAGE`);
        every group reports its trial coverage and the bounds of pass^k with its dropped trials counted as
        failures and as successes (:mod:`tauk.stats.missing`).
    marks
        Which tasks are inaction-passable, for the substantive figures (:mod:`tauk.stats.substantive`): None — from
        the task definitions a :class:`tauk.Results` (or store) embeds, none for a trials frame or counts; a frame
        of :func:`tauk.tasks.inaction_marks` (e.g. with the task file of a run that embeds none); False — not
        computed; or a :class:`~tauk.stats.substantive.ResolvedMarks` (one audit shared by several summaries).
    cluster
        Task families (:mod:`tauk.stats.dependence.clusters`): a trials column constant within a task, or
        ``"family"`` (the families the task ids encode: telecom's issue type × persona). The population interval
        becomes the hull of the task-level interval and a cluster-robust (CR2, t_{G−1}) one; ``se_cluster`` and
        ``n_clusters`` say what entered. Default None: tasks are independent draws.

    Run effects (:mod:`tauk.stats.dependence.run_effects`) are always looked for: per group ``n_passes`` (a pass =
    one trial index of one run), ``run_effect_q`` / ``run_effect_p`` (Cochran's Q over task × pass) and
    ``run_var`` (σ̂²_run, probability scale); per k ``se_run``. Where σ̂²_run > 0 both intervals are widened by the
    run-level variance and ``adjusted_for`` says so; with one pass it cannot be told apart (a note says so).
    ``run_effects="report"`` reports them without widening (the intervals as they were before).

    Returns
    -------
    Summary
        ``groups`` (one row per group), ``pass_hat_k`` (long), ``to_frame()``, ``records()``, ``summary()``.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> s = tauk.stats.summarize(res, by=("agent", "domain"), ci=None)
    >>> s.groups.filter(domain="airline").select("agent", "n_simulations", "avg_reward").rows()
    [('atlas-large', 100, 0.74), ('atlas-small', 100, 0.55), ('baseline', 100, 0.3)]
    >>> s.records()[2]["pass_hat_k"]["4"]["estimate"]
    0.08
    """
    asked = normalize_by(by)
    min_coverage = check_min_coverage(min_coverage)
    opts = interval_options(options, ci=ci, method=method, resamples=resamples, seed=seed)
    ks = normalize_k(k)
    raw = as_trials(trials, [*asked, reward, *COUNTER_COLUMNS, *([cluster] if cluster and cluster != "family" else [])])
    df = prepare_trials(raw, infra, reward)
    by_t = resolve_by(df, asked, pool_setups)
    groups = task_groups(df, by_t)
    gkeys = by_t or ("__all__",)
    gdf = df if by_t else df.with_columns(pl.lit(0).alias("__all__"))
    kept = pl.col("_kept")
    label_cols = [c for c in ("agent", "domain") if c not in by_t]
    if is_task_counts(gdf):  # the same figures from the counts' sums
        meta = gdf.group_by(list(gkeys)).agg(
            *[_unique_or_null(c) for c in label_cols],
            pl.col("kept").sum().cast(pl.Int64).alias("n_simulations"),
            pl.col("infra").sum().cast(pl.Int64).alias("infra_error_count"),
            _ratio("reward_sum", "rewarded").alias("avg_reward"),
            _ratio("cost_sum", "cost_n").alias("avg_agent_cost"),
        )
    else:
        meta = gdf.group_by(list(gkeys)).agg(
            *[_unique_or_null(c) for c in label_cols],
            kept.sum().cast(pl.Int64).alias("n_simulations"),
            pl.col("_infra").sum().cast(pl.Int64).alias("infra_error_count"),
            pl.col("reward").filter(kept).mean().alias("avg_reward"),
            pl.col("agent_cost").filter(kept).mean().alias("avg_agent_cost"),
        )
    meta_rows = {tuple(r[c] for c in gkeys) if by_t else (): r for r in meta.iter_rows(named=True)}
    keyed = []
    grows: dict[str, list] = {c: [] for c in by_t}
    gschema = {c: t for c, t in GROUP_SCHEMA.items() if c not in by_t}
    grows.update({c: [] for c in gschema})
    plan = planned_tasks(df, by_t)
    fitted = {}
    gks_all = [resolve_ks(g, ks) for g in groups]
    stacked = [stacks_bounds(opts, g, gks, plan.get(g.key)) for g, gks in zip(groups, gks_all)]
    subplan = substantive_plan(trials, df, by_t, groups, marks)
    sub_fit = subplan.to_fit()
    # every model interval of the summary (groups, their substantive tasks) in one vectorised fit per ks, each group
    # on its own random stream: the numbers of one call per group
    batch = [(g, gks) for g, gks, st in zip(groups, gks_all, stacked) if not st]
    batch += [(subplan.parts[i], gks_all[i]) for i in sub_fit]
    fits = iter(group_models_for(batch, "pass^k", opts))
    models = [None if st else next(fits) for st in stacked]
    sub_models = {i: next(fits) for i in sub_fit}
    for g, gks, model, st in zip(groups, gks_all, models, stacked):
        if st:  # dropped trials: the bounds' fits join the group's
            model, bounds = model_with_bounds(g, gks, plan[g.key], opts)
            fitted[g.key] = (gks, bounds)
        rows = estimate_group(g, gks, "pass^k", opts, progress, model=model)
        keyed.append((g.key, rows))
        m = meta_rows[g.key]
        for i, c in enumerate(by_t):
            grows[c].append(g.key[i])
        for c in (*label_cols, "n_simulations", "infra_error_count", "avg_reward", "avg_agent_cost"):
            grows[c].append(m[c])
        grows["n_tasks"].append(g.T)
        grows["n_tasks_no_kept"].append(g.n_tasks_no_kept)
        grows["n_evaluated"].append(g.n_evaluated)
        grows["rewards"].append("none" if not g.evaluated else "fractional" if g.n_fractional else "binary")
    if ks is not None:
        warn_excluded(by_t, keyed, stacklevel=4)
    sub = substantive_figures(trials, df, by_t, keyed, groups, opts, progress, plan=subplan, models=sub_models)
    schema = {c: df.schema[c] for c in by_t}
    schema.update(gschema)
    gframe = pl.DataFrame(grows, schema=schema)
    runs = getattr(trials, "runs", None)
    if by_t == ("run_id",) and isinstance(runs, pl.DataFrame) and "run_id" in runs.columns:
        gframe = _add_empty_runs(gframe, runs)
    gframe = sub.with_groups(gframe)
    long = _with_other_infra(long_frame(by_t, df.schema, keyed), raw, df, by_t, ks, infra, reward)
    long = sub.with_long(long)
    long, dep, dep_notes = summary_dependence(df, by_t, groups, long, opts.ci, cluster,
                                              adjust=check_run_effects(run_effects) == "adjust")
    gframe = (gframe.join(dep, on=list(by_t), how="left", nulls_equal=True, maintain_order="left") if by_t
              else pl.concat([gframe, dep], how="horizontal") if gframe.height == dep.height else gframe)  # fmt: skip
    long, gframe = add_missing(long, gframe, df, by_t, ks, opts, min_coverage, plan=plan, fitted=fitted)
    counted = None if is_task_counts(raw) else head_counters(df, by=list(by_t)).rename({"n_simulations": "n_counted"})
    pooling = (*(pooling_notes(trials, df, by_t) if pool_setups else ()), *_mixed_label_notes(df, by_t, label_cols))
    return Summary(by_t, infra, opts.ci, opts.method, opts.resamples, opts.seed, gframe, long, reward,
                   by_t != asked, counted, pooling, min_coverage, cluster, tuple(dep_notes))  # fmt: skip


def _with_other_infra(long: pl.DataFrame, raw: pl.DataFrame, df: pl.DataFrame, by_t: tuple[str, ...],
                      ks: Sequence[int] | None, infra: str, reward: str) -> pl.DataFrame:  # fmt: skip
    """``long`` plus the point estimate under the other infrastructure convention (the same rules, tauk's own)."""
    other = "fail" if infra == "drop" else "drop"
    col = f"estimate_infra_{other}"
    counts = is_task_counts(raw)
    if not bool((df.get_column("infra") > 0).any() if counts else df.get_column("_infra").any()):  # no infrastructure error: they agree
        return long.with_columns(pl.col("estimate").alias(col))
    if counts:  # the same counts under the other rule: infrastructure errors are never successes
        kept = pl.col("trials") if other == "fail" else pl.col("trials") - pl.col("infra")
        raw = raw.with_columns(kept.alias("kept"), pl.lit(other).alias("infra_rule"))
    if counts:
        other_df = prepare_trials(raw, other, reward)
    else:  # prepare_trials differs between the conventions in ``_kept`` alone
        other_df = df.with_columns(kept_expr(other))
    rows = []
    for g in task_groups(other_df, by_t):
        for r in estimate_group(g, resolve_ks(g, ks), "pass^k"):
            rows.append((*g.key, r["k"], r["estimate"]))
    keys = [*by_t, "k"]
    alt = pl.DataFrame(rows, schema={**{c: long.schema[c] for c in by_t}, "k": pl.Int64, col: pl.Float64},
                       orient="row")  # fmt: skip
    return long.join(alt, on=keys, how="left", nulls_equal=True, maintain_order="left")


def _mixed_label_notes(df: pl.DataFrame, by_t: tuple[str, ...], labels: Sequence[str]) -> tuple[str, ...]:
    """A group whose ``agent`` (or ``domain``) cell is empty because it holds several (the grouping asked for does
    not separate them): which ones its figures pool."""
    out = []
    for c in labels:
        if c not in df.columns:
            continue
        vals = (df.group_by(list(by_t), maintain_order=True) if by_t else df.select(c).group_by(pl.lit(0)))
        for r in vals.agg(pl.col(c).drop_nulls().unique().sort().alias("_v")).iter_rows(named=True):
            if len(r["_v"]) > 1:
                name = " · ".join(str(r[b]) for b in by_t) if by_t else "all"
                out.append(f"{name}: several {c}s pooled into one figure (the grouping does not separate them): "
                           + " | ".join(str(v) for v in r["_v"]))  # fmt: skip
    return tuple(out)


def _add_empty_runs(gframe: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    seen = set(gframe["run_id"].to_list())
    missing = runs.filter(~pl.col("run_id").is_in(list(seen)))
    extra = pl.DataFrame(
        {
            "run_id": missing["run_id"].to_list(),
            "agent": missing["agent"].to_list() if "agent" in missing.columns else [None] * missing.height,
            "domain": missing["domain"].to_list() if "domain" in missing.columns else [None] * missing.height,
            "n_simulations": [0] * missing.height,
            "n_tasks": [0] * missing.height,
            "n_tasks_no_kept": [0] * missing.height,
            "infra_error_count": [0] * missing.height,
            "avg_reward": [None] * missing.height,
            "avg_agent_cost": [None] * missing.height,
            "n_evaluated": [0] * missing.height,
            "rewards": ["none"] * missing.height,
        },
        schema=gframe.schema,
    )
    order = {r: i for i, r in enumerate(runs["run_id"].to_list())}
    if not extra.height and gframe["run_id"].to_list() == runs["run_id"].to_list():
        return gframe  # every run has a row, in the runs' order already
    out = pl.concat([gframe, extra]) if extra.height else gframe
    return out.sort(pl.col("run_id").replace_strict(order, default=len(order)), maintain_order=True)

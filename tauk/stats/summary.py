"""Upstream metrics per group (τ²-bench ``compute_metrics`` / τ-bench ``display_metrics``), plus uncertainty, and
the leaderboard's one figure per agent (:func:`overall`).

Trials of different setups are never pooled into one pass^k (:func:`~tauk.stats.tasks.resolve_by`); when one number
per agent is wanted anyway — a leaderboard's "overall" — it is the mean of the per-setup estimates, each setup
counting once whatever its number of tasks, and it says so. Its interval (``ci_low`` / ``ci_high``) combines the
per-setup intervals with those weights (``weights``, 1/S each): each side is √(Σ_s w_s²·h_s²) from the estimate, h_s
that setup's half-width on the same side — exact for independent normal estimates, and the setups of one agent are
independent draws of different tasks (setups sharing tasks would make it too narrow).
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
from tauk.errors import TaukError
from tauk.io.frames.runs import pooling_note
from tauk.scoring.counters import COUNTER_COLUMNS, head_counters
from tauk.table import Interval, SummaryTable

from .dependence.adjust import K_FIELDS as DEP_K_FIELDS
from .dependence.adjust import check_run_effects, summary_dependence, summary_notes
from .estimate import ESTIMATE_FIELDS, LONG_SCHEMA, estimate_group, long_frame, resolve_ks, warn_excluded
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
from .substantive import SUBSTANTIVE_FIELDS, substantive_figures, substantive_notes
from .tasks import (
    SETUP_NOTE,
    as_trials,
    is_task_counts,
    kept_expr,
    normalize_by,
    normalize_k,
    prepare_trials,
    resolve_by,
    task_groups,
)

__all__ = ["Summary", "summarize", "Overall", "overall"]

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
    pooling: tuple[str, ...] = ()  # pool_setups=True: what each pooled group pooled over
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
        return SummaryTable.build("pass^k summary", cols, rows, notes, fields=fields, keys=len(self.by) + len(labels))

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
        computed.
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
    for g in groups:
        gks = resolve_ks(g, ks)
        model = None
        if stacks_bounds(opts, g, gks, plan.get(g.key)):  # dropped trials: the bounds' fits join the group's
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
    sub = substantive_figures(trials, df, by_t, keyed, groups, opts, progress, marks)
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
    pooling = _pooling_notes(trials, df, by_t) if pool_setups else ()
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


def _pooling_notes(trials: Any, df: pl.DataFrame, by_t: tuple[str, ...]) -> tuple[str, ...]:
    """``pool_setups=True``: for each group that spans several setups, which setup fields it pooled over."""
    runs = getattr(trials, "runs", None)
    frame = runs if isinstance(runs, pl.DataFrame) and "setup" in runs.columns else df.select("setup").unique()
    out = []
    for key, part in (df.group_by(list(by_t), maintain_order=True) if by_t else [((), df)]):
        setups = part.get_column("setup").unique().to_list()
        note = pooling_note(frame, setups)
        if note:
            name = " · ".join(str(v) for v in key) if by_t else "all"
            out.append(f"{name}: {note}")
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
    out = pl.concat([gframe, extra])
    return out.with_columns(pl.col("run_id").replace_strict(order, default=len(order)).alias("_o")).sort("_o").drop("_o")


# ---- the leaderboard's convention: one figure per agent ----------------------------------------------------
@dataclass(frozen=True)
class Overall:
    """One row per (group, k): ``estimate`` (the mean of the per-setup estimates that entered), ``ci_low`` /
    ``ci_high`` and ``interval_method`` (one setup: its own interval; several: the per-setup intervals combined with
    the weights, each side √(Σ w²·h²)), ``n_setups`` (how many entered), ``n_tasks`` / ``n_simulations`` (theirs,
    summed), ``setups`` (which entered), ``weights`` (each one's weight, 1/S), ``left_out`` (setups under
    :data:`~tauk.conventions.MIN_SIMULATIONS` simulations or :data:`~tauk.conventions.MIN_TASKS` tasks, left out of
    the mean unless ``include_small``) and ``flagged`` (every setup of the group was small: the row is the mean of
    small setups, shown but not ranked)."""

    by: tuple[str, ...]
    over: str
    metric: str
    frame: pl.DataFrame
    ci: float | None = None
    include_small: bool = False
    reasons: tuple[tuple[str, str], ...] = ()  # (setup, why it was small)

    def to_frame(self) -> pl.DataFrame:
        """The rows (a Polars frame)."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready rows."""
        return self.frame.to_dicts()

    def ranking(self, k: int = 1) -> pl.DataFrame:
        """The groups ranked by pass^k (best first), flagged groups left out."""
        f = self.frame.filter(pl.col("k") == k, ~pl.col("flagged"), pl.col("estimate").is_not_null())
        return f.sort("estimate", descending=True, maintain_order=True).with_row_index("rank", offset=1)

    def summary(self) -> SummaryTable:  # noqa: C901
        """The table: one row per group (ranked by the first k, flagged groups last), n, one column per k with
        its interval, and notes saying which setups were averaged and which were left out."""
        from tauk.conventions import MIN_SIMULATIONS, MIN_TASKS

        ks = sorted(set(self.frame["k"].to_list())) if self.frame.height else []
        groups: dict[tuple, dict[str, Any]] = {}
        for r in self.frame.sort("k").iter_rows(named=True):
            g = groups.setdefault(tuple(r[c] for c in self.by), {
                "n_setups": r["n_setups"], "n_tasks": r["n_tasks"], "n_simulations": r["n_simulations"],
                "flagged": r["flagged"], "setups": r[f"{self.over}s"], "left_out": r["left_out"]})  # fmt: skip
            g[r["k"]] = Interval(r["estimate"], r["ci_low"], r["ci_high"])
        k0 = ks[0] if ks else None

        def rank_key(item: tuple[tuple, dict[str, Any]]) -> tuple:
            est = item[1].get(k0).estimate if k0 in item[1] else None
            return (item[1]["flagged"], est is None, -(est or 0.0))

        ordered = sorted(groups.items(), key=rank_key)
        any_flag = any(g["flagged"] or g["left_out"] for _, g in ordered)
        rows = []
        for key, g in ordered:
            row = [*key, g["n_setups"], g["n_tasks"], g["n_simulations"], *(g.get(k) for k in ks)]
            if any_flag:
                flag = "small: not ranked" if g["flagged"] else ""
                if g["left_out"]:
                    flag += ("; " if flag else "") + f"{len(g['left_out'])} small {self.over}(s) left out"
                row.append(flag)
            rows.append(row)
        cols = [*self.by, f"{self.over}s", "tasks", "sims", *(f"{self.metric.replace('k', str(k))}" for k in ks)]
        fields = [*self.by, "n_setups", "n_tasks", "n_simulations",
                  *(f"{'pass_hat' if self.metric == 'pass^k' else 'pass_at'}_{k}" for k in ks)]  # fmt: skip
        if any_flag:
            cols.append("flag")
            fields.append("flag")
        level = f"{self.ci:.0%} " if self.ci else ""
        notes = [f"the leaderboard's convention: the unweighted mean of the per-{self.over} figures (each "
                 f"{self.over} counts once, whatever its number of tasks); rows ranked by {self.metric.replace('k', str(k0))}"
                 if k0 is not None else "no estimate"]  # fmt: skip
        if self.ci:
            notes.append(f"{level}interval: with one {self.over}, that {self.over}'s own interval; with several, the "
                         f"per-{self.over} intervals combined with the weights 1/{self.over}s, each side √(Σ w²·h²) "
                         f"(independent {self.over}s: different tasks; {self.over}s sharing tasks would make it too "
                         "narrow; coverage in docs/calibration/dependence.md)")  # fmt: skip
        small = f"fewer than {MIN_SIMULATIONS} simulations or {MIN_TASKS} tasks (tauk.conventions)"
        if not self.include_small:
            notes.append(f"a {self.over} with {small} is left out of the mean and the ranking (include_small=True "
                         f"keeps it); a group with only such {self.over}s is shown from them, flagged, not ranked")  # fmt: skip
        for key, g in ordered:
            name = " · ".join(str(v) for v in key) if key else "all"
            used = "; ".join(str(x) for x in g["setups"])  # a setup's own text may hold commas
            text = f"{name}: averaged {g['n_setups']} {self.over}(s): {used}"
            if g["left_out"]:
                why = dict(self.reasons)
                text += " — left out: " + "; ".join(f"{x} ({why.get(x, 'small')})" for x in g["left_out"])
            notes.append(text)
        return SummaryTable.build(f"{self.metric} overall (mean over {self.over}s)", cols, rows, notes,
                                  fields=fields, keys=max(len(self.by), 1))  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def overall(result: Any, *, over: str = "setup", include_small: bool = False) -> Overall:
    """One figure per group by the leaderboard's convention: the mean of the per-``over`` estimates of a
    :class:`~tauk.stats.Summary` or :class:`~tauk.stats.PassKResult` grouped by (at least) ``over``.

    A ``over`` row (setup) with fewer than :data:`~tauk.conventions.MIN_SIMULATIONS` simulations or
    :data:`~tauk.conventions.MIN_TASKS` tasks is left out of the mean unless ``include_small``; a group whose every
    setup is that small keeps the mean of them, ``flagged`` (not ranked). The simulations are known from a
    Summary; from a PassKResult only the tasks are checked.

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data"), by="agent", ci=None)
    >>> s.by
    ('agent', 'setup')
    >>> o = tauk.stats.overall(s)
    >>> [(a, n, round(e, 4)) for a, n, e in o.to_frame().filter(k=1).select("agent", "n_setups", "estimate").rows()]
    [('atlas-large', 2, 0.765), ('atlas-small', 2, 0.51), ('baseline', 2, 0.335)]
    >>> o.ranking(k=1)["agent"].to_list()
    ['atlas-large', 'atlas-small', 'baseline']
    """
    from tauk.conventions import small_reason

    by = tuple(getattr(result, "by", ()))
    long = getattr(result, "pass_hat_k", None)
    metric = "pass^k"
    if not isinstance(long, pl.DataFrame):
        long = getattr(result, "frame", None)
        metric = getattr(result, "metric", "pass^k")
    if not isinstance(long, pl.DataFrame) or over not in by:
        raise TaukError(f"overall() takes a Summary or PassKResult grouped by {over!r} (its by is {by})")
    keys = [c for c in by if c != over]
    groups = getattr(result, "groups", None)
    if isinstance(groups, pl.DataFrame) and {"n_simulations", "n_tasks"} <= set(groups.columns):
        size = groups.select(*by, pl.col("n_simulations").alias("_sims"), pl.col("n_tasks").alias("_tasks"))
        long = long.join(size, on=list(by), how="left", nulls_equal=True, maintain_order="left")
    else:
        long = long.with_columns(pl.lit(None, dtype=pl.Int64).alias("_sims"), pl.col("n_tasks").alias("_tasks"))
    ci = getattr(result, "ci", None)
    long = long.filter(pl.col("estimate").is_not_null())
    reasons: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for part in long.partition_by([*keys, "k"], maintain_order=True) if long.height else []:
        rows = part.to_dicts()
        for r in rows:
            why = small_reason(r["_sims"], r["_tasks"])
            r["_why"] = why
            if why:
                reasons[str(r[over])] = why
        big = [r for r in rows if include_small or not r["_why"]]
        flagged = not big
        used = rows if flagged else big
        m = len(used)
        est = sum(r["estimate"] for r in used) / m
        lo = hi = None
        how = None
        if ci and m == 1:
            lo, hi, how = used[0].get("ci_low"), used[0].get("ci_high"), used[0].get("interval_method")
        elif ci and all(r.get("ci_low") is not None and r.get("ci_high") is not None for r in used):
            h_lo = sum((r["estimate"] - r["ci_low"]) ** 2 for r in used) ** 0.5 / m
            h_hi = sum((r["ci_high"] - r["estimate"]) ** 2 for r in used) ** 0.5 / m
            lo, hi, how = max(0.0, est - h_lo), min(1.0, est + h_hi), f"{over} intervals combined (weights 1/{m})"
        sims = [r["_sims"] for r in used]
        out.append({
            **{c: rows[0][c] for c in keys}, "k": rows[0]["k"], "n_setups": m,
            "n_tasks": sum(r["n_tasks"] for r in used),
            "n_simulations": sum(sims) if all(x is not None for x in sims) else None,
            "estimate": est, "ci_low": lo, "ci_high": hi, "interval_method": how,
            f"{over}s": [r[over] for r in used], "weights": [1.0 / m] * m, "left_out": [] if flagged else [r[over] for r in rows if r not in big],
            "flagged": flagged,
        })  # fmt: skip
    schema = {**{c: long.schema[c] for c in keys}, "k": pl.Int64, "n_setups": pl.Int64, "n_tasks": pl.Int64,
              "n_simulations": pl.Int64, "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
              "interval_method": pl.String, f"{over}s": pl.List(long.schema[over]), "weights": pl.List(pl.Float64),
              "left_out": pl.List(long.schema[over]), "flagged": pl.Boolean}  # fmt: skip
    frame = pl.DataFrame(out, schema=schema).sort([*keys, "k"], nulls_last=True) if out else pl.DataFrame(schema=schema)
    return Overall(tuple(keys), over, metric, frame, ci, include_small, tuple(sorted(reasons.items())))

r"""Run-to-run consistency: how much of a score is the agent, and how much is the dice.

Every quantity is computed per group (``by``) from the kept trials of each task. Notation: tasks t = 1 … T, task t
has n_t kept trials (its *observed* trials: a τ-bench run's missing trials are not imputed here, unlike in pass^k)
of which c_t succeed, y_{t,j} ∈ {0, 1} is trial j of task t, p_t the task's true success probability, and
N = Σ_t n_t. A *single run* is one trial of every task (as in a leaderboard submission); an *m-trial run* averages
m trials per task. "Fixed tasks": the same T tasks re-run (the tasks themselves are not resampled).

Per group (columns of :meth:`ConsistencyResult.to_frame`):

* ``pass1`` = (1/T) Σ_t c_t/n_t, and ``pass1_per_trial[j]`` = mean_t y_{t,j} over the tasks that have trial j
  (the recorded ``trial`` index; when it is missing or repeats within a task, e.g. several runs in one group, the
  j-th trial of each task in (run_id, trial, simulation_id) order). ``pass1_spread`` = max − min of those over the
  trial indices that at least half of the tasks reached.
* ``flip_rate`` = share of the tasks with n_t ≥ 2 that neither always pass nor always fail (0 < c_t < n_t); those
  are the *flaky tasks* (:attr:`ConsistencyResult.flaky`, most undecided first: by |c_t/n_t − 0.5|).
* ``icc`` — ICC(1) of success within tasks (one-way random-effects ANOVA):
  MSB = Σ_t n_t (c_t/n_t − ȳ)² / (T − 1), MSW = Σ_t c_t(n_t − c_t)/n_t / (N − T), ȳ = Σ c_t / N,
  n0 = (N − Σ n_t²/N)/(T − 1) (the unequal-n correction; n0 = n when balanced),
  ICC(1) = (MSB − MSW)/(MSB + (n0 − 1) MSW). Interval (``icc_low``, ``icc_high``) at level 1 − α from F = MSB/MSW:
  F_L = F / F_{1−α/2}(T−1, N−T), F_U = F · F_{1−α/2}(N−T, T−1), ICC = (F_· − 1)/(F_· + n0 − 1) (exact for balanced
  normal data, an approximation for binary outcomes and unequal n).
* ``bb_rho`` — the beta-binomial over-dispersion ρ = 1/(1 + κ), the ICC's model twin: c_t ~ BetaBinomial(n_t, a, b)
  with a = μκ, b = (1 − μ)κ; (μ, ρ) maximise the marginal likelihood Σ_t [betaln(c_t + a, n_t − c_t + b) − betaln(a, b)]
  (``bb_mean`` = μ). ``icc`` is the moment (ANOVA) estimate of the same share of variance, ``bb_rho`` the model-based
  one (it assumes a Beta distribution of p_t over tasks).
* ``sd_single_run`` — SD of a single run's pass^1 around the fixed-task mean (1/T) Σ p_t:
  Var = Σ_t p_t(1 − p_t) / T², estimated without bias by V̂ = Σ_t v_t, v_t = c_t(n_t − c_t)/(n_t(n_t − 1)) (needs
  n_t ≥ 2; tasks with one trial get the mean v_t of the others); SD = √V̂ / T. For an m-trial run
  ``sd_m{m}`` = ``sd_single_run`` / √m. ``se_rerun`` = √(Σ_t v_t/n_t)/T is the same SD for this data's own pass1
  (equal to ``pass_hat_k``'s se_rerun at k = 1).
* ``mdd_single_runs`` — the noise floor: the smallest difference between two single-run pass^1 scores of the same
  setup on these T tasks that is significant at α. The difference of two single runs is D = ΔS/T with
  ΔS = Σ_t (y_t − y'_t), each term −1, 0, +1 with probabilities p_t(1−p_t), 1 − 2p_t(1−p_t), p_t(1−p_t); its
  distribution depends on the p_t only through p_t(1−p_t), and its generating function
  Π_t (1 − 2q_t + q_t(x + 1/x)) is linear in each q_t, so putting v_t for q_t estimates every point probability
  without bias — it is the distribution of the difference of two *distinct recorded trials* drawn from every task.
  On this lattice (steps of 1/T) the threshold is the mid-p one: the smallest s ≥ 1 with
  P̂(|ΔS| > s) + ½ P̂(|ΔS| = s) ≤ α, and mdd = s/T (a difference of mdd or more is significant).
  ``mdd_single_runs_size`` = P̂(|ΔS| ≥ s), the chance of a gap that large between identical setups.
  ``mdd_m{m}`` does the same for two m-trial runs (lattice 1/(mT); per-task generating function raised to the m-th
  power, whose variance is still unbiased). The mid-p threshold keeps the rejection rate of identical-setup pairs
  at 5 % ± 1.5 (simulation at T ∈ {20, 50}, n ∈ {2, 4, 8}, wherever about five or more tasks are flaky; the table:
  ``docs/calibration/consistency.md``), where a normal z·√2·SD over-rejects at n = 2 and the conservative exact
  threshold (size ≤ α)
  under-rejects. With fewer than :data:`MIN_FLAKY` (3) flaky tasks no floor is given (null, with a note).

Within every set of groups that share all ``by`` keys except ``rank_by`` (default: the agents of one domain), the
ranking (:attr:`ConsistencyResult.ranking`, :attr:`ConsistencyResult.rankings`):

* ``snr`` = signal / noise: noise = √(mean_a sd_single_run_a²) (one run's SD), signal = √max(0, s²_a − mean_a
  se_rerun_a²) (the spread of the agents' pass1 with this data's own trial noise taken out; s²_a = sample variance
  of pass1 across agents). Below 1 a single run's noise exceeds the real spread between the agents.
* ``trials_to_resolve_next`` for each adjacent pair (i, i+1) of the ranking by pass1, with gap δ: the smallest m with
  δ ≥ z_{1−α/2} √((σ_i² + σ_{i+1}²)/m), σ = sd_single_run — i.e. m = ⌈z² (σ_i² + σ_{i+1}²)/δ²⌉; the set's
  ``trials_to_resolve`` is the largest (null when two agents tie). It resolves the ranking against run-to-run noise
  on these tasks (not task sampling: for new tasks see :func:`tauk.stats.power`), taking the observed gaps as true.

Groups whose tasks all have one trial get null for every multi-trial quantity and a ``note``; infrastructure errors
follow ``infra=`` (dropped, or failed trials) and are counted in ``infra_error_count``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.conventions import INFRA, TASK_KEY
from tauk.errors import TaukError, check_columns
from tauk.table import SummaryTable

from ..options import finite_or_none
from ..tasks import as_trials, is_task_counts, normalize_by, prepare_trials, resolve_by
from .groups import group_stats, trial_outcomes
from .noise_floor import ALPHA, MS
from .ranking import rank_agents

__all__ = ["ConsistencyResult", "consistency"]



# ------------------------------------------------------------------------------------------------ result
@dataclass(frozen=True)
class ConsistencyResult:
    """Run-to-run consistency per group (see :func:`consistency` for every definition).

    ``frame``: one row per group (:meth:`to_frame`); ``per_trial``: group keys, trial_index, n_tasks, pass1;
    ``tasks``: group keys, task key, n, c, rate = c/n, flaky; ``flaky``: the flaky tasks, most undecided first;
    ``outcomes``: one row per trial (kept or dropped) with trial_index and success, for the outcome grid;
    ``ranking``: per group within its ranking set (rank, gap_to_next, trials_to_resolve_next);
    ``rankings``: per ranking set (signal_sd, noise_sd, snr, trials_to_resolve, note: why it is null).
    """

    by: tuple[str, ...]
    infra: str
    alpha: float
    reward: str
    ms: tuple[int, ...]
    rank_by: str | None
    frame: pl.DataFrame
    per_trial: pl.DataFrame
    tasks: pl.DataFrame
    outcomes: pl.DataFrame
    ranking: pl.DataFrame
    rankings: pl.DataFrame

    @property
    def flaky(self) -> pl.DataFrame:
        """The flaky tasks (0 < c < n), per group, most undecided (|c/n − 0.5| smallest) first."""
        if self.tasks.height == 0:
            return self.tasks
        keys = list(self.by)
        undecided = (pl.col("rate") - 0.5).abs()
        sort = [*keys, undecided, -pl.col("n")]  # within a group: most undecided, then most trials, then task order
        return self.tasks.with_row_index("_i").filter(pl.col("flaky")).sort([*sort, "_i"], nulls_last=True).drop("_i")

    def to_frame(self) -> pl.DataFrame:
        """One row per group: group keys, counts, pass1, pass1_per_trial, pass1_spread, flip_rate, n_flaky, icc
        (+ interval, n0), bb_rho, bb_mean, se_rerun, sd_single_run, sd_m{m}, mdd_single_runs (+ size), mdd_m{m},
        note."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per group: every column of :meth:`to_frame`, ``flaky_tasks`` (list of {domain,
        task_id, n, c, rate}, most undecided first) and ``ranking`` (rank within its set, gap and trials to resolve
        the next, and the set's snr and trials_to_resolve; null when the group is not ranked)."""
        keys = list(self.by)
        tk = [c for c in TASK_KEY if c not in keys]
        flaky: dict[tuple, list[dict[str, Any]]] = {}
        for r in self.flaky.iter_rows(named=True):
            flaky.setdefault(tuple(r[c] for c in keys), []).append({**{c: r[c] for c in tk}, "n": r["n"], "c": r["c"], "rate": r["rate"]})
        rank: dict[tuple, dict[str, Any]] = {}
        if self.ranking.height:
            other = [c for c in keys if c != self.rank_by]
            sets = {tuple(r[c] for c in other): r for r in self.rankings.iter_rows(named=True)}
            for r in self.ranking.iter_rows(named=True):
                s = sets[tuple(r[c] for c in other)]
                rank[tuple(r[c] for c in keys)] = {
                    "rank": r["rank"], "of": s["n_ranked"], "gap_to_next": r["gap_to_next"],
                    "trials_to_resolve_next": r["trials_to_resolve_next"], "snr": s["snr"],
                    "signal_sd": s["signal_sd"], "noise_sd": s["noise_sd"], "trials_to_resolve": s["trials_to_resolve"],
                    "note": s["note"],
                }  # fmt: skip
        out = []
        for r in self.frame.iter_rows(named=True):
            k = tuple(r[c] for c in keys)
            rec = {c: finite_or_none(v) if isinstance(v, float) else v for c, v in r.items()}
            rec["flaky_tasks"] = flaky.get(k, [])
            rec["ranking"] = rank.get(k)
            out.append(rec)
        return out

    def summary(self) -> SummaryTable:
        """The consistency table (text / HTML / LaTeX); ranking and estimator notes below it."""
        ms = [m for m in self.ms if m != 1]
        cols = [*self.by, "tasks", "trials", "pass^1", "spread", "flip rate", "ICC(1)",
                f"ICC {1 - self.alpha:.0%} CI", "rho (beta-bin.)", "SD 1 run", "MDD 1 run",
                *[f"MDD {m} runs" for m in ms]]  # fmt: skip
        rows = []
        for r in self.frame.iter_rows(named=True):
            lo, hi = r["icc_low"], r["icc_high"]
            trials = None if r["n_trials_min"] is None else (
                str(r["n_trials_min"]) if r["n_trials_min"] == r["n_trials_max"] else f"{r['n_trials_min']}-{r['n_trials_max']}")
            rows.append([*(r[c] for c in self.by), r["n_tasks"], trials, r["pass1"], r["pass1_spread"], r["flip_rate"],
                         r["icc"], None if lo is None else f"[{lo:.3f}, {hi:.3f}]", r["bb_rho"], r["sd_single_run"],
                         r["mdd_single_runs"], *[r[f"mdd_m{m}"] for m in ms]])  # fmt: skip
        notes = [
            "spread: max - min of pass^1 over trial indices; flip rate: share of tasks neither always passed nor always failed",
            "ICC(1): one-way ANOVA (moment) estimate of the share of success variance between tasks, F interval; "
            "rho: the same share from a beta-binomial fit (maximum marginal likelihood), its model-based twin",
            "SD 1 run: SD of one run's pass^1 re-running the same tasks, sqrt(sum c(n-c)/(n(n-1)))/T; "
            f"MDD m runs: smallest gap between two m-trial runs of one setup significant at alpha = {self.alpha:g} "
            "(exact mid-p null of the difference)",
            f"infrastructure errors: {'dropped' if self.infra == 'drop' else 'counted as failed trials'} "
            f"({int(self.frame['infra_error_count'].sum()) if self.frame.height else 0} in the data)",
        ]
        for r in self.rankings.iter_rows(named=True) if self.rankings.height else []:
            where = ", ".join(str(r[c]) for c in self.by if c != self.rank_by and c in r) or "all"
            snr = "—" if r["snr"] is None else f"{r['snr']:.2f}"
            if r["trials_to_resolve"] is None:
                notes.append(f"ranking of {r['n_ranked']} {self.rank_by}s ({where}): signal/noise {snr}; "
                             f"trials to resolve it unknown: {r['note']}")  # fmt: skip
            else:
                notes.append(f"ranking of {r['n_ranked']} {self.rank_by}s ({where}): signal/noise {snr}; every adjacent "
                             f"pair resolved at {r['trials_to_resolve']} trial(s) per task")  # fmt: skip
        for r in self.frame.iter_rows(named=True):
            if r["note"]:
                label = ", ".join(str(r[c]) for c in self.by) or "all"
                notes.append(f"{label}: {r['note']}")
        return SummaryTable.build("run-to-run consistency", cols, rows, notes, keys=max(len(self.by), 1))

    def flaky_summary(self, limit: int | None = 20) -> SummaryTable:
        """The flaky tasks (c/n strictly between 0 and 1), most undecided first, at most ``limit`` per group."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise TaukError(f"limit (flaky tasks listed per group) must be an integer ≥ 0 or None, got {limit!r}")
        keys = list(self.by)
        tk = [c for c in TASK_KEY if c not in keys]
        df = self.flaky
        if limit is not None and keys:
            df = df.group_by(keys, maintain_order=True).head(limit)
        elif limit is not None:
            df = df.head(limit)
        rows = [[*(r[c] for c in keys), *(r[c] for c in tk), f"{r['c']}/{r['n']}", r["rate"]] for r in df.iter_rows(named=True)]
        return SummaryTable.build("flaky tasks (most undecided first)", [*keys, *tk, "c/n", "rate"], rows,
                                  keys=max(len(keys), 1))  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def consistency(
    trials: Any,
    *,
    by: str | Sequence[str] | None = ("agent", "domain"),
    infra: str = INFRA,
    alpha: float = ALPHA,
    reward: str = "reward",
    ms: Sequence[int] = MS,
    rank_by: str | None = "agent",
    pool_setups: bool = False,
) -> ConsistencyResult:
    r"""How much of a score is the agent and how much the dice: trial-to-trial consistency per group.

    Parameters
    ----------
    trials : polars.DataFrame or tauk.Results
        The trials frame (ARCHITECTURE.md) or anything with ``.trials``.
    by : str or sequence of str, optional
        Trial columns defining the groups (default agent × domain); a task is (domain, task_id) within a group.
    infra : {"drop", "fail"}
        Infrastructure errors dropped (τ²-bench ≥ 1.0) or counted as failed trials; counted either way.
    alpha : float
        Significance level of the noise floors (MDD) and 1 − level of the ICC interval.
    reward : str
        The reward column deciding success (``"score_reward"`` for a re-scored frame).
    ms : sequence of int
        Trials per task of the m-trial runs whose SD and MDD are reported (1 = single runs, always included).
    rank_by : str or None
        The ``by`` key that is ranked within each combination of the others (default: agents within a domain;
        nothing is ranked when ``by`` has no agent). Another column must be one of ``by``.

    Returns
    -------
    ConsistencyResult
        ``to_frame()`` (one row per group), ``records()``, ``summary()``, ``flaky``, ``per_trial``, ``ranking``.

    Notes
    -----
    Per group, with n_t kept trials and c_t successes of task t (T tasks, N = Σ n_t):

    * pass1_per_trial[j] = mean over tasks of trial j's success; pass1_spread = max − min over the trial indices;
    * flip_rate = #{t: 0 < c_t < n_t} / #{t: n_t ≥ 2};
    * icc = ICC(1) = (MSB − MSW)/(MSB + (n0 − 1) MSW), n0 = (N − Σ n_t²/N)/(T − 1), with an F-based interval;
      bb_rho = 1/(1 + κ) of a beta-binomial fitted by maximum marginal likelihood — the model twin of the ICC;
    * sd_single_run = √(Σ_t c_t(n_t − c_t)/(n_t(n_t − 1))) / T (unbiased variance of one run's pass^1 on these
      tasks), sd_m{m} = sd_single_run/√m;
    * mdd_single_runs = s/T, s the mid-p α threshold of |ΔS| under the exact null of the difference of two runs
      (task t's outcomes differ each way with probability c_t(n_t − c_t)/(n_t(n_t − 1))); mdd_m{m} for m-trial runs;
    * within each domain (``rank_by`` agents): snr = between-agent SD of pass1 (own noise removed) / single-run SD,
      and trials_to_resolve = max over adjacent pairs of ⌈z²_{1−α/2}(σ_i² + σ_{i+1}²)/δ²⌉.

    The docstring of :mod:`tauk.stats.noise.analysis` gives every formula, ``docs/calibration/consistency.md``
    the calibration of the MDD. Groups with one trial per task get null multi-trial quantities and a
    ``note``.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data/")
    >>> c = tauk.stats.consistency(res)
    >>> r = c.records()[0]
    >>> r["agent"], r["domain"], r["pass1"], r["pass1_per_trial"], r["flip_rate"]
    ('atlas-large', 'airline', 0.74, [0.6, 0.76, 0.76, 0.84], 0.64)
    >>> round(r["icc"], 3), round(r["sd_single_run"], 4), r["mdd_single_runs"], r["mdd_m4"]
    (0.111, 0.0833, 0.24, 0.12)
    >>> [(r["domain"], round(r["snr"], 2), r["trials_to_resolve"]) for r in c.rankings.iter_rows(named=True)]
    [('airline', 2.41, 2), ('retail', 2.69, 6)]
    """
    by_t = normalize_by(by)
    if not (0.0 < float(alpha) < 1.0):
        raise TaukError(f"alpha must lie in (0, 1), e.g. 0.05; got {alpha!r}")
    ms_t = tuple(sorted({1, *(int(m) for m in ms)}))
    if min(ms_t) < 1:
        raise TaukError(f"ms must be positive integers, got {ms!r}")
    if rank_by is not None and rank_by not in by_t:
        if rank_by != "agent":  # the default ranks nothing when by has no agent; another column is a mistake
            raise TaukError(f"rank_by={rank_by!r} is not one of by {list(by_t)}: add it to by, or rank_by=None")
        rank_by = None
    df = as_trials(trials, [*by_t, reward])
    if is_task_counts(df):
        raise TaukError("consistency needs each trial's outcome (the trials frame or Results), not task counts")
    check_columns(by_t, df.columns)
    prepared = prepare_trials(df, infra, reward)
    by_t = resolve_by(prepared, by_t, pool_setups)  # setups are not repeated trials of one experiment
    outcomes, keys, tkeys = trial_outcomes(prepared, by_t)
    rows, per_trial, tasks = [], [], []
    for key, g in outcomes.group_by(keys, maintain_order=True):
        row, pt, tk = group_stats(g, tkeys, float(alpha), ms_t)
        kv = dict(zip(by_t, key)) if by_t else {}
        rows.append({**kv, **row})
        lit = [pl.lit(v, dtype=prepared.schema[c]).alias(c) for c, v in kv.items()]
        per_trial.append(pt.with_columns(lit).select([*by_t, "trial_index", "n_tasks", "pass1"]))
        tasks.append(tk.with_columns(lit).select([*by_t, *tkeys, "n", "c", "rate", "flaky"]))
    schema = {c: prepared.schema[c] for c in by_t}
    schema.update(_FRAME_SCHEMA)
    for m in ms_t:
        if m != 1:
            schema[f"sd_m{m}"] = pl.Float64
            schema[f"mdd_m{m}"] = pl.Float64
    order = [*by_t, *[c for c in _frame_order(ms_t)]]
    frame = pl.DataFrame(rows, schema=schema).select(order) if rows else pl.DataFrame(schema=schema).select(order)
    per_trial_f = pl.concat(per_trial) if per_trial else pl.DataFrame()
    tasks_f = pl.concat(tasks) if tasks else pl.DataFrame()
    oc = outcomes.drop("ranked") if by_t else outcomes.drop("ranked", "__all__")
    ranking, rankings = rank_agents(frame, by_t, rank_by, float(alpha))
    return ConsistencyResult(by_t, infra, float(alpha), reward, ms_t, rank_by, frame, per_trial_f, tasks_f, oc, ranking, rankings)


_FRAME_SCHEMA: dict[str, Any] = {
    "n_tasks": pl.Int64,
    "n_tasks_no_kept": pl.Int64,
    "n_trials_min": pl.Int64,
    "n_trials_max": pl.Int64,
    "n_trials_mean": pl.Float64,
    "n_obs": pl.Int64,
    "infra_error_count": pl.Int64,
    "pass1": pl.Float64,
    "n_trial_indices": pl.Int64,
    "pass1_per_trial": pl.List(pl.Float64),
    "pass1_spread": pl.Float64,
    "flip_rate": pl.Float64,
    "n_flaky": pl.Int64,
    "icc": pl.Float64,
    "icc_low": pl.Float64,
    "icc_high": pl.Float64,
    "icc_n0": pl.Float64,
    "bb_rho": pl.Float64,
    "bb_mean": pl.Float64,
    "se_rerun": pl.Float64,
    "sd_single_run": pl.Float64,
    "mdd_single_runs": pl.Float64,
    "mdd_single_runs_size": pl.Float64,
    "note": pl.String,
}


def _frame_order(ms: tuple[int, ...]) -> list[str]:
    base = list(_FRAME_SCHEMA)
    base.remove("note")
    i = base.index("sd_single_run") + 1
    base[i:i] = [f"sd_m{m}" for m in ms if m != 1]
    base += [f"mdd_m{m}" for m in ms if m != 1]
    return [*base, "note"]

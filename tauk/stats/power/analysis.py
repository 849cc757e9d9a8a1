"""How many tasks (and trials per task) a paired comparison needs (docs/spec.md §4): :func:`power_analysis`.

The plan is for the two-sided paired t test with T − 1 df (:func:`tauk.stats.compare` with ``test="t"``).
:func:`~tauk.stats.compare`'s default, the score test, rejected no more often than the t in any cell of its
calibration away from δ = 0 and at most a few points less (docs/calibration/comparisons.md), so a plan for the t is a
plan for the default test up to that shortfall. Its power
against a mean per-task difference δ is that of the noncentral t (:func:`tauk.stats.power.planning.power_t`),

    power(T) = P(|t'_{T−1}(λ)| > t_{T−1, 1−α/2}),   λ = δ·√T / σ_d,   σ_d² = Var(d_t),

and the tasks needed are the smallest T with power(T) ≥ 1 − β (:func:`tasks_needed`; the normal formula
T = (z_{1−α/2} + z_{1−β})²·σ_d²/δ² used before is 1–3 tasks short).

With m trials per task and agent, Var(d_t) = σ²_between + σ²_within / m (pass^1). From a pilot
(:mod:`tauk.stats.power.variance`):

* **paired pilot** (both agents on the same tasks, ≥ 2 trials): σ²_within from the unbiased per-task trial
  variances c(n−c)/(n(n−1)) of each agent, σ²_between = Var(d̂_t) − the pilot's trial noise (reported clipped at
  0; plans at up to the pilot's trials per task use it unclipped). With one trial per task only Var(d_t) at m = 1
  is identified: the within part is 0 (more trials do not help: a conservative plan) unless an ``icc`` is stated;
* **single-agent pilot**: the two future agents are taken to share task difficulty (pairing removes it), to differ
  task by task with a stated ``disagreement`` variance (default 0), and to have the pilot agent's trial noise:
  σ²_within = 2·E[p(1−p)], estimated without bias from tasks with ≥ 2 trials; with one trial per task bounded by
  p̄(1−p̄) (or (1 − icc)·p̄(1−p̄) for a stated ``icc``). (Before: twice the pilot's total per-task variance, i.e. two
  *independent* agents — it counted the between-task spread of difficulty that pairing removes, and planned 3–4×
  too many tasks at 4 trials per task.)

Claim: the plans deliver the power they promise (the measurements: ``docs/calibration/comparisons.md``, power
plans).

Entry point: :func:`power_analysis` (``power(delta, alpha, power, …)``, whose parameter shared its name, is kept for
one release as a deprecated alias). The target power is ``target_power`` everywhere (1 − β).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tauk.conventions import INFRA
from tauk.errors import StatsWarning, TaukError
from tauk.table import SummaryTable

from ..comparisons.pairing import pair_tasks
from ..comparisons.results import Comparison
from ..tasks import as_trials, prepare_trials, task_groups
from .planning import ALPHA, TARGET_POWER, plan, power_t, tasks_needed
from .variance import pilot_df, variance_from_paired_pilot, variance_from_pilot

__all__ = ["PowerResult", "power_analysis", "power", "FRAME_SCHEMA", "TRIALS_PER_TASK"]

TRIALS_PER_TASK: tuple[int, ...] = (1, 2, 3, 4, 8, 16)
"""Default trials per task of the power table."""


@dataclass(frozen=True)
class PowerResult:
    """Tasks needed for a paired comparison (immutable; from :func:`power_analysis`).

    ``frame``: trials_per_task, var_d (per-task variance of the difference at that n), tasks_needed,
    trials_needed (per agent = n · T), power (of the paired t test at that many tasks). ``var_between`` /
    ``var_within``: Var(d_t) = var_between + var_within / n; ``icc`` = var_between / (var_between + var_within)
    (null when the pilot cannot tell, or ``var_d`` was given); ``identified``: both parts estimated from the pilot
    (False when an assumption or a bound fills a gap, said in ``note``); ``var_p``: the pilot's between-task
    variance of p (single-agent pilots).
    """

    delta: float
    alpha: float
    target_power: float
    var_d: float | None  # at the pilot's trials per task (or as given)
    var_between: float | None
    var_within: float | None
    icc: float | None
    pilot_trials_per_task: float | None
    pilot_tasks: int | None
    source: str  # "var_d" | "paired pilot[, 1 trial/task]" | "single-agent pilot[, 1 trial/task]"
    frame: pl.DataFrame
    note: str = ""
    identified: bool = True
    var_p: float | None = None
    df: float | None = None  # effective degrees of freedom of var_d (None: taken as known)

    def to_frame(self) -> pl.DataFrame:
        """One row per trials-per-task value."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per trials-per-task value (the rows of :meth:`to_frame`)."""
        return self.frame.to_dicts()

    @property
    def power(self) -> float:
        """Deprecated: the target power, now :attr:`target_power`."""
        warnings.warn("PowerResult.power is deprecated; use .target_power", DeprecationWarning, stacklevel=2)
        return self.target_power

    @property
    def tasks_needed(self) -> int | None:
        """Tasks needed at the pilot's own trials per task (or for the given var_d)."""
        if self.var_d is None:
            return None
        return tasks_needed(self.delta, self.var_d, alpha=self.alpha, target_power=self.target_power, df=self.df)

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): tasks needed per trials per task, with the variance split as notes."""
        rows = [[r["trials_per_task"], r["var_d"], r["tasks_needed"], r["trials_needed"], r["power"]]
                for r in self.frame.iter_rows(named=True)]  # fmt: skip
        notes = [
            f"δ = {self.delta}, two-sided α = {self.alpha}, power = {self.target_power}; source: {self.source}",
            "tasks needed for the paired t test (compare(test='t'); noncentral t, T − 1 df); compare()'s default "
            "score test rejects no more often than the t, at most a few points less (docs/calibration/comparisons.md)",
            ("Var(d_t): not estimated" if self.var_d is None else f"Var(d_t) = {round(self.var_d, 6)}")
            + " at the pilot's trials per task"
            + ("" if self.pilot_trials_per_task is None else f" ({self.pilot_trials_per_task:g})"),
        ]
        if self.var_between is not None:
            icc = "" if self.icc is None else f", ICC = {self.icc:.3f}"
            notes.append(f"Var(d_t) = σ²_between + σ²_within / n: σ²_between = {self.var_between:.6g}, "
                         f"σ²_within = {self.var_within:.6g}{icc}")  # fmt: skip
        if self.df is not None:
            notes.append(f"planned for the power on average over the pilot's uncertainty about Var(d_t) (jackknife "
                         f"over its {self.pilot_tasks} tasks: {self.df:.0f} degrees of freedom at its trials per "
                         "task); power_analysis(..., pilot_uncertainty=False) plugs the estimate in")  # fmt: skip
        if self.note:
            notes.append(("" if self.identified else "not identified from the pilot: ") + self.note)
        return SummaryTable.build("tasks needed", ["trials/task", "Var(d_t)", "tasks", "trials/agent", "power"], rows,
                                  notes)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def power_analysis(
    pilot: Comparison | Any = None,
    *,
    delta: float,
    alpha: float = ALPHA,
    target_power: float = TARGET_POWER,
    var_d: float | None = None,
    trials_per_task: Sequence[int] = TRIALS_PER_TASK,
    a: str | None = None,
    b: str | None = None,
    label: str = "agent",
    infra: str = INFRA,
    reward: str = "reward",
    disagreement: float = 0.0,
    icc: float | None = None,
    pilot_uncertainty: bool = True,
) -> PowerResult:
    """Tasks needed to detect a pass^1 difference ``delta`` with the paired t test, and how that falls with
    trials per task.

    Give either a ``pilot`` or ``var_d`` (the per-task variance of the difference). A pilot of both agents is paired
    like a comparison; a pilot of one agent plans for two agents that share its task difficulty and trial noise
    (see the module docs: ``disagreement``, ``icc``).

    Parameters
    ----------
    pilot
        A :class:`Comparison` at k = 1, or a trials frame / :class:`tauk.Results`: with ``a`` and ``b`` (or exactly
        two ``label`` values) it is paired like a comparison; with one agent see above. ``None`` with ``var_d``.
    delta
        The pass^1 difference to detect (keyword, required).
    alpha
        Two-sided level of the test (default 0.05).
    target_power
        Power 1 − β (default 0.8).
    var_d
        The per-task variance of the difference, instead of a pilot.
    trials_per_task
        The trials per task of the table (default 1, 2, 3, 4, 8, 16; needs a pilot with ≥ 2 trials per task).
    a, b, label
        The two ``label`` values to pair in a trials-frame pilot.
    infra, reward
        As for :func:`pass_hat_k` (trials-frame pilots).
    disagreement
        Single-agent pilots: the variance across tasks of p_A,t − p_B,t you expect (default 0: the agents differ
        by the same amount on every task). ``2 · var_p`` reproduces the old two-independent-agents rule.
    icc
        One-trial pilots: the intra-task correlation Var_t(p) / (p̄(1 − p̄)) to assume, which one trial per task
        cannot estimate (0.40 on τ-bench's gpt-4o airline run). Without it a single-agent plan uses the bound
        p̄(1 − p̄) and a paired plan assumes more trials per task do not help (both conservative).
    pilot_uncertainty
        Plan for ``target_power`` on average over what the pilot leaves uncertain about Var(d_t) (default): its
        estimate's effective degrees of freedom come from a jackknife over the pilot's tasks
        (:func:`tauk.stats.power.variance.pilot_df`). False plugs the estimate in, which delivered up to 2.5 points
        less power than planned from 50-task pilots (power is concave in the variance).

    Returns
    -------
    PowerResult
        ``tasks_needed`` (at the pilot's trials per task), ``to_frame()`` (one row per trials per task),
        ``records()``, ``summary()``.

    Raises
    ------
    TaukError
        When both or neither of ``pilot`` and ``var_d`` are given, or on a bad option.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> pw = tauk.stats.power_analysis(res, delta=0.1, a="atlas-small", b="baseline", trials_per_task=[1, 4])
    >>> pw.tasks_needed, pw.to_frame()["tasks_needed"].to_list()
    (79, [313, 79])
    >>> tauk.stats.power_analysis(res.filter(agent="baseline"), delta=0.1, trials_per_task=[1, 4]).tasks_needed
    72
    >>> tauk.stats.power_analysis(delta=0.1, var_d=0.25).tasks_needed
    199
    """
    if (var_d is None) == (pilot is None):
        raise TaukError("give exactly one of var_d or pilot")
    tasks_needed(delta, 1.0, alpha=alpha, target_power=target_power)  # validates
    bad = [m for m in trials_per_task if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1]
    if bad:
        raise TaukError(f"trials_per_task must be positive integers (trials of each task in the planned run), got "
                        f"{list(trials_per_task)!r}")  # fmt: skip
    if not (isinstance(disagreement, numbers.Real) and 0.0 <= disagreement < float("inf")):
        raise TaukError(f"disagreement must be a finite variance ≥ 0, got {disagreement!r}")
    if var_d is not None and (icc is not None or disagreement):
        raise TaukError("icc and disagreement describe a pilot; with var_d they would be ignored")
    if var_d is not None:
        if not 0 <= var_d < float("inf"):
            raise TaukError(f"var_d must be a finite number ≥ 0, got {var_d}")
        T = tasks_needed(delta, var_d, alpha=alpha, target_power=target_power)
        frame = pl.DataFrame([{"trials_per_task": None, "var_d": float(var_d), "tasks_needed": T, "trials_needed": None,
                               "power": power_t(T, delta, float(var_d), alpha=alpha)}], schema=FRAME_SCHEMA)  # fmt: skip
        return PowerResult(float(delta), alpha, target_power, float(var_d), None, None, None, None, None, "var_d", frame)

    if isinstance(pilot, Comparison):
        if pilot.k != 1:
            raise TaukError("the between/within split is for pass^1 (k = 1); pass var_d for other k")
        t = pilot.tasks
        pairs = [(t["n_a"].to_numpy(), t["c_a"].to_numpy()), (t["n_b"].to_numpy(), t["c_b"].to_numpy())]
    else:
        df = prepare_trials(as_trials(pilot), infra, reward)
        labels = [x for x in (a, b) if x is not None]
        if not labels:
            labels = sorted(df[label].drop_nulls().unique().to_list())
        if len(labels) == 2:
            df = df.filter(pl.col(label).is_in(labels))
            gs = {g.key: g for g in task_groups(df, (label, "setup"))}
            if {a for a, _ in gs} != set(labels):
                raise TaukError(f"pilot lacks trials for {set(labels) - {a for a, _ in gs}}")
            # tasks are paired within a setup, as compare() pairs them: two setups' task ids are not the same tasks
            ran = [{st for x, st in gs if x == lab} for lab in labels]
            shared = sorted(ran[0] & ran[1], key=lambda x: (x is None, str(x)))
            if not shared:
                raise TaukError(f"the pilot's agents {labels[0]!r} and {labels[1]!r} share no setup (they ran "
                                f"{'; '.join(sorted(map(str, ran[0] | ran[1])))}): its tasks are paired within a "
                                "setup, as compare() pairs them; give a pilot of both agents in one setup, or var_d")  # fmt: skip
            pts = [pair_tasks(gs[(labels[0], st)], gs[(labels[1], st)], 1) for st in shared]
            pairs = [tuple(np.concatenate([getattr(pt, f) for pt in pts]) for f in fs)
                     for fs in (("n_a", "c_a"), ("n_b", "c_b"))]  # fmt: skip
        elif len(labels) == 1:
            df = df.filter(pl.col(label) == labels[0]) if label in df.columns else df
            # a task of each setup is a task of its own (trials of two setups are not repeats of one task)
            gs = task_groups(df, ("setup",))
            if not gs:
                raise TaukError(f"pilot lacks trials for {labels[0]!r}")
            pairs = [(np.concatenate([g.n for g in gs]), np.concatenate([g.c for g in gs]))]
        else:
            raise TaukError(f"the pilot has {len(labels)} values of {label!r}; give a and b")
    if pairs[0][0].size < 2:
        raise TaukError("the pilot needs at least 2 tasks to estimate a variance")
    if len(pairs) == 2:
        if disagreement:
            raise TaukError("disagreement is for a pilot of one agent: a paired pilot measures how the two agents "
                            "differ task by task (leave it at 0)")
        def fit(a):
            return variance_from_paired_pilot(*a, icc=icc)
    else:
        def fit(a):
            return variance_from_pilot(*a, disagreement=disagreement, icc=icc)
    arrays = [x for pair in pairs for x in pair]
    model = fit(arrays)
    between, within = model.between, model.within
    mean_n = float(np.mean([n.mean() for n, _ in pairs]))
    ms = sorted({int(n) for n in trials_per_task})
    with warnings.catch_warnings():  # the jackknife refits the pilot: what the fit had to say was said above
        warnings.simplefilter("ignore", StatsWarning)
        dfs = pilot_df(fit, arrays, [*ms, mean_n]) if pilot_uncertainty else [None] * (len(ms) + 1)
    if model.identified and len(pairs) == 2:
        share = between / (between + within) if between + within > 0 else None
    else:  # one agent: the between part is the stated disagreement; one trial: the icc stated (or None)
        share = icc
    rows = [plan(delta, model, trials=[m], alpha=alpha, target_power=target_power, df=d)[0] for m, d in zip(ms, dfs)]
    if not model.var_d(mean_n) > 0 and not any((r["var_d"] or 0) > 0 for r in rows):
        # nothing in the pilot varies (every trial of every task the same outcome, every d̂_t equal): it cannot say
        # how much the difference varies, and Var(d_t) = 0 would plan 2 tasks at power 1
        why = (f"nothing in the pilot varies ({int(pairs[0][0].size)} tasks, every per-task difference the same and "
               "no trial noise): it cannot tell how much the difference varies from task to task; no plan — give "
               "var_d (at most 1 − δ² for a difference of pass^1) or run a pilot whose outcomes vary")  # fmt: skip
        warnings.warn(StatsWarning(f"power_analysis: {why}"), stacklevel=2)
        rows = [{**r, "tasks_needed": None, "trials_needed": None, "power": None} for r in rows]
        return PowerResult(float(delta), alpha, target_power, None, between, within, None, mean_n,
                           int(pairs[0][0].size), model.source, pl.DataFrame(rows, schema=FRAME_SCHEMA), why, False,
                           model.var_p, None)  # fmt: skip
    frame = pl.DataFrame(rows, schema=FRAME_SCHEMA)
    # the headline figure at the pilot's own (mean) trials per task follows the same model as the table (for a
    # paired pilot with equal trials per task, the observed Var(d̂_t): VarianceModel.var_d)
    return PowerResult(float(delta), alpha, target_power, model.var_d(mean_n), between, within, share, mean_n,
                       int(pairs[0][0].size), model.source, frame, model.note, model.identified,
                       model.var_p, dfs[-1])  # fmt: skip


FRAME_SCHEMA = {"trials_per_task": pl.Int64, "var_d": pl.Float64, "tasks_needed": pl.Int64, "trials_needed": pl.Int64,
                "power": pl.Float64}  # fmt: skip


def power(
    delta: float,
    alpha: float = ALPHA,
    power: float = TARGET_POWER,
    var_d: float | None = None,
    pilot: Comparison | Any = None,
    trials_per_task: Sequence[int] = TRIALS_PER_TASK,
    a: str | None = None,
    b: str | None = None,
    label: str = "agent",
    infra: str = INFRA,
) -> PowerResult:
    """Deprecated alias of :func:`power_analysis` (its parameter ``power`` is now ``target_power``).

    Kept for one release: every call emits a :class:`DeprecationWarning` and is forwarded unchanged.
    ``power(delta, alpha, power, var_d=..., pilot=...)`` is ``power_analysis(pilot, delta=delta, alpha=alpha,
    target_power=power, var_d=var_d)``.
    """
    warnings.warn(
        "tauk.stats.power() is deprecated and will be removed in the next release; use "
        "tauk.stats.power_analysis(pilot, delta=..., alpha=..., target_power=..., var_d=...) "
        "(its parameter `power` is now `target_power`)",
        DeprecationWarning,
        stacklevel=2,
    )
    return power_analysis(pilot, delta=delta, alpha=alpha, target_power=power, var_d=var_d,
                          trials_per_task=trials_per_task, a=a, b=b, label=label, infra=infra)  # fmt: skip

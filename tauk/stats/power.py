"""How many tasks (and trials per task) a paired comparison needs (SPEC §4).

Tasks needed to detect a mean per-task difference δ with a two-sided level-α test of power 1−β:

    T = (z_{1−α/2} + z_{1−β})² · Var(d_t) / δ²

With n trials per task and agent, the variance of a task's observed difference splits into a between-task part
(real differences in how hard each task is for A versus B) and a within-task part (trial noise):

    Var(d̄_t with n trials) = σ²_between + σ²_within / n

σ²_within is estimated from pilot data with the unbiased per-task trial variance c(n−c)/(n(n−1)) of each agent
(needs n ≥ 2), σ²_between as the observed Var(d̄_t) minus the pilot's own trial noise (clipped at 0). The ICC
σ²_between / (σ²_between + σ²_within) says how much more trials per task can help: adding trials only shrinks the
within part, so the tasks needed fall towards (z…)²·σ²_between/δ² and never below.

Entry point: :func:`power_analysis` (``power(delta, alpha, power, …)``, whose parameter shared its name, is kept for
one release as a deprecated alias). The target power is ``target_power`` everywhere (1 − β).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import special

from tauk._compat import keyword_options
from tauk.conventions import INFRA
from tauk.errors import TaukError
from tauk.table import SummaryTable

from ._core import as_trials, prepare_trials, task_groups
from ._pairing import pair_tasks
from .compare import Comparison

__all__ = ["PowerResult", "power_analysis", "power", "tasks_needed"]

ALPHA = 0.05
"""Default two-sided level of the test a power analysis plans for."""

TARGET_POWER = 0.8
"""Default power (1 − β) a power analysis plans for."""

TRIALS_PER_TASK: tuple[int, ...] = (1, 2, 3, 4, 8, 16)
"""Default trials per task of the power table."""


@keyword_options(("delta", "var_d", "alpha", "power"), renamed={"power": "target_power"})
def tasks_needed(delta: float, var_d: float, *, alpha: float = ALPHA, target_power: float = TARGET_POWER) -> int:
    """Tasks needed to detect a mean per-task difference ``delta``: T = ceil((z_{1−α/2} + z_{1−β})² · Var(d_t) / δ²).

    Parameters
    ----------
    delta
        The difference to detect (nonzero).
    var_d
        The per-task variance of the paired difference d_t.
    alpha
        Two-sided level of the test (default 0.05).
    target_power
        Power 1 − β (default 0.8). (Called ``power`` before; ``power=`` still works for one release.)

    Returns
    -------
    int
        The number of tasks.

    Raises
    ------
    TaukError
        When ``delta`` is 0 or ``alpha`` / ``target_power`` lie outside (0, 1).

    Examples
    --------
    >>> tasks_needed(0.1, 0.25), tasks_needed(0.1, 0.25, target_power=0.9)
    (197, 263)
    """
    if delta == 0:
        raise TaukError("delta must be nonzero")
    if not (0 < alpha < 1 and 0 < target_power < 1):
        raise TaukError("alpha and target_power must lie in (0, 1)")
    z = special.ndtri(1 - alpha / 2) + special.ndtri(target_power)
    return int(math.ceil(z * z * float(var_d) / (delta * delta) - 1e-12))


@dataclass(frozen=True)
class PowerResult:
    """Tasks needed for a paired comparison (immutable; from :func:`power_analysis`).

    ``frame``: trials_per_task, var_d (per-task variance of the difference at that n), tasks_needed,
    trials_needed (per agent = n · T). ``var_between``/``var_within``/``icc`` are null when not estimable
    (a pilot with one trial per task, or ``var_d`` given directly).
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
    source: str  # "var_d" | "paired pilot" | "single-agent pilot (×2, independent agents)"
    frame: pl.DataFrame

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
        return tasks_needed(self.delta, self.var_d, alpha=self.alpha, target_power=self.target_power)

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): tasks needed per trials per task, with the variance split as notes."""
        rows = [[r["trials_per_task"], r["var_d"], r["tasks_needed"], r["trials_needed"]] for r in self.frame.iter_rows(named=True)]
        notes = [
            f"δ = {self.delta}, two-sided α = {self.alpha}, power = {self.target_power}; source: {self.source}",
            f"Var(d_t) = {self.var_d if self.var_d is None else round(self.var_d, 6)} at the pilot's trials per task"
            + ("" if self.pilot_trials_per_task is None else f" ({self.pilot_trials_per_task:g})"),
        ]
        if self.icc is not None:
            notes.append(
                f"σ²_between = {self.var_between:.6g}, σ²_within = {self.var_within:.6g}, ICC = {self.icc:.3f}"
            )
        else:
            notes.append("between/within split not estimable (needs ≥ 2 trials per task in the pilot)")
        return SummaryTable.build("tasks needed", ["trials/task", "Var(d_t)", "tasks", "trials/agent"], rows, notes)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _trial_var(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Unbiased per-task variance of one trial's success, c(n−c)/(n(n−1)) (NaN when n < 2)."""
    n = n.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= 2, c * (n - c) / (n * (n - 1)), np.nan)


def _split(pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float | None, float | None, float]:
    """From per-agent (n, c) arrays aligned on tasks: (Var(d̄_t) observed, σ²_between, σ²_within, mean n)."""
    phat = [c / n for n, c in pairs]
    d = phat[0] - phat[1] if len(pairs) == 2 else phat[0]
    if d.size < 2:
        raise TaukError("the pilot needs at least 2 tasks to estimate a variance")
    v_obs = float(np.var(d, ddof=1))
    s2 = [_trial_var(n, c) for n, c in pairs]
    mean_n = float(np.mean([n.mean() for n, _ in pairs]))
    if any(np.isnan(s).any() for s in s2):
        return v_obs, None, None, mean_n
    noise = float(np.mean(sum(s / n for s, (n, _) in zip(s2, pairs))))
    within = float(np.mean(sum(s2)))
    between = max(v_obs - noise, 0.0)
    return v_obs, between, within, mean_n


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
) -> PowerResult:
    """Tasks needed to detect a pass^1 difference ``delta`` (paired, two-sided), and how that falls with trials/task.

    Give either a ``pilot`` or ``var_d`` (the per-task variance of the difference). With a single agent in the
    pilot, Var(d_t) is taken as twice that agent's per-task variance, i.e. two *independent* agents of the same
    spread (conservative: real agents' successes correlate across tasks, which pairing removes).

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
    >>> tauk.stats.power_analysis(delta=0.1, var_d=0.25).tasks_needed
    197
    """
    if (var_d is None) == (pilot is None):
        raise TaukError("give exactly one of var_d or pilot")
    tasks_needed(delta, 1.0, alpha=alpha, target_power=target_power)  # validates
    if var_d is not None:
        if var_d < 0:
            raise TaukError("var_d must be ≥ 0")
        frame = pl.DataFrame(
            {"trials_per_task": [None], "var_d": [float(var_d)], "tasks_needed": [tasks_needed(delta, var_d, alpha=alpha, target_power=target_power)],
             "trials_needed": [None]},
            schema={"trials_per_task": pl.Int64, "var_d": pl.Float64, "tasks_needed": pl.Int64, "trials_needed": pl.Int64},
        )
        return PowerResult(float(delta), alpha, target_power, float(var_d), None, None, None, None, None, "var_d", frame)

    if isinstance(pilot, Comparison):
        if pilot.k != 1:
            raise TaukError("the between/within split is for pass^1 (k = 1); pass var_d for other k")
        t = pilot.tasks
        pairs = [(t["n_a"].to_numpy(), t["c_a"].to_numpy()), (t["n_b"].to_numpy(), t["c_b"].to_numpy())]
        source = "paired pilot"
    else:
        df = prepare_trials(as_trials(pilot), infra, reward)
        labels = [x for x in (a, b) if x is not None]
        if not labels:
            labels = sorted(df[label].drop_nulls().unique().to_list())
        if len(labels) == 2:
            df = df.filter(pl.col(label).is_in(labels))
            gs = {g.key[0]: g for g in task_groups(df, (label,))}
            if set(gs) != set(labels):
                raise TaukError(f"pilot lacks trials for {set(labels) - set(gs)}")
            pt = pair_tasks(gs[labels[0]], gs[labels[1]], 1)
            pairs = [(pt.n_a, pt.c_a), (pt.n_b, pt.c_b)]
            source = "paired pilot"
        elif len(labels) == 1:
            df = df.filter(pl.col(label) == labels[0]) if label in df.columns else df
            (g,) = task_groups(df, ())
            pairs = [(g.n, g.c)]
            source = "single-agent pilot (×2, independent agents)"
        else:
            raise TaukError(f"the pilot has {len(labels)} values of {label!r}; give a and b")
    v_obs, between, within, mean_n = _split(pairs)
    factor = 2.0 if len(pairs) == 1 else 1.0
    v_obs *= factor
    if between is not None:
        between *= factor
        within *= factor
        icc = between / (between + within) if between + within > 0 else None
        ns = sorted({int(n) for n in trials_per_task})
        vs = [between + within / n for n in ns]
        # the headline figure at the pilot's own trials per task follows the same model as the table (with
        # σ²_between clipped at 0 it is the pilot's trial noise, slightly above the observed variance)
        v_obs = between + within / mean_n
    else:
        icc = None
        ns = [int(round(mean_n))]
        vs = [v_obs]
    T = [tasks_needed(delta, v, alpha=alpha, target_power=target_power) for v in vs]
    frame = pl.DataFrame(
        {"trials_per_task": ns, "var_d": vs, "tasks_needed": T, "trials_needed": [n * t for n, t in zip(ns, T)]},
        schema={"trials_per_task": pl.Int64, "var_d": pl.Float64, "tasks_needed": pl.Int64, "trials_needed": pl.Int64},
    )
    return PowerResult(
        float(delta), alpha, target_power, v_obs, between, within, icc, mean_n, int(pairs[0][0].size), source, frame
    )


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

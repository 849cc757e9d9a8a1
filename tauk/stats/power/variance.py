"""Var(d_t) — the per-task variance of a paired difference — from pilot data, and how sure the pilot is of it.

Var(d_t) from pilot data (pass^1, m trials per task and agent)
----------------------------------------------------------------
    Var(d_t) = σ²_between + w / m,   σ²_between = Var_t(p_A,t − p_B,t),   w = E_t[p_A(1 − p_A) + p_B(1 − p_B)].

* **Paired pilot** (both agents, n ≥ 2 trials): w from the unbiased per-task c(n − c)/(n(n − 1)) of each agent,
  σ²_between = Var(d̂_t) − mean_t(trial noise) (reported clipped at 0; see :meth:`VarianceModel.var_d`). With
  n = 1, Var(d_t) at one trial is identified (the sample variance of d_t) but not its split: planning at m = 1 uses
  it as is; for m > 1 the within part is (1 − icc)·(p̄_A(1 − p̄_A) + p̄_B(1 − p̄_B)) with a given ``icc``, else 0
  (conservative: more trials do not help).
* **Single-agent pilot**: the future agents are assumed to share task difficulty — p_A,t − p_B,t is the same on
  every task up to a task-by-agent *disagreement* variance that the caller states (``disagreement``, default 0) —
  and to have the pilot agent's trial noise: w = 2·E[p(1 − p)]. The old rule (twice the pilot's Var(p̂_t), i.e.
  two *independent* agents) counts the between-task spread of difficulty, 2·Var_t(p), which pairing removes; it
  is ``disagreement = 2·var_p`` here (``var_p`` is reported). With n ≥ 2, E[p(1 − p)] is estimated unbiasedly.
  With n = 1 it is **not identifiable**: one Bernoulli per task gives p̄(1 − p̄) = E[p(1 − p)] + Var_t(p) and
  nothing separates the two terms; the default is the upper bound E[p(1 − p)] ≤ p̄(1 − p̄) (icc = 0, a
  conservative plan), or (1 − icc)·p̄(1 − p̄) for a stated icc = Var_t(p)/(p̄(1 − p̄)) (0.40 on τ-bench's gpt-4o
  airline run, 50 tasks × 4 trials).

For pass^k with k > 1 give Var(d_t) directly (e.g. the sample variance of a paired pilot's d_t at the planned n).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from tauk.errors import StatsWarning, TaukError


def _icc_unused(icc: float | None) -> None:
    """Warn that a stated ``icc`` is not used: the pilot has tasks with ≥ 2 trials, which measure the split."""
    if icc is not None:
        warnings.warn(f"icc = {icc:g} not used: the pilot has tasks with ≥ 2 trials, which measure the split of "
                      "Var(d_t) into between- and within-task parts", StatsWarning, stacklevel=4)

__all__ = ["VarianceModel", "variance_from_pilot", "variance_from_paired_pilot", "pilot_df"]


class VarianceModel(NamedTuple):
    """Var(d_t) with m trials per task and agent = ``between`` + ``within`` / m (pass^1).

    ``identified``: both parts estimated from the pilot (False when an assumption or a bound fills a gap, stated in
    ``note``); ``var_p``: the pilot's between-task variance of p (per agent), for reference.
    """

    between: float
    within: float
    source: str
    identified: bool
    note: str
    var_p: float | None = None
    between_raw: float | None = None  # a paired pilot's unclipped estimate of σ²_between (used where it is < 0)
    pilot_trials: float | None = None  # within / trial noise: the trials per task at which between_raw + within/m
    # is the observed Var(d̂_t) (the pilot's trials per task when every task has the same)

    def var_d(self, trials: float) -> float:
        """Var(d_t) at ``trials`` per task. Where the unclipped σ²_between is negative, up to the pilot's own
        trials per task it is used as is (unbiased; with equal trials per task the estimate there is the observed
        Var(d̂_t)), beyond them the smaller of that and within/trials (more trials never plan for more variance)."""
        if self.between_raw is None or self.between_raw >= 0 or self.pilot_trials is None:
            return self.between + self.within / trials
        at_pilot = self.between_raw + self.within / self.pilot_trials
        if trials <= self.pilot_trials:
            return self.between_raw + self.within / trials
        return min(at_pilot, self.within / trials)


def _split_counts(n, c):
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if n.shape != c.shape or n.ndim != 1:
        raise TaukError("n and c must be 1-d arrays of the same length")
    if n.size < 2:
        raise TaukError("the pilot needs at least 2 tasks")
    if np.any(n < 1) or np.any(c < 0) or np.any(c > n):
        raise TaukError("need 1 ≤ n_t and 0 ≤ c_t ≤ n_t")
    return n, c


def _pq(n: np.ndarray, c: np.ndarray) -> tuple[float | None, float | None]:
    """(Ê[p(1−p)] over tasks with n ≥ 2, Ŝ Var_t(p)), both unbiased; (None, None) when no task has 2 trials."""
    ok = n >= 2
    if not ok.any():
        return None, None
    nn, cc = n[ok].astype(np.float64), c[ok].astype(np.float64)
    w_t = cc * (nn - cc) / (nn * (nn - 1))
    ph = cc / nn
    var_p = float(np.var(ph, ddof=1) - np.mean(w_t / nn)) if ok.sum() > 1 else None
    return float(np.mean(w_t)), (None if var_p is None else max(var_p, 0.0))


def variance_from_pilot(n, c, *, disagreement: float = 0.0, icc: float | None = None) -> VarianceModel:
    """Var(d_t) model for comparing two future agents like the pilot agent (shared task difficulty).

    between = ``disagreement`` (σ² of p_A,t − p_B,t across tasks, stated by the caller; 0 = the agents differ by the
    same amount on every task), within = 2·Ê[p(1 − p)]: from tasks with n_t ≥ 2, the unbiased mean of
    c_t(n_t − c_t)/(n_t(n_t − 1)); with one trial per task, the bound p̄(1 − p̄), or (1 − icc)·p̄(1 − p̄) for a given
    ``icc``.

    Examples
    --------
    >>> import numpy as np
    >>> from tauk.stats.power import tasks_needed, variance_from_pilot
    >>> c = np.array([0] * 14 + [1] * 12 + [2] * 10 + [3] * 4 + [4] * 10)  # τ-bench gpt-4o airline, 50 × 4
    >>> m = variance_from_pilot(np.full(50, 4), c)
    >>> round(m.within, 4), round(m.var_p, 4)
    (0.2933, 0.0997)
    >>> tasks_needed(0.1, m.var_d(4))  # old power() on the same pilot: 215
    60
    """
    n, c = _split_counts(n, c)
    if disagreement < 0:
        raise TaukError("disagreement must be ≥ 0")
    if icc is not None and not 0 <= icc < 1:
        raise TaukError("icc must lie in [0, 1)")
    w, var_p = _pq(n, c)
    if w is not None:
        _icc_unused(icc)
        return VarianceModel(float(disagreement), 2.0 * w, "single-agent pilot", True,
                             "E[p(1−p)] estimated without bias (tasks with ≥ 2 trials); shared task difficulty, "
                             f"disagreement = {disagreement:g} assumed", var_p)
    p = float(c.sum() / n.sum())
    if icc is None:
        return VarianceModel(float(disagreement), 2.0 * p * (1 - p), "single-agent pilot, 1 trial/task", False,
                             "E[p(1−p)] is not identifiable from one trial per task: upper bound p̄(1−p̄) "
                             "(conservative); give icc to use (1 − icc)·p̄(1−p̄)", None)
    return VarianceModel(float(disagreement), 2.0 * p * (1 - p) * (1 - icc), "single-agent pilot, 1 trial/task",
                         False, f"E[p(1−p)] = (1 − icc)·p̄(1−p̄) with the stated icc = {icc:g}", icc * p * (1 - p))


def _trial_variances(n: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, int]:
    """Each task's unbiased trial variance c(n − c)/(n(n − 1)); a task with one trial (which cannot estimate it)
    takes the mean of the others'. Also how many tasks had one trial."""
    multi = n >= 2
    w = np.zeros(n.size)
    w[multi] = c[multi] * (n[multi] - c[multi]) / (n[multi] * (n[multi] - 1.0))
    w[~multi] = w[multi].mean()
    return w, int((~multi).sum())


def variance_from_paired_pilot(n_a, c_a, n_b, c_b, *, icc: float | None = None) -> VarianceModel:
    """Var(d_t) model from a pilot of both agents on the same tasks (pass^1).

    With ≥ 2 trials per task: within = mean_t(ŵ_A,t + ŵ_B,t), ŵ = c(n − c)/(n(n − 1)); between =
    Var(d̂_t) − mean_t(ŵ_A,t/n_A,t + ŵ_B,t/n_B,t), clipped at 0, d̂_t = c_A/n_A − c_B/n_B; a task one agent ran
    once takes that agent's mean ŵ over its other tasks (the note says how many). With one trial per task
    Var(d̂_t) (= the variance at m = 1) is identified, its split is not: within = (1 − icc)·(p̄_A q̄_A + p̄_B q̄_B)
    for a stated icc, else 0 (the plan then assumes more trials per task do not help).

    Examples
    --------
    >>> import numpy as np
    >>> from tauk.stats.power.variance import variance_from_paired_pilot
    >>> ca, cb = np.array([4, 3, 0, 2, 4, 1]), np.array([3, 3, 0, 1, 2, 0])
    >>> m = variance_from_paired_pilot(np.full(6, 4), ca, np.full(6, 4), cb)
    >>> round(m.between, 4), round(m.within, 4), round(m.var_d(4), 4)  # at the pilot's 4 trials: Var(d̂_t)
    (0.0, 0.3194, 0.0354)
    >>> round(float(np.var(ca / 4 - cb / 4, ddof=1)), 4), round(m.var_d(8), 4)  # more trials never plan for more
    (0.0354, 0.0354)
    """
    n_a, c_a = _split_counts(n_a, c_a)
    n_b, c_b = _split_counts(n_b, c_b)
    if n_a.size != n_b.size:
        raise TaukError("the two agents' arrays must be aligned on the same tasks")
    d = c_a / n_a - c_b / n_b
    v = float(np.var(d, ddof=1))
    if np.any(n_a >= 2) and np.any(n_b >= 2):
        _icc_unused(icc)
        wa, fill_a = _trial_variances(n_a, c_a)
        wb, fill_b = _trial_variances(n_b, c_b)
        noise = float(np.mean(wa / n_a + wb / n_b))
        within = float(np.mean(wa + wb))
        # the trials per task at which Var(d̂_t) = between + within / m holds exactly: within / noise (= n when
        # every task has the same n)
        m_pilot = within / noise if noise > 0 else float(np.mean(np.concatenate([n_a, n_b])))
        b = v - noise
        note = "between = Var(d̂_t) − trial noise"
        filled = (f"; σ²_within from the tasks with ≥ 2 trials (one trial: {fill_a} of {n_a.size} tasks for the "
                  f"first agent, {fill_b} for the second, which take the others' mean trial variance)"
                  if fill_a or fill_b else "")  # fmt: skip
        if v <= 0:  # every task the same difference: nothing to plan with but the trial noise
            return VarianceModel(0.0, within, "paired pilot", True,
                                 note + " < 0 (every d̂_t equal), clipped at 0" + filled)  # fmt: skip
        if b < 0:
            note += (f" = {b:.4g} < 0, reported as 0; plans at up to the pilot's {m_pilot:.3g} trials per task use "
                     "it as is (with equal trials per task Var(d_t) there is the observed Var(d̂_t)), beyond them "
                     "min(that, σ²_within / n)")
        return VarianceModel(max(b, 0.0), within, "paired pilot", True, note + filled, between_raw=b,
                             pilot_trials=m_pilot)  # fmt: skip
    if icc is not None and not 0 <= icc < 1:
        raise TaukError("icc must lie in [0, 1)")
    pa, pb = float(np.mean(c_a / n_a)), float(np.mean(c_b / n_b))
    w = 0.0 if icc is None else min((1 - icc) * (pa * (1 - pa) + pb * (1 - pb)), v)
    note = ("Var(d_t) at 1 trial/task identified; its between/within split is not: "
            + ("within = 0 assumed (conservative for > 1 trial)" if icc is None else f"icc = {icc:g} assumed"))
    return VarianceModel(v - w, w, "paired pilot, 1 trial/task", False, note)


def pilot_df(
    fit: Callable[[Sequence[np.ndarray]], VarianceModel],
    arrays: Sequence[np.ndarray],
    trials: Sequence[float],
    *,
    groups: int = 200,
) -> list[float | None]:
    """Effective degrees of freedom of a pilot's Var(d_t) estimate at each number of trials per task:
    2·v² / Var̂(v), Var̂ the jackknife over the pilot's tasks (delete-a-group with ``groups`` groups above that
    many tasks). About T − 1 for the sample variance of normal data, fewer when the per-task differences are
    heavy-tailed (few discordant tasks); noisy in small pilots. ``fit(arrays)`` → :class:`VarianceModel`;
    ``arrays``: per-task arrays, cut together. T − 1 where a leave-out fit takes another branch of the model than
    the whole pilot (e.g. unequal trials per task), None (the estimate taken as known) with fewer than 3 tasks or
    where the estimate does not vary; at least 1.

    Examples
    --------
    >>> import numpy as np
    >>> from tauk.stats.power.variance import pilot_df, variance_from_paired_pilot
    >>> rng = np.random.default_rng(0)
    >>> n = np.full(50, 4); ca, cb = rng.binomial(4, 0.5, 50), rng.binomial(4, 0.45, 50)
    >>> [round(x) for x in pilot_df(lambda a: variance_from_paired_pilot(*a), [n, ca, n, cb], [1, 4])]
    [1098, 59]
    """
    T = arrays[0].size
    if T < 3:
        return [None] * len(trials)
    model = fit(list(arrays))
    full = np.array([model.var_d(m) for m in trials])
    G = min(T, groups)
    block = np.arange(T) % G
    loo = np.empty((G, len(trials)))
    for g in range(G):
        part = fit([a[block != g] for a in arrays])
        if part.source != model.source or (part.between_raw is None) != (model.between_raw is None):
            return [float(T - 1)] * len(trials)
        loo[g] = [part.var_d(m) for m in trials]
    var_jack = (G - 1) / G * ((loo - loo.mean(0)) ** 2).sum(0)
    return [None if vj <= 0 or v <= 0 else max(float(2.0 * v * v / vj), 1.0) for v, vj in zip(full, var_jack)]

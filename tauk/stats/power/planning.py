"""How many tasks a paired comparison needs, for the paired t test (docs/spec.md §4).

The plan is for compare()'s paired t test (``test="t"``, :mod:`tauk.stats.comparisons.paired_tests`; its default,
the score test, rejects no more often and at most a few points less: docs/calibration/comparisons.md), so the power at
T tasks is that of a two-sided t test with T − 1 df, from the noncentral t (:func:`power_t`):

    power(T) = P(|t'_{T−1}(λ)| > t_{T−1, 1−α/2}),   λ = δ·√T / σ_d,   σ_d² = Var(d_t),

and :func:`tasks_needed` is the smallest T with power(T) ≥ 1 − β (the normal formula
T = (z_{1−α/2} + z_{1−β})²·σ_d²/δ² is 1–3 tasks short). When Var(d_t) is a pilot's estimate, the plan is for the
power on average over what the pilot leaves uncertain (:func:`expected_power_t`: σ² = σ̂²·df/χ²_df, df from a
jackknife over the pilot's tasks, :func:`tauk.stats.power.variance.pilot_df`): power is concave in the variance,
so plugging the estimate in falls short. :func:`plan` gives the tasks needed at each number of trials per task.

Claim: with the true variance the plan delivers its power (80.7 % and 80.3 % for 80 % planned, one and four trials
per task); from 50-task pilots 79.4–80.9 % (77.5–79.9 % with the estimate plugged in). The table:
``docs/calibration/comparisons.md`` (power plans).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tauk._compat import keyword_options
from tauk._lazy import lazy
from tauk.errors import TaukError

from .variance import VarianceModel

stats = lazy("scipy.stats")

__all__ = ["ALPHA", "TARGET_POWER", "expected_power_t", "plan", "power_t", "tasks_needed"]

ALPHA = 0.05
"""Default two-sided level of the test a power analysis plans for."""

TARGET_POWER = 0.8
"""Default power (1 − β) a power analysis plans for."""


def power_t(T: int | Sequence[int] | np.ndarray, delta: float, var_d: float, *, alpha: float = ALPHA):
    """Power of the two-sided paired t test (T − 1 df) against a mean difference δ when Var(d_t) = var_d.

    power = P(t'_{T−1}(λ) > q) + P(t'_{T−1}(λ) < −q), q = t_{T−1, 1−α/2}, λ = |δ|·√(T / var_d) (noncentral t).
    NaN for T < 2. A float for scalar T, else an array.

    Examples
    --------
    >>> from tauk.stats.power.planning import power_t
    >>> round(power_t(63, 0.1, 0.0770), 3)
    0.804
    """
    Ta = np.asarray(T, dtype=np.float64)
    df = np.maximum(Ta - 1.0, 1.0)
    _check_variance(var_d)
    if var_d == 0:
        pw = np.where(Ta >= 2, 1.0, np.nan)
    else:
        ncp = abs(delta) * np.sqrt(Ta / var_d)
        q = stats.t.ppf(1.0 - alpha / 2.0, df)
        pw = np.where(Ta >= 2, _two_sided(q, df, ncp), np.nan)
    return float(pw) if pw.ndim == 0 else pw


def _check_variance(var_d: float, df: float | None = None) -> None:
    if not math.isfinite(var_d):
        raise TaukError(f"var_d must be a finite number ≥ 0, got {var_d}")
    if var_d < 0 or (df is not None and not df > 0):
        raise TaukError("var_d must be ≥ 0" if var_d < 0 else "df must be > 0")


def _two_sided(crit, df, ncp):
    """P(|t'_df(ncp)| > crit): the lower tail as sf(crit; −ncp), which stays 0 where scipy's cdf(−crit; ncp)
    returns NaN (large ncp)."""
    return np.nan_to_num(stats.nct.sf(crit, df, ncp)) + np.nan_to_num(stats.nct.sf(crit, df, -ncp))


_NODES = 48  # quantile nodes of χ²_df for the expected power over a pilot's variance estimate
_MAX_TASKS = 10**8


def expected_power_t(T: int, delta: float, var_d: float, df: float | None, *, alpha: float = ALPHA) -> float:
    """:func:`power_t` averaged over σ² = var_d·df/χ²_df — the spread of the true Var(d_t) around an estimate with
    ``df`` degrees of freedom (a 1/σ² prior); ``df=None``: ``power_t`` itself. NaN for T < 2.

    Examples
    --------
    >>> from tauk.stats.power.planning import expected_power_t
    >>> round(expected_power_t(63, 0.1, 0.0770, None), 3), round(expected_power_t(63, 0.1, 0.0770, 49), 3)
    (0.804, 0.791)
    """
    _check_variance(var_d, df)
    if T < 2:
        return float("nan")
    if df is None or var_d == 0:
        return float(power_t(T, delta, var_d, alpha=alpha))
    q = np.maximum(stats.chi2.ppf((np.arange(_NODES) + 0.5) / _NODES, df), 1e-300)
    ncp = abs(delta) * np.sqrt(T * q / (var_d * df))
    return float(np.mean(_two_sided(stats.t.ppf(1.0 - alpha / 2.0, T - 1.0), T - 1.0, ncp)))


@keyword_options(("delta", "var_d", "alpha", "power"), renamed={"power": "target_power"})
def tasks_needed(delta: float, var_d: float, *, alpha: float = ALPHA, target_power: float = TARGET_POWER,
                 df: float | None = None) -> int:  # fmt: skip
    """Tasks needed to detect a mean per-task difference ``delta`` with compare()'s paired t test (``test="t"``): the
    smallest T ≥ 2 whose power (noncentral t, T − 1 df) is at least ``target_power``.

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
    df
        When ``var_d`` is an estimate: its degrees of freedom. The plan then reaches ``target_power`` on average
        over what the estimate leaves uncertain (:func:`expected_power_t`); None (default) takes ``var_d`` as
        known.

    Returns
    -------
    int
        The number of tasks (2 when ``var_d`` is 0).

    Raises
    ------
    TaukError
        When ``delta`` is 0 or not finite, ``var_d`` is < 0 or not finite, ``df`` ≤ 0 or ``alpha`` / ``target_power`` lie outside (0, 1).

    Examples
    --------
    >>> tasks_needed(0.1, 0.25), tasks_needed(0.1, 0.25, target_power=0.9)
    (199, 265)
    >>> tasks_needed(0.1, 0.0770)  # the normal formula gives 61
    63
    >>> tasks_needed(0.1, 0.0770, df=49)  # the same variance, estimated with 49 degrees of freedom
    65
    """
    if not (0 < alpha < 1 and 0 < target_power < 1):
        raise TaukError("alpha and target_power must lie in (0, 1)")
    power, var_d = target_power, float(var_d)
    if delta == 0 or not math.isfinite(delta) or abs(delta) > 1:
        raise TaukError(f"delta must be a nonzero difference of success rates, in [−1, 1], got {delta}")
    _check_variance(var_d, df)
    if var_d == 0:
        return 2
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    T = max(2, int(math.floor(z * z * var_d / (delta * delta))))  # the normal answer is never too large
    while power_t(T, delta, var_d, alpha=alpha) < power:
        T += 1
    if df is None:
        return T
    # the expected power is below the plug-in power, so T − 1 falls short: search upward (doubling, then bisection)
    lo, hi = T - 1, T
    while expected_power_t(hi, delta, var_d, df, alpha=alpha) < power:
        lo, hi = hi, 2 * hi
        if hi > _MAX_TASKS:
            raise TaukError(f"no plan reaches power {power} below {_MAX_TASKS:,} tasks with var_d = {var_d:g} known "
                            f"to only {df:g} degrees of freedom: run a larger pilot")  # fmt: skip
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if expected_power_t(mid, delta, var_d, df, alpha=alpha) < power else (lo, mid)
    return hi


@keyword_options(("delta", "model"), renamed={"power": "target_power"})
def plan(
    delta: float,
    model: VarianceModel | float,
    *,
    trials: Sequence[int] = (1, 2, 4, 8),
    alpha: float = ALPHA,
    target_power: float = TARGET_POWER,
    df: float | None = None,
) -> list[dict]:
    """Tasks needed at each number of trials per task (rows for a table).

    ``model``: a :class:`~tauk.stats.power.variance.VarianceModel` (Var(d_t) = between + within/m at m trials) or a
    fixed Var(d_t); ``target_power`` (``power=`` before, for one release). Each row:
    trials_per_task, var_d, tasks_needed, trials_needed (per agent = m·T) and power (of the t test at that T; with
    ``df``, the pilot's degrees of freedom, the expected power over the pilot's uncertainty, as planned).

    Examples
    --------
    >>> from tauk.stats.power import VarianceModel, plan
    >>> rows = plan(0.1, VarianceModel(0.0, 0.2933, "example", True, ""), trials=(1, 4))
    >>> [(r["trials_per_task"], r["tasks_needed"]) for r in rows]
    [(1, 233), (4, 60)]
    """
    rows = []
    for m in trials:
        if m < 1:
            raise TaukError("trials per task must be ≥ 1")
        v = model.var_d(m) if isinstance(model, VarianceModel) else float(model)
        T = tasks_needed(delta, v, alpha=alpha, target_power=target_power, df=df)
        rows.append({"trials_per_task": int(m), "var_d": v, "tasks_needed": T, "trials_needed": T * int(m),
                     "power": expected_power_t(T, delta, v, df, alpha=alpha)})
    return rows

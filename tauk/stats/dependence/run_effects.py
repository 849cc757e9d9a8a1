"""A run effect shared by every task of a pass: detect it, estimate its variance, widen the intervals by it.

A **pass** is one sweep over the benchmark: one trial index of one run, ``(run_id, trial)``. τ²-bench runs trial
r of every task in the same sweep, so whatever changes between sweeps (API drift, a user-simulator change, a bad
day) shifts every task of that pass alike; several runs of one setup are several passes too. The model:

    success of task t in pass r ~ Bernoulli(p_t + b_r),  b_r independent across passes, variance σ²_run,

σ²_run on the probability scale (a logit shift of SD 0.5 at p = ½ is σ_run ≈ 0.12). Tasks and passes are crossed,
so a pass^k estimate carries both sources: a new draw of tasks, and a new draw of passes. The task intervals
(:mod:`tauk.stats.intervals`) see only the first.

Test (``run_effect_p``): **Cochran's Q** on the (task × pass) table of successes, tasks as blocks — under "no run
effect" a task's outcomes are exchangeable across its passes. Q = (R − 1)·S/E₀[S], S = Σ_r b̂_r² / (R − 1), b̂_r
the mean over the tasks of pass r of (y_tr − ȳ_t), and E₀[S] its expectation when each task's outcomes are shuffled
across its passes (exact: Σ_r Σ_{t ∈ r} v_t / |r|² / (R − 1), v_t = ȳ_t(1 − ȳ_t)); p from χ²_{R−1} (on complete
tables this is Cochran's Q exactly). Only tasks seen in ≥ 2 passes enter.

Variance (``run_var``): σ̂²_run = max(0, S − E₀[S]) (moments; b̂_r = b_r − b̄ + noise, E Σ (b_r − b̄)² / (R − 1)
= σ²_run).

Intervals: to first order a pass^k estimate moves by k·pass^(k−1)·b̄ when every pass shifts, b̄ the mean shift of
the R passes, so the run-level variance of the estimate is V_run(k) = (k·θ̂_{k−1})²·σ̂²_run / R (θ̂_0 = 1; R the
effective number of passes on an incomplete table). Each side of an interval of half-width h becomes
√(h² + t²_{R−1}·V_run): the task part as calibrated, the run part with its own R − 1 degrees of freedom (σ̂²_run
rests on R − 1 pass contrasts: with 4 passes, 3); V_run = 0 leaves it as it was. A paired comparison adds both
agents' V_run to its t variance the same way — half-width √(t²_{T−1}·s²/T + Σ t²_{R−1}·V_run), its p-value the α at
which that interval reaches 0 (:func:`satterthwaite`), so p and interval still agree.

Not identifiable: with one pass (one trial per task in one run) a run effect is part of the figure itself — it
cannot be separated from the agent (or from the difference of two agents); only re-running shows it
(:mod:`tauk.stats.noise`, the noise floor).

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> p = rng.uniform(0.2, 0.8, size=(50, 1))
>>> shift = np.array([[-0.2, 0.0, 0.0, 0.2]])  # pass 1 is a bad day, pass 4 a good one
>>> Y = (rng.uniform(size=(50, 4)) < np.clip(p + shift, 0, 1)).astype(float)
>>> re = run_effect(Y)
>>> re.n_passes, re.p_value < 0.01, round(re.var, 3)
(4, True, 0.023)
>>> run_effect(Y[:, :1]).identifiable
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import polars as pl

from tauk._lazy import lazy

from .. import _special

optimize = lazy("scipy.optimize")
stats = lazy("scipy.stats")

__all__ = [
    "PassMatrix",
    "RunEffect",
    "RUN_NOTE_ONE_PASS",
    "pass_matrices",
    "run_effect",
    "run_variance",
    "satterthwaite",
    "t_quantile",
    "widen",
]

RUN_NOTE_ONE_PASS = ("a run effect cannot be separated from the {what} with one pass (one trial per task in one "
                     "run): re-run the setup and see the noise floor (tauk.stats.noise)")  # fmt: skip
"""The note where a run effect is not identifiable (``what``: "figure", "agent difference")."""


class PassMatrix(NamedTuple):
    """One group's successes per (task, pass): ``Y`` (T × R, 1/0, NaN where the task has no kept trial in that
    pass), ``tasks`` ((domain, task_id), sorted) and ``passes`` ((run_id, trial), sorted)."""

    tasks: list[tuple]
    passes: list[tuple]
    Y: np.ndarray


@dataclass(frozen=True)
class RunEffect:
    """The run-effect test and variance of one group (from :func:`run_effect`).

    ``n_passes``: passes with a kept trial; ``n_tasks``: tasks seen in ≥ 2 passes (those that enter);
    ``statistic``: Cochran's Q (null: χ² with ``df`` degrees of freedom); ``p_value`` (None when not identifiable);
    ``var``: σ̂²_run on the probability scale (0 when the passes vary no more than chance; None when not
    identifiable); ``identifiable``: at least 2 passes and a task seen in 2 of them with different outcomes."""

    n_passes: int
    n_tasks: int
    statistic: float | None
    df: int
    p_value: float | None
    var: float | None
    identifiable: bool
    r_eff: float | None = None  # 1 / Σ_r w_r², w_r = mean over tasks of 1/m_t [t seen in r]: R on a complete table

    @property
    def sd(self) -> float | None:
        """σ̂_run (probability scale)."""
        return None if self.var is None else math.sqrt(self.var)

    def variance_of(self, k: int, theta_km1: float | None) -> float:
        """V_run(k) of a pass^k estimate: (k·θ̂_{k−1})²·σ̂²_run / R (0 when not identifiable)."""
        return run_variance(self, k, theta_km1)


NOT_IDENTIFIED = RunEffect(0, 0, None, 0, None, None, False)

SEPARATE = True
"""How :func:`widen` adds V_run to an interval: each side √(h² + t²_{R−1}·V_run) (True, the default: the run part
keeps its own R − 1 degrees of freedom) or t_ν·√((h/z)² + V_run) with Satterthwaite's ν (False). Chosen because
Satterthwaite's fell below 93 % at R = 4 passes and σ_run = 0.5 in development runs (150 replications, not kept);
the price is width where there is no run effect. The kept measurement of the default:
``docs/calibration/dependence.md``."""
ADJUST_BELOW = 1.0
"""The intervals are widened by V_run only where Cochran's p is below this (1.0: wherever σ̂²_run > 0). A gate at 0.1
roughly halved the width cost without a run effect in development runs (150 replications, not kept) but left
coverage at σ_run = 0.5, T = 50 well below 93 %, so there is none."""


def pass_matrices(df: pl.DataFrame, by: tuple[str, ...]) -> dict[tuple, PassMatrix]:
    """Per group of ``by`` (key () without ``by``), the (task × pass) successes of the kept trials of a prepared
    trials frame (:func:`tauk.stats.tasks.prepare_trials`). A pass is ``(run_id, trial)``; a null trial index
    makes the whole run one pass. Several kept trials in one cell (not expected) count by their mean."""
    need = {"_kept", "_success", "run_id", "task_id"}
    if not need <= set(df.columns):
        return {}
    keys = list(by)
    cols = [pl.col(c) for c in keys]
    dom = pl.col("domain").cast(pl.String) if "domain" in df.columns else pl.lit(None, dtype=pl.String)
    trial = pl.col("trial").cast(pl.Int64) if "trial" in df.columns else pl.lit(None, dtype=pl.Int64)
    kept = (
        df.filter(pl.col("_kept"))
        .select(*cols, dom.alias("_d"), pl.col("task_id").cast(pl.String).alias("_t"),
                pl.col("run_id").cast(pl.String).alias("_r"), trial.fill_null(-1).alias("_i"),
                pl.col("_success").cast(pl.Float64).alias("_y"))  # fmt: skip
    )
    out: dict[tuple, PassMatrix] = {}
    parts = kept.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): kept}
    for key, part in parts.items():
        key = tuple(key) if keys else ()
        tasks = sorted(set(zip(part["_d"].to_list(), part["_t"].to_list())), key=lambda t: (t[0] is None, t[0] or "",
                                                                                           t[1]))  # fmt: skip
        passes = sorted(set(zip(part["_r"].to_list(), part["_i"].to_list())))
        ti = {t: i for i, t in enumerate(tasks)}
        pi = {p: i for i, p in enumerate(passes)}
        rows = np.array([ti[t] for t in zip(part["_d"].to_list(), part["_t"].to_list())], dtype=np.int64)
        cols_ = np.array([pi[p] for p in zip(part["_r"].to_list(), part["_i"].to_list())], dtype=np.int64)
        s = np.zeros((len(tasks), len(passes)))
        m = np.zeros((len(tasks), len(passes)))
        np.add.at(s, (rows, cols_), part["_y"].to_numpy())
        np.add.at(m, (rows, cols_), 1.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            Y = np.where(m > 0, s / np.maximum(m, 1.0), np.nan)
        out[key] = PassMatrix(tasks, passes, Y)
    return out


def run_effect(Y: np.ndarray) -> RunEffect:
    """Cochran's Q test and the moment estimate of σ²_run on a (task × pass) table ``Y`` (NaN = not observed).

    See the module notes. Not identifiable (``p_value`` and ``var`` None) with fewer than 2 passes or when no task
    seen in two passes has different outcomes there (nothing varies within a task)."""
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[1] < 2:
        return RunEffect(int(Y.shape[1]) if Y.ndim == 2 else 0, 0, None, 0, None, None, False)
    obs = np.isfinite(Y)
    keep = obs.sum(axis=1) >= 2
    Y, obs = Y[keep], obs[keep]
    used = obs.any(axis=0)
    Y, obs = Y[:, used], obs[:, used]
    R = int(Y.shape[1])
    if Y.shape[0] == 0 or R < 2:
        return RunEffect(R, int(Y.shape[0]), None, 0, None, None, False)
    y0 = np.where(obs, Y, 0.0)
    m = obs.sum(axis=1)
    ybar = y0.sum(axis=1) / m
    v = ybar * (1.0 - ybar)  # each task's outcome variance over its passes (binary: ȳ(1 − ȳ))
    if not np.any(v > 0):
        return RunEffect(R, int(Y.shape[0]), None, R - 1, None, None, False)
    z = np.where(obs, Y - ybar[:, None], 0.0)
    nr = obs.sum(axis=0)
    b = z.sum(axis=0) / nr
    S = float(np.sum(b**2)) / (R - 1)
    E0 = float(np.sum((obs * v[:, None]).sum(axis=0) / nr**2)) / (R - 1)
    Q = (R - 1) * S / E0
    p = _special.chi2_sf(Q, R - 1)
    w = (obs / m[:, None]).sum(axis=0) / Y.shape[0]  # each pass's weight in the mean over tasks of δ̄_t
    return RunEffect(R, int(Y.shape[0]), float(Q), R - 1, p, max(0.0, S - E0), True, float(1.0 / np.sum(w**2)))


def run_variance(re: RunEffect, k: int, theta_km1: float | None) -> float:
    """V_run(k) = (k·θ̂_{k−1})²·σ̂²_run / R: the variance a new draw of R passes adds to a pass^k estimate
    (θ̂_0 = 1; 0 when not identifiable or σ̂²_run = 0). R is the effective number of passes ``r_eff`` (passes
    seen by disjoint sets of tasks — two runs of different domains pooled — each weigh by their share)."""
    if not re.identifiable or not re.var or re.n_passes < 2 or not (re.p_value or 0.0) < ADJUST_BELOW:
        return 0.0
    th = 1.0 if k <= 1 else (theta_km1 if theta_km1 is not None and np.isfinite(theta_km1) else 1.0)
    return (k * th) ** 2 * re.var / (re.r_eff or re.n_passes)


def widen(est: float, lo: float | None, hi: float | None, v_run: float, df_run: int, level: float,
          bounds: tuple[float, float] = (0.0, 1.0)) -> tuple[float | None, float | None]:  # fmt: skip
    """Each side of a calibrated interval widened by a run-level variance ``v_run`` with ``df_run`` degrees of
    freedom: half-width √(h² + t²_{df}·v_run) (:data:`SEPARATE`; else t_ν·√((h/z)² + v_run), ν by Satterthwaite
    with the task part at ∞ df); clipped to ``bounds``. ``v_run`` = 0 returns the interval unchanged."""
    if not v_run or lo is None or hi is None or est is None or df_run < 1:
        return lo, hi
    z = t_quantile(level, math.inf)
    out = []
    for h in (est - lo, hi - est):
        if SEPARATE:
            out.append(math.sqrt(max(h, 0.0) ** 2 + t_quantile(level, df_run) ** 2 * v_run))
            continue
        vt = max(h, 0.0) ** 2 / z**2
        nu = (vt + v_run) ** 2 / (v_run**2 / df_run)
        out.append(float(stats.t.ppf(0.5 + level / 2, nu)) * math.sqrt(vt + v_run))
    return max(bounds[0], min(lo, est - out[0])), min(bounds[1], max(hi, est + out[1]))


@lru_cache(maxsize=4096)
def t_quantile(level: float, df: float) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom (∞: the normal's)."""
    return float(_special.t_ppf(0.5 + level / 2, df))  # the normal's at df = ∞; SciPy's outside [1, 200]


def _half(parts: list[tuple[float, float]], level: float) -> float:
    """√(Σ t²_{df_i}·V_i) at two-sided coverage ``level``."""
    return math.sqrt(sum(v * t_quantile(level, d if d > 0 else math.inf) ** 2 for v, d in parts if v > 0))


def satterthwaite(mean: float, parts: list[tuple[float, float]], level: float) -> tuple[float, float, float, float]:
    """Test and interval for a mean whose variance is a sum of independent parts ``(variance, df)``:
    (lo, hi, two-sided p of 0, ν), the interval clipped to [−1, 1].

    With :data:`SEPARATE` (the default) each part keeps its own t quantile: half-width H(α) = √(Σ t²_{df_i, 1−α/2}·V_i),
    p the α at which H(α) = |mean| (so the interval excludes 0 exactly when p < α), ν the degrees of freedom of the
    one t quantile that gives the same half-width at ``level``. Otherwise one t with ν = (Σ V)² / Σ V²/df
    (Satterthwaite) — measured too liberal where a run variance rests on 3 pass contrasts."""
    V = sum(v for v, _ in parts)
    if not V > 0:
        return float("nan"), float("nan"), float("nan"), float("nan")
    if SEPARATE:
        H = _half(parts, level)
        m = abs(mean)
        if m == 0:
            p = 1.0
        elif _half(parts, 1.0 - 1e-15) <= m:
            p = 1e-15
        else:  # H(1 − a) falls from above m at a = 1e-15 to 0 at a = 1
            la = optimize.brentq(lambda x: _half(parts, 1.0 - math.exp(x)) - m, math.log(1e-15), 0.0, xtol=1e-12)
            p = min(1.0, math.exp(la))
        q = H / math.sqrt(V)
        z = t_quantile(level, math.inf)
        nu = math.inf if q <= z * (1 + 1e-12) else float(optimize.brentq(lambda n: t_quantile(level, n) - q, 0.05, 1e7))
        return max(-1.0, mean - H), min(1.0, mean + H), p, nu
    den = sum(v**2 / d for v, d in parts if v > 0 and d > 0)
    nu = V**2 / den if den > 0 else float("inf")
    se = math.sqrt(V)
    q = float(stats.t.ppf(0.5 + level / 2, nu))
    p = float(2 * stats.t.sf(abs(mean) / se, nu))
    return max(-1.0, mean - q * se), min(1.0, mean + q * se), p, nu

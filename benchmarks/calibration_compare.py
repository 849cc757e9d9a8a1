"""Calibration of paired comparisons, rank intervals and power plans at τ-bench sizes (T = 20–50 tasks, n = 1–4).

Three sections, each a table printed to stdout:

1. ``paired`` — type-I error and power at δ = 0.1 of every candidate test/interval for d_t = Û_k^A − Û_k^B
   (paired t, the paired task bootstrap BCa / percentile / bootstrap-t exactly as compare() runs it, exact, mid-p and
   randomised sign-flip (= exact / mid-p McNemar with one trial per task, = the permutation-t), score z, Wilcoxon),
   with the coverage of δ by each interval, in cells T ∈ {20, 50} × (n, k) ∈ {(1,1), (4,1), (4,4)} (and T = 10 for
   reference) over five task populations. Where d_t ∈ {−1, 0, 1} (n = 1 or k = n) the rates are exact trinomial sums;
   elsewhere Monte Carlo with ``--reps`` benchmarks per cell.
2. ``ranks`` — coverage of each agent's true rank, and of all at once, by compare_all()'s bootstrap rank intervals and
   by :func:`tauk.stats.comparisons.ranks.rank_intervals` (per-agent and simultaneous), 5 agents close together or spread out.
3. ``power`` — delivered power of "tasks needed" for δ = 0.1 at 80 %: the old normal formula and old power() against
   the noncentral-t plan with the new pilot variance models, pilots of n = 1 and n = 4 trials.

The "old" rows are the methods tauk reported before the calibrated defaults, transcribed here (bootstrap rank
quantiles, the normal tasks_needed, power()'s variance rules); the new plans run through ``tauk.stats.power_analysis``.

Run: ``python benchmarks/calibration_compare.py [--reps 2000] [--seed S] [--quick] [--sections paired,ranks,power]``.
Deterministic for a seed. ``main(argv)`` is what ``benchmarks/calibration.py`` calls as a section (``--quick``: a
few cells, two populations, 999 bootstrap resamples, a couple of minutes).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from collections.abc import Callable, Sequence

import numpy as np
from scipy import special, stats

from tauk.stats.comparisons.paired_tests import _invert, _p_at, signflip_null
from tauk.stats.intervals import interval
from tauk.stats.options import IntervalOptions

ALPHA = 0.05


# ---------------------------------------------------------------------------------------------- populations
def _expit(x):
    return special.expit(x)


def _logit(p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p) - np.log1p(-p)


def _shared(draw: Callable) -> Callable:
    def sample(rng, T, shift):
        p = draw(rng, T)
        return _expit(_logit(p) + shift) if shift else p, p

    return sample


def _disagree(rng, T, shift):
    z = rng.normal(0.0, 1.0, T)
    return _expit(z + rng.normal(0.0, 1.0, T) + shift), _expit(z + rng.normal(0.0, 1.0, T))


#: name → (description, sampler(rng, T, logit shift of A) → (p_A, p_B) per task)
POPULATIONS: dict[str, tuple[str, Callable]] = {
    "taubench": ("p ~ Beta(0.63, 0.88), shared (fit to τ-bench gpt-4o airline: mean 0.42, ICC 0.40)",
                 _shared(lambda r, T: r.beta(0.63, 0.88, T))),
    "uniform": ("p ~ Beta(1, 1), shared", _shared(lambda r, T: r.beta(1.0, 1.0, T))),
    "u-shaped": ("p ~ Beta(0.3, 0.3), shared (most tasks always or never solved)",
                 _shared(lambda r, T: r.beta(0.3, 0.3, T))),
    "easy": ("logit p ~ N(1, 1.5²), shared (mean p ≈ 0.69)", _shared(lambda r, T: _expit(r.normal(1.0, 1.5, T)))),
    "disagree": ("logit p_X = z + e_X, z, e_A, e_B ~ N(0, 1): agents disagree task by task, exchangeable", _disagree),
}


def shift_for(pop: str, k: int, delta: float, seed: int = 12345, draws: int = 400_000) -> float:
    """Logit shift s of agent A with E[p_A^k] − E[p_B^k] = δ over the population (bisection on a fixed sample)."""
    if delta == 0:
        return 0.0
    sampler = POPULATIONS[pop][1]

    def gap(s):
        pa, pb = sampler(np.random.default_rng(seed), draws, s)
        return float(np.mean(pa**k) - np.mean(pb**k)) - delta

    lo, hi = 0.0, 8.0
    for _ in range(50):
        m = 0.5 * (lo + hi)
        lo, hi = (m, hi) if gap(m) < 0 else (lo, m)
    return 0.5 * (lo + hi)


def u_table(n: int, k: int) -> np.ndarray:
    """Û_k = C(c,k)/C(n,k) for c = 0…n."""
    return np.array([math.comb(c, k) / math.comb(n, k) for c in range(n + 1)])


# ---------------------------------------------------------------------------------------------- candidates
PAIRED_METHODS = (
    "t", "boot-bca", "boot-pct", "boot-t", "signflip", "signflip-mid", "signflip-rand", "score-z", "wilcoxon",
)
INTERVAL_METHODS = ("t", "boot-bca", "boot-pct", "boot-t", "signflip", "signflip-mid")
RANK_LABELS = {"old bootstrap": "old: bootstrap quantiles", "per-agent": "new: per-agent (Holm, K−1)",
               "simultaneous": "new: simultaneous (Holm, all pairs)"}


class PairedEvaluator:
    """Every candidate on one vector d. Deterministic candidates are cached on the multiset of d (they depend on
    nothing else); the randomised sign-flip takes a uniform from the caller."""

    def __init__(self, resamples: int = 9999, methods: Sequence[str] = PAIRED_METHODS, intervals: bool = True):
        self.resamples = resamples
        self.methods = tuple(methods)
        self.intervals = intervals
        self.cache: dict = {}

    def _deterministic(self, d: np.ndarray) -> dict:
        T = d.size
        out: dict[str, tuple[float, float, float]] = {}
        m = self.methods
        mean = float(d.mean())
        sd = float(d.std(ddof=1))
        se = sd / math.sqrt(T)
        if "t" in m:
            q = stats.t.ppf(1 - ALPHA / 2, T - 1)
            p = float(2 * stats.t.sf(abs(mean / se), T - 1)) if se > 0 else (1.0 if mean == 0 else 0.0)
            out["t"] = (p, mean - q * se, mean + q * se)
        for name, meth in (("boot-bca", "bca"), ("boot-pct", "percentile"), ("boot-t", "bootstrap-t")):
            if name in m:
                lo, hi = interval(d, IntervalOptions(1 - ALPHA, meth, self.resamples, 0))
                out[name] = (math.nan, float(lo[0]), float(hi[0]))
        ss = float(np.sum(d * d))
        if "score-z" in m or "score-t" in m:
            z = d.sum() / math.sqrt(ss) if ss > 0 else 0.0
            out["score-z"] = (float(2 * stats.norm.sf(abs(z))), math.nan, math.nan)
            out["score-t"] = (float(2 * stats.t.sf(abs(z), T - 1)), math.nan, math.nan)
        if any(x.startswith("signflip") for x in m):
            if ss == 0:
                out["signflip"] = out["signflip-mid"] = (1.0, 0.0, 0.0)
                out["_gt_eq"] = (0.0, 1.0)
            else:
                null = signflip_null(d)
                p_ex = _p_at(null, 0.0, mid=False)
                p_mid = _p_at(null, 0.0, mid=True)
                eq = 2 * (p_ex - p_mid)
                gt = p_ex - eq
                out["_gt_eq"] = (gt, eq)
                if self.intervals:
                    lo, hi = _invert(null, d, ALPHA, mid=False)
                    lom, him = _invert(null, d, ALPHA, mid=True)
                else:
                    lo = hi = lom = him = math.nan
                out["signflip"] = (p_ex, lo, hi)
                out["signflip-mid"] = (p_mid, lom, him)
        if "wilcoxon" in m or "wilcoxon-pratt" in m:
            if ss == 0:
                out["wilcoxon"] = out["wilcoxon-pratt"] = (1.0, math.nan, math.nan)
            else:
                out["wilcoxon"] = (float(stats.wilcoxon(d, zero_method="wilcox").pvalue), math.nan, math.nan)
                out["wilcoxon-pratt"] = (float(stats.wilcoxon(d, zero_method="pratt").pvalue), math.nan, math.nan)
        return out

    def __call__(self, d: np.ndarray, u: float) -> dict[str, tuple[float, float, float]]:
        key = (d.size, tuple(np.round(np.sort(d), 9)))
        res = self.cache.get(key)
        if res is None:
            res = self._deterministic(d)
            self.cache[key] = res
        out = {k: v for k, v in res.items() if k in self.methods}
        if "signflip-rand" in self.methods:
            gt, eq = res["_gt_eq"]
            out["signflip-rand"] = (1.0 if eq == 1.0 and gt == 0.0 else gt + u * eq, math.nan, math.nan)
        return out


def trinomial_probs(pop: str, k: int, delta: float, draws: int = 2_000_000, seed: int = 4321) -> tuple[float, float]:
    """(P(d_t = +1), P(d_t = −1)) when Û_k ∈ {0, 1} (one trial, or k = n): P(+1) = E[p_A^k (1 − p_B^k)]."""
    pa, pb = POPULATIONS[pop][1](np.random.default_rng(seed), draws, shift_for(pop, k, delta))
    ua, ub = pa**k, pb**k
    return float(np.mean(ua * (1 - ub))), float(np.mean(ub * (1 - ua)))


class ExactTable:
    """Every candidate on every d ∈ {−1, 0, 1}^T up to order (a tasks at +1, b at −1): with tasks drawn
    independently, (a, b) is trinomial, so rejection rates and coverages are exact sums (no Monte-Carlo error;
    the bootstrap candidates keep their own seeded resampling, exactly as compare() runs them)."""

    def __init__(self, T: int, ev: PairedEvaluator):
        self.T = T
        self.ev = ev
        self.res = {}
        for a in range(T + 1):
            for b in range(T + 1 - a):
                d = np.array([1.0] * a + [-1.0] * b + [0.0] * (T - a - b))
                self.res[(a, b)] = ev._deterministic(d)

    def rates(self, p_plus: float, p_minus: float) -> dict[str, dict[str, float]]:
        T = self.T
        delta = p_plus - p_minus
        acc = {m: {"reject": 0.0, "cover": 0.0, "width": 0.0, "disagree": 0.0} for m in self.ev.methods}
        logf = [math.lgamma(i + 1) for i in range(T + 1)]
        p0 = 1.0 - p_plus - p_minus
        for (a, b), res in self.res.items():
            lw = logf[T] - logf[a] - logf[b] - logf[T - a - b]
            w = math.exp(lw + (a * math.log(p_plus) if a else 0.0) + (b * math.log(p_minus) if b else 0.0)
                         + ((T - a - b) * math.log(p0) if T - a - b else 0.0))
            for m in self.ev.methods:
                if m == "signflip-rand":
                    gt, eq = res["_gt_eq"]
                    rej = 0.0 if (a + b == 0) else min(max((ALPHA - gt) / eq, 0.0), 1.0) if eq > 0 else float(gt < ALPHA)
                    acc[m]["reject"] += w * rej
                    continue
                p, lo, hi = res[m]
                acc[m]["reject"] += w * rejects((p, lo, hi))
                if not math.isnan(lo):
                    acc[m]["cover"] += w * (lo - 1e-9 <= delta <= hi + 1e-9)
                    acc[m]["width"] += w * (hi - lo)
                    if not math.isnan(p):
                        acc[m]["disagree"] += w * ((p < ALPHA) != (lo > 0 or hi < 0))
        for m in self.ev.methods:
            if m not in INTERVAL_METHODS:
                acc[m]["cover"] = acc[m]["width"] = acc[m]["disagree"] = math.nan
        acc["_m"] = T * (p_plus + p_minus)
        return acc


def rejects(r: tuple[float, float, float]) -> bool:
    """A candidate rejects by its p-value when it has one, else by its interval excluding 0."""
    p, lo, hi = r
    if not math.isnan(p):
        return p < ALPHA
    return lo > 0 or hi < 0


def simulate_paired(
    T: int, n: int, k: int, pop: str, delta: float, reps: int, seed: int, ev: PairedEvaluator
) -> dict[str, dict[str, float]]:
    """Rejection rate, coverage of the true difference, mean width and p/interval disagreements per candidate."""
    sampler = POPULATIONS[pop][1]
    s = shift_for(pop, k, delta)
    tab = u_table(n, k)
    rng = np.random.default_rng(seed)
    acc = {m: {"reject": 0, "cover": 0, "width": 0.0, "disagree": 0, "ni": 0} for m in ev.methods}
    nonzero = 0
    for _ in range(reps):
        pa, pb = sampler(rng, T, s)
        d = tab[rng.binomial(n, pa)] - tab[rng.binomial(n, pb)]
        nonzero += int(np.count_nonzero(d))
        u = rng.random()
        for m, r in ev(d, u).items():
            a = acc[m]
            rej = rejects(r)
            a["reject"] += rej
            p, lo, hi = r
            if not math.isnan(lo):
                a["ni"] += 1
                a["cover"] += lo - 1e-9 <= delta <= hi + 1e-9
                a["width"] += hi - lo
                if not math.isnan(p):
                    a["disagree"] += (p < ALPHA) != (lo > 0 or hi < 0)
    out = {}
    for m, a in acc.items():
        ni = max(a["ni"], 1)
        out[m] = {"reject": a["reject"] / reps, "cover": a["cover"] / ni if a["ni"] else math.nan,
                  "width": a["width"] / ni if a["ni"] else math.nan, "disagree": a["disagree"] / ni if a["ni"] else math.nan}
    out["_m"] = nonzero / reps
    return out


# ---------------------------------------------------------------------------------------------- rank intervals
#: name → (true pass^1 of each agent, tasks T, trials n)
RANK_SCENARIOS: dict[str, tuple[tuple[float, ...], int, int]] = {
    "close T20 n1": ((0.50, 0.52, 0.54, 0.56, 0.58), 20, 1),
    "close T50 n4": ((0.50, 0.52, 0.54, 0.56, 0.58), 50, 4),
    "spread T20 n1": ((0.30, 0.40, 0.50, 0.60, 0.70), 20, 1),
    "spread T50 n4": ((0.30, 0.40, 0.50, 0.60, 0.70), 50, 4),
}
RANK_SD_TASK, RANK_SD_AGENT = 1.5, 0.5  # logit p_tj = z_t + a_j + e_tj, z ~ N(0, 1.5²), e ~ N(0, 0.5²)


def agent_offsets(means: Sequence[float], seed: int = 777, draws: int = 400_000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(0, RANK_SD_TASK, draws) + rng.normal(0, RANK_SD_AGENT, draws)
    out = []
    for m in means:
        lo, hi = -10.0, 10.0
        for _ in range(60):
            a = 0.5 * (lo + hi)
            lo, hi = (a, hi) if special.expit(x + a).mean() < m else (lo, a)
        out.append(0.5 * (lo + hi))
    return np.array(out)


def old_rank_intervals(n: np.ndarray, C: np.ndarray, level: float, resamples: int, seed: int) -> tuple:
    """compare_all()'s rank intervals before this release (a transcription): one task-bootstrap resample matrix
    for every agent, ranks per replicate, the (α/2, 1 − α/2) quantiles (inverted CDF) of each agent's ranks."""
    from tauk.stats.intervals import bootstrap_means

    U = C / n[:, None]
    if U.shape[0] < 2:
        return np.full(U.shape[1], np.nan), np.full(U.shape[1], np.nan)
    ranks = stats.rankdata(-bootstrap_means(U, resamples, seed, False), axis=1, method="average")
    alpha = (1 - level) / 2
    return (np.quantile(ranks, alpha, axis=0, method="inverted_cdf"),
            np.quantile(ranks, 1 - alpha, axis=0, method="inverted_cdf"))  # fmt: skip


def simulate_ranks(name: str, reps: int, seed: int, resamples: int = 9999) -> dict[str, dict[str, float]]:
    """Coverage of each agent's true rank (min over agents, and all agents at once) and mean width (hi − lo)."""
    from tauk.stats.comparisons.ranks import rank_intervals

    means, T, n = RANK_SCENARIOS[name]
    K = len(means)
    a = agent_offsets(means)
    true = 1 + np.array([sum(mj > mi for mj in means) for mi in means])
    rng = np.random.default_rng(seed)
    methods = ("old bootstrap", "per-agent", "simultaneous")
    cov = {m: np.zeros(K) for m in methods}
    allc = dict.fromkeys(methods, 0)
    width = dict.fromkeys(methods, 0.0)
    for r in range(reps):
        p = special.expit(rng.normal(0, RANK_SD_TASK, (T, 1)) + a[None, :] + rng.normal(0, RANK_SD_AGENT, (T, K)))
        C = rng.binomial(n, p)
        U = C / n
        res = {
            "old bootstrap": old_rank_intervals(np.full(T, n, dtype=np.int64), C, 0.95, resamples, seed + r),
            "per-agent": rank_intervals(U, ci=0.95)[1:],
            "simultaneous": rank_intervals(U, ci=0.95, simultaneous=True)[1:],
        }
        for m, (lo, hi) in res.items():
            ok = (lo <= true) & (true <= hi)
            cov[m] += ok
            allc[m] += bool(ok.all())
            width[m] += float(np.mean(hi - lo))
    return {m: {"per_agent": cov[m] / reps, "all": allc[m] / reps, "width": width[m] / reps} for m in methods}


# ---------------------------------------------------------------------------------------------- power plans
PLAN_POP, PLAN_DELTA, PLAN_POWER, PILOT_TASKS = "taubench", 0.1, 0.8, 50


def _pilot_frame(C: np.ndarray, n: int, agents: Sequence[str]):
    """A trials frame (run_id, task_id, trial, reward, agent) with C[t, j] successes out of n for agent j."""
    import polars as pl

    T, K = C.shape
    t_idx = np.repeat(np.arange(T), n)
    trial = np.tile(np.arange(n), T)
    cols = {"run_id": [], "task_id": [], "trial": [], "reward": [], "agent": []}
    for j, a in enumerate(agents):
        cols["run_id"] += [a] * (T * n)
        cols["task_id"] += [f"t{i}" for i in t_idx]
        cols["trial"] += trial.tolist()
        cols["reward"] += (trial < C[t_idx, j]).astype(float).tolist()
        cols["agent"] += [a] * (T * n)
    return pl.DataFrame(cols)


def true_var_d(n: int, shift: float, draws: int = 2_000_000, seed: int = 99) -> float:
    rng = np.random.default_rng(seed)
    pa, pb = POPULATIONS[PLAN_POP][1](rng, draws, shift)
    return float(np.var(rng.binomial(n, pa) / n - rng.binomial(n, pb) / n))


def _one_comparison(rng, T: int, n: int, shift: float, old_p: bool = False) -> bool:
    """One benchmark of T tasks under the alternative: does the reported p reject? ``old_p``: compare()'s old
    headline p_perm (the exact sign-flip p, which its Monte Carlo estimates beyond 20 nonzero d_t)."""
    from tauk.stats.comparisons.paired_tests import paired_test, signflip_pvalue

    pa, pb = POPULATIONS[PLAN_POP][1](rng, T, shift)
    d = rng.binomial(n, pa) / n - rng.binomial(n, pb) / n
    if old_p:
        return signflip_pvalue(d, mid=False) < ALPHA
    return paired_test(d).p_value < ALPHA


def old_tasks_needed(delta: float, var_d: float, alpha: float = ALPHA, power: float = 0.8) -> int:
    """tasks_needed before this release: the normal formula ceil((z_{1−α/2} + z_{1−β})²·Var(d_t)/δ²)."""
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return int(math.ceil(z * z * var_d / (delta * delta) - 1e-12))


def old_power_var(C: np.ndarray, n: int) -> float:
    """Var(d_t) at the pilot's n as power() computed it before this release (a transcription): Var(d̂_t) of a paired
    pilot (columns A, B) or twice Var(p̂_t) of a single agent (one column: two *independent* agents); with n ≥ 2 the
    between part clipped at 0, so the figure is max(observed, the pilot's trial noise)."""
    P = C / n
    d = P[:, 0] - P[:, 1] if C.shape[1] == 2 else P[:, 0]
    v = float(np.var(d, ddof=1))
    if n >= 2:
        noise = float(np.mean(sum(C[:, j] * (n - C[:, j]) / (n * (n - 1)) / n for j in range(C.shape[1]))))
        v = max(v, noise)
    return v * (2.0 if C.shape[1] == 1 else 1.0)


def simulate_plans(n: int, reps: int, seed: int, icc_true: float) -> list[tuple[str, float, float, float]]:
    """(plan, median tasks planned, delivered power, MC SE) with pilots of ``n`` trials, planning at n trials."""
    from tauk.stats import power_analysis
    from tauk.stats.power import tasks_needed, variance_from_paired_pilot

    shift = shift_for(PLAN_POP, 1, PLAN_DELTA)
    v = true_var_d(n, shift)
    rng = np.random.default_rng(seed)
    rows = []
    oracle = {"z formula, true Var(d_t) (old tasks_needed)": old_tasks_needed(PLAN_DELTA, v, power=PLAN_POWER),
              "noncentral t, true Var(d_t)": tasks_needed(PLAN_DELTA, v, target_power=PLAN_POWER)}
    for name, T in oracle.items():
        hits = sum(_one_comparison(rng, T, n, shift) for _ in range(reps))
        rows.append((name, T, hits / reps, math.sqrt(hits / reps * (1 - hits / reps) / reps)))
    T = oracle["z formula, true Var(d_t) (old tasks_needed)"]
    hits = sum(_one_comparison(rng, T, n, shift, old_p=True) for _ in range(reps))
    rows.append(("z formula, true Var(d_t), tested by the old p_perm", T, hits / reps,
                 math.sqrt(hits / reps * (1 - hits / reps) / reps)))
    single = "new, single-agent pilot" + ("" if n > 1 else " (icc not given: bound)")
    plans: dict[str, list] = {k: [] for k in (
        "old power(), single-agent pilot", single, single + ", estimate plugged in",
        "old power(), paired pilot", "new, paired pilot", "new, paired pilot, estimate plugged in")}
    if n == 1:
        plans["new, single-agent pilot, icc = true value"] = []
        plans["new, single-agent pilot, icc = 0.40 (τ-bench gpt-4o airline)"] = []
    for _ in range(reps):
        pa, pb = POPULATIONS[PLAN_POP][1](rng, PILOT_TASKS, shift)
        C = np.stack([rng.binomial(n, pa), rng.binomial(n, pb)], axis=1)
        nn = np.full(PILOT_TASKS, n)
        Ts = {}
        Ts["old power(), single-agent pilot"] = old_tasks_needed(PLAN_DELTA, old_power_var(C[:, 1:], n), power=PLAN_POWER)
        Ts["old power(), paired pilot"] = old_tasks_needed(PLAN_DELTA, old_power_var(C, n), power=PLAN_POWER)
        # the new plans through the public API (tauk.stats.power_analysis on a trials frame), with its default
        # (planned on average over the pilot's uncertainty) and with the estimate plugged in
        one, both = _pilot_frame(C[:, 1:], n, ["B"]), _pilot_frame(C, n, ["A", "B"])
        for suffix, unc in (("", True), (", estimate plugged in", False)):
            Ts[single + suffix] = power_analysis(one, delta=PLAN_DELTA, target_power=PLAN_POWER, trials_per_task=(n,),
                                                 pilot_uncertainty=unc).tasks_needed  # fmt: skip
            Ts["new, paired pilot" + suffix] = power_analysis(both, delta=PLAN_DELTA, target_power=PLAN_POWER,
                                                              trials_per_task=(n,), pilot_uncertainty=unc).tasks_needed  # fmt: skip
        assert Ts["new, paired pilot, estimate plugged in"] == tasks_needed(
            PLAN_DELTA, variance_from_paired_pilot(nn, C[:, 0], nn, C[:, 1]).var_d(n), target_power=PLAN_POWER)
        if n == 1:
            Ts["new, single-agent pilot, icc = true value"] = power_analysis(
                one, delta=PLAN_DELTA, target_power=PLAN_POWER, trials_per_task=(n,), icc=icc_true).tasks_needed
            Ts["new, single-agent pilot, icc = 0.40 (τ-bench gpt-4o airline)"] = power_analysis(
                one, delta=PLAN_DELTA, target_power=PLAN_POWER, trials_per_task=(n,), icc=0.40).tasks_needed
        for k2, T in Ts.items():
            plans[k2].append((T, _one_comparison(rng, T, n, shift)))
    for name, res in plans.items():
        Ts = np.array([t for t, _ in res])
        pw = float(np.mean([h for _, h in res]))
        rows.append((name, float(np.median(Ts)), pw, math.sqrt(pw * (1 - pw) / reps)))
    return rows


CELLS = ((20, 1, 1), (20, 4, 1), (20, 4, 4), (50, 1, 1), (50, 4, 1), (50, 4, 4))
SMALL_CELLS = ((10, 1, 1), (10, 4, 1))  # below the target range: reported, not held to 4–6 %
QUICK_CELLS = ((20, 1, 1), (20, 4, 4), (50, 4, 1))
QUICK_POPS = ("taubench", "u-shaped")
QUICK_METHODS = ("t", "boot-bca", "signflip", "signflip-mid", "score-z", "wilcoxon")


def _seed(base: int, *parts) -> int:
    return (base + zlib.crc32(repr(parts).encode())) % (2**32)


def _pct(x: float) -> str:
    return "    -" if math.isnan(x) else f"{100 * x:5.1f}"


def section_paired(args, out) -> dict:
    methods = QUICK_METHODS if args.quick else PAIRED_METHODS
    pops = QUICK_POPS if args.quick else tuple(POPULATIONS)
    cells = QUICK_CELLS if args.quick else CELLS + SMALL_CELLS
    if args.cells:
        cells = tuple(tuple(int(x) for x in c.split(":")) for c in args.cells.split(","))
    deltas = tuple(float(x) for x in args.deltas.split(","))
    resamples = 999 if args.quick else args.resamples
    reps = args.reps
    se0 = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    out(f"\n## 1. Paired comparison of two agents: {reps} benchmarks per cell, α = {ALPHA}, bootstrap B = {resamples}")
    out("Null: p_A,t = p_B,t (or exchangeable agents, 'disagree'); alternative: A's logit shifted so that the")
    out("population pass^k difference is δ = 0.1. A method rejects when its p < α (interval excludes 0 when it has")
    out(f"no p-value). Monte-Carlo SE of a 5 % rate: {100 * se0:.2f} points. m̄ = mean number of tasks with d_t ≠ 0.")
    for pop in pops:
        out(f"  {pop:9} {POPULATIONS[pop][0]}")
    hdr = " ".join(f"{m[:9]:>9}" for m in methods)
    table: dict = {}
    mbar: dict = {}
    exact: dict[int, ExactTable] = {}
    for delta, what in ((0.0, "type-I error (%)"), (0.1, "power (%) at δ = 0.1")):
        if delta not in deltas:
            continue
        out(f"\n### {what}")
        out(f"{'cell':22} {'m̄':>5} {'MC SE':>5} {hdr}")
        for T, n, k in cells:
            for pop in pops:
                ev = PairedEvaluator(resamples, methods)
                if k == n:  # Û_k ∈ {0, 1}: d_t ∈ {−1, 0, 1}, exact
                    if T not in exact:
                        exact[T] = ExactTable(T, ev)
                    res = exact[T].rates(*trinomial_probs(pop, k, delta))
                    se = "exact"
                else:
                    res = simulate_paired(T, n, k, pop, delta, reps, _seed(args.seed, T, n, k, pop, delta), ev)
                    r0 = res["t"]["reject"] if "t" in res else 0.05
                    se = f"{100 * math.sqrt(r0 * (1 - r0) / reps):5.2f}"
                table[(T, n, k, pop, delta)] = res
                m_bar = mbar[(T, n, k, pop, delta)] = res.pop("_m")
                out(f"T{T:<3}n{n} k{k} {pop:12} {m_bar:5.1f} {se:>5} "
                    + " ".join(f"{_pct(res[m]['reject']):>9}" for m in methods))
        if delta:
            out("\ncoverage (%) of the true difference δ = 0.1 by each reported interval (target 95):")
            im = [m for m in methods if m in INTERVAL_METHODS]
            out(f"{'cell':28} " + " ".join(f"{m[:12]:>12}" for m in im))
            for T, n, k in cells:
                for pop in pops:
                    r = table[(T, n, k, pop, delta)]
                    out(f"T{T:<3}n{n} k{k} {pop:18} " + " ".join(f"{_pct(r[m]['cover']):>12}" for m in im))
    out("\n### summary over the cells with T ≥ 20 (type-I range; power minus the paired t's, in points)")
    out("rows 'm̄ ≥ 5': only the cells where at least 5 tasks per benchmark are expected to have d_t ≠ 0")
    out(f"{'method':15} {'cells':>6} {'type-I min':>10} {'max':>6} {'in 4–6 %':>9} {'power − t: min':>15} {'max':>6}"
        f" {'p/CI disagree':>14}")
    for label, keep in (("all", lambda key: True), ("m̄ ≥ 5", lambda key: mbar.get(key[:4] + (0.0,), 99) >= 5)):
        big = [key for key in table if key[0] >= 20 and keep(key)]
        nul = [key for key in big if key[4] == 0.0]
        for m in methods:
            rates = [table[key][m]["reject"] for key in nul] or [math.nan]
            inside = sum(0.04 <= r <= 0.06 for r in rates)
            dp = [table[key][m]["reject"] - table[key]["t"]["reject"] for key in big if key[4] > 0] if "t" in methods else []
            dis = [x for x in (table[key][m]["disagree"] for key in big) if not math.isnan(x)]
            out(f"{m:15} {label:>6} {_pct(min(rates)):>10} {_pct(max(rates)):>6} {inside:>3} of {len(rates):<3} "
                f"{_pct(min(dp)) if dp else '':>15} {_pct(max(dp)) if dp else '':>6} {_pct(max(dis)) if dis else '    -':>14}")
    return table


def section_ranks(args, out) -> dict:
    reps = args.reps // 2 if not args.quick else args.reps
    scen = ("close T20 n1", "spread T20 n1") if args.quick else tuple(RANK_SCENARIOS)
    resamples = 999 if args.quick else args.resamples
    out(f"\n## 2. Rank intervals, 5 agents, 95 %: {reps} benchmarks per scenario")
    out("logit p_tj = z_t + a_j + e_tj, z ~ N(0, 1.5²), e ~ N(0, 0.5²), a_j set for the stated pass^1; true rank =")
    out("rank of the population pass^1. per-agent: coverage of each agent's own rank (target ≥ 95 each);")
    out("all: every agent's rank covered at once (the target of the simultaneous intervals); width: mean hi − lo.")
    res_all = {}
    for name in scen:
        means = RANK_SCENARIOS[name][0]
        res = simulate_ranks(name, reps, _seed(args.seed, name), resamples)
        res_all[name] = res
        out(f"\n{name} (pass^1 {', '.join(f'{m:.2f}' for m in means)})")
        out(f"  {'method':30} {'per-agent coverage, best … worst':>38} {'all':>6} {'width':>6}")
        for m, r in res.items():
            cov = " ".join(f"{100 * c:6.1f}" for c in r["per_agent"][::-1])
            out(f"  {RANK_LABELS[m]:30} {cov:>38} {100 * r['all']:6.1f} {r['width']:6.2f}")
    return res_all


def section_power(args, out) -> dict:
    reps = args.reps * 2 if not args.quick else args.reps
    out(f"\n## 3. Tasks needed for δ = {PLAN_DELTA}, power {PLAN_POWER:.0%}, α = {ALPHA}: delivered power of the plan")
    out(f"Population '{PLAN_POP}' ({POPULATIONS[PLAN_POP][0]}), B = reference, A = B shifted on the logit scale.")
    out(f"Pilots: {PILOT_TASKS} fresh tasks, n trials; the plan is at n trials per task; delivered power = share of")
    out(f"fresh benchmarks of the planned size whose reported p (paired t) is < α; {reps} pilot+benchmark draws per row.")
    res_all = {}
    for n in (1, 4):
        rows = simulate_plans(n, reps, _seed(args.seed, "plan", n), icc_true=1 / (0.63 + 0.88 + 1))
        res_all[n] = rows
        out(f"\npilots and plans with n = {n} trial(s) per task")
        out(f"  {'plan':68} {'tasks (median)':>14} {'delivered':>10} {'± SE':>6}")
        for name, T, pw, se in rows:
            out(f"  {name:68} {T:14.0f} {100 * pw:9.1f}% {100 * se:6.1f}")
    return res_all


SECTIONS = {"paired": section_paired, "ranks": section_ranks, "power": section_power}


def build_parser() -> argparse.ArgumentParser:
    """The options of this script (also listed by ``benchmarks/calibration.py --help``, which forwards them)."""
    ap = argparse.ArgumentParser(prog="calibration_compare", description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="benchmarks per cell (default 2000; 300 with --quick)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--quick", action="store_true", help="a few cells, 2 populations, 999 resamples")
    ap.add_argument("--resamples", type=int, default=9999, help="bootstrap resamples (as compare() uses)")
    ap.add_argument("--sections", default="paired,ranks,power", help="comma-separated: paired, ranks, power")
    ap.add_argument("--deltas", default="0,0.1", help="paired section: null and/or alternative (default both)")
    ap.add_argument("--cells", default=None, help="paired section: T:n:k,… (default: all, with T = 10 for reference)")
    return ap


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] | None = None) -> int:
    """Run the calibration sections and print their tables; deterministic for a given ``--seed``.

    ``benchmarks/calibration.py --section compare`` (or ``all``) calls this: ``main(["--quick"])``.
    """
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    if args.reps is None:
        args.reps = 300 if args.quick else 2000
    out = out or (lambda line: print(line, flush=True))
    t0 = time.time()
    out(f"# tauk calibration: comparisons, ranks, power (seed {args.seed}, reps {args.reps}{', quick' if args.quick else ''})")
    for name in args.sections.split(","):
        SECTIONS[name.strip()](args, out)
    out(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

r"""Model-based intervals for pass^k and pass@k: a beta-binomial hierarchical posterior with a model check.

The task-bootstrap intervals (BCa, percentile, t) are not calibrated at benchmark sizes (T = 10–50 tasks, n = 1–8
trials): the per-task values Û_k = C(c,k)/C(n,k) are few and skewed, and the truth is mostly missed *above* the
interval. Here the population of tasks is modelled instead, which fills in the tail that ten tasks cannot show.

Model
-----
Task t has a success probability p_t ~ Beta(α, β), α = μκ, β = (1 − μ)κ, and c_t | p_t ~ Binomial(n_t, p_t). The
marginal likelihood of a task is exact (``scipy.special.betaln`` form, or the equivalent finite products):

    P(c | n, α, β) = C(n, c) · B(α + c, β + n − c) / B(α, β)
                   = C(n, c) · Π_{j<c}(α + j) · Π_{j<n−c}(β + j) / Π_{j<n}(α + β + j),

so a group's log-likelihood is Σ_j [S_j log(α + j) + F_j log(β + j) − N_j log(α + β + j)] with the sufficient
statistics S_j = #{t: c_t > j}, F_j = #{t: n_t − c_t > j}, N_j = #{t: n_t > j}. Each task brings its own n_t (the
τ-bench convention — n_t = N, the run's trial indices, missing trials counted as failures — is just an (n, c)
pair like any other).

Estimands (pass@k: replace p by 1 − p, i.e. fit the failure counts, and report one minus)
    * population (a new draw of tasks): E[p^k] = Π_{j<k} (α + j)/(α + β + j), a function of (α, β);
    * fixed tasks (a re-run of the same T tasks): mean_t p_t^k over the tasks with n_t ≥ k, where, given (α, β),
      p_t ~ Beta(α + c_t, β + n_t − c_t) independently.

Priors
------
μ ~ Beta(1, 1) and ρ = 1/(1 + κ) ~ Beta(1, 1), independent. ρ is the intra-task correlation of two trials of one
task (the beta-binomial's over-dispersion): ρ → 0 is "every task alike" (binomial), ρ → 1 "every task either
always or never solved". Uniform on both is proper and symmetric in success/failure, has no scale to choose, and
puts equal weight on homogeneous and heterogeneous benchmarks; in (log κ) it is a logistic density (median κ = 1),
so it neither forces shrinkage (as a prior favouring large κ does) nor lets κ → 0 run away with the all-0 / all-1
groups (as the improper p(κ) ∝ κ^{−3/2} would). Measured alternatives (μ or ρ ~ Beta(½, ½), 40 cells,
``benchmarks/results/prior_variants_400.txt``): mean |coverage − 95 %| 1.39 / 1.32 / 1.06 points, none better in
every cell (MC SE 1.1), and ρ ~ Beta(½, ½) takes U-shaped populations lower (Beta(½, ½), T = 10, n = k = 4: 92.8 %),
so the simplest is kept; ``prior=`` takes any Beta pair. Priors with less weight on heterogeneous populations
(ρ ~ Beta(1, 1.5), Beta(1, 2)) and a per-benchmark calibration of the levels by simulation from the fit also take
cells below 94 % (ARCHITECTURE.md).

Integration
-----------
(u, v) = (logit μ, log κ). A coarse 80 × 56 product grid over the prior's range gives the posterior mean and
covariance; three rounds of importance sampling follow on a 1,597-point Fibonacci lattice mapped through a
Student-t(4) proposal (scale × 1.5) fitted to the previous round. The lattice makes every point's (μ, κ) distinct,
so the weighted quantiles of E[p^k] are smooth; the posterior is well inside the proposal at any T (checked against
a 6,765-point lattice and, in the tests, brute-force quadrature). Everything is vectorised over groups (rows).

Population intervals are weighted quantiles of E[p^k] over the weighted points (deterministic). Fixed-task
intervals are quantiles of ``draws`` Monte-Carlo draws: (α, β) by systematic resampling, then mean_t p_t^k from a
Beta with its exact conditional mean and variance (per distinct (n, c) pair: E[x^k], E[x^{2k}] of the task
posteriors). The fixed-task interval is then joined with itself re-centred on the unbiased estimate mean_t Û_k
(the hull of the two): a misfitting population shape (e.g. impossible tasks) biases the shrinkage of the task
posteriors, and the re-centred copy removes that bias without losing the small-T shape (measured: 20 %
impossible tasks, T = 200, n = 8, k = 4: 78 % → 96 %).

Variance floor (fixed estimand): the posterior's *spread* also rests on the population's shape, so the interval is
widened until it is at least as wide as a lower bound of a re-run's variance that the data estimate without the
model (:mod:`tauk.stats._rerun_floor`, where the method and its measurements are; ``variance_floor=False`` turns it
off). Fixed-task cells below 94 %: 11 → 0 (pass^k), 2 → 0 (pass@k), at × 1.04 the width.

All tasks enter the fit; each k uses, for the fixed estimand and the unbiased estimate, the tasks with n_t ≥ k (as
:func:`tauk.stats.pass_hat_k` does). A k above every task's n is not identified without the model: NaN and a
:class:`~tauk.errors.StatsWarning`.

Groups where every task has one trial
-------------------------------------
With n_t = 1 everywhere κ is not identified and only k = 1 is defined: c_t ~ Bernoulli(μ) for a new task, and the
sum is Poisson-binomial (less dispersed than binomial) for fixed tasks. Both estimands get the exact Clopper–Pearson
interval on (Σ c_t, T) — guaranteed ≥ the level. (At n = 1 no non-randomised interval keeps every cell inside
94–96 %: at T = 50, μ = ½ the achievable coverages jump from 93.5 % to 96.7 %.)

Model check and fallback
------------------------
A posterior predictive check of the beta-binomial: the tasks' outcomes c_t/n_t are binned (0; (0, ¼]; (¼, ½];
(½, ¾]; (¾, 1); 1), the discrepancy is χ² = Σ_b (O_b − E_b)² / E_b with E_b the expected bin counts under (α, β),
and p = P(χ²(y_rep; α, β) ≥ χ²(y; α, β)) over ``check_draws`` posterior draws and replicated data sets (same n_t).
Not testable (p = NaN, passed) when no task has n_t ≥ 3 or T < 2: the model is then saturated.

The threshold grows with the number of tasks (``check_alpha="auto"``, :func:`check_threshold`: 0.05 up to 50
tasks, 0.20 from 200, where a misfit's fixed bias outweighs the narrowing interval); a number fixes it. At 200 tasks
it fires in 9–14 % of Beta benchmarks (0–4 % at 0.05), at ×1.01 the population width and ×1.05 the fixed-task width.

When the check fails both estimands report the union of the model interval and a task-bootstrap interval
(``fallback``, default "bca"; ``fallback_mode="replace"``: the bootstrap interval alone), clipped to [0, 1],
Clopper–Pearson over tasks when all are at 0 or all at 1. The union, because the check fires on the data sets least
like a Beta sample, where the bootstrap alone covered less than the model (20 % impossible tasks, T = 200,
n = k = 4: 92.0 % replacing, 93.6 % without a check). BCa, not bootstrap-t: the same union coverage to ±0.5 points,
without bootstrap-t's blow-ups near the ceiling (up to 45× BCa's width). ``model_lo`` / ``model_hi`` keep the model's.

Measured (``benchmarks/calibration.py``, 1,000 replications a cell, 95 %; T ∈ {10, 20, 50, 200}, n ∈ {1, 4, 8},
k ∈ {1, 4}, Beta(0.7, 1.5), Beta(2, 2), Beta(8, 1), Beta(½, ½), logit-normal(−0.5, 2), 20 % p = 0 + 80 % Beta(2, 2),
and p ∈ {0.15, 0.85}; 140 pass^k cells per estimand)
    * population, pass^k: 1 cell below 94 % (93.9 %, Beta(2, 2), T = 200, n = 4, k = 4; 95.5 ± 0.4 % in 3,000 fresh
      replications) against 23 for BCa (min 77.9 %); above 96 % where T·n ≥ 40: 43 cells, 10 of them n = 1
      (Clopper–Pearson); width 0.99× BCa. pass@k (60 cells): 1 below 94 % (93.6 %; 95.6 ± 0.4 % in 3,000) against
      10 for BCa.
    * fixed tasks: no cell below 94 % (pass^k min 94.0 %, pass@k 94.2 %) against 34 for the normal interval.
    * 3,000 fresh replications, every n > 1 cell (``calibration_model_3000_seed11_threshold.txt``; ARCHITECTURE.md):
      population pass^k none below 94 % (min 94.1 %), 28 of 112 above 96 % (populations differ by up to 3 points at
      T = 10); fixed tasks one below, two-point, T = 10, n = k = 4: 93.5 ± 0.3 % (5,000).

Layout: the prior, the likelihood and the weighted posterior points are in :mod:`tauk.stats._posterior`; the
fixed-task draws, the check and the fallback intervals in :mod:`tauk.stats._model_parts`; this module assembles
them. :func:`tauk.stats.pass_hat_k`, :func:`~tauk.stats.pass_at_k` and :func:`~tauk.stats.summarize` call it with
``method="model"`` (the default, :data:`tauk.conventions.CI_METHOD`) through :mod:`tauk.stats._intervals`.

Examples
--------
>>> import numpy as np
>>> from tauk.stats.model import model_interval
>>> n = np.full(10, 8)
>>> c = np.array([0, 0, 1, 2, 3, 5, 6, 8, 8, 8])
>>> r = model_interval(n, c, ks=[1, 4])
>>> r.estimate.round(3).tolist()
[0.512, 0.329]
>>> bool(np.all((r.lo < r.estimate) & (r.estimate < r.hi))), r.check_passed, r.source
(True, True, 'model')
>>> f = model_interval(n, c, ks=[1, 4], estimand="fixed")
>>> bool(np.all(f.hi - f.lo < r.hi - r.lo))  # a re-run of the same tasks is less uncertain
True
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from tauk.errors import StatsWarning, TaukError

from ._model_parts import (
    _check_inputs,
    _clopper_pearson,
    _fixed_draws,
    _nonparametric,
    _unbiased,
    check_threshold,
    ppc_pvalue,
)
from ._posterior import DEFAULT_PRIOR, Prior, _resample, _wquantile, beta_moment, posterior_points
from ._rerun_floor import variance_floor as _variance_floor

__all__ = [
    "Prior",
    "DEFAULT_PRIOR",
    "ModelInterval",
    "beta_moment",
    "check_threshold",
    "model_interval",
    "model_interval_batch",
    "posterior_points",
    "ppc_pvalue",
]

_CHUNK = 256  # groups per vectorised block (memory: ~ _CHUNK × 1,597 × max n × 8 bytes per array)

# ---------------------------------------------------------------------------------------------------------------
# the result and the public functions
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelInterval:
    """Model-based intervals for one estimand. Arrays are (K,) for :func:`model_interval` and (G, K) — or (G,)
    for the per-group fields — for :func:`model_interval_batch`.

    Attributes
    ----------
    ks, metric, estimand, level : what was asked.
    lo, hi : the reported interval (the model's, or the fallback's where the check failed; NaN where undefined).
    estimate : the unbiased point estimate mean_t Û_k over tasks with n_t ≥ k (NaN when none).
    posterior_mean, posterior_median : of the estimand under the model.
    model_lo, model_hi : the model interval, whatever the check said.
    n_tasks : tasks with n_t ≥ k.
    check_p : posterior predictive p-value (NaN: not testable). check_passed : p ≥ the threshold
        (:func:`check_threshold`) or not testable.
    source : "model", "binomial" (every n_t = 1: Clopper–Pearson) or "fallback:<method>".
    ess : effective sample size of the weighted posterior points (diagnostic; ≥ 100 is comfortable).
    """

    ks: np.ndarray
    metric: str
    estimand: str
    level: float
    lo: np.ndarray
    hi: np.ndarray
    estimate: np.ndarray
    posterior_mean: np.ndarray
    posterior_median: np.ndarray
    model_lo: np.ndarray
    model_hi: np.ndarray
    n_tasks: np.ndarray
    check_p: Any
    check_passed: Any
    source: Any
    ess: Any


def model_interval_batch(
    n,
    c,
    ks,
    *,
    metric: str = "pass^k",
    level: float = 0.95,
    estimand: str = "population",
    prior: Prior = DEFAULT_PRIOR,
    check: bool = True,
    check_alpha: float | str = "auto",
    check_draws: int = 400,
    fallback: str | None = "bca",
    fallback_mode: str = "hull",
    recentre: bool = True,
    variance_floor: bool = True,
    draws: int = 2000,
    points: int = 1597,
    resamples: int = 1999,
    seed: int | None = 0,
    within: str = "beta",
) -> ModelInterval | dict[str, ModelInterval]:
    """Model-based intervals for many groups at once: ``n``, ``c`` are (G × T) arrays, n = 0 pads short groups.

    Parameters
    ----------
    n, c : (G, T) int arrays — trials (the denominator, e.g. τ-bench's N) and successes per task; n_t = 0 = no task.
    ks : the k's (≥ 1). Tasks with n_t < k are left out of that k (estimate, fixed estimand).
    metric : "pass^k" (E[p^k]) or "pass@k" (E[1 − (1 − p)^k]).
    level : interval level.
    estimand : "population" (new tasks: E[p^k] = Π_{j<k}(α+j)/(α+β+j)), "fixed" (re-running the same tasks:
        mean_t p_t^k, p_t | data ~ Beta(α+c_t, β+n_t−c_t)), or "both" (one posterior; returns a dict).
    prior : :class:`Prior` (μ ~ Beta, ρ = 1/(1+κ) ~ Beta; default uniform on both).
    check, check_alpha, check_draws : the posterior predictive check (see the module docs) and its threshold: a
        number, or "auto" (default: :func:`check_threshold` of the group's task count — 0.05 up to 50 tasks,
        T/1000 between, 0.20 from 200 tasks).
    fallback : nonparametric method used where the check fails ("bootstrap-t", "bca", "percentile", "t"), or
        None to report the model interval regardless (the check is still reported).
    fallback_mode : "hull" (default: report the union of the model and the fallback interval) or "replace".
    recentre : fixed estimand only — join the interval with its copy re-centred on the unbiased estimate.
    variance_floor : fixed estimand only — widen the interval about the unbiased estimate until it is at least as
        wide as the design-based variance of a re-run implies, where the data identify it (n_t ≥ 2k; a lower bound
        of it for k ≤ n_t < 2k).
    draws : Monte-Carlo draws for the fixed estimand. points : posterior lattice size.
    resamples, seed : for the fallback bootstrap and the Monte-Carlo draws; same seed, same numbers.
    within : "beta" (default: moment-matched Beta for mean_t p_t^k given (α, β)) or "exact" (per-task draws).

    Returns
    -------
    ModelInterval with (G, K) arrays (dict of two for ``estimand="both"``).
    """
    n, c, ks = _check_inputs(n, c, ks, metric, estimand, level)
    G = n.shape[0]
    K = len(ks)
    rng = np.random.default_rng(seed)
    ests = ("population", "fixed") if estimand == "both" else (estimand,)
    qs = [(1.0 - level) / 2.0, 0.5, (1.0 + level) / 2.0]
    res = {e: {f: np.full((G, K), np.nan) for f in ("lo", "hi", "mean", "median")} for e in ests}
    check_p = np.full(G, np.nan)
    ess = np.full(G, np.nan)
    fit_c = c if metric == "pass^k" else np.where(n > 0, n - c, 0)
    fit_prior = prior if metric == "pass^k" else prior.swapped()
    has_task = (n > 0).any(1)
    binomial = has_task & np.all((n == 1) | (n == 0), axis=1)
    modelled = np.flatnonzero(has_task & ~binomial)
    for start in range(0, modelled.size, _CHUNK):
        rows = modelled[start : start + _CHUNK]
        nn, cc = n[rows], fit_c[rows]
        A, B, W, e = posterior_points(nn, cc, fit_prior, points=points)
        ess[rows] = e
        for est in ests:
            if est == "population":
                for j, k in enumerate(ks):
                    th = beta_moment(A, B, k)
                    q = _wquantile(th, W, qs)
                    res[est]["lo"][rows, j], res[est]["median"][rows, j], res[est]["hi"][rows, j] = q.T
                    res[est]["mean"][rows, j] = (W * th).sum(1)
            else:
                idx = _resample(W, draws, rng)
                fd = _fixed_draws(np.take_along_axis(A, idx, 1), np.take_along_axis(B, idx, 1), nn, cc, ks, rng, within)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    q = np.nanquantile(fd, qs, axis=1)
                    res[est]["mean"][rows] = np.nanmean(fd, axis=1)
                res[est]["lo"][rows], res[est]["median"][rows], res[est]["hi"][rows] = q
        if check:
            check_p[rows] = ppc_pvalue(nn, cc, A, B, W, rng, check_draws)
    estimate = np.empty((G, K))
    n_tasks = np.empty((G, K), dtype=np.int64)
    for j, k in enumerate(ks):
        estimate[:, j], n_tasks[:, j] = _unbiased(n, c, k, metric)
    kmax = np.where(n > 0, n, 0).max(1)
    beyond = (np.asarray(ks)[None, :] > kmax[:, None]) & has_task[:, None]
    if beyond.any():
        warnings.warn(
            f"k above every task's trials in {int(beyond.any(1).sum())} group(s): E[p^k] is not identified there "
            "without the model's extrapolation; reported as NaN",
            StatsWarning,
            stacklevel=2,
        )
    passed = ~(check_p < check_threshold((n > 0).sum(1), check_alpha))
    failed = np.flatnonzero(~passed)
    source = np.where(binomial, "binomial", np.where(has_task, "model", "empty")).astype(object)
    flo = fhi = None
    if fallback_mode not in ("hull", "replace"):
        raise TaukError(f"fallback_mode must be 'hull' or 'replace', got {fallback_mode!r}")
    if fallback and failed.size:
        flo, fhi = _nonparametric(n[failed], c[failed], ks, metric, level, fallback, resamples, seed)
        source[failed] = f"fallback:{fallback}"
    out = {}
    for est in ests:
        r = res[est]
        if metric == "pass@k":  # the fit was on failures: θ = 1 − E[(1 − p)^k]
            r["lo"], r["hi"] = 1.0 - r["hi"], 1.0 - r["lo"]
            r["mean"], r["median"] = 1.0 - r["mean"], 1.0 - r["median"]
        if binomial.any() and 1 in ks:  # every task one trial: Clopper–Pearson on (Σ c, T); pass@1 = pass^1
            j = ks.index(1)
            s_b, T_b = c[binomial].sum(1).astype(float), (n[binomial] > 0).sum(1).astype(float)
            r["lo"][binomial, j], r["hi"][binomial, j] = _clopper_pearson(s_b, T_b, level)
            r["mean"][binomial, j] = r["median"][binomial, j] = s_b / T_b
        lo, hi = r["lo"], r["hi"]
        if est == "fixed" and recentre:
            d = np.where(np.isfinite(estimate), estimate - r["mean"], 0.0)
            d[binomial] = 0.0
            lo, hi = np.minimum(lo, np.clip(lo + d, 0.0, 1.0)), np.maximum(hi, np.clip(hi + d, 0.0, 1.0))
        if est == "fixed" and variance_floor:
            lo, hi = _variance_floor(lo, hi, estimate, n, c, ks, metric, level)
        undefined = beyond | ~has_task[:, None] | ((n_tasks == 0) & (est == "fixed"))
        lo, hi = np.where(undefined, np.nan, lo), np.where(undefined, np.nan, hi)
        mlo, mhi = lo.copy(), hi.copy()
        if flo is not None:
            if fallback_mode == "hull":  # the union: never less than either interval covers
                lo[failed], hi[failed] = np.fmin(flo, mlo[failed]), np.fmax(fhi, mhi[failed])
            else:  # "replace"; where the fallback is undefined (e.g. one task) the model interval stays
                keep = ~np.isfinite(flo)
                lo[failed] = np.where(keep, mlo[failed], flo)
                hi[failed] = np.where(keep, mhi[failed], fhi)
                if est == "fixed" and variance_floor:  # the floor holds whatever made the interval
                    flo_f, fhi_f = _variance_floor(lo[failed], hi[failed], estimate[failed], n[failed], c[failed], ks,
                                                   metric, level)  # fmt: skip
                    lo[failed], hi[failed] = flo_f, fhi_f
        out[est] = ModelInterval(
            ks=np.asarray(ks),
            metric=metric,
            estimand=est,
            level=level,
            lo=lo,
            hi=hi,
            estimate=estimate,
            posterior_mean=r["mean"],
            posterior_median=r["median"],
            model_lo=mlo,
            model_hi=mhi,
            n_tasks=n_tasks,
            check_p=check_p,
            check_passed=passed,
            source=source,
            ess=ess,
        )
    return out if estimand == "both" else out[estimand]


def model_interval(
    n, c, ks=None, **options
) -> ModelInterval | dict[str, ModelInterval]:
    """Model-based interval for one group of tasks; same options as :func:`model_interval_batch`.

    Parameters
    ----------
    n, c : 1-d arrays of per-task trials and successes.
    ks : the k's; default 1 … min_t n_t (as tauk's default ks).

    Returns
    -------
    ModelInterval with (K,) arrays and scalar per-group fields (``check_p``, ``check_passed``, ``source``,
    ``ess``), or a dict {"population", "fixed"} of them for ``estimand="both"``.
    """
    n = np.atleast_1d(np.asarray(n))
    c = np.atleast_1d(np.asarray(c))
    if n.ndim != 1 or c.ndim != 1:
        raise TaukError("model_interval takes one group: 1-d n and c (use model_interval_batch for many)")
    if ks is None:
        real = n[n > 0]
        ks = list(range(1, int(real.min()) + 1)) if real.size else [1]
    res = model_interval_batch(n[None, :], c[None, :], ks, **options)

    def squeeze(r: ModelInterval) -> ModelInterval:
        kw = {f: getattr(r, f) for f in r.__dataclass_fields__}
        for f in ("lo", "hi", "estimate", "posterior_mean", "posterior_median", "model_lo", "model_hi", "n_tasks"):
            kw[f] = kw[f][0]
        kw["check_p"] = float(r.check_p[0])
        kw["check_passed"] = bool(r.check_passed[0])
        kw["source"] = str(r.source[0])
        kw["ess"] = float(r.ess[0])
        return ModelInterval(**kw)

    return {e: squeeze(v) for e, v in res.items()} if isinstance(res, dict) else squeeze(res)

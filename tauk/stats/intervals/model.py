r"""Model-based intervals for pass^k and pass@k: a beta-binomial hierarchical posterior with a model check.

The task-bootstrap intervals are not calibrated at benchmark sizes (T = 10–50 tasks, n = 1–8 trials): the per-task
values Û_k = C(c,k)/C(n,k) are few and skewed, and the truth is mostly missed *above* the interval. Here the
population of tasks is modelled instead, which fills in the tail that ten tasks cannot show. Claim (95 %, 1,000
replications in each of 140 pass^k cells, T = 10–200, n = 1–8): the population interval fell below 94 % in 1 cell
(lowest 93.9 %) where BCa did in 23 (lowest 77.9 %); the fixed-task interval in none (lowest 94.0 %) where the
normal re-run interval did in 34 of 84 (lowest 71.7 %). Cell by cell, and pass@k: ``docs/calibration/intervals.md``.

Model
-----
Task t has a success probability p_t ~ Beta(α, β), α = μκ, β = (1 − μ)κ, and c_t | p_t ~ Binomial(n_t, p_t). The
marginal likelihood of a task is exact:

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

Prior: μ ~ Beta(1, 1) and ρ = 1/(1 + κ) ~ Beta(1, 1), independent. ρ is the intra-task correlation of two trials of
one task: ρ → 0 is "every task alike", ρ → 1 "every task either always or never solved". Uniform on both is
proper, symmetric in success/failure and has no scale to choose; the alternatives measured (Beta(½, ½) on μ or ρ,
less weight on heterogeneous populations) were none better in every cell (``docs/calibration/intervals.md``).
``prior=`` takes any Beta pair.

Integration: (u, v) = (logit μ, log κ); a coarse 80 × 56 grid, then three rounds of importance sampling on a
1,597-point Fibonacci lattice through a Student-t(4) proposal (:mod:`tauk.stats.intervals.posterior`). Population
intervals are weighted quantiles of E[p^k] (deterministic); fixed-task intervals are quantiles of ``draws``
Monte-Carlo draws of mean_t p_t^k, joined with their copy re-centred on the unbiased estimate (a misfitting
population shape biases the task posteriors' shrinkage), then widened to the variance floor a re-run must have
(:mod:`tauk.stats.intervals.rerun_floor`; ``variance_floor=False`` turns it off).

All tasks enter the fit; each k uses, for the fixed estimand and the unbiased estimate, the tasks with n_t ≥ k (as
:func:`tauk.stats.pass_hat_k` does). A k above every task's n is not identified without the model: NaN and a
:class:`~tauk.errors.StatsWarning`. Where every task has one trial κ is not identified and only k = 1 is defined:
both estimands get Blaker's exact interval on (Σ c_t, T) (:mod:`tauk.stats.intervals.blaker`; inside
Clopper–Pearson's, still ≥ 95 % at every μ).

Model check and fallback: a posterior predictive check of the binned outcomes
(:mod:`tauk.stats.intervals.model_check`); where it fails, both estimands report the union of the model interval and
a task-bootstrap interval (``fallback``, default BCa; ``fallback_mode="replace"``: the bootstrap interval alone) —
the union, because the check fires on the data least like a Beta sample, where the bootstrap alone covered less than
the model. ``model_lo`` / ``model_hi`` keep the model's.

:func:`tauk.stats.pass_hat_k`, :func:`~tauk.stats.pass_at_k` and :func:`~tauk.stats.summarize` call it with
``method="model"`` (the default, :data:`tauk.conventions.CI_METHOD`) through :mod:`tauk.stats.intervals.group`.

Examples
--------
>>> import numpy as np
>>> from tauk.stats.intervals.model import model_interval
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

from tauk._compat import keyword_options
from tauk.conventions import CI_LEVEL, RESAMPLES, SEED
from tauk.errors import StatsWarning, TaukError

from ..options import IntervalOptions, interval_options
from ..tasks import unbiased_means
from .blaker import blaker
from .model_check import CHECK_ALPHA, check_threshold, ppc_pvalue
from .nonparametric import task_intervals_by_group
from .posterior import (
    DEFAULT_PRIOR,
    Prior,
    RowStreams,
    beta_moments,
    fixed_draws,
    posterior_points,
    resample,
    weighted_quantiles,
)
from .rerun_floor import variance_floor as _variance_floor

__all__ = [
    "ESTIMANDS",
    "METRICS",
    "FALLBACK",
    "ModelInterval",
    "fit_posterior",
    "model_interval",
    "model_interval_batch",
]

ESTIMANDS = ("population", "fixed", "both")
METRICS = ("pass^k", "pass@k")

FALLBACK = "bca"
"""The task interval joined to the model's where the check fails."""

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
    ks, metric, estimand, ci : what was asked (``level``: the old name of ``ci``, for one release).
    lo, hi : the reported interval (the model's, or the fallback's where the check failed; NaN where undefined).
    estimate : the unbiased point estimate mean_t Û_k over tasks with n_t ≥ k (NaN when none).
    posterior_mean, posterior_median : of the estimand under the model.
    model_lo, model_hi : the model interval, whatever the check said.
    n_tasks : tasks with n_t ≥ k.
    check_p : posterior predictive p-value (NaN: not testable). check_passed : p ≥ the threshold
        (:func:`check_threshold`) or not testable.
    source : "model", "binomial" (every n_t = 1: Blaker's exact interval) or "fallback:<method>".
    ess : effective sample size of the weighted posterior points (diagnostic; ≥ 100 is comfortable).
    """

    ks: np.ndarray
    metric: str
    estimand: str
    ci: float
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

    def group(self, i: int) -> ModelInterval:
        """Group ``i`` of a :func:`model_interval_batch` result, as :func:`model_interval` returns one group."""
        kw = {f: getattr(self, f) for f in self.__dataclass_fields__}
        for f in ("lo", "hi", "estimate", "posterior_mean", "posterior_median", "model_lo", "model_hi", "n_tasks"):
            kw[f] = kw[f][i]
        kw["check_p"], kw["check_passed"] = float(self.check_p[i]), bool(self.check_passed[i])
        kw["source"], kw["ess"] = str(self.source[i]), float(self.ess[i])
        return ModelInterval(**kw)

    @property
    def level(self) -> float:
        """Deprecated: the level, now :attr:`ci`."""
        warnings.warn("ModelInterval.level is deprecated; use .ci", DeprecationWarning, stacklevel=2)
        return self.ci


@keyword_options(("n", "c", "ks"), renamed={"level": "ci"})
def model_interval_batch(
    n,
    c,
    ks,
    *,
    metric: str = "pass^k",
    ci: float = CI_LEVEL,
    estimand: str = "population",
    prior: Prior = DEFAULT_PRIOR,
    check: bool = True,
    check_alpha: float | str = CHECK_ALPHA,
    check_draws: int = 400,
    fallback: str | None = FALLBACK,
    fallback_mode: str = "hull",
    recentre: bool = True,
    variance_floor: bool = True,
    draws: int = 2000,
    points: int = 1597,
    resamples: int = RESAMPLES,
    seed: int | None = SEED,
    within: str = "beta",
    options: IntervalOptions | None = None,
    posterior: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
    seed_per_group: bool = False,
) -> ModelInterval | dict[str, ModelInterval]:
    """Model-based intervals for many groups at once: ``n``, ``c`` are (G × T) arrays, n = 0 pads short groups.

    Parameters
    ----------
    n, c : (G, T) int arrays — trials (the denominator, e.g. τ-bench's N) and successes per task; n_t = 0 = no task.
    ks : the k's (≥ 1). Tasks with n_t < k are left out of that k (estimate, fixed estimand).
    metric : "pass^k" (E[p^k]) or "pass@k" (E[1 − (1 − p)^k]).
    ci : interval level (default :data:`tauk.conventions.CI_LEVEL`; ``level=``, its old name, works for one
        release).
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
    resamples, seed : for the fallback bootstrap and the Monte-Carlo draws; same seed, same numbers (defaults
        :data:`~tauk.conventions.RESAMPLES`, :data:`~tauk.conventions.SEED`).
    within : "beta" (default: moment-matched Beta for mean_t p_t^k given (α, β)) or "exact" (per-task draws).
    options : an :class:`~tauk.stats.IntervalOptions` instead of ``ci``, ``resamples`` and ``seed`` (its method must
        be ``"model"``).
    posterior : the groups' posterior points (A, B, W, ess), one row per group, from :func:`fit_posterior` with the
        same ``metric``, ``prior`` and ``points`` — so that several calls share one vectorised fit (e.g. a group and
        its dropped-trial bounds, :mod:`tauk.stats.missing`). Default: fitted here.
    seed_per_group : False (default): one random stream for the batch (fastest; a group's Monte-Carlo draws depend
        on the groups before it). True: each group draws from its own stream seeded with ``seed``, so that its
        interval is the one-group call's whatever else is in the batch (the posterior fit is shared; to rounding).

    Returns
    -------
    ModelInterval with (G, K) arrays (dict of two for ``estimand="both"``).
    """
    opts = interval_options(options, ci=ci, method="model", resamples=resamples, seed=seed)
    if opts.method != "model" or opts.ci is None:
        raise TaukError(f"model_interval makes the model's interval at a level: options must have method 'model' "
                        f"and a ci, got {opts}")  # fmt: skip
    ci, resamples, seed = opts.ci, opts.resamples, opts.seed
    n, c, ks = _check_inputs(n, c, ks, metric, estimand, ci)
    G = n.shape[0]
    if posterior is not None and (len(posterior) != 4 or np.shape(posterior[2])[0] != G):
        raise TaukError(f"posterior must be (A, B, W, ess) with one row per group ({G}), from fit_posterior")
    K = len(ks)
    rng = RowStreams.seeded(seed, G) if seed_per_group else np.random.default_rng(seed)
    ests = ("population", "fixed") if estimand == "both" else (estimand,)
    qs = [(1.0 - ci) / 2.0, 0.5, (1.0 + ci) / 2.0]
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
        rng_rows = rng.take(rows) if seed_per_group else rng
        if posterior is None:
            A, B, W, e = posterior_points(nn, cc, fit_prior, points=points)
        else:
            A, B, W, e = (np.asarray(x)[rows] for x in posterior)
        ess[rows] = e
        for est in ests:
            if est == "population":
                for j, th in enumerate(beta_moments(A, B, ks)):
                    q = weighted_quantiles(th, W, qs)
                    res[est]["lo"][rows, j], res[est]["median"][rows, j], res[est]["hi"][rows, j] = q.T
                    res[est]["mean"][rows, j] = (W * th).sum(1)
            else:
                idx = resample(W, draws, rng_rows)
                fd = fixed_draws(np.take_along_axis(A, idx, 1), np.take_along_axis(B, idx, 1), nn, cc, ks, rng_rows,
                                 within)  # fmt: skip
                q, mean = _draw_quantiles(fd, qs)
                res[est]["mean"][rows] = mean
                res[est]["lo"][rows], res[est]["median"][rows], res[est]["hi"][rows] = q
        if check:
            check_p[rows] = ppc_pvalue(nn, cc, A, B, W, rng_rows, check_draws)
    estimate = np.empty((G, K))
    n_tasks = np.empty((G, K), dtype=np.int64)
    for j, k in enumerate(ks):
        estimate[:, j], n_tasks[:, j] = unbiased_means(n, c, k, metric)
    kmax = np.where(n > 0, n, 0).max(1)
    beyond = (np.asarray(ks)[None, :] > kmax[:, None]) & has_task[:, None]
    if beyond.any():
        warnings.warn(
            f"k above every task's trials in {int(beyond.any(1).sum())} group(s): E[p^k] is not identified there "
            "without the model's extrapolation; reported as NaN",
            StatsWarning,
            stacklevel=3,
        )
    passed = ~(check_p < check_threshold((n > 0).sum(1), check_alpha))
    failed = np.flatnonzero(~passed)
    source = np.where(binomial, "binomial", np.where(has_task, "model", "empty")).astype(object)
    flo = fhi = None
    if fallback_mode not in ("hull", "replace"):
        raise TaukError(f"fallback_mode must be 'hull' or 'replace', got {fallback_mode!r}")
    if fallback and failed.size:
        flo, fhi = task_intervals_by_group(n[failed], c[failed], ks, metric, opts.replace(method=fallback))
        source[failed] = f"fallback:{fallback}"
    out = {}
    for est in ests:
        r = res[est]
        if metric == "pass@k":  # the fit was on failures: θ = 1 − E[(1 − p)^k]
            r["lo"], r["hi"] = 1.0 - r["hi"], 1.0 - r["lo"]
            r["mean"], r["median"] = 1.0 - r["mean"], 1.0 - r["median"]
        if binomial.any() and 1 in ks:  # every task one trial: Blaker's exact interval on (Σ c, T); pass@1 = pass^1
            j = ks.index(1)
            s_b, T_b = c[binomial].sum(1).astype(float), (n[binomial] > 0).sum(1).astype(float)
            r["lo"][binomial, j], r["hi"][binomial, j] = blaker(s_b, T_b, ci)
            r["mean"][binomial, j] = r["median"][binomial, j] = s_b / T_b
        lo, hi = r["lo"], r["hi"]
        if est == "fixed" and recentre:
            d = np.where(np.isfinite(estimate), estimate - r["mean"], 0.0)
            d[binomial] = 0.0
            lo, hi = np.minimum(lo, np.clip(lo + d, 0.0, 1.0)), np.maximum(hi, np.clip(hi + d, 0.0, 1.0))
        if est == "fixed" and variance_floor:
            lo, hi = _variance_floor(lo, hi, estimate, n, c, ks, metric, ci)
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
                                                   metric, ci)  # fmt: skip
                    lo[failed], hi[failed] = flo_f, fhi_f
        out[est] = ModelInterval(
            ks=np.asarray(ks),
            metric=metric,
            estimand=est,
            ci=ci,
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


def _draw_quantiles(fd: np.ndarray, qs: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Quantiles ``qs`` (len(qs), R, K) and means (R, K) of draws (R, S, K) along S. A (row, k) is all NaN (no task
    with k trials) or has no NaN (:func:`fixed_draws`); the NaN ones stay NaN. Equals ``np.nanquantile`` /
    ``np.nanmean`` without their per-row Python loop."""
    R, S, K = fd.shape
    ok = ~np.isnan(fd[:, 0, :])
    q = np.full((len(qs), R, K), np.nan)
    if ok.any():
        q[:, ok] = _linear_quantiles(fd.transpose(0, 2, 1)[ok], qs)
    return q, np.where(ok, fd.sum(axis=1) / S, np.nan)


def _linear_quantiles(x: np.ndarray, qs: list[float]) -> np.ndarray:
    """``np.quantile(x, qs, axis=1)`` (the "linear" method, 0 < q < 1, no NaN), bit for bit: the same virtual index
    (S − 1)·q and the same two-sided interpolation. (``np.quantile`` itself imports ``numpy.ma`` on first use
    through ``np.unique``, ~20 ms of a command's start.)"""
    S = x.shape[1]
    xs = np.sort(x, axis=1)
    v = (S - 1) * np.asarray(qs, dtype=np.float64)
    below = np.floor(v)
    prev = below.astype(np.intp)
    a, b = xs[:, prev], xs[:, np.minimum(prev + 1, S - 1)]
    g = v - below
    d = b - a
    out = a + d * g
    upper = np.broadcast_to(g >= 0.5, out.shape)
    out[upper] = (b - d * (1 - g))[upper]
    return out.T


def fit_posterior(n, c, metric: str = "pass^k", prior: Prior = DEFAULT_PRIOR, points: int = 1597):
    """The posterior points (A, B, W, ess) :func:`model_interval_batch` fits for groups ``n``, ``c`` (G × T, n = 0
    pads): on the success counts for pass^k, the failure counts (and the swapped prior) for pass@k. One call for
    several sets of groups, then ``posterior=`` rows of it to each, is one vectorised fit instead of several.

    >>> n = np.array([[4, 4, 4], [4, 4, 0]]); c = np.array([[1, 3, 4], [0, 2, 0]])
    >>> post = fit_posterior(n, c)
    >>> a = model_interval_batch(n[1:, :2], c[1:, :2], [1], posterior=tuple(x[1:] for x in post))
    >>> b = model_interval_batch(n[1:, :2], c[1:, :2], [1])
    >>> bool(np.allclose(a.lo, b.lo, rtol=0, atol=1e-12) and np.allclose(a.hi, b.hi, rtol=0, atol=1e-12))
    True
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if metric not in METRICS:
        raise TaukError(f"metric must be one of {METRICS}, got {metric!r}")
    if metric == "pass^k":
        return posterior_points(n, c, prior, points=points)
    return posterior_points(n, np.where(n > 0, n - c, 0), prior.swapped(), points=points)


def model_interval(
    n, c, ks=None, **options
) -> ModelInterval | dict[str, ModelInterval]:
    """Model-based interval for one group of tasks; same options as :func:`model_interval_batch` (``ci``,
    ``estimand``, ``metric``, …, or ``options=``).

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
    return {e: v.group(0) for e, v in res.items()} if isinstance(res, dict) else res.group(0)


def _check_inputs(n, c, ks, metric, estimand, ci):
    n = np.asarray(n)
    c = np.asarray(c)
    if n.shape != c.shape:
        raise TaukError(f"n and c must have the same shape, got {n.shape} and {c.shape}")
    if n.ndim != 2:
        raise TaukError("n and c must be (groups × tasks) arrays here; use model_interval for one group")
    if not (np.issubdtype(n.dtype, np.integer) or np.all(np.mod(n, 1) == 0)) or not (
        np.issubdtype(c.dtype, np.integer) or np.all(np.mod(c, 1) == 0)
    ):
        raise TaukError("n and c must be whole numbers of trials / successes")
    n = n.astype(np.int64)
    c = c.astype(np.int64)
    if np.any(n < 0) or np.any(c < 0) or np.any(c > n):
        raise TaukError("need 0 ≤ c_t ≤ n_t for every task (n_t = 0 marks padding)")
    ks = np.atleast_1d(np.asarray(ks, dtype=np.int64)).ravel()
    if ks.size == 0 or ks.min() < 1:
        raise TaukError(f"ks must be positive integers, got {ks.tolist()}")
    if metric not in METRICS:
        raise TaukError(f"metric must be one of {METRICS}, got {metric!r}")
    if estimand not in ESTIMANDS:
        raise TaukError(f"estimand must be one of {ESTIMANDS}, got {estimand!r}")
    if not 0.0 < ci < 1.0:
        raise TaukError(f"ci must be in (0, 1), got {ci!r}")
    return n, c, [int(k) for k in ks]

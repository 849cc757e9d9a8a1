"""Calibration of pass^k / pass@k intervals at benchmark sizes: coverage, width and misses of every method.

For each cell (population, T tasks, n trials, k) the script simulates ``--reps`` benchmarks — p_t drawn from the
population, c_t ~ Binomial(n, p_t) — computes every method's 95% interval and counts how often it covers

* the **population** estimand E[p^k] (pass@k: E[1 − (1−p)^k]) — a new draw of tasks; and
* the **fixed-task** estimand mean_t p_t^k over the simulated tasks (pass@k: mean_t 1 − (1−p_t)^k) — a re-run of
  the same tasks.

Methods: the existing task-bootstrap intervals ``bca``, ``percentile``, ``bootstrap-t`` (each with
``--resamples`` resamples, 1,999 by default instead of the library's 9,999, so that 1,000 replications a cell run
on 2 cores; the Monte-Carlo error this adds to an endpoint is small next to the interval width), the ``t`` interval
(T−1 df), all four after clipping to [0, 1] and with the Clopper–Pearson interval where every task is at 0 or 1
(exactly what :func:`tauk.stats.pass_hat_k` reports); ``rerun`` (θ̂ ± z·se_rerun, only where every n_t ≥ 2k);
and the beta-binomial model of :mod:`tauk.stats.intervals.model`: ``model`` (model check with its BCa fallback) and
``model-raw`` (the same without the check); ``default``: what ``tauk.stats.pass_hat_k`` / ``pass_at_k`` report with
every option at its default (``method="model"``: ``ci_low``/``ci_high`` for the population, ``rerun_ci_low``/
``rerun_ci_high`` for the fixed tasks), run through the public API on a trials frame holding every replication as
a run; on request (``--methods``) the prior variants ``model-jeffreys`` (μ ~ Beta(½, ½)) and ``model-rho-half``
(ρ ~ Beta(½, ½)), both without the check, ``model-rho-1-1.5`` / ``model-rho-1-2`` (ρ ~ Beta(1, 1.5) / Beta(1, 2),
with the check), ``model-nofloor`` (the default without the re-run variance floor) and ``model-replace`` (a failed
check reports the BCa interval alone instead of the union).

Output: one line per (estimand, metric, cell, method): coverage ± Monte-Carlo SE, mean width, misses low (truth
below the interval) / high (truth above); then per method the cells below 94% / above 96% (the upper bound is only
counted where T·n ≥ 40), the worst cells and the mean width relative to BCa; then the timing of one
``model_interval`` call (T = 50, n = 8, k = 1…8, both estimands). Deterministic for a seed: every cell draws from
its own stream, seeded by (seed, population, T, n).

Run:  python benchmarks/calibration.py [--reps 1000] [--seed 0] [--cells REGEX] [--methods m1,m2] [--quick]
      [--metric pass^k|pass@k|both] [--section calibration|compare|all] [--json out.json] [--out FILE]
``benchmarks/results/calibration_1000.txt`` is the full run (1,000 replications, seed 0): the bootstrap methods and
the model ran separately (``--methods bca,percentile,t,bootstrap-t,rerun --json a.json`` and ``--methods
model,model-raw --json b.json``, per metric) and were merged with ``--report-only --load a.json --load b.json``; on
2 shared cores the bootstrap methods take ~45 min for pass^k, the model ~25 min.
``--quick``: 200 replications, T ∈ {10, 50}. ``--cells`` is a regular expression matched against the cell label,
e.g. ``"B\\(0.7,1.5\\) T=10 n=8"``.

One entry point for every calibration table: ``--section compare`` runs ``benchmarks/calibration_compare.py``
(paired comparisons: type-I error and power of compare()'s tests and intervals; rank intervals; power plans — its
own options are listed below, the ``--compare-*`` ones are forwarded under their own names, ``--quick`` applies to
both) and ``--section all`` runs both, one after the other, into one output (``--out FILE`` also writes it there).
``benchmarks/calibration_compare.py`` still runs on its own. Measured outputs: ``benchmarks/results/``
(``calibration_1000.txt``, the 3,000-replication re-measurements, the prior variants, the variance floor's
before/after) and ``benchmarks/calibration_compare_results.txt``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import special, stats

from tauk.stats import intervals as M
from tauk.stats.intervals import bootstrap_means, interval, unanimous_interval
from tauk.stats.options import IntervalOptions

LEVEL = 0.95
TS = (10, 20, 50, 200)
NS = (1, 4, 8)
KS = (1, 4)


# ---------------------------------------------------------------------------------------------------------------
# populations: a sampler of p and the exact moments E[p^k] and E[(1 − p)^k]
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Population:
    name: str
    sample: Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
    moment: Callable[[int], float]  # E[p^k]
    co_moment: Callable[[int], float]  # E[(1 − p)^k]
    beta: bool  # a Beta population (the model is correct)


def _beta(a: float, b: float) -> Population:
    return Population(
        f"B({a:g},{b:g})",
        lambda rng, size: rng.beta(a, b, size),
        lambda k: float(M.beta_moment(a, b, k)),
        lambda k: float(M.beta_moment(b, a, k)),
        True,
    )


def _logit_normal(m: float, s: float) -> Population:
    x, w = np.polynomial.hermite_e.hermegauss(200)
    w = w / w.sum()
    p = special.expit(m + s * x)
    return Population(
        f"LN({m:g},{s:g})",
        lambda rng, size: special.expit(m + s * rng.standard_normal(size)),
        lambda k: float(np.sum(w * p**k)),
        lambda k: float(np.sum(w * (1 - p) ** k)),
        False,
    )


def _zero_mix(pi0: float, a: float, b: float) -> Population:
    def sample(rng, size):
        return np.where(rng.random(size) < pi0, 0.0, rng.beta(a, b, size))

    return Population(
        f"0.{int(round(pi0 * 10))}·δ0+B({a:g},{b:g})",
        sample,
        lambda k: (1 - pi0) * float(M.beta_moment(a, b, k)),
        lambda k: pi0 + (1 - pi0) * float(M.beta_moment(b, a, k)),
        False,
    )


def _two_point(p1: float, p2: float) -> Population:
    return Population(
        f"{{{p1:g},{p2:g}}}",
        lambda rng, size: np.where(rng.random(size) < 0.5, p1, p2),
        lambda k: 0.5 * (p1**k + p2**k),
        lambda k: 0.5 * ((1 - p1) ** k + (1 - p2) ** k),
        False,
    )


POPULATIONS = [
    _beta(0.7, 1.5),
    _beta(2, 2),
    _beta(8, 1),
    _beta(0.5, 0.5),
    _logit_normal(-0.5, 2.0),
    _zero_mix(0.2, 2, 2),
    _two_point(0.15, 0.85),
]


# ---------------------------------------------------------------------------------------------------------------
# methods: each maps (n, c) of shape (R, T), ks, metric → (lo, hi) of shape (R, K); NaN = not available
# ---------------------------------------------------------------------------------------------------------------


def _u_matrix(n_row: np.ndarray, c_row: np.ndarray, ks, metric: str) -> np.ndarray:
    x = c_row if metric == "pass^k" else n_row - c_row
    U = np.empty((n_row.size, len(ks)))
    for j, k in enumerate(ks):
        ok = n_row >= k
        u = np.where(ok, special.comb(x, k) / special.comb(np.where(ok, n_row, k), k), np.nan)
        U[:, j] = u if metric == "pass^k" else 1.0 - u
    return U


def _finish(U, lo, hi):
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return unanimous_interval(U, lo, hi, LEVEL)


def existing_methods(n, c, ks, metric, methods, resamples, seed):
    """bca / percentile / t / bootstrap-t as tauk reports them, one replication at a time (one resample matrix
    serves bca and percentile)."""
    R = n.shape[0]
    out = {m: (np.full((R, len(ks)), np.nan), np.full((R, len(ks)), np.nan)) for m in methods}
    rng = np.random.default_rng(seed)
    for r in range(R):
        U = _u_matrix(n[r], c[r], ks, metric)
        s = int(rng.integers(2**31))
        boot = None
        if "bca" in methods or "percentile" in methods:
            boot = bootstrap_means(U, resamples, s)
        for m in methods:
            if m == "bootstrap-t":
                lo, hi = interval(U, IntervalOptions(LEVEL, m, resamples, s + 1))
            else:
                lo, hi = interval(U, IntervalOptions(LEVEL, m, resamples, s), boot=boot)
            lo, hi = _finish(U, lo, hi)
            out[m][0][r], out[m][1][r] = lo, hi
    return out


def rerun_interval(n, c, ks, metric):
    """θ̂ ± z·se_rerun, se_rerun = √(Σ_t (Û_k² − Û_2k))/T (docs/spec.md §4), where every n_t ≥ 2k; else NaN."""
    R = n.shape[0]
    z = special.ndtri(0.5 + LEVEL / 2)
    lo = np.full((R, len(ks)), np.nan)
    hi = np.full((R, len(ks)), np.nan)
    x = c if metric == "pass^k" else n - c
    for j, k in enumerate(ks):
        if np.any(n < 2 * k):
            continue
        uk = special.comb(x, k) / special.comb(n, k)
        u2k = special.comb(x, 2 * k) / special.comb(n, 2 * k)
        T = n.shape[1]
        est = uk.mean(1)
        se = np.sqrt(np.maximum((uk**2 - u2k).sum(1), 0.0)) / T
        if metric == "pass@k":
            est = 1.0 - est
        lo[:, j], hi[:, j] = est - z * se, est + z * se
    return lo, hi


MODEL_VARIANTS = {
    "model": dict(),  # the default: check + BCa fallback; "model-raw" comes with it
    "model-jeffreys": dict(check=False, prior=M.Prior((0.5, 0.5), (1.0, 1.0))),
    "model-rho-half": dict(check=False, prior=M.Prior((1.0, 1.0), (0.5, 0.5))),
    "model-rho-1-1.5": dict(prior=M.Prior((1.0, 1.0), (1.0, 1.5))),
    "model-rho-1-2": dict(prior=M.Prior((1.0, 1.0), (1.0, 2.0))),
    "model-nofloor": dict(variance_floor=False),  # the fixed-task interval before the re-run variance floor
    "model-replace": dict(fallback_mode="replace"),  # a failed check reports the BCa interval alone
}
ALL_METHODS = ("bca", "percentile", "t", "bootstrap-t", "rerun", "model", "model-raw", "default", "model-jeffreys",
               "model-rho-half", "model-rho-1-1.5", "model-rho-1-2", "model-nofloor", "model-replace")
DEFAULT_METHODS = ("bca", "percentile", "t", "bootstrap-t", "rerun", "model", "model-raw", "default")


def model_method(n, c, ks, metric, seed, resamples, **kw):
    """Both estimands from one posterior (its fallback bootstrap with ``resamples``): → {estimand: (lo, hi)}, plus
    the share of replications whose check failed; with the check on, also the raw model interval (as "-raw")."""
    out = M.model_interval_batch(n, c, ks, metric=metric, ci=LEVEL, estimand="both", seed=seed, resamples=resamples,
                                 **kw)  # fmt: skip
    res = {e: (o.lo, o.hi) for e, o in out.items()}
    raw = {e: (o.model_lo, o.model_hi) for e, o in out.items()}
    return res, raw, float(np.mean(~out["population"].check_passed))


def api_method(n, c, ks, metric, seed):
    """The public default: ``tauk.stats.pass_hat_k`` (or ``pass_at_k``) of a trials frame whose runs are the
    replications, every option at its default but the seed → ({estimand: (lo, hi)}, share of checks failed)."""
    import polars as pl

    import tauk

    R, T = n.shape
    reps = np.repeat(np.arange(R), n.sum(1))
    task = np.concatenate([np.repeat(np.arange(T), n[r]) for r in range(R)])
    trial = np.concatenate([np.arange(m) for m in n.ravel()])
    success = trial < np.repeat(c.ravel(), n.ravel())
    frame = pl.DataFrame({"run_id": reps, "task_id": task.astype(str), "trial": trial,
                          "reward": success.astype(np.float64)})  # fmt: skip
    fn = tauk.stats.pass_hat_k if metric == "pass^k" else tauk.stats.pass_at_k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = fn(frame, k=list(ks), seed=seed).to_frame().sort("run_id", "k")
    shape = (R, len(ks))

    def arr(col):
        return f[col].fill_null(np.nan).to_numpy().reshape(shape)

    fired = float(f.filter(pl.col("k") == ks[0])["model_check_passed"].eq(False).fill_null(False).mean())
    return {"population": (arr("ci_low"), arr("ci_high")), "fixed": (arr("rerun_ci_low"), arr("rerun_ci_high"))}, fired


# ---------------------------------------------------------------------------------------------------------------
# the grid
# ---------------------------------------------------------------------------------------------------------------


def cell_seed(seed: int, label: str) -> int:
    return int(np.random.SeedSequence([seed, zlib.crc32(label.encode())]).generate_state(1)[0])


def simulate(pop: Population, T: int, n: int, R: int, seed: int):
    rng = np.random.default_rng(seed)
    p = pop.sample(rng, (R, T))
    nn = np.full((R, T), n, dtype=np.int64)
    return p, nn, rng.binomial(nn, p)


def run_cell(pop, T, n, ks, R, seed, methods, metric, resamples):
    """Every method's intervals for one (population, T, n): → {(estimand, k, method): stats dict}."""
    label = f"{pop.name} T={T} n={n}"
    s = cell_seed(seed, label + metric)
    p, nn, c = simulate(pop, T, n, R, cell_seed(seed, label))
    truth_pop = np.array([pop.moment(k) if metric == "pass^k" else 1 - pop.co_moment(k) for k in ks])
    truth_fix = np.stack([(p**k).mean(1) if metric == "pass^k" else (1 - (1 - p) ** k).mean(1) for k in ks], 1)
    intervals: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    timing: dict[str, float] = {}
    boot_methods = [m for m in methods if m in ("bca", "percentile", "t", "bootstrap-t")]
    if boot_methods:
        t0 = time.perf_counter()
        ex = existing_methods(nn, c, ks, metric, boot_methods, resamples, s)
        for m, v in ex.items():
            intervals[("population", m)] = intervals[("fixed", m)] = v
        timing["bootstrap"] = time.perf_counter() - t0
    if "rerun" in methods:  # a fixed-task interval only
        intervals[("fixed", "rerun")] = rerun_interval(nn, c, ks, metric)
    fired = {}
    if "default" in methods:
        t0 = time.perf_counter()
        res, fired["default"] = api_method(nn, c, ks, metric, s)
        for est, v in res.items():
            intervals[(est, "default")] = v
        timing["default"] = time.perf_counter() - t0
    for m in methods:
        if m in MODEL_VARIANTS or (m == "model-raw" and "model" not in methods):
            t0 = time.perf_counter()
            res, raw, fired[m] = model_method(nn, c, ks, metric, s, resamples,
                                              **MODEL_VARIANTS.get(m, MODEL_VARIANTS["model"]))  # fmt: skip
            for est in res:
                if m != "model-raw":
                    intervals[(est, m)] = res[est]
                if m in ("model", "model-raw") and "model-raw" in methods:
                    intervals[(est, "model-raw")] = raw[est]
            timing[m] = time.perf_counter() - t0
    rows = []
    for (est, m), (lo, hi) in intervals.items():
        truth = truth_pop[None, :] if est == "population" else truth_fix
        for j, k in enumerate(ks):
            ok = np.isfinite(lo[:, j]) & np.isfinite(hi[:, j])
            if not ok.any():
                continue
            t = np.broadcast_to(truth[:, j], (R,))[ok]
            lo_j, hi_j = lo[ok, j], hi[ok, j]
            cov = float(np.mean((lo_j <= t + 1e-12) & (t - 1e-12 <= hi_j)))
            rows.append(
                dict(
                    estimand=est, metric=metric, pop=pop.name, beta=pop.beta, T=T, n=n, k=k, method=m,
                    reps=int(ok.sum()), coverage=cov, fired=fired.get(m, float("nan")), mcse=float(np.sqrt(cov * (1 - cov) / ok.sum())),
                    width=float(np.mean(hi_j - lo_j)), low=float(np.mean(t < lo_j - 1e-12)),
                    high=float(np.mean(t > hi_j + 1e-12)),
                )
            )
    return rows, timing


def cell_list(metric: str, quick: bool, pattern: str | None):
    Ts = (10, 50) if quick else TS
    pops = POPULATIONS
    out = []
    for pop in pops:
        for T in Ts:
            for n in NS:
                ks = tuple(k for k in KS if k <= n)
                if metric == "pass@k" and not quick and (pop.name not in ("B(0.7,1.5)", "B(8,1)", "LN(-0.5,2)")):
                    continue  # pass@k on a subset of populations
                labels = [f"{pop.name} T={T} n={n} k={k}" for k in ks]
                if pattern and not any(re.search(pattern, lab) for lab in labels):
                    continue
                out.append((pop, T, n, ks))
    return out


# ---------------------------------------------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------------------------------------------


def _label(r):
    return f"{r['pop']} T={r['T']} n={r['n']} k={r['k']}"


def print_rows(rows, out=None):
    out = out or sys.stdout
    key = lambda r: (r["estimand"], r["metric"], r["pop"], r["T"], r["n"], r["k"], ALL_METHODS.index(r["method"]))  # noqa: E731
    cur = None
    for r in sorted(rows, key=key):
        head = (r["estimand"], r["metric"])
        if head != cur:
            cur = head
            print(f"\n== {r['metric']}, {r['estimand']} estimand: coverage ± MC SE, mean width, misses low/high ==", file=out)
        print(
            f"{_label(r):32s} {r['method']:14s} {100 * r['coverage']:5.1f} ± {100 * r['mcse']:3.1f}%  "
            f"w={r['width']:.3f}  low {100 * r['low']:4.1f}%  high {100 * r['high']:4.1f}%"
            + (f"  check fired {100 * r['fired']:4.1f}%" if r["method"] in ("model", "default") else ""),
            file=out,
        )


def print_matrix(rows, out=None):
    """The compact table: one line per cell, each method's coverage (%) side by side, and its width / BCa's."""
    out = out or sys.stdout
    methods = [m for m in ALL_METHODS if any(r["method"] == m for r in rows)]
    cells: dict[tuple, dict] = {}
    for r in rows:
        cells.setdefault((r["metric"], r["estimand"], r["pop"], r["T"], r["n"], r["k"]), {})[r["method"]] = r
    cur = None
    for key in sorted(cells, key=lambda x: (x[0], x[1], [p.name for p in POPULATIONS].index(x[2]), *x[3:])):
        if key[:2] != cur:
            cur = key[:2]
            print(f"\n== {cur[0]}, {cur[1]}: coverage % (MC SE ≈ 0.7 at 95 %, 1,000 reps) [width ÷ BCa] ==", file=out)
            print(f"{'cell':32s}" + "".join(f"{m:>17s}" for m in methods), file=out)
        rs = cells[key]
        wb = rs.get("bca", {}).get("width")
        parts = []
        for m in methods:
            if m not in rs:
                parts.append(f"{'—':>17s}")
                continue
            ratio = f"[{rs[m]['width'] / wb:4.2f}]" if wb else " " * 6
            parts.append(f"{100 * rs[m]['coverage']:9.1f} {ratio}")
        print(f"{key[2]} T={key[3]} n={key[4]} k={key[5]}".ljust(32) + "".join(parts), file=out)


def summarise(rows, out=None, worst=5):
    """Per (metric, estimand, method): cells < 94%, cells > 96% where T·n ≥ 40, worst cells, width vs BCa."""
    out = out or sys.stdout
    width_bca = {(r["estimand"], r["metric"], _label(r)): r["width"] for r in rows if r["method"] == "bca"}
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["metric"], r["estimand"], r["method"]), []).append(r)
    print("\n== summary: cells below 94% / above 96% (upper bound only where T·n ≥ 40), width vs BCa ==", file=out)
    for (metric, est, m), rs in sorted(groups.items(), key=lambda x: (x[0][0], x[0][1], ALL_METHODS.index(x[0][2]))):
        below = [r for r in rs if r["coverage"] < 0.94]
        above = [r for r in rs if r["coverage"] > 0.96 and r["T"] * r["n"] >= 40]
        ratios = [r["width"] / width_bca[(est, metric, _label(r))] for r in rs if (est, metric, _label(r)) in width_bca]
        ratios = [x for x in ratios if np.isfinite(x) and x > 0]
        wr = f"{np.exp(np.mean(np.log(ratios))):.2f}× BCa (range {min(ratios):.2f}–{max(ratios):.2f})" if ratios else "n/a"
        nb = sum(r["beta"] for r in below)
        print(
            f"{metric} {est:10s} {m:14s} cells {len(rs):3d}  <94%: {len(below):2d} ({nb} Beta)  >96%: {len(above):2d}  "
            f"min {100 * min(r['coverage'] for r in rs):5.1f}%  width {wr}",
            file=out,
        )
        # what Monte-Carlo noise alone does: an exactly-95 % interval's expected count of cells outside, and the
        # cells outside by more than two MC SEs (their true coverage is outside 94–96 % beyond reasonable doubt)
        e_below = sum(stats.binom.cdf(np.ceil(0.94 * r["reps"]) - 1, r["reps"], LEVEL) for r in rs)
        e_above = sum(stats.binom.sf(np.floor(0.96 * r["reps"]), r["reps"], LEVEL) for r in rs if r["T"] * r["n"] >= 40)
        sure_below = sum(r["coverage"] + 2 * r["mcse"] < 0.94 for r in rs)
        sure_above = sum(r["coverage"] - 2 * r["mcse"] > 0.96 for r in above)
        print(f"      an exactly-95 % interval would show {e_below:.1f} / {e_above:.1f} such cells by MC noise alone; "
              f"beyond 2 MC SE: {sure_below} below, {sure_above} above", file=out)  # fmt: skip
        bad = sorted(rs, key=lambda r: abs(r["coverage"] - 0.95), reverse=True)[:worst]
        print("      worst: " + "; ".join(f"{_label(r)} {100 * r['coverage']:.1f}%" for r in bad), file=out)


def time_single_group(repeats: int = 20) -> float:
    rng = np.random.default_rng(0)
    p = rng.beta(0.7, 1.5, 50)
    n = np.full(50, 8)
    c = rng.binomial(n, p)
    ks = range(1, 9)
    M.model_interval(n, c, ks, estimand="both")  # warm-up
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            M.model_interval(n, c, ks, estimand="both")
        best = min(best, time.perf_counter() - t0)
    return best


def calibration(args) -> list[dict]:
    methods = [m.strip() for m in args.methods.split(",")] if args.methods else list(DEFAULT_METHODS)
    unknown = set(methods) - set(ALL_METHODS)
    if unknown:
        raise SystemExit(f"unknown method(s) {sorted(unknown)}; choose from {ALL_METHODS}")
    metrics = ("pass^k", "pass@k") if args.metric == "both" else (args.metric,)
    reps = args.reps if args.reps else (200 if args.quick else 1000)
    rows: list[dict] = []
    for path in args.load or []:  # rows of earlier runs (e.g. the slow bootstrap methods), overridden by this run's
        rows += json.loads(Path(path).read_text())["rows"]
    t_start = time.perf_counter()
    for metric in [] if args.report_only else metrics:
        cells = cell_list(metric, args.quick, args.cells)
        for pop, T, n, ks in cells:
            t0 = time.perf_counter()
            r, timing = run_cell(pop, T, n, ks, reps, args.seed, methods, metric, args.resamples)
            if args.cells:
                r = [x for x in r if re.search(args.cells, _label(x))]
            new = {(x["estimand"], x["metric"], _label(x), x["method"]) for x in r}
            rows = [x for x in rows if (x["estimand"], x["metric"], _label(x), x["method"]) not in new] + r
            tt = ", ".join(f"{k} {v:.1f}s" for k, v in timing.items())
            print(f"[{time.perf_counter() - t_start:7.1f}s] {metric} {pop.name} T={T} n={n}: {time.perf_counter() - t0:.1f}s ({tt})", file=sys.stderr, flush=True)
    print(f"# calibration: {reps} replications a cell, seed {args.seed}, {int(LEVEL * 100)}% intervals, "
          f"bootstrap methods with {args.resamples} resamples" + (f"; rows merged from {args.load}" if args.load else ""))
    print_rows(rows)
    print_matrix(rows)
    summarise(rows)
    if not args.no_timing:
        t = time_single_group()
        print(f"\nmodel_interval, one group (T=50, n=8, k=1…8, population + fixed, check on): {1000 * t:.1f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps({"reps": reps, "seed": args.seed, "rows": rows}, indent=1))
    return rows


def _compare_module():
    path = Path(__file__).with_name("calibration_compare.py")
    spec = importlib.util.spec_from_file_location("calibration_compare", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _compare_argv(args) -> list[str]:
    """This script's ``--compare-*`` options (and ``--quick``) as ``benchmarks/calibration_compare.py`` takes them."""
    argv = ["--quick"] if args.quick else []
    for name in ("sections", "deltas", "compare_cells", "compare_reps", "compare_seed", "compare_resamples"):
        value = getattr(args, name)
        if value is not None:
            argv += [f"--{name.removeprefix('compare_')}", str(value)]
    return argv


def build_parser() -> argparse.ArgumentParser:
    text = _compare_module().build_parser().format_help()
    compare_help = text[text.index("options:") :]
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="sections: calibration (this script: pass^k / pass@k intervals), compare (benchmarks/"
               "calibration_compare.py: compare() tests and intervals, rank intervals, power plans), all (both, one "
               "output).\n\nThe compare section's own options (give them as --sections, --deltas, --compare-cells, "
               "--compare-reps, --compare-seed, --compare-resamples):\n" + compare_help,
    )  # fmt: skip
    ap.add_argument("--section", default="calibration", choices=("calibration", "compare", "all"),
                    help="which tables: the intervals (calibration), the comparisons (compare) or both (all)")  # fmt: skip
    ap.add_argument("--reps", type=int, default=None, help="replications a cell (default 1000; 200 with --quick)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cells", default=None, help="regular expression on the cell label 'POP T=.. n=.. k=..'")
    ap.add_argument("--methods", default=None, help=f"comma-separated subset of {','.join(ALL_METHODS)}")
    ap.add_argument("--quick", action="store_true", help="200 replications, T ∈ {10, 50} (and the compare section's "
                    "quick cells)")  # fmt: skip
    ap.add_argument("--metric", default="both", choices=("pass^k", "pass@k", "both"))
    ap.add_argument("--resamples", type=int, default=1999, help="bootstrap resamples of the existing methods")
    ap.add_argument("--json", default=None, help="also write every row to this JSON file")
    ap.add_argument("--load", action="append", help="merge the rows of an earlier --json file (repeatable)")
    ap.add_argument("--no-timing", action="store_true", help="skip the single-group timing")
    ap.add_argument("--report-only", action="store_true", help="simulate nothing: print the --load rows")
    ap.add_argument("--out", default=None, metavar="FILE", help="also write everything printed to FILE")
    g = ap.add_argument_group("section compare (forwarded to benchmarks/calibration_compare.py)")
    g.add_argument("--sections", default=None, help="paired,ranks,power (default: all three)")
    g.add_argument("--deltas", default=None, help="paired section: null and/or alternative, e.g. 0,0.1")
    g.add_argument("--compare-cells", default=None, help="paired section: T:n:k,…")
    g.add_argument("--compare-reps", type=int, default=None, help="benchmarks per cell (default 2000; 300 quick)")
    g.add_argument("--compare-seed", type=int, default=None, help="seed (default 20240601)")
    g.add_argument("--compare-resamples", type=int, default=None, help="bootstrap resamples (default 9999)")
    return ap


class _Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for s in self.streams:
            s.write(text)
        return len(text)

    def flush(self):
        for s in self.streams:
            s.flush()


def main(argv: list[str] | None = None, section: str | None = None):
    args = build_parser().parse_args(argv)
    section = section or args.section
    out = {}
    stdout = sys.stdout
    handle = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    if handle:
        sys.stdout = _Tee(stdout, handle)
    try:
        if section in ("calibration", "all"):
            out["calibration"] = calibration(args)
        if section in ("compare", "all"):
            print("\n" if section == "all" else "", end="")
            out["compare"] = _compare_module().main(_compare_argv(args))
    finally:
        sys.stdout = stdout
        if handle:
            handle.close()
    return out


if __name__ == "__main__":
    main()

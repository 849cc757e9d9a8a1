"""Benchmark: pass^k, k = 1…16, with 95% intervals over 10,000 tasks × 16 trials, against scipy's BCa per k.

The **default** interval (``method="model"``, :data:`tauk.conventions.CI_METHOD`: the beta-binomial posterior of
:mod:`tauk.stats.intervals.model`, population and re-run intervals for every k from one posterior) is timed through
``tauk.stats.summarize``; its cost does not grow with the tasks (sufficient statistics over the ≤ n + 1 distinct
per-task counts, fixed-task draws over the distinct (n, c) pairs), and the model check's bootstrap-t fallback,
when the check fails, resamples the ≤ n + 1 distinct per-task rows. Also timed: the default interval of one
typical group (T = 50, n = 8, k = 1…8), which must take ≤ 50 ms.

For the task bootstrap, tauk draws ONE resample matrix per group and multiplies it into the (tasks × 16) matrix of
Û_k, so every k shares the resampling; the BCa acceleration is the mean's closed-form jackknife. Two paths are timed:

* default (``tauk.stats.pass_hat_k``): a task bootstrap only depends on how many copies of each *distinct* per-task
  row are drawn — Multinomial(T, m_c/T) over ≤ n+1 rows here — so the matrix is (9,999 × 17): the same bootstrap
  distribution, exactly;
* per-task counts (``collapse=False``): the (9,999 × 10,000) matrix of task counts, drawn as int32 in chunks of ~4M
  cells (never the whole 800 MB float64 matrix) — the general path when per-task rows are mostly distinct.
 The reference calls ``scipy.stats.bootstrap(method="BCa",
vectorized=True)`` once per k on the per-task Û_k column. Both run here, in this process, one after the other.

Endpoints must agree within Monte-Carlo error: the two runs use independent resamples, so each endpoint differs by
about √2 · sd_MC, with sd_MC ≈ √(α(1−α)) / (φ(z_α) √B) · se (the sampling SD of a bootstrap quantile); we require
|Δ| ≤ 4 √2 sd_MC for every endpoint and k.

Run:  python benchmarks/bench_stats.py [--tasks 10000] [--trials 16] [--resamples 9999] [--one-group]
``--one-group`` times only the one-group target through ``tauk.stats.summarize`` (nothing dropped, and 10 % of the
trials dropped), against scipy's BCa × 8 on the same group in the same run
(``benchmarks/results/bench_stats_one_group.txt``); ``--one-group --baseline DIR`` times it for this tree and for
the tauk source tree in DIR (e.g. ``git archive`` of the commit before a change), alternating processes so both see
the same load, and prints the ratios.
Exit status 1 if the default or the BCa path is less than 20× faster than scipy, an endpoint disagrees, or the
one-group default interval takes more than 50 ms.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tracemalloc

import numpy as np
import polars as pl
from scipy import stats

import tauk.stats as ts
from tauk.stats.intervals import interval, model_interval


def make_trials(T: int, n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.8, 0.6, T)
    success = rng.random((T, n)) < p[:, None]
    task = np.repeat(np.arange(T), n)
    return pl.DataFrame(
        {
            "run_id": "bench",
            "simulation_id": [f"s{i}" for i in range(T * n)],
            "task_id": task.astype(str),
            "trial": np.tile(np.arange(n), T),
            "format": "tau2",
            "agent": "bench-agent",
            "domain": "bench",
            "num_trials": n,
            "termination_reason": "user_stop",
            "reward": success.ravel().astype(np.float64),
            "agent_cost": None,
        },
        schema_overrides={"agent_cost": pl.Float64},
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--resamples", type=int, default=9_999)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--one-group", action="store_true", help="time only the one-group target (T=50, n=8, k=1…8)")
    ap.add_argument("--baseline", default=None, help="with --one-group: also time the tauk source tree in this folder "
                    "(e.g. an export of main), alternating with this one, in the same run")
    ap.add_argument("--rounds", type=int, default=3, help="with --baseline: alternations (medians reported)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one_group() timings, for --baseline
    args = ap.parse_args()
    if args.one_group and args.json:
        print(json.dumps(dict(zip(ONE_GROUP_FIELDS, one_group()))))
        return 0
    if args.one_group and args.baseline:
        return report_against_baseline(args.baseline, args.rounds)
    if args.one_group:
        return report_one_group()
    T, n, B, level = args.tasks, args.trials, args.resamples, args.level
    ks = list(range(1, n + 1))
    trials = make_trials(T, n)
    print(f"{T:,} tasks × {n} trials ({trials.height:,} trials), pass^1…{n}, {level:.0%} intervals, {B:,} resamples")

    # ---- tauk, the default (model) interval, through summarize
    tracemalloc.start()
    t0 = time.perf_counter()
    s_default = ts.summarize(trials, k=ks, ci=level, resamples=B, seed=0, progress=False)
    t_default = time.perf_counter() - t0
    _, peak_default = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    methods = sorted(set(s_default.pass_hat_k["interval_method"].to_list()))
    t_one, t_one_api, *_ = one_group()

    # ---- tauk BCa: one resample matrix for all k
    tracemalloc.start()
    t0 = time.perf_counter()
    res = ts.pass_hat_k(trials, k=ks, ci=level, method="bca", resamples=B, seed=0, progress=False)
    t_tauk = time.perf_counter() - t0
    _, peak_tauk = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ours = res.to_frame().sort("k")

    # ---- tauk, per-task counts matrix (no collapsing), on the per-task table
    U = ts.per_task(trials, k=ks).select([f"U_{k}" for k in ks]).to_numpy()
    tracemalloc.start()
    t0 = time.perf_counter()
    lo_full, hi_full = interval(U, ts.IntervalOptions(level, "bca", B, 0), progress=False, collapse=False)
    t_full = time.perf_counter() - t0
    _, peak_full = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    # ---- scipy: one bootstrap per k on the per-task Û_k column
    rng = np.random.default_rng(1)
    tracemalloc.start()
    t0 = time.perf_counter()
    ref = []
    for j, _k in enumerate(ks):
        r = stats.bootstrap((U[:, j],), np.mean, method="BCa", vectorized=True, n_resamples=B,
                            confidence_level=level, rng=rng)
        ref.append((r.confidence_interval.low, r.confidence_interval.high, r.standard_error))
    t_scipy = time.perf_counter() - t0
    _, peak_scipy = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    alpha = (1 - level) / 2
    mc_factor = math.sqrt(alpha * (1 - alpha)) / (stats.norm.pdf(stats.norm.ppf(alpha)) * math.sqrt(B))
    ok = True
    print(f"\n{'k':>3} {'pass^k':>8} {'tauk low':>9} {'full low':>9} {'scipy low':>9} {'tauk high':>9} "
          f"{'full high':>9} {'scipy high':>10} {'max|Δ|/sd_MC':>13}")
    for j, k in enumerate(ks):
        row = ours.row(j, named=True)
        lo, hi, se = ref[j]
        sd_mc = math.sqrt(2) * mc_factor * se
        devs = [abs(row["ci_low"] - lo), abs(row["ci_high"] - hi), abs(lo_full[j] - lo), abs(hi_full[j] - hi)]
        dev = max(devs) / sd_mc if sd_mc > 0 else 0.0
        ok &= dev <= 4.0
        print(f"{k:>3} {row['estimate']:8.5f} {row['ci_low']:9.5f} {lo_full[j]:9.5f} {lo:9.5f} {row['ci_high']:9.5f} "
              f"{hi_full[j]:9.5f} {hi:10.5f} {dev:13.2f}")

    ratio = t_scipy / t_tauk
    ratio_full = t_scipy / t_full
    ratio_default = t_scipy / t_default
    print(f"\ntauk summarize, default method (model; {', '.join(methods)}): {t_default:8.2f} s   peak traced memory "
          f"{peak_default / 2**20:8.1f} MiB")
    print(f"tauk pass_hat_k, method='bca' (trials frame) : {t_tauk:8.2f} s   peak traced memory {peak_tauk / 2**20:8.1f} MiB")
    print(f"tauk BCa, per-task counts (collapse=False)   : {t_full:8.2f} s   peak traced memory {peak_full / 2**20:8.1f} MiB")
    print(f"scipy.stats.bootstrap (BCa) × {len(ks)}             : {t_scipy:8.2f} s   peak traced memory {peak_scipy / 2**20:8.1f} MiB")
    print(f"ratio : {ratio_default:8.1f}× faster (default, model), {ratio:.1f}× (BCa), {ratio_full:.1f}× (BCa, per-task "
          "counts); required ≥ 20× for the default and BCa")
    print(f"one group (T=50, n=8, k=1…8), default interval: {1000 * t_one:.1f} ms (model_interval, both estimands), "
          f"{1000 * t_one_api:.1f} ms (tauk.stats.pass_hat_k from a trials frame); required ≤ 50 ms")
    print(f"endpoints agree within Monte-Carlo error (≤ 4·√2·sd_MC): {ok}")
    fast = ratio >= 20 and ratio_default >= 20 and t_one_api <= 0.050
    return (0 if ok and fast else 1) | report_one_group()


def report_one_group() -> int:
    """The one-group speed target (issue 23): ``tauk.stats.summarize`` of one group of 50 tasks × 8 trials, k = 1…8,
    every option at its default, ≤ 50 ms — with nothing dropped, and with 10 % of the trials infrastructure errors
    (the dropped-trial bounds then cost two more intervals); against scipy's BCa (9,999 resamples) × 8 on the same
    group in the same run. Exit status 1 if the summary takes more than 50 ms."""
    t_model, t_api, t_sum, t_drop, t_ref = one_group()
    print(f"\none group (T=50, n=8, k=1…8), best of 20, default options: model_interval {1000 * t_model:.1f} ms, "
          f"pass_hat_k {1000 * t_api:.1f} ms, summarize {1000 * t_sum:.1f} ms, summarize with 10 % of trials dropped "
          f"{1000 * t_drop:.1f} ms; scipy.stats.bootstrap (BCa) × 8 on the same group {1000 * t_ref:.1f} ms "
          f"(baseline, this run): summarize {t_ref / t_sum:.1f}× faster, {t_ref / t_drop:.1f}× with drops; "
          "required ≤ 50 ms")  # fmt: skip
    return 0 if max(t_sum, t_drop) <= 0.050 else 1


ONE_GROUP_FIELDS = ("model_interval", "pass_hat_k", "summarize", "summarize_dropped", "scipy_bca_x8")


def report_against_baseline(baseline: str, rounds: int) -> int:
    """The one-group timings of this tree and of the tree in ``baseline`` (each in its own process, alternating
    ``rounds`` times, so that both see the same load), their medians and the ratios this / baseline. Exit status 1
    if this tree's summaries take more than 50 ms."""
    import os
    import subprocess
    from pathlib import Path

    here = Path(__file__).resolve()
    trees = {"this": str(here.parents[1]), "baseline": str(Path(baseline).resolve())}
    runs: dict[str, list[dict]] = {k: [] for k in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": tree}
            out = subprocess.run([sys.executable, str(here), "--one-group", "--json"], env=env, check=True,
                                 capture_output=True, text=True).stdout  # fmt: skip
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
    med = {name: {f: float(np.median([r[f] for r in rs])) for f in ONE_GROUP_FIELDS} for name, rs in runs.items()}
    print(f"one group (T=50, n=8, k=1…8), best of 20 per process, median of {rounds} alternating processes per tree; "
          f"baseline tree {trees['baseline']}")
    print(f"{'':<20} {'this (ms)':>10} {'baseline (ms)':>14} {'this / baseline':>16}")
    for f in ONE_GROUP_FIELDS:
        a, b = 1000 * med["this"][f], 1000 * med["baseline"][f]
        print(f"{f:<20} {a:>10.1f} {b:>14.1f} {a / b:>16.2f}")
    t, b = med["this"], med["baseline"]
    print(f"dropped-trial overhead (summarize with 10 % dropped ÷ without): this {t['summarize_dropped'] / t['summarize']:.2f}, "
          f"baseline {b['summarize_dropped'] / b['summarize']:.2f}; required ≤ 50 ms")
    return 0 if max(t["summarize"], t["summarize_dropped"]) <= 0.050 else 1


def one_group(repeats: int = 20) -> tuple[float, float]:
    """Best-of-``repeats`` seconds of the default interval of one group of 50 tasks × 8 trials, k = 1…8: the model
    itself, the whole public call from a trials frame, the summary (nothing dropped; 10 % dropped), and the
    reference (scipy's BCa × 8, once)."""
    import warnings


    trials = make_trials(50, 8, seed=3)
    g = ts.per_task(trials, k=[1])
    n, c = g["n"].to_numpy(), g["c"].to_numpy()
    rng = np.random.default_rng(4)
    dropped = trials.with_columns(pl.when(pl.Series(rng.random(trials.height) < 0.1)).then(pl.lit("infrastructure_error"))
                                  .otherwise(pl.col("termination_reason")).alias("termination_reason"))  # fmt: skip
    best = best_api = best_sum = best_drop = math.inf
    for _ in range(repeats + 1):  # the first round warms up
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model_interval(n, c, list(range(1, 9)), estimand="both")
            t1 = time.perf_counter()
            ts.pass_hat_k(trials, k=list(range(1, 9)))
            t2 = time.perf_counter()
            ts.summarize(trials, by="agent")
            t3 = time.perf_counter()
            ts.summarize(dropped, by="agent")
            t4 = time.perf_counter()
        best, best_api = min(best, t1 - t0), min(best_api, t2 - t1)
        best_sum, best_drop = min(best_sum, t3 - t2), min(best_drop, t4 - t3)
    U = np.stack([[math.comb(int(ci), k) / math.comb(8, k) for k in range(1, 9)] for ci in c])
    t0 = time.perf_counter()
    for j in range(8):
        stats.bootstrap((U[:, j],), np.mean, method="BCa", n_resamples=9_999, random_state=0, vectorized=True)
    ref = time.perf_counter() - t0
    return best, best_api, best_sum, best_drop, ref


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: ``tauk.stats.compare()`` on 50 shared tasks, the default (score) path against the old path, same run.

The old path (before issue 23) is rebuilt here by swapping its pieces back in: the paired t test (``test="t"``),
``scipy.stats.wilcoxon``'s default for ``p_wilcoxon`` (exact for small untied samples; the issue measured it at
~92 % of compare()'s time) and the Monte-Carlo sign flip (9,999 flips above 20 differing tasks) for
``p_signflip``. Three data sets of 50 tasks: the repository's ``data/`` (atlas-large vs baseline, pooled setups),
and simulated pairs with one and with four trials per task. Each timing is the median of ``--repeat`` calls after
one warm-up call (the exact unconditional critical value is cached per T).

Run: ``nice -n 10 python benchmarks/bench_compare.py [--repeat 30]``; target ≤ 50 ms per call for the default.
Output kept in ``benchmarks/results/bench_compare.txt``. Exit status 1 when the default takes more than 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

import tauk
from tauk.stats.comparisons import pairwise
from tauk.stats.comparisons.pvalues import sign_flip_pvalue

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def old_path():
    """compare()'s cross-checks as they were before issue 23."""
    w, sf = pairwise.wilcoxon_pvalue, pairwise._signflip_cross_check

    def old_wilcoxon(d):
        return 1.0 if not np.any(d != 0) else float(stats.wilcoxon(d, zero_method="wilcox").pvalue)

    pairwise.wilcoxon_pvalue = old_wilcoxon
    pairwise._signflip_cross_check = lambda d, permutations, seed: sign_flip_pvalue(d, permutations=permutations,
                                                                                    seed=seed)  # fmt: skip
    try:
        yield
    finally:
        pairwise.wilcoxon_pvalue, pairwise._signflip_cross_check = w, sf


def simulated(n: int, T: int = 50, seed: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.beta(0.63, 0.88, T)
    rows = {"agent": [], "task_id": [], "trial": [], "reward": []}
    for agent, shift in (("A", 0.6), ("B", 0.0)):
        pa = 1 / (1 + np.exp(-(np.log(p / (1 - p)) + shift)))
        for t in range(T):
            for i in range(n):
                rows["agent"].append(agent)
                rows["task_id"].append(f"t{t}")
                rows["trial"].append(i)
                rows["reward"].append(float(rng.random() < pa[t]))
    df = pl.DataFrame(rows)
    return df.with_columns(pl.lit("airline").alias("domain"), pl.lit("r-" + df["agent"]).alias("run_id"))


def timed(fn, repeat: int) -> float:
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args(argv)
    sets = {
        "data/ atlas-large vs baseline (50 tasks, pooled)": (tauk.load(ROOT / "data"), "atlas-large", "baseline",
                                                             {"pool_setups": True}),  # fmt: skip
        "simulated, 50 tasks × 1 trial": (simulated(1), "A", "B", {}),
        "simulated, 50 tasks × 4 trials": (simulated(4), "A", "B", {}),
    }
    print(f"# benchmarks/bench_compare.py --repeat {args.repeat}: median of {args.repeat} calls after a warm-up")
    print(f"{'data':52} {'default (score)':>16} {'old path (t + scipy)':>21} {'ratio':>6} {'n_tasks':>7}")
    worst = 0.0
    for name, (trials, a, b, kw) in sets.items():
        new = timed(lambda t=trials, a=a, b=b, kw=kw: tauk.stats.compare(t, a, b, **kw), args.repeat)
        with old_path():
            old = timed(lambda t=trials, a=a, b=b, kw=kw: tauk.stats.compare(t, a, b, test="t", **kw), args.repeat)
        T = tauk.stats.compare(trials, a, b, **kw).row()["n_tasks"]
        worst = max(worst, new)
        print(f"{name:52} {1000 * new:13.1f} ms {1000 * old:18.1f} ms {old / new:5.2f}× {T:7d}")
    print(f"slowest default call: {1000 * worst:.1f} ms; required ≤ 50 ms")
    return 0 if worst <= 0.050 else 1


if __name__ == "__main__":
    sys.exit(main())

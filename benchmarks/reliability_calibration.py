"""Outcome consistency, measured: the bias of the unbiased U-statistic and of HAL's plug-in at K = 2…8, the coverage
of the task-level interval, and how often a K = 2 subsample's estimate falls inside the K = 8 interval.

    python benchmarks/reliability_calibration.py [--reps 20000] [--seed 0] [--out benchmarks/results/reliability_calibration.txt]

Populations of per-task success probabilities p_t (the τ-bench-like Beta(0.7, 1.5) first); the estimand is the
population mean E[(2p − 1)²] (exact Beta moments; a new draw of T tasks), i.e. what the task-level interval is for.
Every replication draws T tasks and c_t ~ Binomial(K, p_t), then runs the same estimator code as
``tauk.stats.reliability`` (``tauk.stats.reliability.estimators``). Printed per cell: mean estimate − truth (bias)
with its Monte-Carlo SE, for U and the plug-in; the coverage of the U interval at 95 %.

The subsample check: a K = 8 data set is drawn; its U estimate and 95 % interval computed; then 2 of each task's
8 trials are drawn without replacement (c₂ ~ Hypergeometric) and the K = 2 estimate computed from them. The rate
at which the K = 2 estimate falls inside the K = 8 interval measures whether a run with 2 trials per task reports
a value the 8-trial run would accept — i.e. whether agents run with different K are comparable (it does not
measure coverage: both estimates come from the same tasks and trials).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sstats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tauk.stats.reliability.estimators import outcome_plugin, outcome_u, wilson_outcome_interval  # noqa: E402

POPULATIONS = {
    "beta(0.7,1.5) tau-bench-like": ("beta", 0.7, 1.5),
    "beta(2,2)": ("beta", 2.0, 2.0),
    "beta(8,1)": ("beta", 8.0, 1.0),
    "beta(0.5,0.5)": ("beta", 0.5, 0.5),
    "two-point {0.15,0.85}": ("two", 0.15, 0.85),
    "20% impossible + beta(2,2)": ("mix", 2.0, 2.0),
}


def draw_p(kind, a, b, size, rng):
    if kind == "beta":
        return rng.beta(a, b, size)
    if kind == "two":
        return np.where(rng.random(size) < 0.5, a, b)
    p = rng.beta(a, b, size)
    return np.where(rng.random(size) < 0.2, 0.0, p)


def truth(kind, a, b):
    """E[(2p − 1)²] = 4E[p²] − 4E[p] + 1."""
    if kind == "two":
        return 0.5 * ((2 * a - 1) ** 2 + (2 * b - 1) ** 2)
    m1 = a / (a + b)
    m2 = a * (a + 1) / ((a + b) * (a + b + 1))
    v = 4 * m2 - 4 * m1 + 1
    return 0.2 * 1.0 + 0.8 * v if kind == "mix" else v


def t_ci(values, level=0.95):
    T = values.shape[1]
    m = values.mean(axis=1)
    se = values.std(axis=1, ddof=1) / np.sqrt(T)
    q = sstats.t.ppf(0.5 + level / 2, T - 1)
    return m, m - q * se, m + q * se


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    lines = [f"outcome consistency calibration: {args.reps} replications a cell, seed {args.seed}", ""]
    start = time.perf_counter()
    lines.append("bias at T = 50 tasks (estimate - E[(2p-1)^2]; MC SE in parentheses)")
    lines.append(f"{'population':32} {'K':>2} {'truth':>7} {'bias U':>16} {'bias plug-in':>16}")
    worst_u = 0.0
    for name, (kind, a, b) in POPULATIONS.items():
        tv = truth(kind, a, b)
        for K in range(2, 9):
            p = draw_p(kind, a, b, (args.reps, 50), rng)
            c = rng.binomial(K, p)
            u = outcome_u(np.full_like(c, K), c).mean(axis=1)
            pl_ = outcome_plugin(np.full_like(c, K), c).mean(axis=1)
            bu, bp = u.mean() - tv, pl_.mean() - tv
            worst_u = max(worst_u, abs(bu))
            lines.append(f"{name:32} {K:>2} {tv:7.4f} {bu:+8.4f} ({u.std() / np.sqrt(args.reps):.4f}) "
                         f"{bp:+8.4f} ({pl_.std() / np.sqrt(args.reps):.4f})")
    lines.append(f"largest |bias| of U over every cell: {worst_u:.4f} (target <= 0.005)")
    lines.append("")
    lines.append("coverage of the 95 % task-level t interval of U (truth: the population mean)")
    lines.append(f"{'population':32} " + " ".join(f"T={T:<3}K={K}" for T in (20, 50, 100) for K in (2, 4, 8)))
    covs = []
    for name, (kind, a, b) in POPULATIONS.items():
        tv = truth(kind, a, b)
        cells = []
        for T in (20, 50, 100):
            for K in (2, 4, 8):
                p = draw_p(kind, a, b, (args.reps, T), rng)
                c = rng.binomial(K, p)
                u = outcome_u(np.full_like(c, K), c)
                if K == 2:  # what tauk.stats.reliability reports with 2 trials a task
                    ci = np.array([wilson_outcome_interval(row, 0.95)[2:4] for row in u])
                    lo, hi = ci[:, 0], ci[:, 1]
                else:
                    m, lo, hi = t_ci(u)
                cov = float(np.mean((lo <= tv) & (tv <= hi)))
                covs.append(cov)
                cells.append(f"{100 * cov:8.1f}")
        lines.append(f"{name:32} " + " ".join(cells))
    lines.append(f"coverage over {len(covs)} cells: min {100 * min(covs):.1f} %, max {100 * max(covs):.1f} %, "
                 f"mean {100 * np.mean(covs):.2f} % (MC SE {100 * np.sqrt(0.95 * 0.05 / args.reps):.2f} points)")
    lines.append("")
    lines.append("K = 2 subsample estimate inside the K = 8 95 % interval (same tasks and trials; T tasks)")
    for name, (kind, a, b) in POPULATIONS.items():
        row = []
        for T in (20, 50, 100):
            p = draw_p(kind, a, b, (args.reps, T), rng)
            c8 = rng.binomial(8, p)
            m8, lo, hi = t_ci(outcome_u(np.full_like(c8, 8), c8))
            c2 = rng.hypergeometric(c8, 8 - c8, 2)
            u2 = outcome_u(np.full_like(c2, 2), c2).mean(axis=1)
            pl8 = outcome_plugin(np.full_like(c8, 8), c8)
            pm8, plo, phi = t_ci(pl8)
            p2 = outcome_plugin(np.full_like(c2, 2), c2).mean(axis=1)
            row.append(f"T={T}: U {100 * np.mean((lo <= u2) & (u2 <= hi)):5.1f} %, plug-in "
                       f"{100 * np.mean((plo <= p2) & (p2 <= phi)):5.1f} %")
        lines.append(f"{name:32} " + "; ".join(row))
    lines.append("")
    lines.append(f"{time.perf_counter() - start:.1f} s")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

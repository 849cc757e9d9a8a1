"""Calibration of ``tauk.stats.consistency``'s run-to-run SD and noise floor (MDD) by simulation.

    python benchmarks/calibrate_consistency.py [--datasets 10000] [--reruns 2000] [--draws 5] [--seed 0]

For synthetic benchmarks with known per-task success probabilities p_t (T ∈ {20, 50} tasks, drawn once per
benchmark from a family below) and n ∈ {2, 4, 8} recorded trials per task:

* **sd_single_run**: the mean of the estimate over ``--datasets`` simulated multi-trial data sets against the
  empirical SD of pass^1 over ``--reruns`` simulated single re-runs of the same tasks (target: ratio 0.90–1.10);
* **mdd** (m = 1, 2, 4, 8): each data set gives a noise floor (:func:`tauk.stats.noise.noise_floor`, the
  library's own code); a fresh pair of independent m-trial runs of the same setup counts as "significantly
  different" when its gap reaches that floor (a data set with no floor — fewer than 3 flaky tasks — declares
  nothing). The share of such pairs is the floor's size (target 5 % ± 1.5 at α = 0.05). Beside it: a normal floor
  z·√2·SD (what one would write by hand) and the conservative exact threshold (size ≤ α), the two alternatives.

Families (p_t ~ …): ``taubench`` Beta(0.63, 0.87) (μ 0.42, ρ 0.40: the beta-binomial fit of the τ-bench gpt-4o
airline file), ``u-shaped`` Beta(0.3, 0.3) (ρ 0.62), ``moderate`` Beta(2, 2) (ρ 0.2), ``coin`` p = 0.5 for every
task, and ``few-flaky`` (stress: two thirds of the tasks always fail or always pass, the rest uniform). E[K] is the
expected number of flaky tasks (0 < c < n) of the benchmark at that n. ``--draws`` benchmarks per family give the
min–max of the size over benchmarks (a small benchmark's lattice moves the achievable sizes around). Prints a
Markdown table.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import special

from tauk.stats.noise import difference_null, noise_floor, rerun_variance

FAMILIES = ("taubench", "u-shaped", "moderate", "coin", "few-flaky")


def benchmark(family: str, T: int, rng: np.random.Generator) -> np.ndarray:
    """The p_t of one synthetic benchmark of ``family``."""
    if family == "taubench":
        return rng.beta(0.63, 0.87, T)
    if family == "u-shaped":
        return rng.beta(0.3, 0.3, T)
    if family == "moderate":
        return rng.beta(2.0, 2.0, T)
    if family == "coin":
        return np.full(T, 0.5)
    if family == "few-flaky":
        k = T // 3
        return np.r_[np.zeros(k), np.ones(k), rng.uniform(0, 1, T - 2 * k)]
    raise ValueError(family)


def expected_flaky(p: np.ndarray, n: int) -> float:
    return float(np.sum(1.0 - p**n - (1.0 - p) ** n))


def simulate(p: np.ndarray, n: int, datasets: int, reruns: int, rng: np.random.Generator,
             ms: tuple[int, ...] = (1, 2, 4, 8), alpha: float = 0.05) -> dict[str, float]:  # fmt: skip
    """sd ratio, and sizes of the library's floor (mid-p exact) and of the normal and conservative floors."""
    T = p.size
    c = rng.binomial(n, p, size=(datasets, T))
    nn = np.full_like(c, n)
    V = rerun_variance(nn, c).sum(axis=1)
    single = rng.binomial(1, p, size=(reruns, T)).mean(axis=1)
    out = {"sd_ratio": float((np.sqrt(V) / T).mean() / single.std(ddof=1))}
    z = special.ndtri(1 - alpha / 2)
    never = np.iinfo(np.int64).max
    for m in ms:
        s, _ = noise_floor(nn, c, m, alpha)
        gap = np.abs(rng.binomial(m, p, size=(datasets, T)).sum(axis=1) - rng.binomial(m, p, size=(datasets, T)).sum(axis=1))
        has = s > 0
        out[f"size_m{m}"] = float(np.mean(has & (gap >= s)))
        out[f"cond_m{m}"] = float(np.mean(gap[has] >= s[has])) if has.any() else float("nan")
        out[f"none_m{m}"] = float(np.mean(~has))
        if m == 1:
            out["normal_m1"] = float(np.mean((V > 0) & (gap >= z * np.sqrt(2.0 * V) - 1e-9)))
            ge = np.cumsum(difference_null(rerun_variance(nn, c), 1)[:, ::-1], axis=1)[:, ::-1]
            ok = ge <= alpha + 1e-12
            ok[:, 0] = False
            s_cons = np.where(has, np.argmax(ok, axis=1), never)
            out["cons_m1"] = float(np.mean(gap >= s_cons))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=10000)
    ap.add_argument("--reruns", type=int, default=2000)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    pct = lambda x: "—" if x != x else f"{100 * x:.1f}"  # noqa: E731
    print("| family | T | n | E[K] | sd ratio | MDD size m=1 | min–max over benchmarks | no floor | normal z·√2·SD "
          "| exact, size ≤ α | m=2 | m=4 | m=8 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for fi, family in enumerate(FAMILIES):
        for T in (20, 50):
            for n in (2, 4, 8):
                rows = []
                for d in range(args.draws):
                    p = benchmark(family, T, np.random.default_rng([args.seed, fi, T, d]))
                    rng = np.random.default_rng([args.seed, fi, T, n, d])
                    rows.append(simulate(p, n, args.datasets, args.reruns, rng, ms=(1, 2, 4, 8) if d == 0 else (1,)))
                    if d == 0:
                        ek = expected_flaky(p, n)
                first, sizes = rows[0], [r["size_m1"] for r in rows]
                print(f"| {family} | {T} | {n} | {ek:.1f} | {first['sd_ratio']:.3f} | {pct(first['size_m1'])} | "
                      f"{pct(min(sizes))}–{pct(max(sizes))} | {pct(first['none_m1'])} | {pct(first['normal_m1'])} | "
                      f"{pct(first['cons_m1'])} | {pct(first['size_m2'])} | {pct(first['size_m4'])} | "
                      f"{pct(first['size_m8'])} |", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

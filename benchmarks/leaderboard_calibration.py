"""Calibration of the leaderboard's separability claims and the voice rows' exact intervals, by simulation.

    nice python benchmarks/leaderboard_calibration.py [--reps 2000] [--seed 0]

Agents on a benchmark: task t has a latent difficulty z_t ~ N(0, 1); agent i succeeds on it with probability
p_it = Φ(θ_i + σ(ρ z_t + √(1 − ρ²) e_it)), σ = 1.5, e_it ~ N(0, 1), so ρ is how much the agents share task
difficulty (ρ = 0: independent; real leaderboards: ρ well above 0). The population pass^1 is μ_i = Φ(θ_i/√(1 + σ²)).
Each replicate draws new tasks and runs every agent n times per task.

A. **Two rows, unpaired (what the published numbers allow)**: Welch's t on the per-task values
   (:func:`tauk.leaderboard.ranking.welch_pvalue`, the library's code). Size (μ_A = μ_B) and power (μ_A − μ_B =
   0.10), beside the paired t on the same tasks (what trajectories allow; tauk.stats.compare's test).
B. **Rank intervals and tie groups of five rows** (:func:`tauk.leaderboard.ranking.rank_bounds` on the Welch p):
   coverage of each row's true rank (by μ) per row and all at once, mean width, how often the possibly-best set
   holds the true best, and how often a tie-group boundary falls between two rows of equal μ.
C. **Re-run question**: two runs of the *same* agent on the *same* tasks; z on the rows' re-run standard errors
   (√(Σ_t c_t(n − c_t)/(n²(n − 1)))/T, tauk's se_rerun at k = 1): size.
D. **Voice rates**: S simulations, a Poisson(m) number of events in each, each event a success with a per-simulation
   probability drawn from a Beta with mean p and intra-simulation correlation ICC: coverage of the Clopper–Pearson
   interval on (Σ successes, Σ events), the interval :mod:`tauk.leaderboard.voice` gives; and of the Garwood
   interval of an interruption rate when the per-simulation rate varies (gamma with the same ICC-like spread).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from scipy import stats

from tauk.leaderboard.ranking import rank_bounds, welch_pvalue
from tauk.leaderboard.voice import clopper_pearson, poisson_rate_interval
from tauk.stats import holm

SIGMA = 1.5


def theta_for(mu: float) -> float:
    return float(stats.norm.ppf(mu) * np.sqrt(1 + SIGMA**2))


def draw(thetas, T, n, rho, reps, rng) -> np.ndarray:
    """(reps, K, T) per-task pass^1 values c/n."""
    K = len(thetas)
    z = rng.standard_normal((reps, 1, T))
    e = rng.standard_normal((reps, K, T))
    p = stats.norm.cdf(np.asarray(thetas)[None, :, None] + SIGMA * (rho * z + np.sqrt(1 - rho**2) * e))
    return rng.binomial(n, p) / n


def welch_vec(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Welch p over the last axis, vectorised (checked against the library's welch_pvalue below)."""
    nx, ny = x.shape[-1], y.shape[-1]
    vx, vy = x.var(axis=-1, ddof=1) / nx, y.var(axis=-1, ddof=1) / ny
    d = x.mean(axis=-1) - y.mean(axis=-1)
    se2 = vx + vy
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se2**2 / (vx**2 / (nx - 1) + vy**2 / (ny - 1))
        p = 2 * stats.t.sf(np.abs(d) / np.sqrt(se2), df)
    return np.where(se2 > 0, p, np.where(d == 0, 1.0, 0.0))


def part_a(reps: int, rng: np.random.Generator) -> None:
    print("## A. Two rows: unpaired Welch (from the published numbers) vs paired t (with trajectories), α = 0.05\n")
    print("| T | n | ρ | size Welch | size paired t | power Welch (Δμ = 0.10) | power paired t |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    checked = False
    for T, n, rho in itertools.product((20, 50, 114), (1, 4), (0.0, 0.5, 0.9)):
        out = []
        for mus in ((0.6, 0.6), (0.65, 0.55)):
            u = draw([theta_for(m) for m in mus], T, n, rho, reps, rng)
            pw = welch_vec(u[:, 0], u[:, 1])
            if not checked:
                lib = [welch_pvalue(u[i, 0], u[i, 1])[1] for i in range(20)]
                assert np.allclose(lib, pw[:20], rtol=1e-10), "vectorised Welch ≠ the library's"
                checked = True
            d = u[:, 0] - u[:, 1]
            sd = d.std(axis=-1, ddof=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                pp = np.where(sd > 0, 2 * stats.t.sf(np.abs(d.mean(-1)) / (sd / np.sqrt(T)), T - 1),
                              np.where(d.mean(-1) == 0, 1.0, 0.0))  # fmt: skip
            out += [(pw <= 0.05).mean(), (pp <= 0.05).mean()]
        print(f"| {T} | {n} | {rho:g} | {100 * out[0]:.1f} % | {100 * out[1]:.1f} % | {100 * out[2]:.1f} % | "
              f"{100 * out[3]:.1f} % |")
    se = np.sqrt(0.05 * 0.95 / reps)
    print(f"\n(± {100 * 1.96 * se:.1f} points Monte-Carlo at the nominal 5 %, {reps} replicates per cell.)\n")


def part_b(reps: int, rng: np.random.Generator) -> None:
    print("## B. Five rows: rank intervals (Welch p, Holm per row / all pairs), possibly-best set, tie groups\n")
    print("| scenario μ | T | ρ | coverage per row (best … worst) | all at once | width | simult. all | "
          "best in best-set | false tie boundary |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    scen = {"close 0.50…0.58": (0.58, 0.56, 0.54, 0.52, 0.50), "spread 0.30…0.70": (0.7, 0.6, 0.5, 0.4, 0.3),
            "ties 0.6 0.6 0.5 0.5 0.4": (0.6, 0.6, 0.5, 0.5, 0.4)}  # fmt: skip
    K = 5
    for (name, mus), T, rho in itertools.product(scen.items(), (50, 114), (0.0, 0.7)):
        u = draw([theta_for(m) for m in mus], T, 4, rho, reps, rng)
        true_lo = np.array([1 + sum(m > mi for m in mus) for mi in mus])  # ties: any rank in [lo, hi] is right
        true_hi = np.array([K - sum(m < mi for m in mus) for mi in mus])
        cov = np.zeros(K)
        all_cov = sim_all = best_in = false_tie = 0
        width = 0.0
        n_equal_adj = 0
        for r in range(reps):
            P = np.full((K, K), np.nan)
            D = np.zeros((K, K))
            for i, j in itertools.combinations(range(K), 2):
                d, p = welch_pvalue(u[r, i], u[r, j])
                P[i, j] = P[j, i] = p
                D[i, j], D[j, i] = d, -d
            lo, hi = rank_bounds(P, D, 0.05, False)
            slo, shi = rank_bounds(P, D, 0.05, True)
            ok = (lo <= true_hi) & (hi >= true_lo)
            cov += ok
            all_cov += ok.all()
            sim_all += ((slo <= true_hi) & (shi >= true_lo)).all()
            width += float((hi - lo).mean())
            best = int(np.argmax(mus))
            best_in += lo[best] == 1
            # tie groups as the library makes them: adjacent in the observed order, Holm over the K − 1 pairs
            order = np.argsort(-u[r].mean(axis=1), kind="stable")
            padj = np.array([P[order[i], order[i + 1]] for i in range(K - 1)])
            sep = np.asarray(holm(padj.tolist())) <= 0.05
            for i in range(K - 1):
                if mus[order[i]] == mus[order[i + 1]]:
                    n_equal_adj += 1
                    false_tie += sep[i]
        per = " ".join(f"{100 * c / reps:.1f}" for c in cov)
        ft = f"{100 * false_tie / n_equal_adj:.1f} %" if n_equal_adj else "—"
        print(f"| {name} | {T} | {rho:g} | {per} | {100 * all_cov / reps:.1f} % | {width / reps:.2f} | "
              f"{100 * sim_all / reps:.1f} % | {100 * best_in / reps:.1f} % | {ft} |")
    print("\n(coverage: the interval holds a rank the row's μ allows; false tie boundary: share of adjacent pairs of "
          "equal μ that a tie-group boundary separates.)\n")


def part_c(reps: int, rng: np.random.Generator) -> None:
    print("## C. Re-run question: two runs of one agent on the same tasks, z on the re-run SEs, α = 0.05\n")
    print("| T | n | family | size |")
    print("|---:|---:|---|---:|")
    for T, n, fam in itertools.product((20, 50, 114), (2, 4), ("beta(0.63, 0.87)", "beta(2, 2)")):
        a, b = (0.63, 0.87) if fam.startswith("beta(0.63") else (2.0, 2.0)
        rej = 0
        for _ in range(reps):
            p = rng.beta(a, b, T)  # the fixed tasks of this replicate
            c1, c2 = rng.binomial(n, p), rng.binomial(n, p)
            se = [np.sqrt(np.sum(c * (n - c) / (n * n * (n - 1)))) / T for c in (c1, c2)]
            d = c1.mean() / n - c2.mean() / n
            s = np.hypot(*se)
            p_val = 1.0 if s == 0 and d == 0 else (0.0 if s == 0 else 2 * stats.norm.sf(abs(d) / s))
            rej += p_val <= 0.05
        print(f"| {T} | {n} | {fam} | {100 * rej / reps:.1f} % |")
    print()


def part_d(reps: int, rng: np.random.Generator) -> None:
    print("## D. Voice rates: exact intervals when events cluster within simulations (95 %)\n")
    print("| simulations | events / sim | true rate | ICC | Clopper–Pearson coverage | Garwood coverage (rate) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for S, m, p, icc in itertools.product((50, 114), (3, 8, 20), (0.2, 0.9), (0.0, 0.05, 0.2)):
        cov_cp = cov_g = 0
        for _ in range(reps):
            k = rng.poisson(m, S)
            if icc > 0:
                a, b = p * (1 / icc - 1), (1 - p) * (1 / icc - 1)
                ps = rng.beta(a, b, S)
                lam = rng.gamma(1 / icc, p * icc, S)  # mean p per event, CV² = icc
            else:
                ps = np.full(S, p)
                lam = np.full(S, p)
            x = int(rng.binomial(k, ps).sum())
            N = int(k.sum())
            if N:
                lo, hi = clopper_pearson(x, N)
                cov_cp += lo <= p <= hi
            y = int(rng.poisson(lam * k).sum())
            if N:
                lo, hi = poisson_rate_interval(y, float(N))
                cov_g += lo <= p <= hi
        print(f"| {S} | {m} | {p:g} | {icc:g} | {100 * cov_cp / reps:.1f} % | {100 * cov_g / reps:.1f} % |")
    print("\n(ICC 0: events independent — the intervals' assumption. Above 0 the coverage falls: the published "
          "interval is a lower bound on the uncertainty.)\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", default="abcd")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    print(f"# Leaderboard calibration: {args.reps} replicates per cell, seed {args.seed}\n")
    for part, fn in zip("abcd", (part_a, part_b, part_c, part_d)):
        if part in args.parts:
            fn(args.reps if part != "b" else max(200, args.reps // 4), rng)
    print(f"(B uses a quarter of the replicates; {time.perf_counter() - t0:.0f} s in all.)")


if __name__ == "__main__":
    main()

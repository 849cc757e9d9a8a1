"""Why "the K = 2 subsample estimate inside the K = 8 interval in ≥ 95 % of draws" cannot hold for a calibrated
interval, computed exactly, and the check that replaces it, measured.

    python benchmarks/subsample_interval_bound.py [--reps 20000] [--seed 0] [--out benchmarks/results/subsample_interval_bound.txt]

**The bound.** Task t has c_t ~ Binomial(8, p_t) successes; U8_t = 1 − 4c(8 − c)/56, and a random 2 of its 8 trials
give U2_t ∈ {−1, 1} with E[U2_t | c_t] = U8_t (a U-statistic averages its kernel over all pairs; a subsample draws
one pair). So δ_t = U2_t − U8_t has mean 0 given the data, Var(δ_t | c_t) = 1 − U8_t², and δ is uncorrelated with
U8. Over T tasks, Ô2 − Ô8 = mean δ_t (variance τ²/T, τ² = E[1 − U8²]) and Ô8 − θ (variance σ²/T, σ² = Var(U8_t))
are uncorrelated and jointly normal in the limit. For any interval [Ô8 − a, Ô8 + b] (a, b in the limit fixed
multiples of σ/√T, as for every interval built from Ô8 and its standard error):

    P(Ô2 in it) = P(−a ≤ δ̄ ≤ b) = P(−a·σ/τ ≤ X ≤ b·σ/τ),   P(θ in it) = P(−a ≤ X ≤ b),   X ~ N(0, σ²/T)

so when τ > σ the interval holds Ô2 *less often than it covers θ*, whatever a and b: a 95 % confidence interval
holds Ô2 with probability 2Φ(1.96·σ/τ) − 1 (equal tails), and one that holds Ô2 95 % of the time is τ/σ times as
wide and covers θ with probability 2Φ(1.96·τ/σ) − 1. τ and σ are computed exactly from the Beta-binomial (or
binomial mixture) distribution of c_t, for each population of ``reliability_calibration.py``. The same for an
independent K = 2 run on the same tasks (new trials: τ² = E[1 − (2p − 1)⁴] + Var(U8 | p) averaged) and on new
tasks (τ² = Var(U2) + σ²).

**The replacement.** What comparability across K needs is one expectation (bias ≤ 0.0022 at every K,
``reliability_calibration.py``) and a check that a K = 2 figure is *consistent* with a K = 8 run. Two are measured
(T tasks, the K = 8 data drawn, 2 of each task's 8 trials subsampled):

* ``tauk.stats.reliability.estimators.subsample_prediction_interval``: Ô8 ± 1.96·√(Σ(1 − U8_t²))/T, the prediction
  interval of the subsample's estimate given the K = 8 data (target 95 %);
* the K = 2 interval (Wilson of the share of disagreeing tasks) and the K = 8 interval tauk reports overlap
  (target ≥ 95 %);

beside the old check (Ô2 inside the K = 8 confidence interval), the bound's normal-limit prediction of it, and the
K = 8 interval's coverage of θ.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import integrate
from scipy import stats as sstats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from reliability_calibration import POPULATIONS, draw_p, skew_t_ci, truth, wilson_d  # noqa: E402

from tauk.stats.reliability.estimators import outcome_u, subsample_prediction_interval  # noqa: E402

Z = float(sstats.norm.ppf(0.975))


def c_pmf(kind, a, b, K):
    """The distribution of a task's successes in K trials, over the population of p."""
    c = np.arange(K + 1)
    if kind == "beta":
        return sstats.betabinom.pmf(c, K, a, b)
    if kind == "two":
        return 0.5 * sstats.binom.pmf(c, K, a) + 0.5 * sstats.binom.pmf(c, K, b)
    pmf = 0.8 * sstats.betabinom.pmf(c, K, a, b)
    pmf[0] += 0.2
    return pmf


def moment_p(kind, a, b, f):
    """E[f(p)] over the population."""
    if kind == "beta":
        return integrate.quad(lambda p: f(p) * sstats.beta.pdf(p, a, b), 0, 1, limit=200)[0]
    if kind == "two":
        return 0.5 * (f(a) + f(b))
    return 0.2 * f(0.0) + 0.8 * integrate.quad(lambda p: f(p) * sstats.beta.pdf(p, a, b), 0, 1, limit=200)[0]


def exact(kind, a, b, K=8):
    c = np.arange(K + 1)
    pmf = c_pmf(kind, a, b, K)
    u = 1 - 4 * c * (K - c) / (K * (K - 1))
    mean_u = float(pmf @ u)
    sigma2 = float(pmf @ u**2) - mean_u**2
    tau_sub2 = float(pmf @ (1 - u**2))
    e4 = moment_p(kind, a, b, lambda p: (2 * p - 1) ** 4)
    # a new pair of trials on the same task: Var(U2' | p) = 1 − (2p − 1)⁴, Var(U8 | p) = E[U8² | p] − (2p − 1)⁴
    tau_new2 = (1 - e4) + (float(pmf @ u**2) - e4)
    pmf2 = c_pmf(kind, a, b, 2)
    u2 = np.array([1.0, -1.0, 1.0])
    var_u2 = float(pmf2 @ u2**2) - float(pmf2 @ u2) ** 2
    return {"theta": mean_u, "sigma": np.sqrt(sigma2), "tau_sub": np.sqrt(tau_sub2), "tau_new": np.sqrt(tau_new2),
            "tau_fresh": np.sqrt(var_u2 + sigma2)}  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    lines = ["K = 2 estimate vs the K = 8 interval: the bound (exact, normal limit) and the replacement checks", ""]
    lines.append("exact per-task spreads (K = 8); tau/sigma > 1 means no interval can hold the K = 2 estimate as often "
                 "as it covers theta")
    lines.append(f"{'population':32} {'theta':>6} {'sigma':>6} {'tau_sub':>7} {'ratio':>6} {'P(O2 in 95% CI)':>16} "
                 f"{'width x':>8} {'its coverage':>12} | {'new trials':>10} {'new tasks':>9}")
    ex = {}
    for name, (kind, a, b) in POPULATIONS.items():
        e = ex[name] = exact(kind, a, b)
        assert abs(e["theta"] - truth(kind, a, b)) < 1e-9, (name, e["theta"])
        r = e["tau_sub"] / e["sigma"]
        inside = 2 * sstats.norm.cdf(Z / r) - 1
        wide_cov = 2 * sstats.norm.cdf(Z * r) - 1
        r_new, r_fresh = e["tau_new"] / e["sigma"], e["tau_fresh"] / e["sigma"]
        lines.append(f"{name:32} {e['theta']:6.3f} {e['sigma']:6.3f} {e['tau_sub']:7.3f} {r:6.2f} "
                     f"{100 * inside:15.1f}% {r:8.2f} {100 * wide_cov:11.2f}% | "
                     f"{100 * (2 * sstats.norm.cdf(Z / r_new) - 1):9.1f}% {100 * (2 * sstats.norm.cdf(Z / r_fresh) - 1):8.1f}%")
    lines.append("(P(O2 in 95% CI) = 2*Phi(1.96*sigma/tau) - 1; 'width x' = how many times wider an interval must be to "
                 "hold O2 95 % of the time; 'its coverage' = that wider interval's coverage of theta; the last two: "
                 "P(an independent K = 2 run's estimate in the 95 % CI) with new trials on the same tasks / new tasks)")
    lines.append("")
    lines.append("simulation: T tasks, K = 8 drawn, 2 of each task's 8 trials subsampled; rates in %")
    lines.append(f"{'population':32} {'T':>4} {'K8 CI covers theta':>18} {'O2 in K8 CI':>11} {'(limit)':>8} "
                 f"{'O2 in prediction int.':>21} {'K2 and K8 CIs overlap':>21}")
    pis, overlaps = [], []
    for name, (kind, a, b) in POPULATIONS.items():
        e = ex[name]
        limit = 2 * sstats.norm.cdf(Z * e["sigma"] / e["tau_sub"]) - 1
        for T in (20, 50, 100):
            p = draw_p(kind, a, b, (args.reps, T), rng)
            c8 = rng.binomial(8, p)
            u8 = outcome_u(np.full_like(c8, 8), c8)
            m8, lo, hi = skew_t_ci(u8)
            c2 = rng.hypergeometric(c8, 8 - c8, 2)
            u2 = outcome_u(np.full_like(c2, 2), c2)
            m2 = u2.mean(axis=1)
            sd = np.sqrt((1 - u8**2).sum(axis=1)) / T
            for r in range(3):  # the library's prediction interval, row by row, is the vectorised one
                ref = subsample_prediction_interval(np.full(T, 8), c8[r], 2, 0.95)
                assert np.allclose(ref, (m8[r], sd[r], m8[r] - Z * sd[r], m8[r] + Z * sd[r])), ref
            in_pi = np.mean(np.abs(m2 - m8) <= Z * sd + 1e-12)
            d = (u2 < 0).sum(axis=1)
            wlo, whi = wilson_d(d, T, Z)
            lo2, hi2 = 1 - 2 * whi, 1 - 2 * wlo
            overlap = np.mean((lo2 <= hi) & (lo <= hi2))
            pis.append(in_pi)
            overlaps.append(overlap)
            tv = e["theta"]
            lines.append(f"{name:32} {T:>4} {100 * np.mean((lo <= tv) & (tv <= hi)):18.1f} "
                         f"{100 * np.mean((lo <= m2) & (m2 <= hi)):11.1f} {100 * limit:8.1f} {100 * in_pi:21.1f} "
                         f"{100 * overlap:21.1f}")
    lines.append(f"O2 in the prediction interval: {100 * min(pis):.1f}-{100 * max(pis):.1f} % over {len(pis)} cells; "
                 f"the two intervals overlap: {100 * min(overlaps):.1f}-{100 * max(overlaps):.1f} % "
                 f"(MC SE {100 * np.sqrt(0.95 * 0.05 / args.reps):.2f} points at 95 %)")
    lines.append(f"{args.reps} replications a cell, seed {args.seed}; {time.perf_counter() - start:.1f} s")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

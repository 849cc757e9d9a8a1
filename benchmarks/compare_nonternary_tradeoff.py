"""Why compare()'s default is wider than the paired t where per-task differences are not ternary, and what the
alternatives trade (issue 23: coverage ≥ 94 % everywhere; width ≤ 1.10× the t where the t covers ≥ 94 %).

Cells and populations are those of ``benchmarks/calibration_compare_delta.py`` (same seeds, so the same simulated
benchmarks as its 1,000-rep cells). Four parts:

1. **Decomposition** of the default's mean width at the cells over 1.10×: the share of benchmarks on each path
   (``exact unconditional`` — ternary by chance; ``normal`` — the constrained-MLE score construction, fewer than 5
   tasks differing; ``floored t``; ``skew t``) and each path's contribution to the mean width, the default's and
   the t's; for ``skew t`` the part that is Hall's extension beyond the t.
2. **Few tasks differing**: what replaces the score construction there — the skew t with its SD floored at the
   trial-level binomial SD (:func:`tauk.stats.comparisons.score.binomial_floor`) with pseudo-counts a = ½
   (Jeffreys; the default at k = 1), a = ¼, or the unbiased per-task variance (no pseudo-count) — at k = 1 and, to
   show why k > 1 keeps the score construction, at k = 4.
3. **Hall's extension at T ≥ 20**: the union with the t (default), the skewness shrunk twice as hard, and Hall's
   interval alone once the shrunk skewness is at least half the raw one (the type-I error it costs).
4. **The sparse cells** (T = 20, n = 8, k = 1, δ = ±0.07, where even the t covers < 94 %): the Jeffreys floor
   applied with ≥ 5 tasks differing too (λ·floor, λ ∈ {½, 1}), against what it costs at δ = 0 elsewhere.

Run: ``nice -n 5 python benchmarks/compare_nonternary_tradeoff.py [--reps 1000]``; kept output
``benchmarks/results/compare_nonternary_tradeoff.txt``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_compare_delta import POPULATIONS, _seed, shift_for, u_table  # noqa: E402

from tauk.stats.comparisons.paired_tests import paired_test  # noqa: E402
from tauk.stats.comparisons.score import (  # noqa: E402
    MIN_DIFFERING_FOR_T,
    TrialCounts,
    _hall_ends_at,
    _reference,
    _var_u,
    score_test,
)

ALPHA = 0.05


# ---------------------------------------------------------------------------------------------- candidates
def _jack_v(d: np.ndarray) -> tuple[float, float]:
    """(raw sample skewness g, its shrinkage variance v = max(6/T, jackknife)) as in score.skewness."""
    T = d.size
    r = d - d.mean()
    s2 = float(d.var(ddof=1))
    g = float(np.mean(r**3)) / s2**1.5
    n1 = T - 1
    S1, S2, S3 = r.sum(), (r * r).sum(), (r**3).sum()
    a1, a2, a3 = (S1 - r) / n1, (S2 - r * r) / n1, (S3 - r**3) / n1
    m2 = a2 - a1 * a1
    m3 = a3 - 3 * a1 * a2 + 2 * a1**3
    vl = m2 * n1 / max(n1 - 1, 1)
    with np.errstate(all="ignore"):
        gl = np.where(vl > 0, m3 / np.maximum(vl, 1e-300) ** 1.5, 0.0)
    return g, max(6.0 / T, float(n1 / T * np.sum((gl - gl.mean()) ** 2)))


def _floor(trials: TrialCounts, a: float | None) -> float:
    """Mean trial-level Var(d_t): binomial at (c + a)/(n + 2a), or (a None) the unbiased per-task estimate
    Û_k² − Û_2k (n ≥ 2k; the plug-in at c/n·n/(n−1) otherwise)."""
    k = trials.k
    out = 0.0
    for n, c in ((trials.n_a, trials.c_a), (trials.n_b, trials.c_b)):
        n = np.asarray(n)
        c = np.asarray(c, dtype=np.float64)
        if a is not None:
            out += float(np.mean(_var_u((c + a) / (n + 2 * a), n, k)))
        elif np.all(n >= 2 * k):
            u = special.comb(c, k) / special.comb(n, k)
            out += float(np.mean(np.maximum(u * u - special.comb(c, 2 * k) / special.comb(n, 2 * k), 0.0)))
        else:
            out += float(np.mean(_var_u(c / n, n, k) * n / (n - 1)))
    return out


def floored_skew_t(d, trials, a, lam=1.0, shrink=1.0, hall_alone=None):
    """The skew t with s floored at √(λ·floor) and the skewness shrunk by shrink·v (``hall_alone``: Hall's interval
    without the union once the shrink factor 1 − shrink·v/g² is at least this)."""
    T = d.size
    c = float(stats.t.ppf(1 - ALPHA / 2, T - 1))
    mean, s2 = float(d.mean()), float(d.var(ddof=1))
    F = lam * _floor(trials, a) if lam > 0 else 0.0
    sf = math.sqrt(max(s2, F))
    x = c * sf / math.sqrt(T)
    lo, hi = mean - x, mean + x
    if s2 > 0:
        g0, v = _jack_v(d)
        w = max(0.0, 1.0 - shrink * v / g0**2) if g0 else 0.0
        g = g0 * w * (math.sqrt(s2) / sf) ** 3
        lh, hh = _hall_ends_at(mean, sf, g, T, c)
        if hall_alone is not None and w >= hall_alone:
            lo, hi = lh, hh
        else:
            lo, hi = min(lo, lh), max(hi, hh)
    return max(lo, -1.0), min(hi, 1.0)


def few_variant(a, k_max=1):
    """The default, except that with fewer than 5 non-ternary tasks differing and k ≤ k_max the floored skew t
    with pseudo-count ``a`` replaces whatever the default does there."""

    def f(d, trials):
        r = score_test(d, trials=trials)
        if r.reference in ("normal", "floored t") and trials.k <= k_max and np.count_nonzero(d) < MIN_DIFFERING_FOR_T:
            return floored_skew_t(d, trials, a)
        return r.lo, r.hi

    return f


def many_variant(**kw):
    """The default, except that with ≥ 5 tasks differing (``skew t``) the floored / re-shrunk skew t of ``kw``."""

    def f(d, trials):
        r = score_test(d, trials=trials)
        if r.reference == "skew t":
            return floored_skew_t(d, trials, **kw)
        return r.lo, r.hi

    return f


def default(d, trials):
    r = score_test(d, trials=trials)
    return r.lo, r.hi


def t_interval(d, trials):
    r = paired_test(d, test="t")
    return r.lo, r.hi


# ---------------------------------------------------------------------------------------------- simulation
def benchmarks(T, n, k, pop, delta, reps):
    """The simulated benchmarks of calibration_compare_delta.py's cell (same seed): (d, TrialCounts) each."""
    s = shift_for(pop, k, delta)
    tab = u_table(n, k)
    rng = np.random.default_rng(_seed(23, T, n, k, pop, delta))
    nn = np.full(T, n)
    for _ in range(reps):
        pa, pb = POPULATIONS[pop][1](rng, T, s)
        ca, cb = rng.binomial(n, pa), rng.binomial(n, pb)
        yield tab[ca] - tab[cb], TrialCounts(nn, ca, nn, cb, k)


def cell(T, n, k, pop, delta, reps, methods):
    """Coverage (%), mean width ÷ the t's, and rejection (%) of each method."""
    names = ["t", *methods]
    fns = {"t": t_interval, **methods}
    cov = dict.fromkeys(names, 0.0)
    wid = dict.fromkeys(names, 0.0)
    rej = dict.fromkeys(names, 0.0)
    for d, tr in benchmarks(T, n, k, pop, delta, reps):
        for m in names:
            lo, hi = fns[m](d, tr)
            cov[m] += lo - 1e-9 <= delta <= hi + 1e-9
            wid[m] += hi - lo
            rej[m] += lo > 0 or hi < 0
    return {m: (100 * cov[m] / reps, wid[m] / wid["t"], 100 * rej[m] / reps) for m in names}


def table(title, cells, methods, reps, show_rej=False):
    print(f"\n== {title} ==")
    print("coverage % / width ÷ t" + (" / rejection % (δ = 0)" if show_rej else "") + "; methods: "
          + ", ".join(["t", *methods]))
    worst = {m: 100.0 for m in methods}
    for T, n, k, pop, delta in cells:
        res = cell(T, n, k, pop, delta, reps, methods)
        parts = []
        for m, (c, w, r) in res.items():
            parts.append(f"{c:5.1f} {w:4.2f}" + (f" {r:4.1f}" if show_rej and delta == 0 else ""))
            if m in worst:
                worst[m] = min(worst[m], c)
        print(f"T={T:2d} n={n} k={k} {pop:9} δ={delta:+.2f} | " + " | ".join(parts), flush=True)
    print("min coverage: " + ", ".join(f"{m} {v:.1f}" for m, v in worst.items()))


def decomposition(cells, reps):
    print("\n== 1. where the default's extra width comes from (mean width per benchmark, summed over paths) ==")
    for T, n, k, pop, delta in cells:
        acc: dict = {}
        tot_s = tot_t = 0.0
        for d, tr in benchmarks(T, n, k, pop, delta, reps):
            ref, c = _reference(d, ALPHA, tr)
            r = score_test(d, trials=tr)
            t = paired_test(d, test="t")
            a = acc.setdefault(ref, [0, 0.0, 0.0, 0.0])
            a[0] += 1
            a[1] += (r.hi - r.lo) / reps
            a[2] += (t.hi - t.lo) / reps
            if ref == "skew t":
                se = float(d.std(ddof=1)) / math.sqrt(T)
                a[3] += ((r.hi - r.lo) - (min(1.0, d.mean() + c * se) - max(-1.0, d.mean() - c * se))) / reps
            tot_s += (r.hi - r.lo) / reps
            tot_t += (t.hi - t.lo) / reps
        print(f"T={T:2d} n={n} k={k} {pop:9} δ={delta:+.2f}: default {tot_s:.3f}, t {tot_t:.3f} "
              f"(ratio {tot_s / tot_t:.2f}; excess {tot_s - tot_t:+.3f})")
        for ref in sorted(acc):
            share, ws, wt, hall = acc[ref]
            extra = f", of it Hall's extension {hall:+.3f}" if ref == "skew t" else ""
            print(f"    {ref:20} {100 * share / reps:5.1f} % of benchmarks: default {ws:.3f}, t {wt:.3f}, "
                  f"excess {ws - wt:+.3f}{extra}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    args = ap.parse_args(argv)
    reps = args.reps
    t0 = time.time()
    print(f"# benchmarks/compare_nonternary_tradeoff.py --reps {reps} (α = {ALPHA}; the simulated benchmarks of "
          "calibration_compare_delta.py's cells, same seeds)")
    over = [(10, 4, 1, "u-shaped", 0.0), (10, 4, 1, "taubench", 0.0), (10, 8, 1, "u-shaped", 0.0),
            (10, 8, 4, "u-shaped", 0.0), (10, 8, 4, "taubench", 0.0), (10, 8, 4, "sparse", 0.0),
            (20, 8, 4, "taubench", 0.0), (20, 8, 4, "u-shaped", 0.0), (50, 8, 4, "taubench", -0.07),
            (50, 8, 4, "taubench", -0.15)]
    decomposition(over, reps)
    few = {"a=1/2 (default)": few_variant(0.5), "a=1/4": few_variant(0.25), "unbiased": few_variant(None)}
    k1 = [(10, n, 1, pop, dl) for n in (4, 8) for pop in ("u-shaped", "sparse", "taubench")
          for dl in (0.0, 0.07, -0.07, 0.15, -0.15) if not (pop == "sparse" and abs(dl) > 0.1)]
    k1 += [(20, 4, 1, "u-shaped", 0.0), (20, 4, 1, "u-shaped", -0.07), (20, 8, 1, "u-shaped", -0.15)]
    table("2a. fewer than 5 tasks differing, k = 1: the floor's pseudo-count (the score construction was the "
          "default before)", k1, {"score (before)": lambda d, tr: score_test(d)[1:3], **few}, reps)
    k4 = [(T, 8, 4, pop, dl) for T in (10, 20) for pop in ("u-shaped", "taubench", "sparse")
          for dl in (0.0, -0.07, -0.15) if not (pop == "sparse" and dl == -0.15)]
    table("2b. fewer than 5 tasks differing, k = 4: the score construction (default) against the Jeffreys floor",
          k4, {"default": default, "floor a=1/2": few_variant(0.5, k_max=4), "floor unbiased": few_variant(None, 4)},
          reps)
    t20 = [(T, n, k, pop, dl) for T, n, k in ((20, 8, 4), (50, 8, 4), (20, 8, 1), (20, 4, 1), (50, 8, 1))
           for pop in ("taubench", "u-shaped", "sparse", "disagree") for dl in (0.0, -0.07, -0.15)
           if not (pop == "sparse" and (k == 1 and dl != 0 or dl == -0.15))]
    table("3. Hall's extension with ≥ 5 tasks differing, T ≥ 20", t20,
          {"default": default, "shrink 2v": many_variant(a=0.5, lam=0.0, shrink=2.0),
           "Hall alone if w≥½": many_variant(a=0.5, lam=0.0, hall_alone=0.5)}, reps, show_rej=True)
    sp = [(20, 8, 1, "sparse", 0.07), (20, 8, 1, "sparse", -0.07), (20, 8, 1, "sparse", 0.0),
          (20, 4, 1, "sparse", 0.07), (20, 4, 1, "u-shaped", 0.0), (20, 4, 1, "taubench", 0.0),
          (20, 8, 1, "u-shaped", 0.0), (20, 8, 1, "taubench", 0.0), (50, 8, 1, "u-shaped", 0.0),
          (50, 8, 1, "sparse", 0.07), (10, 8, 1, "taubench", 0.0), (10, 8, 1, "u-shaped", 0.0)]
    table("4. the sparse cells: the Jeffreys floor with ≥ 5 tasks differing too (k = 1)", sp,
          {"default": default, "λ=1/2": many_variant(a=0.5, lam=0.5), "λ=1": many_variant(a=0.5, lam=1.0)},
          reps, show_rej=True)
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

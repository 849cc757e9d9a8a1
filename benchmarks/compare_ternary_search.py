"""Ternary comparison intervals by exact trinomial sums: which interval for δ = p⁺ − p⁻ (issue 23, width target).

Where every per-task difference d_t is −1, 0 or 1 ((n, k) = (1, 1) or n = k), a benchmark of T tasks is the
trinomial count (m⁺, m⁻) and every property of an interval is an exact sum over the (T + 1)(T + 2)/2 outcomes. For
each candidate this prints, at T = 10, 20, 50:

* ``max w/t`` — the largest ratio of its mean width to the paired t's over the calibration's ternary cells
  (``benchmarks/calibration_compare_delta.py``: four populations, n = k ∈ {1, 4}, δ ∈ {0, ±0.07, ±0.15}) where the
  t covers ≥ 94 % (target ≤ 1.10), the cell where it is reached and how many cells exceed 1.10;
* ``min cov`` — the lowest coverage over those cells (target ≥ 94 %);
* ``grid min`` — the lowest coverage over all trinomial parameters: δ' on a grid of step 0.0025 plus every
  interval end ± 1e-7 (coverage jumps there), each with 60 nuisance values p⁺ + p⁻ ∈ [|δ'|, 1] (aim ≥ 93 %), and
  where it is reached (δ', p⁺, p⁻);
* ``conflicts`` — outcomes where the exact unconditional test rejects δ = 0 but the interval holds 0 (the library
  then takes the end towards 0 from Tango's interval at z_{0.975}; the candidates here are shown before that).

Candidates: Tango's score interval (Tango 1998) at c = 1.96 (the default before) and at a lower c; the
Agresti–Min / Bonett–Price adjusted Wald interval (k added to each discordant count); MOVER with Jeffreys
intervals for p⁺ and p⁻ (Tang, Li & Tang 2010); unions of the adjusted Wald and Tango intervals; and the library's
``score_test`` (the default: the last union plus, where every differing task went one way, the exact one-sided
Clopper–Pearson bound at 94 %). Then, for the default only, the cell figures at every T from 10 to 40 and at 45, 50,
60, 80, 100 (the cells are populations, so any T can be evaluated), and the grid minimum at T = 15 and 30.

The joint LP bound (``compare_width_joint_bound.py``: 1.064× the t's width at T = 10 while covering ≥ 94 % at every
parameter) is over randomised confidence sets, and its optimum randomises heavily at the outcomes where 0–2 tasks
differ; no candidate here, all deterministic, comes near it at T = 10. Two facts bound what a deterministic
interval can do there: covering ≥ 94 % at (p⁺, 0) for every p⁺ needs the outcome with no task differing to reach
1 − 0.06^{1/T} (0.245 at T = 10) and the one with a single task differing to reach ≈ 0.38 on that side.

Run: ``nice -n 5 python benchmarks/compare_ternary_search.py``; kept output:
``benchmarks/results/compare_ternary_search.txt``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_compare_delta import DELTAS, POPULATIONS, reachable, trinomial_probs  # noqa: E402
from compare_width_bound import outcomes, trinomial  # noqa: E402  (the same enumeration)

from tauk.stats.comparisons.score import _em_table, score_test  # noqa: E402

ALPHA = 0.05


def cells() -> list[dict]:
    return [dict(k=k, pop=pop, delta=d, pp=pp, pm=pm)
            for k in (1, 4) for pop in POPULATIONS for d in DELTAS if reachable(pop, k, d)
            for pp, pm in [trinomial_probs(pop, k, d)]]  # fmt: skip


# ---------------------------------------------------------------------------------------------- candidates
def t_interval(T, a, b):
    mean = (a - b) / T
    var = ((a + b) / T - mean**2) * T / (T - 1)
    h = stats.t.ppf(1 - ALPHA / 2, T - 1) * np.sqrt(np.maximum(var, 0.0) / T)
    return np.maximum(mean - h, -1.0), np.minimum(mean + h, 1.0)


def tango(T, a, b, c):
    """{δ : |z(δ)| < c}, Tango's z (closed-form restricted variance), by bisection on each side; c may vary by
    outcome."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    est = (a - b) / T
    out = []
    for side in (-1.0, 1.0):
        inner, outer = est.copy(), np.full_like(est, side)
        for _ in range(60):
            mid = 0.5 * (inner + outer)
            W = -a - b + (2 * T - a + b) * mid
            x = (-W + np.sqrt(np.maximum(W * W + 8.0 * T * b * mid * (1.0 - mid), 0.0))) / (4.0 * T)
            V = np.maximum(2.0 * x + mid - mid * mid, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.abs(math.sqrt(T) * (est - mid) / np.sqrt(V))
            inside = np.nan_to_num(z, nan=0.0) < c
            inner, outer = np.where(inside, mid, inner), np.where(inside, outer, mid)
        out.append(0.5 * (inner + outer))
    return out[0], out[1]


def adjusted_wald(T, a, b, z, k):
    N = T + 2 * k
    p1, p2 = (a + k) / N, (b + k) / N
    est = p1 - p2
    se = np.sqrt(np.maximum(p1 + p2 - est**2, 0.0) / N)
    return np.maximum(est - z * se, -1.0), np.minimum(est + z * se, 1.0)


def mover_jeffreys(T, a, b, al):
    def jeff(x):
        lo = np.where(x > 0, stats.beta.ppf(al / 2, x + 0.5, T - x + 0.5), 0.0)
        hi = np.where(x < T, stats.beta.ppf(1 - al / 2, x + 0.5, T - x + 0.5), 1.0)
        return lo, hi

    pp, pm = a / T, b / T
    (lp, up), (lm, um) = jeff(a), jeff(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.nan_to_num(-np.sqrt(pp * pm / ((1 - pp) * (1 - pm))), nan=0.0, neginf=0.0)
    d = pp - pm
    lo = d - np.sqrt(np.maximum((pp - lp) ** 2 + (um - pm) ** 2 - 2 * rho * (pp - lp) * (um - pm), 0.0))
    hi = d + np.sqrt(np.maximum((up - pp) ** 2 + (pm - lm) ** 2 - 2 * rho * (up - pp) * (pm - lm), 0.0))
    return np.maximum(lo, -1.0), np.minimum(hi, 1.0)


def union(*ends):
    return np.minimum.reduce([e[0] for e in ends]), np.maximum.reduce([e[1] for e in ends])


def library(T, a, b):
    r = [score_test(np.r_[np.ones(x), -np.ones(y), np.zeros(T - x - y)], ci=1 - ALPHA) for x, y in zip(a, b)]
    return np.array([x.lo for x in r]), np.array([x.hi for x in r])


CANDIDATES = {
    "Tango c=1.96 (before)": lambda T, a, b: tango(T, a, b, 1.959964),
    "Tango c=1.8": lambda T, a, b: tango(T, a, b, 1.8),
    "Tango c=1.7→1.96 with m/T": lambda T, a, b: tango(T, a, b, 1.7 + 0.26 * (a + b) / T),
    "adj. Wald k=½ z=1.96 (Agresti–Min)": lambda T, a, b: adjusted_wald(T, a, b, 1.959964, 0.5),
    "adj. Wald k=½ z=2.0": lambda T, a, b: adjusted_wald(T, a, b, 2.0, 0.5),
    "adj. Wald k=1 z=1.96 (Bonett–Price)": lambda T, a, b: adjusted_wald(T, a, b, 1.959964, 1.0),
    "MOVER-Jeffreys 95 %": lambda T, a, b: mover_jeffreys(T, a, b, 0.05),
    "Wald k=½ z=2.0 ∪ Tango c=1.7": lambda T, a, b: union(adjusted_wald(T, a, b, 2.0, 0.5), tango(T, a, b, 1.7)),
    "Wald k=½ z=2.0 ∪ Tango c=1.8": lambda T, a, b: union(adjusted_wald(T, a, b, 2.0, 0.5), tango(T, a, b, 1.8)),
    "Wald k=½ z=2.0 ∪ Tango c=1.7→1.96": lambda T, a, b: union(adjusted_wald(T, a, b, 2.0, 0.5),
                                                             tango(T, a, b, 1.7 + 0.26 * (a + b) / T)),
    "default (score_test)": library,
}


# ---------------------------------------------------------------------------------------------- evaluation
def with_exact_test(T, a, b, lo, hi):
    """Reach to 0 where the exact unconditional p ≥ α (as the library does); count the outcomes where it rejects
    but the interval holds 0."""
    p = _em_table(T)[a, b]
    keep = p >= ALPHA
    lo, hi = np.where(keep, np.minimum(lo, 0.0), lo), np.where(keep, np.maximum(hi, 0.0), hi)
    return lo, hi, int(np.sum(~keep & (lo <= 0) & (hi >= 0)))


def cell_figures(T, lo, hi, cell_list):
    a, b = outcomes(T)
    tlo, thi = t_interval(T, a, b)
    out = []
    for c in cell_list:
        P = trinomial(T, a, b, [c["pp"]], [c["pm"]])[0]
        d = c["delta"]
        cov = float(P @ ((lo - 1e-9 <= d) & (d <= hi + 1e-9)))
        tcov = float(P @ ((tlo - 1e-9 <= d) & (d <= thi + 1e-9)))
        out.append(dict(c, cov=cov, tcov=tcov, ratio=float(P @ (hi - lo)) / float(P @ (thi - tlo))))
    return out


def grid_min(T, lo, hi, n_q=60, step=0.0025, chunk=3000):
    a, b = outcomes(T)
    ds = np.r_[np.arange(-1 + step / 2, 1, step), lo - 1e-7, hi + 1e-7]
    ds = np.unique(np.round(ds[(ds > -1) & (ds < 1)], 10))
    D = np.repeat(ds, n_q)
    Q = np.abs(D) + (1 - np.abs(D)) * np.tile(np.linspace(0.0, 1.0, n_q), ds.size)
    PP, PM = (Q + D) / 2, (Q - D) / 2
    best = (2.0, None)
    for s in range(0, D.size, chunk):
        P = trinomial(T, a, b, PP[s:s + chunk], PM[s:s + chunk])
        dd = D[s:s + chunk, None]
        cov = (P * ((lo[None, :] <= dd) & (dd <= hi[None, :]))).sum(axis=1)
        i = int(cov.argmin())
        if cov[i] < best[0]:
            best = (float(cov[i]), (float(D[s + i]), float(PP[s + i]), float(PM[s + i])))
    return best


def summary(T, lo, hi, cell_list, grid=True):
    rows = cell_figures(T, lo, hi, cell_list)
    tgt = [r for r in rows if r["tcov"] >= 0.94]
    w = max(tgt, key=lambda r: r["ratio"])
    c = min(rows, key=lambda r: r["cov"])
    g = grid_min(T, lo, hi) if grid else (math.nan, None)
    return dict(ratio=w["ratio"], ratio_at=f"n=k={w['k']} {w['pop']} δ={w['delta']:+.2f}",
                over=sum(r["ratio"] > 1.10 for r in tgt), cov=c["cov"],
                cov_at=f"n=k={c['k']} {c['pop']} δ={c['delta']:+.2f}", grid=g[0], grid_at=g[1],
                zero=bool(np.any(hi - lo <= 1e-12)), rows=rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, nargs="*", default=[10, 20, 50])
    args = ap.parse_args(argv)
    t0 = time.time()
    cell_list = cells()
    print(f"# benchmarks/compare_ternary_search.py --T {' '.join(map(str, args.T))} (α = {ALPHA}; exact trinomial "
          f"sums; {len(cell_list)} ternary cells per T; grid: δ' step 0.0025 + interval ends ± 1e-7, 60 nuisance "
          "values each)")
    print()
    print(f"{'candidate':36} {'T':>3} | {'max w/t':>7} {'at':28} {'>1.10':>5} | {'min cov':>7} {'at':28} | "
          f"{'grid min':>8} {'at (δ, p⁺, p⁻)':25} | conflicts zero-width")
    for name, fn in CANDIDATES.items():
        for T in args.T:
            a, b = outcomes(T)
            lo, hi = fn(T, a, b)
            lo, hi, conflicts = with_exact_test(T, a, b, lo, hi)
            s = summary(T, lo, hi, cell_list)
            at = "(" + ", ".join(f"{x:+.3f}" for x in s["grid_at"]) + ")"
            print(f"{name:36} {T:3d} | {s['ratio']:7.3f} {s['ratio_at']:28} {s['over']:5d} | {100 * s['cov']:6.2f}% "
                  f"{s['cov_at']:28} | {100 * s['grid']:7.2f}% {at:25} | {conflicts:9d} {s['zero']}", flush=True)
    print()
    print("== the default at every T (cells only; grid minimum at T = 15 and 30) ==")
    print(f"{'T':>4} | {'max w/t':>7} {'at':28} {'>1.10':>5} | {'min cov':>7} {'at':28} | {'grid min':>8}")
    worst_cov, worst_ratio = 1.0, 0.0
    for T in list(range(10, 41)) + [45, 50, 60, 80, 100]:
        a, b = outcomes(T)
        lo, hi = library(T, a, b)
        s = summary(T, lo, hi, cell_list, grid=T in (15, 30))
        worst_cov, worst_ratio = min(worst_cov, s["cov"]), max(worst_ratio, s["ratio"])
        g = f"{100 * s['grid']:7.2f}%" if T in (15, 30) else ""
        print(f"{T:4d} | {s['ratio']:7.3f} {s['ratio_at']:28} {s['over']:5d} | {100 * s['cov']:6.2f}% "
              f"{s['cov_at']:28} | {g}", flush=True)
    print(f"over T = 10…100: lowest cell coverage {100 * worst_cov:.2f} %, largest width ratio {worst_ratio:.3f}")
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

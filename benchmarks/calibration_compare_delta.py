"""Coverage of compare()'s interval for the difference of pass^k at the truth, away from 0 as well as at 0 (issue 23).

For each cell — T ∈ {10, 20, 50} tasks, (n, k) ∈ {(1, 1), (4, 1), (4, 4), (8, 1), (8, 4)} trials / k, true
difference δ ∈ {0, ±0.07, ±0.15}, task populations below — it reports, for the default **score** interval
(``test="score"``, :mod:`tauk.stats.comparisons.score`) and the paired **t** interval (the default before):
coverage of the true δ, mean width, the share of zero-width intervals, the rejection rate of p < α (type-I error at
δ = 0, power elsewhere) and how often the interval and the p-value disagree on excluding 0.

Where every d_t is −1, 0 or 1 ((n, k) = (1, 1) or (4, 4)) the counts (m⁺, m⁻) are trinomial and every figure is an
exact sum over them (no Monte-Carlo error); elsewhere ``--reps`` simulated benchmarks per cell (seeded, MC SE of a
95 % coverage ≈ 0.7 points at 1,000). Populations: three of ``benchmarks/calibration_compare.py`` and a sparse one:

* ``taubench`` — p ~ Beta(0.63, 0.88) shared by both agents, A's logit shifted (the τ-bench gpt-4o airline fit);
* ``u-shaped`` — p ~ Beta(0.3, 0.3) shared: most tasks always or never solved, so few tasks differ;
* ``disagree`` — logit p_X = z + e_X: the agents disagree task by task (exchangeable at δ = 0);
* ``sparse`` — p ~ Beta(0.3, 0.3); on 75 % of tasks p_A = p_B, on 25 % A and B draw independently (A's logit
  shifted on those only): few tasks differ, and those differ a lot.

A's logit shift for each δ is found by bisection on a fixed sample of 400,000 tasks (so the true δ is exact to
~1e-3). Targets (issue 23): coverage ≥ 94 % in every cell; mean width ≤ 1.10× the t interval's where t covers
≥ 94 %; no zero-width interval.

Run: ``nice -n 10 python benchmarks/calibration_compare_delta.py [--reps 1000] [--workers 2] [--quick]
[--nonternary]``; the kept output is ``benchmarks/results/compare_delta_coverage.txt`` (``--nonternary``: only the
cells with n > k, ``benchmarks/results/compare_delta_coverage_nonternary.txt``). The score method gets the trial
counts, as ``compare()`` passes them (:class:`~tauk.stats.comparisons.score.TrialCounts`).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_compare import POPULATIONS as _BASE  # noqa: E402

from tauk.stats.comparisons.paired_tests import paired_test  # noqa: E402
from tauk.stats.comparisons.score import TrialCounts  # noqa: E402

ALPHA = 0.05
METHODS = ("score", "t")
T_VALUES = (10, 20, 50)
NK = ((1, 1), (4, 1), (4, 4), (8, 1), (8, 4))
DELTAS = (0.0, 0.07, -0.07, 0.15, -0.15)


def _sparse(rng, T, shift, frac=0.25):
    p = rng.beta(0.3, 0.3, T)
    pa, pb = p.copy(), p.copy()
    hit = rng.random(T) < frac
    pa[hit] = rng.beta(0.3, 0.3, int(hit.sum()))
    if shift:
        lg = np.log(np.clip(pa[hit], 1e-12, 1 - 1e-12)) - np.log1p(-np.clip(pa[hit], 1e-12, 1 - 1e-12))
        pa[hit] = special.expit(lg + shift)
    return pa, pb


POPULATIONS = {
    "taubench": _BASE["taubench"],
    "u-shaped": _BASE["u-shaped"],
    "disagree": _BASE["disagree"],
    "sparse": ("p ~ Beta(0.3, 0.3); on 25 % of tasks A draws its own p (logit-shifted), elsewhere p_A = p_B", _sparse),
}


@cache
def shift_for(pop: str, k: int, delta: float, seed: int = 12345, draws: int = 400_000) -> float:
    """Logit shift s of A with E[p_A^k] − E[p_B^k] = δ (either sign), by bisection on a fixed sample."""
    if delta == 0:
        return 0.0
    sampler = POPULATIONS[pop][1]

    def gap(s):
        pa, pb = sampler(np.random.default_rng(seed), draws, s)
        return float(np.mean(pa**k) - np.mean(pb**k)) - delta

    lo, hi = -12.0, 12.0
    for _ in range(50):
        m = 0.5 * (lo + hi)
        lo, hi = (m, hi) if gap(m) < 0 else (lo, m)
    s = 0.5 * (lo + hi)
    if abs(gap(s)) > 1e-3:
        raise ValueError(f"{pop}: δ = {delta} out of reach at k = {k}")
    return s


@cache
def reachable(pop: str, k: int, delta: float) -> bool:
    try:
        shift_for(pop, k, delta)
    except ValueError:
        return False
    return True


def u_table(n: int, k: int) -> np.ndarray:
    return np.array([math.comb(c, k) / math.comb(n, k) for c in range(n + 1)])


def evaluate(d: np.ndarray, trials: TrialCounts | None = None) -> dict[str, tuple[float, float, float]]:
    """(p, lo, hi) of each method on one vector of per-task differences (``trials``: the counts behind it, as
    compare() passes them)."""
    out = {}
    for m in METHODS:
        r = paired_test(d, test=m, trials=trials if m == "score" else None)
        out[m] = (r.p_value, r.lo, r.hi)
    return out


def _acc():
    return {m: {"cover": 0.0, "width": 0.0, "zero": 0.0, "reject": 0.0, "disagree": 0.0, "nan": 0.0} for m in METHODS}


def _add(acc, res, delta, w):
    for m, (p, lo, hi) in res.items():
        a = acc[m]
        if math.isnan(lo) or math.isnan(hi):
            a["nan"] += w
            continue
        a["cover"] += w * (lo - 1e-9 <= delta <= hi + 1e-9)
        a["width"] += w * (hi - lo)
        a["zero"] += w * (hi - lo <= 1e-12)
        rej = (not math.isnan(p)) and p < ALPHA
        a["reject"] += w * rej
        a["disagree"] += w * (rej != (lo > 0 or hi < 0))


@cache
def trinomial_probs(pop: str, k: int, delta: float, draws: int = 2_000_000, seed: int = 4321) -> tuple[float, float]:
    pa, pb = POPULATIONS[pop][1](np.random.default_rng(seed), draws, shift_for(pop, k, delta))
    ua, ub = pa**k, pb**k
    return float(np.mean(ua * (1 - ub))), float(np.mean(ub * (1 - ua)))


def exact_table(T: int) -> dict[tuple[int, int], dict]:
    """Every method on d with a tasks at +1, b at −1, T − a − b at 0."""
    return {(a, b): evaluate(np.array([1.0] * a + [-1.0] * b + [0.0] * (T - a - b)))
            for a in range(T + 1) for b in range(T + 1 - a)}  # fmt: skip


def exact_cell(table, T, pp, pm, delta):
    acc = _acc()
    logf = [math.lgamma(i + 1) for i in range(T + 1)]
    p0 = 1.0 - pp - pm
    for (a, b), res in table.items():
        lw = logf[T] - logf[a] - logf[b] - logf[T - a - b]
        lw += (a * math.log(pp) if a else 0.0) + (b * math.log(pm) if b else 0.0)
        lw += (T - a - b) * math.log(p0) if T - a - b else 0.0
        _add(acc, res, delta, math.exp(lw))
    return acc, T * (pp + pm)


def mc_cell(job):
    T, n, k, pop, delta, reps, seed = job
    sampler = POPULATIONS[pop][1]
    s = shift_for(pop, k, delta)
    tab = u_table(n, k)
    rng = np.random.default_rng(seed)
    acc = _acc()
    cache: dict = {}
    nz = 0
    for _ in range(reps):
        pa, pb = sampler(rng, T, s)
        ca, cb = rng.binomial(n, pa), rng.binomial(n, pb)
        d = tab[ca] - tab[cb]
        nz += int(np.count_nonzero(d))
        key = tuple(sorted(zip(ca.tolist(), cb.tolist())))
        res = cache.get(key)
        if res is None:
            nn = np.full(T, n)
            res = cache[key] = evaluate(d, TrialCounts(nn, ca, nn, cb, k))
        _add(acc, res, delta, 1.0 / reps)
    return job, acc, nz / reps


def _seed(base, *parts):
    return (base + zlib.crc32(repr(parts).encode())) % (2**32)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="T = 10, 20; two populations; 200 reps")
    ap.add_argument("--nonternary", action="store_true",
                    help="only the cells with n > k (d_t not ternary; kept in compare_delta_coverage_nonternary.txt)")
    args = ap.parse_args(argv)
    Ts = (10, 20) if args.quick else T_VALUES
    pops = ("taubench", "sparse") if args.quick else tuple(POPULATIONS)
    reps = 200 if args.quick else args.reps
    t0 = time.time()
    print(f"# benchmarks/calibration_compare_delta.py --reps {reps} --seed {args.seed}{' --quick' if args.quick else ''}"
          f"{' --nonternary' if args.nonternary else ''}"
          f" (α = {ALPHA}; exact trinomial sums where (n, k) ∈ {{(1, 1), (4, 4)}}, else {reps} benchmarks a cell)")
    for pop in pops:
        print(f"#   {pop:9} {POPULATIONS[pop][0]}")
    cells = {}
    jobs = []
    for T in Ts:
        for n, k in NK:
            for pop in pops:
                for delta in DELTAS:
                    if n == k or not reachable(pop, k, delta):
                        continue
                    jobs.append((T, n, k, pop, delta, reps, _seed(args.seed, T, n, k, pop, delta)))
    with ProcessPoolExecutor(max_workers=args.workers) as ex:
        futs = [ex.submit(mc_cell, j) for j in jobs]
        for T in () if args.nonternary else Ts:  # the exact cells in this process meanwhile
            table = exact_table(T)
            for n, k in NK:
                if n != k:
                    continue
                for pop in pops:
                    for delta in DELTAS:
                        if not reachable(pop, k, delta):
                            continue
                        pp, pm = trinomial_probs(pop, k, delta)
                        cells[(T, n, k, pop, delta)] = (*exact_cell(table, T, pp, pm, delta), "exact")
        for f in futs:
            job, acc, mbar = f.result()
            cells[job[:5]] = (acc, mbar, f"{reps}")
    skipped = [(pop, k, d) for pop in pops for k in sorted({k for _, k in NK}) for d in DELTAS
               if not reachable(pop, k, d)]
    if skipped:
        print("# out of reach (no logit shift gives this δ), not run: "
              + ", ".join(f"{p} k={k} δ={d:+.2f}" for p, k, d in skipped))
    print()
    print("== coverage (%) of the true difference, mean width, zero-width share, rejection (p < α) ==")
    print(f"{'T':>3} {'n':>2} {'k':>2} {'population':10} {'δ':>6} {'m̄':>5} {'reps':>5} | {'score cov':>9} {'width':>6}"
          f" {'rej':>5} | {'t cov':>6} {'width':>6} {'zero':>5} {'rej':>5} | {'w ratio':>7} {'disagree s/t':>12}")
    rows = []
    for key in sorted(cells, key=lambda x: (x[0], x[1], x[2], x[3], abs(x[4]), -x[4])):
        T, n, k, pop, delta = key
        acc, mbar, how = cells[key]
        s, t = acc["score"], acc["t"]
        ratio = s["width"] / t["width"] if t["width"] > 0 else math.inf
        rows.append((key, acc, mbar, ratio))
        print(f"{T:3d} {n:2d} {k:2d} {pop:10} {delta:+6.2f} {mbar:5.1f} {how:>5} | {100 * s['cover']:9.1f} "
              f"{s['width']:6.3f} {100 * s['reject']:5.1f} | {100 * t['cover']:6.1f} {t['width']:6.3f} "
              f"{100 * t['zero']:5.1f} {100 * t['reject']:5.1f} | {ratio:7.2f} "
              f"{100 * s['disagree']:5.2f}/{100 * t['disagree']:5.2f}")
    print()
    print("== summary ==")
    n_cells = len(rows)
    for m in METHODS:
        cov = [acc[m]["cover"] for _, acc, _, _ in rows]
        below = sum(c < 0.94 for c in cov)
        zero = max(acc[m]["zero"] for _, acc, _, _ in rows)
        nan = max(acc[m]["nan"] for _, acc, _, _ in rows)
        dis = max(acc[m]["disagree"] for _, acc, _, _ in rows)
        worst = min(rows, key=lambda r: r[1][m]["cover"])
        print(f"{m:6} cells {n_cells} coverage<94%: {below} min {100 * min(cov):.1f}% (at T={worst[0][0]} n={worst[0][1]} "
              f"k={worst[0][2]} {worst[0][3]} δ={worst[0][4]:+.2f}) max zero-width {100 * zero:.2f}% "
              f"max NaN {100 * nan:.2f}% max p/interval disagreement {100 * dis:.2f}%")
    for label, keep in (("δ = 0", lambda key: key[4] == 0), ("δ ≠ 0", lambda key: key[4] != 0)):
        cov = [acc["score"]["cover"] for key, acc, _, _ in rows if keep(key)]
        print(f"score  {label}: cells {len(cov)} coverage<94%: {sum(c < 0.94 for c in cov)} min {100 * min(cov):.1f}%")
    ok_t = [(key, acc, r) for key, acc, _, r in rows if acc["t"]["cover"] >= 0.94]
    over = [(key, r) for key, _, r in ok_t if r > 1.10]
    print(f"width score ÷ t where t covers ≥ 94 %: cells {len(ok_t)} max {max(r for _, _, r in ok_t):.2f} "
          f"median {float(np.median([r for _, _, r in ok_t])):.2f} above 1.10: {len(over)}")
    for key, r in over:
        print(f"   above 1.10: T={key[0]} n={key[1]} k={key[2]} {key[3]} δ={key[4]:+.2f} ratio {r:.2f}")
    size = [(key, acc["score"]["reject"]) for key, acc, _, _ in rows if key[4] == 0 and key[0] >= 20]
    print(f"score type-I at T ≥ 20: cells {len(size)} max {100 * max(v for _, v in size):.2f}% "
          f"(t: {100 * max(acc['t']['reject'] for key, acc, _, _ in rows if key[4] == 0 and key[0] >= 20):.2f}%)")
    print(f"\n({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

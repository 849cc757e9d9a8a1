"""The designed ternary interval on task populations it was not tuned to (issue 23).

``benchmarks/compare_ternary_design.py`` chose the interval's ends to make it narrow in the calibration's ternary
cells (four populations, n = k ∈ {1, 4}); its coverage (≥ 94 % at every trinomial parameter) does not depend on
them, its width might. This script measures both, by exact trinomial sums, where the design never looked:

* populations ``uniform`` (p ~ Beta(1, 1) shared) and ``easy`` (logit p ~ N(1, 1.5²) shared) of
  ``benchmarks/calibration_compare.py``, at k ∈ {1, 2, 4, 8};
* the design's own populations at k ∈ {2, 8};

with δ ∈ {0, ±0.07, ±0.15} (where a logit shift reaches it) and T ∈ {10, 15, 20, 30, 50}. Each row: the paired
t's coverage and mean width, and the designed interval's and the union interval's (``score.ternary_ends``, the
default before) coverage and mean width ÷ the t's.

Run: ``nice python benchmarks/compare_ternary_heldout.py``; kept output
``benchmarks/results/compare_ternary_heldout.txt``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_compare import POPULATIONS  # noqa: E402
from compare_ternary_design import outcomes, t_ends, trinomial  # noqa: E402

from tauk.stats.comparisons.score import ternary_ends  # noqa: E402
from tauk.stats.comparisons.ternary_design import designed_ends  # noqa: E402

DELTAS = (0.0, 0.07, -0.07, 0.15, -0.15)
CELLS = [(pop, k) for pop in ("uniform", "easy") for k in (1, 2, 4, 8)] + [
    (pop, k) for pop in ("taubench", "u-shaped", "disagree") for k in (2, 8)
]


def trinomial_probs(pop: str, k: int, delta: float, draws: int = 200_000, seed: int = 4321):
    """(P(d = +1), P(d = −1)) with A's logit shifted (bisection on a fixed sample) so that E[p_A^k] − E[p_B^k] = δ;
    None where no shift reaches δ."""
    sampler = POPULATIONS[pop][1]

    def draw(s):
        pa, pb = sampler(np.random.default_rng(seed), draws, s)
        return pa**k, pb**k

    lo, hi = -12.0, 12.0
    for _ in range(45 if delta else 0):
        m = 0.5 * (lo + hi)
        ua, ub = draw(m)
        lo, hi = (m, hi) if float(np.mean(ua) - np.mean(ub)) < delta else (lo, m)
    ua, ub = draw(0.5 * (lo + hi) if delta else 0.0)
    if abs(float(np.mean(ua) - np.mean(ub)) - delta) > 1e-3:
        return None
    return float(np.mean(ua * (1 - ub))), float(np.mean(ub * (1 - ua)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, nargs="*", default=[10, 15, 20, 30, 50])
    args = ap.parse_args(argv)
    t0 = time.time()
    print("# benchmarks/compare_ternary_heldout.py --T " + " ".join(map(str, args.T)) + " (exact trinomial sums; "
          "designed = tauk's table, union = score.ternary_ends at 95 %; ratio = mean width ÷ the paired t's)")  # fmt: skip
    probs = {}
    for pop, k in CELLS:
        for delta in DELTAS:
            pr = trinomial_probs(pop, k, delta)
            if pr is not None:
                probs[(pop, k, delta)] = pr
    print(f"{'T':>3} {'population':10} {'k':>2} {'δ':>6} | {'t cov':>6} {'t width':>7} | {'design cov':>10} "
          f"{'ratio':>6} | {'union cov':>9} {'ratio':>6}")  # fmt: skip
    summary = {}
    for T in args.T:
        a, b = outcomes(T)
        tlo, thi = t_ends(T, a, b)
        des = [designed_ends(int(x), int(y), T) for x, y in zip(a, b)]
        if any(e is None for e in des):
            print(f"# T = {T}: no design, skipped")
            continue
        dlo, dhi = np.array(des).T
        ulo, uhi = np.array([ternary_ends(int(x), int(y), T, 0.05) for x, y in zip(a, b)]).T
        for (pop, k, delta), (pp, pm) in probs.items():
            P = trinomial(T, a, b, [pp], [pm])[0]
            dl = pp - pm

            def cov(lo, hi, dl=dl, P=P):
                return float(P @ ((lo - 1e-9 <= dl) & (dl <= hi + 1e-9)))

            tw = float(P @ (thi - tlo))
            tc = cov(tlo, thi)
            row = (cov(dlo, dhi), float(P @ (dhi - dlo)) / tw, cov(ulo, uhi), float(P @ (uhi - ulo)) / tw)
            summary.setdefault(T, []).append((tc, row))
            print(f"{T:3d} {pop:10} {k:2d} {delta:+6.2f} | {100 * tc:5.1f}% {tw:7.3f} | {100 * row[0]:9.1f}% "
                  f"{row[1]:6.3f} | {100 * row[2]:8.1f}% {row[3]:6.3f}")  # fmt: skip
    print("\n== summary (ratios where the t covers ≥ 94 %) ==")
    for T, rows in summary.items():
        tgt = [r for tc, r in rows if tc >= 0.94]
        print(f"T = {T:2d}: {len(rows)} cells, {len(tgt)} with the t ≥ 94 % | designed: lowest coverage "
              f"{100 * min(r[0] for _, r in rows):.1f} %, ratio max {max(r[1] for r in tgt):.3f} median "
              f"{float(np.median([r[1] for r in tgt])):.3f}, > 1.10 in {sum(r[1] > 1.10 for r in tgt)} | union: lowest "
              f"coverage {100 * min(r[2] for _, r in rows):.1f} %, ratio max {max(r[3] for r in tgt):.3f} median "
              f"{float(np.median([r[3] for r in tgt])):.3f}, > 1.10 in {sum(r[3] > 1.10 for r in tgt)}")  # fmt: skip
    print(f"({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

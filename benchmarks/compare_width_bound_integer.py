"""The width floor of ``compare_width_bound.py`` for non-randomised intervals of the per-task differences (issue 23).

``benchmarks/compare_width_bound.py`` bounds the mean width, at a ternary cell (every d_t ∈ {−1, 0, 1}), of every
interval that covers ≥ 94 % at every trinomial parameter — randomised ones included. Its LP lets the acceptance
region of each δ' take a *fraction* of an outcome (m⁺, m⁻), which no interval a user would accept does: the t, the
default and every method in tauk are deterministic functions of the per-task differences, and — not depending on
the order of the tasks — of (m⁺, m⁻). For those the acceptance regions are 0/1, and the same bound is an integer
programme per δ':

    g(δ') = min Σ_o P_θ0(o) z_o  over z ∈ {0, 1}^outcomes  with  Σ_o P_θ(o) z_o ≥ 0.94 at every θ of the grid
    {θ : p⁺ − p⁻ = δ'} (``--nq`` values of p⁺ + p⁻),

and, by Pratt's identity, E_θ0[width] ≥ h Σ_j g(δ'_j) − h on a δ' grid of step h (an interval holding j grid
points is ≥ (j − 1) h wide; fewer constraints and the − h only lower it). Where this floor exceeds 1.10× the t's
mean width, no deterministic, order-free interval of the per-task differences that covers ≥ 94 % at every
trinomial parameter meets issue 23's width target in that cell. (A procedure may use more than the differences —
the trial counts behind them — as a tie-breaker; it is then outside this class, and only the randomised bound of
``compare_width_bound.py`` applies to it.)

Cells: the ternary ones at T ∈ ``--T`` where the t covers ≥ 94 % and the default is wider than 1.10× the t (exact
sums, :func:`compare_width_bound.widths`). MILPs: scipy's HiGHS.

Run: ``nice python benchmarks/compare_width_bound_integer.py``; kept output
``benchmarks/results/compare_width_bound_integer.txt``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_width_bound import LEVEL, cells_of, outcomes, trinomial  # noqa: E402


@contextlib.contextmanager
def _quiet_stdout():
    """HiGHS's MIP solver writes progress lines to file descriptor 1 itself; keep them out of the results."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        try:
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def g_values(T: int, pp0: float, pm0: float, step: float, nq: int, integer: bool) -> np.ndarray:
    """g(δ') on the grid −1 + step, …, 1 − step: the least P_θ0-mass of an acceptance region of δ' (0/1 when
    ``integer``, else fractional — the LP of compare_width_bound.py)."""
    a, b = outcomes(T)
    p0 = trinomial(T, a, b, [pp0], [pm0])[0]
    out = []
    for dp in np.arange(-1 + step, 1 - step / 2, step):
        q = abs(dp) + (1 - abs(dp)) * np.linspace(0, 1, nq)
        P = trinomial(T, a, b, (q + dp) / 2, (q - dp) / 2)
        cons = optimize.LinearConstraint(P, lb=np.full(nq, LEVEL), ub=np.inf)
        with _quiet_stdout():
            res = optimize.milp(p0, constraints=cons, integrality=np.full(p0.size, int(integer)),
                                bounds=optimize.Bounds(0, 1), options={"mip_rel_gap": 0.0})  # fmt: skip
        if not res.success:
            raise RuntimeError(f"T={T} δ'={dp:+.4f}: {res.message}")
        # the solver's proven lower bound (equal to the optimum at gap 0): a floor whatever its tolerance
        bound = getattr(res, "mip_dual_bound", None) if integer else None
        out.append(min(res.fun, bound) if bound is not None and np.isfinite(bound) else res.fun)
    return np.array(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, nargs="*", default=[10, 20])
    ap.add_argument("--step", type=float, default=0.005)
    ap.add_argument("--nq", type=int, default=40)
    args = ap.parse_args(argv)
    print(f"# benchmarks/compare_width_bound_integer.py --T {' '.join(map(str, args.T))} --step {args.step} --nq "
          f"{args.nq} (0/1 acceptance regions of (m⁺, m⁻), coverage ≥ {LEVEL:.2f} at {args.nq} nuisance values per "
          "δ'; MILP: scipy HiGHS, gap 0)")  # fmt: skip
    print("# floor = h Σ g(δ') − h: no deterministic, order-free interval of the per-task differences covering ≥ 94 % "
          "at every trinomial parameter has a smaller mean width at the cell; 'randomised' is the same with "
          "fractional regions")  # fmt: skip
    print()
    print("== ternary cells where the default is wider than 1.10× the t ==")
    print(f"{'T':>3} {'n=k':>3} {'population':10} {'δ':>6} | {'t cov':>6} {'t width':>7} {'default':>7} | "
          f"{'randomised':>10} {'integer':>7} | {'rand/t':>6} {'int/t':>6} | verdict")
    rows = []
    for T in args.T:
        for c in cells_of(T):
            if not (c["target"] and c["score_width"] > 1.10 * c["t_width"]):
                continue
            t0 = time.perf_counter()
            frac = args.step * g_values(T, c["pp"], c["pm"], args.step, args.nq, False).sum() - args.step
            whole = args.step * g_values(T, c["pp"], c["pm"], args.step, args.nq, True).sum() - args.step
            tw = c["t_width"]
            verdict = ("no deterministic interval of the differences meets ≤ 1.10× t" if whole > 1.10 * tw
                       else "not excluded")  # fmt: skip
            rows.append((T, c, frac, whole))
            print(f"{T:3d} {c['k']:3d} {c['pop']:10} {c['delta']:+6.2f} | {100 * c['t_cov']:5.1f}% {tw:7.3f} "
                  f"{c['score_width']:7.3f} | {frac:10.3f} {whole:7.3f} | {frac / tw:6.3f} {whole / tw:6.3f} | "
                  f"{verdict}", flush=True)  # fmt: skip
            print(f"  ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    print("\n== summary ==")
    over = [r for r in rows if r[3] > 1.10 * r[1]["t_width"]]
    print(f"{len(rows)} ternary cells where the default is wider than 1.10× the t; the integer floor exceeds 1.10× "
          f"the t in {len(over)}" + (": " + "; ".join(f"T={T} n=k={c['k']} {c['pop']} δ={c['delta']:+.2f}"
                                                          for T, c, _, _ in over) if over else ""))  # fmt: skip
    if rows:
        print(f"integer ÷ randomised floor: {min(r[3] / r[2] for r in rows):.3f}–{max(r[3] / r[2] for r in rows):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

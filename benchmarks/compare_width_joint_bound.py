"""The joint width bound: one confidence procedure for all ternary cells of a T at once (issue 23, width target).

``benchmarks/compare_width_bound.py`` bounds, cell by cell, the mean width at the cell's trinomial parameter θ_c of
any (randomised, not necessarily interval) confidence set covering ≥ 94 % at every trinomial parameter; each cell's
optimum is a different set. The target asks ONE procedure to be ≤ 1.10× the t's mean width in every cell where the
t covers ≥ 94 %. Pratt's identity makes that a single linear programme over acceptance probabilities
a[j, o] ∈ [0, 1] (δ'_j accepted when the outcome o = (m⁺, m⁻) of T trinomial tasks is seen) shared by all cells:

    z* = min z  subject to
      (i)  Σ_o P_θ(o) a[j, o] ≥ 0.94       for every δ'_j on a grid of step ``--step`` and every θ on a grid of
                                           ``--nq`` nuisance values p⁺ + p⁻ with p⁺ − p⁻ = δ'_j,
      (ii) Δ Σ_j Σ_o P_θc(o) a[j, o] ≤ z W_t(c)   for every target cell c (W_t(c): the paired t's mean width at θ_c,
                                           an exact trinomial sum, ``compare_width_bound.widths``).

Any confidence procedure C covering ≥ 94 % at every θ gives a feasible a (a[j, o] = P(δ'_j ∈ C(o))) whose
left-hand sides in (ii) are its mean widths (Riemann sums of ∫ P_θc(δ' ∈ C) dδ'); coverage only on grids and
non-interval, randomised sets only lower z*. So where z* > 1.10 (stable when the step is halved and the nuisance grid
doubled), no procedure whatever meets the width target in all those cells at once with ≥ 94 % coverage everywhere.
Entries of P_θ below 1e-14 are dropped from (i) with the right-hand side lowered by their sum (a relaxation: the
bound stays a bound). The cells' binding constraints are read from the duals of (ii).

Intervals: the same LP with each a[·, o] restricted to a mixture of intervals — exactly the a ≥ 0 whose upward jumps
Σ_j (a[j, o] − a[j − 1, o])⁺ sum to ≤ 1 (level sets: a sub-probability mixture of single intervals has at most its
mass in up-crossings, and conversely). It can only raise z*; printed to show whether the interval shape matters.

Weak form (``weak``): coverage required only at the calibration cells' own parameters — Σ_o P_θc(o) P(δ_c ∈ C(o))
≥ 0.94 for every ternary cell c of that T, including those where the t under-covers. For sets that need not be
intervals this is void (C(o) = {δ_c : all c} has length 0: z* = 0), so the weak form is solved over randomised
intervals: an interval contains a run of consecutive calibration δ values δ_(i) ≤ … ≤ δ_(j) and has length
≥ δ_(j) − δ_(i); the LP is over the mixture weights of those runs per outcome. If even that z* > 1.10, the target as
written (coverage in the calibration cells only) is impossible; if not, only the full-coverage form is decided here.

Run: ``nice -n 5 python benchmarks/compare_width_joint_bound.py``; kept output:
``benchmarks/results/compare_width_joint_bound.txt``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize, sparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_width_bound import LEVEL, cells_of, outcomes, trinomial  # noqa: E402

TARGET = 1.10
DROP = 1e-14


def joint_lp(T: int, cells: list[dict], step: float, n_q: int, intervals: bool = False) -> dict:
    """z* of the module notes, (i) on the full grid; returns z, the acceptance table a (δ' grid × outcomes), the grid,
    each cell's bound width at the optimum and the duals of (ii). ``intervals``: a[·, o] restricted to mixtures of
    intervals (module notes)."""
    a_, b_ = outcomes(T)
    n_o = a_.size
    grid = np.arange(-1.0 + step / 2, 1.0, step)
    J = grid.size
    nA = J * n_o
    iS, iz = nA, nA + n_o
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for j, dp in enumerate(grid):
        q = abs(dp) + (1.0 - abs(dp)) * np.linspace(0.0, 1.0, n_q)
        Pq = trinomial(T, a_, b_, (q + dp) / 2, (q - dp) / 2)
        small = Pq < DROP
        dropped = np.where(small, Pq, 0.0).sum(axis=1)
        rr, oo = np.nonzero(~small)
        rows.append(r + rr)
        cols.append(j * n_o + oo)
        vals.append(-Pq[rr, oo])
        rhs.append(-(LEVEL - dropped))
        r += n_q
    n_cov = r
    for c in cells:
        P = trinomial(T, a_, b_, [c["pp"]], [c["pm"]])[0]
        rows.append(np.full(n_o + 1, r))
        cols.append(np.r_[iS + np.arange(n_o), iz])
        vals.append(np.r_[P, -c["t_width"]])
        rhs.append([0.0])
        r += 1
    nX = nA + n_o + 1
    if intervals:  # u[j, o] ≥ a[j, o] − a[j − 1, o] (a[−1, o] = 0), Σ_j u[j, o] ≤ 1
        iu = nX
        jj, oo = np.divmod(np.arange(nA), n_o)
        prev = jj > 0
        rows += [r + np.arange(nA), r + np.flatnonzero(prev), r + np.arange(nA)]
        cols += [np.arange(nA), np.flatnonzero(prev) - n_o, iu + np.arange(nA)]
        vals += [np.ones(nA), -np.ones(int(prev.sum())), -np.ones(nA)]
        rhs.append(np.zeros(nA))
        r += nA
        rows.append(r + oo)
        cols.append(iu + np.arange(nA))
        vals.append(np.ones(nA))
        rhs.append(np.ones(n_o))
        r += n_o
        nX += nA
    A_ub = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nX))
    # S_o = Δ Σ_j a[j, o]: the outcome's (expected) accepted length
    eq_r = np.r_[np.tile(np.arange(n_o), J), np.arange(n_o)]
    eq_c = np.r_[np.arange(nA), iS + np.arange(n_o)]
    eq_v = np.r_[np.full(nA, -step), np.ones(n_o)]
    A_eq = sparse.csr_matrix((eq_v, (eq_r, eq_c)), shape=(n_o, nX))
    cost = np.zeros(nX)
    cost[iz] = 1.0
    bounds = [(0.0, 1.0)] * nA + [(0.0, None)] * (nX - nA)
    res = optimize.linprog(cost, A_ub=A_ub, b_ub=np.concatenate(rhs), A_eq=A_eq, b_eq=np.zeros(n_o), bounds=bounds,
                           method="highs")
    if res.status != 0:
        raise RuntimeError(f"joint LP failed at T={T}: {res.message}")
    x = res.x
    acc = x[:nA].reshape(J, n_o)
    S = x[iS:iS + n_o]
    cell_w = np.array([trinomial(T, a_, b_, [c["pp"]], [c["pm"]])[0] @ S for c in cells])
    duals = -res.ineqlin.marginals[n_cov:n_cov + len(cells)]
    return dict(z=float(x[iz]), acc=acc, grid=grid, S=S, cell_width=cell_w, duals=duals)


def coverage_of(T: int, acc: np.ndarray, grid: np.ndarray, n_q: int) -> float:
    """Smallest coverage of the acceptance table over (i)'s grid (exact sums, no dropping)."""
    a_, b_ = outcomes(T)
    worst = 1.0
    for j, dp in enumerate(grid):
        q = abs(dp) + (1.0 - abs(dp)) * np.linspace(0.0, 1.0, n_q)
        worst = min(worst, float((trinomial(T, a_, b_, (q + dp) / 2, (q - dp) / 2) @ acc[j]).min()))
    return worst


def weak_lp(T: int, cells: list[dict]) -> dict:
    """z* of the weak form (module notes): randomised intervals, coverage ≥ 94 % only at every cell's own θ_c and δ_c,
    width ≤ z W_t in the target cells."""
    a_, b_ = outcomes(T)
    n_o = a_.size
    pts = np.array(sorted({c["delta"] for c in cells}))
    runs = [(i, j) for i in range(pts.size) for j in range(i, pts.size)]
    R = len(runs)
    length = np.array([pts[j] - pts[i] for i, j in runs])
    nW = n_o * R
    rows, cols, vals, rhs = [], [], [], []
    r = 0
    for o in range(n_o):  # Σ_runs w[o, ·] ≤ 1
        rows.append(np.full(R, r))
        cols.append(o * R + np.arange(R))
        vals.append(np.ones(R))
        rhs.append(1.0)
        r += 1
    for c in cells:
        P = trinomial(T, a_, b_, [c["pp"]], [c["pm"]])[0]
        idx = int(np.flatnonzero(pts == c["delta"])[0])
        inside = np.array([i <= idx <= j for i, j in runs], float)
        rows.append(np.full(nW, r))
        cols.append(np.arange(nW))
        vals.append(-np.outer(P, inside).ravel())
        rhs.append(-LEVEL)
        r += 1
    n_cov = r
    tgt = [c for c in cells if c["target"]]
    for c in tgt:
        P = trinomial(T, a_, b_, [c["pp"]], [c["pm"]])[0]
        rows.append(np.full(nW + 1, r))
        cols.append(np.arange(nW + 1))
        vals.append(np.r_[np.outer(P, length).ravel(), -c["t_width"]])
        rhs.append(0.0)
        r += 1
    A = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nW + 1))
    cost = np.zeros(nW + 1)
    cost[-1] = 1.0
    res = optimize.linprog(cost, A_ub=A, b_ub=np.array(rhs), bounds=[(0.0, None)] * (nW + 1), method="highs")
    if res.status != 0:
        raise RuntimeError(f"weak LP failed at T={T}: {res.message}")
    return dict(z=float(res.x[-1]), duals=-res.ineqlin.marginals[n_cov:], points=pts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, nargs="*", default=[10, 20])
    ap.add_argument("--step", type=float, default=0.01)
    ap.add_argument("--nq", type=int, default=40, help="nuisance values p⁺ + p⁻ per δ'")
    ap.add_argument("--no-check", action="store_true", help="skip the re-solve at half the step, twice the grid")
    ap.add_argument("--no-intervals", action="store_true", help="skip the re-solve over mixtures of intervals")
    args = ap.parse_args(argv)
    t00 = time.time()
    flags = "".join(f" --{f}" for f in ("no-check", "no-intervals") if getattr(args, f.replace("-", "_")))
    print(f"# benchmarks/compare_width_joint_bound.py --T {' '.join(map(str, args.T))} --step {args.step} --nq {args.nq}"
          f"{flags} (one procedure for all ternary "
          f"cells of a T; coverage ≥ {LEVEL:.2f} at {args.nq} nuisance values per δ'; LP: scipy HiGHS)")
    print(f"# z* = min over procedures of max over target cells of (mean width at the cell) ÷ (t's exact mean width); "
          f"z* > {TARGET:.2f} ⇒ the width target is impossible in those cells jointly")
    for T in args.T:
        t0 = time.time()
        cells = cells_of(T)
        tgt = [c for c in cells if c["target"]]
        print()
        print(f"== T = {T}: {len(cells)} ternary cells, {len(tgt)} where the t covers ≥ {100 * LEVEL:.0f} % "
              f"(width targets), {len(outcomes(T)[0])} outcomes ==")
        res = joint_lp(T, tgt, args.step, args.nq)
        t_lp = time.time() - t0
        worst = coverage_of(T, res["acc"], res["grid"], args.nq)
        print(f"{'n=k':>3} {'population':10} {'δ':>6} {'p⁺':>6} {'p⁻':>6} | {'t cov':>6} {'t width':>7} {'score':>6} | "
              f"{'joint':>6} {'joint/t':>7} {'dual':>6}")
        for c, w, du in zip(tgt, res["cell_width"], res["duals"]):
            print(f"{c['k']:3d} {c['pop']:10} {c['delta']:+6.2f} {c['pp']:6.3f} {c['pm']:6.3f} | {100 * c['t_cov']:5.1f}% "
                  f"{c['t_width']:7.3f} {c['score_width']:6.3f} | {w:6.3f} {w / c['t_width']:7.3f} {du:6.3f}")
        binding = [f"n=k={c['k']} {c['pop']} δ={c['delta']:+.2f}" for c, du in zip(tgt, res["duals"]) if du > 1e-6]
        print(f"joint z* = {res['z']:.4f} (step {args.step}, {args.nq} nuisance values; {t_lp:.0f} s); the optimum's "
              f"worst coverage on the grid {100 * worst:.3f} %; binding cells (dual > 0): {'; '.join(binding)}")
        zf = res["z"]
        if not args.no_check:
            t1 = time.time()
            fine = joint_lp(T, tgt, args.step / 2, 2 * args.nq)
            print(f"refinement: z* = {fine['z']:.4f} at step {args.step / 2} with {2 * args.nq} nuisance values "
                  f"(change {fine['z'] - res['z']:+.4f}; {time.time() - t1:.0f} s)")
            zf = min(zf, fine["z"])
        if not args.no_intervals:
            t1 = time.time()
            iv = joint_lp(T, tgt, args.step, args.nq, intervals=True)
            print(f"restricted to (randomised) intervals: z* = {iv['z']:.4f} at step {args.step} with {args.nq} nuisance "
                  f"values (change {iv['z'] - res['z']:+.4f}; {time.time() - t1:.0f} s)")
        weak = weak_lp(T, cells)
        wb = [f"n=k={c['k']} {c['pop']} δ={c['delta']:+.2f}" for c, du in zip(tgt, weak["duals"]) if du > 1e-6]
        print(f"weak form (randomised intervals, coverage ≥ 94 % only at the {len(cells)} cells' own parameters, "
              f"δ points {', '.join(f'{p:+.2f}' for p in weak['points'])}): z* = {weak['z']:.4f}; binding: "
              f"{'; '.join(wb)}")
        verdict = (f"IMPOSSIBLE: no procedure covering ≥ 94 % at every trinomial parameter has mean width ≤ "
                   f"{TARGET:.2f}× the t's in all {len(tgt)} target cells" if zf > TARGET else
                   f"not excluded: the LP does not rule out a procedure with ≥ 94 % coverage everywhere and mean width "
                   f"≤ {zf:.3f}× the t's in every target cell")
        print(f"verdict T = {T}: {verdict}; weak form "
              f"{'IMPOSSIBLE as written' if weak['z'] > TARGET else 'not excluded'}")
    print(f"\n({time.time() - t00:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Deterministic-interval width bound at T = 10 (issue 23, ternary width target): a mixed-integer programme.

``benchmarks/compare_width_joint_bound.py`` bounds the mean width of *randomised* confidence sets covering ≥ 94 % at
every trinomial parameter (z* = 1.064× the t's at T = 10); its optimum randomises heavily at the outcomes with 0–2
discordant tasks, which no reported interval can do. Here the acceptance indicators x[j, o] ∈ {0, 1} (δ'_j in the
interval of outcome o) are binary and each outcome's accepted set is one interval (at most one up-crossing along
the δ' grid), and only the binding cell's mean width is minimised (n = k = 4, u-shaped, δ = 0 — the other target
cells only add constraints):

    min Σ_o P_θc(o) · Δ · (Σ_j x[j, o] − 1)   subject to   Σ_o P_θ(o) x[j, o] ≥ level  at every grid δ'_j and
                                                          ``--nq`` nuisance values θ with p⁺ − p⁻ = δ'_j.

Coverage is asked only on the grid and the length Δ(count − 1) never exceeds the interval's true length, so the
optimum (or, if the solver stops at its time limit, its dual bound) is a lower bound on the mean width at θ_c of
any deterministic interval procedure covering ≥ ``level`` at every trinomial parameter. Divided by the t's exact
mean width there (0.420) it bounds the width ratio from below: above 1.10 means no deterministic interval with that
worst-case coverage meets the width target in that cell.

Run: ``nice -n 5 python benchmarks/compare_width_deterministic_bound.py [--level 0.93] [--step 0.02]``; kept output:
``benchmarks/results/compare_width_deterministic_bound.txt``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import optimize, sparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare_width_bound import cells_of, outcomes, trinomial  # noqa: E402


def milp_bound(T: int, cell: dict, level: float, step: float, n_q: int, time_limit: float) -> dict:
    a_, b_ = outcomes(T)
    n_o = a_.size
    grid = np.arange(-1.0 + step / 2, 1.0, step)
    J = grid.size
    nx = J * n_o  # x[j, o] at j * n_o + o
    nu = J * n_o  # u[j, o] ≥ x[j, o] − x[j − 1, o]
    rows, cols, vals, lo_b, hi_b = [], [], [], [], []
    r = 0
    for j, dp in enumerate(grid):
        q = abs(dp) + (1.0 - abs(dp)) * np.linspace(0.0, 1.0, n_q)
        Pq = trinomial(T, a_, b_, (q + dp) / 2, (q - dp) / 2)
        small = Pq <= 1e-14  # dropped, with the right-hand side lowered by their mass (still a relaxation)
        rr, oo = np.nonzero(~small)
        rows.append(r + rr)
        cols.append(j * n_o + oo)
        vals.append(Pq[rr, oo])
        lo_b.append(level - np.where(small, Pq, 0.0).sum(axis=1))
        hi_b.append(np.full(n_q, np.inf))
        r += n_q
    jj, oo = np.divmod(np.arange(nx), n_o)
    prev = jj > 0
    # u − x + x_prev ≥ 0
    rows += [r + np.arange(nx), r + np.arange(nx), r + np.flatnonzero(prev)]
    cols += [nx + np.arange(nx), np.arange(nx), np.flatnonzero(prev) - n_o]
    vals += [np.ones(nx), -np.ones(nx), np.ones(int(prev.sum()))]
    lo_b.append(np.zeros(nx))
    hi_b.append(np.full(nx, np.inf))
    r += nx
    rows.append(r + oo)
    cols.append(nx + np.arange(nx))
    vals.append(np.ones(nx))
    lo_b.append(np.full(n_o, -np.inf))
    hi_b.append(np.ones(n_o))
    r += n_o
    A = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, nx + nu))
    P0 = trinomial(T, a_, b_, [cell["pp"]], [cell["pm"]])[0]
    cost = np.r_[np.tile(P0 * step, J), np.zeros(nu)]
    const = -step * P0.sum()  # the − 1 of Δ(count − 1) (every interval is non-empty: coverage needs it)
    res = optimize.milp(cost, constraints=optimize.LinearConstraint(A, np.concatenate(lo_b), np.concatenate(hi_b)),
                        integrality=np.r_[np.ones(nx), np.zeros(nu)], bounds=optimize.Bounds(0, 1),
                        options=dict(time_limit=time_limit, disp=False))
    dual = getattr(res, "mip_dual_bound", None)
    return dict(status=res.status, message=res.message, primal=(res.fun + const) if res.x is not None else None,
                dual=(dual + const) if dual is not None else None, x=res.x, grid=grid, n_o=n_o)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=10)
    ap.add_argument("--level", type=float, nargs="*", default=[0.93, 0.94])
    ap.add_argument("--step", type=float, default=0.02)
    ap.add_argument("--nq", type=int, default=16)
    ap.add_argument("--time-limit", type=float, default=600.0)
    args = ap.parse_args(argv)
    cell = next(c for c in cells_of(args.T) if c["k"] == 4 and c["pop"] == "u-shaped" and c["delta"] == 0.0)
    print(f"# benchmarks/compare_width_deterministic_bound.py --T {args.T} --step {args.step} --nq {args.nq} "
          f"--time-limit {args.time_limit:g} (HiGHS MILP; cell n=k=4 u-shaped δ=0: p⁺ = p⁻ = {cell['pp']:.4f}, "
          f"t's exact mean width {cell['t_width']:.4f}, 1.10× = {1.1 * cell['t_width']:.4f})")
    for level in args.level:
        t0 = time.time()
        res = milp_bound(args.T, cell, level, args.step, args.nq, args.time_limit)
        lb = res["dual"] if res["dual"] is not None else res["primal"]
        print(f"coverage ≥ {100 * level:.0f} % on the grid: status {res['status']} ({res['message']}); "
              f"lower bound on mean width {lb:.4f} = {lb / cell['t_width']:.3f}× the t's"
              + (f"; best deterministic found {res['primal']:.4f} = {res['primal'] / cell['t_width']:.3f}×"
                 if res["primal"] is not None else "") + f" ({time.time() - t0:.0f} s)", flush=True)
        verdict = "exceeds" if lb / cell["t_width"] > 1.10 else "does not exceed"
        claim = (f"no deterministic interval covering ≥ {100 * level:.0f} % at every trinomial parameter meets the "
                 "width target in this cell" if lb / cell["t_width"] > 1.10 else "not excluded")
        print(f"   ⇒ the bound {verdict} 1.10: {claim}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

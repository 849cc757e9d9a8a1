"""Design the ternary comparison interval by integer programming (issue 23): exact coverage ≥ 94 % everywhere,
least width in the calibration's cells.

Where every per-task difference is −1, 0 or 1 (one trial per task, or k = n), a deterministic, order-free interval
is a pair of ends for each outcome (m⁺, m⁻) of T tasks. This script chooses them, for each T of ``--T``, as the
solution of

    minimise   max over target cells c of  E_c[width] / E_c[width of the paired t]
    subject to P_θ(δ(θ) ∈ interval) ≥ ``--level`` at every trinomial parameter θ of a grid
               (δ' on a grid of step ``--step``, ``--nq`` values of p⁺ + p⁻ at each),
               the interval holds 0 exactly where the exact unconditional test (tauk's p-value, E+M ordering)
               does not reject at α = 5 %, and it holds the estimate (m⁺ − m⁻)/T,

the target cells being those of ``benchmarks/calibration_compare_delta.py`` at n = k ∈ {1, 4} (four task
populations, δ ∈ {0, ±0.07, ±0.15}) where the paired t covers ≥ 94 % at this T (issue 23's width target is
measured there). Two more requirements keep every single interval sensible: no end beyond the union interval of
:func:`tauk.stats.comparisons.score.ternary_ends` at 99 % (``--cap-alpha``), and each outcome's width counts in
the objective with a small uniform weight (``--regularise``) — without them an outcome the cells almost never
produce (every task won by A) was stretched towards 0 wherever that bought coverage cheaply.

Per δ' = g > 0 there are two binaries per outcome o: x_o (o's upper end is below g) and y_o (its lower end is
above g); o accepts g when neither. x is a down-set and y an up-set of the order "one more task won by A, or one
fewer by B" (so the ends are monotone), x only grows and y only shrinks as g rises (so each acceptance set is an
interval), and with A and B swapped the problem is its own mirror (the negative half is the mirror image; at the
first g a mirror condition joins the halves). The δ' are solved in increasing order, each a small MILP (HiGHS)
with the previous one's sets as bounds. The minimax over cells is taken by Lagrangian weights: for fixed weights
the objective is a weighted sum of the cells' mean widths; the weights are then moved multiplicatively towards the
widest cell, and the best design over ``--rounds`` rounds is kept.

Coverage is required at both ends and the middle of every δ' step and 40 nuisance values p⁺ + p⁻ (denser
towards both ends); it is then checked on a grid ten times finer in δ' with 200 nuisance values (``min cov``) —
the level carries a margin for it (``--level`` 0.9405).

Output: ``tauk/stats/comparisons/ternary_design.npz`` (the package's table: for each T, the ends in units of the
step from −1) and a report (kept: ``benchmarks/results/compare_ternary_design.txt``).

Run: ``nice python benchmarks/compare_ternary_design.py --T 6-50 --workers 2`` (≈ 30 min on two cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import optimize, sparse, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_compare_delta import DELTAS, POPULATIONS, reachable, trinomial_probs  # noqa: E402
from compare_width_bound import outcomes, trinomial  # noqa: E402  (m⁺ major: the package table's order)
from compare_width_bound_integer import _quiet_stdout  # noqa: E402

from tauk.stats.comparisons.score import ternary_em_pvalue, ternary_ends  # noqa: E402

ALPHA = 0.05
TARGET_COVERAGE = 0.94
OUT = Path(__file__).resolve().parents[1] / "tauk" / "stats" / "comparisons" / "ternary_design.npz"


def t_ends(T: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paired t interval of every outcome (clipped to [−1, 1])."""
    est = (a - b) / T
    s2 = np.maximum((a + b - T * est * est) / max(T - 1, 1), 0.0)
    half = stats.t.ppf(1 - ALPHA / 2, T - 1) * np.sqrt(s2 / T)
    return np.maximum(est - half, -1.0), np.minimum(est + half, 1.0)


def cell_parameters() -> list[dict]:
    """The calibration's ternary cells (population, k, δ) and their trinomial parameters (T-free)."""
    out = []
    for k in (1, 4):
        for pop in POPULATIONS:
            for delta in DELTAS:
                if reachable(pop, k, delta):
                    pp, pm = trinomial_probs(pop, k, delta)
                    out.append(dict(k=k, pop=pop, delta=delta, pp=pp, pm=pm))
    return out


def cells_at(T: int, params: list[dict]) -> list[dict]:
    """The cells at T with their outcome probabilities, the t's exact mean width and coverage, and the target flag."""
    a, b = outcomes(T)
    lo, hi = t_ends(T, a, b)
    out = []
    for c in params:
        P = trinomial(T, a, b, [c["pp"]], [c["pm"]])[0]
        cov = float(P @ ((lo - 1e-9 <= c["delta"]) & (c["delta"] <= hi + 1e-9)))
        out.append(dict(c, P=P, t_width=float(P @ (hi - lo)), t_cov=cov, target=cov >= TARGET_COVERAGE))
    return out


def _order_rows(T: int, index: dict, n_o: int):
    """Cover relations of the favourability order: pairs (o, o') with o' one step more favourable to A than o
    (one more +1, or one −1 fewer)."""
    pairs = []
    for (x, y), o in index.items():
        if x + 1 + y <= T:
            pairs.append((o, index[(x + 1, y)]))
        if y >= 1:
            pairs.append((o, index[(x, y - 1)]))
    return np.array(pairs)


def design(T: int, params: list[dict], step: float, level: float, nq: int, rounds: int,
           regularise: float = 0.02, cap_alpha: float | None = 0.01) -> dict:
    """The design at T (module notes): ends in units of ``step`` from −1, and what it achieves.

    Per δ' = g_j > 0 two binaries per outcome: x_o (o rejects g_j as too high for it: its upper end is below) and
    y_o (o's lower end is above g_j); o accepts g_j when neither. x is a down-set and y an up-set of the
    favourability order (so the ends are monotone in (m⁺, m⁻)), x only grows and y only shrinks as g_j rises (so
    each acceptance set is an interval), and at g_0 = step/2 the mirror condition y_o ≤ x_{mirror o} joins the
    negative half. The δ' are solved in order, each with the previous one's sets as bounds."""
    a, b = outcomes(T)
    n_o = a.size
    index = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(a, b))}
    mirror = np.array([index[(int(y), int(x))] for x, y in zip(a, b)])
    est = (a - b) / T
    rej = np.array([ternary_em_pvalue(int(x), int(y), T) < ALPHA for x, y in zip(a, b)])
    cells = cells_at(T, params)
    tgt = [c for c in cells if c["target"]] or cells
    Pc = np.array([c["P"] for c in tgt])
    tw = np.array([max(c["t_width"], 1e-12) for c in tgt])
    J = int(round(1.0 / step))
    grid = (np.arange(J) + 0.5) * step
    est_bin = np.where(est > 0, np.minimum((est / step).astype(int), J - 1), -1)
    pairs = _order_rows(T, index, n_o)
    npair = len(pairs)
    # rows: x_o + y_o ≤ 1; x_o' − x_o ≤ 0 (o' more favourable); y_o − y_o' ≤ 0; coverage Σ P (x + y) ≤ 1 − level
    r_xy = sparse.hstack([sparse.identity(n_o), sparse.identity(n_o)])
    D = sparse.csr_matrix((np.r_[np.ones(npair), -np.ones(npair)],
                           (np.r_[np.arange(npair), np.arange(npair)], np.r_[pairs[:, 1], pairs[:, 0]])),
                          shape=(npair, n_o))  # fmt: skip
    order = sparse.vstack([sparse.hstack([D, sparse.csr_matrix((npair, n_o))]),
                           sparse.hstack([sparse.csr_matrix((npair, n_o)), -D])])  # fmt: skip
    # mirror at g_0: y_o − x_{mirror o} ≤ 0
    M = sparse.hstack([-sparse.csr_matrix((np.ones(n_o), (np.arange(n_o), mirror)), shape=(n_o, n_o)),
                       sparse.identity(n_o)])  # fmt: skip
    # coverage is required at both ends and the middle of each δ' bin (the acceptance set is constant on it), at nq
    # values of p⁺ + p⁻ from |δ'| to 1, denser towards both ends
    u = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, nq))
    Pq = []
    for g in grid:
        rows = []
        for e in (g - step / 2, g, g + step / 2):
            q = e + (1.0 - e) * u
            rows.append(trinomial(T, a, b, (q + e) / 2, (q - e) / 2))
        Pq.append(np.vstack(rows))
    # the cap: no end beyond the same outcome's union interval at level 1 − cap_alpha (99 %): the optimum is otherwise
    # free to stretch an outcome the cells rarely see far from its estimate (12 – 0 of 12 gave [0.12, 1] before
    # the regularisation, 16 – 0 of 20 [0.34, 0.925] after it) when that buys coverage cheaply
    cap_x = np.zeros((J, n_o), bool)
    cap_y = np.zeros((J, n_o), bool)
    if cap_alpha is not None:
        ref = np.array([ternary_ends(int(x), int(y), T, cap_alpha) for x, y in zip(a, b)])
        cap_y = (grid[:, None] + step / 2) <= ref[None, :, 0] + 1e-12  # bin wholly below the reference's lower end
        cap_x = (grid[:, None] - step / 2) >= ref[None, :, 1] - 1e-12  # … wholly above its upper end
    w = np.ones(len(tgt)) / len(tgt)
    best = None
    history = []
    for _ in range(rounds):
        cost = (w / tw) @ Pc
        # every outcome's width counts a little (uniform weight, ``regularise`` of the mean): without it an outcome
        # the cells almost never see (every task won by A) gets whatever ends cost nothing there, e.g. [0.17, 1] for
        # 20 – 0 of 20
        cost = cost + regularise * cost.mean()
        cost = cost + cost[mirror]  # accepting g_j by o also decides whether mirror o accepts −g_j
        obj = -np.r_[cost, cost]  # maximise the rejected mass
        X = np.zeros((J, n_o), bool)
        Y = np.zeros((J, n_o), bool)
        prev_x, prev_y = np.zeros(n_o, bool), np.ones(n_o, bool)
        for j in range(J):
            lbx, ubx = prev_x.astype(float), np.ones(n_o)
            lby, uby = np.zeros(n_o), prev_y.astype(float)
            ubx[est_bin == j] = uby[est_bin == j] = 0.0  # it holds its estimate
            ubx[est_bin > j] = 0.0  # its upper end is at or above its estimate …
            uby[est_bin < j] = 0.0  # … and its lower end at or below
            if j == 0:
                ubx[~rej] = uby[~rej] = 0.0  # the test does not reject: the interval holds 0
                lby[rej & (est > 0)] = 1.0  # it rejects above 0: the interval starts above 0
            lbx[rej & (est < 0)] = 1.0  # it rejects below 0: no δ' > 0
            lbx[cap_x[j] & (ubx > 0)] = 1.0
            lby[cap_y[j] & (uby > 0)] = 1.0
            cons = [optimize.LinearConstraint(r_xy, ub=1.0), optimize.LinearConstraint(order, ub=0.0),
                    optimize.LinearConstraint(np.hstack([Pq[j], Pq[j]]), ub=1.0 - level)]
            if j == 0:
                cons.append(optimize.LinearConstraint(M, ub=0.0))
            with _quiet_stdout():
                res = optimize.milp(obj, constraints=cons, integrality=np.ones(2 * n_o),
                                    bounds=optimize.Bounds(np.r_[lbx, lby], np.r_[ubx, uby]),
                                    options={"mip_rel_gap": 1e-7, "time_limit": 60})  # fmt: skip
            if res.x is None:
                raise RuntimeError(f"T={T} δ'={grid[j]:.4f}: {res.message}")
            x = res.x[:n_o] > 0.5
            y = res.x[n_o:] > 0.5
            X[j], Y[j] = x, y
            prev_x, prev_y = x, y
        Z = ~(X | Y)
        full = np.vstack([Z[::-1][:, mirror], Z])
        lo_u = np.argmax(full, axis=0).astype(np.int64)
        hi_u = (full.shape[0] - np.argmax(full[::-1], axis=0)).astype(np.int64)
        gaps = int(((hi_u - lo_u) - full.sum(axis=0)).sum())
        if gaps:
            raise RuntimeError(f"T={T}: acceptance sets not intervals ({gaps} gaps)")
        width = (hi_u - lo_u) * step
        r = Pc @ width / tw
        history.append(float(r.max()))
        if best is None or r.max() < best["max_ratio"]:
            best = dict(lo=lo_u, hi=hi_u, max_ratio=float(r.max()), ratios=r)
        w = w * np.exp(30.0 * (r - r.max()))
        w /= w.sum()
    best.update(T=T, cells=cells, targets=tgt, history=history, a=a, b=b, rej=rej, step=step)
    return best


def min_coverage(T: int, d: dict, fine: int = 10, nq: int = 200) -> tuple[float, float]:
    """(worst coverage, its δ') of the design over a grid ``fine`` times finer in δ' than the design's, with ``nq``
    nuisance values, each δ' at the middle and both ends of its bin (exact sums)."""
    a, b = d["a"], d["b"]
    step = d["step"]
    lo = -1.0 + d["lo"] * step
    hi = -1.0 + d["hi"] * step
    worst, where = 1.0, 0.0
    for dp in np.linspace(-1.0, 1.0, int(round(2.0 / step)) * fine + 1)[1:-1]:
        q = abs(dp) + (1.0 - abs(dp)) * np.linspace(0.0, 1.0, nq)
        P = trinomial(T, a, b, (q + dp) / 2, (q - dp) / 2)
        cov = float((P @ ((lo <= dp + 1e-12) & (dp - 1e-12 <= hi))).min())
        if cov < worst:
            worst, where = cov, float(dp)
    return worst, where


def _one(args):
    T, params, step, level, nq, rounds, regularise, cap_alpha = args
    t0 = time.perf_counter()
    d = design(T, params, step, level, nq, rounds, regularise, cap_alpha)
    d["min_cov"], d["min_cov_at"] = min_coverage(T, d)
    d["seconds"] = time.perf_counter() - t0
    print(f"  T = {T}: max w/t {d['max_ratio']:.3f}, min coverage {100 * d['min_cov']:.2f} % ({d['seconds']:.0f} s)",
          file=sys.stderr, flush=True)  # fmt: skip
    return d


def _parse_T(spec: str) -> list[int]:
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", default="6-50", help="task counts, e.g. 6-50 or 10,20")
    ap.add_argument("--step", type=float, default=0.005)
    ap.add_argument("--level", type=float, default=0.9405)
    ap.add_argument("--nq", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--regularise", type=float, default=0.02,
                    help="weight of every outcome's width (uniform), relative to the cells' mean weight")
    ap.add_argument("--cap-alpha", type=float, default=0.01,
                    help="no end beyond the union interval (score.ternary_ends) at level 1 − this")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-write", action="store_true", help="report only; leave the package table as it is")
    args = ap.parse_args(argv)
    Ts = _parse_T(args.T)
    print(f"# benchmarks/compare_ternary_design.py --T {args.T} --step {args.step} --level {args.level} --nq "
          f"{args.nq} --rounds {args.rounds} --regularise {args.regularise} --cap-alpha {args.cap_alpha} (minimax width ÷ t over the target cells; MILPs: scipy HiGHS)")  # fmt: skip
    params = cell_parameters()
    jobs = [(T, params, args.step, args.level, args.nq, args.rounds, args.regularise, args.cap_alpha)
            for T in Ts]
    with ProcessPoolExecutor(args.workers) as ex:
        # the largest T first, so that the workers finish together
        order = sorted(jobs, key=lambda job: -job[0])
        results = list(ex.map(_one, order)) if args.workers > 1 else [_one(j) for j in order]
    results.sort(key=lambda d: d["T"])
    print(f"{'T':>3} {'targets':>7} {'max w/t':>8} {'worst cell':32} {'min cov':>8} {'at δ′':>7} {'rounds (max w/t)':40} "
          f"{'s':>5}")  # fmt: skip
    for d in results:
        i = int(np.argmax(d["ratios"]))
        c = d["targets"][i]
        worst = f"n=k={c['k']} {c['pop']} δ={c['delta']:+.2f}"
        print(f"{d['T']:3d} {len(d['targets']):7d} {d['max_ratio']:8.3f} "
              f"{worst:32} {100 * d['min_cov']:7.2f}% "
              f"{d['min_cov_at']:+7.3f} {' '.join(f'{h:.3f}' for h in d['history']):40} {d['seconds']:5.0f}")  # fmt: skip
    if not args.no_write:
        table = {}
        if OUT.exists():  # keep the other T of the table (the same step and level only)
            with np.load(OUT) as old:
                if float(old["step"]) == args.step and float(old["alpha"]) == ALPHA:
                    table = {k: old[k] for k in old.files if k.startswith(("lo_", "hi_"))}
        for d in results:
            table[f"lo_{d['T']}"] = d["lo"].astype(np.int16)
            table[f"hi_{d['T']}"] = d["hi"].astype(np.int16)
        table["step"] = np.array(args.step)
        table["alpha"] = np.array(ALPHA)
        table["T"] = np.array(sorted(int(k[3:]) for k in table if k.startswith("lo_")), dtype=np.int16)
        np.savez_compressed(OUT, **table)
        print(f"# wrote {OUT.relative_to(OUT.parents[3])} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How often can any non-randomised paired test reject under the null when d_t ∈ {−1, 0, 1}?

Where d_t = Û_k^A − Û_k^B takes only the values −1, 0, 1 (one trial per task, or k = n) the null "the two agents'
pass^k are equal" is, for tasks drawn independently, exactly the one-parameter family

    P(d_t = +1) = P(d_t = −1) = q/2,   P(d_t = 0) = 1 − q,   q ∈ [0, 1]  (q: the chance a task is discordant),

and (m⁺, m⁻), the numbers of tasks with d_t = +1 / −1, are sufficient. A non-randomised test that treats tasks
alike is a set of rejected (m⁺, m⁻) — and one that treats the two agents alike (the same answer for compare(a, b)
and compare(b, a)) rejects (m⁺, m⁻) with (m⁻, m⁺); its type-I error at q is R(q) = Σ P_q(m⁺, m⁻) over that set. This script
finds, by mixed-integer programming (``scipy.optimize.milp``), the largest type-I error such a test can have at the
populations of ``benchmarks/calibration_compare.py`` — every one of them at once, i.e. max over tests of
min over cells of R(q_cell) — subject to R(q) ≤ cap for every q (checked on a grid of 4,001 q's, refined where the
solution breaks it), with cap = 5 % (a valid test) or 6 % (the top of the issue's 4–6 % band, anywhere). It also
prints the paired t test's R(q) at each cell, and the best single-cell figure.

If the best is below 4 %, no non-randomised test meets "4–6 % under the null in every cell"; only a randomised one
(a coin decides at the boundary) can, and tauk does not report a p-value that a coin changes.

Run: ``python benchmarks/paired_bound.py [--T 20] [--alpha 0.05]``; output in
``benchmarks/results/paired_bound.txt``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, special, stats


def cell_qs(k: int) -> dict[str, float]:
    """q = P(d_t ≠ 0) under the null (δ = 0) for each population of ``benchmarks/calibration_compare.py``, from its
    own ``trinomial_probs`` (the same draws its exact type-I table uses)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from calibration_compare import POPULATIONS, trinomial_probs

    return {pop: sum(trinomial_probs(pop, k, 0.0)) for pop in POPULATIONS}


def outcomes(T: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(np.arange(T + 1), np.arange(T + 1), indexing="ij")
    keep = a + b <= T
    return a[keep], b[keep]


def probs(T: int, a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """P_q(m⁺ = a, m⁻ = b) for each q (rows) and outcome (columns)."""
    q = np.atleast_1d(q)[:, None]
    logc = special.gammaln(T + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(T - a - b + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = logc + (a + b) * np.log(q / 2.0) + (T - a - b) * np.log1p(-q)
    lp = np.where((a + b == 0) & (q == 0), 0.0, lp)
    lp = np.where((T - a - b == 0) & (q == 1), logc + T * np.log(0.5), lp)
    return np.exp(np.nan_to_num(lp, nan=-np.inf))


def t_test_region(T: int, a: np.ndarray, b: np.ndarray, alpha: float) -> np.ndarray:
    """The paired t test's rejections (two-sided, T − 1 df) on d with a (+1)'s, b (−1)'s and T − a − b zeros."""
    mean = (a - b) / T
    var = (a + b - (a - b) ** 2 / T) / (T - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(var > 0, mean / np.sqrt(var / T), np.where(a != b, np.inf, 0.0))
    return np.abs(t) > stats.t.ppf(1 - alpha / 2, T - 1)


def best_test(T: int, targets: list[float], cap: float, symmetric: bool = True, grid: int = 4001):
    """Max over non-randomised tests of min_cell R(q_cell) subject to R(q) ≤ cap on [0, 1] (``symmetric``: the
    same answer for (m⁺, m⁻) and (m⁻, m⁺)) → (that value, the rejected outcomes as a mask over :func:`outcomes`,
    the ``milp`` result)."""
    a, b = outcomes(T)
    nv = a.size
    qgrid = np.linspace(0.0, 1.0, grid)
    Pt = probs(T, a, b, np.asarray(targets))
    for _ in range(20):
        Pc = probs(T, a, b, qgrid)
        # variables: φ (nv, binary) and s (the min over cells); maximise s
        c = np.zeros(nv + 1)
        c[-1] = -1.0
        rows = [np.hstack([Pc, np.zeros((len(qgrid), 1))])]
        lo = [np.full(len(qgrid), -np.inf)]
        hi = [np.full(len(qgrid), cap)]
        rows.append(np.hstack([-Pt, np.ones((len(targets), 1))]))  # s − R(q_cell) ≤ 0
        lo.append(np.full(len(targets), -np.inf))
        hi.append(np.zeros(len(targets)))
        if symmetric:
            idx = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(a, b))}
            pairs = [(i, idx[(int(y), int(x))]) for i, (x, y) in enumerate(zip(a, b)) if x < y]
            S = np.zeros((len(pairs), nv + 1))
            for r, (i, j) in enumerate(pairs):
                S[r, i], S[r, j] = 1.0, -1.0
            rows.append(S)
            lo.append(np.zeros(len(pairs)))
            hi.append(np.zeros(len(pairs)))
        cons = optimize.LinearConstraint(np.vstack(rows), np.concatenate(lo), np.concatenate(hi))
        integrality = np.r_[np.ones(nv), 0.0]
        bounds = optimize.Bounds(np.r_[np.zeros(nv), 0.0], np.r_[np.ones(nv), 1.0])
        res = optimize.milp(c, constraints=cons, integrality=integrality, bounds=bounds,
                            options={"time_limit": 300})  # fmt: skip
        if res.x is None:
            raise RuntimeError(f"milp failed: {res.message}")
        phi = res.x[:nv] > 0.5
        fine = np.linspace(0.0, 1.0, 100_001)
        r = probs(T, a, b, fine) @ phi
        worst = fine[r > cap + 1e-12]
        if worst.size == 0:
            return float((Pt @ phi).min()), phi, res
        qgrid = np.unique(np.concatenate([qgrid, worst[:: max(1, worst.size // 50)]]))
    raise RuntimeError("the q grid did not converge")


def best_power(T: int, p_plus: float, p_minus: float, cap: float, grid: int = 4001, time_limit: float = 300):
    """Max over non-randomised swap-invariant tests with R(q) ≤ cap for every q of the power at the alternative
    P(d_t = +1) = p_plus, P(d_t = −1) = p_minus → (that power, the rejected outcomes as a mask over :func:`outcomes`)."""
    a, b = outcomes(T)
    nv = a.size
    logc = special.gammaln(T + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(T - a - b + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = logc + a * np.log(p_plus) + b * np.log(p_minus) + (T - a - b) * np.log1p(-p_plus - p_minus)
    alt = np.exp(np.nan_to_num(lp, nan=-np.inf))
    alt = 0.5 * (alt + alt[_swap_index(T, a, b)])  # a swap-invariant test sees the symmetrised alternative
    qgrid = np.linspace(0.0, 1.0, grid)
    idx = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(a, b))}
    pairs = [(i, idx[(int(y), int(x))]) for i, (x, y) in enumerate(zip(a, b)) if x < y]
    S = np.zeros((len(pairs), nv))
    for r, (i, j) in enumerate(pairs):
        S[r, i], S[r, j] = 1.0, -1.0
    for _ in range(20):
        Pc = probs(T, a, b, qgrid)
        cons = [optimize.LinearConstraint(Pc, -np.inf, cap), optimize.LinearConstraint(S, 0.0, 0.0)]
        res = optimize.milp(-alt, constraints=cons, integrality=np.ones(nv), bounds=optimize.Bounds(0, 1),
                            options={"time_limit": time_limit})  # fmt: skip
        if res.x is None:
            raise RuntimeError(f"milp failed: {res.message}")
        phi = res.x > 0.5
        fine = np.linspace(0.0, 1.0, 100_001)
        r = probs(T, a, b, fine) @ phi
        worst = fine[r > cap + 1e-12]
        if worst.size == 0:
            return float(alt @ phi), phi, bool(res.status == 0)
        qgrid = np.unique(np.concatenate([qgrid, worst[:: max(1, worst.size // 50)]]))
    raise RuntimeError("the q grid did not converge")


def best_uniform_ratio(T: int, alts: list[np.ndarray], envelope: list[float], cap: float, grid: int = 4001,
                       time_limit: float = 300):
    """Max over non-randomised swap-invariant tests with R(q) ≤ cap for every q of min over cells of power ÷ the
    cell's envelope (its best valid test's power): what ONE test can reach in every cell at once."""
    a, b = outcomes(T)
    nv = a.size
    sw = _swap_index(T, a, b)
    A = np.array([0.5 * (x + x[sw]) / e for x, e in zip(alts, envelope)])
    idx = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(a, b))}
    pairs = [(i, idx[(int(y), int(x))]) for i, (x, y) in enumerate(zip(a, b)) if x < y]
    S = np.zeros((len(pairs), nv + 1))
    for r, (i, j) in enumerate(pairs):
        S[r, i], S[r, j] = 1.0, -1.0
    qgrid = np.linspace(0.0, 1.0, grid)
    c = np.zeros(nv + 1)
    c[-1] = -1.0
    for _ in range(20):
        Pc = np.hstack([probs(T, a, b, qgrid), np.zeros((qgrid.size, 1))])
        cons = [optimize.LinearConstraint(Pc, -np.inf, cap), optimize.LinearConstraint(S, 0.0, 0.0),
                optimize.LinearConstraint(np.hstack([-A, np.ones((len(alts), 1))]), -np.inf, 0.0)]
        res = optimize.milp(c, constraints=cons, integrality=np.r_[np.ones(nv), 0.0],
                            bounds=optimize.Bounds(np.zeros(nv + 1), np.r_[np.ones(nv), 2.0]),
                            options={"time_limit": time_limit})  # fmt: skip
        if res.x is None:
            raise RuntimeError(f"milp failed: {res.message}")
        phi = res.x[:nv] > 0.5
        fine = np.linspace(0.0, 1.0, 100_001)
        worst = fine[probs(T, a, b, fine) @ phi > cap + 1e-12]
        if worst.size == 0:
            return float((A @ phi).min()), phi, bool(res.status == 0)
        qgrid = np.unique(np.concatenate([qgrid, worst[:: max(1, worst.size // 50)]]))
    raise RuntimeError("the q grid did not converge")


def _swap_index(T: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    idx = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(a, b))}
    return np.array([idx[(int(y), int(x))] for x, y in zip(a, b)])


def power_section(Ts=(20, 50), alpha: float = 0.05, pops: tuple[str, ...] | None = None,
                  deltas: tuple[float, ...] | None = None) -> None:
    """Power of compare()'s score test (exact unconditional p) and of the paired t against the best valid
    non-randomised swap-invariant test, at the alternatives of ``benchmarks/calibration_compare_delta.py``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from calibration_compare_delta import DELTAS, POPULATIONS, reachable, trinomial_probs

    from tauk.stats.comparisons.score import score_pvalue

    print("# power (%) at the alternatives of calibration_compare_delta.py where d_t ∈ {−1, 0, 1}: exact sums;")
    print(f"# 'best valid': max power of a non-randomised swap-invariant test with type-I ≤ {alpha:.0%} at every null q")
    print("# (an integer programme per cell); score = compare()'s default, t = the paired t (type-I up to 5.74 %)")
    print(f"{'T':>3} {'n=k':>3} {'population':10} {'δ':>6} {'score':>7} {'t':>7} {'best valid':>10} {'score ÷ best':>12}")
    ratios = []
    uniform = {}
    for T in Ts:
        alts, envs, ratio_t = [], [], []
        a, b = outcomes(T)
        reg_s = np.array([score_pvalue(np.r_[np.ones(x), -np.ones(y), np.zeros(T - x - y)]) < alpha
                          for x, y in zip(a, b)])  # fmt: skip
        reg_t = t_test_region(T, a, b, alpha)
        fine = np.linspace(0.0, 1.0, 100_001)
        size_s = float((probs(T, a, b, fine) @ reg_s).max())
        print(f"# T = {T}: score test's max type-I over q ∈ [0, 1] = {100 * size_s:.2f} %; "
              f"paired t's = {100 * float((probs(T, a, b, fine) @ reg_t).max()):.2f} %")
        for k in (1, 4):
            for pop in pops or tuple(POPULATIONS):
                for delta in deltas or DELTAS:
                    if delta == 0 or not reachable(pop, k, delta):
                        continue
                    pp, pm = trinomial_probs(pop, k, delta)
                    logc = special.gammaln(T + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) \
                        - special.gammaln(T - a - b + 1)  # fmt: skip
                    alt = np.exp(logc + a * np.log(pp) + b * np.log(pm) + (T - a - b) * np.log1p(-pp - pm))
                    best, _, optimal = best_power(T, pp, pm, alpha, grid=801, time_limit=60)
                    ps, pt = float(alt @ reg_s), float(alt @ reg_t)
                    ratios.append(ps / best)
                    alts.append(alt)
                    envs.append(best)
                    ratio_t.append(ps / best)
                    print(f"{T:3d} {k:3d} {pop:10} {delta:+6.2f} {100 * ps:7.2f} {100 * pt:7.2f} {100 * best:10.2f}"
                          f"{'' if optimal else '*'} {ps / best:12.3f}")
        u, _, opt = best_uniform_ratio(T, alts, envs, alpha, grid=801, time_limit=300)
        uniform[T] = u
        print(f"# T = {T}: ONE valid test's best min over these {len(alts)} cells of power ÷ the cell's best = {u:.3f}"
              f"{'' if opt else ' (time limit: best found)'}; the score test's min = {min(ratio_t):.3f}")
    print(f"score ÷ best valid: min {min(ratios):.3f} over {len(ratios)} cells (* = integer programme stopped at its "
          "time limit: the best found, a lower bound on the optimum)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--T", type=int, default=20)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--power", default=None, help="comma-separated T's: power of the score test against the best "
                    "valid test at calibration_compare_delta.py's alternatives (instead of the type-I table)")
    ap.add_argument("--pops", default=None, help="--power: comma-separated populations (default all)")
    ap.add_argument("--deltas", default=None, help="--power: comma-separated δ's (default ±0.07, ±0.15)")
    args = ap.parse_args(argv)
    if args.power:
        print(f"# benchmarks/paired_bound.py --power {args.power}" + (f" --pops {args.pops}" if args.pops else "")
              + (f" --deltas {args.deltas}" if args.deltas else ""))  # fmt: skip
        power_section(tuple(int(x) for x in args.power.split(",")), args.alpha,
                      tuple(args.pops.split(",")) if args.pops else None,
                      tuple(float(x) for x in args.deltas.split(",")) if args.deltas else None)  # fmt: skip
        return
    T, alpha = args.T, args.alpha
    a, b = outcomes(T)
    cells = {f"n=1 k=1 {p}": q for p, q in cell_qs(1).items()}
    cells.update({f"n=4 k=4 {p}": q for p, q in cell_qs(4).items()})
    t_reg = t_test_region(T, a, b, alpha)
    fine = np.linspace(0.0, 1.0, 100_001)
    r_t = probs(T, a, b, fine) @ t_reg
    print(f"# T = {T} tasks, d_t ∈ {{−1, 0, 1}}, α = {alpha}: type-I error R(q) of non-randomised tests, exact sums")
    print(f"# paired t test: max over q ∈ [0, 1] of R(q) = {100 * r_t.max():.2f} % (at q = {fine[r_t.argmax()]:.3f})")
    print()
    print(f"{'cell':24s} {'q':>6s} {'m̄ = qT':>7s} {'paired t':>9s}   best test for this cell alone: cap 5 % / 6 %"
          "   (not swap-invariant: 5 % / 6 %)")  # fmt: skip
    for name, q in cells.items():
        v5, _, _ = best_test(T, [q], alpha)
        v6, _, _ = best_test(T, [q], 0.06)
        a5, _, _ = best_test(T, [q], alpha, symmetric=False)
        a6, _, _ = best_test(T, [q], 0.06, symmetric=False)
        rt = float(probs(T, a, b, np.array([q]))[0] @ t_reg)
        print(f"{name:24s} {q:6.3f} {q * T:7.1f} {100 * rt:8.2f}%   {100 * v5:6.2f}% / {100 * v6:.2f}%"
              f"{'':32s}({100 * a5:.2f}% / {100 * a6:.2f}%)")  # fmt: skip
    print()
    for cap in (alpha, 0.06):
        v, phi, _ = best_test(T, list(cells.values()), cap)
        rs = probs(T, a, b, np.array(list(cells.values()))) @ phi
        worst = min(zip(rs, cells), key=lambda x: x[0])
        print(f"every cell at once, R(q) ≤ {100 * cap:.0f} % for every q: best min over cells = {100 * v:.2f} % "
              f"(lowest cell: {worst[1]}); the test rejects {int(phi.sum())} of {phi.size} outcomes")  # fmt: skip
    print()
    print("Reading: a cell whose best figure is below 4 % cannot reach 4 % with any non-randomised test that treats the")
    print("two agents alike (rejects (m⁺, m⁻) exactly when it rejects (m⁻, m⁺): compare(a, b) and compare(b, a) agree)")
    print("and keeps its type-I error ≤ the cap at every null q; 'every cell at once' is the figure one such test can")
    print("reach in all ten. The bracketed figures drop the swap invariance: such a test rejects, say, a 3–0 sweep by A")
    print("but not by B, so which agent is named first acts as the coin of a randomised test.")


if __name__ == "__main__":
    main()

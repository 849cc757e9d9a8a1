"""Calibration of the run-effect and task-family adjustments (tauk.stats.dependence), through the public API.

Every replication is one benchmark: T tasks with success chances p_t drawn from a population
(:data:`POPULATIONS`: five, four of them ``benchmarks/calibration.py``'s), each task run in R passes (the trial
indices of one run); pass r shifts every task's logit by b_r ~ N(0, σ²) (the run effect), success ~
Bernoulli(expit(logit p_t + b_r)). The target of a summary's population interval is pass^k for a new draw of tasks
*and* passes, E_p[(E_b expit(logit p + b))^k] (quadrature). Sections:

* ``runs`` — :func:`tauk.stats.summarize` (``by="rep"``, every replication a run): population coverage and mean
  width at k = 1 and k = R with ``run_effects="adjust"`` (the default) and ``"report"`` (the intervals without
  the run variance), how often Cochran's Q rejects at 5 % and how often the interval was widened: every population
  × T ∈ {20, 50} × R ∈ {4, 8} × σ ∈ {0, 0.2, 0.5} (``--pops``, ``--grid``, ``--run-sds`` narrow it);
* ``paired`` — :func:`tauk.stats.compare` of two agents with the same p_t and independent run effects (a true null
  δ = 0): type-I error of the headline p-value at α = 0.05 with and without the adjustment, k = 1 and k = R, the
  same cells;
* ``clusters`` — G families of m tasks, μ_t = m + u_g + v_t with intra-cluster correlation ρ = var u / s² on the
  logit scale ((G, m, ρ) ∈ {(10, 2, 0), (10, 2, 0.3), (10, 5, 0.3)}), R = 4, no run effect: :func:`tauk.stats.summarize` population coverage with
  ``cluster=`` the family column and without, and :func:`tauk.stats.compare` coverage of a true difference made by
  a per-family logit shift of agent A (a_g ~ N(0, 0.5²));
* ``overall`` — :func:`tauk.stats.overall` over two setups (T = 20 and 50 tasks): coverage of the mean of the two
  population values.

Deterministic for a seed (each cell its own stream). Run: ``nice -n 10 python benchmarks/dependence_calibration.py
[--reps 150] [--paired-reps 200] [--run-sds 0,0.2,0.5] [--pops 'B(2,2);B(0.7,1.5)'] [--grid 20x4,50x8] [--seed 0]
[--sections runs,paired,clusters,overall] [--out FILE]``. ``benchmarks/results/dependence_calibration.txt`` holds
the recorded runs. Why the adjustment is what it is (the trade-off between its cost without a run effect and its
coverage with one): ``benchmarks/run_effect_rules.py`` and ``benchmarks/run_effect_bound.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
import zlib

import numpy as np
import polars as pl
from scipy import special, stats

import tauk

LEVEL = 0.95
POPS = {"N(0.3, 1.5²)": (0.3, 1.5), "N(1.2, 1.0²)": (1.2, 1.0)}


def _logit_normal(m: float, s: float):
    x, w = np.polynomial.hermite_e.hermegauss(200)
    return (lambda rng, size: special.expit(m + s * rng.standard_normal(size)),
            lambda: (special.expit(m + s * x), w / w.sum()))  # fmt: skip


def _beta(a: float, b: float, zero: float = 0.0):
    u = (np.arange(20000) + 0.5) / 20000

    def sample(rng, size):
        p = rng.beta(a, b, size)
        return np.where(rng.random(size) < zero, 0.0, p) if zero else p

    def nodes():
        p = stats.beta.ppf(u, a, b)
        w = np.full(u.size, (1 - zero) / u.size)
        return (np.append(p, 0.0), np.append(w, zero)) if zero else (p, w)

    return sample, nodes


POPULATIONS = {"LN(0.3,1.5)": _logit_normal(0.3, 1.5), "B(0.7,1.5)": _beta(0.7, 1.5), "B(2,2)": _beta(2, 2),
               "LN(-0.5,2)": _logit_normal(-0.5, 2.0), "0.2·δ0+B(2,2)": _beta(2, 2, zero=0.2)}  # fmt: skip
"""The populations of task success chances p_t (a run effect shifts logit p_t): the first is the one of the earlier
recorded runs; the next four are ``benchmarks/calibration.py``'s Beta(0.7, 1.5), Beta(2, 2), logit-normal
(−0.5, 2) and a 20 % point mass at 0 with Beta(2, 2). Each: a sampler and (nodes, weights) for the truth."""


def truth_of(pop: str, sd_run: float, k: int) -> float:
    """E_p[(E_b expit(logit p + b))^k], p from ``pop``, b ~ N(0, sd_run²) (Gauss–Hermite in b, 80 nodes)."""
    p, wp = POPULATIONS[pop][1]()
    if sd_run:
        x, w = np.polynomial.hermite_e.hermegauss(80)
        w = w / w.sum()
        lp = special.logit(np.clip(p, 1e-300, 1 - 1e-16))
        p = np.where(p > 0, (special.expit(lp[:, None] + sd_run * x[None, :]) * w[None, :]).sum(1), 0.0)
    return float(np.sum(wp * p**k))


def truth(m: float, s: float, sd_run: float, k: int) -> float:
    """E_μ[(E_b expit(μ + b))^k], μ ~ N(m, s²), b ~ N(0, sd_run²)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    mu = m + s * x
    pbar = (special.expit(mu[:, None] + sd_run * x[None, :]) * w[None, :]).sum(1) if sd_run else special.expit(mu)
    return float(np.sum(w * pbar**k))


def cell_rng(seed: int, label: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(label.encode())]))


def frame_of(Y: np.ndarray, agent: str = "A", fam: np.ndarray | None = None) -> pl.DataFrame:
    """(reps × T × R) successes → a trials frame, one run per replication, the trial index = the pass."""
    reps, T, R = Y.shape
    rep = np.repeat(np.arange(reps), T * R)
    task = np.tile(np.repeat(np.arange(T), R), reps)
    trial = np.tile(np.arange(R), reps * T)
    cols = {"run_id": [f"{agent}{i}" for i in rep], "rep": rep, "agent": [agent] * rep.size,
            "task_id": task.astype(str), "trial": trial, "reward": Y.reshape(-1).astype(np.float64),
            "termination_reason": ["user_stop"] * rep.size}  # fmt: skip
    if fam is not None:
        cols["fam"] = fam.reshape(reps, T)[:, :, None].repeat(R, axis=2).reshape(-1).astype(str)
    return pl.DataFrame(cols)


def draw(rng, reps, T, R, m, s, sd_run, icc=0.0, G=None, shift=None):
    """Successes (reps × T × R) and the family of each task (reps × T) when G is given."""
    if G is None:
        mu = m + s * rng.standard_normal((reps, T))
        fam = None
    else:
        fam = np.tile(np.repeat(np.arange(G), T // G), (reps, 1))
        u = rng.standard_normal((reps, G)) * s * np.sqrt(icc)
        mu = m + np.take_along_axis(u, fam, axis=1) + s * np.sqrt(1 - icc) * rng.standard_normal((reps, T))
    if shift is not None:
        mu = mu + np.take_along_axis(shift, fam, axis=1)
    b = sd_run * rng.standard_normal((reps, 1, R))
    return (rng.uniform(size=(reps, T, R)) < special.expit(mu[:, :, None] + b)).astype(np.int8), fam


def summary_cov(frame, ks, target, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = tauk.stats.summarize(frame, by="rep", k=list(ks), **kw)
    f = s.pass_hat_k
    out = {}
    for k in ks:
        g = f.filter(pl.col("k") == k)
        lo, hi = g["ci_low"].to_numpy(), g["ci_high"].to_numpy()
        out[k] = (float(np.mean((lo <= target[k]) & (target[k] <= hi))), float(np.mean(hi - lo)))
    return out, s


def mc(p, n):
    return f"{100 * p:5.1f}±{100 * np.sqrt(max(p * (1 - p), 1e-9) / n):.1f}"


RUN_SDS = (0.0, 0.2, 0.5)
GRID_POPS = tuple(POPULATIONS)
GRID_TR = ((20, 4), (20, 8), (50, 4), (50, 8))


def draw_pop(rng, reps, T, R, pop, sd_run):
    """Successes (reps × T × R): p_t from ``pop``, pass r shifts every logit by b_r ~ N(0, sd_run²); and logit p."""
    p = POPULATIONS[pop][0](rng, (reps, T))
    lp = special.logit(np.clip(p, 1e-300, 1 - 1e-16))
    b = sd_run * rng.standard_normal((reps, 1, R))
    return (rng.uniform(size=(reps, T, R)) < special.expit(lp[:, :, None] + b)).astype(np.int8), lp


def _span(xs, scale=100.0, fmt=".1f"):
    return f"{scale * min(xs):{fmt}}–{scale * max(xs):{fmt}}"


def section_runs(reps, seed, out):
    out("## runs: summarize, population coverage / mean width, adjusted (default) vs report-only (as before)")
    out(f"{'population':14} {'T':>3} {'R':>2} {'σ_run':>5} {'k':>2} {'cov adj':>10} {'cov before':>10} "
        f"{'width adj':>9} {'width before':>12} {'ratio':>6} {'Q rejects':>9} {'widened':>7}")
    rows = []
    for pop in GRID_POPS:
        for T, R in GRID_TR:
            for sd in RUN_SDS:
                label = f"runs {pop} T={T} R={R} sd={sd}"
                rng = cell_rng(seed, label)
                Y, _ = draw_pop(rng, reps, T, R, pop, sd)
                frame = frame_of(Y)
                ks = (1, R)
                target = {k: truth_of(pop, sd, k) for k in ks}
                adj, summ = summary_cov(frame, ks, target)
                old, _ = summary_cov(frame, ks, target, run_effects="report")
                rej = float(np.mean(summ.groups["run_effect_p"].fill_null(1.0).to_numpy() < 0.05))
                for k in ks:
                    g = summ.pass_hat_k.filter(pl.col("k") == k)
                    wid = float(g["adjusted_for"].str.contains("run variance").fill_null(False).mean())
                    ratio = adj[k][1] / old[k][1]
                    out(f"{pop:14} {T:>3} {R:>2} {sd:>5} {k:>2} {mc(adj[k][0], reps):>10} {mc(old[k][0], reps):>10} "
                        f"{adj[k][1]:9.4f} {old[k][1]:12.4f} {ratio:6.3f} {100 * rej:8.1f}% {100 * wid:6.1f}%")
                    rows.append((pop, T, R, sd, k, adj[k][0], old[k][0], ratio))
    for sd in sorted({r[3] for r in rows} - {0.0}):
        for R in sorted({r[2] for r in rows}):
            sel = [r for r in rows if r[3] == sd and r[2] == R]
            out(f"σ_run = {sd}, R = {R}: adjusted coverage {_span([r[5] for r in sel])} % "
                f"(before {_span([r[6] for r in sel])} %), {sum(r[5] < 0.93 for r in sel)} of {len(sel)} cells "
                f"below 93 %")
    for R in sorted({r[2] for r in rows}):
        sel = [r for r in rows if r[3] == 0.0 and r[2] == R]
        if sel:
            out(f"σ_run = 0, R = {R}: coverage moves by {100 * min(r[5] - r[6] for r in sel):+.1f} … "
                f"{100 * max(r[5] - r[6] for r in sel):+.1f} points, width ×{min(r[7] for r in sel):.3f} … "
                f"×{max(r[7] for r in sel):.3f} (mean ×{np.mean([r[7] for r in sel]):.3f})")
    out("")


def section_paired(reps, seed, out):
    out("## paired: compare() type-I error at α = 0.05 (same p_t, independent run effects per agent; δ = 0)")
    out(f"{'population':14} {'T':>3} {'R':>2} {'σ_run':>5} {'k':>2} {'adjusted':>10} {'before':>10} {'width ratio':>11}")
    rows = []
    for pop in GRID_POPS:
        for T, R in GRID_TR:
            for sd in RUN_SDS:
                label = f"paired {pop} T={T} R={R} sd={sd}"
                rng = cell_rng(seed, label)
                _, lp = draw_pop(rng, reps, T, R, pop, 0.0)
                ys = []
                for _ in range(2):
                    b = sd * rng.standard_normal((reps, 1, R))
                    ys.append((rng.uniform(size=(reps, T, R)) < special.expit(lp[:, :, None] + b)).astype(np.int8))
                frame = pl.concat([frame_of(ys[0], "A"), frame_of(ys[1], "B")])
                for k in (1, R):
                    res = {}
                    for how in ("adjust", "report"):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            c = tauk.stats.compare(frame, "A", "B", by="rep", k=k, permutations=100,
                                                   run_effects=how).frame  # fmt: skip
                        p = c["p_value"].fill_null(1.0).to_numpy()
                        res[how] = (float(np.mean(p < 0.05)), float((c["ci_high"] - c["ci_low"]).mean()))
                    ratio = res["adjust"][1] / res["report"][1]
                    out(f"{pop:14} {T:>3} {R:>2} {sd:>5} {k:>2} {mc(res['adjust'][0], reps):>10} "
                        f"{mc(res['report'][0], reps):>10} {ratio:11.3f}")
                    rows.append((sd, R, res["adjust"][0], res["report"][0], ratio))
    for sd in RUN_SDS:
        for R in sorted({r[1] for r in rows}):
            sel = [r for r in rows if r[0] == sd and r[1] == R]
            if not sel:
                continue
            out(f"σ_run = {sd}, R = {R}: type-I adjusted {_span([r[2] for r in sel])} % (before "
                f"{_span([r[3] for r in sel])} %), {sum(r[2] > 0.06 for r in sel)} of {len(sel)} cells above 6 %, "
                f"interval width ×{min(r[4] for r in sel):.3f} … ×{max(r[4] for r in sel):.3f} "
                f"(mean ×{np.mean([r[4] for r in sel]):.3f})")
    out("")


def section_clusters(reps, seed, out):
    out("## clusters: G families of m tasks, ICC ρ on the logit scale, R = 4 passes, no run effect")
    out(f"{'what':9} {'population':14} {'G':>3} {'m':>2} {'ρ':>4} {'cov cluster=':>12} {'cov without':>11} "
        f"{'width ratio':>11}")
    rows = []
    for pop, (m, s) in list(POPS.items())[:1]:
        for G, mm, icc in ((10, 2, 0.0), (10, 2, 0.3), (10, 5, 0.3)):
            if True:
                T = G * mm
                label = f"clusters {pop} G={G} m={mm} icc={icc}"
                rng = cell_rng(seed, label)
                Y, fam = draw(rng, reps, T, 4, m, s, 0.0, icc=icc, G=G)
                frame = frame_of(Y, fam=fam)
                target = {1: truth(m, s, 0.0, 1)}
                a, _ = summary_cov(frame, (1,), target, cluster="fam")
                b, _ = summary_cov(frame, (1,), target)
                out(f"{'summary':9} {pop:14} {G:>3} {mm:>2} {icc:>4} {mc(a[1][0], reps):>12} {mc(b[1][0], reps):>11} "
                    f"{a[1][1] / b[1][1]:11.3f}")
                rows.append(("summary", G, mm, icc, a[1][0], b[1][0]))
                # comparison: agent A shifted per family, B not; the same tasks
                shift = 0.5 * rng.standard_normal((reps, G))
                fam_t = np.tile(np.repeat(np.arange(G), mm), (reps, 1))
                u = rng.standard_normal((reps, G)) * s * np.sqrt(icc)
                mu = m + np.take_along_axis(u, fam_t, axis=1) + s * np.sqrt(1 - icc) * rng.standard_normal((reps, T))
                pa = special.expit(mu + np.take_along_axis(shift, fam_t, axis=1))
                pb = special.expit(mu)
                ya = (rng.uniform(size=(reps, T, 4)) < pa[:, :, None]).astype(np.int8)
                yb = (rng.uniform(size=(reps, T, 4)) < pb[:, :, None]).astype(np.int8)
                frame = pl.concat([frame_of(ya, "A", fam_t), frame_of(yb, "B", fam_t)])
                # the population difference: E over families and tasks (the shift's law is N(0, 0.5²))
                x, w = np.polynomial.hermite_e.hermegauss(80)
                w = w / w.sum()
                mu_g = m + s * x
                delta = float(np.sum(w[:, None] * w[None, :] * special.expit(mu_g[:, None] + 0.5 * x[None, :])) -
                              np.sum(w * special.expit(mu_g)))  # fmt: skip
                cov = {}
                for how in ("fam", None):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        c = tauk.stats.compare(frame, "A", "B", by="rep", k=1, permutations=100, cluster=how).frame
                    lo, hi = c["ci_low"].to_numpy(), c["ci_high"].to_numpy()
                    cov[how] = (float(np.mean((lo <= delta) & (delta <= hi))), float(np.mean(hi - lo)))
                out(f"{'compare':9} {pop:14} {G:>3} {mm:>2} {icc:>4} {mc(cov['fam'][0], reps):>12} "
                    f"{mc(cov[None][0], reps):>11} {cov['fam'][1] / cov[None][1]:11.3f}")
                rows.append(("compare", G, mm, icc, cov["fam"][0], cov[None][0]))
    for what in ("summary", "compare"):
        sel = [r for r in rows if r[0] == what and r[3] == 0.3]
        out(f"{what}, ρ = 0.3: coverage with cluster= {100 * min(r[4] for r in sel):.1f}–"
            f"{100 * max(r[4] for r in sel):.1f} % (without {100 * min(r[5] for r in sel):.1f}–"
            f"{100 * max(r[5] for r in sel):.1f} %)")
    out("")


def section_overall(reps, seed, out):
    out("## overall(): the mean over two setups (T = 20 and 50, R = 4, no run effect), coverage of the mean of the "
        "two population pass^k")
    out(f"{'populations':30} {'k':>2} {'coverage':>10} {'mean width':>10}")
    pops = list(POPS.items())
    rng = cell_rng(seed, "overall")
    parts = []
    for i, (T, (_, (m, s))) in enumerate(zip((20, 50), pops)):
        Y, _ = draw(rng, reps, T, 4, m, s, 0.0)
        f = frame_of(Y).with_columns(pl.lit(f"d{i}").alias("domain"), pl.lit(f"setup{i}").alias("setup"),
                                     pl.lit("A").alias("agent"), pl.format("{}-{}", pl.col("run_id"), pl.lit(i))
                                     .alias("run_id"))  # fmt: skip
        parts.append(f)
    frame = pl.concat(parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o = tauk.stats.overall(tauk.stats.summarize(frame, by=("rep", "setup"), k=[1, 4])).to_frame()
    for k in (1, 4):
        target = np.mean([truth(m, s, 0.0, k) for _, (m, s) in pops])
        g = o.filter(pl.col("k") == k)
        lo, hi = g["ci_low"].to_numpy(), g["ci_high"].to_numpy()
        cov = float(np.mean((lo <= target) & (target <= hi)))
        out(f"{' + '.join(p for p, _ in pops):30} {k:>2} {mc(cov, reps):>10} {float(np.mean(hi - lo)):10.4f}")
    out("")


class Tee:
    """``out(line)`` prints a line and keeps it; ``out.save(path)`` writes the kept lines (a results file), if a path
    is given. Shared by the run-effect benchmarks."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, s: str = "") -> None:
        print(s, flush=True)
        self.lines.append(s)

    def save(self, path: str | None) -> None:
        if path:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(self.lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=150, help="replications a cell (runs, clusters, overall)")
    ap.add_argument("--paired-reps", type=int, default=200, help="replications a cell of the paired section")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sections", default="runs,paired,clusters,overall")
    ap.add_argument("--run-sds", default="0,0.2,0.5", help="σ_run values of the runs and paired sections")
    ap.add_argument("--pops", default=None, help="';'-separated populations of the runs and paired sections "
                    f"(default all: {'; '.join(POPULATIONS)})")
    ap.add_argument("--grid", default=None, help="T×R cells of the runs and paired sections, e.g. '20x4,50x8' "
                    "(default 20x4,20x8,50x4,50x8)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    global RUN_SDS, GRID_POPS, GRID_TR
    RUN_SDS = tuple(float(x) for x in args.run_sds.split(","))
    if args.pops:
        GRID_POPS = tuple(args.pops.split(";"))
    if args.grid:
        GRID_TR = tuple(tuple(int(v) for v in c.split("x")) for c in args.grid.split(","))
    out = Tee()

    out(f"# tauk.stats.dependence calibration: {args.reps} replications a cell ({args.paired_reps} in the paired "
        f"section), seed {args.seed}, level {LEVEL}, sections {args.sections}, run SDs {args.run_sds}, populations "
        f"{'; '.join(GRID_POPS)}, T×R {', '.join(f'{t}x{r}' for t, r in GRID_TR)}")
    out("(coverage ± Monte-Carlo SE, in %; 'before' = run_effects='report' / no cluster=, i.e. the intervals as they "
        "were)")
    out("")
    t0 = time.time()
    for sec in args.sections.split(","):
        reps = args.paired_reps if sec == "paired" else args.reps
        {"runs": section_runs, "paired": section_paired, "clusters": section_clusters,
         "overall": section_overall}[sec](reps, args.seed, out)  # fmt: skip
    out(f"total {time.time() - t0:.0f} s")
    out.save(args.out)


if __name__ == "__main__":
    sys.exit(main())

"""Calibration of the run-effect and task-family adjustments (tauk.stats.dependence), through the public API.

Every replication is one benchmark: T tasks, logit μ_t ~ N(m, s²), each task run in R passes (the trial indices of
one run); pass r shifts every task's logit by b_r ~ N(0, σ²) (the run effect), success ~ Bernoulli(expit(μ_t + b_r)).
The target of a summary's population interval is pass^k for a new draw of tasks *and* passes,
E_μ[(E_b expit(μ + b))^k] (Gauss–Hermite, 80 × 80 nodes). Sections:

* ``runs`` — :func:`tauk.stats.summarize` (``by="run_id"``, every replication a run): population coverage and mean
  width at k = 1 and k = R with ``run_effects="adjust"`` (the default) and ``"report"`` (the intervals as before),
  and how often Cochran's Q rejects at 5 %: σ ∈ {0, 0.5}, T ∈ {20, 50}, R = 4 passes,
  the first population (the recorded grid is what 2 shared cores allowed; ``POPS`` holds a second one);
* ``paired`` — :func:`tauk.stats.compare` of two agents with the same μ_t and independent run effects (a true null
  δ = 0): type-I error of the headline p-value at α = 0.05 with and without the adjustment, k = 1 and k = R, the
  same cells;
* ``clusters`` — G families of m tasks, μ_t = m + u_g + v_t with intra-cluster correlation ρ = var u / s² on the
  logit scale ((G, m, ρ) ∈ {(10, 2, 0), (10, 2, 0.3), (10, 5, 0.3)}), R = 4, no run effect: :func:`tauk.stats.summarize` population coverage with
  ``cluster=`` the family column and without, and :func:`tauk.stats.compare` coverage of a true difference made by
  a per-family logit shift of agent A (a_g ~ N(0, 0.5²));
* ``overall`` — :func:`tauk.stats.overall` over two setups (T = 20 and 50 tasks): coverage of the mean of the two
  population values.

Deterministic for a seed (each cell its own stream). Run: ``nice -n 10 python benchmarks/dependence_calibration.py
[--reps 150] [--paired-reps 200] [--run-sds 0,0.5] [--seed 0] [--sections runs,paired,clusters,overall] [--out FILE]``.
``benchmarks/results/dependence_calibration.txt`` is the recorded run.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
import zlib

import numpy as np
import polars as pl
from scipy import special

import tauk

LEVEL = 0.95
POPS = {"N(0.3, 1.5²)": (0.3, 1.5), "N(1.2, 1.0²)": (1.2, 1.0)}


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


RUN_SDS = (0.0, 0.5)


def section_runs(reps, seed, out):
    out("## runs: summarize, population coverage / mean width, adjusted (default) vs report-only (as before)")
    out(f"{'population':14} {'T':>3} {'R':>2} {'σ_run':>5} {'k':>2} {'cov adj':>10} {'cov before':>10} "
        f"{'width adj':>9} {'width before':>12} {'ratio':>6} {'Q rejects':>9}")
    rows = []
    for pop, (m, s) in list(POPS.items())[:1]:
        for T, R in ((20, 4), (50, 4)):
            for sd in RUN_SDS:
                label = f"runs {pop} T={T} R={R} sd={sd}"
                rng = cell_rng(seed, label)
                Y, _ = draw(rng, reps, T, R, m, s, sd)
                frame = frame_of(Y)
                ks = (1, R)
                target = {k: truth(m, s, sd, k) for k in ks}
                adj, summ = summary_cov(frame, ks, target)
                old, _ = summary_cov(frame, ks, target, run_effects="report")
                rej = float(np.mean(summ.groups["run_effect_p"].fill_null(1.0).to_numpy() < 0.05))
                for k in ks:
                    ratio = adj[k][1] / old[k][1]
                    out(f"{pop:14} {T:>3} {R:>2} {sd:>5} {k:>2} {mc(adj[k][0], reps):>10} {mc(old[k][0], reps):>10} "
                        f"{adj[k][1]:9.4f} {old[k][1]:12.4f} {ratio:6.3f} {100 * rej:8.1f}%")
                    rows.append((pop, T, R, sd, k, adj[k][0], old[k][0], ratio))
    for sd in sorted({r[3] for r in rows} - {0.0}):
        sel = [r for r in rows if r[3] == sd]
        out(f"σ_run = {sd}: adjusted coverage {100 * min(r[5] for r in sel):.1f}–{100 * max(r[5] for r in sel):.1f} % "
            f"(before {100 * min(r[6] for r in sel):.1f}–{100 * max(r[6] for r in sel):.1f} %)")
    sel = [r for r in rows if r[3] == 0.0]
    if sel:
        out(f"σ_run = 0: coverage moves by {100 * min(r[5] - r[6] for r in sel):+.1f} … "
            f"{100 * max(r[5] - r[6] for r in sel):+.1f} points, width ×{min(r[7] for r in sel):.3f} … "
            f"×{max(r[7] for r in sel):.3f}")
    out("")


def section_paired(reps, seed, out):
    out("## paired: compare() type-I error at α = 0.05 (same μ_t, independent run effects per agent; δ = 0)")
    out(f"{'population':14} {'T':>3} {'R':>2} {'σ_run':>5} {'k':>2} {'adjusted':>10} {'before':>10} {'width ratio':>11}")
    rows = []
    for pop, (m, s) in list(POPS.items())[:1]:
        for T, R in ((20, 4), (50, 4)):
            for sd in (0.0, 0.2, 0.5):
                if sd == 0.2 and T == 20:
                    continue
                label = f"paired {pop} T={T} R={R} sd={sd}"
                rng = cell_rng(seed, label)
                mu = m + s * rng.standard_normal((reps, T))
                ys = []
                for _ in range(2):
                    b = sd * rng.standard_normal((reps, 1, R))
                    ys.append((rng.uniform(size=(reps, T, R)) < special.expit(mu[:, :, None] + b)).astype(np.int8))
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
                    rows.append((sd, res["adjust"][0], res["report"][0], ratio))
    for sd in (0.0, 0.2, 0.5):
        sel = [r for r in rows if r[0] == sd]
        out(f"σ_run = {sd}: type-I adjusted {100 * min(r[1] for r in sel):.1f}–{100 * max(r[1] for r in sel):.1f} % "
            f"(before {100 * min(r[2] for r in sel):.1f}–{100 * max(r[2] for r in sel):.1f} %), interval width "
            f"×{min(r[3] for r in sel):.3f} … ×{max(r[3] for r in sel):.3f}")
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=150, help="replications a cell (runs, clusters, overall)")
    ap.add_argument("--paired-reps", type=int, default=200, help="replications a cell of the paired section")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sections", default="runs,paired,clusters,overall")
    ap.add_argument("--run-sds", default="0,0.5", help="σ_run values of the runs section")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    global RUN_SDS
    RUN_SDS = tuple(float(x) for x in args.run_sds.split(","))
    lines = []

    def out(s=""):
        print(s, flush=True)
        lines.append(s)

    out(f"# tauk.stats.dependence calibration: {args.reps} replications a cell ({args.paired_reps} in the paired "
        f"section), seed {args.seed}, level {LEVEL}, sections {args.sections}, run SDs {args.run_sds}")
    out("(coverage ± Monte-Carlo SE, in %; 'before' = run_effects='report' / no cluster=, i.e. the intervals as they "
        "were)")
    out("")
    t0 = time.time()
    for sec in args.sections.split(","):
        reps = args.paired_reps if sec == "paired" else args.reps
        {"runs": section_runs, "paired": section_paired, "clusters": section_clusters,
         "overall": section_overall}[sec](reps, args.seed, out)  # fmt: skip
    out(f"total {time.time() - t0:.0f} s")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())

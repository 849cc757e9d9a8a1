"""Where compare() adjusts for a run effect, is its headline interval ever narrower than the report-only one?

Two agents with the same task success chances and no run effect (δ = 0, σ_run = 0): wherever either agent's
σ̃²_run > 0 the headline interval becomes the t interval with the run parts added
(:func:`tauk.stats.dependence.adjust.comparison_dependence`), replacing the report-only interval (the score
interval where per-task differences are ternary, e.g. k = n). Printed per cell: the report-only interval method,
the share of benchmarks adjusted, the mean width ratio adjusted / report-only among them, and the share of them
where the adjusted interval is the narrower. Run: ``nice -n 5 python benchmarks/run_effect_compare_width.py
[--reps 300] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
import polars as pl
from scipy import special

import tauk

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from dependence_calibration import Tee, cell_rng, draw_pop, frame_of  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pop", default="0.2·δ0+B(2,2)")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    out = Tee()

    out(f"# compare(): adjusted vs report-only headline interval without a run effect, {args.pop}, {args.reps} "
        f"benchmarks a cell, seed {args.seed}")
    out(f"{'T':>3} {'R':>2} {'k':>2} {'report method':>22} {'adjusted':>8} {'width ratio':>11} {'narrower':>8}")
    for T in (20, 50):
        for R in (4, 8):
            rng = cell_rng(args.seed, f"cw {args.pop} {T} {R}")
            _, lp = draw_pop(rng, args.reps, T, R, args.pop, 0.0)
            ys = [(rng.uniform(size=(args.reps, T, R)) < special.expit(lp[:, :, None])).astype(np.int8)
                  for _ in range(2)]  # fmt: skip
            fr = pl.concat([frame_of(ys[0], "A"), frame_of(ys[1], "B")])
            for k in (1, R):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    a = tauk.stats.compare(fr, "A", "B", by="rep", k=k, permutations=100).frame.sort("rep")
                    r = tauk.stats.compare(fr, "A", "B", by="rep", k=k, permutations=100,
                                           run_effects="report").frame.sort("rep")  # fmt: skip
                wa = (a["ci_high"] - a["ci_low"]).to_numpy()
                wr = (r["ci_high"] - r["ci_low"]).to_numpy()
                adj = a["adjusted_for"].is_not_null().to_numpy()
                meth = ", ".join(sorted(set(r["interval_method"].drop_nulls().to_list())))
                ratio = float(np.mean(wa[adj] / wr[adj])) if adj.any() else float("nan")
                nar = float(np.mean(wa[adj] < wr[adj] - 1e-12)) if adj.any() else float("nan")
                out(f"{T:>3} {R:>2} {k:>2} {meth[:22]:>22} {100 * adj.mean():7.1f}% {ratio:11.3f} {100 * nar:7.1f}%")
    out.save(args.out)


if __name__ == "__main__":
    sys.exit(main())

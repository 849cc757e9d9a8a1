"""``tauk report``: tables (Markdown, LaTeX) and figures (PDF, PNG) with an index README, in one folder."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from tauk.cli._common import (
    add_ci_args,
    add_infra_arg,
    add_load_args,
    check_out_dir,
    ci_level,
    load_inputs,
    parse_ks,
)
from tauk.conventions import CI_METHOD
from tauk.errors import TaukError
from tauk.report import DEFAULT_RESAMPLES


def cmd_report(args: argparse.Namespace) -> int:
    from tauk.report import write_report

    check_out_dir(args.out)
    ci = ci_level(args)
    formats = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - {"pdf", "png", "svg"})
    if unknown:  # before any input is loaded
        raise TaukError(f"--formats: unsupported figure format(s) {unknown}; choose from pdf, png, svg")
    res = load_inputs(args)
    paths = write_report(res, args.out, ci=ci, resamples=args.resamples, seed=args.seed, infra=args.infra,
                         method=args.method, leaderboard=args.leaderboard, formats=formats,
                         ks=parse_ks(args.k), figsize=args.figsize)  # fmt: skip
    out = Path(args.out)
    print(f"tauk report: wrote {len(paths)} files to {out}")
    for p in paths:
        with contextlib.suppress(ValueError):
            p = p.relative_to(out)
        print(f"  {p}")
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk report PATH... --out DIR [--ci] [--resamples] [--seed] [--infra] [--leaderboard DIR]``."""
    p = sub.add_parser(
        "report",
        help="write tables (Markdown, LaTeX) and figures (PDF, PNG) with an index README",
        description=(
            "Summary tables (agent × domain, agent, run), all-pairs comparisons (Holm) and every figure the data "
            f"supports, in one folder. Intervals: {CI_METHOD} by default (the beta-binomial model; comparisons: the "
            f"paired t test's interval); --method bca etc. for a task bootstrap of {DEFAULT_RESAMPLES} resamples."
        ),
    )
    add_load_args(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    add_ci_args(p, always="the report's comparisons and noise floors need a level")
    p.add_argument("--k", default=None, help="the k of pass^k in the tables, e.g. 1,2,4 or 1-4 (default: all)")
    add_infra_arg(p)
    p.add_argument("--leaderboard", metavar="DIR", default=None, help="leaderboard submissions to plot beside")
    p.add_argument("--formats", default="pdf,png", help="figure formats, comma-separated")
    p.add_argument("--figsize", default=None, choices=["single", "double"],
                   help="paper figure sizes: single column (3.3 in) or double column (7 in), text ≥ 7 pt at print "
                        "size (default: screen sizes)")  # fmt: skip
    p.set_defaults(func=cmd_report)
    return p

"""``tauk report``: tables (Markdown, LaTeX) and figures (PDF, PNG) with an index README, in one folder."""

from __future__ import annotations

import argparse
import contextlib
import sys
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
from tauk.cli._select import add_selection_args, selection_of
from tauk.conventions import CI_METHOD, MIN_SIMULATIONS, MIN_TASKS
from tauk.errors import TaukError
from tauk.report import DEFAULT_RESAMPLES


def cmd_report(args: argparse.Namespace) -> int:
    from tauk.report import build_report, write_report

    check_out_dir(args.out)
    ci = ci_level(args)
    formats = [f.strip().lower() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - {"pdf", "png", "svg"})
    if unknown:  # before any input is loaded
        raise TaukError(f"--formats: unsupported figure format(s) {unknown}; choose from pdf, png, svg")
    res = load_inputs(args)
    progress = False if args.quiet else None
    rep = build_report(res, ci=ci, resamples=args.resamples, seed=args.seed, infra=args.infra, method=args.method,
                       leaderboard=args.leaderboard, ks=parse_ks(args.k), figsize=args.figsize,
                       include_small=args.include_small, progress=progress)  # fmt: skip
    paths = write_report(res, args.out, formats=formats, progress=progress, report=rep)
    out = Path(args.out)
    if args.html:
        from tauk.report import write_html_report

        paths.append(write_html_report(res, out / "report.html", rep, **selection_of(args)))
    print(f"tauk report: wrote {len(paths)} files to {out}")
    for p in paths:
        with contextlib.suppress(ValueError):
            p = p.relative_to(out)
        print(f"  {p}")
    if rep.empty:  # written, but empty because of the options: say so, and exit 1
        what = "; ".join(f"{name} ({why})" for name, why in rep.empty)
        sys.stderr.write(f"tauk: error: {len(rep.empty)} of {len(rep.tables)} table(s) have no estimate because of "
                         f"the options (e.g. --k above the trials per task): {what}\n")  # fmt: skip
        return 1
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk report PATH... --out DIR [--ci] [--resamples] [--seed] [--infra] [--leaderboard DIR]``."""
    p = sub.add_parser(
        "report",
        help="write tables (Markdown, LaTeX) and figures (PDF, PNG) with an index README",
        description=(
            "Summary tables (agent × domain, agent, run), all-pairs comparisons (Holm) and every figure the data "
            f"supports, in one folder. Intervals: {CI_METHOD} by default (the beta-binomial model; comparisons: the "
            f"paired test's own interval); --method bca etc. for a task bootstrap of {DEFAULT_RESAMPLES} resamples. "
            "--html adds report.html: one self-contained page (tables, figures, notes and a viewer of the failed "
            "simulations, chosen by --failed / --all / --passed, --task, --termination) that opens with no server."
        ),
    )
    add_load_args(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    add_ci_args(p, always="the report's comparisons and noise floors need a level")
    p.add_argument("--k", default=None, help="the k of pass^k in the tables, e.g. 1,2,4 or 1-4 (default: all)")
    add_infra_arg(p)
    p.add_argument("--include-small", action="store_true",
                   help=f"keep setups under {MIN_SIMULATIONS} simulations or {MIN_TASKS} tasks in the headline's means "
                        "and ranking (default: left out and flagged)")  # fmt: skip
    p.add_argument("--leaderboard", metavar="DIR", default=None, help="leaderboard submissions to plot beside")
    p.add_argument("--formats", default="pdf,png", help="figure formats, comma-separated")
    p.add_argument("--figsize", default=None, choices=["single", "double"],
                   help="paper figure sizes: single column (3.3 in) or double column (7 in), text ≥ 7 pt at print "
                        "size (default: screen sizes)")  # fmt: skip
    p.add_argument("--html", action="store_true",
                   help="also write report.html: one self-contained page with a viewer of the failed simulations")
    add_selection_args(p, everything=True)
    p.set_defaults(func=cmd_report)
    return p

"""``tauk consistency``: run-to-run noise per group — per-trial pass^1, flip rate, ICC, single-run SD, noise floor.

    tauk consistency PATH... [--by agent,domain] [--infra drop|fail] [--alpha 0.05] [--flaky N]
                             [--format table|json|csv|markdown|latex]

``table`` prints the consistency table (and the most undecided tasks with ``--flaky N``); ``json`` the records of
:meth:`tauk.stats.ConsistencyResult.records` (one object per group, with its flaky tasks and ranking); ``csv`` and
``markdown`` one row per group (per-trial pass^1 joined with ``;``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import polars as pl

from tauk.cli._common import (
    add_format_args,
    add_infra_arg,
    add_load_args,
    add_pool_args,
    frame_table,
    load_inputs,
    print_json,
    split_list,
    write_table,
)
from tauk.conventions import CI_LEVEL


def flat_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """The result frame with list columns written as ``a;b;c`` text (for CSV and Markdown)."""
    lists = [c for c, t in frame.schema.items() if isinstance(t, pl.List)]
    return frame.with_columns(
        pl.col(c).list.eval(pl.element().round(6).cast(pl.String)).list.join(";").alias(c) for c in lists
    )


def cmd_consistency(args: argparse.Namespace) -> int:
    from tauk.stats import consistency

    res = load_inputs(args)
    by = split_list(args.by) or ["agent", "domain"]
    result = consistency(res, by=by, infra=args.infra, alpha=args.alpha, pool_setups=args.pool_setups)
    if args.format == "json":
        print_json(result.records())
    elif args.format == "csv":
        write_table(frame_table("consistency", flat_frame(result.to_frame()), keys=len(by)), args)
    else:
        write_table(result.summary(), args)
        if args.flaky:
            sys.stdout.write("\n")
            write_table(result.flaky_summary(limit=args.flaky), args)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("consistency", help="run-to-run noise: per-trial pass^1, flip rate, ICC, noise floor")
    add_load_args(p)
    add_pool_args(p)
    p.add_argument("--by", default=None, help="comma-separated trial columns to group by (default: agent,domain)")
    add_infra_arg(p)
    p.add_argument("--alpha", type=float, default=round(1 - CI_LEVEL, 10), help="significance level")
    p.add_argument("--flaky", type=int, default=0, metavar="N", help="also list up to N flaky tasks per group")
    add_format_args(p)
    p.set_defaults(func=cmd_consistency)
    return p

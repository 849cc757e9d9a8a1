"""``tauk reliability``: the reliability profile per group — outcome consistency (unbiased, HAL's plug-in beside it),
resource CVs, trajectory consistency of successful trials — and, with ``--deviations``, success by number of
state-changing deviations (action-level attribution against the gold actions).

    tauk reliability PATH... [--by agent,domain] [--infra drop|fail] [--metrics NAMES] [--deviations]
                             [--format table|json|csv|markdown|latex]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauk.cli._common import (
    add_format_args,
    add_infra_arg,
    add_load_args,
    add_pool_args,
    load_inputs,
    print_json,
    split_list,
    write_table,
)


def cmd_reliability(args: argparse.Namespace) -> int:
    from tauk.stats import deviation_profile, reliability

    res = load_inputs(args)
    by = split_list(args.by) or ["agent", "domain"]
    prof = reliability(res, by=by, infra=args.infra, pool_setups=args.pool_setups)
    metrics = split_list(args.metrics)
    dev = deviation_profile(res, by=by, pool_setups=args.pool_setups) if args.deviations else None
    if args.format == "json":
        print_json({"reliability": prof.records(), **({"deviations": dev.records()} if dev else {})})
        return 0
    write_table(prof.summary(metrics), args)
    if dev is not None:
        sys.stdout.write("\n")
        write_table(dev.summary(), args)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("reliability", help="reliability profile: outcome / resource / trajectory consistency")
    add_load_args(p)
    add_pool_args(p)
    p.add_argument("--by", default=None, help="comma-separated trial columns to group by (default: agent,domain)")
    add_infra_arg(p)
    p.add_argument("--metrics", default=None,
                   help="comma-separated metrics to show (default: all; the names of tauk.stats.reliability.METRICS, "
                        "e.g. outcome_consistency,cv_cost); an unknown name is an error listing them")  # fmt: skip
    p.add_argument("--deviations", action="store_true",
                   help="also success by number of state-changing deviations from the gold actions")
    add_format_args(p)
    p.set_defaults(func=cmd_reliability)
    return p

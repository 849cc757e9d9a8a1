"""``tauk audit``: recompute COMMUNICATE, ACTION and the reward and count disagreements with the record."""

from __future__ import annotations

import argparse
from typing import Any

from tauk.cli._common import add_load_args, load_inputs, print_json, write_frame

_COLUMNS = ["run", "n_checked", "communicate_mismatch", "action_mismatch", "reward_mismatch", "n_simulations"]


def cmd_audit(args: argparse.Namespace) -> int:
    from tauk.scoring import audit

    res = load_inputs(args)
    a = audit(res, tasks=args.tasks)
    if args.format == "json":
        print_json(a.records())
    else:
        write_frame(a.to_frame().select(_COLUMNS), "table")
        if not a.ok:
            m = a.mismatches()
            print(f"{m.height} mismatch(es):")
            write_frame(m.drop("run_id"), "table")
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk audit PATH... [--format table|json] [--tasks TASKS_FILE]``."""
    p = sub.add_parser(
        "audit",
        help="recompute COMMUNICATE, ACTION and the reward and count disagreements with the record, per run",
    )
    add_load_args(p)
    p.add_argument("--format", default="table", choices=["table", "json"])
    p.add_argument("--tasks", default=None, metavar="TASKS_FILE", help="re-grade with these task definitions")
    p.set_defaults(func=cmd_audit)
    return p

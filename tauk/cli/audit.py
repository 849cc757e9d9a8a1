"""``tauk audit``: recompute COMMUNICATE, ACTION and the reward (with ``--replay`` DB and ENV_ASSERTION too, through
τ²-bench's environments) and count disagreements with the record."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

import polars as pl

from tauk.cli._common import (
    add_format_args,
    add_load_args,
    frame_table,
    load_inputs,
    print_json,
    safe_lines,
    write_table,
)


def replayed_frame(res: Any, args: argparse.Namespace) -> Any:
    """``--replay``: the replay frame of ``res`` (None without the flag)."""
    if not getattr(args, "replay", False):
        return None
    from tauk.replay import replay

    return replay(res, tasks=args.tasks, workers=args.workers, progress=False if args.quiet else None)


def add_replay_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--replay", action="store_true",
                   help="compute DB and ENV_ASSERTION by replaying the trajectories through τ²-bench's environments "
                        "(needs τ²-bench installed: pip install \"tauk[replay]\")")  # fmt: skip
    p.add_argument("--workers", default=1, type=_workers, metavar="N",
                   help="replay worker processes (a number or 'auto')")


def _workers(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--workers takes a positive number or 'auto', not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--workers takes a positive number or 'auto', not {text!r}")
    return n


def cmd_audit(args: argparse.Namespace) -> int:
    from tauk.scoring import RegradeWarning, audit

    res = load_inputs(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RegradeWarning)
        a = audit(res, tasks=args.tasks, replay=replayed_frame(res, args))
    for w in caught:
        if issubclass(w.category, RegradeWarning):
            sys.stderr.write(f"tauk: warning: {safe_lines(w.message)}\n")
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    regrade = a.regrade()
    if args.format == "json":
        records = a.records()
        if regrade is not None:  # each run's (run, task) pairs per re-grade class, beside its mismatch counts
            for r in records:
                mine = regrade.filter(pl.col("run_id") == r["run_id"])
                r["regrade_tasks"] = dict(mine.select("regrade_class", "n_tasks").rows())
                r["regrade_simulations"] = dict(mine.select("regrade_class", "n_simulations").rows())
        print_json(records)
    else:
        write_table(a.summary(), args)
        if regrade is not None:
            sys.stdout.write("\n")
            write_table(a.regrade_summary(), args)
        m = a.mismatches()
        if m.height:
            sys.stdout.write("\n")
            write_table(frame_table(f"{m.height} mismatch(es)", m.drop("run_id"), keys=2), args)
    if args.check and not a.ok:
        return 1
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk audit PATH... [--format table|json] [--tasks TASKS_FILE] [--replay [--workers N]]``."""
    p = sub.add_parser(
        "audit",
        help="recompute COMMUNICATE, ACTION and the reward (--replay: DB and ENV_ASSERTION too) and count "
             "disagreements with the record, per run",
    )  # fmt: skip
    add_load_args(p)
    add_format_args(p)
    p.add_argument("--check", action="store_true", help="exit with status 1 when any run has a mismatch (for CI)")
    p.add_argument("--tasks", default=None, metavar="TASKS_FILE",
                   help="re-grade with these task definitions (and count the (run, task) pairs per re-grade class)")
    add_replay_args(p)
    p.set_defaults(func=cmd_audit)
    return p

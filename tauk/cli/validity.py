"""``tauk validity``: what each task's score can see, and the pass^1 an agent that does nothing would get.

    tauk validity TASKS_OR_RESULTS... [--per-task] [--evidence RESULTS] [--format table|json|csv|markdown|latex]

Each PATH is a task file, a folder of task files (split files add per-split bounds), or a results file / folder
(its embedded definitions, one task set per run). ``table`` prints the do-nothing bound per task set (and with
``--per-task`` the flagged tasks); ``json`` prints ``{"bounds": [...], "tasks": [...]}``; ``csv`` / ``markdown`` /
``latex`` the bounds (or the per-task table with ``--per-task``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import polars as pl

from tauk.cli._common import add_format_args, frame_table, print_json, write_table

PER_TASK = ("task_set", "task_id", "inaction_passable", "inaction_fails", "inaction_unknown", "auto_pass", "nl_live",
            "nl_unscored", "n_unscored_actions")  # fmt: skip


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """List-of-string columns as ``a, b`` text."""
    lists = [c for c, t in frame.schema.items() if isinstance(t, pl.List)]
    return frame.with_columns(pl.col(c).list.join(", ").alias(c) for c in lists)


def cmd_validity(args: argparse.Namespace) -> int:
    from tauk import load
    from tauk.tasks import validity

    sources = args.paths[0] if len(args.paths) == 1 else list(args.paths)
    evidence: Any = "auto"
    if args.evidence:
        evidence = load(args.evidence if len(args.evidence) > 1 else args.evidence[0], strict=not args.lenient)
    v = validity(sources, domain=args.task_domain, evidence=evidence)
    if args.format == "json":
        print_json({"bounds": v.bounds.to_dicts(), "tasks": v.records()})
        return 0
    if args.per_task:
        flagged = v.tasks.filter(
            (pl.col("inaction_passable") != False) | pl.col("nl_unscored") | (pl.col("n_unscored_actions") > 0)  # noqa: E712
            if not args.all_tasks else pl.lit(True)
        ).select(list(PER_TASK))  # fmt: skip
        title = f"{flagged.height} task(s) {'' if args.all_tasks else 'flagged '}of {v.tasks.height}"
        write_table(frame_table(title, _flat(flagged), keys=2), args)
        return 0
    write_table(v.summary(), args)
    splits = v.bounds.filter(pl.col("split").is_not_null())
    if splits.height and args.format == "table":
        sys.stdout.write("\n")
        cols = ["task_set", "split", "n_tasks", "n_inaction_passable", "n_inaction_unknown", "do_nothing_pass1",
                "n_split_tasks_missing"]  # fmt: skip
        notes = ["a split with tasks missing from its task file has no bound (n_split_tasks_missing > 0)"]
        write_table(frame_table("the do-nothing bound per split", splits.select(cols), notes, keys=2), args)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk validity PATH... [--per-task] [--evidence RESULTS] [--format ...]``."""
    p = sub.add_parser(
        "validity",
        help="task validity: inaction-passable tasks, components that pass by themselves, unscored gold actions "
             "and assertions, and the do-nothing bound per task set",
    )  # fmt: skip
    p.add_argument("paths", nargs="*", metavar="PATH", help="task files or folders of them, or results files")
    p.add_argument("--per-task", action="store_true",
                   help="list the flagged tasks (inaction-passable or unknown, unscored NL assertions or gold actions)")
    p.add_argument("--all-tasks", action="store_true", help="with --per-task: list every task")
    p.add_argument("--evidence", nargs="+", metavar="RESULTS", default=None,
                   help="results whose simulations that changed no state tell the ENV assertions' initial values")
    p.add_argument("--task-domain", default=None, metavar="DOMAIN",
                   help="the domain of the tasks when it cannot be inferred (user_scenario, file name, tool table)")
    p.add_argument("--lenient", action="store_true", help="load --evidence results leniently")
    add_format_args(p)
    p.set_defaults(func=cmd_validity)
    return p

"""``tauk leaderboard``: the leaderboard with honest uncertainty, or a submission verified against its trajectories.

    tauk leaderboard PATH [--domain NAMES] [--table ranking|rows|recovery|pairs|voice|all] [--k K]
                          [--question population|rerun] [--trajectories DIR] [--ci LEVEL ...]
                          [--format table|json|csv|markdown|latex]
    tauk leaderboard --verify SUBMISSION_DIR [--trajectories DIR] [--format ...]

PATH is a leaderboard folder (``<name>.json`` files or upstream's ``<name>/submission.json``) or one submission.
Every table and choice comes from :mod:`tauk.leaderboard`; ``json`` prints the chosen table's records.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tauk.cli._common import add_ci_args, add_format_args, ci_level, print_json, split_list, write_table
from tauk.errors import TaukError
from tauk.leaderboard import QUESTIONS, TABLES


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from tauk.leaderboard import analyze, verify_submission

    ci = ci_level(args)
    if args.verify:
        v = verify_submission(args.verify, trajectories=args.trajectories)
        if args.format == "json":
            print_json(v.records())
        else:
            write_table(v.summary(), args)
        return 0 if v.ok else 1
    if not args.board:
        raise TaukError("give a leaderboard folder or submission file (PATH), or --verify SUBMISSION_DIR")
    a = analyze(args.board, k=args.k, ci=ci, method=args.method, resamples=args.resamples,
                seed=args.seed, question=args.question, trajectories=args.trajectories,
                listed_only=args.listed_only)  # fmt: skip
    domains = split_list(args.domain)
    names = list(TABLES) if args.table == "all" else [args.table]
    for i, name in enumerate(names):
        if args.format == "json":
            print_json({n: _records(a, n, domains) for n in names} if len(names) > 1 else _records(a, name, domains))
            break
        if i:
            sys.stdout.write("\n")
        write_table(a.table(name, domain=domains), args)
    return 0


def _records(a: Any, name: str, domains: list[str] | None) -> list[dict[str, Any]]:
    frames = {"ranking": a.ranking.to_frame(), "rows": a.rows.to_frame(), "recovery": a.recovery.to_frame(),
              "pairs": a.ranking.pairs, "voice": a.voice.to_frame()}  # fmt: skip
    f = frames[name]
    if domains:
        f = f.filter(f["domain"].is_in(domains))
    recs = f.to_dicts()
    if name == "pairs":  # ``diff``: the old key of ``difference``, kept one release
        recs = [{**r, "diff": r["difference"]} for r in recs]
    return recs


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("leaderboard", help="leaderboard rows with intervals, tie groups and noise floor; --verify a "
                                           "submission against its trajectories")  # fmt: skip
    p.add_argument("board", nargs="?", metavar="PATH", help="a leaderboard folder or submission file")
    p.add_argument("--verify", metavar="SUBMISSION_DIR", default=None,
                   help="recompute a submission's pass^k from the rewards its trajectories record, under both "
                        "infrastructure conventions, and re-grade them (tauk.audit: a recorded reward that does not "
                        "follow from its trajectory is named) (exit 1 when it does not reproduce)")  # fmt: skip
    p.add_argument("--trajectories", metavar="DIR", default=None,
                   help="where the submissions' trajectory_files are (paired comparisons; --verify: searched first)")
    p.add_argument("--domain", default=None, metavar="NAMES", help="keep only these domains (comma-separated)")
    p.add_argument("--table", default="ranking", choices=[*TABLES, "all"], help="which table to print")
    p.add_argument("--k", type=int, default=1, help="rank by pass^k")
    p.add_argument("--question", default="population", choices=list(QUESTIONS),
                   help="population: would the order hold on new tasks (unpaired, conservative); rerun: is a gap more "
                        "than run-to-run noise on these tasks")  # fmt: skip
    p.add_argument("--listed-only", action="store_true", help="only the submissions the manifest lists")
    add_format_args(p)
    add_ci_args(p, always="every leaderboard row gets an interval")
    p.set_defaults(func=cmd_leaderboard, digits=None)  # each table's own decimals unless --digits is given
    return p

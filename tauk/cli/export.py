"""``tauk export``: the frames of a load as Parquet files, readable without tauk (DuckDB, PyArrow, pandas)."""

from __future__ import annotations

import argparse
from typing import Any

from tauk.cli._common import add_load_args, check_out_dir, load_inputs, split_list


def cmd_export(args: argparse.Namespace) -> int:
    check_out_dir(args.out)
    res = load_inputs(args)
    frames = split_list(args.frames) or list(res.FRAMES)
    for path in res.write_parquet(args.out, frames):
        print(path)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk export PATH... --out DIR [--frames runs,trials,...]``."""
    p = sub.add_parser("export", help="write the frames (runs, trials, messages, …) as Parquet files")
    add_load_args(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    p.add_argument("--frames", default=None, help="comma-separated frames (default: all six)")
    p.set_defaults(func=cmd_export)
    return p

"""``tauk ingest``: read results files once into a columnar store that every other command reads as a PATH."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from tauk.errors import LoadWarning


def cmd_ingest(args: argparse.Namespace) -> int:
    from tauk.store import ingest

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        report = ingest(args.sources, args.store, strict=not args.lenient, progress=False if args.quiet else None,
                        wait=args.wait)  # fmt: skip
    if not args.quiet:
        for w in caught if not args.lenient else ():
            sys.stderr.write(f"tauk: warning: {w.message}\n")
    print(str(report) if args.lenient or not report.ok else str(report).split("\n", 1)[0])
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk ingest SRC... --store DIR [--lenient] [--wait SECONDS]``."""
    p = sub.add_parser("ingest", help="read results files once into a columnar store (Parquet + manifest)",
                       description="Ingest results files / directories into a store: unchanged sources are "
                                   "skipped, changed ones re-ingested. Every command then takes the store as PATH.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="results files, directories or globs")
    p.add_argument("--store", required=True, metavar="DIR", help="the store folder (created if missing)")
    p.add_argument("--lenient", action="store_true", help="skip what cannot be loaded and report it")
    p.add_argument("--quiet", action="store_true", help="no warnings, no progress bars")
    p.add_argument("--wait", type=float, default=0.0, help="seconds to wait for another ingest's lock")
    p.set_defaults(func=cmd_ingest)
    return p

"""``tauk ingest``: read results files once into a columnar store that every other command reads as a PATH."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

from tauk.cli._common import safe_lines
from tauk.errors import LoadWarning

ALLOCATOR = "dirty_decay_ms:0,muzzy_decay_ms:0"
"""Polars' allocator (jemalloc) set to return freed memory at once: an ingest frees a part's frames after writing
them, and with the default decay its resident memory grew with every file (measured: 2.5x the largest source
file instead of 1.6x). Polars reads it (``_RJEM_MALLOC_CONF``, appended to its own default) when it loads, which
the command line has done before it knows the command, so ``tauk ingest`` started from the command line re-runs
itself once with it set."""


def allocator_env(environ: Mapping[str, str]) -> dict[str, str] | None:
    """The allocator setting to re-run with (the current one with :data:`ALLOCATOR` appended, so that a user's own
    setting is kept and ours wins), or None when it is already in effect."""
    current = environ.get("_RJEM_MALLOC_CONF", "")
    if ALLOCATOR in current:
        return None
    return {"_RJEM_MALLOC_CONF": f"{current},{ALLOCATOR}" if current else ALLOCATOR}


def cmd_ingest(args: argparse.Namespace) -> int:
    from tauk.store import ingest

    env = allocator_env(os.environ) if getattr(args, "from_command_line", False) else None
    if env is not None:
        os.execve(sys.executable, [sys.executable, "-m", "tauk", *sys.argv[1:]], {**os.environ, **env})

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        report = ingest(args.sources, args.store, strict=not args.lenient, progress=False if args.quiet else None,
                        wait=args.wait)  # fmt: skip
    if not args.quiet:
        for w in caught if not args.lenient else ():
            sys.stderr.write(f"tauk: warning: {safe_lines(w.message)}\n")
    print(str(report) if args.lenient or not report.ok else str(report).split("\n", 1)[0])
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk ingest SRC... --store DIR [--lenient] [--wait SECONDS]``."""
    p = sub.add_parser("ingest", help="read results files once into a columnar store (Parquet + an entry per run)",
                       description="Ingest results files / directories into a store: unchanged sources are "
                                   "skipped, changed ones re-ingested. Every command then takes the store as PATH.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="results files, directories or globs")
    p.add_argument("--store", required=True, metavar="DIR", help="the store folder (created if missing)")
    p.add_argument("--lenient", action="store_true", help="skip what cannot be loaded and report it")
    p.add_argument("--quiet", action="store_true", help="no warnings, no progress bars")
    p.add_argument("--wait", type=float, default=0.0, help="seconds to wait for another ingest's lock")
    p.set_defaults(func=cmd_ingest)
    return p

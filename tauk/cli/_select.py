"""The simulation filter of the command line (``--failed`` / ``--passed``, ``--task``, ``--termination``): the
options, read into the keywords of :func:`tauk.io.frames.select.select_trials`."""

from __future__ import annotations

import argparse
from typing import Any

from tauk.io.frames.select import TERMINATION_CHOICES


def add_selection_args(p: argparse.ArgumentParser, *, everything: bool = False) -> None:
    """``--failed`` / ``--passed`` (and ``--all`` when ``everything``: the default is then failed simulations),
    ``--task IDS``, ``--termination REASONS`` (choices from the library)."""
    g = p.add_mutually_exclusive_group()
    if everything:
        g.add_argument("--failed", dest="outcome", action="store_const", const="failed",
                       help="only the failed simulations (reward < 1 or none; the default)")  # fmt: skip
        g.add_argument("--all", dest="outcome", action="store_const", const="all",
                       help="every simulation (not the default)")  # fmt: skip
        p.set_defaults(outcome="failed")
    else:
        g.add_argument("--failed", dest="outcome", action="store_const", const="failed",
                       help="only the failed simulations (reward < 1 or none; default: every simulation)")  # fmt: skip
        p.set_defaults(outcome="all")
    g.add_argument("--passed", dest="outcome", action="store_const", const="passed",
                   help="only the passed ones (not the default)")  # fmt: skip
    p.add_argument("--task", action="append", metavar="IDS",
                   help="only these task ids (comma-separated or repeated)")  # fmt: skip
    p.add_argument("--termination", action="append", metavar="REASONS",
                   help="only simulations ending so (comma-separated or repeated): "
                        + ", ".join(TERMINATION_CHOICES))  # fmt: skip


def _items(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [x.strip() for v in values for x in v.split(",") if x.strip()] or None


def selection_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ``failed`` / ``task`` / ``termination`` keywords the options ask for."""
    failed = {"failed": True, "passed": False}.get(getattr(args, "outcome", "all"))
    return {"failed": failed, "task": _items(args.task), "termination": _items(args.termination)}

"""What every subcommand shares: reading inputs, the common options and writing tables or JSON."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from tauk import load
from tauk.conventions import CI_LEVEL, CI_METHOD, CI_METHODS, INFRA, INFRA_RULES, RESAMPLES, SEED
from tauk.errors import LoadWarning, TaukError
from tauk.table import FORMATS as TABLE_FORMATS


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    return v


def safe_lines(text: Any) -> str:
    """A message for stderr whose text may quote the logs (agent labels, reasons, file contents): each line's control
    characters made visible (:func:`tauk.table.terminal_safe`), the lines kept."""
    from tauk.table import terminal_safe

    return "\n".join(terminal_safe(line) for line in str(text).split("\n"))


_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented JSON (NaN and ±inf as null) to stdout; DEL, C1 controls, line separators and bidi
    overrides (which JSON leaves raw, and a terminal obeys) as ``\\uXXXX`` escapes — the same JSON value."""
    text = json.dumps(_jsonable(obj), indent=2, ensure_ascii=False)
    sys.stdout.write(_JSON_RAW.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n")


def parse_inputs(paths: Sequence[str], labels: Sequence[str] = ()) -> Any:
    """``PATH`` arguments (and ``--label NAME=PATH`` options) -> what :func:`tauk.load` takes.

    A ``PATH`` is always a path when it exists (a file may be called ``k=v.json``); ``NAME=PATH`` as a positional
    argument is still read as a label for a path that exists, but ``--label NAME=PATH`` is the unambiguous form.
    """
    from pathlib import Path

    named: dict[str, str] = {}
    for item in labels:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise TaukError(f"--label takes NAME=PATH, got {item!r}")
        if name in named:
            raise TaukError(f"--label {name} is given twice")
        named[name] = path
    plain: list[str] = []
    for p in paths:
        name, sep, path = p.partition("=")
        if sep and name and path and not Path(p).exists() and (Path(path).exists() or any(c in path for c in "*?[")):
            if name in named:
                raise TaukError(f"label {name} is given twice")
            named[name] = path
        else:
            plain.append(p)
    if named and plain:
        raise TaukError(f"give every input a label, or none (unlabelled: {', '.join(plain[:3])})")
    if not named and len(plain) == 1:
        return plain[0]  # one PATH: a file, a folder, a glob or a store
    return named or plain


def load_inputs(args: argparse.Namespace):
    """Load the ``PATH`` / ``--label`` arguments under the ``--lenient`` / ``--quiet`` options; a lenient load's
    report goes to stderr."""
    quiet = getattr(args, "quiet", False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        res = load(parse_inputs(args.paths, getattr(args, "label", None) or ()), strict=not args.lenient,
                        progress=False if quiet else None)  # fmt: skip
        agents, domains = split_list(getattr(args, "agent", None)), split_list(getattr(args, "domain", None))
        if agents or domains:
            res = res.filter(agent=agents, domain=domains)
    if not quiet:
        if args.lenient and not res.report.ok:
            sys.stderr.write(f"tauk: {safe_lines(res.report)}\n")
        else:
            for w in caught:  # one line each, not Python's warning format
                sys.stderr.write(f"tauk: warning: {safe_lines(w.message)}\n")
    if res.runs.height == 0:  # an empty store (an ingest that found nothing), or a lenient load that kept nothing
        names = ", ".join(map(str, [*args.paths, *(getattr(args, "label", None) or ())]))
        raise TaukError(f"{names}: no run to analyse (an empty store, or every file skipped)")
    return res


def add_load_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="results files, directories or globs")
    p.add_argument("--label", action="append", metavar="NAME=PATH",
                   help="a labelled input (repeatable): NAME becomes its run id and agent label")  # fmt: skip
    p.add_argument("--lenient", action="store_true", help="skip what cannot be loaded and report it (on stderr)")
    p.add_argument("--quiet", action="store_true", help="print no load warnings and no progress bars")
    p.add_argument("--agent", default=None, metavar="NAMES", help="keep only these agents (comma-separated)")
    p.add_argument("--domain", default=None, metavar="NAMES", help="keep only these domains (comma-separated)")


def add_infra_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--infra", default=INFRA, choices=list(INFRA_RULES), help="infrastructure errors: drop or fail")


def add_pool_args(p: argparse.ArgumentParser, *, pairs: bool = False) -> None:
    """``--pool-setups``; ``pairs``: the command pairs two agents (tauk compare), which by default it does only within
    a setup."""
    default = ("the table names the setups pooled; by default two agents are paired only within a setup (each in "
               "its own setup: a row per setup and no pair)" if pairs else
               "by default a group spanning setups is reported per setup")  # fmt: skip
    p.add_argument("--pool-setups", action="store_true",
                   help=f"pool trials of different setups (domain, mode, user model, reward bases) into one figure; "
                        f"{default}")  # fmt: skip


def add_dependence_args(p: argparse.ArgumentParser) -> None:
    """``--cluster`` (task families) and ``--run-effects`` (the library's choices: tauk.conventions)."""
    from tauk.conventions import CLUSTER_FAMILY as FAMILY
    from tauk.conventions import RUN_EFFECTS

    p.add_argument("--cluster", default=None, metavar="COLUMN",
                   help=f"task families: a trials column, or {FAMILY!r} (telecom's issue type × persona from the ids); "
                        "cluster-robust (CR2) intervals and tests")  # fmt: skip
    p.add_argument("--run-effects", default=RUN_EFFECTS[0], choices=list(RUN_EFFECTS),
                   help="a run effect shared by a pass (trial index of a run): widen the intervals by it (adjust) or "
                        "only report it")  # fmt: skip


def add_ci_args(p: argparse.ArgumentParser, *, always: str | None = None) -> None:
    """``--ci``, ``--method``, ``--resamples``, ``--seed``; the choices of ``--method`` are the library's
    (:data:`tauk.conventions.CI_METHODS`). ``--ci 0`` means "no interval"; where the command always gives one,
    ``always`` says why, and ``--ci 0`` is refused with that reason (:func:`ci_level`)."""
    none = f"0 is refused: {always}" if always else "0 for no interval"
    p.add_argument("--ci", type=float, default=CI_LEVEL, metavar="LEVEL", help=f"confidence level ({none})")
    p.set_defaults(ci_always=always)
    p.add_argument("--method", default=CI_METHOD, choices=list(CI_METHODS),
                   help="interval method: model = beta-binomial posterior with a model check (comparisons: the paired "
                        "test's own interval); bca, percentile, bootstrap-t = task bootstrap; t = t over tasks")
    p.add_argument("--resamples", type=int, default=RESAMPLES, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=SEED, help="seed of the resampling")


def ci_level(args: argparse.Namespace) -> float | None:
    """The level of ``--ci``: None for ``--ci 0`` ("no interval"), or a :class:`~tauk.TaukError` (one line) where
    the command always gives an interval or the level is not in (0, 1)."""
    ci = args.ci
    always = getattr(args, "ci_always", None)
    if ci == 0:
        if always:
            raise TaukError(f"--ci 0 (no interval) does not apply to tauk {args.command}: {always}; give a level "
                            f"such as {CI_LEVEL}")  # fmt: skip
        return None
    if not 0 < ci < 1:
        raise TaukError(f"--ci must be a level in (0, 1), e.g. {CI_LEVEL}" + ("" if always else ", or 0 for no interval")
                        + f"; got {ci:g}")  # fmt: skip
    return ci


def parse_ks(text: str | None) -> list[int] | None:
    """``"1,2,4"`` or ``"1-4"`` -> ``[1, 2, 4]`` / ``[1, 2, 3, 4]`` (None: the default ks)."""
    if not text:
        return None
    ks: list[int] = []
    try:
        for part in text.split(","):
            lo, sep, hi = part.strip().partition("-")
            ks += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    except ValueError:
        raise TaukError(f"--k takes numbers like 1,2,4 or 1-4, got {text!r}") from None
    return ks


def check_out_dir(path: str) -> None:
    """``--out`` must be a folder (created if missing), not a file."""
    from pathlib import Path

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise TaukError(f"--out {path} is a file; give a folder (it is created if missing)")


def split_list(text: str | None) -> list[str] | None:
    """``"a, b"`` -> ``["a", "b"]`` (None stays None)."""
    return [b.strip() for b in text.split(",") if b.strip()] if text else None


FORMATS = (TABLE_FORMATS[0], "json", *TABLE_FORMATS[1:])
"""``--format``: a table in one of :data:`tauk.table.FORMATS`, or the result's records as JSON."""


def add_format_args(p: argparse.ArgumentParser, formats: Sequence[str] = FORMATS) -> None:
    p.add_argument("--format", default="table", choices=list(formats), help="output format")
    p.add_argument("--digits", type=int, default=None, help="decimals of table, Markdown and LaTeX numbers "
                   "(default 4); CSV and JSON keep full precision unless --digits is given for CSV")  # fmt: skip
    p.add_argument("--wide", action="store_true", help="table format: do not fit 100 columns or shorten labels")


def write_table(table: Any, args: argparse.Namespace) -> None:
    """Write a :class:`tauk.table.SummaryTable` in ``args.format`` (one of :data:`tauk.table.FORMATS`)."""
    sys.stdout.write(table.render(args.format, digits=args.digits, wide=args.wide))


def frame_table(title: str, frame: Any, notes: Sequence[str] = (), keys: int = 1) -> Any:
    """A SummaryTable of a Polars frame's rows (for tables that are not a result's ``summary()``)."""
    from tauk.table import SummaryTable

    return SummaryTable.build(title, frame.columns, frame.rows(), notes, keys=keys)

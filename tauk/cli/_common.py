"""What every subcommand shares: reading inputs, the common options and writing tables or JSON."""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from tauk.conventions import CI_METHOD, RESAMPLES, SEED
from tauk.errors import LoadWarning

CI_METHODS = ("bca", "percentile", "t", "bootstrap-t")


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    return v


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented JSON (NaN and ±inf as null) to stdout."""
    sys.stdout.write(json.dumps(_jsonable(obj), indent=2, ensure_ascii=False) + "\n")


def parse_inputs(paths: Sequence[str]) -> Any:
    """``PATH`` or ``LABEL=PATH`` arguments -> what :func:`tauk.load` takes."""
    labelled = [p for p in paths if "=" in p and not p.startswith("=")]
    if not labelled:
        return list(paths)
    if len(labelled) != len(paths):
        raise SystemExit("tauk: give either all inputs as LABEL=PATH or none")
    out: dict[str, str] = {}
    for p in labelled:
        label, path = p.split("=", 1)
        out[label] = path
    return out


def load_inputs(args: argparse.Namespace):
    """Load the ``PATH`` arguments under the ``--lenient`` / ``--quiet`` options."""
    import tauk

    with warnings.catch_warnings():
        if getattr(args, "quiet", False):
            warnings.simplefilter("ignore", LoadWarning)
        return tauk.load(parse_inputs(args.paths), strict=not args.lenient)


def add_load_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="results files, directories, globs, or LABEL=PATH")
    p.add_argument("--lenient", action="store_true", help="skip what cannot be loaded and report it")
    p.add_argument("--quiet", action="store_true", help="do not print load warnings")


def add_ci_args(p: argparse.ArgumentParser, ci: float | None = None) -> None:
    p.add_argument("--ci", type=float, default=ci, metavar="LEVEL", help="confidence level, e.g. 0.95")
    p.add_argument("--method", default=CI_METHOD, choices=list(CI_METHODS))
    p.add_argument("--resamples", type=int, default=RESAMPLES)
    p.add_argument("--seed", type=int, default=SEED)


def split_list(text: str | None) -> list[str] | None:
    """``"a, b"`` -> ``["a", "b"]`` (None stays None)."""
    return [b.strip() for b in text.split(",") if b.strip()] if text else None


def write_frame(frame: pl.DataFrame, fmt: str) -> None:
    """Write a frame as ``table`` (text), ``csv`` or ``markdown`` to stdout."""
    if fmt == "csv":
        sys.stdout.write(frame.write_csv())
    elif fmt == "markdown":
        cols = frame.columns
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in frame.iter_rows():
            lines.append("| " + " | ".join("" if v is None else str(v) for v in row) + " |")
        sys.stdout.write("\n".join(lines) + "\n")
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, fmt_str_lengths=60):
            sys.stdout.write(str(frame) + "\n")

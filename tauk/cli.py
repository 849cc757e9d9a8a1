"""The ``tauk`` command line: the same numbers as the Python API, outside Jupyter.

    tauk summary PATH... [--by FIELDS] [--infra drop|fail] [--format table|json|csv|markdown] [--ci LEVEL ...]
    tauk audit PATH... [--format table|json]
    tauk compare PATH... --a LABEL --b LABEL [--k K] [--by domain] [--format table|json]
    tauk synth OUT_DIR ... | tauk synth --sample
    tauk report PATH... --out DIR
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

import tauk


def _jsonable(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    return v


def print_json(obj: Any) -> None:
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


def load_inputs(args: argparse.Namespace) -> tauk.Results:
    with warnings.catch_warnings():
        if getattr(args, "quiet", False):
            warnings.simplefilter("ignore", tauk.LoadWarning)
        return tauk.load(parse_inputs(args.paths), strict=not args.lenient)


def add_load_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="results files, directories, globs, or LABEL=PATH")
    p.add_argument("--lenient", action="store_true", help="skip what cannot be loaded and report it")
    p.add_argument("--quiet", action="store_true", help="do not print load warnings")


def add_ci_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ci", type=float, default=None, metavar="LEVEL", help="confidence level, e.g. 0.95")
    p.add_argument("--method", default="bca", choices=["bca", "percentile", "t", "bootstrap-t"])
    p.add_argument("--resamples", type=int, default=9999)
    p.add_argument("--seed", type=int, default=0)


def write_frame(frame: pl.DataFrame, fmt: str) -> None:
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


# ---- summary ---------------------------------------------------------------------------------------------------


def summary_records(res: tauk.Results, by: Sequence[str] | None, infra: str, ci: float | None, method: str,
                    resamples: int, seed: int) -> list[dict[str, Any]]:  # fmt: skip
    """The JSON records of ``tauk summary``: run, agent, domain, counts, avg_reward, avg_agent_cost, pass_hat_k."""
    from tauk.stats import summarize

    by_t = tuple(by) if by else ("run_id",)
    s = summarize(res, by=by_t, infra=infra, ci=ci, method=method, resamples=resamples, seed=seed)
    sources = dict(zip(res.runs["run_id"], res.runs["source"]))
    out = []
    for r in s.records():
        rec: dict[str, Any] = {"run": sources.get(r.get("run_id")) if by_t == ("run_id",) else None}
        for c in by_t:
            if c not in ("run_id",):
                rec[c] = r.get(c)
        for key in ("agent", "domain", "n_simulations", "n_tasks", "infra_error_count", "avg_reward",
                    "avg_agent_cost", "pass_hat_k"):  # fmt: skip
            rec[key] = r.get(key)
        out.append(rec)
    return out


def _summary_frame(records: list[dict[str, Any]]) -> pl.DataFrame:
    ks = sorted({int(k) for r in records for k in r["pass_hat_k"]})
    rows = []
    for r in records:
        row = {k: v for k, v in r.items() if k != "pass_hat_k"}
        for k in ks:
            e = r["pass_hat_k"].get(str(k))
            row[f"pass^{k}"] = None if e is None else e["estimate"]
            if e is not None and e.get("ci_low") is not None:
                row[f"pass^{k}_ci"] = f"[{e['ci_low']:.4f}, {e['ci_high']:.4f}]"
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def cmd_summary(args: argparse.Namespace) -> int:
    res = load_inputs(args)
    by = [b.strip() for b in args.by.split(",")] if args.by else None
    recs = summary_records(res, by, args.infra, args.ci, args.method, args.resamples, args.seed)
    if args.format == "json":
        print_json(recs)
    else:
        write_frame(_summary_frame(recs), args.format)
    return 0


# ---- compare ---------------------------------------------------------------------------------------------------

COMPARE_KEYS = ("agent_a", "agent_b", "k", "n_tasks", "difference", "ci_low", "ci_high", "p_value",
                "p_value_adjusted")  # fmt: skip


def compare_records(res: tauk.Results, a: str, b: str, k: int, by: Sequence[str] | None, adjust: str,
                    ci: float, method: str, resamples: int, seed: int, infra: str) -> list[dict[str, Any]]:  # fmt: skip
    """The JSON records of ``tauk compare``: one per ``by`` group; p-values adjusted over the groups."""
    from tauk.stats import adjust_pvalues, compare

    c = compare(res, a, b, k=k, by=by or None, infra=infra, ci=ci, method=method, resamples=resamples, seed=seed)
    frame = c.to_frame()
    p_adj = adjust_pvalues(frame["p_perm"].fill_null(float("nan")).to_numpy(), adjust=adjust)
    out = []
    for r, pa in zip(frame.iter_rows(named=True), p_adj):
        rec: dict[str, Any] = {col: r[col] for col in c.by}
        rec.update({
            "agent_a": a, "agent_b": b, "k": k, "n_tasks": r["n_tasks"], "difference": r["diff"],
            "ci_low": r["ci_low"], "ci_high": r["ci_high"], "p_value": r["p_perm"],
            "p_value_adjusted": None if pa != pa else float(pa), "adjust": adjust,
            "estimate_a": r["estimate_a"], "estimate_b": r["estimate_b"], "se": r["se"],
            "t_low": r["t_low"], "t_high": r["t_high"], "p_t": r["p_t"], "p_wilcoxon": r["p_wilcoxon"],
            "p_mcnemar": r["p_mcnemar"], "n_tasks_only_a": r["n_tasks_only_a"], "n_tasks_only_b": r["n_tasks_only_b"],
            "n_tasks_excluded": r["n_tasks_excluded"],
        })  # fmt: skip
        if not r["n_tasks"]:
            where = ", ".join(f"{col}={r[col]}" for col in c.by)
            sys.stderr.write(
                f"tauk: note: {a} vs {b}{' (' + where + ')' if where else ''}: no shared task with at least k={k} "
                f"trials for both ({r['n_tasks_excluded']} shared task(s) have fewer); the figures are null\n"
            )
        out.append(rec)
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    res = load_inputs(args)
    labels = set(res.runs["agent"].drop_nulls())
    for lab in (args.a, args.b):
        if lab not in labels:
            raise tauk.TaukError(f"no run has agent label {lab!r}; labels present: {sorted(labels)}")
    by = [b.strip() for b in args.by.split(",")] if args.by else None
    recs = compare_records(res, args.a, args.b, args.k, by, args.adjust, args.ci or 0.95, args.method,
                           args.resamples, args.seed, args.infra)  # fmt: skip
    if args.format == "json":
        print_json(recs)
    else:
        write_frame(pl.DataFrame(recs, infer_schema_length=None), args.format)
    return 0


# ---- entry point -----------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tauk", description="Analyse τ²-bench / τ-bench trial logs.")
    parser.add_argument("--version", action="version", version=f"tauk {tauk.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("summary", help="upstream metrics (and intervals) per run or group")
    add_load_args(p)
    p.add_argument("--by", default=None, help="comma-separated trial columns to group by (default: one per file)")
    p.add_argument("--infra", default="drop", choices=["drop", "fail"], help="infrastructure errors: drop or fail")
    p.add_argument("--format", default="table", choices=["table", "json", "csv", "markdown"])
    add_ci_args(p)
    p.set_defaults(func=cmd_summary)

    p = sub.add_parser("compare", help="paired comparison of two agents on the tasks both ran")
    add_load_args(p)
    p.add_argument("--a", required=True, metavar="LABEL", help="agent label (or LABEL of LABEL=PATH inputs)")
    p.add_argument("--b", required=True, metavar="LABEL")
    p.add_argument("--k", type=int, default=1)
    p.add_argument("--by", default=None, help="comma-separated columns to split by, e.g. domain")
    p.add_argument("--adjust", default="holm", choices=["holm", "bh", "none"], help="multiple-comparison control")
    p.add_argument("--infra", default="drop", choices=["drop", "fail"])
    p.add_argument("--format", default="table", choices=["table", "json", "csv", "markdown"])
    add_ci_args(p)
    p.set_defaults(func=cmd_compare)

    # subcommands owned by their layers
    for mod in ("tauk.scoring", "tauk.stats.cli", "tauk.synth", "tauk.report"):
        with contextlib.suppress(ImportError):
            m = importlib.import_module(mod)
            if hasattr(m, "add_cli"):
                m.add_cli(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except tauk.TaukError as exc:
        sys.stderr.write(f"tauk: error: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""``tauk summary``: the upstream metrics (and intervals) per results file or group."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import polars as pl

from tauk.cli._common import add_ci_args, add_load_args, load_inputs, print_json, split_list, write_frame


def summary_records(res: Any, by: Sequence[str] | None, infra: str, ci: float | None, method: str,
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
    recs = summary_records(res, split_list(args.by), args.infra, args.ci, args.method, args.resamples, args.seed)
    if args.format == "json":
        print_json(recs)
    else:
        write_frame(_summary_frame(recs), args.format)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("summary", help="upstream metrics (and intervals) per run or group")
    add_load_args(p)
    p.add_argument("--by", default=None, help="comma-separated trial columns to group by (default: one per file)")
    p.add_argument("--infra", default="drop", choices=["drop", "fail"], help="infrastructure errors: drop or fail")
    p.add_argument("--format", default="table", choices=["table", "json", "csv", "markdown"])
    add_ci_args(p)
    p.set_defaults(func=cmd_summary)
    return p

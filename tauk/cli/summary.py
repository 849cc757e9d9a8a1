"""``tauk summary``: the upstream metrics (and intervals) per results file or group."""

from __future__ import annotations

import argparse
from typing import Any

from tauk.cli._common import (
    add_ci_args,
    add_dependence_args,
    add_format_args,
    add_infra_arg,
    add_load_args,
    add_pool_args,
    ci_level,
    load_inputs,
    parse_ks,
    print_json,
    split_list,
    write_table,
)


def summary_records(s: Any, res: Any) -> list[dict[str, Any]]:
    """The JSON records of ``tauk summary`` from a :class:`tauk.stats.Summary`: run (the source file when grouped
    by run), the group keys, agent, domain, counts, avg_reward, avg_agent_cost, pass_hat_k."""
    sources = dict(zip(res.runs["run_id"], res.runs["source"]))
    out = []
    for r in s.records():
        rec: dict[str, Any] = {"run": sources.get(r.get("run_id")) if s.by == ("run_id",) else None}
        for c in s.by:
            if c != "run_id":
                rec[c] = r.get(c)
        for key in ("agent", "domain", "n_simulations", "n_tasks", "infra_error_count", "avg_reward",
                    "avg_agent_cost", "n_passes", "run_effect_p", "run_var", "n_clusters", "pass_hat_k"):  # fmt: skip
            rec[key] = r.get(key)
        out.append(rec)
    return out


def cmd_summary(args: argparse.Namespace) -> int:
    from tauk.stats import summarize

    ci = ci_level(args)
    res = load_inputs(args)
    by = tuple(split_list(args.by) or ("run_id",))
    s = summarize(res, by=by, k=parse_ks(args.k), infra=args.infra, ci=ci, method=args.method,
                  resamples=args.resamples, seed=args.seed, pool_setups=args.pool_setups,
                  cluster=getattr(args, "cluster", None), run_effects=getattr(args, "run_effects", "adjust"))  # fmt: skip
    if args.format == "json":
        print_json(summary_records(s, res))
    else:
        write_table(s.summary(), args)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("summary", help="upstream metrics (and intervals) per run or group")
    add_load_args(p)
    add_pool_args(p)
    add_dependence_args(p)
    p.add_argument("--by", default=None, help="comma-separated trial columns to group by (default: one row per file)")
    p.add_argument("--k", default=None, help="the k of pass^k, e.g. 1,2,4 or 1-4 (default: 1 … trials per task)")
    add_infra_arg(p)
    add_format_args(p)
    add_ci_args(p)
    p.set_defaults(func=cmd_summary)
    return p

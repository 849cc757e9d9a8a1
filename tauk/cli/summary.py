"""``tauk summary``: the upstream metrics (and intervals) per results file or group."""

from __future__ import annotations

import argparse
from dataclasses import replace
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
from tauk.cli._select import add_selection_args, selection_of
from tauk.conventions import MIN_COVERAGE
from tauk.errors import TaukError


def summary_records(s: Any, res: Any) -> list[dict[str, Any]]:
    """The JSON records of ``tauk summary`` from a :class:`tauk.stats.Summary`: run (the source file when grouped
    by run), the group keys, agent, domain, counts, avg_reward, avg_agent_cost, the inaction-passable counts and
    share (:mod:`tauk.stats.substantive`), pass_hat_k (with its ``substantive`` figures per k) and counters
    (upstream HEAD's metric counters with their denominator ``n_counted``)."""
    from tauk.stats.substantive import GROUP_FIELDS

    sources = dict(zip(res.runs["run_id"], res.runs["source"]))
    out = []
    for r in s.records():
        rec: dict[str, Any] = {"run": sources.get(r.get("run_id")) if s.by == ("run_id",) else None}
        for c in s.by:
            if c != "run_id":
                rec[c] = r.get(c)
        for key in ("agent", "domain", "n_simulations", "n_tasks", "infra_error_count", "avg_reward",
                    "avg_agent_cost", *GROUP_FIELDS, "n_planned", "n_dropped", "trial_coverage", "low_coverage",
                    "rankable", "n_passes", "run_effect_p", "run_var", "n_clusters", "pass_hat_k", "counters"):  # fmt: skip
            rec[key] = r.get(key)
        out.append(rec)
    return out


def cmd_summary(args: argparse.Namespace) -> int:
    from tauk.io.frames.select import select_trials, selection_label
    from tauk.stats import summarize

    ci = ci_level(args)
    res = load_inputs(args)
    by = tuple(split_list(args.by) or ("run_id",))
    sel = selection_of(args)
    label = selection_label(**sel)
    data, marks = res, None
    if label is not None:  # the filter is applied to the trials before any statistic
        from tauk.stats.substantive import ResolvedMarks

        data = select_trials(res.trials, **sel)
        if data.height == 0:
            raise TaukError(f"no simulation left to summarise after the filter ({label}) of {res.trials.height} loaded")
        marks = ResolvedMarks.of(res)  # the filter keeps simulations, not task definitions: verdicts from the runs
    s = summarize(data, by=by, k=parse_ks(args.k), infra=args.infra, ci=ci, method=args.method,
                  resamples=args.resamples, seed=args.seed, pool_setups=args.pool_setups,
                  min_coverage=args.min_coverage, cluster=getattr(args, "cluster", None),
                  run_effects=getattr(args, "run_effects", "adjust"), marks=marks)  # fmt: skip
    if args.format == "json":
        records = summary_records(s, res)
        if label is not None:
            for rec in records:
                rec["selection"] = label
        print_json(records)
    else:
        table = s.summary()
        if label is not None:
            kept = data.height
            note = (f"filter: {label} — {kept} of {res.trials.height} simulations; every figure is of these only "
                    "(pass^k of failed simulations alone is 0 by construction)" if sel["failed"] else
                    f"filter: {label} — {kept} of {res.trials.height} simulations; every figure is of these only")
            extra = ()
            outcome = sel["failed"] is not None or sel["termination"]  # keeps some of a task's trials, not others
            if outcome and "n_dropped" in s.groups.columns and int(s.groups["n_dropped"].fill_null(0).sum()):
                extra = ("kept/planned, the low-coverage flags and the dropped=fail / =success bounds count the "
                         "simulations this filter left out as dropped trials (not infrastructure errors or missing "
                         "trial indices): here they describe the filter, not the runs",)  # fmt: skip
            table = replace(table, title=f"{table.title} ({label})", notes=(note, *extra, *table.notes))
        write_table(table, args)
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("summary", help="upstream metrics (and intervals) per run or group")
    add_load_args(p)
    add_pool_args(p)
    add_dependence_args(p)
    p.add_argument("--by", default=None, help="comma-separated trial columns to group by (default: one row per file)")
    p.add_argument("--k", default=None, help="the k of pass^k, e.g. 1,2,4 or 1-4 (default: 1 … trials per task)")
    add_infra_arg(p)
    p.add_argument("--min-coverage", type=float, default=MIN_COVERAGE, metavar="SHARE",
                   help="flag a group (and leave it unranked) when it kept fewer than this share of its planned "
                        f"trials — infrastructure errors dropped, trial indices missing (default {MIN_COVERAGE})")
    add_format_args(p)
    add_ci_args(p)
    add_selection_args(p)
    p.set_defaults(func=cmd_summary)
    return p

"""``tauk compare``: a paired comparison of two agents on the tasks both ran."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
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
    print_json,
    split_list,
    write_table,
)
from tauk.conventions import ADJUST, ADJUSTMENTS, PAIRED_TEST, PAIRED_TEST_DESCRIPTIONS, PAIRED_TESTS
from tauk.errors import TaukError

COMPARE_KEYS = ("agent_a", "agent_b", "k", "n_tasks", "difference", "ci_low", "ci_high", "p_value",
                "p_adjusted", "p_value_adjusted", "test", "interval_method")
"""The keys of every ``tauk compare --format json`` record (``p_value_adjusted``: the old name of ``p_adjusted``,
kept one release)."""  # fmt: skip


def compare_records(res: Any, a: str, b: str, k: int, by: Sequence[str] | None, adjust: str,
                    ci: float, method: str, resamples: int, seed: int, infra: str,
                    test: str = PAIRED_TEST, pool_setups: bool = False, cluster: str | None = None,
                    run_effects: str = "adjust") -> list[dict[str, Any]]:  # fmt: skip
    """The JSON records of ``tauk compare``: one per ``by`` group; the headline p-values (``test``) adjusted over
    the groups."""
    return comparison_and_records(res, a, b, k, by, adjust, ci, method, resamples, seed, infra, test, pool_setups,
                                  cluster, run_effects)[1]  # fmt: skip


def comparison_and_records(res: Any, a: str, b: str, k: int, by: Sequence[str] | None, adjust: str,
                           ci: float, method: str, resamples: int, seed: int, infra: str,
                           test: str = PAIRED_TEST, pool_setups: bool = False, cluster: str | None = None,
                           run_effects: str = "adjust") -> tuple[Any, list[dict[str, Any]]]:  # fmt: skip
    """:func:`tauk.stats.compare`'s result and :func:`compare_records`' records of it."""
    from tauk.stats import adjust_pvalues, compare

    c = compare(res, a, b, k=k, by=by or None, infra=infra, ci=ci, method=method, resamples=resamples, seed=seed,
                test=test, pool_setups=pool_setups, cluster=cluster, run_effects=run_effects)  # fmt: skip
    frame = c.to_frame()
    p_adj = adjust_pvalues(frame["p_value"].fill_null(float("nan")).to_numpy(), adjust=adjust)
    out = []
    for r, pa in zip(frame.iter_rows(named=True), p_adj):
        rec: dict[str, Any] = {col: r[col] for col in c.by}
        rec.update({
            "agent_a": a, "agent_b": b, "k": k, "n_tasks": r["n_tasks"], "difference": r["diff"],
            "ci_low": r["ci_low"], "ci_high": r["ci_high"], "p_value": r["p_value"],
            "p_adjusted": None if pa != pa else float(pa),
            "p_value_adjusted": None if pa != pa else float(pa),  # the old key, kept one release
            "adjust": adjust, "test": r["test"],
            "interval_method": r["interval_method"], "p_signflip": r["p_signflip"],
            "estimate_a": r["estimate_a"], "estimate_b": r["estimate_b"], "se": r["se"],
            "t_low": r["t_low"], "t_high": r["t_high"], "p_t": r["p_t"], "p_wilcoxon": r["p_wilcoxon"],
            "p_mcnemar": r["p_mcnemar"], "n_tasks_only_a": r["n_tasks_only_a"], "n_tasks_only_b": r["n_tasks_only_b"],
            "n_tasks_excluded": r["n_tasks_excluded"], "interval_excludes_0": r["interval_excludes_0"],
            "p_below_alpha": r["p_below_alpha"], "interval_note": r["interval_note"],
            **{f: r.get(f) for f in ("run_effect_p_a", "run_effect_p_b", "run_var_a", "run_var_b", "se_run",
                                     "n_clusters", "se_cluster", "df", "adjusted_for")},
        })  # fmt: skip
        if not r["n_tasks"]:
            where = ", ".join(f"{col}={r[col]}" for col in c.by)
            absent = [x for x, n in ((a, r["n_tasks_only_a"]), (b, r["n_tasks_only_b"])) if not n]
            why = (f"{absent[0]} has no trial here" + (" (the agents ran in different setups; --pool-setups pairs "
                   "them on their task ids)" if "setup" in c.by and "setup" not in (by or ()) else "")
                   if len(absent) == 1 and not r["n_tasks_excluded"] else
                   f"no shared task with at least k={k} trials for both ({r['n_tasks_excluded']} shared task(s) "
                   "have fewer)")  # fmt: skip
            sys.stderr.write(f"tauk: note: {a} vs {b}{' (' + where + ')' if where else ''}: {why}; the figures are null\n")
        out.append(rec)
    return c, out


def cmd_compare(args: argparse.Namespace) -> int:
    ci = ci_level(args)
    res = load_inputs(args)
    labels = set(res.runs["agent"].drop_nulls())
    for lab in (args.a, args.b):
        if lab not in labels:
            raise TaukError(f"no run has agent label {lab!r}; labels present: {sorted(labels)}")
    by = split_list(args.by)
    c, recs = comparison_and_records(res, args.a, args.b, args.k, by, args.adjust, ci, args.method, args.resamples,
                                     args.seed, args.infra, args.test, args.pool_setups, getattr(args, "cluster", None),
                                     getattr(args, "run_effects", "adjust"))  # fmt: skip
    if args.format == "json":
        print_json(recs)
    else:
        shown_by = [*(by or []), *(["setup"] if recs and "setup" in recs[0] and "setup" not in (by or []) else [])]
        write_table(compare_table(recs, args.a, args.b, args.k, shown_by, args, c.caveats()), args)
    return 0


def compare_table(recs: list[dict[str, Any]], a: str, b: str, k: int, by: Sequence[str], args: argparse.Namespace,
                  caveats: Sequence[str] = ()):  # fmt: skip
    """The readable table of ``tauk compare``: the estimates, the difference with its interval and the p-values;
    ``caveats``: the comparison's own notes (:meth:`tauk.stats.comparisons.results.Comparison.caveats`)."""
    from tauk.stats.comparisons.results import TEST_DESCRIPTIONS
    from tauk.table import Interval, SummaryTable

    shown = [r for r in recs if r["n_tasks"]]
    cols = [*by, "tasks", f"pass^{k} {a}", f"pass^{k} {b}", "difference", "p_value", "p_adjusted"]
    fields = [*by, "n_tasks", "estimate_a", "estimate_b", "difference", "p_value", "p_adjusted"]
    rows = [[*(r[c] for c in by), r["n_tasks"], r["estimate_a"], r["estimate_b"],
             Interval(r["difference"], r["ci_low"], r["ci_high"]), r["p_value"], r["p_adjusted"]]
            for r in shown]  # fmt: skip
    level = ci_level(args)
    test = getattr(args, "test", PAIRED_TEST)
    how = recs[0]["interval_method"] if recs else args.method
    interval = (f"its own {level:.0%} interval ({how})" if args.method == "model" else
                f"{level:.0%} {how} interval" + ("" if args.method == "t" else f", {args.resamples} resamples"))
    notes = [f"difference = {a} − {b}, paired on the tasks both ran",
             f"p_value: {TEST_DESCRIPTIONS[test]}; difference with {interval}"
             + (f"; p_adjusted: {args.adjust} over the {sum(r['p_value'] is not None for r in shown)} group(s)"
                if by else "")]  # fmt: skip
    empty = [r for r in recs if not r["n_tasks"]]
    if empty:
        notes.append(f"{len(empty)} group(s) without a shared task are not shown")
    notes += caveats
    return SummaryTable.build(f"{a} vs {b}", cols, rows, notes, fields=fields, keys=max(len(by), 1),
                              context=[("agent_a", a), ("agent_b", b), ("k", k)])  # fmt: skip


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="paired comparison of two agents on the tasks both ran")
    add_load_args(p)
    add_pool_args(p, pairs=True)
    add_dependence_args(p)
    p.add_argument("--a", required=True, metavar="LABEL", help="agent label (or LABEL of LABEL=PATH inputs)")
    p.add_argument("--b", required=True, metavar="LABEL", help="the agent compared against")
    p.add_argument("--k", type=int, default=1, help="the k of pass^k compared")
    p.add_argument("--by", default=None, help="comma-separated columns to split by, e.g. domain")
    p.add_argument("--adjust", default=ADJUST, choices=list(ADJUSTMENTS), help="multiple-comparison control")
    p.add_argument("--test", default=PAIRED_TEST, choices=list(PAIRED_TESTS),
                   help="the test of p_value: " + "; ".join(f"{k}: {v}" for k, v in PAIRED_TEST_DESCRIPTIONS.items()))
    add_infra_arg(p)
    add_format_args(p)
    add_ci_args(p, always="a comparison always reports its interval")
    p.set_defaults(func=cmd_compare)
    return p

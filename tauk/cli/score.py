"""``tauk score``: every simulation scored by tauk's kernel — the recomputed components, where each came from, the
reward — written per simulation (``--out``) and summarised per run.

A command of its own rather than an option of ``export`` or ``audit``: ``export`` writes what the files say (the
loader's frames), ``audit`` counts disagreements; ``score`` writes what tauk computes — the re-graded reward of each
simulation (``--tasks``, ``--replay``: a full re-evaluation, as ``tau2 evaluate-trajs [--fresh-tasks]``), which a
user feeds to their own statistics.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import polars as pl

from tauk.cli._common import add_format_args, add_load_args, frame_table, load_inputs, print_json, write_table
from tauk.errors import TaukError

OUT_FORMATS = (".parquet", ".csv", ".json")


def per_run(scored: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """One row per run: simulations, how many have a recomputed reward (``n_scored``), the mean recorded and
    recomputed reward, how many rewards changed, and where DB came from (replayed, the record)."""
    src = runs.select("run_id", run=pl.col("source").cast(pl.String)) if "source" in runs.columns else None
    out = scored.group_by("run_id", maintain_order=True).agg(
        n_simulations=pl.len(),
        n_scored=pl.col("score_reward").is_not_null().sum(),
        reward_recorded=pl.col("reward").mean(),
        reward_recomputed=pl.col("score_reward").mean(),
        n_changed=((pl.col("score_reward") - pl.col("reward")).abs() > 1e-6).fill_null(False).sum(),
        n_db_replayed=(pl.col("db_source") == "replayed").fill_null(False).sum(),
        n_db_record=(pl.col("db_source") == "record").fill_null(False).sum(),
    )
    if src is not None:
        out = out.join(src, on="run_id", how="left").with_columns(pl.col("run").fill_null(pl.col("run_id")))
    else:
        out = out.with_columns(run=pl.col("run_id"))
    return out.select("run", pl.exclude("run", "run_id"))


def write_scored(scored: pl.DataFrame, path: str) -> None:
    p = Path(path)
    if p.suffix not in OUT_FORMATS:
        raise TaukError(f"--out {path}: write a {', '.join(OUT_FORMATS)} file")
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".parquet":
        scored.write_parquet(p)
    elif p.suffix == ".json":
        p.write_text(json.dumps(scored.to_dicts(), ensure_ascii=False, default=str))
    else:  # CSV has no lists: JSON text; text (labels, task ids, reasons from the logs) no spreadsheet evaluates,
        # kept as it is otherwise (a data export: newlines and tabs inside a cell are quoted by the writer)
        from tauk.table import csv_safe_expr

        lists = [c for c, t in scored.schema.items() if isinstance(t, pl.List)]
        flat = scored.with_columns(pl.col(c).map_elements(lambda v: json.dumps(list(v)), return_dtype=pl.String)
                                   for c in lists)  # fmt: skip
        texts = [c for c, t in flat.schema.items() if t == pl.String]
        flat.with_columns(csv_safe_expr(c) for c in texts).write_csv(p)


def cmd_score(args: argparse.Namespace) -> int:
    from tauk.cli.audit import replayed_frame
    from tauk.scoring import EVALUATION_TYPES, score

    if args.evaluation not in EVALUATION_TYPES:  # before anything is loaded
        raise TaukError(f"--evaluation {args.evaluation!r}: choose from {', '.join(EVALUATION_TYPES)}")
    res = load_inputs(args)
    basis = [b.strip() for b in args.reward_basis.split(",")] if args.reward_basis else None
    scored = score(res, evaluation=args.evaluation, reward_basis=basis, tasks=args.tasks,
                   replay=replayed_frame(res, args))  # fmt: skip
    if args.out:
        write_scored(scored, args.out)
    table = per_run(scored, res.runs)
    if args.format == "json":
        print_json(table.to_dicts())
    else:
        notes = [f"per-simulation scores written to {args.out}"] if args.out else [
            "--out FILE.parquet|.csv|.json writes the score of every simulation"]  # fmt: skip
        if not args.replay:
            notes.append("DB and ENV_ASSERTION are the record's (--replay computes them)")
        write_table(frame_table(f"tauk score: {scored.height} simulation(s), evaluation={args.evaluation}", table,
                                notes), args)  # fmt: skip
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """``tauk score PATH... [--replay [--workers N]] [--tasks F] [--evaluation E] [--out FILE]``."""
    from tauk.cli.audit import add_replay_args

    p = sub.add_parser("score", help="score every simulation (recomputed components and reward; --replay: DB and "
                                     "ENV_ASSERTION by replay) and write the scores (--out)")  # fmt: skip
    add_load_args(p)
    add_format_args(p)
    p.add_argument("--evaluation", default="all", metavar="TYPE",
                   help="τ²-bench's evaluation type: env, communicate, action, nl_assertions, all, "
                        "all_with_nl_assertions, all_ignore_basis, all_with_nl_assertions_ignore_basis")  # fmt: skip
    p.add_argument("--reward-basis", default=None, metavar="COMPONENTS",
                   help="re-score every task under this basis (comma-separated, e.g. DB,COMMUNICATE)")  # fmt: skip
    p.add_argument("--tasks", default=None, metavar="TASKS_FILE", help="re-grade with these task definitions")
    p.add_argument("--out", default=None, metavar="FILE", help="write every simulation's scores (.parquet, .csv, "
                                                               ".json)")  # fmt: skip
    add_replay_args(p)
    p.set_defaults(func=cmd_score)
    return p

"""One group's run-to-run consistency figures: its trials' outcomes, per-trial pass^1, flaky tasks, ICC, single-run
SDs and noise floors; :mod:`tauk.stats.noise.analysis` builds the result from them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from tauk.conventions import TASK_KEY

from ..options import finite_or_none
from .agreement import beta_binomial_rho, icc_oneway
from .noise_floor import FEW_FLAKY, MIN_FLAKY, noise_floor, rerun_variance

__all__ = ["trial_outcomes", "group_stats"]


def trial_outcomes(df: pl.DataFrame, by: tuple[str, ...]) -> tuple[pl.DataFrame, list[str], list[str]]:
    """One row per trial (kept or dropped): group keys, task key, ``trial_index``, ``success``, ``kept``, ``infra``."""
    keys = list(by) if by else ["__all__"]
    if not by:
        df = df.with_columns(pl.lit(0).alias("__all__"))
    tkeys = [c for c in TASK_KEY if c not in keys]
    order = [c for c in ("run_id", "trial", "simulation_id") if c in df.columns]
    df = df.sort([*keys, *tkeys, *order], nulls_last=True)
    task = [*keys, *tkeys]
    rank = pl.int_range(pl.len()).over(task).cast(pl.Int64)
    # per group: is the recorded trial index usable (present and unique within every task)?
    bad = (pl.col("trial").is_null() | pl.col("trial").is_duplicated().over(task)).any().over(keys)
    df = df.with_columns(pl.when(bad).then(rank).otherwise(pl.col("trial").cast(pl.Int64)).alias("trial_index"),
                         bad.alias("_ranked"))  # fmt: skip
    cols = [*keys, *tkeys, "trial_index", "_success", "_kept", "_infra", "_ranked"]
    out = df.select(cols).rename({"_success": "success", "_kept": "kept", "_infra": "infra", "_ranked": "ranked"})
    out = out.with_columns(pl.col("success") & pl.col("kept"))
    return out, keys, tkeys


def group_stats(g: pl.DataFrame, tkeys: list[str], alpha: float, ms: tuple[int, ...]) -> tuple[dict, pl.DataFrame, pl.DataFrame]:
    """Scalar row, per-trial frame and per-task frame of one group's outcome rows."""
    kept = g.filter(pl.col("kept"))
    per_task = (
        g.group_by(tkeys, maintain_order=True)
        .agg(pl.col("kept").sum().cast(pl.Int64).alias("n"), pl.col("success").sum().cast(pl.Int64).alias("c"))
    )
    n_no_kept = per_task.filter(pl.col("n") == 0).height
    per_task = per_task.filter(pl.col("n") > 0)
    n = per_task["n"].to_numpy().astype(np.int64)
    c = per_task["c"].to_numpy().astype(np.int64)
    T = int(n.size)
    row: dict[str, Any] = {
        "n_tasks": T,
        "n_tasks_no_kept": n_no_kept,
        "n_trials_min": int(n.min()) if T else None,
        "n_trials_max": int(n.max()) if T else None,
        "n_trials_mean": float(n.mean()) if T else None,
        "n_obs": int(n.sum()),
        "infra_error_count": int(g["infra"].sum()),
        "pass1": float(np.mean(c / n)) if T else None,
    }
    notes: list[str] = []
    # per-trial pass^1
    pt = (
        kept.group_by("trial_index")
        .agg(pl.len().cast(pl.Int64).alias("n_tasks"), pl.col("success").mean().alias("pass1"))
        .sort("trial_index")
    )
    row["n_trial_indices"] = pt.height
    row["pass1_per_trial"] = [float(x) for x in pt["pass1"]]
    wide = pt.filter(pl.col("n_tasks") * 2 >= T)["pass1"] if T else pt["pass1"]
    row["pass1_spread"] = float(wide.max() - wide.min()) if wide.len() >= 2 else None
    multi = n >= 2
    T2 = int(multi.sum())
    flaky = multi & (c > 0) & (c < n)
    row["flip_rate"] = float(flaky.sum() / T2) if T2 else None
    row["n_flaky"] = int(flaky.sum()) if T2 else None
    # ICC(1) and its beta-binomial twin
    icc = icc_oneway(n, c, alpha) if T2 else dict.fromkeys(("icc", "icc_low", "icc_high", "n0", "F"))
    row["icc"], row["icc_low"], row["icc_high"] = (finite_or_none(icc[k]) for k in ("icc", "icc_low", "icc_high"))
    row["icc_n0"] = finite_or_none(icc["n0"])
    mu, rho = beta_binomial_rho(n, c) if T2 else (None, None)
    row["bb_rho"], row["bb_mean"] = rho, mu
    # run-to-run SD and noise floor
    v = rerun_variance(n, c)
    if T2:
        vbar = float(np.nanmean(v))
        V = float(np.where(multi, v, vbar).sum())
        sd1 = math.sqrt(V) / T
        row["se_rerun"] = math.sqrt(float(np.sum(v / n))) / T if T2 == T else None
        if T2 < T:
            notes.append(f"{T - T2} task(s) with one trial: their trial variance taken as the mean of the others")
    else:
        V, sd1 = None, None
        row["se_rerun"] = None
    row["sd_single_run"] = sd1
    for m in ms:
        if m != 1:
            row[f"sd_m{m}"] = None if sd1 is None else sd1 / math.sqrt(m)
    for m in ms:
        mdd = size = None
        if V is not None and V > 0:
            s, sz = noise_floor(n, c, m, alpha)
            if s > 0:
                mdd, size = float(s) / (m * T), float(sz)
        if m == 1:
            row["mdd_single_runs"], row["mdd_single_runs_size"] = mdd, size
        else:
            row[f"mdd_m{m}"] = mdd
    if T and not T2:
        notes.append("one trial per task: the multi-trial quantities need tasks with at least 2 trials")
    elif T2 and V == 0:
        notes.append("no task varied across its trials: no run-to-run noise was seen, so no noise floor is estimated")
    elif T2 and row["n_flaky"] < MIN_FLAKY:
        notes.append(f"only {row['n_flaky']} flaky task(s): too few to estimate a noise floor")
    elif T2 and row["n_flaky"] < FEW_FLAKY:
        notes.append(f"the noise floor rests on {row['n_flaky']} flaky tasks: it is itself uncertain")
    if g["ranked"].any() and T and row["n_trials_max"] >= 2:
        notes.append("trial indices missing or repeated within tasks: per-trial pass^1 uses each task's j-th trial")
    if T == 0:
        notes.append("no kept trial")
    row["note"] = "; ".join(notes) if notes else None
    tasks = per_task.with_columns(
        (pl.col("c") / pl.col("n")).alias("rate"),
        ((pl.col("n") >= 2) & (pl.col("c") > 0) & (pl.col("c") < pl.col("n"))).alias("flaky"),
    )
    return row, pt, tasks

"""Per-check explanations of the recomputed COMMUNICATE and ACTION components: which communicate string was said
where, which gold action was matched by which tool call.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from tauk._compat import keyword_options
from tauk.scoring._prepare import Prepared

__all__ = ["action_checks", "communicate_checks"]


@keyword_options(("results", "tasks"))
def communicate_checks(results: Any, *, tasks: Any = None) -> pl.DataFrame:
    """One row per (simulation, communicate string): was it said, and where first.

    Simulations without communicate strings have no rows; simulations that cannot be recomputed (task definition
    unknown, no messages recorded) neither.

    Parameters
    ----------
    results
        A :class:`tauk.Results` (as for :func:`tauk.score`).
    tasks
        Optional other task definitions (as for :func:`tauk.score`).

    Returns
    -------
    polars.DataFrame
        ``run_id, simulation_id, task_id, info_idx, info, met, message_idx`` (the first assistant message that met
        it, null if none).

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> cc = tauk.scoring.communicate_checks(res)
    >>> cc.columns, cc.height, cc["met"].sum()
    (['run_id', 'simulation_id', 'task_id', 'info_idx', 'info', 'met', 'message_idx'], 348, 245)
    """
    prep = Prepared.build(results, tasks)
    return (
        prep.communicate_long().join(prep.trials.select("_sid", "run_id", "simulation_id", "task_id"), on="_sid")
        .sort("_sid", "info_idx")
        .select("run_id", "simulation_id", "task_id", "info_idx", "info", "met", "message_idx")
    )


@keyword_options(("results", "tasks"))
def action_checks(results: Any, *, tasks: Any = None) -> pl.DataFrame:
    """One row per (simulation, gold action): was it matched, and by which tool call first.

    Parameters
    ----------
    results
        A :class:`tauk.Results` (as for :func:`tauk.score`).
    tasks
        Optional other task definitions (as for :func:`tauk.score`).

    Returns
    -------
    polars.DataFrame
        ``run_id, simulation_id, task_id, action_idx, action_id, name, arguments, compare_args, matched, call_idx``
        (the first matching tool call, null if none).

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> ac = tauk.scoring.action_checks(res)
    >>> ac.height, ac["matched"].sum()
    (1644, 1370)
    """
    prep = Prepared.build(results, tasks)
    al = prep.action_long()
    golds = prep.golds
    cols = ["action_idx", "action_id", "name", "arguments", "compare_args"]
    if golds is None:
        golds = pl.DataFrame(schema={"_gid": pl.UInt32, **{c: pl.String for c in cols}}).with_columns(
            pl.col("action_idx").cast(pl.Int64), pl.col("compare_args").cast(pl.List(pl.String))
        )
    for c in cols:
        if c not in golds.columns:
            golds = golds.with_columns(pl.lit(None).alias(c))
    return (
        al.join(prep.trials.select("_sid", "run_id", "simulation_id", "task_id"), on="_sid")
        .join(golds.select("_gid", *cols), on="_gid")
        .sort("_sid", "_gid")
        .select("run_id", "simulation_id", "task_id", *cols, "matched", "call_idx")
    )

"""Task × agent success heatmap (per-task figures from :func:`tauk.stats.per_task`)."""

from __future__ import annotations

import re
from typing import Any

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tauk._compat import keyword_options

from ._common import (
    as_trials_frame,
    category_ticks,
    empty_message,
    escape_label,
    finish,
    label_width,
    new_panels,
    require_columns,
    size_for,
    sorted_labels,
    styled,
)
from ._presets import active_preset
from .passk import domain_sort_key

__all__ = ["success_heatmap"]

_MAX_LABELLED_ROWS = 80
_PAPER_MAX_HEIGHT = 8.5  # inches: taller than a page's text block minus a caption


def _natural(s: Any) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", "" if s is None else str(s)) if t)


@keyword_options(("trials", "k", "ax", "by", "infra", "reward", "cmap"))
@styled
def success_heatmap(
    trials: Any,
    *,
    k: int | None = None,
    ax: Axes | None = None,
    by: str = "agent",
    infra: str = "drop",
    reward: str = "reward",
    cmap: str = "viridis",
    figsize: Any = None,
) -> Figure:
    """Task × agent heatmap of per-task success: rows are tasks ordered by difficulty (mean success across agents,
    easiest at the top), columns agents (best overall on the left); cells the task's success rate c/n, or its Û_k =
    C(c,k)/C(n,k) (the task's pass^k) when ``k`` is given. Tasks an agent did not run are grey.

    Parameters
    ----------
    trials
        A trials frame, a scored frame (``tauk.score``) or a Results.
    k
        Colour by the task's pass^k instead of its success rate.
    ax
        Draw into this axes (else a new figure).
    by
        Column naming the columns of the heatmap (``"agent"`` or ``"run_id"``).
    infra
        ``"drop"`` / ``"fail"`` infrastructure errors, as in the statistics.
    reward
        Reward column deciding success (``"score_reward"`` for a re-scored frame's recomputed reward).
    cmap
        A matplotlib colormap name.
    figsize
        ``None`` (screen; the height follows the number of tasks), ``"single"``, ``"double"`` or ``(width,
        height)`` inches. Task ids are written while they fit (80 rows on screen, about 55 at the paper sizes).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.success_heatmap(tauk.load("data"), figsize="double")
    >>> fig.axes[0].images[0].get_array().shape
    (50, 3)
    """
    from tauk.stats import per_task

    df = as_trials_frame(trials)
    require_columns(df, ["task_id", by, reward], "success_heatmap")
    if reward != "reward":
        df = df.with_columns(pl.col(reward).alias("reward"))
    kk = 1 if k is None else int(k)
    pt = per_task(df, by=(by,), infra=infra, k=kk)
    col = f"U_{kk}"
    multi_domain = "domain" in pt.columns and pt["domain"].n_unique() > 1
    if "domain" not in pt.columns:
        pt = pt.with_columns(pl.lit(None, dtype=pl.String).alias("domain"))
    # an agent that ran one domain's tasks under several setups (two user models, reward bases …) has one cell per
    # setup for the same task: one column per setup then (setups are never pooled), not one cell overwritten
    split = set()
    if "setup" in pt.columns:
        twice = pt.group_by(by, "domain", "task_id").agg(pl.col("setup").n_unique().alias("_n")).filter(pl.col("_n") > 1)
        split = set(twice[by].to_list())
    keys: dict[str, str] = {}
    if split:  # short keys in the tick labels (S1, S2 …), spelled out in the caption
        rest = pt.filter(pl.col(by).is_in(list(split))).select(_setup_rest()).to_series()
        keys = {v: f"S{i}" for i, v in enumerate(sorted(set(rest.to_list())), start=1)}
        pt = pt.with_columns(pl.when(pl.col(by).is_in(list(split)))
                             .then(pl.col(by).cast(pl.String) + pl.lit(" · ") + _setup_rest().replace_strict(keys))
                             .otherwise(pl.col(by).cast(pl.String)).alias("_col"))  # fmt: skip
    else:
        pt = pt.with_columns(pl.col(by).cast(pl.String).alias("_col"))
    agents = sorted_labels(pt["_col"].to_list())
    tasks = sorted({(d, t) for d, t in zip(pt["domain"], pt["task_id"])}, key=lambda x: (domain_sort_key(x[0]), _natural(x[1])))
    n_t, n_a = len(tasks), len(agents)
    paper = active_preset().paper
    caption = ["Grey: task not run." if n_a > 1 else None]
    if split:
        names = ", ".join(sorted(map(str, split)))
        legend = "; ".join(f"{k} = {v}" for v, k in keys.items())
        caption.append(escape_label(f"One column per setup for {names}: several setups of one domain, which are not "
                                    f"repeated trials of one experiment (never pooled unless asked). {legend}.",
                                    width=10_000))  # fmt: skip
    if paper:
        h = 0.125 * n_t + 1.3
        labelled = h <= _PAPER_MAX_HEIGHT
        size = size_for((0.0, 0.0), float(np.clip(h, 2.2, _PAPER_MAX_HEIGHT)), caption=caption)
    else:
        h = float(np.clip(0.16 * n_t + 1.4, 2.4, 16.0))
        labelled = n_t <= _MAX_LABELLED_ROWS
        size = size_for((float(np.clip(1.1 * n_a + 2.6, 3.6, 12.0)), h), h, caption=caption)
    fig, ax, foot = new_panels(ax, size)
    if n_t == 0 or n_a == 0:
        empty_message(ax, "no tasks")
        return finish(fig, ax, foot, legend=False)
    ti = {t: i for i, t in enumerate(tasks)}
    ai = {a: j for j, a in enumerate(agents)}
    M = np.full((n_t, n_a), np.nan)
    for r in pt.select("domain", "task_id", "_col", col).iter_rows():
        if r[3] is not None:
            M[ti[(r[0], r[1])], ai[r[2]]] = r[3]
    with np.errstate(all="ignore"):
        task_mean = np.nanmean(np.where(np.isfinite(M), M, np.nan), axis=1)
        agent_mean = np.nanmean(M, axis=0)
    task_mean = np.where(np.isfinite(task_mean), task_mean, -1.0)
    agent_mean = np.where(np.isfinite(agent_mean), agent_mean, -1.0)
    row_order = sorted(range(n_t), key=lambda i: (-task_mean[i], i))
    col_order = sorted(range(n_a), key=lambda j: (-agent_mean[j], str(agents[j])))
    M = M[np.ix_(row_order, col_order)]
    cm = mpl.colormaps[cmap].with_extremes(bad="#D9D9D9")
    im = ax.imshow(np.ma.masked_invalid(M), aspect="auto", cmap=cm, vmin=0.0, vmax=1.0, interpolation="nearest")
    ax.grid(False)
    category_ticks(ax, [agents[j] for j in col_order], n_max=3)
    if labelled:
        width = label_width(0.6)
        labels = [escape_label(f"{tasks[i][0]}/{tasks[i][1]}" if multi_domain else tasks[i][1], width=width)
                  for i in row_order]  # fmt: skip
        ax.set_yticks(range(n_t), labels)
    else:
        ax.set_yticks([])
    ax.set_ylabel(f"task ({n_t}), easiest at the top")
    ax.set_xlabel(escape_label(by))
    for s in ax.spines.values():
        s.set_visible(False)
    ax.tick_params(length=0)
    what = "success rate (c/n)" if k is None else f"task pass^{kk} = C(c,{kk})/C(n,{kk})"
    fig_h = float(fig.get_size_inches()[1])
    cb = fig.colorbar(im, ax=ax, shrink=min(1.0, 6.0 / fig_h + 0.2), aspect=30, pad=0.02)
    cb.set_label(what)
    cb.outline.set_visible(False)
    ax.set_title(f"per-task {'success' if k is None else f'pass^{kk}'} by {escape_label(by)}", loc="left")
    return finish(fig, ax, foot, legend=False, caption=caption)


def _setup_rest() -> pl.Expr:
    """A per-task row's setup without its leading domain (the rows already show the domain)."""
    return pl.col("setup").str.strip_prefix(pl.col("domain").cast(pl.String).fill_null("") + "/")

"""Cost against pass^k with the Pareto front (lower cost, higher pass) from a :class:`~tauk.stats.Summary`."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tauk.errors import TaukError

from ._common import (
    color_key,
    empty_message,
    figure_and_axes,
    group_label,
    legend_outside,
    metric_label,
    shorten,
    styled,
)
from ._style import NEUTRAL, register_agents
from .passk import _MARKERS, domain_sort_key

__all__ = ["cost_vs_pass", "pareto_front"]

_FRONT_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1)))


def pareto_front(cost: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both (cost ≤ and value ≥, one strictly), sorted by cost."""
    cost = np.asarray(cost, dtype=float)
    value = np.asarray(value, dtype=float)
    ok = np.flatnonzero(np.isfinite(cost) & np.isfinite(value))
    order = sorted(ok, key=lambda i: (cost[i], -value[i], i))
    front: list[int] = []
    best = -np.inf
    for i in order:
        if value[i] > best:
            front.append(int(i))
            best = value[i]
    return np.array(front, dtype=np.int64)


@styled
def cost_vs_pass(summary: Any, k: int = 1, ax: Axes | None = None, interval: str = "tasks",
                 log_cost: bool | None = None) -> Figure:  # fmt: skip
    """Mean agent cost per trial (``avg_agent_cost``) against pass^k, one point per group of the Summary with its
    interval as a vertical error bar, and the Pareto front (cheaper and better) as a step line — one front per
    domain when the Summary is split by domain. Groups without cost are left out (noted under the axes).

    ``summary``: :func:`tauk.stats.summarize` output (e.g. ``by=("agent",)`` or ``("agent", "domain")``).
    ``log_cost``: log x axis (default: when costs span more than a factor 20).
    """
    from tauk.stats import Summary

    if not isinstance(summary, Summary):
        raise TaukError(f"cost_vs_pass needs a tauk.stats.Summary (it carries avg_agent_cost), got {type(summary).__name__}")
    lo_c, hi_c = ("ci_low", "ci_high") if interval == "tasks" else ("rerun_ci_low", "rerun_ci_high")
    keys = tuple(summary.by)
    df = summary.long().filter(pl.col("k") == k)
    fig, ax = figure_and_axes(ax, (6.4, 4.0))
    rows = [r for r in df.to_dicts() if r.get("avg_agent_cost") is not None and r.get("estimate") is not None]
    n_skipped = df.height - len(rows)
    if not rows:
        empty_message(ax, "no group has both a cost and an estimate")
        return fig
    labels = [group_label(r, keys) for r in rows]
    ckeys = [color_key(r, keys) for r in rows]
    colors = register_agents(ckeys)
    # one front per domain only when the Summary is split by domain (a per-agent Summary's `domain` is just a label)
    has_domain = "domain" in keys and len({r.get("domain") for r in rows}) > 1
    domains = sorted({r.get("domain") for r in rows}, key=domain_sort_key) if has_domain else [None]
    dmark = {d: _MARKERS[i % len(_MARKERS)] for i, d in enumerate(domains)}
    cost = np.array([float(r["avg_agent_cost"]) for r in rows])
    est = np.array([float(r["estimate"]) for r in rows])
    order = sorted(range(len(rows)), key=lambda i: labels[i])
    for i in order:
        r = rows[i]
        lo, hi = r.get(lo_c), r.get(hi_c)
        yerr = None if lo is None or hi is None else np.array([[est[i] - lo], [hi - est[i]]])
        ax.errorbar([cost[i]], [est[i]], yerr=yerr, fmt=dmark[r.get("domain") if has_domain else None],
                    color=colors[ckeys[i]], capsize=3, markersize=6.5, elinewidth=1.2, label=shorten(labels[i], 36), zorder=3)  # fmt: skip
    for j, d in enumerate(domains):
        idx = np.array([i for i, r in enumerate(rows) if not has_domain or r.get("domain") == d], dtype=np.int64)
        front = idx[pareto_front(cost[idx], est[idx])]
        if front.size == 0:
            continue
        label = "Pareto front" + (f" ({d})" if has_domain else "")
        ax.step(cost[front], est[front], where="post", color=NEUTRAL, linestyle=_FRONT_STYLES[j % len(_FRONT_STYLES)],
                linewidth=1.2, label=label, zorder=2)  # fmt: skip
    span = cost.max() / cost.min() if cost.min() > 0 else 1.0
    if log_cost or (log_cost is None and span > 20):
        ax.set_xscale("log")
    else:
        pad = (cost.max() - cost.min()) * 0.08 or cost.max() * 0.1 or 0.01
        ax.set_xlim(cost.min() - pad, cost.max() + pad)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(axis="x", color="#E5E5E5", linewidth=0.6)
    ax.set_xlabel("mean agent cost per trial (USD)")
    ax.set_ylabel(metric_label("pass^k", k))
    ax.set_title(f"cost vs {metric_label('pass^k', k)} (front: cheaper and better)", loc="left")
    notes = []
    if summary.ci is not None:
        notes.append(f"bars: {summary.ci:.0%} {summary.method} interval")
    if n_skipped:
        notes.append(f"{n_skipped} group(s) without cost left out")
    if notes:
        ax.text(0.0, -0.14, "; ".join(notes), transform=ax.transAxes, fontsize=7, color="#555555", va="top")
    legend_outside(ax, title=" × ".join(keys) if keys else None)
    return fig

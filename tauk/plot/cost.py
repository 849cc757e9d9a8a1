"""Cost against pass^k with the Pareto front (lower cost, higher pass) from a :class:`~tauk.stats.Summary`."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tauk._compat import keyword_options
from tauk.errors import TaukError

from ._colors import NEUTRAL, register_agents
from ._common import (
    color_key,
    count_range,
    empty_message,
    escape_label,
    finish,
    group_label,
    interval_note,
    label_width,
    metric_label,
    new_panels,
    note_size,
    size_for,
    styled,
)
from .passk import _MARKERS, _interval_cols, domain_sort_key

__all__ = ["cost_vs_pass", "pareto_front", "MIN_SIMULATIONS"]

_FRONT_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1)))
_MAX_LISTED = 8

MIN_SIMULATIONS = 20
"""Default ``min_simulations`` of :func:`cost_vs_pass` and :func:`tauk.plot.leaderboard`: a group with fewer kept
simulations is flagged (hollow / hatched, annotated with its n) and never ranked or put on a Pareto front — one
simulation that happened to succeed is not a 100 % agent."""


def check_min_simulations(value: Any) -> None:
    """``min_simulations`` must be a whole number ≥ 0 (a :class:`tauk.TaukError` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise TaukError(f"min_simulations must be a whole number ≥ 0, got {value!r}")


def pareto_front(cost: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both (cost ≤ and value ≥, one strictly), sorted by cost.
    Points with a missing (NaN) cost or value are never on the front.

    Examples
    --------
    >>> import numpy as np
    >>> from tauk.plot import pareto_front
    >>> pareto_front(np.array([1.0, 2.0, 3.0, np.nan]), np.array([0.5, 0.7, 0.6, 0.9])).tolist()
    [0, 1]
    """
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


def _listed(names: list[str]) -> str:
    more = len(names) - _MAX_LISTED
    return ", ".join(names[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


@keyword_options(("summary", "k", "ax", "interval", "log_cost"))
@styled
def cost_vs_pass(summary: Any, *, k: int = 1, ax: Axes | None = None, interval: str = "tasks",
                 log_cost: bool | None = None, min_simulations: int = MIN_SIMULATIONS, zero_cost: str = "unknown",
                 figsize: Any = None) -> Figure:  # fmt: skip
    """Mean agent cost per trial (``avg_agent_cost``) against pass^k, one point per group of the Summary with its
    interval as a vertical error bar, and the Pareto front (cheaper and better) as a step line — one front per
    domain when the Summary is split by domain. The legend gives each point's number of tasks; a caption names the
    interval and everything left out.

    Parameters
    ----------
    summary
        :func:`tauk.stats.summarize` output (e.g. ``by=("agent",)`` or ``("agent", "domain")``).
    k
        Which pass^k.
    ax
        Draw into this axes (else a new figure).
    interval
        ``"tasks"`` (ci_low/ci_high) or ``"rerun"`` (rerun_ci_low/rerun_ci_high).
    log_cost
        Log x axis (default: when costs span more than a factor 20).
    min_simulations
        Groups with fewer kept simulations are drawn hollow, annotated with their n, and kept off the front
        (default :data:`MIN_SIMULATIONS`, 20; 0 to rank everything).
    zero_cost
        ``"unknown"`` (default): a recorded mean cost of exactly 0.0 — what τ²-bench writes for models it has no
        price for — is treated as unknown: not drawn, not on the front, named in the caption. ``"free"``: drawn at
        0 (the model really cost nothing).
    figsize
        ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data"), by="agent", resamples=999)
    >>> fig = tauk.plot.cost_vs_pass(s, figsize="single")
    >>> [line.get_label() for line in fig.axes[0].lines if line.get_label().startswith("Pareto")]
    ['Pareto front']
    """
    from tauk.stats import Summary

    if not isinstance(summary, Summary):
        raise TaukError(f"cost_vs_pass needs a tauk.stats.Summary (it carries avg_agent_cost), got {type(summary).__name__}")
    if zero_cost not in ("unknown", "free"):
        raise TaukError(f"zero_cost must be 'unknown' (a recorded 0.0 is an unpriced model) or 'free', got {zero_cost!r}")
    check_min_simulations(min_simulations)
    lo_c, hi_c = _interval_cols(interval)
    keys = tuple(summary.by)
    df = summary.long().filter(pl.col("k") == k)
    allrows = [r for r in df.to_dicts() if r.get("estimate") is not None]
    no_cost = [r for r in allrows if r.get("avg_agent_cost") is None]
    zero = [r for r in allrows if r.get("avg_agent_cost") is not None and float(r["avg_agent_cost"]) == 0.0
            and zero_cost == "unknown"]  # fmt: skip
    left_out = {id(r) for r in no_cost + zero}
    rows = [r for r in allrows if id(r) not in left_out]
    few = [r for r in rows if int(r.get("n_simulations") or 0) < min_simulations]
    few_ids = {id(r) for r in few}
    n_no_estimate = df.height - len(allrows)
    labels = [group_label(r, keys) for r in rows]
    width = label_width()
    shown = [escape_label(lab, width=width) + f" (n={r.get('n_tasks')})" for lab, r in zip(labels, rows)]
    caption = []
    note = interval_note(summary, interval)
    has_ci = any(r.get(lo_c) is not None for r in rows)
    n_text = count_range(r.get("n_tasks") for r in rows)
    caption.append((f"Bars: {note}; " if note and has_ci else "") + (f"n = tasks per point ({n_text})." if n_text else ""))
    if few:
        caption.append(f"Hollow, annotated and off the front: fewer than {min_simulations} simulations.")
    if zero:
        caption.append("Recorded cost 0.0 read as unknown (unpriced model), not drawn: "
                       + _listed([escape_label(group_label(r, keys)) for r in zero])
                       + " (zero_cost='free' draws them at 0).")  # fmt: skip
    if no_cost:
        caption.append("No cost recorded, not drawn: "
                       + _listed([escape_label(group_label(r, keys)) for r in no_cost]) + ".")  # fmt: skip
    if n_no_estimate:
        caption.append(f"{n_no_estimate} group(s) without an estimate left out.")
    leg_title = escape_label(" × ".join(keys)) if keys else None
    size = size_for((6.4, 4.0), 2.4, 3.0, legend=shown, legend_title=leg_title, caption=caption)
    fig, ax, foot = new_panels(ax, size)
    if not rows:
        empty_message(ax, "no group has both a known cost and an estimate")
        return finish(fig, ax, foot, legend=False, caption=caption)
    ckeys = [color_key(r, keys) for r in rows]
    colors = register_agents(ckeys)
    # one front per domain only when the Summary is split by domain (a per-agent Summary's `domain` is just a label)
    has_domain = "domain" in keys and len({r.get("domain") for r in rows}) > 1
    domains = sorted({r.get("domain") for r in rows}, key=domain_sort_key) if has_domain else [None]
    dmark = {d: _MARKERS[i % len(_MARKERS)] for i, d in enumerate(domains)}
    cost = np.array([float(r["avg_agent_cost"]) for r in rows])
    est = np.array([float(r["estimate"]) for r in rows])
    ranked = np.array([id(r) not in few_ids for r in rows])
    if log_cost and cost.min() <= 0:
        raise TaukError("a log cost axis cannot show a cost of 0.0: use log_cost=False, or zero_cost='unknown'")
    fs = note_size()
    order = sorted(range(len(rows)), key=lambda i: labels[i])
    for i in order:
        r = rows[i]
        lo, hi = r.get(lo_c), r.get(hi_c)
        yerr = None if lo is None or hi is None else np.array([[est[i] - lo], [hi - est[i]]])
        c = colors[ckeys[i]]
        ax.errorbar([cost[i]], [est[i]], yerr=yerr, fmt=dmark[r.get("domain") if has_domain else None], color=c,
                    markerfacecolor=c if ranked[i] else "white", markeredgewidth=1.2, elinewidth=1.0,
                    alpha=1.0 if ranked[i] else 0.75, label=shown[i], zorder=3)  # fmt: skip
        if not ranked[i]:
            ax.annotate(f"n={r.get('n_simulations')} sim", xy=(cost[i], est[i]), xytext=(4, -3),
                        textcoords="offset points", ha="left", va="top", fontsize=fs, color="#555555")  # fmt: skip
    for j, d in enumerate(domains):
        idx = np.array([i for i, r in enumerate(rows) if ranked[i] and (not has_domain or r.get("domain") == d)],
                       dtype=np.int64)  # fmt: skip
        if idx.size == 0:
            continue
        front = idx[pareto_front(cost[idx], est[idx])]
        if front.size < 2:  # one point is its own front: no line to draw
            continue
        label = "Pareto front" + (f" ({escape_label(d)})" if has_domain else "")
        ax.step(cost[front], est[front], where="post", color=NEUTRAL, linestyle=_FRONT_STYLES[j % len(_FRONT_STYLES)],
                linewidth=1.1, label=label, zorder=2)  # fmt: skip
    span = cost.max() / cost.min() if cost.min() > 0 else 1.0
    if log_cost or (log_cost is None and span > 20):
        ax.set_xscale("log")
    else:
        pad = (cost.max() - cost.min()) * 0.08 or cost.max() * 0.1 or 0.01
        ax.set_xlim(cost.min() - pad, cost.max() + pad)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(axis="x", color="#E5E5E5")
    ax.set_xlabel("mean agent cost per trial (USD)")
    ax.set_ylabel(metric_label("pass^k", k))
    ax.set_title(f"cost vs {metric_label('pass^k', k)} (front: cheaper and better)", loc="left")
    return finish(fig, ax, foot, title=leg_title, caption=caption)

"""pass^k on all tasks beside pass^k on the substantive ones (those a do-nothing agent fails), per group, from a
:class:`~tauk.stats.Summary` (:mod:`tauk.stats.substantive`). Intervals are read from the summary."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tauk._compat import keyword_options
from tauk.errors import TaukError

from ._colors import register_agents
from ._common import (
    color_key,
    empty_message,
    escape_label,
    finish,
    group_label,
    interval_note,
    label_width,
    metric_label,
    new_panels,
    size_for,
    styled,
)

__all__ = ["substantive_estimates"]

_NEUTRAL = "#555555"


def _ci(row: dict[str, Any], prefix: str, interval: str) -> tuple[float, float]:
    lo, hi = ("rerun_ci_low", "rerun_ci_high") if interval == "rerun" else ("ci_low", "ci_high")
    a, b = row.get(prefix + lo), row.get(prefix + hi)
    return (np.nan if a is None else float(a), np.nan if b is None else float(b))


@keyword_options(("summary", "k", "ax", "interval"))
@styled
def substantive_estimates(summary: Any, *, k: int = 1, ax: Axes | None = None, interval: str = "tasks",
                          figsize: Any = None) -> Figure:  # fmt: skip
    """One row per group: pass^k on all tasks (filled circle) and on the substantive tasks (open square), each with
    its interval, and the do-nothing bound on the group's tasks (×: inaction-passable / tasks — what an agent that
    calls no tool and ends normally scores, at every k). Groups without task definitions show pass^k on all only,
    marked "not known".

    Parameters
    ----------
    summary
        A :class:`tauk.stats.Summary` (``summarize(res, by=("agent", "domain"))``): its substantive columns.
    k
        Which pass^k.
    ax
        Draw into this axes (else a new figure).
    interval
        ``"tasks"`` (new tasks) or ``"rerun"`` (the same tasks re-run).
    figsize
        ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data"), by=("agent", "domain"), resamples=199)
    >>> fig = tauk.plot.substantive_estimates(s, figsize="double")
    >>> len(fig.axes[0].get_yticklabels())
    6
    """
    from tauk.stats import Summary

    if not isinstance(summary, Summary) or "substantive_estimate" not in summary.pass_hat_k.columns:
        raise TaukError("substantive_estimates takes a tauk.stats.Summary (summarize(...)) with substantive figures")
    if interval not in ("tasks", "rerun"):
        raise TaukError(f"interval must be 'tasks' (new tasks) or 'rerun' (same tasks re-run), got {interval!r}")
    keys = tuple(summary.by)
    df = summary.long().filter(pl.col("k") == k)
    rows = df.to_dicts()
    labels = [group_label(r, keys) for r in rows]
    unknown = [r.get("task_definitions") in ("none", "not computed") for r in rows]
    note = interval_note(summary, interval)
    caption = [
        "Filled circle: all tasks; open square: substantive tasks (an agent that does nothing fails them); ×: the "
        "do-nothing bound (inaction-passable tasks / tasks)." + (f" Bars: {note}." if note else ""),
        "Labels: inaction-passable / tasks" + ("; 'not known': no task definitions." if any(unknown) else "."),
    ]
    names = []
    for r, lab, unk in zip(rows, labels, unknown):
        n_ip, n_t = r.get("n_tasks_inaction_passable"), r.get("n_tasks")
        tail = "not known" if unk else f"{n_ip}/{n_t}"
        names.append(f"{escape_label(lab, width=label_width(0.8))} ({tail})")
    n_rows = max(len(rows), 1)
    size = size_for((6.4, 1.2 + 0.38 * n_rows), 0.8 + 0.3 * n_rows, 0.8 + 0.3 * n_rows, caption=caption,
                    tick_labels=names)
    fig, ax, foot = new_panels(ax, size)
    if not rows:
        empty_message(ax, f"no {metric_label('pass^k', k)} estimates")
        return finish(fig, ax, foot, legend=False, caption=caption)
    colors = register_agents([color_key(r, keys) for r in rows])
    y = np.arange(len(rows))[::-1].astype(float)
    for yi, r in zip(y, rows):
        color = colors[color_key(r, keys)]
        for prefix, dy, marker, face in (("", 0.13, "o", color), ("substantive_", -0.13, "s", "white")):
            est = r.get(f"{prefix}estimate")
            if est is None:
                continue
            lo, hi = _ci(r, prefix, interval)
            ok = np.isfinite(lo) and np.isfinite(hi)
            xerr = np.array([[est - lo], [hi - est]]) if ok else None
            ax.errorbar([est], [yi + dy], xerr=xerr, fmt=marker, color=color, markerfacecolor=face,
                        elinewidth=1.0, zorder=3)  # fmt: skip
        n_ip, n_t = r.get("n_tasks_inaction_passable"), r.get("n_tasks")
        if n_ip is not None and n_t:
            ax.plot([n_ip / n_t], [yi], marker="x", color=_NEUTRAL, linestyle="none", zorder=4)
    ax.set_yticks(y, names)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(metric_label("pass^k", k))
    ax.set_title(f"{metric_label('pass^k', k)}: all / substantive tasks", loc="left")
    handles = [
        Line2D([], [], marker="o", color=_NEUTRAL, linestyle="none", label="all tasks"),
        Line2D([], [], marker="s", color=_NEUTRAL, markerfacecolor="white", linestyle="none", label="substantive"),
        Line2D([], [], marker="x", color=_NEUTRAL, linestyle="none", label="do-nothing bound"),
    ]
    return finish(fig, ax, foot, handles=handles, labels=[h.get_label() for h in handles], caption=caption)

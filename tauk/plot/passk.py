"""pass^k figures from :class:`~tauk.stats.Summary` / :class:`~tauk.stats.PassKResult`: the curve over k and the
per-domain estimates. Intervals are read from the result, never recomputed."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from tauk.conventions import DOMAIN_ORDER, domain_sort_key
from tauk.errors import TaukError

from ._common import (
    color_key,
    empty_message,
    estimates_frame,
    figure_and_axes,
    group_label,
    legend_outside,
    metric_label,
    shorten,
    styled,
)
from ._style import register_agents

__all__ = ["pass_k_curve", "domain_estimates", "DOMAIN_ORDER"]

_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _interval_cols(interval: str) -> tuple[str, str]:
    if interval == "tasks":
        return "ci_low", "ci_high"
    if interval == "rerun":
        return "rerun_ci_low", "rerun_ci_high"
    raise TaukError(f"interval must be 'tasks' (new tasks) or 'rerun' (same tasks re-run), got {interval!r}")


def _nan(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _ci_text(result: Any, interval: str) -> str | None:
    ci = getattr(result, "ci", None)
    if ci is None:
        return None
    if interval == "rerun":
        return f"{ci:.0%} fixed-task (re-run) normal interval"
    method = getattr(result, "method", "")
    return f"{ci:.0%} {method} task-bootstrap interval" if method != "t" else f"{ci:.0%} t interval"


@styled
def pass_k_curve(result: Any, ax: Axes | None = None, interval: str = "tasks", band: bool = True) -> Figure:
    """pass^k (or pass@k) against k, one line per group (agent or run), with a shaded interval band per line when
    the result carries intervals.

    Args:
        result: a :class:`tauk.stats.Summary` (``summarize(..., ci=0.95)``) or :class:`tauk.stats.PassKResult`
            (``pass_hat_k`` / ``pass_at_k``), grouped by agent, run or any keys; groups sharing an agent share its
            colour and differ in line style.
        ax: draw into this axes (else a new figure).
        interval: ``"tasks"`` (population of tasks: ci_low/ci_high) or ``"rerun"`` (same tasks re-run).
        band: draw the bands (when the result has intervals).

    Returns the Figure.
    """
    df, keys, metric = estimates_frame(result)
    lo_c, hi_c = _interval_cols(interval)
    fig, ax = figure_and_axes(ax, (6.4, 3.8))
    if df.height == 0:
        empty_message(ax, "no estimates")
        return fig
    rows = df.to_dicts()
    groups: dict[str, list[dict[str, Any]]] = {}
    ckey: dict[str, str] = {}
    for r in rows:
        lab = group_label(r, keys)
        groups.setdefault(lab, []).append(r)
        ckey.setdefault(lab, color_key(r, keys))
    colors = register_agents(ckey.values())
    style_idx: dict[str, int] = {}
    seen_per_color: dict[str, int] = {}
    for lab in groups:
        c = ckey[lab]
        style_idx[lab] = seen_per_color.get(c, 0)
        seen_per_color[c] = style_idx[lab] + 1
    all_k: set[int] = set()
    for lab, rs in groups.items():
        rs = sorted(rs, key=lambda r: r["k"])
        k = np.array([r["k"] for r in rs], dtype=float)
        all_k.update(int(x) for x in k)
        est = _nan([r["estimate"] for r in rs])
        color = colors[ckey[lab]]
        i = style_idx[lab]
        ax.plot(k, est, linestyle=_LINESTYLES[i % len(_LINESTYLES)], marker=_MARKERS[i % len(_MARKERS)],
                color=color, label=shorten(lab, 36), zorder=3)  # fmt: skip
        if band and lo_c in df.columns:
            lo = _nan([r.get(lo_c) for r in rs])
            hi = _nan([r.get(hi_c) for r in rs])
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.fill_between(k, lo, hi, where=ok, color=color, alpha=0.18, linewidth=0, interpolate=False, zorder=2)
    ax.set_xlabel("k (trials that must all succeed)" if metric == "pass^k" else "k (trials, at least one succeeds)")
    ax.set_ylabel(metric_label(metric))
    ax.set_ylim(-0.02, 1.02)
    if len(all_k) > 12:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        ax.set_xticks(sorted(all_k))
    title = f"{metric_label(metric)} by {' × '.join(keys) if keys else 'all trials'}"
    ax.set_title(title, loc="left")
    note = _ci_text(result, interval) if band else None
    if note:
        ax.text(0.0, -0.18, f"shaded: {note}", transform=ax.transAxes, fontsize=7, color="#555555", va="top")
    if len(groups) > 1 or keys:
        legend_outside(ax, title=" × ".join(keys) if keys else None)
    return fig


@styled
def domain_estimates(result: Any, k: int = 1, ax: Axes | None = None, interval: str = "tasks") -> Figure:
    """Per-domain point estimates of pass^k with interval error bars, agents side by side within each domain.

    ``result``: a Summary or PassKResult whose groups identify agent and domain (e.g. ``summarize(trials,
    by=("agent", "domain"), ci=0.95)``; a per-run Summary works too, since it records each run's agent and domain).
    """
    df, keys, metric = estimates_frame(result)
    lo_c, hi_c = _interval_cols(interval)
    if "domain" not in df.columns or df["domain"].drop_nulls().len() == 0:
        raise TaukError("domain_estimates needs per-domain groups: use summarize(trials, by=('agent', 'domain'), ci=...)")
    df = df.filter(pl.col("k") == k)
    fig, ax = figure_and_axes(ax, (6.4, 3.8))
    if df.height == 0:
        empty_message(ax, f"no {metric_label(metric, k)} estimates")
        return fig
    rows = df.to_dicts()
    series_keys = [c for c in keys if c != "domain"] or ["agent"]
    if "agent" in df.columns:
        per = {(r.get("agent"), r.get("domain")) for r in rows}
        if len(per) == len(rows):
            series_keys = ["agent"]
    series: dict[str, list[dict[str, Any]]] = {}
    ckey: dict[str, str] = {}
    for r in rows:
        lab = group_label(r, series_keys)
        series.setdefault(lab, []).append(r)
        ckey.setdefault(lab, color_key(r, series_keys))
    labels = sorted(series)
    colors = register_agents(ckey.values())
    domains = sorted({r["domain"] for r in rows}, key=domain_sort_key)
    xpos = {d: i for i, d in enumerate(domains)}
    n = len(labels)
    width = min(0.8, 0.16 * n + 0.1)
    offsets = np.linspace(-width / 2, width / 2, n) if n > 1 else np.array([0.0])
    for j, lab in enumerate(labels):
        rs = [r for r in series[lab] if r["domain"] is not None]
        x = np.array([xpos[r["domain"]] + offsets[j] for r in rs])
        est = _nan([r["estimate"] for r in rs])
        lo = _nan([r.get(lo_c) for r in rs])
        hi = _nan([r.get(hi_c) for r in rs])
        ok = np.isfinite(lo) & np.isfinite(hi)
        yerr = np.vstack([np.where(ok, est - lo, 0.0), np.where(ok, hi - est, 0.0)])
        ax.errorbar(x, est, yerr=yerr if ok.any() else None, fmt=_MARKERS[j % len(_MARKERS)], color=colors[ckey[lab]],
                    capsize=3, elinewidth=1.2, markersize=6, label=shorten(lab, 36), zorder=3)  # fmt: skip
    ax.set_xticks(range(len(domains)), [str(d) for d in domains])
    ax.set_xlim(-0.6, len(domains) - 0.4)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel(metric_label(metric, k))
    ax.set_title(f"{metric_label(metric, k)} by domain", loc="left")
    note = _ci_text(result, interval)
    if note:
        ax.text(0.0, -0.14, f"bars: {note}", transform=ax.transAxes, fontsize=7, color="#555555", va="top")
    legend_outside(ax, title=" × ".join(series_keys))
    return fig

"""pass^k figures from :class:`~tauk.stats.Summary` / :class:`~tauk.stats.PassKResult`: the curve over k and the
per-domain estimates. Intervals are read from the result, never recomputed."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from tauk._compat import keyword_options
from tauk.conventions import DOMAIN_ORDER, domain_sort_key
from tauk.errors import TaukError

from ._colors import register_agents
from ._common import (
    color_key,
    count_range,
    empty_message,
    escape_label,
    estimates_frame,
    finish,
    group_label,
    has_interval,
    interval_note,
    label_width,
    metric_label,
    new_panels,
    size_for,
    styled,
)

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


def _tasks_of(rows: list[dict[str, Any]]) -> int | None:
    ns = [r.get("n_tasks") for r in rows if r.get("n_tasks") is not None]
    return int(max(ns)) if ns else None


@keyword_options(("result", "ax", "interval", "band"))
@styled
def pass_k_curve(result: Any, *, ax: Axes | None = None, interval: str = "tasks", band: bool = True,
                 figsize: Any = None) -> Figure:  # fmt: skip
    """pass^k (or pass@k) against k, one line per group (agent or run), with a shaded interval band per line when
    the result carries intervals; a caption says which interval and on how many tasks.

    Parameters
    ----------
    result
        A :class:`tauk.stats.Summary` (``summarize(..., ci=0.95)``) or :class:`tauk.stats.PassKResult`
        (``pass_hat_k`` / ``pass_at_k``), grouped by agent, run or any keys; groups sharing an agent share its
        colour and differ in line style.
    ax
        Draw into this axes (else a new figure).
    interval
        ``"tasks"`` (population of tasks: ci_low/ci_high) or ``"rerun"`` (same tasks re-run).
    band
        Draw the bands (when the result has intervals).
    figsize
        ``None`` (screen, 6.4 in wide), ``"single"`` (3.3 in), ``"double"`` (7 in) or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data/*_airline.json"), by="agent", resamples=999)
    >>> fig = tauk.plot.pass_k_curve(s, figsize="single")
    >>> fig.get_size_inches().round(1).tolist()[0], len(fig.axes[0].lines)
    (3.3, 3)
    """
    df, keys, metric = estimates_frame(result)
    lo_c, hi_c = _interval_cols(interval)
    rows = df.to_dicts()
    groups: dict[str, list[dict[str, Any]]] = {}
    ckey: dict[str, str] = {}
    for r in rows:
        lab = group_label(r, keys)
        groups.setdefault(lab, []).append(r)
        ckey.setdefault(lab, color_key(r, keys))
    n_of = {lab: _tasks_of(rs) for lab, rs in groups.items()}
    same_n = len(set(n_of.values())) <= 1
    shown = {lab: escape_label(lab, width=label_width()) + ("" if same_n or n_of[lab] is None else f" (n={n_of[lab]})")
             for lab in groups}  # fmt: skip
    has_band = band and has_interval(df, lo_c)
    note = interval_note(result, interval) if has_band else None
    n_text = count_range(n_of.values())
    caption = []
    if note:
        caption.append(f"Shaded: {note}.")
    if n_text:
        caption.append(f"n = {n_text} per line" + ("" if same_n else " (in the legend)") + ".")
    excluded = int(df["n_tasks_excluded"].fill_null(0).max() or 0) if "n_tasks_excluded" in df.columns else 0
    if excluded:
        caption.append("Tasks with fewer than k trials are left out of that k.")
    leg_title = escape_label(" × ".join(keys)) if keys else None
    size = size_for((6.4, 3.8), 2.3, 3.0, legend=list(shown.values()) if (len(groups) > 1 or keys) else [],
                    legend_title=leg_title, caption=caption)  # fmt: skip
    fig, ax, foot = new_panels(ax, size)
    if df.height == 0:
        empty_message(ax, "no estimates")
        return finish(fig, ax, foot, legend=False)
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
                color=color, label=shown[lab], zorder=3)  # fmt: skip
        if has_band:
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
    by_text = escape_label(" × ".join(keys)) if keys else "all trials"
    ax.set_title(f"{metric_label(metric)} by {by_text}", loc="left")
    return finish(fig, ax, foot, legend=len(groups) > 1 or bool(keys), title=leg_title, caption=caption)


@keyword_options(("result", "k", "ax", "interval"))
@styled
def domain_estimates(result: Any, *, k: int = 1, ax: Axes | None = None, interval: str = "tasks",
                     figsize: Any = None) -> Figure:  # fmt: skip
    """Per-domain point estimates of pass^k with interval error bars, agents side by side within each domain; a
    caption says which interval and on how many tasks.

    Parameters
    ----------
    result
        A Summary or PassKResult whose groups identify agent and domain (e.g. ``summarize(trials, by=("agent",
        "domain"), ci=0.95)``; a per-run Summary works too, since it records each run's agent and domain).
    k
        Which pass^k.
    ax
        Draw into this axes (else a new figure).
    interval
        ``"tasks"`` or ``"rerun"``, as for :func:`pass_k_curve`.
    figsize
        ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data"), by=("agent", "domain"), resamples=999)
    >>> fig = tauk.plot.domain_estimates(s, k=1, figsize="double")
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['airline', 'retail']
    """
    df, keys, metric = estimates_frame(result)
    lo_c, hi_c = _interval_cols(interval)
    if "domain" not in df.columns or df["domain"].drop_nulls().len() == 0:
        raise TaukError("domain_estimates needs per-domain groups: use summarize(trials, by=('agent', 'domain'), ci=...)")
    df = df.filter(pl.col("k") == k)
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
    shown = [escape_label(lab, width=label_width()) for lab in labels]
    has_ci = has_interval(df, lo_c)
    note = interval_note(result, interval) if has_ci else None
    n_text = count_range(r.get("n_tasks") for r in rows)
    caption = [f"Bars: {note}." if note else None, f"n = {n_text} per estimate." if n_text else None]
    leg_title = escape_label(" × ".join(series_keys))
    size = size_for((6.4, 3.8), 2.3, 3.0, legend=shown, legend_title=leg_title, caption=caption)
    fig, ax, foot = new_panels(ax, size)
    if df.height == 0:
        empty_message(ax, f"no {metric_label(metric, k)} estimates")
        return finish(fig, ax, foot, legend=False)
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
                    elinewidth=1.0, label=shown[j], zorder=3)  # fmt: skip
    ax.set_xticks(range(len(domains)), [escape_label(d, width=label_width(0.6)) for d in domains])
    ax.set_xlim(-0.6, len(domains) - 0.4)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel(metric_label(metric, k))
    ax.set_title(f"{metric_label(metric, k)} by domain", loc="left")
    return finish(fig, ax, foot, title=leg_title, caption=caption)

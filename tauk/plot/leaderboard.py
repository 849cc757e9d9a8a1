"""Published leaderboard figures (:func:`tauk.io.leaderboard.load_leaderboard`) beside recomputed ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tauk.errors import TaukError

from ._common import color_key, empty_message, styled
from ._style import LIGHT, new_figure, register_agents
from .passk import domain_sort_key

__all__ = ["leaderboard"]

_DEFAULT_DOMAINS = ("airline", "retail", "telecom")
_MAX_LABEL = 34


def _short(s: str, reserve: int = 0) -> str:
    n = max(12, _MAX_LABEL - reserve)
    return s if len(s) <= n else s[: n - 1] + "…"


def _recomputed_rows(recomputed: Any, k: int) -> list[dict[str, Any]]:
    from tauk.stats import Summary

    if recomputed is None:
        return []
    if not isinstance(recomputed, Summary):
        raise TaukError(f"recomputed must be a tauk.stats.Summary (summarize(..., by=('agent', 'domain'))), got "
                        f"{type(recomputed).__name__}")  # fmt: skip
    df = recomputed.long().filter(pl.col("k") == k)
    if "domain" not in df.columns:
        raise TaukError("recomputed Summary must identify domains: summarize(trials, by=('agent', 'domain'), ci=...)")
    out = []
    for r in df.to_dicts():
        if r.get("domain") is None or r.get("estimate") is None:
            continue
        out.append({"domain": r["domain"], "label": color_key(r, tuple(recomputed.by)), "value": r["estimate"],
                    "lo": r.get("ci_low"), "hi": r.get("ci_high")})  # fmt: skip
    return out


@styled
def leaderboard(
    board: Any,
    recomputed: Any = None,
    domains: Any = None,
    top: int | None = 15,
    modality: str | None = None,
    k: int = 1,
    listed_only: bool = True,
    ax: Axes | None = None,
) -> Figure:
    """Published pass^k per domain from leaderboard submissions (grey bars, best first), with recomputed figures
    from a :class:`tauk.stats.Summary` placed in the same ranking (coloured bars with their interval, labelled
    "(recomputed)"). One panel per domain.

    Args:
        board: the frame of :func:`tauk.io.leaderboard.load_leaderboard` (or a path to load it from).
        recomputed: ``summarize(trials, by=("agent", "domain"), ci=0.95)`` (optional).
        domains: domains to show (default: the recomputed Summary's domains on the board, else airline, retail,
            telecom as present).
        top: keep the best ``top`` published submissions per domain (None: all).
        modality: keep only "text" or "voice" submissions (None: all).
        k: which published pass^k (1–4).
        listed_only: when the board knows the manifest, keep only submissions it lists (drops e.g. the
            ``A_EXAMPLE_*`` templates).
        ax: draw a single domain into this axes (``domains`` must then name one domain).
    """
    if isinstance(board, str | Path):
        from tauk.io.leaderboard import load_leaderboard

        board = load_leaderboard(board)
    if not isinstance(board, pl.DataFrame) or "domain" not in board.columns:
        raise TaukError("leaderboard takes the frame of load_leaderboard(...)")
    col = f"pass_{k}"
    if col not in board.columns:
        raise TaukError(f"k must be 1–4 (published pass^1 … pass^4), got {k!r}")
    if modality is not None:
        board = board.filter(pl.col("modality") == modality)
    if listed_only and "manifest_section" in board.columns and board["manifest_section"].drop_nulls().len() > 0:
        board = board.filter(pl.col("manifest_section").is_not_null())
    rec = _recomputed_rows(recomputed, k)
    on_board = set(board.filter(pl.col(col).is_not_null())["domain"].to_list())
    if domains is None:
        rd = sorted({r["domain"] for r in rec} & on_board, key=domain_sort_key)
        doms = rd or [d for d in _DEFAULT_DOMAINS if d in on_board] or sorted(on_board, key=domain_sort_key)
    else:
        doms = [domains] if isinstance(domains, str) else list(domains)
    if ax is not None and len(doms) != 1:
        raise TaukError(f"with ax=, name one domain (domains='airline'); would draw {doms}")
    panels = []
    for d in doms:
        pub = board.filter((pl.col("domain") == d) & pl.col(col).is_not_null()).sort(
            [col, "submission_date", "submission_id"], descending=[True, True, False]
        )
        if top is not None:
            pub = pub.head(top)
        names = pub["model"].to_list()
        dup = {n for n in names if names.count(n) > 1}
        items = []
        for r in pub.iter_rows(named=True):
            suffix = (" · voice" if r.get("modality") == "voice" else "") + (
                f" ({r['submission_date']})" if r["model"] in dup else ""
            )
            items.append({"label": _short(r["model"], len(suffix)) + suffix, "value": r[col], "lo": None, "hi": None, "agent": None})
        for r in rec:
            if r["domain"] == d:
                items.append({"label": _short(f"{r['label']} (recomputed)"), "value": r["value"], "lo": r["lo"],
                              "hi": r["hi"], "agent": r["label"]})  # fmt: skip
        items.sort(key=lambda it: (-it["value"], it["agent"] is None, it["label"]))
        panels.append((d, items))
    colors = register_agents([r["label"] for r in rec])
    n_rows = max((len(items) for _, items in panels), default=1)
    if ax is None:
        fig, axes = new_figure((4.3 * max(len(panels), 1), max(2.2, 0.2 * n_rows + 1.3)), 1, max(len(panels), 1))
        axes = np.atleast_1d(axes)
    else:
        fig, axes = ax.figure, np.array([ax])
    if not panels:
        empty_message(axes[0], "no published figures for these domains")
        return fig
    for a, (d, items) in zip(axes, panels):
        if not items:
            empty_message(a, f"{d}: nothing published")
            continue
        y = np.arange(len(items))[::-1]
        vals = np.array([it["value"] for it in items], dtype=float)
        cols = [colors[it["agent"]] if it["agent"] is not None else LIGHT for it in items]
        a.barh(y, vals, color=cols, height=0.7, edgecolor=["#333333" if it["agent"] else "none" for it in items],
               linewidth=0.8, zorder=2)  # fmt: skip
        for yi, it in zip(y, items):
            if it["agent"] is not None and it["lo"] is not None and it["hi"] is not None:
                a.errorbar([it["value"]], [yi], xerr=[[it["value"] - it["lo"]], [it["hi"] - it["value"]]], fmt="none",
                           ecolor="#222222", capsize=2.5, elinewidth=1.0, zorder=3)  # fmt: skip
            right = max(it["value"], it["hi"] if it["agent"] is not None and it["hi"] is not None else 0.0)
            a.text(right + 0.015, yi, f"{100 * it['value']:.1f}", va="center", ha="left", fontsize=6.5,
                   color="#333333")  # fmt: skip
        a.set_yticks(y, [it["label"] for it in items], fontsize=7)
        for tl, it in zip(a.get_yticklabels(), items):
            if it["agent"] is not None:
                tl.set_fontweight("bold")
        a.set_xlim(0, 1.12)
        a.set_ylim(-0.6, len(items) - 0.4)
        a.grid(axis="x", color="#E5E5E5", linewidth=0.6)
        a.grid(axis="y", visible=False)
        a.set_xlabel(f"pass^{k}")
        a.set_title(d, loc="left")
    if rec and ax is None:
        handles = [Patch(facecolor=LIGHT, label="published (leaderboard)"),
                   Patch(facecolor="white", edgecolor="#333333", label="recomputed here (with interval)")]  # fmt: skip
        fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False)
    sub = f"top {top} " if top is not None else ""
    fig.suptitle(f"leaderboard pass^{k}: {sub}published submissions" + (" vs recomputed" if rec else ""),
                 x=0.01, ha="left", fontsize=10)  # fmt: skip
    return fig

"""Published leaderboard figures (:func:`tauk.io.leaderboard.load_leaderboard`) beside recomputed ones.

Published figures are percentages; so is this figure's axis, and every value label is a percentage. A recomputed
entry carries its interval and its n (tasks, simulations); one with fewer than ``min_simulations`` simulations is
not ranked among the published submissions (a single simulation that succeeded is not a 100 % model).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tauk._compat import keyword_options
from tauk.conventions import CI_LEVEL as CI_LEVEL_DEFAULT
from tauk.conventions import OVERALL_DOMAINS
from tauk.errors import TaukError
from tauk.leaderboard.ranking import PAIRED_VIEW_TEST

from ._colors import LIGHT, register_agents
from ._common import (
    color_key,
    empty_message,
    escape_label,
    extra_height,
    finish,
    interval_note,
    label_lines,
    label_width,
    new_panels,
    note_size,
    plural,
    styled,
)
from ._presets import active_preset
from .cost import MIN_SIMULATIONS, check_min_simulations
from .passk import domain_sort_key

__all__ = ["leaderboard", "leaderboard_ranks"]

_DEFAULT_DOMAINS = OVERALL_DOMAINS
_HATCH = "////"
_MAX_LISTED = 8


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
    n_col = "n_tasks_right" if "n_tasks_right" in df.columns else "n_tasks"
    out = []
    for r in df.to_dicts():
        if r.get("domain") is None or r.get("estimate") is None:
            continue
        pct = (lambda v: None if v is None else 100.0 * float(v))  # noqa: E731
        out.append({"domain": r["domain"], "label": color_key(r, tuple(recomputed.by)), "value": pct(r["estimate"]),
                    "lo": pct(r.get("ci_low")), "hi": pct(r.get("ci_high")), "n_tasks": r.get(n_col),
                    "n_simulations": r.get("n_simulations")})  # fmt: skip
    return out


def _check(min_simulations: Any, too_few: Any) -> None:
    check_min_simulations(min_simulations)
    if too_few not in ("flag", "omit"):
        raise TaukError(f"too_few must be 'flag' (drawn hatched below the ranking) or 'omit', got {too_few!r}")


@keyword_options(("board", "recomputed", "domains", "top", "modality", "k", "listed_only", "ax"))
@styled
def leaderboard(
    board: Any,
    recomputed: Any = None,
    *,
    domains: Any = None,
    top: int | None = 15,
    modality: str | None = None,
    k: int = 1,
    listed_only: bool = True,
    min_simulations: int = MIN_SIMULATIONS,
    too_few: str = "flag",
    ax: Axes | None = None,
    figsize: Any = None,
) -> Figure:
    """Published pass^k per domain from leaderboard submissions (grey bars, best first), with recomputed figures
    from a :class:`tauk.stats.Summary` ranked among them (coloured bars with their interval and n). One panel per
    domain; the axis and every value label are percentages, as the leaderboard publishes them.

    Parameters
    ----------
    board
        The frame of :func:`tauk.io.leaderboard.load_leaderboard` (or a path to load it from).
    recomputed
        ``summarize(trials, by=("agent", "domain"), ci=0.95)`` (optional). Each entry is labelled with its number of
        tasks and simulations, and drawn with the Summary's interval.
    domains
        Domains to show (default: the recomputed Summary's domains on the board, else airline, retail, telecom as
        present).
    top
        Keep the best ``top`` published submissions per domain (None: all).
    modality
        Keep only "text" or "voice" submissions (None: all).
    k
        Which published pass^k (1–4).
    listed_only
        When the board knows the manifest, keep only submissions it lists (drops e.g. the ``A_EXAMPLE_*``
        templates).
    min_simulations
        Recomputed entries with fewer kept simulations are not ranked (default :data:`tauk.plot.cost.MIN_SIMULATIONS`,
        20; 0 ranks everything).
    too_few
        What to do with them: ``"flag"`` (default: drawn hatched under the ranking, after a dotted line, annotated
        "n=1 sim") or ``"omit"`` (left out, named in the caption).
    ax
        Draw a single domain into this axes (``domains`` must then name one domain).
    figsize
        ``None`` (screen: 4.3 in per domain, side by side), ``"single"`` (3.3 in, domains stacked), ``"double"``
        (7 in, side by side) or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import polars as pl, tauk
    >>> board = pl.DataFrame({"model": ["M1", "M2"], "domain": ["airline"] * 2, "pass_1": [0.9, 0.5],
    ...                       "submission_date": ["2025-01-01"] * 2, "submission_id": ["m1", "m2"]})
    >>> s = tauk.stats.summarize(tauk.load("data"), by=("agent", "domain"), resamples=999)
    >>> fig = tauk.plot.leaderboard(board, recomputed=s, figsize="single")
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()][:2]
    ['M1', 'atlas-large (recomputed)']
    >>> fig.axes[0].get_xlabel()
    'pass^1 (%)'
    """
    if isinstance(board, str | Path):
        from tauk.io.leaderboard import load_leaderboard

        board = load_leaderboard(board)
    if not isinstance(board, pl.DataFrame) or "domain" not in board.columns:
        raise TaukError("leaderboard takes the frame of load_leaderboard(...)")
    col = f"pass_{k}"
    if col not in board.columns:
        raise TaukError(f"k must be 1–4 (published pass^1 … pass^4), got {k!r}")
    _check(min_simulations, too_few)
    if modality is not None and "modality" in board.columns:
        board = board.filter(pl.col("modality") == modality)
    if listed_only and "manifest_section" in board.columns and board["manifest_section"].drop_nulls().len() > 0:
        board = board.filter(pl.col("manifest_section").is_not_null())
    for c, default in (("submission_date", None), ("submission_id", None), ("modality", None)):
        if c not in board.columns:
            board = board.with_columns(pl.lit(default, dtype=pl.String).alias(c))
    rec = _recomputed_rows(recomputed, k)
    on_board = set(board.filter(pl.col(col).is_not_null())["domain"].to_list())
    if domains is None:
        rd = sorted({r["domain"] for r in rec} & on_board, key=domain_sort_key)
        doms = rd or [d for d in _DEFAULT_DOMAINS if d in on_board] or sorted(on_board, key=domain_sort_key)
    else:
        doms = [domains] if isinstance(domains, str) else list(domains)
    if ax is not None and len(doms) != 1:
        raise TaukError(f"with ax=, name one domain (domains='airline'); would draw {doms}")
    p = active_preset()
    narrow = p.legend_below
    compact = p.paper
    width = label_width(0.85 if narrow else 0.75)
    few = lambda r: int(r.get("n_simulations") or 0) < min_simulations  # noqa: E731
    omitted: list[str] = []
    panels = []
    for d in doms:
        pub = board.filter((pl.col("domain") == d) & pl.col(col).is_not_null()).sort(
            [col, "submission_date", "submission_id"], descending=[True, True, False], nulls_last=True
        )
        if top is not None:
            pub = pub.head(top)
        names = pub["model"].to_list()
        dup = {n for n in names if names.count(n) > 1}
        ranked, flagged = [], []
        for r in pub.iter_rows(named=True):
            suffix = (" · voice" if r.get("modality") == "voice" else "") + (
                f" ({r['submission_date']})" if r["model"] in dup else ""
            )
            ranked.append({"label": escape_label(r["model"], width=max(8, width - len(suffix))) + suffix,
                           "value": 100.0 * r[col], "kind": "published", "agent": None})  # fmt: skip
        for r in rec:
            if r["domain"] != d:
                continue
            item = {**r, "label": escape_label(r["label"], width=max(12, width - 13)) + " (recomputed)",
                    "agent": r["label"], "kind": "few" if few(r) else "recomputed"}  # fmt: skip
            if item["kind"] == "recomputed":
                ranked.append(item)
            elif too_few == "flag":
                flagged.append(item)
            else:
                omitted.append(f"{escape_label(r['label'])} ({escape_label(d)}, "
                               f"{plural(r.get('n_simulations'), 'simulation')})")  # fmt: skip
        ranked.sort(key=lambda it: (-it["value"], it["agent"] is None, it["label"]))
        flagged.sort(key=lambda it: it["label"])
        panels.append((d, ranked, flagged))
    colors = register_agents([r["label"] for r in rec])

    has_rec = any(it["kind"] != "published" for _, a, b in panels for it in a + b)
    has_few = any(b for _, _, b in panels)
    caption = [f"Grey: published pass^{k} (leaderboard" + (f", {modality}" if modality else "")
               + (f", best {top} per domain" if top is not None else "") + ")."]  # fmt: skip
    if has_rec:
        note = interval_note(recomputed)
        caption.append("Coloured: recomputed here from the trials" + (f"; bars: {note}" if note else "")
                       + "; n = tasks (simulations).")  # fmt: skip
        if any(it.get("lo") is None for _, a, b in panels for it in a + b if it["kind"] != "published"):
            caption.append("Entries on fewer than 2 tasks have no interval.")
    if has_few:
        caption.append(f"Hatched, under the dotted line, not ranked: fewer than {min_simulations} simulations.")
    if omitted:
        more = len(omitted) - _MAX_LISTED
        caption.append(f"Not shown, fewer than {min_simulations} simulations: " + "; ".join(omitted[:_MAX_LISTED])
                       + (f"; and {more} more" if more > 0 else "") + ".")  # fmt: skip
    handles = [Patch(facecolor=LIGHT, label="published (leaderboard)")]
    if has_rec:
        handles.append(Patch(facecolor="white", edgecolor="#333333", label="recomputed here (bar: interval)"))
    if has_few:
        handles.append(Patch(facecolor="white", edgecolor="#777777", hatch=_HATCH,
                             label=f"< {min_simulations} simulations, not ranked"))  # fmt: skip
    leg_labels = [h.get_label() for h in handles]

    n_panels = max(len(panels), 1)
    rows_of = [max(1, len(a) + len(b)) for _, a, b in panels] or [1]
    if narrow:
        nrows, ncols = n_panels, 1
    elif p.name == "screen":
        nrows, ncols = 1, n_panels
    else:  # a panel needs ~3.4 in: labels, bars, the value column
        ncols = max(1, min(n_panels, int((p.width or 7.0) // 3.4)))
        nrows = math.ceil(n_panels / ncols)
    lines = label_lines(it["label"] for _, a, b in panels for it in a + b)  # a long name wraps, never cut
    row_h = (0.145 if compact else 0.2) * (1 + 0.75 * (lines - 1))
    if nrows == 1:
        body = max(2.2 if not compact else 1.6, row_h * max(rows_of) + 1.0)
        ratios = None
    else:
        per_row = [max(rows_of[i * ncols:(i + 1) * ncols]) for i in range(nrows)]
        body = sum(row_h * r + 0.75 for r in per_row) + 0.25
        ratios = [row_h * r + 0.75 for r in per_row]
    w = p.width if p.width is not None else 4.3 * n_panels
    if p.height is not None:
        size = (p.width, p.height)
    else:
        size = (w, body + extra_height(w, legend=leg_labels if ax is None else [], caption=caption,
                                       legend_below=True))  # fmt: skip
    fig, axes, foot = new_panels(ax, size, nrows, ncols, height_ratios=ratios)
    axes = np.atleast_1d(axes).ravel()
    if not panels:
        empty_message(axes[0], "no published figures for these domains")
        return finish(fig, axes[0], foot, legend=False, caption=caption)
    fs = note_size()
    for a in axes[len(panels):]:
        a.set_axis_off()
    for a, (d, ranked, flagged) in zip(axes, panels):
        items = ranked + flagged
        a.set_title(escape_label(d), loc="left")
        if not items:
            empty_message(a, "nothing published")
            continue
        y = np.arange(len(items))[::-1].astype(float)
        for yi, it in zip(y, items):
            kind = it["kind"]
            if kind == "published":
                a.barh([yi], [it["value"]], color=LIGHT, height=0.7, edgecolor="none", zorder=2)
            elif kind == "recomputed":
                a.barh([yi], [it["value"]], color=colors[it["agent"]], height=0.7, edgecolor="#333333",
                       linewidth=0.7, zorder=2)  # fmt: skip
            else:
                a.barh([yi], [it["value"]], color="white", height=0.7, edgecolor=colors[it["agent"]], hatch=_HATCH,
                       linewidth=0.7, zorder=2)  # fmt: skip
            has_iv = kind != "published" and it.get("lo") is not None and it.get("hi") is not None
            if has_iv:
                a.errorbar([it["value"]], [yi], xerr=[[it["value"] - it["lo"]], [it["hi"] - it["value"]]],
                           fmt="none", ecolor="#222222", capsize=2.0, elinewidth=0.9, zorder=3)  # fmt: skip
            if kind == "published":
                txt = f"{it['value']:.1f}"
            else:
                n = f"n={it.get('n_tasks')} ({it.get('n_simulations')})"
                if kind == "few":
                    txt = f"{it['value']:.1f}, n={it.get('n_simulations')} sim"
                elif has_iv and not compact:
                    txt = f"{it['value']:.1f} [{it['lo']:.1f}, {it['hi']:.1f}], {n}"
                else:
                    txt = f"{it['value']:.1f}, {n}"
            # a column of value labels right of the axes: a fixed margin, so the layout converges
            a.annotate(txt, xy=(1.0, yi), xycoords=("axes fraction", "data"), xytext=(3, 0), textcoords="offset points",
                       va="center", ha="left", fontsize=fs, color="#333333", annotation_clip=False,
                       fontweight="bold" if kind != "published" else "normal")  # fmt: skip
        a.set_yticks(y, [it["label"] for it in items])
        for tl, it in zip(a.get_yticklabels(), items):
            if it["kind"] != "published":
                tl.set_fontweight("bold")
        if flagged:
            a.axhline(len(flagged) - 0.5, color="#888888", linewidth=0.7, linestyle=":", zorder=1)
        a.set_xlim(0, 100)
        a.set_xticks([0, 50, 100])
        a.set_xticks([25, 75], minor=True)
        a.grid(axis="x", which="minor", color="#F0F0F0")
        a.set_ylim(-0.6, len(items) - 0.4)
        a.grid(axis="x", color="#E5E5E5")
        a.grid(axis="y", visible=False)
        a.set_xlabel(f"pass^{k} (%)")
    if ax is None:
        fig.suptitle(f"pass^{k}: published leaderboard" + (" and recomputed here" if has_rec else ""), x=0.02,
                     ha="left", fontsize=float(mpl.rcParams["axes.titlesize"]))  # fmt: skip
    return finish(fig, axes[0], foot, handles=handles if ax is None else None, labels=leg_labels,
                  legend=ax is None, legend_below=True, caption=caption, axes=list(axes[: len(panels)]))


# ---- ranked rows with intervals, tie groups shaded (tauk.leaderboard.domain_ranking) -----------------------------
_TIER_SHADES = ("#EEF2F7", "#FFFFFF")
_RANK_COLUMNS = ("domain", "modality", "submission_id", "estimate", "ci_low", "ci_high", "tier", "possibly_best",
                 "rank_low", "rank_high")  # fmt: skip


def _row_labels(recs: list[dict[str, Any]], width: int) -> list[str]:
    """The model name of each row; where a model appears twice, the submission's own name (the id before its first
    ``_``), and its date too where that still repeats."""
    names = [r.get("model") or r["submission_id"] for r in recs]
    stems = [str(r["submission_id"]).split("_", 1)[0] for r in recs]
    out = []
    for r, n, stem in zip(recs, names, stems):
        if names.count(n) > 1:
            n = stem
            if sum(1 for m, st in zip(names, stems) if st == stem) > 1:
                n = f"{stem} ({str(r['submission_id']).rsplit('_', 1)[-1]})"
        out.append(escape_label(n, width=width))
    return out


@keyword_options(("ranking", "domains", "modality", "paired", "top", "ax"))
@styled
def leaderboard_ranks(
    ranking: Any,
    *,
    domains: Any = None,
    modality: str | None = "text",
    paired: bool = False,
    top: int | None = None,
    ax: Axes | None = None,
    figsize: Any = None,
) -> Figure:
    """Leaderboard rows ranked per domain with their intervals, tie groups shaded: the result of
    :func:`tauk.leaderboard.domain_ranking` (or ``analyze(...).ranking``) drawn — one panel per domain, one row per
    submission (best first), a dot at pass^k and a bar for its interval, bands alternating per tie group (a new group
    after each adjacent pair the data can separate), the possibly-best rows in bold and each row's rank interval at
    the right.

    Parameters
    ----------
    ranking
        A ``DomainRanking`` (anything with ``to_frame()`` giving its columns, and ``ci``, ``k``, ``question``).
    domains
        Domains to draw (default: every ranked domain).
    modality
        ``"text"`` (default), ``"voice"`` or None (both: drawn as separate panels).
    paired
        Draw the paired view (tie groups and rank intervals from the paired tests where trajectories exist).
    top
        Keep the best ``top`` rows of each panel.
    ax, figsize
        As for every figure (``ax``: one panel only).

    Examples
    --------
    >>> import tauk
    >>> from tauk.leaderboard import analyze, board_from_runs
    >>> runs = board_from_runs(tauk.load("data"))
    >>> a = analyze(runs.board, trajectories=runs.trajectories, tasks=runs.tasks)
    >>> fig = tauk.plot.leaderboard_ranks(a.ranking, figsize="single")
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['atlas-large', 'atlas-small', 'baseline']
    """
    if not hasattr(ranking, "to_frame"):
        raise TaukError("leaderboard_ranks takes the result of tauk.leaderboard.domain_ranking (or analyze().ranking)")
    f = ranking.to_frame()
    suffix = "_paired" if paired else ""
    missing = [c for c in _RANK_COLUMNS if c not in f.columns]
    if missing:
        raise TaukError(f"leaderboard_ranks: the ranking lacks {missing}")
    if modality is not None:
        f = f.filter(pl.col("modality") == modality)
    doms = sorted(f["domain"].unique().to_list(), key=domain_sort_key) if domains is None else (
        [domains] if isinstance(domains, str) else list(domains))  # fmt: skip
    panels = []
    for d in doms:
        for mod in sorted(f.filter(pl.col("domain") == d)["modality"].unique().to_list()):
            part = f.filter((pl.col("domain") == d) & (pl.col("modality") == mod)).sort(
                ["estimate", "submission_id"], descending=[True, False])  # fmt: skip
            if top is not None:
                part = part.head(top)
            panels.append((d if modality is not None else f"{d} ({mod})", part))
    if ax is not None and len(panels) != 1:
        raise TaukError(f"with ax=, draw one panel (give domains= and modality=); would draw {len(panels)}")
    p = active_preset()
    compact = p.paper
    level = getattr(ranking, "ci", CI_LEVEL_DEFAULT)
    k = getattr(ranking, "k", 1)
    question = getattr(ranking, "question", "population")
    test = (f"the {PAIRED_VIEW_TEST} where both rows have trajectories, else " if paired else "") + (
        "Welch's t on per-task values, unpaired (conservative: the rows ran the same tasks)"
        if question == "population" else "a z test on the re-run standard errors")  # fmt: skip
    caption = [f"Dots: pass^{k} recovered from each row's published pass^1…pass^n; bars: its {level:.0%} interval "
               "for a new draw of tasks (tauk's default).",
               f"Shaded bands: tie groups — a new group after each adjacent pair separable at α = {1 - level:g} "
               f"(Holm over the domain's adjacent pairs; {test}). Bold: the rank interval reaches 1; right: rank "
               "[interval]."]  # fmt: skip
    n_panels = max(len(panels), 1)
    rows_of = [max(1, part.height) for _, part in panels] or [1]
    narrow = p.legend_below
    if narrow or p.name != "screen":
        nrows, ncols = n_panels, 1
    else:
        nrows, ncols = 1, n_panels
    width = label_width(0.8 if narrow else 0.7)
    labels_of = [_row_labels(part.to_dicts(), width) for _, part in panels]
    lines = label_lines(x for labs in labels_of for x in labs)  # a long name wraps over lines, never cut
    row_h = (0.16 if compact else 0.22) * (1 + 0.75 * (lines - 1))
    if nrows == 1:
        body, ratios = max(2.0, row_h * max(rows_of) + 1.0), None
    else:
        ratios = [row_h * r + 0.7 for r in rows_of]
        body = sum(ratios) + 0.2
    w = p.width if p.width is not None else 4.6 * n_panels
    size = (p.width, p.height) if p.height is not None else (w, body + extra_height(w, caption=caption))
    fig, axes, foot = new_panels(ax, size, nrows, ncols, height_ratios=ratios)
    axes = np.atleast_1d(axes).ravel()
    if not panels:
        empty_message(axes[0], "no ranked rows")
        return finish(fig, axes[0], foot, legend=False, caption=caption)
    fs = note_size()
    for a, (title, part), row_labels in zip(axes, panels, labels_of):
        recs = part.to_dicts()
        y = np.arange(len(recs))[::-1].astype(float)
        tiers = [r[f"tier{suffix}"] for r in recs]
        start = 0
        for i in range(1, len(recs) + 1):  # one band per tie group
            if i == len(recs) or tiers[i] != tiers[start]:
                a.axhspan(y[i - 1] - 0.5, y[start] + 0.5, color=_TIER_SHADES[(tiers[start] - 1) % 2], zorder=0,
                          linewidth=0)  # fmt: skip
                start = i
        for yi, r in zip(y, recs):
            est, lo, hi = (100 * r[c] if r[c] is not None else None for c in ("estimate", "ci_low", "ci_high"))
            if lo is not None and hi is not None:
                a.plot([lo, hi], [yi, yi], color="#555555", linewidth=1.2, solid_capstyle="butt", zorder=2)
            best = r[f"rank_low{suffix}"] == 1
            a.plot([est], [yi], "o", color="#222222" if best else "#777777", markersize=3.5 if compact else 4.5,
                   zorder=3)  # fmt: skip
            a.annotate(f"{r['rank']:g} [{r[f'rank_low{suffix}']}, {r[f'rank_high{suffix}']}]", xy=(1.0, yi),
                       xycoords=("axes fraction", "data"), xytext=(3, 0), textcoords="offset points", va="center",
                       ha="left", fontsize=fs, color="#333333", annotation_clip=False)  # fmt: skip
        a.set_yticks(y, row_labels)
        for tl, r in zip(a.get_yticklabels(), recs):
            if r[f"rank_low{suffix}"] == 1:
                tl.set_fontweight("bold")
        a.set_ylim(-0.5, len(recs) - 0.5)
        a.set_xlim(0, 100)
        a.set_xticks([0, 25, 50, 75, 100])
        a.grid(axis="x", color="#E5E5E5", zorder=1)
        a.grid(axis="y", visible=False)
        a.set_title(escape_label(title), loc="left")
        a.set_xlabel(f"pass^{k} (%)")
    for a in axes[len(panels):]:
        a.set_axis_off()
    if ax is None:
        fig.suptitle(f"pass^{k} by leaderboard row: intervals, tie groups" + (" (paired view)" if paired else ""),
                     x=0.02, ha="left", fontsize=float(mpl.rcParams["axes.titlesize"]))  # fmt: skip
    return finish(fig, axes[0], foot, legend=False, caption=caption, axes=list(axes[: len(panels)]))

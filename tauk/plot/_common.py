"""Shared helpers: reading result objects into frames, labels, axes set-up, legends and captions. No statistics are
computed here.

Every piece of text that comes from the data (agent, run, domain, task ids, categories) reaches matplotlib through
:func:`escape_label`, so a ``$`` in a model name is a dollar sign, not mathtext, and a newline does not break the
layout.
"""

from __future__ import annotations

import functools
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import matplotlib as mpl
import matplotlib.transforms as mtransforms
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties

from tauk.errors import TaukError
from tauk.stats import as_trials
from tauk.stats.comparisons.results import TEST_NAMES

from ._figure import TaukFigure, figure_preset
from ._presets import MIN_FONT_SIZE, active_preset, style

F = TypeVar("F", bound=Callable[..., Any])

LABEL_SEP = " · "


_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t\v\f\x85\u2028\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069]")  # bidi too: matplotlib obeys them
_MAX_LABEL = 80


def escape_label(value: Any, *, width: int | None = None) -> str:
    r"""Untrusted text (agent, run, domain, task id, category) as a matplotlib label that shows exactly that text.

    * ``$`` becomes ``\$``: matplotlib shows a dollar sign instead of parsing ``$...$`` as mathtext (which fails
      on unknown symbols such as ``$\x$`` and would otherwise take down a whole report);
    * newlines, tabs and other line breaks become spaces and other control characters U+FFFD, so a label stays
      on its line; so do bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which matplotlib
      obeys: one in a task id would draw the rest of its label, a count or a score, reversed;
    * a leading ``_`` is kept visible (matplotlib's legends skip labels starting with an underscore);
    * ``None`` is shown as ``—``; a label longer than ``width`` characters (default 80) is wrapped over lines of at
      most ``width`` (:func:`wrap_label`: after a separator where it can), never cut in the middle — what tells two
      labels apart is often there (``telecom-solo`` / ``telecom``, a fine-tune's suffix).

    Every figure function passes the labels it draws through this helper.

    Examples
    --------
    >>> from tauk.plot import escape_label
    >>> escape_label("$\\x$ model"), escape_label("a\nb|c"), escape_label("_private")
    ('\\$\\x\\$ model', 'a b|c', ' _private')
    >>> print(escape_label("ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm", width=20))
    ft:gpt-4.1-2025-04-
    14:sierra:tau2-full-
    sft:BzrYdMNm
    """
    s = "—" if value is None else str(value)
    s = _CONTROLS.sub("\ufffd", _LINE_BREAKS.sub(" ", s))
    s = wrap_label(s, _MAX_LABEL if width is None else max(4, int(width)))
    s = s.replace("$", "\\$")
    if s.startswith("_"):
        s = " " + s
    return s


_WRAP_AFTER = re.compile(r"(?<=[-_./:·|, ;=+\]\)])")
_MAX_LINES = 6


def wrap_label(text: str, width: int = 30, max_lines: int | None = None) -> str:
    """``text`` over lines of at most ``width`` characters, each line ending after a separator (``- _ . / : · |``,
    a space, …) where one falls in it, a longer run split where the line is full; every character kept. Beyond
    ``max_lines`` (default: :data:`_MAX_LINES`, or as many as 80 characters take; a label of hundreds of
    characters) the last line ends with ``…``: cut at the end, never in the middle.

    >>> print(wrap_label("Qwen3-Max-Thinking-Preview", 12))
    Qwen3-Max-
    Thinking-
    Preview
    >>> wrap_label("gpt-4.1-mini", 12)
    'gpt-4.1-mini'
    """
    if len(text) <= width:
        return text
    width = max(4, int(width))
    lines: list[str] = []
    cur = ""
    for tok in _WRAP_AFTER.split(text):
        while tok:
            if len(cur) + len(tok) <= width:
                cur, tok = cur + tok, ""
            elif cur:
                lines.append(cur)
                cur = ""
            else:  # one run longer than a line: split it where the line is full
                lines.append(tok[:width])
                tok = tok[width:]
    if cur:
        lines.append(cur)
    lines = [ln.strip() for ln in lines if ln.strip()]
    max_lines = max(_MAX_LINES, -(-_MAX_LABEL // width)) if max_lines is None else max(1, int(max_lines))
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1] + "…"
    return "\n".join(lines)


def label_lines(labels: Iterable[str]) -> int:
    """The most lines any of ``labels`` takes (1 for none)."""
    return max((str(x).count("\n") + 1 for x in labels), default=1)


def label_width(scale: float = 1.0) -> int:
    """Characters of a label kept at the active size preset (``scale`` for labels sharing a line)."""
    return max(8, int(active_preset().label_chars * scale))


def note_size() -> float:
    """Font size (points) of captions, value labels and annotations at the active preset (never below 7 pt)."""
    return max(MIN_FONT_SIZE, active_preset().note_size)


def styled(fn: F) -> F:
    """Run a plot function inside :func:`tauk.plot.style` so every artist it creates gets the house style, at the
    size preset of its ``figsize=`` (or of the figure of its ``ax=``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        figsize = kwargs.get("figsize")
        ax = kwargs.get("ax")
        if ax is not None and figsize is not None:
            raise TaukError(f"{fn.__name__}: give figsize= (a new figure) or ax= (draw into an existing one), not both")
        with style(figure_preset(ax.figure) if ax is not None else figsize):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def size_for(screen: tuple[float, float], single: float, double: float | None = None, *,
             legend: Sequence[str] = (), legend_title: str | None = None, caption: Iterable[str | None] = (),
             tick_labels: Sequence[str] = ()) -> tuple[float, float]:  # fmt: skip
    """The figure size at the active preset: ``screen`` for the screen, the preset's width and ``single`` /
    ``double`` inches of height for the paper sizes — each plus the room the caption (and a legend set under the
    plot) will take, and at least as tall as the y ``tick_labels`` stacked (one per row; a wrapped label takes its
    lines) — and an explicit ``(w, h)`` exactly as given."""
    p = active_preset()
    if p.height is not None and p.width is not None:
        return (p.width, p.height)
    if p.width is None:
        w, h = screen
    else:
        w, h = p.width, float(single if p.name == "single" else (double if double is not None else single))
    if legend and not p.legend_below:  # a legend to the right: the figure at least as tall as it (wrapped labels)
        h = max(h, _legend_height(legend, legend_title, float(mpl.rcParams["legend.fontsize"])) + 0.7)
    if tick_labels:  # rows of wrapped labels must not overlap: title, axis label and margins around them
        h = max(h, _ticks_height(tick_labels, FontProperties(size=mpl.rcParams["ytick.labelsize"]).get_size_in_points())
                + 1.1)  # fmt: skip
    return (w, h + extra_height(w, legend=legend, legend_title=legend_title, caption=caption))


def _ticks_height(labels: Sequence[str], size: float) -> float:
    """Inches y tick ``labels`` (one per row, evenly spaced) take without overlapping: every row as tall as the
    tallest wrapped label, plus a gap."""
    return len(labels) * (label_lines(labels) * 1.2 + 0.6) * size / 72


def _legend_height(labels: Sequence[str], title: str | None, size: float) -> float:
    """Inches a one-column legend of ``labels`` (wrapped labels take their lines) and ``title`` takes."""
    entries = len(labels)
    lines = sum(label_lines([x]) for x in labels)
    heads = label_lines([title]) if title else 0
    return (entries * 1.55 + (lines - entries) * 1.2 + heads * 1.55) * size / 72 + 0.1


def extra_height(width_in: float, *, legend: Sequence[str] = (), legend_title: str | None = None,
                 caption: Iterable[str | None] = (), legend_below: bool | None = None) -> float:  # fmt: skip
    """Inches the caption (and, at narrow presets, a legend under the plot) add to a figure ``width_in`` wide."""
    h = 0.0
    text = "\n".join(c for c in caption if c)
    if text:
        size = note_size()
        lines = wrap(text, width_in - 0.15, size).count("\n") + 1
        h += lines * size * 1.2 / 72 + 0.08
    below = active_preset().legend_below if legend_below is None else legend_below
    if below and legend:
        size = float(mpl.rcParams["legend.fontsize"])
        ncol = _legend_cols(list(legend) + ([legend_title] if legend_title else []), width_in - 0.4, size)
        # a wrapped label takes its lines (matplotlib fills the legend column by column)
        per_col = math.ceil(len(legend) / ncol)
        cols = [list(legend)[i * per_col:(i + 1) * per_col] for i in range(ncol)]
        h += max((_legend_height(c, legend_title, size) for c in cols), default=0.0)
    return h


FOOT_LABEL = "tauk-foot"


def new_panels(ax: Axes | None, size: tuple[float, float], nrows: int = 1, ncols: int = 1,
               height_ratios: Sequence[float] | None = None) -> tuple[Figure, Any, Axes | None]:  # fmt: skip
    """(figure, axes, foot): a new figure of ``size`` at the active preset with ``nrows`` × ``ncols`` axes and, under
    them, a zero-height *foot* row (axis off) that holds a legend set under the plot; or ``ax``'s figure and ``ax``
    with no foot. :func:`finish` removes the foot when nothing was put in it."""
    if ax is not None:
        return ax.figure, ax, None  # type: ignore[return-value]
    p = active_preset()
    with style(p):
        fig = TaukFigure(figsize=size, layout="constrained")
        fig.tauk_preset = p
        ratios = [float(x) for x in height_ratios] if height_ratios is not None else [1.0] * nrows
        gs = fig.add_gridspec(nrows + 1, ncols, height_ratios=ratios + [1e-3 * max(ratios)])
        grid = np.empty((nrows, ncols), dtype=object)
        for i in range(nrows):
            for j in range(ncols):
                grid[i, j] = fig.add_subplot(gs[i, j])
        foot = fig.add_subplot(gs[nrows, :], label=FOOT_LABEL)
        foot.set_axis_off()
        foot.set_navigate(False)
    axes = grid[0, 0] if nrows == ncols == 1 else (grid.ravel() if 1 in (nrows, ncols) else grid)
    return fig, axes, foot


def wrap(text: str, width_in: float, size: float | None = None) -> str:
    """``text`` wrapped to lines that fit ``width_in`` inches at ``size`` points (DejaVu Sans, generously)."""
    size = size or note_size()
    chars = max(20, int(width_in * 72 / (size * 0.6)))
    return "\n".join(textwrap.fill(part, chars, break_on_hyphens=False) for part in text.split("\n"))


def _legend_cols(labels: Sequence[str], avail_in: float, size: float) -> int:
    longest = max((len(line) for x in labels for line in str(x).split("\n")), default=1)
    col_pt = longest * 0.6 * size + 3.2 * size  # text + handle, padding and column spacing
    return int(max(1, min(len(labels), math.floor(avail_in * 72 / col_pt))))


def finish(fig: Figure, ax: Axes, foot: Axes | None, *, handles: list[Any] | None = None,
           labels: list[str] | None = None, title: str | None = None, caption: Iterable[str | None] = (),
           legend: bool = True, legend_below: bool | None = None, axes: Iterable[Axes] | None = None
           ) -> Figure:  # fmt: skip
    """The last step of every figure: the legend (to the right of ``ax``, or in the foot under the plot for narrow
    presets), the caption (what the intervals are, how many tasks, what was left out) under everything, and the
    tick label sizes pinned to the preset so the figure draws the same outside :func:`style`."""
    p = active_preset()
    size = note_size()
    fig_w = float(fig.get_size_inches()[0])
    placed_below = False
    if legend:
        if handles is None:
            handles, labels = ax.get_legend_handles_labels()
        if handles:
            labels = list(labels or [])
            below = p.legend_below if legend_below is None else legend_below
            if foot is not None and below:
                leg_size = mpl.rcParams["legend.fontsize"]
                ncol = _legend_cols(labels + ([title] if title else []), fig_w - 0.4, leg_size)
                # centred on the figure, not on the foot: the foot spans the axes, which long tick labels push
                # right, and a legend centred there can end past the canvas (flaky_tasks at one column)
                anchor = mtransforms.blended_transform_factory(fig.transFigure, foot.transAxes)
                foot.legend(handles, labels, title=title, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=ncol,
                            bbox_transform=anchor, borderaxespad=0.0, frameon=False)  # fmt: skip
                placed_below = True
            else:
                legend_outside(ax, handles, labels, title=title)
    text = "\n".join(c for c in caption if c)
    if text:
        if foot is not None:
            fig.supxlabel(wrap(text, fig_w - 0.15, size), x=0.02 / fig_w * 1.0, ha="left", va="bottom",
                          fontsize=size, color="#444444", linespacing=1.15)  # fmt: skip
        else:
            width = float(ax.get_position().width * fig_w) if ax.get_position().width > 0 else fig_w
            ax.annotate(wrap(text, max(width, 2.5), size), xy=(0.0, 0.0), xycoords=("axes fraction", ax.xaxis.label),
                        xytext=(0, -3), textcoords="offset points", ha="left", va="top", fontsize=size,
                        color="#444444", annotation_clip=False, linespacing=1.15)  # fmt: skip
    if foot is not None and not placed_below:
        foot.remove()
    for a in axes if axes is not None else [a for a in fig.axes if a.get_label() != FOOT_LABEL]:
        a.tick_params(axis="x", which="both", labelsize=mpl.rcParams["xtick.labelsize"])
        a.tick_params(axis="y", which="both", labelsize=mpl.rcParams["ytick.labelsize"])
    return fig


def plural(n: Any, word: str) -> str:
    """``"1 task"``, ``"40 tasks"``."""
    return f"{n} {word}" + ("" if n == 1 else "s")


def count_range(values: Iterable[Any], word: str = "task") -> str | None:
    """``"40 tasks"`` when all equal, ``"20–50 tasks"`` otherwise (None without values)."""
    vals = sorted({int(v) for v in values if v is not None})
    if not vals:
        return None
    if len(vals) == 1:
        return plural(vals[0], word)
    return f"{vals[0]}–{vals[-1]} {word}s"


def interval_note(result: Any, interval: str = "tasks", what: str = "task-bootstrap") -> str | None:
    """What a result's intervals are, for a caption: ``"95% beta-binomial model interval (new tasks)"`` (the default
    method), ``"95% BCa task-bootstrap interval (1999 resamples)"``, ``"95% paired t interval"`` (a comparison), …
    for a result object carrying ``ci`` / ``method`` / ``resamples`` (None when it carries no interval)."""
    ci = getattr(result, "ci", None)
    test = getattr(result, "test", None)
    if ci is None and test is None:
        return None
    ci = 0.95 if ci is None else ci  # a comparison always has its interval (at the default level)
    method = str(getattr(result, "method", "") or "")
    if method == "model" and test is not None:  # a comparison: the paired test's own interval
        return f"{ci:.0%} {TEST_NAMES.get(test, test)} interval"
    if method == "model":
        return f"{ci:.0%} beta-binomial model interval ({'these tasks re-run' if interval == 'rerun' else 'new tasks'})"
    if interval == "rerun":
        return f"{ci:.0%} fixed-task (re-run) normal interval"
    resamples = getattr(result, "resamples", None)
    if method == "t":
        return f"{ci:.0%} t interval over tasks"
    name = {"bca": "BCa", "percentile": "percentile"}.get(method, method)
    tail = f" ({resamples} resamples)" if resamples else ""
    return f"{ci:.0%} {name} {what} interval{tail}"


def estimates_frame(result: Any) -> tuple[pl.DataFrame, tuple[str, ...], str]:
    """(long frame with group keys, agent/domain labels where known, k, estimate, ci_low, ci_high), group keys, metric
    name, from a :class:`~tauk.stats.Summary` or :class:`~tauk.stats.PassKResult` (or such a long frame)."""
    from tauk.stats import PassKResult, Summary

    if isinstance(result, Summary):
        return result.long(), tuple(result.by), "pass^k"
    if isinstance(result, PassKResult):
        return result.frame, tuple(result.by), result.metric
    if isinstance(result, pl.DataFrame) and {"k", "estimate"} <= set(result.columns):
        keys = tuple(c for c in result.columns if c in ("run_id", "agent", "domain"))
        return result, keys, "pass^k"
    raise TaukError(
        f"expected a tauk.stats Summary or PassKResult (from summarize / pass_hat_k), got {type(result).__name__}"
    )


def category_ticks(ax: Any, names: Sequence[Any], n_max: int = 4, width: int = 12) -> None:
    """Tick labels ``names`` (untrusted: :func:`escape_label`) at x = 0 … n − 1. Few and short: horizontal, wrapped
    at :func:`label_width`. Many or long: rotated 45° over at most two lines (a label rotated takes as many line
    heights across as it has lines: the three-line labels of 11 agents on a report's bar chart ran into each
    other at 30°, one line made the longest so long that it squeezed the bars), one line beyond 20 ticks at 90°."""
    wrapped = [escape_label(x, width=label_width(0.7)) for x in names]
    if len(wrapped) <= n_max and not any(len(x) > width for x in wrapped):
        ax.set_xticks(range(len(wrapped)), wrapped)
        return
    if len(names) > 20:
        ax.set_xticks(range(len(names)), [escape_label(x) for x in names], rotation=90)
        return
    w = max(label_width(0.7), -(-max(len(escape_label(x)) for x in names) // 2))
    while any(escape_label(x, width=w).count("\n") > 1 for x in names):  # lines end after separators: widen
        w += 1
    ax.set_xticks(range(len(names)), [escape_label(x, width=w) for x in names], rotation=45, ha="right",
                  rotation_mode="anchor")  # fmt: skip


def group_label(row: dict[str, Any], keys: Sequence[str]) -> str:
    """The raw label of a group (its key values joined); pass it through :func:`escape_label` to draw it."""
    if not keys:
        return "all"
    return LABEL_SEP.join("—" if row.get(k) is None else str(row[k]) for k in keys)


def color_key(row: dict[str, Any], keys: Sequence[str]) -> str:
    """The label whose colour a group gets: its agent when the frame knows it, else the group label."""
    if row.get("agent") is not None:
        return str(row["agent"])
    return group_label(row, keys)


def metric_label(metric: str, k: int | None = None) -> str:
    base = "pass" + ("@" if metric == "pass@k" else "^")
    return f"{base}k" if k is None else f"{base}{k}"


def has_interval(df: pl.DataFrame, column: str = "ci_low") -> bool:
    """Whether ``df`` has the interval column ``column`` with any value in it."""
    return column in df.columns and df[column].drop_nulls().len() > 0


as_trials_frame = as_trials  # one definition, in the statistics layer


def require_columns(df: pl.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise TaukError(f"{what} needs column(s) {missing}; have {df.columns}")


def sorted_labels(values: Iterable[Any]) -> list[Any]:
    """The distinct values, in text order, None last."""
    return sorted(set(values), key=lambda v: (v is None, str(v)))


def legend_outside(ax: Axes, handles: list[Any] | None = None, labels: list[str] | None = None, title: str | None = None,
                   ncol: int = 1) -> None:  # fmt: skip
    """A legend to the right of the axes (constrained layout makes room for it). Labels and title must already be
    escaped (:func:`escape_label`)."""
    kw: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, "ncol": ncol}
    if title:
        kw["title"] = title
    if handles is not None:
        ax.legend(handles, labels, **kw)
    else:
        ax.legend(**kw)


def empty_message(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666666", fontsize=note_size())
    ax.set_xticks([])
    ax.set_yticks([])

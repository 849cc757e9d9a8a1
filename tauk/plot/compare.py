"""Forest plot of paired differences from :func:`tauk.stats.compare` / :func:`tauk.stats.compare_all`."""

from __future__ import annotations

import textwrap
from typing import Any

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from tauk._compat import keyword_options
from tauk.errors import TaukError
from tauk.stats.comparisons.results import TEST_NAMES

from ._colors import NEUTRAL
from ._common import (
    LABEL_SEP,
    empty_message,
    escape_label,
    finish,
    interval_note,
    label_width,
    metric_label,
    new_panels,
    note_size,
    size_for,
    styled,
)
from ._presets import active_preset

__all__ = ["forest"]

_MAX_LISTED = 20


def _diff(r: dict) -> Any:
    """A comparison row's difference (``difference``; ``diff`` in rows from before the rename)."""
    return r.get("difference", r.get("diff"))


def _fnum(v: Any) -> float:
    return np.nan if v is None else float(v)


def _pair_label(r: dict[str, Any], by: tuple[str, ...], width: int, two_lines: bool = False) -> str:
    if two_lines:  # a narrow figure: the group wrapped on its own lines (never cut), then a, then − b
        grp = LABEL_SEP.join(escape_label(r[c]) for c in by)
        lines = textwrap.wrap(f"[{grp}]", max(width, 12), break_on_hyphens=False) if grp else []
        return "\n".join([*lines, escape_label(r["a"], width=width), "− " + escape_label(r["b"], width=width)])
    grp = LABEL_SEP.join(escape_label(r[c], width=width) for c in by)
    return (f"[{grp}] " if grp else "") + f"{escape_label(r['a'], width=width)} − {escape_label(r['b'], width=width)}"


def _empty(r: dict[str, Any]) -> bool:
    n = r.get("n_tasks")
    return (n is not None and int(n) == 0) or _diff(r) is None or not np.isfinite(_fnum(_diff(r)))


@keyword_options(("comparison", "ax", "alpha", "annotate"))
@styled
def forest(comparison: Any, *, ax: Axes | None = None, alpha: float | None = None, annotate: bool = True,
           figsize: Any = None) -> Figure:  # fmt: skip
    """Paired-difference forest plot: one row per pair (and ``by`` group) that shares tasks, the mean difference
    a − b with its interval (the paired test's own by default; the caption names it), a zero line, and filled markers
    where the difference is significant after the family's adjustment (``p_adjusted`` of a MultipleComparison; the
    headline ``p_value`` for a single Comparison), hollow ones where it is not.

    Pairs with no common task have no difference to draw: they get no row and are listed once in the caption,
    which also names the interval and says that n is the number of common tasks.

    Parameters
    ----------
    comparison
        A :class:`tauk.stats.MultipleComparison` or :class:`tauk.stats.Comparison`.
    ax
        Draw into this axes (else a new figure).
    alpha
        Significance level; default 1 − the comparison's ``ci`` (0.05 for 95 %).
    annotate
        Write "diff [low, high]  p  n=tasks" at the right of each row (at ``figsize="single"``: "diff, n").
    figsize
        ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> mc = tauk.stats.compare_all(tauk.load("data/*_airline.json"), k=1, permutations=999)
    >>> fig = tauk.plot.forest(mc, figsize="single")
    >>> len(fig.axes[0].get_yticklabels()), fig.get_size_inches().round(1).tolist()[0]
    (3, 3.3)
    """
    from tauk.stats import Comparison, MultipleComparison

    if isinstance(comparison, MultipleComparison):
        df, p_col = comparison.pairs, "p_adjusted"
        adjust = comparison.adjust
        k = comparison.k
    elif isinstance(comparison, Comparison):
        df, p_col = comparison.frame, "p_value"
        adjust = "none"
        k = comparison.k
    else:
        raise TaukError(f"forest takes a Comparison or MultipleComparison (tauk.stats.compare / compare_all), got "
                        f"{type(comparison).__name__}")  # fmt: skip
    level = comparison.ci if comparison.ci is not None else 0.95
    a_lvl = (1.0 - level) if alpha is None else alpha
    by = tuple(comparison.by)
    compact = active_preset().name == "single" or (active_preset().width or 99) < 4.5
    width = label_width(0.7 if compact else (0.5 if by else 0.6))
    all_rows = df.to_dicts()
    rows = [r for r in all_rows if not _empty(r)]
    empty = [r for r in all_rows if _empty(r)]
    n = len(rows)
    labels = [_pair_label(r, by, width, two_lines=compact) for r in rows]
    caption = []
    note = interval_note(comparison, what="paired task-bootstrap")
    test = TEST_NAMES.get(comparison.test, str(comparison.test))
    caption.append((f"Bars: {note}; " if note else "") + "n = tasks both agents ran.")
    if any(r.get("ci_low") is None for r in rows):
        caption.append("Pairs on fewer than 2 common tasks have no interval.")
    if adjust != "none":  # the bars are each pair's own interval; the fill follows the family's adjusted p
        apart = sum(1 for r in rows if _excludes_zero(r) and _fnum(r.get(p_col)) >= a_lvl)  # NaN: not counted
        if apart:
            how = adjust.upper() if adjust == "bh" else adjust.capitalize()
            caption.append(f"Intervals are each pair's own, not adjusted for multiple comparisons: {apart} of them "
                           f"exclude 0 while the {how}-adjusted p is ≥ {a_lvl:g} (hollow).")  # fmt: skip
    if empty:
        names = [_pair_label(r, by, width) for r in empty]
        more = len(names) - _MAX_LISTED
        listed = "; ".join(names[:_MAX_LISTED]) + (f"; and {more} more" if more > 0 else "")
        caption.append(f"No common tasks, not drawn ({len(empty)} of {len(all_rows)} pairs): {listed}.")
    extra = max((len(line) for s in labels for line in s.split("\n")), default=0) * 0.055
    lines = max((s.count("\n") + 1 for s in labels), default=1)  # a narrow figure's labels take several lines
    row = 0.32 if lines <= 2 else 0.13 * lines + 0.06
    size = size_for((max(6.4, 4.2 + extra + 1.9), max(1.8, 0.36 * n + 1.4)), row * n + 1.15, 0.26 * n + 1.1,
                    caption=caption, tick_labels=labels)  # fmt: skip
    fig, ax, foot = new_panels(ax, size)
    if n == 0:
        empty_message(ax, "no pair shares a task" if empty else "no pairs to compare")
        return finish(fig, ax, foot, legend=False, caption=caption)
    p_short = "p_adj" if adjust != "none" else "p"
    fs = note_size()
    for i, r in enumerate(rows):
        y = n - 1 - i  # first pair on top
        d = _fnum(_diff(r))
        lo, hi = _fnum(r.get("ci_low")), _fnum(r.get("ci_high"))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            lo, hi = _fnum(r.get("t_low")), _fnum(r.get("t_high"))
        p = r.get(p_col)
        sig = p is not None and np.isfinite(p) and p < a_lvl
        xerr = None
        if np.isfinite(lo) and np.isfinite(hi):
            xerr = np.array([[d - lo], [hi - d]])
        ax.errorbar([d], [y], xerr=xerr, fmt="o", color=NEUTRAL, ecolor=NEUTRAL,
                    markerfacecolor=NEUTRAL if sig else "white", markeredgecolor=NEUTRAL, markeredgewidth=1.2,
                    elinewidth=1.1, zorder=3)  # fmt: skip
        if annotate:
            ntxt = f"n={r.get('n_tasks')}"
            if compact:
                txt = f"{d:+.2f}, {ntxt}"
            else:
                ptxt = " —" if p is None else (f"={p:.2g}" if p >= 1e-3 else "<0.001")
                ci_txt = f" [{lo:+.3f}, {hi:+.3f}]" if np.isfinite(lo) and np.isfinite(hi) else " (no interval)"
                txt = f"{d:+.3f}{ci_txt}  {p_short}{ptxt}  {ntxt}"
            ax.annotate(txt, xy=(1.02, y), xycoords=("axes fraction", "data"), va="center", ha="left", fontsize=fs,
                        color="#333333", annotation_clip=False)  # fmt: skip
    ax.axvline(0.0, color="#888888", linewidth=0.9, linestyle="--", zorder=1)
    ax.set_yticks(range(n), labels[::-1])
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="x", color="#E5E5E5")
    ax.grid(axis="y", visible=False)
    finite = [v for r in rows for v in (_fnum(r.get("ci_low")), _fnum(r.get("ci_high")), _fnum(_diff(r)))
              if np.isfinite(v)]  # fmt: skip
    span = max([abs(v) for v in finite] + [0.05])
    ax.set_xlim(-span * 1.15, span * 1.15)
    ax.set_xlabel(f"difference in {metric_label('pass^k', k)} (a − b)")
    p_name = f"{adjust.upper() if adjust == 'bh' else adjust.capitalize()}-adjusted p" if adjust != "none" else f"p ({test})"
    handles = [
        Line2D([], [], marker="o", linestyle="", color=NEUTRAL, markerfacecolor=NEUTRAL, label=f"{p_name} < {a_lvl:g}"),
        Line2D([], [], marker="o", linestyle="", color=NEUTRAL, markerfacecolor="white", label=f"{p_name} ≥ {a_lvl:g}"),
    ]
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=1 if compact else 2,
              borderaxespad=0.2)  # fmt: skip
    if compact:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4, symmetric=True))
    title = f"paired differences, {metric_label('pass^k', k)}"
    if compact and foot is not None:  # the axes start far right of the pair labels: title the figure
        fig.suptitle(title, x=0.02, ha="left", fontsize=float(mpl.rcParams["axes.titlesize"]))
    else:
        leg_pt = float(mpl.rcParams["legend.fontsize"])
        ax.set_title(title, loc="left", pad=leg_pt * (1.6 if not compact else 3.0) + 8)
    return finish(fig, ax, foot, legend=False, caption=caption)


def _excludes_zero(r: dict[str, Any]) -> bool:
    """The pair's drawn interval (``ci_low``/``ci_high``, else the t interval) lies on one side of 0."""
    lo, hi = _fnum(r.get("ci_low")), _fnum(r.get("ci_high"))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        lo, hi = _fnum(r.get("t_low")), _fnum(r.get("t_high"))
    return bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0))


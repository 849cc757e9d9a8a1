"""Forest plot of paired differences from :func:`tauk.stats.compare` / :func:`tauk.stats.compare_all`."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tauk.errors import TaukError

from ._common import empty_message, figure_and_axes, metric_label, shorten, styled
from ._style import NEUTRAL

__all__ = ["forest"]


def _fnum(v: Any) -> float:
    return np.nan if v is None else float(v)


@styled
def forest(comparison: Any, ax: Axes | None = None, alpha: float | None = None, annotate: bool = True) -> Figure:
    """Paired-difference forest plot: one row per pair (and ``by`` group), the mean difference a − b with its
    paired task-bootstrap interval, a zero line, and filled markers where the difference is significant after the
    family's adjustment (``p_adjusted`` of a MultipleComparison; ``p_perm`` for a single Comparison), hollow ones
    where it is not.

    Args:
        comparison: a :class:`tauk.stats.MultipleComparison` or :class:`tauk.stats.Comparison`.
        alpha: significance level; default 1 − the comparison's ``ci`` (0.05 for 95 %).
        annotate: write "diff [low, high]  p" at the right of each row.
    """
    from tauk.stats import Comparison, MultipleComparison

    if isinstance(comparison, MultipleComparison):
        df, p_col = comparison.pairs, "p_adjusted"
        adjust = comparison.adjust
        k = comparison.k
    elif isinstance(comparison, Comparison):
        df, p_col = comparison.frame, "p_perm"
        adjust = "none"
        k = comparison.k
    else:
        raise TaukError(f"forest takes a Comparison or MultipleComparison (tauk.stats.compare / compare_all), got "
                        f"{type(comparison).__name__}")  # fmt: skip
    level = comparison.ci if comparison.ci is not None else 0.95
    a_lvl = (1.0 - level) if alpha is None else alpha
    by = tuple(comparison.by)
    rows = df.to_dicts()
    n = len(rows)
    labels = []
    for r in rows:
        grp = " · ".join(str(r[c]) for c in by)
        labels.append((f"[{grp}] " if grp else "") + f"{shorten(r['a'], 24)} − {shorten(r['b'], 24)}")
    extra = max((len(s) for s in labels), default=0) * 0.055
    fig, ax = figure_and_axes(ax, (max(6.4, 4.2 + extra + 1.9), max(1.8, 0.36 * n + 1.4)))
    if n == 0:
        empty_message(ax, "no pairs to compare")
        return fig
    p_short = "p_adj" if adjust != "none" else "p"
    for i, r in enumerate(rows):
        y = n - 1 - i  # first pair on top
        d = _fnum(r.get("diff"))
        lo, hi = _fnum(r.get("ci_low")), _fnum(r.get("ci_high"))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            lo, hi = _fnum(r.get("t_low")), _fnum(r.get("t_high"))
        p = r.get(p_col)
        sig = p is not None and np.isfinite(p) and p < a_lvl
        xerr = None
        if np.isfinite(d) and np.isfinite(lo) and np.isfinite(hi):
            xerr = np.array([[d - lo], [hi - d]])
        ax.errorbar([d], [y], xerr=xerr, fmt="o", color=NEUTRAL, ecolor=NEUTRAL, capsize=3, markersize=7,
                    markerfacecolor=NEUTRAL if sig else "white", markeredgecolor=NEUTRAL, markeredgewidth=1.4,
                    elinewidth=1.3, zorder=3)  # fmt: skip
        if not np.isfinite(d):
            ax.annotate("no shared tasks", xy=(0.5, y), xycoords=("axes fraction", "data"), va="center", ha="center",
                        fontsize=7.5, color="#888888", style="italic")  # fmt: skip
        elif annotate:
            ptxt = " —" if p is None else (f"={p:.2g}" if p >= 1e-3 else "<0.001")
            ci_txt = f" [{lo:+.3f}, {hi:+.3f}]" if np.isfinite(lo) and np.isfinite(hi) else ""
            ax.annotate(f"{d:+.3f}{ci_txt}  {p_short}{ptxt}  ({r.get('n_tasks')} tasks)", xy=(1.02, y), xycoords=("axes fraction", "data"), va="center",
                        ha="left", fontsize=7.5, color="#333333", annotation_clip=False)  # fmt: skip
    ax.axvline(0.0, color="#888888", linewidth=1.0, linestyle="--", zorder=1)
    ax.set_yticks(range(n), labels[::-1])
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(axis="x", color="#E5E5E5", linewidth=0.6)
    ax.grid(axis="y", visible=False)
    finite = [v for r in rows for v in (_fnum(r.get("ci_low")), _fnum(r.get("ci_high")), _fnum(r.get("diff")))
              if np.isfinite(v)]  # fmt: skip
    span = max([abs(v) for v in finite] + [0.05])
    ax.set_xlim(-span * 1.15, span * 1.15)
    ax.set_xlabel(f"difference in {metric_label('pass^k', k)} (a − b), {level:.0%} paired task-bootstrap interval")
    p_name = f"{adjust.upper() if adjust == 'bh' else adjust.capitalize()}-adjusted p" if adjust != "none" else "p (sign-flip)"
    handles = [
        Line2D([], [], marker="o", linestyle="", color=NEUTRAL, markerfacecolor=NEUTRAL, label=f"{p_name} < {a_lvl:g}"),
        Line2D([], [], marker="o", linestyle="", color=NEUTRAL, markerfacecolor="white", label=f"{p_name} ≥ {a_lvl:g}"),
    ]
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, borderaxespad=0.2)
    ax.set_title(f"paired differences, {metric_label('pass^k', k)}", loc="left", pad=22)
    return fig

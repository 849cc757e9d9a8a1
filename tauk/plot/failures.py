"""Why trials fail and how they end: stacked bars per agent of the ``failure`` column of :func:`tauk.score` and of
``termination_reason``. Counting only; no statistics are recomputed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tauk._compat import keyword_options
from tauk.conventions import COMPONENTS, TERMINATION_REASONS
from tauk.errors import TaukError

from ._colors import CATEGORY_PALETTE
from ._common import (
    as_trials_frame,
    category_ticks,
    empty_message,
    escape_label,
    finish,
    label_width,
    new_panels,
    note_size,
    require_columns,
    size_for,
    sorted_labels,
    styled,
)

__all__ = ["failure_breakdown", "termination_reasons", "failure_order", "TERMINATION_ORDER"]

_PREMATURE_COLORS = ("#6E6E6E", "#A8A8A8", "#3F3F3F", "#CFCFCF", "#8C8C8C", "#575757")
TERMINATION_ORDER = TERMINATION_REASONS
_TERMINATION_COLORS = {
    "user_stop": "#44AA99",
    "agent_stop": "#88CCEE",
    "max_steps": "#DDCC77",
    "too_many_errors": "#CC6677",
    "agent_error": "#882255",
    "user_error": "#AA4499",
    "infrastructure_error": "#777777",
}


def failure_order(categories: Sequence[str]) -> list[str]:
    """Canonical order of failure categories: single components (DB, ENV_ASSERTION, NL_ASSERTION, ACTION,
    COMMUNICATE), then combinations (fewest parts first), then other labels, then ``premature:*``."""

    def key(c: str) -> tuple:
        if c.startswith("premature:"):
            return (3, 0, (), c)
        parts = c.split("+")
        if all(p in COMPONENTS for p in parts):
            return (0 if len(parts) == 1 else 1, len(parts), tuple(COMPONENTS.index(p) for p in parts), c)
        return (2, 0, (), c)

    return sorted(set(categories), key=key)


def _failure_styles(cats: list[str]) -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    i = j = 0
    for c in cats:
        if c.startswith("premature:"):
            out[c] = (_PREMATURE_COLORS[j % len(_PREMATURE_COLORS)], "////")
            j += 1
        else:
            out[c] = (CATEGORY_PALETTE[i % len(CATEGORY_PALETTE)], None if i < len(CATEGORY_PALETTE) else "..")
            i += 1
    return out


def _stacked(ax: Axes, counts: pl.DataFrame, by: str, cat_col: str, cats: list[str],
             styles: dict[str, tuple[str, str | None]], normalize: bool, totals: dict[Any, int] | None,
             ylabel: str) -> None:  # fmt: skip
    groups = sorted_labels(counts[by].to_list())
    gi = {g: i for i, g in enumerate(groups)}
    M = np.zeros((len(groups), len(cats)))
    ci = {c: j for j, c in enumerate(cats)}
    for g, c, n in counts.select(by, cat_col, "n").iter_rows():
        M[gi[g], ci[c]] = n
    row_tot = M.sum(axis=1)
    if normalize:
        with np.errstate(all="ignore"):
            M = np.where(row_tot[:, None] > 0, M / row_tot[:, None], 0.0)
    x = np.arange(len(groups))
    bottom = np.zeros(len(groups))
    for j, c in enumerate(cats):
        color, hatch = styles[c]
        ax.bar(x, M[:, j], bottom=bottom, width=0.62, color=color, hatch=hatch, edgecolor="white", linewidth=0.6,
               label=escape_label(c, width=label_width()), zorder=2)  # fmt: skip
        bottom += M[:, j]
    if totals is not None:
        fs = note_size()
        for i, g in enumerate(groups):
            ax.annotate(f"{int(row_tot[i])}/{totals.get(g, 0)}", xy=(x[i], bottom[i]), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=fs, color="#333333")  # fmt: skip
    category_ticks(ax, groups)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    top = float(bottom.max()) if len(bottom) else 1.0
    ax.set_ylim(0, (1.0 if normalize else max(top, 1.0)) * 1.1)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(escape_label(by))


def _legend_order(ax: Axes) -> tuple[list[Any], list[str]]:
    handles, labels = ax.get_legend_handles_labels()
    return handles[::-1], labels[::-1]  # top of the stack first


def _categories_shown(cats: list[str]) -> list[str]:
    return [escape_label(c, width=label_width()) for c in cats]


@keyword_options(("scored", "ax", "by", "normalize", "infra"))
@styled
def failure_breakdown(scored: Any, *, ax: Axes | None = None, by: str = "agent", normalize: bool = False,
                      infra: str = "drop", figsize: Any = None) -> Figure:  # fmt: skip
    """Stacked bars per agent of which reward component sinks the failed trials (the ``failure`` column of
    :func:`tauk.score`: ``DB``, ``COMMUNICATE``, ``DB+COMMUNICATE``, …, and hatched ``premature:<reason>`` for
    trials that ended early). One bar segment per (agent, category), zero-height where an agent has none; above
    each bar its failed / total trials.

    Parameters
    ----------
    scored
        The frame :func:`tauk.score` returns (needs ``failure`` and ``by``).
    ax
        Draw into this axes (else a new figure).
    by
        The column naming the bars (``"agent"`` or ``"run_id"``).
    normalize
        Show shares of each agent's failures instead of counts.
    infra
        ``"drop"`` leaves out infrastructure-error trials (the statistics' default), ``"keep"`` shows them.
    figsize
        ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.failure_breakdown(tauk.score(tauk.load("data")), figsize="single")
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['atlas-large', 'atlas-small', 'baseline']
    """
    df = as_trials_frame(scored)
    if "failure" not in df.columns:
        raise TaukError("failure_breakdown needs the scored frame: pass tauk.score(results) (it adds `failure`)")
    require_columns(df, [by], "failure_breakdown")
    if infra not in ("drop", "keep", "fail"):
        raise TaukError(f"infra must be 'drop' or 'keep', got {infra!r}")
    if infra == "drop" and "is_infra_error" in df.columns:
        df = df.filter(~pl.col("is_infra_error").fill_null(False))
    totals = dict(df.group_by(by).len().iter_rows())
    failed = df.filter(pl.col("failure").is_not_null())
    counts = failed.group_by(by, "failure").agg(pl.len().alias("n"))
    cats = failure_order(counts["failure"].to_list())
    caption = ["Above each bar: failed / all trials" + (" (infrastructure errors left out)." if infra == "drop" else "."),
               _pooled_setups_note(df, by)]
    size = size_for((6.4, 3.9), 2.4, 3.0, legend=_categories_shown(cats), legend_title="failing component",
                    caption=caption)  # fmt: skip
    fig, ax, foot = new_panels(ax, size)
    if not cats:
        empty_message(ax, "no failed trials")
        return finish(fig, ax, foot, legend=False)
    # agents without a single failure still get their (empty) bar
    missing = [g for g in totals if g not in set(counts[by].to_list())]
    if missing:
        extra = pl.DataFrame({by: missing, "failure": [cats[0]] * len(missing), "n": [0] * len(missing)},
                             schema={by: counts.schema[by], "failure": pl.String, "n": counts.schema["n"]})  # fmt: skip
        counts = pl.concat([counts, extra])
    _stacked(ax, counts, by, "failure", cats, _failure_styles(cats), normalize, totals,
             "share of failed trials" if normalize else "failed trials")  # fmt: skip
    narrow = float(ax.figure.get_size_inches()[0]) < 4.5  # one column: the title on two lines
    ax.set_title("what sinks the failures" + ("\n" if narrow else " ") + "(zero reward components)", loc="left")
    handles, labels = _legend_order(ax)
    return finish(fig, ax, foot, handles=handles, labels=labels, title="failing component", caption=caption)


@keyword_options(("trials", "ax", "by", "normalize", "infra"))
@styled
def termination_reasons(trials: Any, *, ax: Axes | None = None, by: str = "agent", normalize: bool = False,
                        infra: str = "keep", figsize: Any = None) -> Figure:  # fmt: skip
    """Stacked bars per agent of how trials ended (``termination_reason``: user_stop, agent_stop, max_steps,
    too_many_errors, …). Infrastructure errors are shown by default (``infra="drop"`` leaves them out).

    Parameters
    ----------
    trials
        A trials frame or a :class:`tauk.Results`.
    ax
        Draw into this axes (else a new figure).
    by
        The column naming the bars.
    normalize
        Shares of each agent's trials instead of counts.
    infra
        ``"keep"`` (default) or ``"drop"`` infrastructure-error trials.
    figsize
        ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.termination_reasons(tauk.load("data"), figsize=(4, 3))
    >>> fig.get_size_inches().round(1).tolist()
    [4.0, 3.0]
    """
    df = as_trials_frame(trials)
    require_columns(df, [by, "termination_reason"], "termination_reasons")
    if infra not in ("keep", "drop", "fail"):
        raise TaukError(f"infra must be 'keep' or 'drop', got {infra!r}")
    if infra == "drop":
        df = df.filter(pl.col("termination_reason").fill_null("") != "infrastructure_error")
    df = df.with_columns(pl.col("termination_reason").fill_null("unknown"))
    counts = df.group_by(by, "termination_reason").agg(pl.len().alias("n"))
    present = set(counts["termination_reason"].to_list())
    cats = [c for c in TERMINATION_ORDER if c in present] + sorted(present - set(TERMINATION_ORDER))
    caption = [_pooled_setups_note(df, by)]
    size = size_for((6.4, 3.9), 2.4, 3.0, legend=_categories_shown(cats), legend_title="termination reason",
                    caption=caption)  # fmt: skip
    fig, ax, foot = new_panels(ax, size)
    if not cats:
        empty_message(ax, "no trials")
        return finish(fig, ax, foot, legend=False)
    extra_palette = [c for c in CATEGORY_PALETTE if c not in _TERMINATION_COLORS.values()]
    styles: dict[str, tuple[str, str | None]] = {}
    n_extra = 0
    for c in cats:
        if c in _TERMINATION_COLORS:
            styles[c] = (_TERMINATION_COLORS[c], None)
        else:
            styles[c] = (extra_palette[n_extra % len(extra_palette)], None)
            n_extra += 1
    _stacked(ax, counts, by, "termination_reason", cats, styles, normalize, None,
             "share of trials" if normalize else "trials")  # fmt: skip
    ax.set_title("how trials ended", loc="left")
    handles, labels = _legend_order(ax)
    return finish(fig, ax, foot, handles=handles, labels=labels, title="termination reason", caption=caption)


def _pooled_setups_note(df: pl.DataFrame, by: str) -> str | None:
    """A caption naming the bars that pool several setups of one domain (an agent run under two user models, reward
    bases or modes on the same tasks: different experiments, which the statistics never pool), or None. A bar that
    spans domains is the figure's per-agent view and is not flagged."""
    if not {"setup", "domain"} <= set(df.columns) or by in ("setup", "run_id"):
        return None
    spread = (df.group_by(by, "domain").agg(pl.col("setup").n_unique().alias("_n")).filter(pl.col("_n") > 1)
              .group_by(by).agg(pl.col("_n").max()).sort(by))  # fmt: skip
    if not spread.height:
        return None
    names = "; ".join(f"{escape_label(b)} ({n} setups of one domain)" for b, n in spread.iter_rows())
    return (f"A bar pools setups that are different experiments on the same tasks (user model, reward bases or mode): "
            f"{names}; by=\"run_id\" draws them apart.")


"""Shared helpers: reading result objects into frames, labels, axes set-up. No statistics are computed here."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from tauk.errors import TaukError
from tauk.stats import as_trials

from ._style import new_figure, style

F = TypeVar("F", bound=Callable[..., Any])

SUCCESS_TOL = 1e-6
LABEL_SEP = " · "


def styled(fn: F) -> F:
    """Run a plot function inside :func:`tauk.plot.style` so every artist it creates gets the house style."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with style():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def figure_and_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    fig, ax = new_figure(figsize)
    return fig, ax


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


def shorten(label: Any, width: int = 30) -> str:
    """Display form of a long label: the middle elided, start and end kept (``ft:gpt-4.1-20…-sft:BzrYdMNm``)."""
    s = str(label)
    if len(s) <= width:
        return s
    head = (width - 1) // 2
    tail = width - 1 - head
    return s[:head] + "…" + s[-tail:]


def tick_rotation(labels: Sequence[str], n_max: int = 4, width: int = 12) -> dict[str, Any]:
    """Keyword arguments for tick labels: rotated when there are many or long ones."""
    if len(labels) > n_max or any(len(x) > width for x in labels):
        return {"rotation": 30, "ha": "right", "rotation_mode": "anchor"}
    return {}


def group_label(row: dict[str, Any], keys: Sequence[str]) -> str:
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


def has_interval(df: pl.DataFrame) -> bool:
    return "ci_low" in df.columns and df["ci_low"].drop_nulls().len() > 0


as_trials_frame = as_trials  # one definition, in the statistics layer


def require_columns(df: pl.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise TaukError(f"{what} needs column(s) {missing}; have {df.columns}")


def sorted_labels(values: Sequence[Any]) -> list[Any]:
    return sorted(set(values), key=lambda v: (v is None, str(v)))


def legend_outside(ax: Axes, handles: list[Any] | None = None, labels: list[str] | None = None, title: str | None = None,
                   ncol: int = 1) -> None:  # fmt: skip
    """A legend to the right of the axes (constrained layout makes room for it)."""
    kw: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, "ncol": ncol}
    if title:
        kw["title"] = title
    if handles is not None:
        ax.legend(handles, labels, **kw)
    else:
        ax.legend(**kw)


def empty_message(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666666")
    ax.set_xticks([])
    ax.set_yticks([])

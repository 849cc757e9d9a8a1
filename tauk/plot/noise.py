"""Run-to-run noise figures from :func:`tauk.stats.consistency`: the noise floor and the flaky-task grid.

Nothing is re-estimated here: the points, means, bands and task orders come from the
:class:`~tauk.stats.ConsistencyResult`. Labels taken from result files go through :func:`escape_label`, so an agent
called ``a$b$`` is drawn as written; both figures take the paper sizes (``figsize="single"|"double"``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import matplotlib as mpl
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from tauk._compat import keyword_options
from tauk._lazy import lazy
from tauk.conventions import INFRA, TASK_KEY
from tauk.errors import TaukError

from ._colors import NEUTRAL, OKABE_ITO, register_agents
from ._common import (
    LABEL_SEP,
    active_preset,
    empty_message,
    escape_label,
    finish,
    label_lines,
    label_width,
    new_panels,
    size_for,
    styled,
    wrap_label,
)

special = lazy("scipy.special")

__all__ = ["noise_floor", "flaky_tasks"]

PASS_COLOR = OKABE_ITO["blue"]
FAIL_COLOR = OKABE_ITO["orange"]
DROPPED_COLOR = "#BBBBBB"
MISSING_COLOR = "#FFFFFF"


def _label(values: Sequence[Any], width: int = 30) -> str:
    return LABEL_SEP.join(escape_label(v, width=width) for v in values) if values else "all"


def _result(obj: Any) -> Any:
    from tauk.stats import ConsistencyResult

    if not isinstance(obj, ConsistencyResult):
        raise TaukError(f"expected a ConsistencyResult (tauk.stats.consistency), got {type(obj).__name__}")
    return obj


@keyword_options(("result", "ax", "band"))
@styled
def noise_floor(result: Any, *, ax: Axes | None = None, band: bool = True, figsize: Any = None) -> Figure:
    """Per-trial pass^1 of every group as points, with the group's fixed-task mean (pass^1 over all its trials) and
    the single-run band: mean ± z_{1−α/2} · sd_single_run, where one run of the same setup on the same tasks lands
    with probability 1 − α. Points far outside their band point to a trial index that behaved differently (an outage,
    a changed prompt).

    Args:
        result: a :class:`tauk.stats.ConsistencyResult`.
        ax: draw into this axes (else a new figure).
        band: draw the single-run bands (groups with one trial per task have none).
        figsize: ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns the Figure.

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.noise_floor(tauk.stats.consistency(tauk.load("data/")))
    >>> len(fig.axes)
    1
    """
    res = _result(result)
    frame = res.frame
    single = 0
    if "n_trials_max" in frame.columns and frame.height:  # one trial per task: no run-to-run noise to show
        multi = frame.filter(pl.col("n_trials_max").fill_null(0) >= 2)
        single = frame.height - multi.height
        if multi.height == 0:
            raise TaukError("noise_floor: no group has two or more trials of a task (no run-to-run noise to show)")
        frame = multi
    by = list(res.by)
    n = frame.height
    legend = ["pass^1 of one trial index", "pass^1 over all trials", "single-run band (95%)"]
    compact = active_preset().name == "single"
    if compact:  # one column: each group's label wrapped on its own lines (kept whole), rows as tall as their labels
        row_labels = ["\n".join(textwrap.wrap(LABEL_SEP.join(escape_label(r[c]) for c in by) or "all", label_width(),
                                               break_on_hyphens=False)) for r in frame.iter_rows(named=True)]
    else:
        row_labels = [_label([r[c] for c in by]) for r in frame.iter_rows(named=True)]
    lines = max((t.count("\n") + 1 for t in row_labels), default=1)
    single_row = 0.3 if lines <= 2 else 0.13 * lines + 0.05
    size = size_for((6.4, max(2.0, 0.42 * n + 1.3)), max(2.0, single_row * n + 1.2), max(2.2, 0.32 * n + 1.3),
                    legend=legend if band else legend[:2], caption=[_caption(res)])  # fmt: skip
    fig, ax, foot = new_panels(ax, size)
    if n == 0:
        empty_message(ax, "no groups")
        return finish(fig, ax, foot, legend=False)
    z = float(special.ndtri(1 - res.alpha / 2))
    agents = [r.get("agent") for r in frame.iter_rows(named=True)] if "agent" in by else [None] * n
    colors = register_agents([a for a in agents if a is not None]) if "agent" in by else {}
    rng = np.random.default_rng(0)  # a fixed vertical jitter, so repeated figures are identical
    labels: list[str] = []
    seen: list[float] = []
    for i, r in enumerate(frame.iter_rows(named=True)):
        y = n - 1 - i
        labels.append(row_labels[i])
        color = colors.get(str(r.get("agent")), NEUTRAL) if "agent" in by else NEUTRAL
        mean, sd = r["pass1"], r["sd_single_run"]
        if band and mean is not None and sd is not None:
            lo, hi = max(0.0, mean - z * sd), min(1.0, mean + z * sd)  # pass^1 lives in [0, 1]
            ax.barh(y, hi - lo, left=lo, height=0.55, color=color, alpha=0.18, linewidth=0, zorder=1)
            seen += [lo, hi]
        pts = np.asarray(r["pass1_per_trial"] or [], dtype=float)
        seen += [float(x) for x in pts if np.isfinite(x)]
        if pts.size:
            jitter = rng.uniform(-0.14, 0.14, pts.size)
            ax.scatter(pts, y + jitter, s=22, color=color, edgecolor="white", linewidth=0.5, zorder=3)
        if mean is not None:
            ax.plot([mean, mean], [y - 0.3, y + 0.3], color=NEUTRAL, linewidth=2.0, zorder=4)
    ax.set_yticks(range(n - 1, -1, -1), labels)
    ax.set_ylim(-0.7, n - 0.3)
    if seen:
        pad = max(0.02, 0.05 * (max(seen) - min(seen)))
        ax.set_xlim(max(min(seen) - pad, -0.03), min(max(seen) + pad, 1.03))
    ax.set_xlabel("pass^1")
    ax.grid(True, axis="x")
    ax.grid(False, axis="y")
    handles = [
        Line2D([], [], marker="o", linestyle="none", color=NEUTRAL, markersize=5, label="pass^1 of one trial index"),
        Line2D([], [], color=NEUTRAL, linewidth=2.0, label="pass^1 over all trials"),
    ]
    if band:
        handles.append(Patch(color=NEUTRAL, alpha=0.18, label=f"single-run band ({1 - res.alpha:.0%})"))
    ax.set_title("run-to-run noise", loc="left")
    caption = [_caption(res)]
    if single:
        caption.append(f"{single} group(s) with one trial per task left out: no run-to-run noise to show")
    return finish(fig, ax, foot, handles=handles, labels=[h.get_label() for h in handles], caption=caption)


def _caption(res: Any) -> str:
    n = res.frame["n_tasks"].to_list() if res.frame.height else []
    tasks = f"{min(n)}–{max(n)}" if n and min(n) != max(n) else (str(n[0]) if n else "0")
    return (f"band: mean ± z·SD of one run on the same {tasks} tasks ({1 - res.alpha:.0%}); "
            f"infrastructure errors {'dropped' if res.infra == 'drop' else 'counted as failures'}")  # fmt: skip


def _select(res: Any, group: Any) -> pl.DataFrame:
    keys = list(res.by)
    frame = res.frame.select(keys) if keys else pl.DataFrame({"_": [0]})
    if group is None:  # every group that has a task with two trials (a one-column grid shows no flakiness)
        multi = res.frame.filter(pl.col("n_trials_max") >= 2)
        return (multi.select(keys) if keys else frame) if multi.height else frame
    want = group if isinstance(group, dict) else dict(zip(keys, group if isinstance(group, tuple | list) else (group,)))
    unknown = [k for k in want if k not in keys]
    if unknown:
        raise TaukError(f"group names {unknown}, not among the result's keys {keys}")
    sel = frame.filter(pl.all_horizontal([pl.col(k) == v for k, v in want.items()]) if want else pl.lit(True))
    if sel.height == 0:
        raise TaukError(f"no group matches {want}")
    return sel


def _grid(res: Any, key: dict[str, Any], max_tasks: int | None, only_flaky: bool) -> tuple[np.ndarray, list[str], int, int]:
    """(tasks × trials) codes 0 fail, 1 pass, 2 dropped, 3 missing; row labels; flaky rows; tasks left out."""
    keys = list(res.by)
    tk = [c for c in TASK_KEY if c not in keys]
    tasks, oc = res.tasks, res.outcomes
    for k, v in key.items():
        tasks = tasks.filter(pl.col(k).is_null() if v is None else pl.col(k) == v)
        oc = oc.filter(pl.col(k).is_null() if v is None else pl.col(k) == v)
    tasks = tasks.with_row_index("_i").with_columns(
        pl.when(pl.col("flaky")).then(0).when(pl.col("c") == pl.col("n")).then(1).otherwise(2).alias("_kind"),
        (pl.col("rate") - 0.5).abs().alias("_und"),
    ).sort(["_kind", "_und", "_i"])
    if only_flaky:
        tasks = tasks.filter(pl.col("flaky"))
    total = tasks.height
    if max_tasks is not None:
        tasks = tasks.head(max_tasks)
    n_flaky = int(tasks["flaky"].sum()) if tasks.height else 0
    trials = sorted(set(oc["trial_index"].drop_nulls().to_list()))
    col = {t: j for j, t in enumerate(trials)}
    multi_domain = "domain" in tk and tasks["domain"].n_unique() > 1
    row = {tuple(r[c] for c in tk): i for i, r in enumerate(tasks.iter_rows(named=True))}
    M = np.full((len(row), len(trials)), 3, dtype=np.int64)
    for r in oc.iter_rows(named=True):
        i = row.get(tuple(r[c] for c in tk))
        if i is None or r["trial_index"] is None:
            continue
        M[i, col[r["trial_index"]]] = 2 if not r["kept"] else int(r["success"])
    labels = []
    for r in tasks.iter_rows(named=True):
        name = f"{r['domain']}/{r['task_id']}" if multi_domain else str(r["task_id"])
        labels.append(f"{escape_label(name, width=34)}  {r['c']}/{r['n']}")
    return M, labels, n_flaky, total - tasks.height


def _panel_title(key: dict[str, Any], grid_in: float) -> str:
    """A panel's title wrapped to its grid's width (a left title starts at the grid; about 11 characters an inch,
    after separators), so neighbouring titles never overlap and the last stays inside the figure; never cut."""
    title = LABEL_SEP.join(escape_label(v) for v in key.values()) if key else "all"
    return wrap_label(title, max(12, int(10 * grid_in)), max_lines=20)


@keyword_options(("result_or_trials", "ax"))
@styled
def flaky_tasks(
    result_or_trials: Any,
    *,
    ax: Axes | None = None,
    figsize: Any = None,
    group: Any = None,
    max_tasks: int | None = 40,
    only_flaky: bool = False,
    by: str | Sequence[str] | None = ("agent", "domain"),
    infra: str = INFRA,
    reward: str = "reward",
) -> Figure:
    """Tasks × trials outcome grid, one panel per group: flaky tasks on top, most undecided first (|c/n − ½|
    smallest), then the tasks that always passed, then those that always failed; cells pass / fail / dropped
    infrastructure error / not run; each row labelled with the task and its c/n.

    Args:
        result_or_trials: a :class:`tauk.stats.ConsistencyResult`, or a trials frame / Results (then
            ``consistency(…, by=by, infra=infra, reward=reward)`` is computed first).
        ax: draw into this axes (only when one group is drawn).
        group: draw only this group: a dict of key values, or the values of the result's ``by`` keys in order
            (default: every group with a task that has two trials or more).
        max_tasks: at most this many rows per panel (the most undecided first); None for all.
        only_flaky: leave out the tasks that always passed or always failed.
        figsize: ``None`` (screen), ``"single"``, ``"double"`` or ``(width, height)`` inches.

    Returns the Figure.

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.flaky_tasks(tauk.load("data/"), group=("baseline", "retail"))
    >>> len(fig.axes)
    1
    """
    from tauk.stats import ConsistencyResult, consistency

    if isinstance(result_or_trials, ConsistencyResult):
        res = result_or_trials
    else:
        res = consistency(result_or_trials, by=by, infra=infra, reward=reward)
    groups = _select(res, group)
    keys = list(res.by)
    panels = [dict(zip(keys, r)) for r in groups.select(keys).iter_rows()] if keys else [{}]
    if not panels:  # no trials at all (an empty frame, a filter that kept nothing): no grid to draw
        raise TaukError("flaky_tasks: the result has no group (no kept trial): nothing to draw")
    data = [_grid(res, k, max_tasks, only_flaky) for k in panels]
    if ax is not None and len(panels) != 1:
        raise TaukError(f"ax= draws one group; this result has {len(panels)} (choose one with group=)")
    rows = max((d[0].shape[0] for d in data), default=0)
    cols = max((d[0].shape[1] for d in data), default=0)
    # a long task id wraps over lines, never cut: each row as tall as its lines, the titles as tall as theirs
    lines = label_lines(lab for d in data for lab in d[1])
    line_in = FontProperties(size=mpl.rcParams["ytick.labelsize"]).get_size_in_points() * 1.3 / 72
    grid_in = 0.28 * max(cols, 1) + 0.5
    titles = [_panel_title(k, grid_in) for k in panels]
    title_in = (label_lines(titles) + 1) * FontProperties(size=mpl.rcParams["axes.titlesize"]).get_size_in_points() \
        * 1.3 / 72
    h = float(np.clip(max(0.16, lines * line_in + 0.03) * rows + 0.9 + title_in, 2.0, 30.0))
    longest = max((len(x) for d in data for lab in d[1] for x in lab.split("\n")), default=4)
    w = 0.6 + 0.052 * longest + 0.28 * max(cols, 1)  # room for the task labels, then the grid
    legend = ["pass", "fail", "infra error (dropped)"]
    if ax is not None:
        fig, one, foot = new_panels(ax, (w + 1.6, h))
        axes = [one]
    else:
        ncols = min(len(panels), 1 if active_preset().name == "single" else 3)
        nrows = -(-len(panels) // ncols)
        size = size_for((w * ncols + 1.6, h * nrows), h * nrows, h * nrows, legend=legend)
        fig, grid, foot = new_panels(None, size, nrows, ncols)
        axes = list(np.atleast_1d(grid).ravel())
        for extra in axes[len(panels):]:
            extra.set_visible(False)
    cmap = ListedColormap([FAIL_COLOR, PASS_COLOR, DROPPED_COLOR, MISSING_COLOR])
    for a, title, (M, labels, n_flaky, left_out) in zip(axes, titles, data):
        if M.size == 0:
            empty_message(a, "no tasks")
            a.set_title(title, loc="left")
            continue
        a.imshow(M, aspect="auto", cmap=cmap, vmin=-0.5, vmax=3.5, interpolation="nearest")
        a.set_ylim(max(rows, 1) - 0.5, -0.5)  # the same row height in every panel
        a.set_xticks(range(M.shape[1]), [str(j) for j in range(M.shape[1])])
        a.set_yticks(range(M.shape[0]), labels)
        a.set_xticks(np.arange(-0.5, M.shape[1]), minor=True)
        a.set_yticks(np.arange(-0.5, M.shape[0]), minor=True)
        a.grid(True, which="minor", color="white", linewidth=0.6)
        a.grid(False, which="major")
        a.tick_params(which="both", length=0)
        for s in a.spines.values():
            s.set_visible(False)
        if 0 < n_flaky < M.shape[0]:
            a.axhline(n_flaky - 0.5, color="black", linewidth=1.6)
        a.set_xlabel("trial" + (f"  (+{left_out} tasks not shown)" if left_out else ""))
        a.set_title(f"{title}\n{n_flaky} flaky of {M.shape[0] + left_out}", loc="left")
    handles = [Patch(color=PASS_COLOR, label="pass"), Patch(color=FAIL_COLOR, label="fail"),
               Patch(color=DROPPED_COLOR, label="infra error (dropped)")]  # fmt: skip
    anchor = axes[min(len(panels), len(axes)) - 1 if len(panels) <= 3 else 2]
    return finish(fig, anchor, foot, handles=handles, labels=[hh.get_label() for hh in handles], axes=axes)

"""Figures of the reliability profile and of action-level attribution: :func:`reliability_profile` (each group's
metrics with their task-level intervals, the unbiased outcome consistency beside HAL's plug-in) and
:func:`deviation_success` (success by number of state-changing deviations, task-clustered intervals)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tauk.errors import TaukError

from ._colors import OKABE_ITO
from ._common import escape_label
from ._figure import new_figure

_COLORS = list(OKABE_ITO.values())

__all__ = ["reliability_profile", "deviation_success"]

_PANELS = (
    ("outcome", ("outcome_consistency", "outcome_consistency_plugin"), "outcome consistency (2p − 1)²"),
    ("resources", ("cv_cost", "cv_duration", "cv_turns", "cv_tool_calls"), "coefficient of variation"),
    ("trajectories", ("trajectory_jsd", "trajectory_edit_similarity"), "successful trials, pairs"),
)


def reliability_profile(profile: Any, *, figsize: Any = None) -> Any:
    """Three panels (outcome, resources, trajectories): every group's estimate with its task-level interval.

    ``profile``: a :class:`tauk.stats.ReliabilityProfile`. The plug-in outcome consistency is drawn hollow and
    labelled biased.

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.reliability_profile(tauk.stats.reliability(tauk.load("data"), by="agent"))
    >>> len(fig.axes)
    3
    """
    groups = getattr(profile, "groups", None)
    if groups is None or groups.height == 0:
        raise TaukError("reliability_profile: give a tauk.stats.reliability(...) result with at least one group")
    from tauk.stats.reliability import METRICS

    labels = dict(METRICS)
    fig, axes = new_figure(figsize, ncols=3)
    names = [escape_label(" / ".join(str(r[k]) for k in profile.by)) for r in groups.iter_rows(named=True)]
    y = np.arange(len(names))
    for ax, (_, metrics, title) in zip(np.atleast_1d(axes), _PANELS):
        width = 0.8 / len(metrics)
        for i, m in enumerate(metrics):
            est = groups[m].fill_null(np.nan).to_numpy().astype(float)
            lo = groups[f"{m}_low"].fill_null(np.nan).to_numpy().astype(float)
            hi = groups[f"{m}_high"].fill_null(np.nan).to_numpy().astype(float)
            yy = y + (i - (len(metrics) - 1) / 2) * width
            hollow = m.endswith("_plugin")
            color = _COLORS[i % len(_COLORS)]
            ax.errorbar(est, yy, xerr=[np.abs(est - lo), np.abs(hi - est)], fmt="o", color=color,
                        mfc="none" if hollow else color, capsize=2, label=labels[m])  # fmt: skip
        ax.set_yticks(y, names)
        ax.set_title(title)
        ax.legend(fontsize="small", loc="best")
    np.atleast_1d(axes)[0].invert_yaxis()
    fig.suptitle(f"Reliability profile ({round(profile.ci * 100, 6):g} % task-level intervals)")
    return fig


def deviation_success(profile: Any, *, figsize: Any = None) -> Any:
    """Success rate by number of state-changing deviations per group, with the task-clustered Wilson interval.

    ``profile``: a :class:`tauk.stats.DeviationProfile`.

    Examples
    --------
    >>> import tauk
    >>> fig = tauk.plot.deviation_success(tauk.stats.deviation_profile(tauk.load("data"), by="agent"))
    >>> len(fig.axes) >= 1
    True
    """
    bc = getattr(profile, "by_count", None)
    if bc is None or bc.height == 0:
        raise TaukError("deviation_success: give a tauk.stats.deviation_profile(...) result with attributable trials")
    fig, ax = new_figure(figsize)
    keys = list(profile.by)
    groups = bc.select(keys).unique(maintain_order=True).rows()
    bins = list(dict.fromkeys(bc["bin"].to_list()))
    width = 0.8 / max(len(groups), 1)
    for gi, g in enumerate(groups):
        sub = bc.filter(*[bc[k] == v for k, v in zip(keys, g)])
        x = np.array([bins.index(b) for b in sub["bin"].to_list()]) + (gi - (len(groups) - 1) / 2) * width
        s = sub["success"].to_numpy()
        lo, hi = sub["clustered_low"].to_numpy(), sub["clustered_high"].to_numpy()
        ax.bar(x, s, width=width, color=_COLORS[gi % len(_COLORS)], label=escape_label(" / ".join(map(str, g))))
        ax.errorbar(x, s, yerr=[np.clip(s - lo, 0, None), np.clip(hi - s, 0, None)], fmt="none", ecolor="black", capsize=2)
        for xi, n in zip(x, sub["trials"].to_list()):
            ax.annotate(f"n={n}", (xi, 0.01), ha="center", fontsize="x-small")
    ax.set_xticks(range(len(bins)), bins)
    ax.set_xlabel(f"state-changing deviations ({profile.count})")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize="small")
    ax.set_title(f"Success by deviations ({round(profile.ci * 100, 6):g} % Wilson, clustered by task)")
    return fig

"""Figures from tauk's statistics (ArviZ style: statistics and plots apart).

Every function takes a statistics result object (``tauk.stats``) or a frame, draws with matplotlib and returns the
``Figure``; functions that draw one panel accept ``ax=`` to draw into an existing axes. Nothing is resampled or
re-estimated here: intervals come from the result objects.

    pass_k_curve(summary_or_passk)       pass^k against k, one line (and interval band) per agent / run
    domain_estimates(summary, k=1)       per-domain estimates with interval bars, agents side by side
    forest(comparison)                   paired differences, filled = significant after adjustment
    success_heatmap(trials, k=None)      task × agent success, tasks ordered by difficulty
    failure_breakdown(scored)            which reward component sinks the failures (tauk.score)
    termination_reasons(trials)          how trials ended, per agent
    cost_vs_pass(summary)                cost against pass^1 with the Pareto front
    leaderboard(board, recomputed=None)  published leaderboard figures beside recomputed ones
    leaderboard_ranks(ranking)           leaderboard rows ranked with intervals, tie groups shaded
    noise_floor(consistency)             per-trial pass^1, the fixed-task mean and the single-run band
    flaky_tasks(consistency_or_trials)   tasks × trials outcome grid, most undecided tasks first
    substantive_estimates(summary, k=1)  pass^k on all tasks beside the substantive ones, and the do-nothing bound

Style: :func:`style` (context manager), :func:`use_style` (global), :func:`agent_color` (one stable colour per
agent), :func:`save` (byte-identical PDF / PNG / SVG, never cropped). Figures are created outside pyplot
(headless-safe, nothing to close, no double display in Jupyter).

Sizes: every figure function takes ``figsize=None`` (screen), ``"single"`` (3.3 in, one column), ``"double"`` (7 in)
or ``(width, height)``; the paper sizes draw every text at ≥ 7 pt at print size (:data:`FIGSIZES`,
:data:`PAPER_RC`, :func:`preset`). Labels from the data go through :func:`escape_label` (no mathtext, no line
breaks). Figures whose data carry an interval say which (level, method, resamples) and on how many tasks in a
caption under the plot.
"""

from ._colors import (
    AGENT_PALETTE,
    CATEGORY_PALETTE,
    OKABE_ITO,
    TOL_MUTED,
    agent_color,
    agent_colors,
    register_agents,
    reset_agent_colors,
)
from ._common import escape_label
from ._figure import TaukFigure, new_figure, save
from ._presets import FIGSIZES, MIN_FONT_SIZE, PAPER_RC, PRESETS, RC, Preset, preset, style, use_style
from .compare import forest
from .cost import cost_vs_pass, pareto_front
from .failures import failure_breakdown, termination_reasons
from .leaderboard import leaderboard, leaderboard_ranks
from .noise import flaky_tasks, noise_floor
from .passk import domain_estimates, pass_k_curve
from .reliability import deviation_success, reliability_profile
from .tasks import success_heatmap
from .validity import substantive_estimates

__all__ = [
    "deviation_success",
    "reliability_profile",
    "AGENT_PALETTE",
    "CATEGORY_PALETTE",
    "FIGSIZES",
    "MIN_FONT_SIZE",
    "OKABE_ITO",
    "PAPER_RC",
    "PRESETS",
    "Preset",
    "RC",
    "TOL_MUTED",
    "TaukFigure",
    "agent_color",
    "agent_colors",
    "cost_vs_pass",
    "domain_estimates",
    "escape_label",
    "failure_breakdown",
    "flaky_tasks",
    "forest",
    "leaderboard",
    "leaderboard_ranks",
    "new_figure",
    "noise_floor",
    "pareto_front",
    "pass_k_curve",
    "substantive_estimates",
    "preset",
    "register_agents",
    "reset_agent_colors",
    "save",
    "style",
    "success_heatmap",
    "termination_reasons",
    "use_style",
]

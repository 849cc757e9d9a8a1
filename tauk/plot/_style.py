"""House style, colour-blind-safe colours, one stable colour per agent, and reproducible saving.

* Palette: Okabe–Ito (without black; its pale yellow kept for last) for agents, then Paul Tol's *muted* scheme once those run out.
* :func:`agent_color` gives every agent (or run) label ONE colour for the whole session: its preferred slot is a
  hash of the name (BLAKE2b, so the same across processes and Python versions, unlike ``hash``), taken among the
  Okabe–Ito colours first; a slot already held by another name moves on to the next free one. :func:`register_agents`
  assigns a whole set at once in sorted order, so the result does not depend on the order agents are met in —
  every plot function registers the labels it draws before drawing, and ``tauk report`` registers every agent of
  the data up front.
* :func:`style` (context manager) / :func:`use_style` (global): TrueType fonts in PDF and PS (``pdf.fonttype 42``),
  a fixed ``svg.hashsalt``, DejaVu Sans (bundled with matplotlib, so output does not depend on installed fonts).
* :func:`save` writes byte-identical PDF / PNG / SVG for the same figure: no creation or modification dates, a fixed
  producer / software tag, fixed dpi. It never crops (no ``bbox_inches="tight"``): the file is the figure's size.
* Sizes: every figure function takes ``figsize=``: ``None`` (the figure's own screen size, :data:`RC` fonts),
  ``"single"`` (one column, :data:`FIGSIZES` 3.3 in wide) or ``"double"`` (two columns, 7 in wide), or ``(width,
  height)`` in inches. The paper sizes (and any explicit size) use :data:`PAPER_RC`: text is at least
  :data:`MIN_FONT_SIZE` (7 pt) at print size — ticks, labels, legends, annotations and captions alike.

The pieces live in :mod:`tauk.plot._colors` (palettes, agent colours), :mod:`tauk.plot._presets` (rcParams, size
presets, :func:`style`) and :mod:`tauk.plot._figure` (:func:`new_figure`, :func:`save`); this module gathers them
under their old import path.
"""

from __future__ import annotations

# all re-exported; ``X as X`` marks the names outside ``__all__`` that other modules imported from here
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
from ._colors import LIGHT as LIGHT
from ._colors import NEUTRAL as NEUTRAL
from ._figure import SAVE_DPI as SAVE_DPI
from ._figure import TaukFigure, new_figure, save
from ._figure import figure_preset as figure_preset
from ._presets import (
    FIGSIZES,
    MIN_FONT_SIZE,
    PAPER_RC,
    PRESETS,
    RC,
    Preset,
    active_preset,
    preset,
    style,
    use_style,
)

__all__ = [
    "OKABE_ITO",
    "TOL_MUTED",
    "AGENT_PALETTE",
    "CATEGORY_PALETTE",
    "RC",
    "PAPER_RC",
    "FIGSIZES",
    "MIN_FONT_SIZE",
    "Preset",
    "PRESETS",
    "preset",
    "active_preset",
    "agent_color",
    "agent_colors",
    "register_agents",
    "reset_agent_colors",
    "style",
    "use_style",
    "save",
    "new_figure",
    "TaukFigure",
]

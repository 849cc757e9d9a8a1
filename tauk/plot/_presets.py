"""The house style: rcParams and the figure size presets (screen, one column, two columns, any size).

* :func:`style` (context manager) / :func:`use_style` (global): TrueType fonts in PDF and PS (``pdf.fonttype 42``),
  a fixed ``svg.hashsalt``, DejaVu Sans (bundled with matplotlib, so output does not depend on installed fonts).
* Sizes: every figure function takes ``figsize=``: ``None`` (the figure's own screen size, :data:`RC` fonts),
  ``"single"`` (one column, :data:`FIGSIZES` 3.3 in wide) or ``"double"`` (two columns, 7 in wide), or ``(width,
  height)`` in inches. The paper sizes (and any explicit size) use :data:`PAPER_RC`: text is at least
  :data:`MIN_FONT_SIZE` (7 pt) at print size — ticks, labels, legends, annotations and captions alike.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import matplotlib as mpl

from tauk.errors import TaukError

from ._colors import AGENT_PALETTE

__all__ = [
    "RC",
    "PAPER_RC",
    "FIGSIZES",
    "MIN_FONT_SIZE",
    "Preset",
    "PRESETS",
    "preset",
    "active_preset",
    "style",
    "use_style",
]

RC: dict[str, Any] = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "path",
    "svg.hashsalt": "tauk",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "text.usetex": False,
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "legend.fontsize": 8.0,
    "legend.title_fontsize": 8.0,
    "figure.titlesize": 10.0,
    "figure.labelsize": 8.0,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#E5E5E5",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
    "axes.prop_cycle": mpl.cycler(color=list(AGENT_PALETTE)),
    "image.cmap": "viridis",
    "lines.linewidth": 1.6,
    "lines.markersize": 5.0,
    "errorbar.capsize": 3.0,
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.facecolor": "white",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "figure.constrained_layout.use": True,
}
"""The rcParams applied by :func:`style` / :func:`use_style` (screen sizes; the paper sizes add :data:`PAPER_RC`)."""

MIN_FONT_SIZE = 7.0
"""The smallest text (points, at print size) any figure draws: journals ask for 6–8 pt; 7 pt reads in print."""

PAPER_RC: dict[str, Any] = {
    "font.size": 8.0,
    "axes.titlesize": 8.0,
    "axes.labelsize": 8.0,
    "xtick.labelsize": MIN_FONT_SIZE,
    "ytick.labelsize": MIN_FONT_SIZE,
    "legend.fontsize": MIN_FONT_SIZE,
    "legend.title_fontsize": MIN_FONT_SIZE,
    "figure.titlesize": 8.0,
    "figure.labelsize": MIN_FONT_SIZE,
    "legend.handlelength": 1.6,
    "legend.handletextpad": 0.5,
    "legend.columnspacing": 1.0,
    "legend.labelspacing": 0.3,
    "legend.borderaxespad": 0.3,
    "lines.linewidth": 1.2,
    "lines.markersize": 4.0,
    "errorbar.capsize": 2.0,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "xtick.major.pad": 2.0,
    "ytick.major.pad": 2.0,
    "axes.labelpad": 2.0,
    "axes.titlepad": 4.0,
    "grid.linewidth": 0.4,
    "patch.linewidth": 0.5,
    "hatch.linewidth": 0.6,
}
"""rcParams added on top of :data:`RC` for the paper sizes (``figsize="single"``, ``"double"`` or ``(w, h)``): text
between 7 and 8 pt at print size, thinner lines."""

FIGSIZES: dict[str, float] = {"single": 3.3, "double": 7.0}
"""Paper figure widths in inches: ``"single"`` one column of a two-column paper, ``"double"`` the full text width.
Heights follow each figure's content (rows, legend, caption)."""


@dataclass(frozen=True)
class Preset:
    """A figure size preset: the width, the fonts and how labels and legends are laid out at that size.

    Attributes: ``name`` (``"screen"``, ``"single"``, ``"double"`` or ``"custom"``), ``width`` (inches; ``None`` =
    each figure's own screen size), ``height`` (inches, only for an explicit ``(w, h)``), ``rc`` (rcParams over
    :data:`RC`), ``note_size`` (points: captions, value labels, annotations), ``label_chars`` (characters of an
    agent / run / task label kept, the middle elided) and ``legend_below`` (legends under the axes instead of to
    their right: narrow figures).

    Examples
    --------
    >>> from tauk.plot import PRESETS
    >>> p = PRESETS["single"]
    >>> p.width, p.label_chars, p.legend_below, p.paper
    (3.3, 24, True, True)
    """

    name: str
    width: float | None
    rc: Mapping[str, Any] = field(default_factory=dict)
    note_size: float = 7.5
    label_chars: int = 36
    legend_below: bool = False
    height: float | None = None

    @property
    def paper(self) -> bool:
        """True for the print sizes (fonts from :data:`PAPER_RC`)."""
        return self.name != "screen"


PRESETS: dict[str, Preset] = {
    "screen": Preset("screen", None, {}, 7.5, 36, False),
    "single": Preset("single", FIGSIZES["single"], PAPER_RC, MIN_FONT_SIZE, 24, True),
    "double": Preset("double", FIGSIZES["double"], PAPER_RC, MIN_FONT_SIZE, 32, False),
}
"""The named presets (``figsize=None`` is ``"screen"``)."""

_ACTIVE: contextvars.ContextVar[Preset] = contextvars.ContextVar("tauk_plot_preset", default=PRESETS["screen"])


def preset(figsize: Any = None) -> Preset:
    """The :class:`Preset` a ``figsize=`` value stands for (``TaukError`` for anything else).

    ``None`` or ``"screen"``: the figures' own sizes; ``"single"`` / ``"double"``: the paper widths of
    :data:`FIGSIZES`; ``(width, height)``: exactly that size in inches, with the paper fonts (legends go under the
    axes below 4.5 in).

    Examples
    --------
    >>> from tauk.plot import preset
    >>> preset("single").width, preset("double").width, preset(None).name
    (3.3, 7.0, 'screen')
    >>> p = preset((5, 3))
    >>> p.name, p.width, p.height, p.rc["xtick.labelsize"]
    ('custom', 5.0, 3.0, 7.0)
    """
    if isinstance(figsize, Preset):
        return figsize
    if figsize is None:
        return PRESETS["screen"]
    if isinstance(figsize, str):
        if figsize in PRESETS:
            return PRESETS[figsize]
        raise TaukError(f"figsize must be one of {sorted(PRESETS)} or (width, height) in inches, got {figsize!r}")
    try:
        w, h = (float(x) for x in figsize)
    except (TypeError, ValueError):
        raise TaukError(f"figsize must be 'single', 'double' or (width, height) in inches, got {figsize!r}") from None
    if not (math.isfinite(w) and math.isfinite(h) and 0.5 <= w <= 100 and 0.5 <= h <= 100):
        raise TaukError(f"figsize (width, height) must be between 0.5 and 100 inches, got {figsize!r}")
    chars = int(max(14, min(40, (w - 1.3) * 8)))
    return Preset("custom", w, PAPER_RC, MIN_FONT_SIZE, chars, w < 4.5, h)


def active_preset() -> Preset:
    """The preset of the innermost :func:`style` block (``"screen"`` outside any)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def style(figsize: Any = None) -> Iterator[Preset]:
    """Context manager applying tauk's rcParams inside the ``with`` block: :data:`RC`, plus :data:`PAPER_RC` for a
    paper size (``figsize`` as in the figure functions: ``None``, ``"single"``, ``"double"`` or ``(w, h)``).
    Yields the :class:`Preset`; figures drawn inside take their fonts and label widths from it.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> from tauk.plot import style
    >>> with style("single") as p:
    ...     p.width, mpl.rcParams["xtick.labelsize"], mpl.rcParams["pdf.fonttype"]
    (3.3, 7.0, 42)
    """
    p = preset(figsize)
    token = _ACTIVE.set(p)
    try:
        with mpl.rc_context({**RC, **p.rc}):
            yield p
    finally:
        _ACTIVE.reset(token)


def use_style(figsize: Any = None) -> None:
    """Apply tauk's rcParams globally (e.g. at the top of a notebook), for the screen (default) or a paper size.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> from tauk.plot import use_style
    >>> with mpl.rc_context():  # restores the previous rcParams on leaving
    ...     use_style("double")
    ...     mpl.rcParams["legend.fontsize"], mpl.rcParams["svg.hashsalt"]
    (7.0, 'tauk')
    """
    mpl.rcParams.update({**RC, **preset(figsize).rc})

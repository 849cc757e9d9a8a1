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
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure

from tauk._compat import keyword_options
from tauk.errors import TaukError

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

OKABE_ITO: dict[str, str] = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
TOL_MUTED: dict[str, str] = {
    "indigo": "#332288",
    "cyan": "#88CCEE",
    "teal": "#44AA99",
    "green": "#117733",
    "olive": "#999933",
    "sand": "#DDCC77",
    "rose": "#CC6677",
    "wine": "#882255",
    "purple": "#AA4499",
}

_PRIMARY: tuple[str, ...] = tuple(OKABE_ITO[n] for n in ("orange", "sky blue", "bluish green", "blue", "vermillion",
                                                         "reddish purple"))  # fmt: skip
_SECONDARY: tuple[str, ...] = tuple(c for n, c in TOL_MUTED.items() if n != "sand") + (OKABE_ITO["yellow"], TOL_MUTED["sand"])
AGENT_PALETTE: tuple[str, ...] = _PRIMARY + _SECONDARY
"""Agent colours: Okabe–Ito (no black; the pale yellow last), then Tol muted."""

CATEGORY_PALETTE: tuple[str, ...] = (
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499",
    "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442",
)  # fmt: skip
"""Colours for categories (failure components, termination reasons): Tol muted, then Okabe–Ito."""

NEUTRAL = "#4D4D4D"
LIGHT = "#BBBBBB"

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

SAVE_DPI = 150
_PDF_METADATA = {"Creator": "tauk", "Producer": "tauk (matplotlib)", "CreationDate": None, "ModDate": None}
_PNG_METADATA = {"Software": "tauk (matplotlib)"}
_SVG_METADATA = {"Creator": "tauk (matplotlib)", "Date": None}


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


# ---------------------------------------------------------------------------------------------- agent colours
_registry: dict[str, int] = {}


def _preferred(name: str, size: int) -> int:
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % size


def _assign(name: str) -> int:
    taken = set(_registry.values())
    np_, ns = len(_PRIMARY), len(_SECONDARY)
    start = _preferred(name, np_)
    for i in range(np_):  # Okabe–Ito first
        slot = (start + i) % np_
        if slot not in taken:
            return slot
    start = _preferred(name, ns)
    for i in range(ns):  # then Tol muted
        slot = np_ + (start + i) % ns
        if slot not in taken:
            return slot
    return _preferred(name, len(AGENT_PALETTE))  # palette exhausted: colours repeat from here on


def register_agents(names: Iterable[Any]) -> dict[str, str]:
    """Give every not-yet-seen name a colour, in sorted order (so the result does not depend on the order given).
    Names already registered keep theirs. Returns ``{name: colour}`` for the names given.

    Examples
    --------
    >>> from tauk.plot import register_agents, reset_agent_colors
    >>> reset_agent_colors()
    >>> register_agents(["b", "a"]) == register_agents(["a", "b"])
    True
    >>> sorted(register_agents(["a", "b"]))
    ['a', 'b']
    """
    labels = sorted({str(n) for n in names if n is not None})
    for n in labels:
        if n not in _registry:
            _registry[n] = _assign(n)
    return {n: AGENT_PALETTE[_registry[n]] for n in labels}


def agent_color(name: Any) -> str:
    """The session-wide colour (hex) of an agent or run label; the same in every figure.

    Examples
    --------
    >>> from tauk.plot import agent_color
    >>> agent_color("gpt-4.1") == agent_color("gpt-4.1"), agent_color("gpt-4.1").startswith("#")
    (True, True)
    """
    label = str(name)
    if label not in _registry:
        _registry[label] = _assign(label)
    return AGENT_PALETTE[_registry[label]]


def agent_colors(names: Iterable[Any]) -> dict[str, str]:
    """``{name: colour}`` for several names, registering new ones together (sorted).

    Examples
    --------
    >>> from tauk.plot import agent_color, agent_colors
    >>> c = agent_colors(["atlas-large", "baseline"])
    >>> c["baseline"] == agent_color("baseline"), c["baseline"].startswith("#")
    (True, True)
    """
    return register_agents(names)


def reset_agent_colors() -> None:
    """Forget every assignment (tests, or a fresh notebook section).

    Examples
    --------
    >>> from tauk.plot import agent_color, reset_agent_colors
    >>> reset_agent_colors()
    >>> first = agent_color("solo")
    >>> _ = agent_color("other")
    >>> reset_agent_colors()  # forgets "other"; "solo" gets its preferred colour again
    >>> agent_color("solo") == first
    True
    """
    _registry.clear()


# ---------------------------------------------------------------------------------------------- figures
class TaukFigure(Figure):
    """A matplotlib Figure that displays itself in Jupyter (``_repr_png_``) without going through pyplot.

    tauk's figures are made outside pyplot, so they are never shown twice (once by the inline backend, once as the
    cell's value), never need closing, and work headless; this gives them their own rich display. ``tauk_preset``
    is the :class:`Preset` the figure was drawn at (:func:`save` and the display render under it).

    Examples
    --------
    >>> from tauk.plot import TaukFigure, new_figure
    >>> fig, ax = new_figure("single")
    >>> isinstance(fig, TaukFigure), fig.tauk_preset.name, fig._repr_png_()[:4]
    (True, 'single', b'\\x89PNG')
    """

    tauk_preset: Preset | None = None

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        with style(figure_preset(self)):
            self.savefig(buf, format="png", dpi=100, facecolor="white")
        return buf.getvalue()


def figure_preset(fig: Any) -> Preset:
    """The preset a figure was made at (``"screen"`` for figures not made by tauk)."""
    root = getattr(fig, "figure", None)
    while root is not None and root is not fig and getattr(fig, "tauk_preset", None) is None:
        fig, root = root, getattr(root, "figure", None)
    p = getattr(fig, "tauk_preset", None)
    return p if isinstance(p, Preset) else PRESETS["screen"]


_DEFAULT_HEIGHT = {"single": 2.4, "double": 3.0}


def new_figure(figsize: Any = None, nrows: int = 1, ncols: int = 1, **kw: Any) -> tuple[Figure, Any]:
    """A figure outside pyplot's registry (nothing to close, no double display in Jupyter), styled.

    ``figsize``: ``(width, height)`` in inches (drawn with the preset of the enclosing :func:`style` block, the
    screen style outside one), ``"single"`` / ``"double"`` (the paper widths; height 2.4 / 3.0 in) or ``None``
    (6.4 × 3.8 in). ``nrows``, ``ncols`` and other keywords go to :meth:`~matplotlib.figure.Figure.subplots`.

    Examples
    --------
    >>> from tauk.plot import new_figure
    >>> fig, ax = new_figure("double")
    >>> fig.get_size_inches().round(1).tolist(), fig.tauk_preset.name
    ([7.0, 3.0], 'double')
    >>> fig, axes = new_figure((6, 2), 1, 2)
    >>> len(axes), fig.tauk_preset.name
    (2, 'screen')
    """
    if figsize is None or isinstance(figsize, str | Preset):
        p = preset(figsize)
        if p.width is None:
            size = (6.4, 3.8)
        else:
            size = (p.width, p.height or _DEFAULT_HEIGHT.get(p.name, 0.72 * p.width))
    else:
        p = active_preset()
        try:
            size = (float(figsize[0]), float(figsize[1]))
        except (TypeError, ValueError, IndexError):
            raise TaukError(f"figsize must be (width, height) in inches or a preset name, got {figsize!r}") from None
    with style(p):
        fig = TaukFigure(figsize=size, layout="constrained")
        fig.tauk_preset = p
        axes = fig.subplots(nrows, ncols, squeeze=True, **kw)
    return fig, axes


def _freeze_layout(fig: Figure, dpi: float = SAVE_DPI) -> None:
    """Run the figure's layout engine once from a canonical start and pin the result.

    Constrained layout is not idempotent: each draw starts from the positions the last one left (and tick labels
    depend on axes sizes), so saving PDF then PNG then PDF again would give three slightly different layouts. Here
    the grid axes are put back on their subplot-spec positions, the layout runs once (Agg at the PNG dpi, where text
    measures widest, with a little extra padding so PDF and PNG both fit), and the engine is switched off, so every
    later save of this figure in any format lays out the same.
    """
    if getattr(fig, "_tauk_layout_frozen", False):
        return
    engine = fig.get_layout_engine()
    if engine is not None and type(engine).__name__ != "PlaceHolderLayoutEngine":
        for ax in fig.axes:
            ss = ax.get_subplotspec()
            if ss is not None:
                ax._set_position(ss.get_position(fig))
        if hasattr(engine, "set"):
            with contextlib.suppress(TypeError):
                engine.set(w_pad=5 / 72, h_pad=5 / 72)
        old_dpi = fig.dpi
        try:
            fig.set_dpi(dpi)
            with style(figure_preset(fig)):
                fig.draw_without_rendering()
        finally:
            fig.set_dpi(old_dpi)
        fig.set_layout_engine("none")
    fig._tauk_layout_frozen = True  # type: ignore[attr-defined]


@keyword_options(("fig", "path", "formats", "dpi"))
def save(fig: Figure, path: str | Path, *, formats: Sequence[str] | None = None, dpi: int = SAVE_DPI) -> list[Path]:
    """Save reproducibly: the same figure gives byte-identical files (no timestamps, fixed producer, fixed dpi).

    The figure's layout is computed once and pinned on the first save (constrained layout would otherwise shift a
    little between saves). Nothing is cropped (no ``bbox_inches="tight"``): a ``figsize="single"`` figure is a
    3.3 in wide file. ``path`` with a suffix (``.pdf``, ``.png``, ``.svg``) writes that file; without one (or with
    ``formats``), writes ``path.<fmt>`` for each of ``formats`` (default PDF and PNG). Returns the paths written.

    Examples
    --------
    >>> import tempfile, tauk
    >>> from PIL import Image
    >>> fig, ax = tauk.plot.new_figure("single")
    >>> _ = ax.plot([1, 2, 3], [0.8, 0.6, 0.5])
    >>> out = tempfile.mkdtemp()
    >>> [p.name for p in tauk.plot.save(fig, f"{out}/ends.png")]  # save(fig, "ends") writes ends.pdf and ends.png
    ['ends.png']
    >>> Image.open(f"{out}/ends.png").size[0] == round(3.3 * 150)  # the preset's width at 150 dpi
    True
    """
    p = Path(path)
    if formats is None:
        if p.suffix.lower() in (".pdf", ".png", ".svg"):
            fmts = [p.suffix.lower()[1:]]
            stem = p.with_suffix("")
        else:
            fmts = ["pdf", "png"]
            stem = p
    else:
        fmts = [f.lower().lstrip(".") for f in formats]
        stem = p.with_suffix("") if p.suffix.lower() in (".pdf", ".png", ".svg") else p
    bad = [f for f in fmts if f not in ("pdf", "png", "svg")]
    if bad:
        raise TaukError(f"unsupported format {bad[0]!r}; use pdf, png or svg")
    _freeze_layout(fig, dpi)
    out = []
    for fmt in fmts:
        meta = {"pdf": _PDF_METADATA, "png": _PNG_METADATA, "svg": _SVG_METADATA}[fmt]
        target = stem.with_name(stem.name + "." + fmt)
        target.parent.mkdir(parents=True, exist_ok=True)
        with style(figure_preset(fig)):
            fig.savefig(target, format=fmt, dpi=dpi, metadata=dict(meta), facecolor="white")
        out.append(target)
    return out

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
  producer / software tag, fixed dpi.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure

__all__ = [
    "OKABE_ITO",
    "TOL_MUTED",
    "AGENT_PALETTE",
    "CATEGORY_PALETTE",
    "RC",
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
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "legend.fontsize": 8.0,
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
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "savefig.facecolor": "white",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "figure.constrained_layout.use": True,
}
"""The rcParams applied by :func:`style` / :func:`use_style`."""

SAVE_DPI = 150
_PDF_METADATA = {"Creator": "tauk", "Producer": "tauk (matplotlib)", "CreationDate": None, "ModDate": None}
_PNG_METADATA = {"Software": "tauk (matplotlib)"}
_SVG_METADATA = {"Creator": "tauk (matplotlib)", "Date": None}


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Context manager applying tauk's rcParams (:data:`RC`) inside the ``with`` block."""
    with mpl.rc_context(RC):
        yield


def use_style() -> None:
    """Apply tauk's rcParams globally (e.g. at the top of a notebook)."""
    mpl.rcParams.update(RC)


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
    Names already registered keep theirs. Returns ``{name: colour}`` for the names given."""
    labels = sorted({str(n) for n in names if n is not None})
    for n in labels:
        if n not in _registry:
            _registry[n] = _assign(n)
    return {n: AGENT_PALETTE[_registry[n]] for n in labels}


def agent_color(name: Any) -> str:
    """The session-wide colour (hex) of an agent or run label; the same in every figure.

    >>> agent_color("gpt-4.1") == agent_color("gpt-4.1")
    True
    """
    label = str(name)
    if label not in _registry:
        _registry[label] = _assign(label)
    return AGENT_PALETTE[_registry[label]]


def agent_colors(names: Iterable[Any]) -> dict[str, str]:
    """``{name: colour}`` for several names, registering new ones together (sorted)."""
    return register_agents(names)


def reset_agent_colors() -> None:
    """Forget every assignment (tests, or a fresh notebook section)."""
    _registry.clear()


# ---------------------------------------------------------------------------------------------- figures
class TaukFigure(Figure):
    """A matplotlib Figure that displays itself in Jupyter (``_repr_png_``) without going through pyplot.

    tauk's figures are made outside pyplot, so they are never shown twice (once by the inline backend, once as the
    cell's value), never need closing, and work headless; this gives them their own rich display.
    """

    def _repr_png_(self) -> bytes:
        import io

        buf = io.BytesIO()
        with style():
            self.savefig(buf, format="png", dpi=100, facecolor="white")
        return buf.getvalue()


def new_figure(figsize: tuple[float, float], nrows: int = 1, ncols: int = 1, **kw: Any) -> tuple[Figure, Any]:
    """A figure outside pyplot's registry (nothing to close, no double display in Jupyter), styled."""
    with style():
        fig = TaukFigure(figsize=figsize, layout="constrained")
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
            with style():
                fig.draw_without_rendering()
        finally:
            fig.set_dpi(old_dpi)
        fig.set_layout_engine("none")
    fig._tauk_layout_frozen = True  # type: ignore[attr-defined]


def save(fig: Figure, path: str | Path, formats: Sequence[str] | None = None, dpi: int = SAVE_DPI) -> list[Path]:
    """Save reproducibly: the same figure gives byte-identical files (no timestamps, fixed producer, fixed dpi).

    The figure's layout is computed once and pinned on the first save (constrained layout would otherwise shift a
    little between saves). ``path`` with a suffix (``.pdf``, ``.png``, ``.svg``) writes that file; without one (or with ``formats``),
    writes ``path.<fmt>`` for each of ``formats`` (default PDF and PNG). Returns the paths written.
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
    _freeze_layout(fig, dpi)
    out = []
    for fmt in fmts:
        meta = {"pdf": _PDF_METADATA, "png": _PNG_METADATA, "svg": _SVG_METADATA}.get(fmt)
        if meta is None:
            raise ValueError(f"unsupported format {fmt!r}; use pdf, png or svg")
        target = stem.with_name(stem.name + "." + fmt)
        target.parent.mkdir(parents=True, exist_ok=True)
        with style():
            fig.savefig(target, format=fmt, dpi=dpi, metadata=dict(meta), facecolor="white")
        out.append(target)
    return out

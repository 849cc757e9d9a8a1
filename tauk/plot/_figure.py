"""Figures made outside pyplot, and reproducible saving.

* :func:`new_figure` makes a :class:`TaukFigure` (its own rich display in Jupyter, nothing to close) at a size
  preset (:func:`~tauk.plot.preset`), styled.
* :func:`save` writes byte-identical PDF / PNG / SVG for the same figure: no creation or modification dates, a fixed
  producer / software tag, fixed dpi. It never crops (no ``bbox_inches="tight"``): the file is the figure's size.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from tauk._compat import keyword_options
from tauk.errors import TaukError

from ._presets import PRESETS, Preset, active_preset, preset, style

__all__ = [
    "save",
    "new_figure",
    "TaukFigure",
]

SAVE_DPI = 150
_PDF_METADATA = {"Creator": "tauk", "Producer": "tauk (matplotlib)", "CreationDate": None, "ModDate": None}
_PNG_METADATA = {"Software": "tauk (matplotlib)"}
_SVG_METADATA = {"Creator": "tauk (matplotlib)", "Date": None}


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

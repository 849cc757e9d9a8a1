"""Plumbing shared by the widgets: figures into Output widgets, escaping."""

from __future__ import annotations

import base64
import io
from typing import Any

import ipywidgets as w
import polars as pl

from tauk.errors import TaukError
from tauk.table import html_escape

__all__ = ["esc", "show_figure", "show_html", "show_text", "WidgetBase", "trials_of", "check_choice"]


def esc(value: Any) -> str:
    """HTML-escape anything (``None`` → empty string); quotes too, so the result is safe inside attributes; bidi
    overrides shown, not obeyed (:func:`tauk.table.html_escape`)."""
    return html_escape(value)


def trials_of(results: Any, what: str, needs: tuple[str, ...] = ()) -> pl.DataFrame:
    """The trials frame of ``results`` (a :class:`tauk.Results` or a trials frame), with ``needs`` columns, or a
    :class:`tauk.TaukError` saying what was given."""
    trials = results if isinstance(results, pl.DataFrame) else getattr(results, "trials", None)
    if not isinstance(trials, pl.DataFrame):
        raise TaukError(f"{what} takes a tauk.Results (tauk.load(...)) or its trials frame, got {type(results).__name__}")
    missing = [c for c in needs if c not in trials.columns]
    if missing:
        raise TaukError(f"{what} needs the column(s) {missing} in the trials; have {trials.columns}")
    return trials


def check_choice(name: str, value: Any, choices: list[Any], what: str) -> None:
    """A :class:`tauk.TaukError` naming the choices when ``value`` is not one of them (instead of a traitlets
    ``TraitError`` from the widget)."""
    if value not in choices:
        shown = ", ".join(repr(c) for c in choices[:30]) + (f", … ({len(choices)} in all)" if len(choices) > 30 else "")
        raise TaukError(f"{name}={value!r} is not one of the {what}: {shown}")


def figure_png(fig: Any, dpi: int = 100) -> bytes:
    """Render a matplotlib Figure to PNG bytes (no timestamp metadata) and close it (drawn under the size preset the
    figure was made at, so its fonts are the ones it was laid out with)."""
    import matplotlib.pyplot as plt

    from tauk.plot import style

    buf = io.BytesIO()
    try:
        with style(getattr(fig, "tauk_preset", None)):
            fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()


def _set(output: w.Output, data: dict[str, Any]) -> None:
    # Setting ``outputs`` directly works with and without a running kernel (``with output:`` needs one).
    output.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)


def show_figure(output: w.Output, fig: Any, alt: str = "figure") -> bytes:
    """Replace the content of ``output`` by the figure (image/png); returns the PNG bytes."""
    png = figure_png(fig)
    _set(output, {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": f"<{alt}>"})
    return png


def show_html(output: w.Output, markup: str, text: str = "") -> None:
    _set(output, {"text/html": markup, "text/plain": text or "(html)"})


def show_text(output: w.Output, text: str) -> None:
    show_html(output, f"<pre class='tauk-note'>{esc(text)}</pre>", text)


def error_html(exc: BaseException) -> str:
    return f"<div class='tauk-error' style='color:#b00020'><b>{esc(type(exc).__name__)}</b>: {esc(exc)}</div>"


class WidgetBase:
    """A thin holder of child widgets; displays as its ``widget`` (a VBox) in Jupyter."""

    widget: w.Widget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):  # a short text fallback instead of the repr of every child widget
            bundle = {**bundle, "text/plain": f"<tauk {type(self).__name__}: run in Jupyter to interact>"}
        return bundle

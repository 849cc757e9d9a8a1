"""Plumbing shared by the widgets: figures into Output widgets, escaping."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

import ipywidgets as w

__all__ = ["esc", "show_figure", "show_html", "show_text", "WidgetBase"]


def esc(value: Any) -> str:
    """HTML-escape anything (``None`` → empty string); quotes too, so the result is safe inside attributes."""
    return "" if value is None else html.escape(str(value), quote=True)


def figure_png(fig: Any, dpi: int = 100) -> bytes:
    """Render a matplotlib Figure to PNG bytes (no timestamp metadata) and close it."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
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

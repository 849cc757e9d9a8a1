"""One self-contained HTML document: a title, sections, escaped tables, figures inlined as SVG, notes.

The page refers to nothing outside itself: no stylesheet, script, font or image is loaded (the CSS and the one small
script are inline; figures are inline SVG; a raster inside a figure is a ``data:`` URI), so it opens from disk with
no server and no network, and can be sent as one file. A Content-Security-Policy in the page enforces it: the
browser loads nothing from anywhere and runs only the page's own script (allowed by its hash), so even text that
escaped the escaping could not run.

Every piece of text goes through :func:`esc` (tables cell by cell, headings, captions, notes); only the markup the
page builds itself and :meth:`Page.add_html` (for renderers that escape their own input) is inserted as is.

Examples
--------
>>> import polars as pl
>>> from tauk.html.page import Page
>>> page = Page("demo")
>>> page.add_section("Numbers", table=pl.DataFrame({"name": ["<b>x</b>"], "n": [1]}), notes=["a note"])
>>> text = page.render()
>>> "&lt;b&gt;x&lt;/b&gt;" in text, "<b>x</b>" in text
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.table import SummaryTable, html_escape

__all__ = ["Page", "esc", "figure_svg", "table_html", "FigureLike", "SCRIPT"]

FigureLike = Any
"""A matplotlib ``Figure``, or a pair ``(caption, Figure)``."""


def esc(value: Any) -> str:
    """HTML-escape anything (``None`` → empty string), quotes too, so it is safe in text and in attributes; bidi
    overrides shown, not obeyed (:func:`tauk.table.html_escape`).

    >>> esc("<script>alert('x')</script>")
    '&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;'
    """
    return html_escape(value)


# ------------------------------------------------------------------------------------------------ tables
def _cell(v: Any, digits: int) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return "—" if math.isnan(v) else f"{v:.{digits}f}"
    if isinstance(v, list | tuple):
        return ", ".join("—" if x is None else str(x) for x in v)
    return str(v)


def table_html(table: Any, *, title: str | None = None, notes: Sequence[str] = (), digits: int = 4,
               max_rows: int | None = 500) -> str:  # fmt: skip
    """An escaped HTML table from a Polars frame, a :class:`tauk.table.SummaryTable` (its own escaped HTML) or a
    result with ``.summary()`` (a tauk statistics result).

    Frames: every cell escaped, floats to ``digits`` places, nulls as "—", at most ``max_rows`` rows (a note says
    how many were left out).

    >>> print(table_html(pl.DataFrame({"a": ["<i>"], "p": [0.12345]}), digits=2))
    <div class='tauk-table'><table><thead><tr><th>a</th><th>p</th></tr></thead><tbody><tr><td>&lt;i&gt;</td><td class='num'>0.12</td></tr></tbody></table></div>
    """
    if isinstance(table, SummaryTable):
        body = table.to_html()  # a SummaryTable: escaped cell by cell by its renderer
        extra = "".join(f"<li>{esc(n)}</li>" for n in notes)
        return (f"<div class='tauk-table'>{body}" + (f"<ul class='tauk-notes'>{extra}</ul>" if extra else "")
                + "</div>")  # fmt: skip
    if not isinstance(table, pl.DataFrame) and callable(getattr(table, "summary", None)):
        return table_html(table.summary(), title=title, notes=notes, digits=digits, max_rows=max_rows)
    if not isinstance(table, pl.DataFrame):
        raise TaukError(f"a table is a Polars DataFrame, a tauk.table.SummaryTable or a result with .summary(); "
                        f"got {type(table).__name__}")  # fmt: skip
    shown = table if max_rows is None else table.head(max_rows)
    numeric = [dt.is_numeric() for dt in shown.dtypes]
    head = "".join(f"<th>{esc(c)}</th>" for c in shown.columns)
    rows = []
    for row in shown.iter_rows():
        cells = "".join(f"<td class='num'>{esc(_cell(v, digits))}</td>" if num else f"<td>{esc(_cell(v, digits))}</td>"
                        for v, num in zip(row, numeric))  # fmt: skip
        rows.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{esc(title)}</caption>" if title else ""
    all_notes = list(notes)
    if shown.height < table.height:
        all_notes.append(f"{table.height - shown.height} more row(s) not shown (max_rows={max_rows})")
    notes_html = "".join(f"<li>{esc(n)}</li>" for n in all_notes)
    return (f"<div class='tauk-table'><table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
            f"</table>" + (f"<ul class='tauk-notes'>{notes_html}</ul>" if notes_html else "") + "</div>")  # fmt: skip


# ------------------------------------------------------------------------------------------------ figures
_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>|<!--.*?-->", re.S)
_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'\b((?:xlink:)?href)="#([^"]+)"')
_URL = re.compile(r"url\(#([^)]+)\)")


def figure_svg(fig: Any, *, prefix: str = "f") -> str:
    """A matplotlib Figure as inline ``<svg>`` markup for an HTML page.

    Saved through :func:`tauk.plot.save` (the figure's own size preset, layout pinned, no timestamp; text as paths,
    so it looks the same without the fonts), then made fit to live inside a page: no XML prolog, DOCTYPE or RDF
    metadata (they name outside addresses), no comments (matplotlib writes each text there), no namespace declarations (HTML gives inline SVG its namespace), and
    every ``id`` — with the references to it — prefixed by ``prefix`` so that several figures never share one.

    >>> from tauk.plot import new_figure
    >>> fig, ax = new_figure("single")
    >>> _ = ax.plot([0, 1], [0, 1])
    >>> svg = figure_svg(fig, prefix="x1")
    >>> svg.startswith("<svg"), "http" in svg, 'id="x1-' in svg
    (True, False, True)
    """
    from tauk.plot import save

    with tempfile.TemporaryDirectory() as tmp:
        (path,) = save(fig, Path(tmp) / "figure.svg")
        text = path.read_text(encoding="utf-8")
    text = _METADATA.sub("", _PROLOG.sub("", text)).strip()
    text = _XMLNS.sub("", text, count=0)
    ids = set(_ID.findall(text))
    text = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', text)
    text = _REF.sub(lambda m: f'{m.group(1)}="#{prefix}-{m.group(2)}"' if m.group(2) in ids else m.group(0), text)
    text = _URL.sub(lambda m: f"url(#{prefix}-{m.group(1)})" if m.group(1) in ids else m.group(0), text)
    return re.sub(r"^<svg\b", "<svg role='img' class='tauk-svg'", text)


# ------------------------------------------------------------------------------------------------ the page
_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:16px 24px;
color:#1f2328;line-height:1.45}
h1{font-size:1.6em;margin:.2em 0 .4em}h2{font-size:1.25em;border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:1.6em}
nav.tauk-toc ul{columns:2;font-size:.92em}
.tauk-table{overflow-x:auto;margin:.6em 0}
.tauk-table table{border-collapse:collapse;font-size:.88em}
.tauk-table caption{text-align:left;font-weight:600;padding:.2em 0}
.tauk-table th,.tauk-table td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
.tauk-table td.num{text-align:right;font-variant-numeric:tabular-nums}
.tauk-table thead th{background:#f6f8fa}
.tauk-notes{font-size:.85em;color:#57606a}
figure.tauk-figure{margin:1em 0}figure.tauk-figure figcaption{font-size:.88em;color:#57606a}
svg.tauk-svg{max-width:100%;height:auto}
.tauk-meta{color:#57606a;font-size:.88em}
details.tauk-sim{border:1px solid #d0d7de;border-radius:4px;margin:4px 0;padding:2px 8px}
details.tauk-sim>summary{cursor:pointer;padding:2px 0}
details.tauk-sim[open]>summary{border-bottom:1px solid #d0d7de;margin-bottom:4px}
.tauk-controls{margin:.5em 0}.tauk-controls button{margin-right:6px}
.tauk-hidden{display:none}
details.tauk-task{margin:4px 0;font-size:.9em}details.tauk-task pre{white-space:pre-wrap;margin:2px 0 2px 12px}
details.tauk-sim>summary,.tauk-meta,.tauk-head{overflow-wrap:anywhere}
"""

SCRIPT = """
(function(){
  function all(open){document.querySelectorAll('details.tauk-sim').forEach(function(d){d.open=open;});}
  var e=document.getElementById('tauk-expand'), c=document.getElementById('tauk-collapse'),
      f=document.getElementById('tauk-filter');
  if(e){e.addEventListener('click',function(){all(true);});}
  if(c){c.addEventListener('click',function(){all(false);});}
  if(f){f.addEventListener('input',function(){
    var q=f.value.toLowerCase();
    document.querySelectorAll('details.tauk-sim').forEach(function(d){
      var s=d.querySelector('summary');
      d.classList.toggle('tauk-hidden', q!=='' && s.textContent.toLowerCase().indexOf(q)<0);
    });
  });}
})();
"""
"""The page's only script: expand / collapse every simulation of the viewer, and filter them by their one-line
summary. It touches no network and reads no data but the page's own text."""


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


@dataclass
class _Section:
    title: str
    anchor: str
    parts: list[str] = field(default_factory=list)


class Page:
    """A self-contained HTML document built section by section; :meth:`render` gives the text, :meth:`write` the
    file. ``title`` heads the page; ``meta`` lines (escaped) sit under it.

    Examples
    --------
    >>> p = Page("report", meta=["made by tauk"])
    >>> p.add_section("Notes", notes=["one", "<two>"])
    >>> html_text = p.render()
    >>> html_text.startswith("<!DOCTYPE html>"), "&lt;two&gt;" in html_text
    (True, True)
    """

    def __init__(self, title: str, *, meta: Iterable[str] = ()) -> None:
        self.title = str(title)
        self.meta = [str(m) for m in meta]
        self._sections: list[_Section] = []
        self._figures = 0

    def _anchor(self, title: str) -> str:
        base = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"
        taken = {s.anchor for s in self._sections}
        anchor, i = base, 2
        while anchor in taken:
            anchor, i = f"{base}-{i}", i + 1
        return anchor

    def add_section(self, title: str, *, text: str | Sequence[str] | None = None, table: Any = None,
                    tables: Sequence[Any] = (), figures: Sequence[FigureLike] | Mapping[str, Any] = (),
                    notes: Sequence[str] = (), html_parts: Sequence[str] = ()) -> None:  # fmt: skip
        """Add a section: paragraphs of ``text`` (escaped), ``table`` / ``tables`` (:func:`table_html`),
        ``figures`` (Figures, ``(caption, Figure)`` pairs or a mapping caption → Figure; inlined as SVG), ``notes``
        (an escaped list) and ``html_parts`` (markup inserted as is: only from renderers that escape their input)."""
        sec = _Section(str(title), self._anchor(str(title)))
        paragraphs = [text] if isinstance(text, str) else list(text or ())
        sec.parts += [f"<p>{esc(t)}</p>" for t in paragraphs]
        for t in ([table] if table is not None else []) + list(tables):
            sec.parts.append(table_html(t))
        items = list(figures.items()) if isinstance(figures, Mapping) else list(figures)
        for item in items:
            caption, fig = item if isinstance(item, tuple) else (None, item)
            sec.parts.append(self._figure(fig, caption))
        if notes:
            sec.parts.append("<ul class='tauk-notes'>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
        sec.parts += list(html_parts)
        self._sections.append(sec)

    def add_html(self, markup: str) -> None:
        """Append markup to the last section as is (it must escape its own text); a section is opened if none is."""
        if not self._sections:
            self.add_section(self.title)
        self._sections[-1].parts.append(markup)

    def _figure(self, fig: Any, caption: str | None) -> str:
        if not hasattr(fig, "savefig"):
            raise TaukError(f"a figure is a matplotlib Figure (or a (caption, Figure) pair), got {type(fig).__name__}")
        self._figures += 1
        svg = figure_svg(fig, prefix=f"fig{self._figures}")
        cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
        return f"<figure class='tauk-figure'>{svg}{cap}</figure>"

    def render(self) -> str:
        """The whole document (a string)."""
        csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
               f"script-src '{_script_hash(SCRIPT)}'; base-uri 'none'; form-action 'none'")  # fmt: skip
        toc = ""
        if len(self._sections) > 1:
            toc = ("<nav class='tauk-toc'><ul>" + "".join(f"<li><a href='#{s.anchor}'>{esc(s.title)}</a></li>"
                                                            for s in self._sections) + "</ul></nav>")  # fmt: skip
        body = "".join(f"<section id='{s.anchor}'><h2>{esc(s.title)}</h2>{''.join(s.parts)}</section>"
                       for s in self._sections)  # fmt: skip
        meta = "".join(f"<div class='tauk-meta'>{esc(m)}</div>" for m in self.meta)
        return (
            "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{csp}\">"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{esc(self.title)}</title><style>{_CSS}</style></head>\n<body>"
            f"<h1>{esc(self.title)}</h1>{meta}{toc}{body}<script>{SCRIPT}</script></body></html>\n"
        )

    def write(self, path: str | Path) -> Path:
        """Write the document (UTF-8) to ``path`` and return it."""
        out = Path(path)
        if out.is_dir():
            raise TaukError(f"{out} is a folder; give the path of the HTML file to write")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(self.render(), encoding="utf-8")
        return out

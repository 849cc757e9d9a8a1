"""The :class:`SummaryTable`: one titled table with notes, rendered as text, Markdown, CSV, a Polars frame, HTML
and LaTeX (the cells formatted and escaped by :mod:`tauk.table._format`)."""

from __future__ import annotations

import csv
import io
import math
import re
import textwrap
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tauk.errors import TaukError

from ._format import (
    _LATEX_SPECIAL,
    _PDFLATEX_TEXT,
    Interval,
    _breakable,
    _caption,
    csv_safe,
    distinct_labels,
    fmt,
    html_escape,
    latex_escape,
    markdown_escape,
    terminal_safe,
)

__all__ = ["SummaryTable", "LATEX_PACKAGES", "LATEX_WIDTH_PT", "FORMATS"]

FORMATS: tuple[str, ...] = ("table", "csv", "markdown", "latex")
"""The text formats of :meth:`SummaryTable.render` (``table``: text for a terminal); the command line's ``--format``
offers these and ``json`` (a result's records)."""

LATEX_PACKAGES = ("booktabs", "array")
"""The LaTeX packages :meth:`SummaryTable.to_latex` needs (both in a stock TeX Live: ``\\usepackage{booktabs,array}``)."""

LATEX_WIDTH_PT = 219.0
"""The column width :meth:`SummaryTable.to_latex` fits by default, in points: the narrowest common two-column layout
(ACL's 7.7 cm; IEEE, ICML and a two-column ``article`` are wider)."""

_TABCOLSEP = 3.0  # points each side of a cell
_KEY_OVER = 24  # a label column with a longer text gets short keys and a legend
_WRAP_OVER = 12  # … a longer one wraps
_WRAP_PT = 56.0  # the width of a wrapped column
# widths of characters at \footnotesize (8 pt Computer Modern), rounded up: an over-estimate keeps tables inside
_NARROW, _WIDE = set(".,:;!|'()[]ilj1/-"), set("MWmw@%—…")


def _text_pt(text: str) -> float:
    """The width of ``text`` at 8 pt, an over-estimate (for fitting a table, never for typesetting)."""
    w = 0.0
    for ch in text:
        if not (_PDFLATEX_TEXT.match(ch) or ch in _LATEX_SPECIAL or ch.isspace()):  # typeset as its code point: U+XXXX in typewriter
            w += 4.3 * (len(f"{ord(ch):04X}") + 2)
            continue
        w += 2.6 if ch in _NARROW else 7.6 if ch in _WIDE else 6.6 if ch.isupper() else 4.7
    return w


def _cols(text: str) -> int:
    """The columns ``text`` takes on a terminal: a wide (CJK, emoji) character two, a combining mark none."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int, left: bool) -> str:
    """``text`` padded with spaces to ``width`` terminal columns, on the right (``left``) or on the left."""
    fill = " " * max(0, width - _cols(text))
    return text + fill if left else fill + text


_HEAD_PT = 40.0  # a header is stacked over lines no narrower than this
_FLOAT_LINES = 60  # rows (over all stacked blocks) in one float: a float taller than a page does not compile


def _header_lines(text: str, target: float) -> list[str]:
    """``text`` broken at spaces (and after hyphens) into lines of at most ``target`` points where it can be."""
    lines: list[str] = []
    for word in str(text).split(" "):
        for j, piece in enumerate(re.findall(r"[^-]+-?|-", word) or [word]):
            joined = f"{lines[-1]}{'' if j else ' '}{piece}" if lines else piece
            if lines and _text_pt(joined) <= target:
                lines[-1] = joined
            else:
                lines.append(piece)
    return lines or [""]


def _latex_header(lines: list[str], left: bool) -> str:
    """One header cell: the escaped text, or its lines stacked in a bottom-aligned inner tabular."""
    if len(lines) == 1:
        return latex_escape(lines[0])
    inner = r"\\\relax ".join(latex_escape(x) for x in lines)  # \relax: a line starting with "[" is not an option
    return r"\begin{tabular}[b]{@{}" + ("l" if left else "r") + "@{}}" + inner + r"\end{tabular}"


def _latex_blocks(widths: list[float], keys: int, width: float) -> list[list[int]]:
    """Columns in stacked blocks no wider than ``width`` points, the first ``keys`` columns in each."""
    key = list(range(keys))
    base = sum(widths[i] for i in key)
    blocks: list[list[int]] = []
    current: list[int] = []
    used = base
    for i in range(keys, len(widths)):
        if current and used + widths[i] > width:
            blocks.append(key + current)
            current, used = [], base
        current.append(i)
        used += widths[i]
    blocks.append(key + current)
    return blocks


# ---- the table ------------------------------------------------------------------------------------------------
def _check_digits(digits: Any) -> int:
    """``digits`` (decimals of the numbers shown) as a positive integer, else a one-line
    :class:`~tauk.errors.TaukError` (0 or fewer made Python's format raise on the first small number)."""
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise TaukError(f"digits must be a positive integer (decimals of the numbers shown), got {digits!r}")
    return digits


@dataclass(frozen=True)
class SummaryTable:
    """A titled table with notes, rendered for every target from one place.

    ``columns`` are the display names (text, Markdown, HTML, LaTeX); ``fields`` the machine names of the same
    columns (CSV, :meth:`to_frame`, :meth:`records`; default: the display names). ``keys``: how many leading
    columns identify a row (repeated when a wide text table is split into blocks). ``align``: one ``"l"``/``"r"``
    per column for text (default: labels left, numbers right). ``label``: the LaTeX ``\\label`` (default from the
    title). ``context``: ``(field, value)`` pairs every row shares that the title and headers carry for a reader
    (which agents a comparison is of, its k), written as leading columns where there is no title: CSV,
    :meth:`to_frame`, :meth:`records`.

    Examples
    --------
    >>> print(SummaryTable.build("t", ["name", "n"], [["a", 1], ["bcd", 22]], ["a note"]))
    t
    =
    name   n
    --------
    a      1
    bcd   22
    * a note
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    digits: int = 4
    align: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    keys: int = 1
    label: str | None = None
    context: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def build(
        cls,
        title: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        notes: Sequence[str] = (),
        digits: int = 4,
        align: Sequence[str] = (),
        *,
        fields: Sequence[str] = (),
        keys: int = 1,
        label: str | None = None,
        context: Sequence[tuple[str, Any]] = (),
    ) -> SummaryTable:
        """Build a table from any sequences (see the class docs for the options)."""
        if fields and len(fields) != len(columns):
            raise ValueError("fields must name every column")
        return cls(title, tuple(columns), tuple(tuple(r) for r in rows), tuple(notes), digits, tuple(align),
                   tuple(fields), keys, label, tuple(context))  # fmt: skip

    # -- cells --------------------------------------------------------------------------------------------------
    @property
    def field_names(self) -> tuple[str, ...]:
        return self.fields or self.columns

    def _cells(self, digits: int | None = None) -> list[list[str]]:
        d = self.digits if digits is None else _check_digits(digits)
        return [[fmt(v, d) for v in row] for row in self.rows]

    def _left(self) -> list[bool]:
        if self.align:
            return [i < len(self.align) and self.align[i] == "l" for i in range(len(self.columns))]
        return [all(isinstance(r[i], str) or r[i] is None for r in self.rows) and
                any(isinstance(r[i], str) for r in self.rows) for i in range(len(self.columns))]  # fmt: skip

    def render(self, format: str = "table", *, digits: int | None = None, wide: bool = False) -> str:
        """The table in one of :data:`FORMATS`, as the command line prints it (ending in a newline).

        >>> print(SummaryTable.build("t", ["x"], [[0.5]]).render("csv", digits=2), end="")
        x
        0.5
        """
        if format == "csv":
            return self.to_csv(digits=digits)
        if format == "markdown":
            return self.to_markdown(digits=digits)
        if format == "latex":
            return self.to_latex(digits=digits) + "\n"
        if format == "table":
            return self.to_text(digits=digits, wide=wide) + "\n"
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")

    # -- text ---------------------------------------------------------------------------------------------------
    def to_text(self, *, width: int = 100, digits: int | None = None, wide: bool = False,
                max_label: int = 48) -> str:  # fmt: skip
        """Plain text for a terminal: control characters made visible; unless ``wide``, a label column with a label
        longer than ``max_label`` loses what all its labels share and then, if still too long, shows short keys
        with a legend in the notes (a label is never cut in the middle), and a table wider than ``width`` split into blocks of columns (the
        key columns repeated in each) and notes wrapped at ``width``."""
        cols = [terminal_safe(c) for c in self.columns]
        cells = [[terminal_safe(c) for c in row] for row in self._cells(digits)]
        label_notes: list[str] = []
        if not wide:
            cells, label_notes = self._fit_labels(cells, max_label)
        widths = [_cols(c) for c in cols]
        for row in cells:
            widths = [max(w, _cols(c)) for w, c in zip(widths, row)]
        left = self._left()
        title = terminal_safe(self.title)
        out = [title, "=" * max(_cols(title), 1)]
        blocks = [list(range(len(cols)))] if wide else self._blocks(widths, width)
        for b, block in enumerate(blocks):
            if b:
                out.append("")
            line = "  ".join(_pad(cols[i], widths[i], left[i]) for i in block)
            out += [line.rstrip(), "-" * _cols(line)]
            for row in cells:
                out.append("  ".join(_pad(row[i], widths[i], left[i]) for i in block).rstrip())
        for n in [*label_notes, *self.notes]:  # wrapped at the same width, continuation lines indented under the text
            note = f"* {terminal_safe(n)}"
            out += [note] if wide else textwrap.wrap(note, width, subsequent_indent="  ", break_on_hyphens=False,
                                                          break_long_words=False)
        return "\n".join(out)

    def _fit_labels(self, cells: list[list[str]], max_label: int) -> tuple[list[list[str]], list[str]]:
        """Label columns with a label longer than ``max_label``: what every label shares left out (a common prefix
        or suffix, :func:`~tauk.table._format.distinct_labels`), then, if still too long, short keys with a legend —
        never cut in the middle. Returns the cells and the notes saying what was done."""
        notes: list[str] = []
        left = self._left()
        cells = [list(r) for r in cells]
        for i, lf in enumerate(left):
            column = [r[i] for r in cells]
            if not lf or max((len(c) for c in column), default=0) <= max_label:
                continue
            name = terminal_safe(self.columns[i])
            short, pre, suf = distinct_labels(column)
            if pre or suf:
                dropped = " and ".join(x for x in (f"prefix '{pre}'" if pre else "", f"suffix '{suf}'" if suf else "")
                                       if x)  # fmt: skip
                notes.append(f"{name}: the common {dropped} left out")
                column = short
            if max((len(c) for c in column), default=0) > max_label:
                initial = (re.sub(r"[^A-Za-z]", "", self.field_names[i])[:1] or "K").upper()
                order = list(dict.fromkeys(c for c in column if len(c) > max_label))
                key = {c: f"{initial}{j + 1}" for j, c in enumerate(order)}
                notes.append(f"{name}: " + "; ".join(f"{k} = {c}" for c, k in key.items()))
                column = [key.get(c, c) for c in column]
            for r, c in zip(cells, column):
                r[i] = c
        return cells, notes

    def _blocks(self, widths: list[int], width: int) -> list[list[int]]:
        keys = list(range(min(self.keys, len(widths))))
        base = sum(widths[i] + 2 for i in keys)
        blocks: list[list[int]] = []
        current: list[int] = []
        used = base
        for i in range(len(keys), len(widths)):
            if current and used + widths[i] + 2 > width + 2:
                blocks.append(keys + current)
                current, used = [], base
            current.append(i)
            used += widths[i] + 2
        blocks.append(keys + current)
        return blocks

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return self.to_text()

    # -- Markdown -----------------------------------------------------------------------------------------------
    def to_markdown(self, *, level: int = 3, digits: int | None = None) -> str:
        """GitHub Markdown: a heading, a pipe table and the notes as a list; every cell escaped."""
        lines = [f"{'#' * level} {markdown_escape(self.title)}", ""]
        lines.append("| " + " | ".join(markdown_escape(c) for c in self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        for raw, row in zip(self.rows, self._cells(digits)):  # numbers need no escaping, text from files does
            lines.append("| " + " | ".join(c if isinstance(v, int | float | Interval) else markdown_escape(c)
                                           for v, c in zip(raw, row)) + " |")  # fmt: skip
        if self.notes:
            lines.append("")
            lines += [f"- {markdown_escape(n)}" for n in self.notes]
        return "\n".join(lines) + "\n"

    # -- numbers: CSV, frame, records -----------------------------------------------------------------------------
    def _flat(self, digits: int | None) -> tuple[list[str], list[list[Any]]]:
        """Field names and raw values, intervals expanded into three columns, floats rounded to ``digits``."""
        digits = None if digits is None else _check_digits(digits)
        has_interval = [any(isinstance(r[i], Interval) for r in self.rows) for i in range(len(self.columns))]
        names: list[str] = [name for name, _ in self.context]
        for name, iv in zip(self.field_names, has_interval):
            names += [name, f"{name}_ci_low", f"{name}_ci_high"] if iv else [name]

        def num(v: Any) -> Any:
            if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
                return None
            if isinstance(v, float) and digits is not None:  # decimals, or significant digits for tiny values
                return float(f"{v:.{digits - 1}e}") if v != 0 and abs(v) < 10 ** (-digits) else round(v, digits)
            return v

        rows = []
        for row in self.rows:
            flat: list[Any] = [num(v) for _, v in self.context]
            for v, iv in zip(row, has_interval):
                if iv:
                    x = v if isinstance(v, Interval) else Interval(v)
                    flat += [num(x.estimate), num(x.low), num(x.high)]
                else:
                    flat.append(num(v))
            rows.append(flat)
        return names, rows

    def to_csv(self, *, digits: int | None = None) -> str:
        """CSV with the machine field names; an interval as ``x, x_ci_low, x_ci_high``; floats at full precision
        (rounded to ``digits`` decimals only when given); text with control characters dropped and a leading ``=``, ``+``,
        ``-``, ``@``, tab or CR neutralised by a single quote (:func:`~tauk.table._format.csv_safe`)."""
        names, rows = self._flat(digits)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([csv_safe(n) for n in names])
        for r in rows:
            w.writerow(["" if v is None else csv_safe(v) if isinstance(v, str) else v for v in r])
        return buf.getvalue()

    def records(self) -> list[dict[str, Any]]:
        """One dict per row with the machine field names and full-precision numbers."""
        names, rows = self._flat(None)
        return [dict(zip(names, r)) for r in rows]

    def to_frame(self) -> Any:
        """The table as a Polars frame (machine names, full-precision numbers, intervals as three columns)."""
        import polars as pl

        names, rows = self._flat(None)
        return pl.DataFrame(rows, schema=names, orient="row", infer_schema_length=None)

    # -- HTML -------------------------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        esc = html_escape
        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in self._cells())
        notes = "".join(f"<li>{esc(n)}</li>" for n in self.notes)
        notes_html = f"<ul class='tauk-notes'>{notes}</ul>" if notes else ""
        return (
            f"<div class='tauk-summary'><table><caption>{esc(self.title)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes_html}</div>"
        )

    def to_html(self) -> str:
        """The HTML rendering (every cell escaped)."""
        return self._repr_html_()

    # -- LaTeX ------------------------------------------------------------------------------------------------
    def to_latex(self, *, label: str | None = None, digits: int | None = None,
                 width: float = LATEX_WIDTH_PT) -> str:  # fmt: skip
        """A ``table`` float with a caption and ``\\label``, booktabs rules, every cell escaped, that fits a column
        ``width`` points wide (default :data:`LATEX_WIDTH_PT`, the narrowest common two-column layout) with no text
        below 7 pt in a 10 pt document: body at ``\\footnotesize``, an interval on a second line under its estimate
        at ``\\scriptsize``, labels longer than 24 characters replaced by short keys (``A1``, ``S1`` …: the first
        letter of the column) with a legend under the table, shorter ones wrapped, and a table still too wide split
        into stacked blocks of columns (the key columns repeated in each). Nothing is scaled. The label is used as
        given, with only characters outside ``A-Za-z0-9:._-`` replaced (it is never escaped). Needs
        ``\\usepackage{booktabs,array}`` (:data:`LATEX_PACKAGES`).

        >>> t = SummaryTable.build("t", ["setup", "n"], [["airline/normal/gpt-4.1/DB,COMMUNICATE", 1]])
        >>> tex = t.to_latex(label="tab:my_table")
        >>> "label{tab:my_table}" in tex, "S1 &" in tex, "S1: airline/normal" in tex.replace("\\\\allowbreak{}", "")
        (True, True, True)
        """
        d = self.digits if digits is None else digits
        left = self._left()
        ncol = len(self.columns)
        keyed: dict[int, dict[str, str]] = {}
        wrap: set[int] = set()
        for i, lf in enumerate(left):
            texts = [str(r[i]) for r in self.rows if isinstance(r[i], str)]
            longest = max([len(t) for t in texts] + [0])
            if lf and longest > _KEY_OVER:
                initial = (re.sub(r"[^A-Za-z]", "", self.field_names[i])[:1] or "K").upper()
                used = {k for m in keyed.values() for k in m.values()}
                while any(k.startswith(initial) for k in used):
                    initial += initial[-1].lower()
                order = list(dict.fromkeys(texts))
                keyed[i] = {t: f"{initial}{j + 1}" for j, t in enumerate(order)}
            elif lf and longest > _WRAP_OVER:
                wrap.add(i)

        def cell(v: Any, i: int) -> str:
            if isinstance(v, Interval) and v.estimate is not None and v.low is not None and v.high is not None:
                return (rf"\begin{{tabular}}[t]{{@{{}}r@{{}}}}{fmt(v.estimate, d)}\\"
                        rf"{{\scriptsize[{fmt(v.low, d)}, {fmt(v.high, d)}]}}\end{{tabular}}")  # fmt: skip
            if i in keyed and isinstance(v, str):
                return keyed[i][v]
            text = fmt(v, d)
            return _breakable(text) if i in wrap else latex_escape(text)

        def est(v: Any, i: int) -> float:  # the column's width in points at \footnotesize (an over-estimate)
            if isinstance(v, Interval) and v.estimate is not None and v.low is not None and v.high is not None:
                return max(_text_pt(fmt(v.estimate, d)), _text_pt(f"[{fmt(v.low, d)}, {fmt(v.high, d)}]"))  # scriptsize: over
            if i in keyed and isinstance(v, str):
                return _text_pt(keyed[i][v])
            return min(_text_pt(fmt(v, d)), _WRAP_PT) if i in wrap else _text_pt(fmt(v, d))

        cells = [max([est(r[i], i) for r in self.rows], default=0.0) for i in range(ncol)]
        # a long header of a narrow column is stacked over lines no wider than its cells (at least _HEAD_PT)
        heads = [[self.columns[i]] if i in wrap else _header_lines(self.columns[i], max(cells[i], _HEAD_PT))
                 for i in range(ncol)]  # fmt: skip
        # a wrapped column is a p{_WRAP_PT} box: exactly that wide, whatever its text
        widths = [(_WRAP_PT if i in wrap else max(max(map(_text_pt, heads[i])), cells[i])) + 2 * _TABCOLSEP
                  for i in range(ncol)]  # fmt: skip
        nk = min(self.keys, ncol)
        need = sum(widths[:nk]) + max(widths[nk:], default=0.0)
        wrapped_keys = [i for i in range(nk) if i in wrap]
        wrap_pt = _WRAP_PT
        if need > width and wrapped_keys:  # the keys and one column must fit: narrower wrapped key columns
            wrap_pt = max(_HEAD_PT - 4.0, _WRAP_PT - (need - width) / len(wrapped_keys))
            widths = [wrap_pt + 2 * _TABCOLSEP if i in wrap else w for i, w in enumerate(widths)]
        blocks = _latex_blocks(widths, nk, width)
        tag = label or self.label or "tab:" + (re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-") or "table")
        tag = re.sub(r"[^A-Za-z0-9:._-]+", "-", str(tag))
        # a float taller than a page does not compile ("Dimension too large"): long tables go over several floats,
        # each of at most _FLOAT_LINES rows over all its stacked blocks
        per = max(5, _FLOAT_LINES // max(1, len(blocks)))
        chunks = [self.rows[j:j + per] for j in range(0, len(self.rows), per)] or [[]]
        lines = ["% needs \\usepackage{" + ",".join(LATEX_PACKAGES) + "}"]
        for c, rows in enumerate(chunks):
            # a caption of names joined by "_" or ":" may break after them (TeX breaks only at spaces and hyphens)
            title = _caption(self.title) + (f" (continued, {c + 1} of {len(chunks)})" if c else "")
            lines += [
                r"\begin{table}[tbp]",
                r"\centering",
                rf"\caption{{{title}}}" + (rf"\label{{{tag}}}" if not c else ""),
                rf"\footnotesize\setlength{{\tabcolsep}}{{{_TABCOLSEP:g}pt}}%",
            ]
            for b, block in enumerate(blocks):
                if b:
                    lines.append(r"\par\medskip")
                spec = "".join((rf">{{\raggedright\arraybackslash}}p{{{wrap_pt:g}pt}}" if i in wrap else "l")
                               if left[i] else "r" for i in block)  # fmt: skip
                lines += [
                    r"\begin{tabular}{@{}" + spec + "@{}}",
                    r"\toprule",
                    " & ".join(_latex_header(heads[i], left[i]) for i in block) + r" \\",
                    r"\midrule",
                ]
                # \relax: a row starting with "[" must not be read as the optional argument of the \\ before it
                lines += [r"\relax " + " & ".join(cell(row[i], i) for i in block) + r" \\" for row in rows]
                lines += [r"\bottomrule", r"\end{tabular}"]
            if c == len(chunks) - 1:
                legend = [f"{self.columns[i]}: " + "; ".join(f"{k}: {t}" for t, k in m.items())
                          for i, m in keyed.items()]  # fmt: skip
                notes = [*legend, *self.notes]
                if notes:
                    lines.append(r"\par\smallskip\parbox{\columnwidth}{\scriptsize\raggedright")
                    lines += [_breakable(n) + r"\par" for n in notes]
                    lines.append("}")
            lines.append(r"\end{table}")
        return "\n".join(lines)

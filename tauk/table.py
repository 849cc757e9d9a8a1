"""The one table renderer of tauk: every result's ``summary()`` is a :class:`SummaryTable` (text, HTML, LaTeX)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SummaryTable", "fmt", "latex_escape"]


def fmt(value: Any, digits: int = 4) -> str:
    """Format one cell: floats to ``digits`` significant decimals, None/NaN as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if value != 0 and (abs(value) < 10 ** (-digits) or abs(value) >= 1e7):
            return f"{value:.{digits - 1}e}"
        return f"{value:.{digits}f}"
    return str(value)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in ``text`` (every cell of :meth:`SummaryTable.to_latex` goes through it).

    Parameters
    ----------
    text
        Any text, e.g. a label read from a results file.

    Returns
    -------
    str
        The text, safe inside a LaTeX table.

    Examples
    --------
    >>> print(latex_escape("pass^1 of gpt_4 (50%)"))
    pass\textasciicircum{}1 of gpt\_4 (50\%)
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


_latex_escape = latex_escape  # the old private name


@dataclass(frozen=True)
class SummaryTable:
    """A titled table with optional notes; renders as text (``str``), HTML (``_repr_html_``) and LaTeX.

    Every cell is escaped for the target format, so labels taken from result files are safe to display. ``align``
    optionally gives one ``"l"`` / ``"r"`` per column for the text rendering (default: every cell right-aligned).

    Examples
    --------
    >>> print(SummaryTable.build("t", ["name", "n"], [["a", 1], ["bcd", 22]], ["a note"], align="lr"))
    ... # doctest: +NORMALIZE_WHITESPACE
    t
    =
    name  n
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

    @classmethod
    def build(
        cls,
        title: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        notes: Sequence[str] = (),
        digits: int = 4,
        align: Sequence[str] = (),
    ) -> SummaryTable:
        """Build a table from any sequences (``align``: one ``"l"`` / ``"r"`` per column, optional)."""
        return cls(title, tuple(columns), tuple(tuple(r) for r in rows), tuple(notes), digits, tuple(align))

    def _cells(self) -> list[list[str]]:
        return [[fmt(v, self.digits) for v in row] for row in self.rows]

    def __str__(self) -> str:
        cells = self._cells()
        widths = [len(c) for c in self.columns]
        for row in cells:
            widths = [max(w, len(c)) for w, c in zip(widths, row)]
        line = "  ".join(c.ljust(w) for c, w in zip(self.columns, widths))
        out = [self.title, "=" * max(len(self.title), 1), line, "-" * len(line)]
        left = [i < len(self.align) and self.align[i] == "l" for i in range(len(widths))]
        out += ["  ".join(c.ljust(w) if lf else c.rjust(w) for c, w, lf in zip(row, widths, left)) for row in cells]
        out += [f"* {n}" for n in self.notes]
        return "\n".join(out)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        esc = html.escape
        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in self._cells()
        )
        notes = "".join(f"<li>{esc(n)}</li>" for n in self.notes)
        notes_html = f"<ul class='tauk-notes'>{notes}</ul>" if notes else ""
        return (
            f"<div class='tauk-summary'><table><caption>{esc(self.title)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes_html}</div>"
        )

    def to_latex(self) -> str:
        """A ``tabular`` inside a ``table`` float (booktabs rules), every cell escaped."""
        spec = "l" * len(self.columns)
        lines = [
            r"\begin{table}[ht]",
            r"\centering",
            rf"\caption{{{latex_escape(self.title)}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(latex_escape(c) for c in self.columns) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in self._cells()]
        lines += [r"\bottomrule", r"\end{tabular}"]
        lines += [rf"\par\footnotesize {latex_escape(n)}" for n in self.notes]
        lines.append(r"\end{table}")
        return "\n".join(lines)

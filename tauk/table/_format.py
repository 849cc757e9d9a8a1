"""Cells of a :class:`~tauk.table.SummaryTable`: :class:`Interval`, :func:`fmt` and the escaping of each target.

One function per target: :func:`terminal_safe` (terminal text: control characters made visible),
:func:`markdown_escape` (GitHub Markdown and the HTML it becomes), :func:`latex_escape` (LaTeX specials and the
symbols pdflatex does not know) and :func:`csv_safe` (no formula a spreadsheet would evaluate) and :func:`html_escape` (HTML text and attributes:
:func:`html.escape`, bidi overrides shown).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from tauk._text import terminal_safe  # lives below every layer (the errors need it too)

__all__ = ["Interval", "csv_safe", "distinct_labels", "fmt", "html_escape", "latex_escape", "markdown_escape",
           "terminal_safe"]


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval: one cell in text, three columns (``x``, ``x_ci_low``, ``x_ci_high``) in CSV.

    >>> fmt(Interval(0.42, 0.3, 0.55), 2), fmt(Interval(0.42, None, None), 2)
    ('0.42 [0.30, 0.55]', '0.42')
    """

    estimate: float | None
    low: float | None = None
    high: float | None = None


def fmt(value: Any, digits: int = 4) -> str:
    """Format one cell: floats to ``digits`` decimals, None/NaN as an em dash, an :class:`Interval` as
    ``estimate [low, high]``."""
    if isinstance(value, Interval):
        if value.estimate is None:
            return "—"
        if value.low is None or value.high is None:
            return fmt(value.estimate, digits)
        return f"{fmt(value.estimate, digits)} [{fmt(value.low, digits)}, {fmt(value.high, digits)}]"
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


# ---- escaping, one function per target ----------------------------------------------------------------------


_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
# what a page would hide or reflow: C0 / C1 controls but tab, newline and the CR of a CRLF (HTML reads a lone CR as
# a line break and shows ESC as nothing: task "t\r8" looked like "t 8", an ANSI colour code vanished)
_HTML_CONTROL = re.compile(r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def html_escape(text: Any) -> str:
    """Text safe in HTML text and attributes: ``& < > " '`` as entities (:func:`html.escape`), the bidi
    embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) shown as ``\\u202e`` like the terminal shows
    them: obeyed, one in a task id would draw the rest of its line reversed, and the other control characters a
    page would hide or turn into a line break (ESC, a lone CR, …; not tab or newline) shown as ``\\x1b``, ``\\r``
    (``None`` → empty string).

    >>> html_escape("<b>t\u202e7</b> · reward 0")
    '&lt;b&gt;t\\\\u202e7&lt;/b&gt; · reward 0'
    >>> html_escape("t\\r8 \\x1b[31mred\\nnext")
    't\\\\r8 \\\\x1b[31mred\\nnext'
    """
    if text is None:
        return ""
    import html  # loaded when a page or a notebook renders one (not at every start)

    out = _BIDI.sub(lambda m: f"\\u{ord(m.group(0)):04x}", html.escape(str(text), quote=True))
    return _HTML_CONTROL.sub(lambda m: repr(m.group(0))[1:-1], out)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(text: Any) -> str:
    """A CSV text cell no spreadsheet evaluates as a formula (OWASP's rule against CSV injection): a cell that starts
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single quote, which spreadsheets show
    as text and do not evaluate; control characters are shown as :func:`terminal_safe` shows them (``\\x1b``), so
    names that differ only there stay apart (they were dropped: ``gpt<ESC>`` and ``gpt`` became one name). Numbers are
    written as numbers, never through this (so ``-0.5`` stays a number).

    >>> [csv_safe(s) for s in ("=HYPERLINK('http://e.vil')", "+1", "-x", "@SUM(A1)", "\\t=1", "gpt\\x1b", "")]
    ["'=HYPERLINK('http://e.vil')", "'+1", "'-x", "'@SUM(A1)", "'\\\\t=1", 'gpt\\\\x1b', '']
    """
    raw = str(text)
    s = terminal_safe(raw)  # shown, not dropped; "\x00=1" starts with a backslash then, never with "="
    return "'" + s if raw.startswith(_FORMULA_START) or s.startswith(_FORMULA_START) else s


def csv_safe_expr(column: str) -> Any:
    """The Polars expression of :func:`csv_safe`'s formula guard for a data export: a text cell that starts with
    ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single quote; everything else is kept as
    it is (newlines and tabs inside a cell are the data's: the CSV writer quotes them), nulls stay null.

    >>> import polars as pl
    >>> pl.DataFrame({"x": ["=1+1", "a\\nb", "-2", None]}).select(csv_safe_expr("x"))["x"].to_list()
    ["'=1+1", 'a\\nb', "'-2", None]
    """
    import polars as pl

    col = pl.col(column)
    risky = col.str.starts_with(_FORMULA_START[0])
    for start in _FORMULA_START[1:]:
        risky = risky | col.str.starts_with(start)
    return pl.when(risky).then(pl.lit("'") + col).otherwise(col).alias(column)


_MD_SPECIAL = re.compile(r"([\\`*\[\]|!$])")
# "_" and "~" open or close emphasis / strikethrough only at a word's edge: "_" between two letters or digits
# ("gpt_4o") and "~" between two spaces ("p ~ Beta") stay as they are, so that names and notes read as written
_MD_EDGE = re.compile(r"_(?![^\W_])|(?<![^\W_])_|~(?!\s)|(?<!\s)~")


def markdown_escape(text: Any) -> str:
    """Text safe inside a Markdown table cell (and the HTML it becomes): ``& < >`` as entities so no tag forms,
    ``\\ ` * [ ] | ! $`` escaped so no cell break, link, image, code span, emphasis or math (GitHub renders
    ``$…$``) forms, ``_`` and ``~`` escaped at a word's edge so no emphasis or strikethrough forms (inside a word,
    ``gpt_4o``, they stay as they are), line breaks folded and other control characters (ESC, bidi overrides …)
    shown as the terminal and HTML show them (``\\x1b``), not dropped: two names that differ only there stay apart.

    >>> print(markdown_escape("![x](http://e.vil) <img onerror=1> a|b\\r\\nc"))
    \\!\\[x\\](http://e.vil) &lt;img onerror=1&gt; a\\|b c
    >>> print(markdown_escape("$x_1$ _draft_ ~~old~~ gpt_4o p ~ q"))
    \\$x_1\\$ \\_draft\\_ \\~\\~old\\~\\~ gpt_4o p ~ q
    """
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = re.sub(r"[\r\n\t\u2028\u2029]+", " ", s)
    s = terminal_safe(s)  # what is left of the controls, made visible (its backslash escaped below)
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return _MD_EDGE.sub(lambda m: "\\" + m.group(0), s)


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
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "\n": " ",
    "\r": " ",
    "\t": " ",
    "\u2028": " ",
    "\u2029": " ",
    # symbols the statistics notes use that pdflatex's utf8 input does not know (in math mode)
    "−": "-",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "…": r"\ldots{}",
    "±": r"$\pm$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≠": r"$\neq$",
    "≈": r"$\approx$",
    "√": r"$\surd$",
    "∪": r"$\cup$",
    "∈": r"$\in$",
    "Σ": r"$\Sigma$",
    "²": r"$^2$",
    "\u0302": "",  # a combining circumflex (σ̂): pdflatex's utf8 has no such input; the hat is dropped
    **{ch: f"$\\{name}$" for ch, name in zip("αβγδεκλμνρστφχψω", ("alpha", "beta", "gamma", "delta", "epsilon", "kappa",
       "lambda", "mu", "nu", "rho", "sigma", "tau", "phi", "chi", "psi", "omega"))},  # fmt: skip
}


# What pdflatex typesets in a stock document (article, OT1, the kernel's utf8): printable ASCII and these, measured
# one character a line with TeX Live 2022 (tests/test_tables.py compiles every one of them). Any other character
# (CJK, emoji, Cyrillic, T1-only letters such as «ą») stops pdflatex with "Unicode character … not set up".
_PDFLATEX_TEXT = re.compile(
    "[\x20-\x7e\xa0-\xaa\xac\xae-\xba\xbc-\xcf\xd1-\xdd\xdf-\xef\xf1-\xfd\xff-\u0103\u0106-\u010f\u0112-\u0117"
    "\u011a-\u0125\u0128-\u012d\u0130-\u0137\u0139-\u013e\u0141-\u0148\u014c-\u0165\u0168-\u0171\u0174-\u017e\u0192"
    "\u01c4-\u01d4\u01e2-\u01e3\u01e6-\u01e9\u01f0\u01f4-\u01f5\u0218-\u021b\u0232-\u0233\u0237\u02c6-\u02c7"
    "\u02d8-\u02d9\u02dc-\u02dd\u0e3f\u1e02-\u1e03\u1e0d\u1e1e-\u1e21\u1e25\u1e30-\u1e31\u1e37\u1e43\u1e45\u1e47"
    "\u1e5b\u1e63\u1e6d\u1e8e-\u1e91\u1e9e\u1ef2-\u1ef3\u2010-\u2016\u2018-\u2019\u201c-\u201d\u2020-\u2022\u2026"
    "\u2030-\u2031\u203b\u203d\u2044\u204e\u2052\u20a1\u20a4\u20a6\u20a9\u20ab-\u20ac\u20b1\u2103\u2116-\u2117"
    "\u211e\u2120\u2122\u2126-\u2127\u212e\u2190-\u2193\u2329-\u232a\u2422-\u2423]"
)


def _latex_char(ch: str) -> str:
    """One character for pdflatex: a special escaped, one pdflatex cannot typeset — a control character (ESC, a bidi
    override) too, which was dropped, so "gpt" and "gpt<ESC>" looked alike — shown as its code point
    (``\\texttt{U+6A21}``: the name stays legible and tells apart from others)."""
    if ch in _LATEX_SPECIAL:
        return _LATEX_SPECIAL[ch]
    if _PDFLATEX_TEXT.match(ch) or ch == _MARK:
        return ch
    return rf"\texttt{{U+{ord(ch):04X}}}"


def latex_escape(text: Any) -> str:
    r"""Escape LaTeX's special characters in ``text`` (line breaks and tabs become spaces; control characters and
    characters pdflatex cannot typeset in a stock document shown as their code point, after NFC composition).

    Examples
    --------
    >>> print(latex_escape("pass^1 of gpt_4 (50%)"))
    pass\textasciicircum{}1 of gpt\_4 (50\%)
    >>> print(latex_escape("模型-ü"))
    \texttt{U+6A21}\texttt{U+578B}-ü
    """
    return "".join(_latex_char(ch) for ch in unicodedata.normalize("NFC", str(text)))


_latex_escape = latex_escape  # the old private name


_MARK = "\ue000"  # a break point, placed before escaping and turned into \allowbreak{} after
_BREAK_AFTER = re.compile(r"([_\-./:,;=+|×·#])")
_LONG_WORD = re.compile(r"[^\s_\-./:,;=+|×·#]{9,}")


def _breakable(text: str) -> str:
    """``text`` escaped for LaTeX, allowed to break after ``_ - . / :`` and every 8 characters of a long word."""
    s = _BREAK_AFTER.sub(lambda m: m.group(0) + _MARK, text)
    s = _LONG_WORD.sub(lambda m: _MARK.join(m.group(0)[i : i + 8] for i in range(0, len(m.group(0)), 8)), s)
    return latex_escape(s).replace(_MARK, r"\allowbreak{}")


_INNER_BREAK = re.compile(r"(?<=[_./:|,;=+#·×])(?=\S)")


def _caption(text: str) -> str:
    """``text`` escaped for LaTeX, allowed to break after a separator inside a word (``claude_3_5``, ``org/model``,
    ``ft:gpt``), where TeX does not break by itself; spaces and hyphens are left to TeX."""
    return latex_escape(_INNER_BREAK.sub(_MARK, text)).replace(_MARK, r"\allowbreak{}")


def _shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    head = (width - 1) // 2 + (width - 1) % 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]



_SEP = re.compile(r"(?<=[/ ·:_|,])")  # token boundaries: after a separator


def distinct_labels(values: list[str]) -> tuple[list[str], str, str]:
    """The labels with what they all share left out: the longest common prefix and suffix that end on a separator
    (``/``, space, ``·``, ``:``, ``_``, ``|``, ``,``), so what tells them apart is kept whole; returns the labels,
    the prefix and the suffix dropped. Fewer than two distinct labels are returned as they are.

    >>> distinct_labels(["runs/a/x.json", "runs/b/x.json"])
    (['a', 'b'], 'runs/', '/x.json')
    >>> distinct_labels(["gpt-4.1 · telecom", "gpt-4.1-mini · telecom"])[0]
    ['gpt-4.1', 'gpt-4.1-mini']
    """
    distinct = list(dict.fromkeys(values))
    if len(distinct) < 2:
        return list(values), "", ""
    parts = [_SEP.split(v) for v in distinct]
    pre = 0
    while all(len(p) > pre + 1 for p in parts) and len({p[pre] for p in parts}) == 1:
        pre += 1
    suf = 0
    while all(len(p) > pre + suf + 1 for p in parts) and len({p[-1 - suf] for p in parts}) == 1:
        suf += 1
    prefix = "".join(parts[0][:pre])
    suffix = "".join(parts[0][len(parts[0]) - suf:]) if suf else ""
    # a suffix starts at a separator: move the separator that ends the kept part into it
    out = []
    for v in values:
        core = v[len(prefix): len(v) - len(suffix)]
        out.append(core)
    trimmed = [c.rstrip("/ ·:_|,") for c in out]
    tail = [c[len(t):] for c, t in zip(out, trimmed)]
    if suffix and len(set(tail)) == 1:
        suffix = tail[0] + suffix
        out = trimmed
    return out, prefix, suffix

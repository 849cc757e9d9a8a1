"""Cells of a :class:`~tauk.table.SummaryTable`: :class:`Interval`, :func:`fmt` and the escaping of each target.

One function per target: :func:`terminal_safe` (terminal text: control characters made visible),
:func:`markdown_escape` (GitHub Markdown and the HTML it becomes), :func:`latex_escape` (LaTeX specials and the
symbols pdflatex does not know) and :func:`csv_safe` (no formula a spreadsheet would evaluate); HTML goes through
:func:`html.escape`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Interval", "csv_safe", "distinct_labels", "fmt", "latex_escape", "markdown_escape", "terminal_safe"]


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
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: Any) -> str:
    """Text safe to print on a terminal: control characters (ANSI escapes, CR, bidi overrides …) made visible.

    >>> terminal_safe("red\\x1b[31m\\nline")
    'red\\\\x1b[31m\\\\nline'
    """
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1] if m.group(0) != "\x7f" else "\\x7f", str(text))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(text: Any) -> str:
    """A CSV text cell no spreadsheet evaluates as a formula (OWASP's rule against CSV injection): a cell that starts
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single quote, which spreadsheets show
    as text and do not evaluate; other control characters are dropped. Numbers are written as numbers, never
    through this (so ``-0.5`` stays a number).

    >>> [csv_safe(s) for s in ("=HYPERLINK('http://e.vil')", "+1", "-x", "@SUM(A1)", "\\t=1", "gpt-4o", "")]
    ["'=HYPERLINK('http://e.vil')", "'+1", "'-x", "'@SUM(A1)", "'=1", 'gpt-4o', '']
    """
    raw = str(text)
    s = _CONTROL.sub("", raw)  # dropped first, so that "\x00=1" cannot slip an "=" to the front
    return "'" + s if raw.startswith(_FORMULA_START) or s.startswith(_FORMULA_START) else s


_MD_SPECIAL = re.compile(r"([\\`*\[\]|!])")


def markdown_escape(text: Any) -> str:
    """Text safe inside a Markdown table cell (and the HTML it becomes): ``& < >`` as entities so no tag forms,
    ``\\ ` * [ ] | !`` escaped so no cell break, link, image, code span or emphasis forms, line breaks folded and
    other control characters dropped (``_`` inside names is left as it is: it does not emphasise mid-word).

    >>> print(markdown_escape("![x](http://e.vil) <img onerror=1> a|b\\r\\nc"))
    \\!\\[x\\](http://e.vil) &lt;img onerror=1&gt; a\\|b c
    """
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = re.sub(r"[\r\n\u2028\u2029]+", " ", s)
    s = _CONTROL.sub("", s)
    return _MD_SPECIAL.sub(r"\\\1", s)


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


def latex_escape(text: Any) -> str:
    r"""Escape LaTeX's special characters in ``text`` (line breaks become spaces, control characters dropped).

    Examples
    --------
    >>> print(latex_escape("pass^1 of gpt_4 (50%)"))
    pass\textasciicircum{}1 of gpt\_4 (50\%)
    """
    s = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))
    return _CONTROL.sub("", s)


_latex_escape = latex_escape  # the old private name


_MARK = "\ue000"  # a break point, placed before escaping and turned into \allowbreak{} after
_BREAK_AFTER = re.compile(r"([_\-./:,;=+|×·#])")
_LONG_WORD = re.compile(r"[^\s_\-./:,;=+|×·#]{9,}")


def _breakable(text: str) -> str:
    """``text`` escaped for LaTeX, allowed to break after ``_ - . / :`` and every 8 characters of a long word."""
    s = _BREAK_AFTER.sub(lambda m: m.group(0) + _MARK, text)
    s = _LONG_WORD.sub(lambda m: _MARK.join(m.group(0)[i : i + 8] for i in range(0, len(m.group(0)), 8)), s)
    return latex_escape(s).replace(_MARK, r"\allowbreak{}")


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

"""The one table renderer of tauk: every result's ``summary()`` is a :class:`SummaryTable`.

One table, every target, each with its own escaping: terminal text that fits 100 columns (control characters
made visible, long labels shortened, wide tables split into blocks, notes wrapped), GitHub Markdown (``|``, ``<``, ``[``, CR/LF and
the other markup characters escaped), CSV and a Polars frame (numbers as numbers, an interval as three columns
``x``, ``x_ci_low``, ``x_ci_high``), HTML (escaped) and LaTeX (specials escaped; a ``table`` float with a
``\\label`` that fits a two-column layout's column with no text below 7 pt; needs ``\\usepackage{booktabs,array}`` — all in a stock TeX Live).

The cells (:class:`Interval`, :func:`fmt`) and the escaping of each target are in ``tauk.table._format``, the
table in ``tauk.table._summary``; import them all from here.

Examples
--------
>>> t = SummaryTable.build("pass^k", ["agent", "pass^1"], [["a|b", Interval(0.5, 0.25, 0.75)]],
...                        fields=["agent", "pass_hat_1"], notes=["95% bca interval"])
>>> print(t.to_text())
pass^k
======
agent                   pass^1
------------------------------
a|b    0.5000 [0.2500, 0.7500]
* 95% bca interval
>>> print(t.to_csv(), end="")
agent,pass_hat_1,pass_hat_1_ci_low,pass_hat_1_ci_high
a|b,0.5,0.25,0.75
>>> print(t.to_markdown())
### pass^k
<BLANKLINE>
| agent | pass^1 |
|---|---|
| a\\|b | 0.5000 [0.2500, 0.7500] |
<BLANKLINE>
- 95% bca interval
<BLANKLINE>
"""

from __future__ import annotations

from ._format import (
    Interval,
    csv_safe,
    csv_safe_expr,
    fmt,
    html_escape,
    latex_escape,
    markdown_escape,
    terminal_safe,
)
from ._format import _latex_escape as _latex_escape  # the old private name
from ._summary import FORMATS, LATEX_PACKAGES, LATEX_WIDTH_PT, SummaryTable

__all__ = [
    "Interval",
    "SummaryTable",
    "csv_safe",
    "csv_safe_expr",
    "fmt",
    "html_escape",
    "latex_escape",
    "markdown_escape",
    "terminal_safe",
    "LATEX_PACKAGES",
    "LATEX_WIDTH_PT",
    "FORMATS",
]

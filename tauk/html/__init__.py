"""One self-contained HTML report a researcher can send: tables, figures inlined as SVG, notes and a viewer of the
failed simulations, in one file that opens from disk with no server and no network.

* :func:`write_report` — the page: summary / comparison tables, figures, notes, the trajectory viewer.
* :class:`Page` — the document builder (sections, escaped tables from Polars frames or tauk tables, figures as
  inline SVG); :func:`figure_svg`, :func:`table_html`, :func:`esc` — its pieces.
* :func:`viewer_html` — the trajectory viewer alone: per simulation its task, termination, reward and why it
  failed, the conversation in a collapsible block; :func:`select_trials` — its filter (``failed``, ``task``,
  ``termination``), the one ``tauk summary --failed / --task / --termination`` uses too.

Everything that comes from a results file is escaped (model output is untrusted), and the page's
Content-Security-Policy lets it load nothing and run only its own small script.
"""

from tauk.io.frames.select import TERMINATION_CHOICES, select_trials, selection_label

from .page import Page, esc, figure_svg, table_html
from .report import write_report
from .viewer import MAX_CHARS, MAX_MESSAGES, MAX_SIMULATIONS, viewer_html

__all__ = [
    "MAX_CHARS",
    "MAX_MESSAGES",
    "MAX_SIMULATIONS",
    "Page",
    "TERMINATION_CHOICES",
    "esc",
    "figure_svg",
    "select_trials",
    "selection_label",
    "table_html",
    "viewer_html",
    "write_report",
]

"""Thin ipywidgets front-ends on the public tauk API (load → score → stats → plot).

* :func:`explorer` — pass^k of chosen agents/domains at any k, infra convention and evaluation type, with a figure;
  the bootstrap runs once per selection and is re-sliced when k changes.
* :func:`trajectory_viewer` — one conversation with its tool calls and results, and why it failed.
* :func:`comparison` — two agents paired on their shared tasks: the table and the forest plot.

Each returns an object exposing its child widgets as attributes (``.agents``, ``.k``, ``.output`` …) so it can be
driven from Python; the HTML renderers (:func:`render_trajectory`, :func:`summary_html`, :func:`comparison_html`)
are pure functions.
"""

from .comparison import ComparisonWidget, comparison, comparison_html
from .explorer import Explorer, explorer, summary_html
from .trajectory import TrajectoryViewer, failure_reasons, render_trajectory, trajectory_viewer

__all__ = [
    "ComparisonWidget",
    "Explorer",
    "TrajectoryViewer",
    "comparison",
    "comparison_html",
    "explorer",
    "failure_reasons",
    "render_trajectory",
    "summary_html",
    "trajectory_viewer",
]

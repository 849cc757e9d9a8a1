"""``tauk.html.write_report``: the tables, figures and notes a caller made, the runs read and the viewer of the
failed simulations, in one self-contained HTML file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.io.frames.select import selection_label

from .page import Page
from .viewer import MAX_CHARS, MAX_MESSAGES, MAX_SIMULATIONS, viewer_html

__all__ = ["write_report"]

_RUN_COLUMNS = ("run_id", "agent", "domain", "setup", "n_simulations", "n_infra_errors")


def _tables(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, pl.DataFrame) or not isinstance(value, Sequence) or isinstance(value, str):
        return [value]
    return list(value)


def write_report(
    path: str | Path,
    results: Any,
    *,
    title: str = "tauk report",
    summary: Any = None,
    comparisons: Any = None,
    figures: Sequence[Any] | Mapping[str, Any] = (),
    notes: Sequence[str] = (),
    failed: bool | None = True,
    task: str | Sequence[str] | None = None,
    termination: str | Sequence[str] | None = None,
    viewer: bool = True,
    scored: pl.DataFrame | None = None,
    max_simulations: int | None = MAX_SIMULATIONS,
    max_messages: int | None = MAX_MESSAGES,
    max_chars: int | None = MAX_CHARS,
) -> Path:
    """Write one self-contained HTML page and return its path.

    Sections, each present when given: *Summary* (``summary``), *Comparisons* (``comparisons``), *Figures*
    (``figures``, inlined as SVG), *Notes* (``notes``), *Inputs* (the runs read), *Failed simulations* (the
    trajectory viewer, :func:`tauk.html.viewer_html`). The page loads nothing from outside itself (no server, no
    network) and escapes every text. The same inputs give the same bytes (no date is written).

    Parameters
    ----------
    path
        The HTML file to write (its folder is made).
    results
        A :class:`tauk.Results` (a bare trials frame works too, without the viewer).
    summary, comparisons
        A table or a list of tables: :class:`tauk.table.SummaryTable`, a statistics result with ``.summary()``
        (:func:`tauk.stats.summarize`, :func:`tauk.stats.compare_all`, …) or a Polars frame.
    figures
        matplotlib Figures, ``(caption, Figure)`` pairs, or a mapping caption → Figure.
    notes
        Lines of text (escaped) for the *Notes* section.
    failed, task, termination
        Which simulations the viewer shows (:func:`tauk.html.select_trials`); default: every failed one.
    viewer
        ``False`` leaves the viewer out.
    scored, max_simulations, max_messages, max_chars
        As for :func:`tauk.html.viewer_html`.

    Examples
    --------
    >>> import tempfile, tauk
    >>> from tauk.html import write_report
    >>> res = tauk.load("data/baseline_airline.json")
    >>> s = tauk.stats.summarize(res, by="agent", ci=None)
    >>> out = write_report(f"{tempfile.mkdtemp()}/report.html", res, summary=s, task="3")
    >>> text = out.read_text()
    >>> "<details class='tauk-sim'" in text, "http://" in text or "https://" in text
    (True, False)
    """
    trials = results if isinstance(results, pl.DataFrame) else getattr(results, "trials", None)
    if not isinstance(trials, pl.DataFrame):
        raise TaukError(f"write_report takes a tauk.Results (tauk.load(...)) or its trials frame, got "
                        f"{type(results).__name__}")  # fmt: skip
    runs = getattr(results, "runs", None)
    n_runs = runs.height if isinstance(runs, pl.DataFrame) else trials["run_id"].n_unique()
    from tauk import __version__

    page = Page(title, meta=[f"tauk {__version__} · {n_runs} run(s), {trials.height} simulation(s) · opens from "
                             "disk: no server, no network"])  # fmt: skip
    if summary is not None:
        page.add_section("Summary", tables=_tables(summary))
    if comparisons is not None:
        page.add_section("Comparisons", tables=_tables(comparisons))
    if figures:
        page.add_section("Figures", figures=figures)
    if notes:
        page.add_section("Notes", notes=[str(n) for n in notes])
    if isinstance(runs, pl.DataFrame) and runs.height:
        page.add_section("Inputs", table=runs.select([c for c in _RUN_COLUMNS if c in runs.columns]))
    if viewer:
        label = selection_label(failed=failed, task=task, termination=termination)
        heading = "Failed simulations" if (failed is True and task is None and termination is None) else \
            "Simulations" + (f" ({label})" if label else "")  # fmt: skip
        if isinstance(results, pl.DataFrame):
            page.add_section(heading, notes=["no viewer: a trials frame carries no messages (pass a tauk.Results)"])
        else:
            page.add_section(heading, html_parts=[viewer_html(
                results, failed=failed, task=task, termination=termination, scored=scored,
                max_simulations=max_simulations, max_messages=max_messages, max_chars=max_chars)])  # fmt: skip
    return page.write(path)

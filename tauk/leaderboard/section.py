"""The leaderboard section of a report: its tables, its figures and a paragraph that says what they mean.

:func:`report_section` gives everything a report writer needs, without writing anything: ``tables`` (name, what,
:class:`~tauk.table.SummaryTable`), ``figures`` (name, what, a function drawing the figure) and ``markdown`` (the
section's text, numbers included). A report writes each table in its formats and each figure in its own.

>>> from tauk.leaderboard import report_section
>>> s = report_section("../shared/data/leaderboard")  # doctest: +SKIP
>>> [name for name, _, _ in s.tables]  # doctest: +SKIP
['leaderboard_ranking', 'leaderboard_rows', 'leaderboard_pairs', 'leaderboard_recovery', 'leaderboard_voice']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.plot.leaderboard import leaderboard_ranks
from tauk.table import SummaryTable, markdown_escape

from .analysis import LeaderboardAnalysis, analyze
from .voice import CLUSTER_NOTE

__all__ = ["ReportSection", "report_section"]


@dataclass(frozen=True)
class ReportSection:
    """A report's leaderboard section: ``title``, ``markdown`` (the text), ``tables`` ((name, what, SummaryTable),
    …), ``figures`` ((name, what, make), …: ``make()`` returns the Figure) and the ``analysis`` behind them."""

    title: str
    markdown: str
    tables: tuple[tuple[str, str, SummaryTable], ...]
    figures: tuple[tuple[str, str, Callable[[], Any]], ...]
    analysis: LeaderboardAnalysis


def _fmt_range(lo: float | None, hi: float | None) -> str:
    if lo is None:
        return "—"
    return f"{lo:.1f}" if abs(hi - lo) < 0.05 else f"{lo:.1f}–{hi:.1f}"


def report_section(board: Any, *, figsize: Any = None, **options: Any) -> ReportSection:
    """The leaderboard section for a report, from a leaderboard folder (or a :class:`LeaderboardAnalysis`);
    ``options`` go to :func:`~tauk.leaderboard.analysis.analyze` (``trajectories=``, ``ci=``, …)."""
    a = board if isinstance(board, LeaderboardAnalysis) else analyze(board, **options)
    rec = a.recovery.to_frame()
    full = rec.filter(pl.col("published_ks") == "1-4")
    counts = dict(full.group_by("status").len().rows())
    lines = [
        f"{rec.height} leaderboard rows (submission × domain). A row that publishes pass^1 … pass^n over T tasks with "
        "n trials each determines its per-task success histogram; tauk recovers it exactly within the row's rounding "
        "and computes every statistic from it, as the trajectories would give.",
        "",
        f"- Rows with pass^1 … pass^4: {full.height}; recovered {counts.get('recovered', 0)}, flagged "
        f"{counts.get('flagged', 0)} (no integer histogram reproduces them within their rounding).",
    ]
    for r in full.filter(pl.col("status") == "flagged").iter_rows(named=True):
        res = "more than 12.8" if r["residual"] is None else f"{r['residual']:.3f}"
        lines.append(f"  - {markdown_escape(r['submission_id'])} / {markdown_escape(r['domain'])}: nearest histogram "
                     f"{res} points off (rounding ±{r['tolerance']:.3g})"
                     + (f"; {markdown_escape(r['explanation'])}" if r["explanation"] else ""))  # fmt: skip
    one = rec.filter((pl.col("trials") == 1) & (pl.col("status") == "recovered")).height
    if one:
        lines.append(f"- One-trial rows recovered from pass^1 alone (voice: one simulation per task): {one}.")
    ins = rec.filter(pl.col("status") == "insufficient").height
    if ins:
        lines.append(f"- Rows left without an interval (they publish pass^1 only, over 4 trials per task): {ins}.")
    lines += ["", "Per domain (ranked within domain × modality; unpaired tests are conservative, the rows ran the same "
              "tasks):", ""]  # fmt: skip
    for d in a.ranking.domains.iter_rows(named=True):
        lines.append(
            f"- {markdown_escape(d['domain'])} ({d['modality']}): {d['n_ranked']} rows, {d['n_possibly_best']} could be "
            f"first, {d['n_tiers']} tie group(s); {d['adjacent_separable']} of {d['n_adjacent']} adjacent pairs "
            "separable" + (f" ({d['adjacent_separable_paired']} with the pairing, {d['n_with_trajectories']} rows "
                           "with trajectories)" if d["n_with_trajectories"] >= 2 else "")
            + (f"; two single runs must differ by {_fmt_range(d['mdd_min'], d['mdd_max'])} points before the gap "
               "means anything" if d["mdd_min"] is not None else ""))  # fmt: skip
    adj = a.voice.adjacent
    if adj.height:
        shares = adj.filter(pl.col("metric") != "agent_interruption_rate")
        lines += ["", f"Voice interaction metrics: every rate read with its count; {int(shares['n_overlapping'].sum())} "
                  f"of {int(shares['n_adjacent'].sum())} adjacent pairs of shares overlap even with exact intervals. "
                  f"Note: {CLUSTER_NOTE}."]  # fmt: skip
    tables = [
        ("leaderboard_ranking", "rank intervals, possibly-best rows and tie groups per domain", a.ranking.summary()),
        ("leaderboard_rows", "per row: pass^1 with the default and re-run intervals, noise floor, flag",
         a.rows.summary()),
        ("leaderboard_pairs", "adjacent pairs: difference, unpaired (and paired) p, separability",
         a.ranking.pairs_summary()),
        ("leaderboard_recovery", "the per-task histogram recovered from each row, or its flag and residual",
         a.recovery.summary()),
    ]  # fmt: skip
    if a.voice.to_frame().height:
        tables.append(("leaderboard_voice", "voice interaction rates with counts and exact intervals",
                       a.voice.summary()))  # fmt: skip
    figures: list[tuple[str, str, Callable[[], Any]]] = [
        ("leaderboard_ranks", "text rows ranked per domain with intervals, tie groups shaded",
         lambda: leaderboard_ranks(a.ranking, modality="text", figsize=figsize)),
    ]  # fmt: skip
    if a.ranking.to_frame().filter(pl.col("modality") == "voice").height:
        figures.append(("leaderboard_ranks_voice", "voice rows ranked per domain with intervals, tie groups shaded",
                        lambda: leaderboard_ranks(a.ranking, modality="voice", figsize=figsize)))  # fmt: skip
    if a.trajectories:
        figures.append(("leaderboard_ranks_paired", "the paired view: rows with trajectories compared on shared tasks",
                        lambda: leaderboard_ranks(a.ranking, modality=None, paired=True, figsize=figsize)))  # fmt: skip
    return ReportSection("The leaderboard with honest uncertainty", "\n".join(lines), tuple(tables), tuple(figures), a)

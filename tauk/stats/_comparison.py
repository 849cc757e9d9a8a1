"""The result objects of :func:`tauk.stats.compare` and :func:`tauk.stats.compare_all` (see
:mod:`tauk.stats.compare`), and the notes that say what they report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.conventions import CI_LEVEL, RESAMPLES
from tauk.errors import TaukError
from tauk.table import SummaryTable

from ._pairing import TEST_NAMES

__all__ = ["Comparison", "MultipleComparison", "RANK_FIELDS", "comparison_notes"]

RANK_FIELDS = ("rank", "rank_low", "rank_high", "rank_low_simultaneous", "rank_high_simultaneous")


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Comparison:
    """A paired comparison of ``a`` against ``b`` (difference = a − b), one row per ``by`` group (immutable; from
    :func:`compare`).

    ``frame`` columns: group keys, a, b, k, n_tasks (shared, n_t ≥ k for both), n_tasks_only_a, n_tasks_only_b,
    n_tasks_excluded (shared but n_t < k), estimate_a, estimate_b, diff, ci_low/ci_high (the headline interval;
    ``interval_method`` says which: "paired t", "sign-flip inversion", or "<method> paired task bootstrap"), test and
    p_value (the headline test and its p), se, t_low/t_high and p_t (the paired t, T−1 df), p_signflip
    (``signflip_method`` exact|monte-carlo), p_wilcoxon, mcnemar_a_only / mcnemar_b_only (discordant tasks) and
    p_mcnemar (only with one trial per task); p_perm / perm_method: deprecated aliases of p_signflip /
    signflip_method.
    ``tasks``: the per-task table (group keys, domain, task_id, n_a, c_a, n_b, c_b, u_a, u_b, d).
    """

    a: str
    b: str
    k: int
    label: str
    by: tuple[str, ...]
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    frame: pl.DataFrame
    tasks: pl.DataFrame
    permutations: int = RESAMPLES
    reward: str = "reward"
    test: str = "t"
    split_by_setup: bool = False  # ``setup`` was added to ``by`` (the agents' trials spanned several setups)

    def to_frame(self) -> pl.DataFrame:
        """One row per ``by`` group (the columns listed above)."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per ``by`` group: the row of :meth:`to_frame` as a dict."""
        return self.frame.to_dicts()

    def row(self, **group: Any) -> dict[str, Any]:
        """The row of one group (keyword filters on the group keys; none when there is a single group)."""
        df = self.frame
        for c, v in group.items():
            df = df.filter(pl.col(c) == v)
        if df.height != 1:
            raise TaukError(f"{df.height} rows match {group}; give every group key")
        return df.row(0, named=True)

    @property
    def diff(self) -> float | None:
        """The difference when there is a single group."""
        return self.row()["diff"]

    @property
    def p_value(self) -> float | None:
        """The headline p-value (of ``test``, the paired t by default) when there is a single group."""
        return self.row()["p_value"]

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): one row per group."""
        cols = [*self.by, "tasks", f"pass^{self.k} {self.a}", f"pass^{self.k} {self.b}", "diff", "ci_low", "ci_high",
                "p_value", "p_signflip", "p_mcnemar"]  # fmt: skip
        rows = [
            [*(r[c] for c in self.by), r["n_tasks"], r["estimate_a"], r["estimate_b"], r["diff"], r["ci_low"],
             r["ci_high"], r["p_value"], r["p_signflip"], r["p_mcnemar"]]
            for r in self.frame.iter_rows(named=True)
        ]  # fmt: skip
        notes = [f"paired on shared tasks (domain, task_id); diff = {self.a} − {self.b}", *comparison_notes(self)]
        only = self.frame.select(pl.col("n_tasks_only_a").sum(), pl.col("n_tasks_only_b").sum()).row(0)
        if any(only):
            notes.append(f"tasks run by only one agent, left out: {only[0]} ({self.a}), {only[1]} ({self.b})")
        fields = [*self.by, "n_tasks", "estimate_a", "estimate_b", "diff", "ci_low", "ci_high", "p_value",
                  "p_signflip", "p_mcnemar"]  # fmt: skip
        return SummaryTable.build(f"{self.a} vs {self.b}", cols, rows, notes, fields=fields, keys=max(len(self.by), 1))

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def comparison_notes(result: Any) -> list[str]:
    """What a comparison reports: the headline test, the interval, the cross-check (for the summary notes)."""
    level = result.ci if result.ci is not None else CI_LEVEL
    test = getattr(result, "test", "t")
    head = {"t": "paired t test (T − 1 df)", "signflip": "exact sign-flip test",
            "signflip-mid": "mid-p sign-flip test"}[test]  # fmt: skip
    if result.method == "model":
        iv = f"{level:.0%} interval: the test's own ({TEST_NAMES[test]}), so it excludes 0 exactly when p < {1 - level:.2g}"
    elif result.method == "t":
        iv = f"{level:.0%} t interval over tasks"
    else:
        iv = f"{level:.0%} {result.method} paired task bootstrap, {result.resamples} resamples, seed {result.seed}"
    notes = [f"p_value: {head}; {iv}",
             "p_signflip: exact sign-flip test (a conservative cross-check; Monte Carlo above 20 nonzero differences)"]
    if getattr(result, "split_by_setup", False):
        notes.append("compared within each setup: the agents' trials span several setups, which are not repeated "
                     "trials of one experiment (pool_setups=True pools them)")  # fmt: skip
    return notes


@dataclass(frozen=True)
class MultipleComparison:
    """All pairwise comparisons and rank intervals (immutable; from :func:`compare_all`).

    ``pairs``: Comparison columns + ``p_adjusted`` (family = every pair in every group, adjusted on the headline
    p_value); ``ranks``: group keys, label value, n_tasks (common to all agents of the group), estimate, rank (1 =
    best, ties averaged), rank_low / rank_high (per agent: each covers its agent's rank with probability ≥ the level)
    and rank_low_simultaneous / rank_high_simultaneous (all of the group's agents at once), by inverting the paired
    tests (:func:`tauk.stats.ranks.rank_intervals`).
    """

    k: int
    label: str
    by: tuple[str, ...]
    adjust: str
    infra: str
    ci: float | None
    method: str
    resamples: int
    seed: int | None
    pairs: pl.DataFrame
    ranks: pl.DataFrame
    permutations: int = RESAMPLES
    reward: str = "reward"
    test: str = "t"
    split_by_setup: bool = False  # ``setup`` was added to ``by`` (the agents' trials spanned several setups)

    def to_frame(self) -> pl.DataFrame:
        """The ``pairs`` frame (one row per pair and group)."""
        return self.pairs

    def records(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per pair and group (the rows of ``pairs``), each with the two agents' rank rows
        under ``"rank_a"`` / ``"rank_b"`` (``rank``, ``rank_low``, ``rank_high``, ``rank_low_simultaneous``,
        ``rank_high_simultaneous``; null when not ranked)."""
        ranks = {
            (tuple(r[c] for c in self.by), r[self.label]): {f: r[f] for f in RANK_FIELDS}
            for r in self.ranks.iter_rows(named=True)
        }
        out = []
        for r in self.pairs.iter_rows(named=True):
            key = tuple(r[c] for c in self.by)
            out.append({**r, "rank_a": ranks.get((key, r["a"])), "rank_b": ranks.get((key, r["b"]))})
        return out

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): one row per pair; the rank intervals as notes."""
        cols = [*self.by, "a", "b", "tasks", "diff", "ci_low", "ci_high", "p_value", f"p_{self.adjust}"]
        fields = [*self.by, "a", "b", "n_tasks", "diff", "ci_low", "ci_high", "p_value", "p_adjusted"]
        shown = self.pairs.filter(pl.col("n_tasks") > 0)
        empty = self.pairs.filter(pl.col("n_tasks").fill_null(0) == 0)
        rows = [
            [*(r[c] for c in self.by), r["a"], r["b"], r["n_tasks"], r["diff"], r["ci_low"], r["ci_high"], r["p_value"],
             r["p_adjusted"]]
            for r in shown.iter_rows(named=True)
        ]
        family = int(self.pairs["p_adjusted"].is_not_null().sum())
        level = self.ci if self.ci is not None else CI_LEVEL
        notes = [*comparison_notes(self)[:1], *comparison_notes(self)[2:],
                 f"p adjusted by {self.adjust} over the {family} comparison(s) with a p-value"
                 + (f" (of {self.pairs.height} pairs)" if family != self.pairs.height else ""),
                 f"rank [lo, hi]: per agent, each covers its agent's rank with probability ≥ {level:.0%}; "
                 "simultaneous {lo, hi}: all of a group's agents at once (inverted paired tests, Holm)"]  # fmt: skip
        if empty.height:
            listed = "; ".join(
                ", ".join(str(r[c]) for c in self.by) + (": " if self.by else "") + f"{r['a']} vs {r['b']}"
                for r in empty.iter_rows(named=True)
            )
            notes.append(f"{empty.height} pair(s) share no task with at least k={self.k} trials and are not shown: "
                         f"{listed}")  # fmt: skip
        for r in self.ranks.filter(pl.col("n_tasks") > 0).iter_rows(named=True):
            g = ", ".join(str(r[c]) for c in self.by)
            notes.append(
                f"{g + ': ' if g else ''}{r[self.label]} rank {r['rank']:g} [{r['rank_low']:g}, {r['rank_high']:g}] "
                f"{{{r['rank_low_simultaneous']:g}, {r['rank_high_simultaneous']:g}}} on {r['n_tasks']} common "
                f"task{'s' if r['n_tasks'] != 1 else ''}"
            )
        return SummaryTable.build(f"pairwise pass^{self.k} comparisons", cols, rows, notes, fields=fields,
                                  keys=len(self.by) + 2)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())

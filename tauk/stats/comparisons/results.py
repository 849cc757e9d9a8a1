"""The result objects of :func:`tauk.stats.compare` and :func:`tauk.stats.compare_all`: their columns, the words that
say which test and which interval made a row, and the notes of their tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.conventions import PAIRED_TEST, PAIRED_TEST_DESCRIPTIONS, RESAMPLES
from tauk.errors import TaukError
from tauk.table import SummaryTable

from ..options import IntervalOptions
from .unseen import unseen_note

__all__ = [
    "Comparison",
    "MultipleComparison",
    "RANK_FIELDS",
    "NUM_FIELDS",
    "ROW_SCHEMA",
    "TEST_NAMES",
    "TEST_DESCRIPTIONS",
    "comparison_notes",
    "interval_agreement",
    "interval_label",
    "rows_frame",
]

RANK_FIELDS = ("rank", "rank_low", "rank_high", "rank_low_simultaneous", "rank_high_simultaneous")

TEST_NAMES = {"score": "score", "t": "paired t", "signflip": "sign-flip inversion", "signflip-mid": "mid-p sign-flip inversion"}
"""What made a comparison's interval when it is the test's own (``interval_method``), per test."""

TEST_DESCRIPTIONS = PAIRED_TEST_DESCRIPTIONS
"""The headline test of a comparison's ``p_value``, in words (table notes, the command line)."""


def interval_label(method: str, test: str) -> str:
    """What made a comparison's ``ci_low`` / ``ci_high``: the test's own interval (``method="model"``, the
    default) or the paired task bootstrap / t interval of ``method``."""
    if method == "model":
        return TEST_NAMES[test]
    return "t interval" if method == "t" else f"{method} paired task bootstrap"


def interval_agreement(d, lo: float, hi: float, p: float, level: float, method: str, test: str) -> dict[str, Any]:
    """``interval_excludes_0``, ``p_below_alpha`` and ``interval_note`` of a comparison row: whether the interval
    excludes 0, whether p < α, and (note) why they disagree or what an unusual interval rests on; None when fine.

    Examples
    --------
    >>> import numpy as np
    >>> r = interval_agreement(np.zeros(10), -0.31, 0.31, 1.0, 0.95, "model", "score")
    >>> r["interval_excludes_0"], r["p_below_alpha"], r["interval_note"][:28]
    (False, False, 'no task differs (d_t = 0 for')
    """
    import math

    import numpy as np

    d = np.asarray(d, dtype=np.float64)
    alpha = 1.0 - level
    ok_iv = lo is not None and hi is not None and not (math.isnan(lo) or math.isnan(hi))
    ok_p = p is not None and not math.isnan(p)
    excl = bool(lo > 0 or hi < 0) if ok_iv else None
    below = bool(p < alpha) if ok_p else None
    notes = []
    T = d.size
    if T == 1:
        notes.append("one shared task: the difference of a single task, not of a benchmark")
    if not ok_iv:
        notes.append(f"no interval: the {interval_label(method, test)} interval needs at least 2 tasks"
                     + (" (test='score' gives one)" if test != "score" else ""))  # fmt: skip
    elif T and np.all(d == d[0]):
        what = "no task differs (d_t = 0 for all" if d[0] == 0 else f"every task differs by the same {d[0]:g} (all"
        if hi - lo <= 0:
            notes.append(f"{what} {T} tasks): zero-width interval from the {interval_label(method, test)}; "
                         "test='score' gives one with width")  # fmt: skip
        elif test == "score" and method == "model":
            notes.append(f"{what} {T} tasks): the score interval is the range of mean differences these data do "
                         "not rule out, not [0, 0]" if lo > -1 or hi < 1 else
                         f"{what} {T} tasks): too few tasks to rule out any difference")  # fmt: skip
    if ok_iv and test == "score" and method == "model" and lo <= -1 and hi >= 1 and T > 0:
        notes.append(f"with {T} task{'s' if T != 1 else ''} no test of size ≤ {alpha:.2g} can reject: the interval "
                     "is [−1, 1]")  # fmt: skip
    if ok_iv and (note := unseen_note(T, hi - lo, level)) is not None:
        notes.append(note)
    if excl is not None and below is not None and excl != below:
        notes.append(f"the interval ({interval_label(method, test)}) {'excludes' if excl else 'includes'} 0 while "
                     f"p = {p:.3g} is {'<' if below else '≥'} {alpha:.2g}: they come from different procedures "
                     "(method='model' reports the test's own interval, which agrees)")  # fmt: skip
    return {"interval_excludes_0": excl, "p_below_alpha": below, "interval_note": "; ".join(dict.fromkeys(notes)) or None}


NUM_FIELDS = (
    "estimate_a", "estimate_b", "difference", "diff", "se", "t_low", "t_high", "ci_low", "ci_high", "p_value", "p_t", "p_signflip",
    "p_wilcoxon", "mcnemar_a_only", "mcnemar_b_only", "p_mcnemar", "p_perm",
)
ROW_SCHEMA = {
    "a": pl.String, "b": pl.String, "k": pl.Int64, "n_tasks": pl.Int64, "n_tasks_only_a": pl.Int64,
    "n_tasks_only_b": pl.Int64, "n_tasks_excluded": pl.Int64, "estimate_a": pl.Float64, "estimate_b": pl.Float64,
    "difference": pl.Float64, "diff": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "interval_method": pl.String,
    "test": pl.String, "p_value": pl.Float64, "se": pl.Float64, "t_low": pl.Float64, "t_high": pl.Float64,
    "p_t": pl.Float64, "p_signflip": pl.Float64, "signflip_method": pl.String, "p_wilcoxon": pl.Float64,
    "mcnemar_a_only": pl.Int64, "mcnemar_b_only": pl.Int64, "p_mcnemar": pl.Float64,
    # deprecated aliases (one release): p_perm = p_signflip, perm_method = signflip_method, diff = difference
    "p_perm": pl.Float64, "perm_method": pl.String,
    # does the interval exclude 0, is p < α, and why they differ or what the interval rests on (issue 23)
    "interval_excludes_0": pl.Boolean, "p_below_alpha": pl.Boolean, "interval_note": pl.String,
}


def rows_frame(by, schema, keyed_rows, extra_schema=None):
    """The comparison frame: group keys and the :data:`ROW_SCHEMA` columns, one row per comparison."""
    sch = {c: schema[c] for c in by}
    sch.update(ROW_SCHEMA)
    if extra_schema:
        sch.update(extra_schema)
    data = {c: [] for c in sch}
    for key, row in keyed_rows:
        for i, c in enumerate(by):
            data[c].append(key[i])
        for c in sch:
            if c not in by:
                data[c].append(row.get(c))
    return pl.DataFrame(data, schema=sch)


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Comparison:
    """A paired comparison of ``a`` against ``b`` (difference = a − b), one row per ``by`` group (immutable; from
    :func:`compare`).

    ``frame`` columns: group keys, a, b, k, n_tasks (shared, n_t ≥ k for both), n_tasks_only_a, n_tasks_only_b,
    n_tasks_excluded (shared but n_t < k), estimate_a, estimate_b, diff, ci_low/ci_high (the headline interval;
    ``interval_method`` says which: "score" (the default: the designed exact ternary interval or Tango's ∪ adjusted Wald / the skew t / the constrained-MLE score
    interval, :mod:`tauk.stats.comparisons.score`), "paired t", "sign-flip inversion", or "<method> paired task
    bootstrap"), test and
    p_value (the headline test and its p), se, t_low/t_high and p_t (the paired t, T−1 df), p_signflip
    (``signflip_method`` exact|monte-carlo), p_wilcoxon, mcnemar_a_only / mcnemar_b_only (discordant tasks) and
    p_mcnemar (only with one trial per task); p_perm / perm_method: deprecated aliases of p_signflip /
    signflip_method. interval_excludes_0 / p_below_alpha: whether the interval excludes 0 and whether p_value < α
    (they agree for the tests' own intervals; ``interval_note`` says why when they do not, and what the interval
    rests on when it is not the plain one: no task differing, too few tasks for any test to reject). Run effects and
    task families (:mod:`tauk.stats.dependence`): n_passes_a / _b, run_effect_p_a / _b, run_var_a / _b, se_run, n_clusters, se_cluster, df (the adjusted t test's degrees of
    freedom) and adjusted_for (what the headline p and interval account for beyond the tasks; null: nothing).
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
    test: str = PAIRED_TEST
    split_by_setup: bool = False  # ``setup`` was added to ``by`` (the agents' trials spanned several setups)
    cluster: str | None = None  # cluster=: the column (or "family") of the task families
    dependence_notes: tuple[str, ...] = ()  # run effects / clusters (tauk.stats.dependence)
    pooled_over: tuple[str, ...] = ()  # pool_setups=True: per group, the setups pooled and what differs between them

    @property
    def options(self) -> IntervalOptions:
        """The interval options the comparison was made with (``ci`` None: at the default level)."""
        return IntervalOptions(self.ci, self.method, self.resamples, self.seed)

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
    def difference(self) -> float | None:
        """The difference (a − b) when there is a single group."""
        return self.row()["difference"]

    @property
    def diff(self) -> float | None:
        """The old name of :attr:`difference` (kept one release)."""
        return self.row()["difference"]

    @property
    def p_value(self) -> float | None:
        """The headline p-value (of ``test``, the score test by default) when there is a single group."""
        return self.row()["p_value"]

    def summary(self) -> SummaryTable:
        """The table (text, HTML, LaTeX): one row per group."""
        cols = [*self.by, "tasks", f"pass^{self.k} {self.a}", f"pass^{self.k} {self.b}", "difference", "ci_low", "ci_high",
                "p_value", "p_signflip", "p_mcnemar"]  # fmt: skip
        rows = [
            [*(r[c] for c in self.by), r["n_tasks"], r["estimate_a"], r["estimate_b"], r["diff"], r["ci_low"],
             r["ci_high"], r["p_value"], r["p_signflip"], r["p_mcnemar"]]
            for r in self.frame.iter_rows(named=True)
        ]  # fmt: skip
        notes = [f"paired on shared tasks (domain, task_id); difference = {self.a} − {self.b}", *comparison_notes(self),
                 *self.caveats()]  # fmt: skip
        fields = [*self.by, "n_tasks", "estimate_a", "estimate_b", "difference", "ci_low", "ci_high", "p_value",
                  "p_signflip", "p_mcnemar"]  # fmt: skip
        return SummaryTable.build(f"{self.a} vs {self.b}", cols, rows, notes, fields=fields, keys=max(len(self.by), 1),
                                  context=[("agent_a", self.a), ("agent_b", self.b), ("k", self.k)])  # fmt: skip

    def caveats(self) -> list[str]:
        """What the figures rest on beyond the method (the notes every rendering of this comparison carries, the
        command line's included): setups pooled, run effects and task families, what an interval cannot show,
        tasks only one agent ran."""
        notes = [*self.pooled_over, *_dependence_notes(self), *_interval_notes(self.frame, self.by)]
        only = self.frame.select(pl.col("n_tasks_only_a").sum(), pl.col("n_tasks_only_b").sum()).row(0)
        if any(only):
            notes.append(f"tasks run by only one agent, left out: {only[0]} ({self.a}), {only[1]} ({self.b})")
        return notes

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def comparison_notes(result: Any) -> list[str]:
    """What a comparison reports: the headline test, the interval, the cross-check (for the summary notes)."""
    level = result.options.level
    test = getattr(result, "test", PAIRED_TEST)
    head = TEST_DESCRIPTIONS[test]
    if result.method == "model":
        iv = f"{level:.0%} interval: the test's own ({TEST_NAMES[test]}), so it excludes 0 exactly when p < {1 - level:.2g}"
    elif result.method == "t":
        iv = f"{level:.0%} t interval over tasks"
    else:
        iv = f"{level:.0%} {result.method} paired task bootstrap, {result.resamples} resamples, seed {result.seed}"
    notes = [f"p_value: {head}; {iv}",
             "p_signflip: exact sign-flip test (a conservative cross-check; exact on the lattice of the differences, "
             "Monte Carlo only without one)"]
    if getattr(result, "split_by_setup", False):
        notes.append("compared within each setup: the agents' trials span several setups, which are not repeated "
                     "trials of one experiment (pool_setups=True pools them)")  # fmt: skip
    return notes


def _interval_notes(frame: pl.DataFrame, by: tuple[str, ...], pairs: bool = False) -> list[str]:
    """The rows' ``interval_note`` as table notes: each text once, with the rows it is about (their ``by`` values,
    and ``a vs b`` for a table of ``pairs``), so that what an interval cannot show — zero width, one task, decisive
    tasks not drawn — is in the printed table, not only in the frame."""
    if "interval_note" not in frame.columns:
        return []
    where: dict[str, list[str]] = {}
    for r in frame.filter(pl.col("interval_note").is_not_null()).iter_rows(named=True):
        parts = [", ".join(str(r[c]) for c in by), f"{r['a']} vs {r['b']}" if pairs else ""]
        where.setdefault(r["interval_note"], []).append(": ".join(x for x in parts if x))
    return [f"interval ({'; '.join(rows)}): {text}" if any(rows) else f"interval: {text}"
            for text, rows in where.items()]  # fmt: skip


def _dependence_notes(result: Any) -> list[str]:
    """Run effects and clusters (:mod:`tauk.stats.dependence`): what was tested, what changed the headline."""
    frame = result.frame if hasattr(result, "frame") else result.pairs
    out = []
    if "run_effect_p_a" in frame.columns:
        ps = frame.select(pl.concat_list("run_effect_p_a", "run_effect_p_b").explode().drop_nulls())
        if ps.height:
            hit = int((ps.to_series() < 0.05).sum())
            out.append(f"run effects (Cochran's Q over each agent's task × pass table): tested for {ps.height} "
                       f"agent(s) × group(s), {hit} with p < 0.05; where σ̂²_run > 0 the headline test is joined with a "
                       "t test that adds the run-level variance (adjusted_for says so)")  # fmt: skip
    if "adjusted_for" in frame.columns and frame["adjusted_for"].is_not_null().any():
        out.append("where adjusted_for is set, p_value and ci_low / ci_high are the larger p and the hull of the "
                   "task-level test's and the adjusted t test's (half-width √(Σ t²·V) over its parts; they still agree "
                   "on whether 0 is excluded); p_t stays the plain paired t")
    if getattr(result, "cluster", None):
        out.append(f"cluster={result.cluster!r}: cluster-robust (CR2) t test and interval, G − 1 degrees of freedom "
                   "(n_clusters)")  # fmt: skip
    return out + list(getattr(result, "dependence_notes", ()))


@dataclass(frozen=True)
class MultipleComparison:
    """All pairwise comparisons and rank intervals (immutable; from :func:`compare_all`).

    ``pairs``: Comparison columns + ``p_adjusted`` (family = every pair in every group, adjusted on the headline
    p_value); ``ranks``: group keys, label value, n_tasks (common to all agents of the group), estimate, rank (1 =
    best, ties averaged), rank_low / rank_high (per agent: each covers its agent's rank with probability ≥ the level)
    and rank_low_simultaneous / rank_high_simultaneous (all of the group's agents at once), by inverting the paired
    tests (:func:`tauk.stats.comparisons.ranks.rank_intervals`).
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
    test: str = PAIRED_TEST
    split_by_setup: bool = False  # ``setup`` was added to ``by`` (the agents' trials spanned several setups)
    cluster: str | None = None  # cluster=: the column (or "family") of the task families
    dependence_notes: tuple[str, ...] = ()  # run effects / clusters (tauk.stats.dependence)
    pooled_over: tuple[str, ...] = ()  # pool_setups=True: per group, the setups pooled and what differs between them

    @property
    def options(self) -> IntervalOptions:
        """The interval options the comparisons were made with (``ci`` None: at the default level)."""
        return IntervalOptions(self.ci, self.method, self.resamples, self.seed)

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
        cols = [*self.by, "a", "b", "tasks", "difference", "ci_low", "ci_high", "p_value", "p_adjusted"]
        fields = [*self.by, "a", "b", "n_tasks", "difference", "ci_low", "ci_high", "p_value", "p_adjusted"]
        shown = self.pairs.filter(pl.col("n_tasks") > 0)
        empty = self.pairs.filter(pl.col("n_tasks").fill_null(0) == 0)
        rows = [
            [*(r[c] for c in self.by), r["a"], r["b"], r["n_tasks"], r["diff"], r["ci_low"], r["ci_high"], r["p_value"],
             r["p_adjusted"]]
            for r in shown.iter_rows(named=True)
        ]
        family = int(self.pairs["p_adjusted"].is_not_null().sum())
        level = self.options.level
        notes = [*comparison_notes(self)[:1], *comparison_notes(self)[2:],
                 f"p adjusted by {self.adjust} over the {family} comparison(s) with a p-value"
                 + (f" (of {self.pairs.height} pairs)" if family != self.pairs.height else ""),
                 f"rank [lo, hi]: per agent, each covers its agent's rank with probability ≥ {level:.0%}; "
                 "simultaneous {lo, hi}: all of a group's agents at once (inverted paired tests, Holm)",
                 *self.pooled_over, *_dependence_notes(self), *_interval_notes(shown, self.by, pairs=True)]  # fmt: skip
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
        unranked = self.ranks.filter(pl.col("n_tasks").fill_null(0) == 0)
        # without by, group_by(pl.lit(0)) yields one (empty) group even from no rows: only groups that have some
        for key, grp in (unranked.group_by(list(self.by) or pl.lit(0), maintain_order=True) if unranked.height else ()):
            g = ", ".join(str(v) for v in key) if self.by else ""
            names = ", ".join(str(x) for x in grp[self.label].to_list())
            notes.append(f"{g + ': ' if g else ''}no rank interval for {names}: no task with at least k={self.k} "
                         "trials common to all the agents of the group (rank null)")  # fmt: skip
        return SummaryTable.build(f"pairwise pass^{self.k} comparisons", cols, rows, notes, fields=fields,
                                  keys=len(self.by) + 2)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())

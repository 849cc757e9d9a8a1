"""The leaderboard's convention — one figure per agent: :func:`overall`, the mean of a summary's per-setup
figures (each setup counts once), with the small-setup rule of :mod:`tauk.conventions` and an interval whose
weights are stated (:class:`Overall`).

Trials of different setups are never pooled into one pass^k (:func:`~tauk.stats.tasks.resolve_by`); when one number
per agent is wanted anyway — a leaderboard's "overall" — it is the mean of the per-setup estimates, each setup
counting once whatever its number of tasks, and it says so. Its interval (``ci_low`` / ``ci_high``) combines the
per-setup intervals with those weights (``weights``, 1/S each): each side is √(Σ_s w_s²·h_s²) from the estimate, h_s
that setup's half-width on the same side — exact for independent normal estimates, and the setups of one agent are
independent draws of different tasks (setups sharing tasks would make it too narrow).

Examples
--------
>>> import tauk
>>> o = tauk.stats.overall(tauk.stats.summarize(tauk.load("data"), by="agent", ci=None))
>>> o.to_frame().filter(k=1).select("agent", "n_setups").rows()
[('atlas-large', 2), ('atlas-small', 2), ('baseline', 2)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.table import Interval, SummaryTable

__all__ = ["Overall", "overall"]


@dataclass(frozen=True)
class Overall:
    """One row per (group, k): ``estimate`` (the mean of the per-setup estimates that entered), ``ci_low`` /
    ``ci_high`` and ``interval_method`` (one setup: its own interval; several: the per-setup intervals combined with
    the weights, each side √(Σ w²·h²)), ``n_setups`` (how many entered), ``n_tasks`` / ``n_simulations`` (theirs,
    summed), ``setups`` (which entered), ``weights`` (each one's weight, 1/S), ``left_out`` (setups under
    :data:`~tauk.conventions.MIN_SIMULATIONS` simulations or :data:`~tauk.conventions.MIN_TASKS` tasks, left out of
    the mean unless ``include_small``) and ``flagged`` (every setup of the group was small: the row is the mean of
    small setups, shown but not ranked)."""

    by: tuple[str, ...]
    over: str
    metric: str
    frame: pl.DataFrame
    ci: float | None = None
    include_small: bool = False
    reasons: tuple[tuple[str, str], ...] = ()  # (setup, why it was small)

    def to_frame(self) -> pl.DataFrame:
        """The rows (a Polars frame)."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready rows."""
        return self.frame.to_dicts()

    def ranking(self, k: int = 1) -> pl.DataFrame:
        """The groups ranked by pass^k (best first), flagged groups left out."""
        f = self.frame.filter(pl.col("k") == k, ~pl.col("flagged"), pl.col("estimate").is_not_null())
        return f.sort("estimate", descending=True, maintain_order=True).with_row_index("rank", offset=1)

    def summary(self) -> SummaryTable:  # noqa: C901
        """The table: one row per group (ranked by the first k, flagged groups last), n, one column per k with
        its interval, and notes saying which setups were averaged and which were left out."""
        from tauk.conventions import MIN_SIMULATIONS, MIN_TASKS

        ks = sorted(set(self.frame["k"].to_list())) if self.frame.height else []
        groups: dict[tuple, dict[str, Any]] = {}
        for r in self.frame.sort("k").iter_rows(named=True):
            g = groups.setdefault(tuple(r[c] for c in self.by), {
                "n_setups": r["n_setups"], "n_tasks": r["n_tasks"], "n_simulations": r["n_simulations"],
                "flagged": r["flagged"], "setups": r[f"{self.over}s"], "left_out": r["left_out"]})  # fmt: skip
            g[r["k"]] = Interval(r["estimate"], r["ci_low"], r["ci_high"])
            g.setdefault("by_k", {})[r["k"]] = r[f"{self.over}s"]
        k0 = ks[0] if ks else None

        def rank_key(item: tuple[tuple, dict[str, Any]]) -> tuple:
            est = item[1].get(k0).estimate if k0 in item[1] else None
            return (item[1]["flagged"], est is None, -(est or 0.0))

        ordered = sorted(groups.items(), key=rank_key)
        any_flag = any(g["flagged"] or g["left_out"] for _, g in ordered)
        rows = []
        for key, g in ordered:
            row = [*key, g["n_setups"], g["n_tasks"], g["n_simulations"], *(g.get(k) for k in ks)]
            if any_flag:
                flag = "small: not ranked" if g["flagged"] else ""
                if g["left_out"]:
                    flag += ("; " if flag else "") + f"{len(g['left_out'])} small {self.over}(s) left out"
                row.append(flag)
            rows.append(row)
        cols = [*self.by, f"{self.over}s", "tasks", "sims", *(f"{self.metric.replace('k', str(k))}" for k in ks)]
        fields = [*self.by, "n_setups", "n_tasks", "n_simulations",
                  *(f"{'pass_hat' if self.metric == 'pass^k' else 'pass_at'}_{k}" for k in ks)]  # fmt: skip
        if any_flag:
            cols.append("flag")
            fields.append("flag")
        level = f"{self.ci:.0%} " if self.ci else ""
        notes = [f"the leaderboard's convention: the unweighted mean of the per-{self.over} figures (each "
                 f"{self.over} counts once, whatever its number of tasks); rows ranked by {self.metric.replace('k', str(k0))}"
                 if k0 is not None else "no estimate"]  # fmt: skip
        if self.ci:
            notes.append(f"{level}interval: with one {self.over}, that {self.over}'s own interval; with several, the "
                         f"per-{self.over} intervals combined with the weights 1/{self.over}s, each side √(Σ w²·h²) "
                         f"(independent {self.over}s: different tasks; {self.over}s sharing tasks would make it too "
                         "narrow; coverage in docs/calibration/dependence.md)")  # fmt: skip
        small = f"fewer than {MIN_SIMULATIONS} simulations or {MIN_TASKS} tasks (tauk.conventions)"
        if not self.include_small:
            notes.append(f"a {self.over} with {small} is left out of the mean and the ranking (include_small=True "
                         f"keeps it); a group with only such {self.over}s is shown from them, flagged, not ranked")  # fmt: skip
        ranked = [(key, g) for key, g in ordered if not g["flagged"] and k0 in g and g[k0].estimate is not None]
        sets = {frozenset(map(str, g["setups"])) for _, g in ranked}
        if len(sets) > 1:  # the order then mixes the agents' difference with which setups each row averages
            counts = ", ".join(f"{' · '.join(str(v) for v in key) or 'all'} {g['n_setups']}" for key, g in ranked)
            notes.append(f"the ranked rows average {len(sets)} different sets of {self.over}s ({self.over}s per row: "
                         f"{counts}): a row's place reflects which {self.over}s it ran as well as how well; compare "
                         f"rows on the {self.over}s they share (tauk.stats.compare)")  # fmt: skip
        for key, g in ordered:
            name = " · ".join(str(v) for v in key) if key else "all"
            used = "; ".join(str(x) for x in g["setups"])  # a setup's own text may hold commas
            text = f"{name}: averaged {g['n_setups']} {self.over}(s): {used}"
            if g["left_out"]:
                why = dict(self.reasons)
                text += " — left out: " + "; ".join(f"{x} ({why.get(x, 'small')})" for x in g["left_out"])
            notes.append(text)
            # a k whose estimate is missing in some of the row's setups (fewer trials per task there) averages
            # other setups than the row's columns describe: say which, column by column
            other: dict[tuple, list[int]] = {}
            for k, setups in g["by_k"].items():
                if list(setups) != list(g["setups"]):
                    other.setdefault(tuple(setups), []).append(k)
            for setups, kk in other.items():
                which = ", ".join(self.metric.replace("k", str(k)) for k in kk)
                listed = "; ".join(str(x) for x in setups)
                if set(setups) <= set(g["setups"]):
                    notes.append(f"{name}: {which} averaged only {len(setups)} of these {self.over}(s): {listed} (the "
                                 f"others have no estimate at that k); the row's {self.over}s, tasks and sims describe "
                                 f"{self.metric.replace('k', str(k0))}")  # fmt: skip
                else:  # only small setups have an estimate there: the row left them out at its first k
                    notes.append(f"{name}: {which} from {self.over}(s) left out of the row as small ({listed}; its "
                                 f"{self.over}s have no estimate at that k): flagged there, not comparable with the "
                                 f"row's {self.metric.replace('k', str(k0))}")  # fmt: skip
        return SummaryTable.build(f"{self.metric} overall (mean over {self.over}s)", cols, rows, notes,
                                  fields=fields, keys=max(len(self.by), 1))  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def overall(result: Any, *, over: str = "setup", include_small: bool = False) -> Overall:
    """One figure per group by the leaderboard's convention: the mean of the per-``over`` estimates of a
    :class:`~tauk.stats.Summary` or :class:`~tauk.stats.PassKResult` grouped by (at least) ``over``.

    A ``over`` row (setup) with fewer than :data:`~tauk.conventions.MIN_SIMULATIONS` simulations or
    :data:`~tauk.conventions.MIN_TASKS` tasks is left out of the mean unless ``include_small``; a group whose every
    setup is that small keeps the mean of them, ``flagged`` (not ranked). The simulations are known from a
    Summary; from a PassKResult only the tasks are checked.

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data"), by="agent", ci=None)
    >>> s.by
    ('agent', 'setup')
    >>> o = tauk.stats.overall(s)
    >>> [(a, n, round(e, 4)) for a, n, e in o.to_frame().filter(k=1).select("agent", "n_setups", "estimate").rows()]
    [('atlas-large', 2, 0.765), ('atlas-small', 2, 0.51), ('baseline', 2, 0.335)]
    >>> o.ranking(k=1)["agent"].to_list()
    ['atlas-large', 'atlas-small', 'baseline']
    """
    from tauk.conventions import small_reason

    by = tuple(getattr(result, "by", ()))
    long = getattr(result, "pass_hat_k", None)
    metric = "pass^k"
    if not isinstance(long, pl.DataFrame):
        long = getattr(result, "frame", None)
        metric = getattr(result, "metric", "pass^k")
    if not isinstance(long, pl.DataFrame) or over not in by:
        raise TaukError(f"overall() takes a Summary or PassKResult grouped by {over!r} (its by is {by})")
    keys = [c for c in by if c != over]
    groups = getattr(result, "groups", None)
    if isinstance(groups, pl.DataFrame) and {"n_simulations", "n_tasks"} <= set(groups.columns):
        size = groups.select(*by, pl.col("n_simulations").alias("_sims"), pl.col("n_tasks").alias("_tasks"))
        long = long.join(size, on=list(by), how="left", nulls_equal=True, maintain_order="left")
    else:
        long = long.with_columns(pl.lit(None, dtype=pl.Int64).alias("_sims"), pl.col("n_tasks").alias("_tasks"))
    ci = getattr(result, "ci", None)
    long = long.filter(pl.col("estimate").is_not_null())
    reasons: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for part in long.partition_by([*keys, "k"], maintain_order=True) if long.height else []:
        rows = part.to_dicts()
        for r in rows:
            why = small_reason(r["_sims"], r["_tasks"])
            r["_why"] = why
            if why:
                reasons[str(r[over])] = why
        big = [r for r in rows if include_small or not r["_why"]]
        flagged = not big
        used = rows if flagged else big
        m = len(used)
        est = sum(r["estimate"] for r in used) / m
        lo = hi = None
        how = None
        if ci and m == 1:
            lo, hi, how = used[0].get("ci_low"), used[0].get("ci_high"), used[0].get("interval_method")
        elif ci and all(r.get("ci_low") is not None and r.get("ci_high") is not None for r in used):
            h_lo = sum((r["estimate"] - r["ci_low"]) ** 2 for r in used) ** 0.5 / m
            h_hi = sum((r["ci_high"] - r["estimate"]) ** 2 for r in used) ** 0.5 / m
            lo, hi, how = max(0.0, est - h_lo), min(1.0, est + h_hi), f"{over} intervals combined (weights 1/{m})"
        sims = [r["_sims"] for r in used]
        out.append({
            **{c: rows[0][c] for c in keys}, "k": rows[0]["k"], "n_setups": m,
            "n_tasks": sum(r["n_tasks"] for r in used),
            "n_simulations": sum(sims) if all(x is not None for x in sims) else None,
            "estimate": est, "ci_low": lo, "ci_high": hi, "interval_method": how,
            f"{over}s": [r[over] for r in used], "weights": [1.0 / m] * m, "left_out": [] if flagged else [r[over] for r in rows if r not in big],
            "flagged": flagged,
        })  # fmt: skip
    schema = {**{c: long.schema[c] for c in keys}, "k": pl.Int64, "n_setups": pl.Int64, "n_tasks": pl.Int64,
              "n_simulations": pl.Int64, "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
              "interval_method": pl.String, f"{over}s": pl.List(long.schema[over]), "weights": pl.List(pl.Float64),
              "left_out": pl.List(long.schema[over]), "flagged": pl.Boolean}  # fmt: skip
    frame = pl.DataFrame(out, schema=schema).sort([*keys, "k"], nulls_last=True) if out else pl.DataFrame(schema=schema)
    return Overall(tuple(keys), over, metric, frame, ci, include_small, tuple(sorted(reasons.items())))

"""The leaderboard's convention for one figure per agent: the unweighted mean of per-setup (per-domain) figures.

Trials of different setups are never pooled into one pass^k (see :func:`tauk.stats.resolve_by`); when one number
per agent is wanted anyway — a leaderboard's "overall" — it is the mean of the per-setup estimates, each setup
counting once whatever its number of tasks, and it says so. No interval is given for it: the per-setup intervals
are the calibrated ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.table import SummaryTable

__all__ = ["Overall", "overall"]


@dataclass(frozen=True)
class Overall:
    """One row per (group, k): ``estimate`` (the mean of the per-setup estimates), ``n_setups`` (how many entered),
    ``n_tasks`` (their tasks, summed) and ``setups`` (which)."""

    by: tuple[str, ...]
    over: str
    metric: str
    frame: pl.DataFrame

    def to_frame(self) -> pl.DataFrame:
        """The rows (a Polars frame)."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready rows."""
        return self.frame.to_dicts()

    def summary(self) -> SummaryTable:
        """The table: one row per group, one column per k."""
        ks = sorted(set(self.frame["k"].to_list())) if self.frame.height else []
        groups: dict[tuple, dict[str, Any]] = {}
        for r in self.frame.sort("k").iter_rows(named=True):
            g = groups.setdefault(tuple(r[c] for c in self.by), {"n_setups": r["n_setups"], "n_tasks": r["n_tasks"]})
            g[r["k"]] = r["estimate"]
        rows = [[*key, g["n_setups"], g["n_tasks"], *(g.get(k) for k in ks)] for key, g in groups.items()]
        cols = [*self.by, f"{self.over}s", "tasks", *(f"{self.metric.replace('k', str(k))}" for k in ks)]
        fields = [*self.by, "n_setups", "n_tasks", *(f"{'pass_hat' if self.metric == 'pass^k' else 'pass_at'}_{k}"
                                                      for k in ks)]  # fmt: skip
        notes = [f"the leaderboard's convention: the unweighted mean of the per-{self.over} figures (each "
                 f"{self.over} counts once, whatever its number of tasks); no interval — the per-{self.over} "
                 "intervals are the calibrated ones"]  # fmt: skip
        return SummaryTable.build(f"{self.metric} overall (mean over {self.over}s)", cols, rows, notes,
                                  fields=fields, keys=max(len(self.by), 1))  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def overall(result: Any, *, over: str = "setup") -> Overall:
    """One figure per group by the leaderboard's convention: the mean of the per-``over`` estimates of a
    :class:`~tauk.stats.Summary` or :class:`~tauk.stats.PassKResult` grouped by (at least) ``over``.

    Examples
    --------
    >>> import tauk
    >>> s = tauk.stats.summarize(tauk.load("data"), by="agent", ci=None)
    >>> s.by
    ('agent', 'setup')
    >>> o = tauk.stats.overall(s)
    >>> [(a, n, round(e, 4)) for a, n, e in o.to_frame().filter(k=1).select("agent", "n_setups", "estimate").rows()]
    [('atlas-large', 2, 0.765), ('atlas-small', 2, 0.51), ('baseline', 2, 0.335)]
    """
    by = tuple(getattr(result, "by", ()))
    long = getattr(result, "pass_hat_k", None)
    metric = "pass^k"
    if not isinstance(long, pl.DataFrame):
        long = getattr(result, "frame", None)
        metric = getattr(result, "metric", "pass^k")
    if not isinstance(long, pl.DataFrame) or over not in by:
        raise TaukError(f"overall() takes a Summary or PassKResult grouped by {over!r} (its by is {by})")
    keys = [c for c in by if c != over]
    frame = (
        long.filter(pl.col("estimate").is_not_null())
        .group_by([*keys, "k"], maintain_order=True)
        .agg(
            pl.col(over).n_unique().alias("n_setups"),
            pl.col("n_tasks").sum().alias("n_tasks"),
            pl.col("estimate").mean().alias("estimate"),
            pl.col(over).unique(maintain_order=True).alias(f"{over}s"),
        )
        .sort([*keys, "k"], nulls_last=True)
    )
    return Overall(tuple(keys), over, metric, frame)

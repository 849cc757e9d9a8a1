"""Success conditional on action-level deviations, per agent and per task (the statistics of
:func:`tauk.scoring.trial_deviations`).

``by_count``: per group and bin of the number of state-changing deviations (default ``n_state_diff`` binned 0, 1,
2, ≥ 3): trials, successes, the success rate with two intervals — ``wilson_*`` treats the trials as independent,
which they are not (a task's trials share its difficulty); ``clustered_*`` is the Wilson interval at the
task-clustered effective size n_eff = p̂(1 − p̂)/V̂, V̂ the ratio estimator's cluster-robust variance over the tasks
in the bin (capped at n; at p̂ ∈ {0, 1}: n_eff = the number of tasks). ``tasks``: per group and task — trials,
success rate, the share of trials with a decisive deviation, the mean deviation count and the most common first
decisive deviation (kind and tool). ``groups``: per group — trials, attributable trials, failures, failures carrying
a state-changing deviation, of which an extra or wrong write / only a missing write / only an order deviation.

Examples
--------
>>> import tauk
>>> prof = tauk.stats.deviation_profile(tauk.load("data/baseline_airline.json"))
>>> prof.by_count.select("bin", "trials", "successes").rows()
[('0', 46, 30), ('1', 28, 0), ('2', 26, 0)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tauk._lazy import lazy
from tauk.conventions import CI_LEVEL
from tauk.errors import TaukError
from tauk.scoring import trial_deviations
from tauk.table import Interval, SummaryTable

from .options import check_level
from .tasks import SETUP_NOTE, normalize_by, resolve_by

sstats = lazy("scipy.stats")

__all__ = ["DeviationProfile", "deviation_profile", "wilson", "clustered_wilson"]


def wilson(x: float, n: float, level: float) -> tuple[float, float]:
    """Wilson score interval of x successes in n (NaN for n = 0).

    >>> [round(v, 4) for v in wilson(1, 45 / 6, 0.95)]
    [0.0239, 0.4911]
    """
    if n <= 0:
        return (np.nan, np.nan)
    z = float(sstats.norm.ppf(0.5 + level / 2))
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at x = 0 (x = n) the end is 0 (1) exactly: centre − half is that end in exact arithmetic, 3e-17 in floats
    lo = 0.0 if x <= 0 else max(0.0, centre - half)
    hi = 1.0 if x >= n else min(1.0, centre + half)
    return (float(lo), float(hi))


def clustered_wilson(y: np.ndarray, m: np.ndarray, level: float) -> tuple[float, float, float]:
    """``(n_eff, low, high)``: the Wilson interval of Σy/Σm at the task-clustered effective size (module docs).

    >>> n_eff, lo, hi = clustered_wilson(np.array([4, 0, 2]), np.array([4, 4, 4]), 0.95)
    >>> round(n_eff, 2), round(lo, 3), round(hi, 3)  # the tasks disagree: 12 trials count as 3
    (3.0, 0.125, 0.875)
    """
    y, m = np.asarray(y, dtype=np.float64), np.asarray(m, dtype=np.float64)
    n, T = m.sum(), y.size
    if n == 0:
        return (0.0, np.nan, np.nan)
    p = y.sum() / n
    if p in (0.0, 1.0) or T < 2:
        n_eff = float(T) if p in (0.0, 1.0) else float(n)
    else:
        v = T / (T - 1) * np.sum((y - p * m) ** 2) / n**2
        n_eff = float(min(n, p * (1 - p) / v)) if v > 0 else float(n)
    lo, hi = wilson(p * n_eff, n_eff, level)
    return (n_eff, lo, hi)


@dataclass(frozen=True)
class DeviationProfile:
    """See the module docs; ``to_frame()`` is ``by_count``."""

    by_count: pl.DataFrame
    tasks: pl.DataFrame
    groups: pl.DataFrame
    by: tuple[str, ...]
    count: str
    ci: float
    split_by_setup: bool = False  # ``setup`` was added to ``by``: the groups asked for span several setups

    def to_frame(self) -> pl.DataFrame:
        return self.by_count.clone()

    def records(self) -> list[dict[str, Any]]:
        return self.by_count.to_dicts()

    def summary(self) -> SummaryTable:
        """Success by number of deviations (text / HTML / LaTeX / Markdown / CSV)."""
        rows = [[*(r[k] for k in self.by), r["bin"], r["trials"], r["tasks"],
                 Interval(r["success"], r["clustered_low"], r["clustered_high"]),
                 Interval(r["success"], r["wilson_low"], r["wilson_high"])]
                for r in self.by_count.iter_rows(named=True)]  # fmt: skip
        pct = f"{round(self.ci * 100, 6):g} %"
        notes = (
            f"bins of {self.count} (state-changing deviations; n_state_diff is the multiset difference between a "
            "trial's state-changing calls and the gold actions, a wrong-argument call counting twice)",
            f"Wilson {pct}: the trials taken as independent — they are not, a task's trials share its difficulty",
            f"clustered {pct}: Wilson at the task-clustered effective size (the interval to read)",
            "only attributable trials (task definition and messages recorded, every gold tool known)",
            *((SETUP_NOTE,) if self.split_by_setup else ()),
        )
        return SummaryTable.build("Success by number of state-changing deviations",
                                  [*self.by, "deviations", "trials", "tasks", "success [clustered]",
                                   "success [Wilson, trials]"], rows, notes, digits=3,
                                  fields=[*self.by, "bin", "trials", "tasks", "success", "success_wilson"],
                                  keys=len(self.by) + 1)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary().to_html()


def deviation_profile(
    data: Any,
    *,
    by: Sequence[str] = ("agent", "domain"),
    count: str = "n_state_diff",
    bins: Sequence[int] = (0, 1, 2, 3),
    ci: float = CI_LEVEL,
    tasks: Any = None,
    pool_setups: bool = False,
) -> DeviationProfile:
    """Success conditional on the number of deviations, deviation rates per task and per group.

    Parameters
    ----------
    data
        A :class:`tauk.Results` (attributed with :func:`tauk.scoring.trial_deviations`) or the frame that function
        returns.
    by
        Grouping columns.
    count
        The count to bin: ``n_state_diff`` (default: SABER's multiset difference), ``n_decisive`` (deviations not
        explained as neutral), ….
    bins
        Lower edges; the last bin is open (``"≥ 3"``).
    ci
        Interval level.
    tasks
        Other task definitions (passed to :func:`tauk.scoring.trial_deviations`).
    pool_setups
        Pool a group's setups (domain, mode, user model, reward bases) into one figure; by default a group that spans
        several is reported per setup (``setup`` is added to ``by``), as every statistic does.
    """
    check_level(ci)  # ci=2 gave NaN intervals (a normal quantile of 1.5)
    td = data if isinstance(data, pl.DataFrame) else trial_deviations(data, tasks=tasks)
    by = normalize_by(by)
    need = {*by, "task_id", "success", "attributable", count}
    if not need <= set(td.columns):
        raise TaukError(f"deviation_profile: the frame lacks {sorted(need - set(td.columns))}")
    asked = by
    if "setup" in td.columns:
        by = resolve_by(td, by, pool_setups)
    edges = sorted(int(b) for b in bins)
    if not edges:
        raise TaukError("bins= needs at least one edge")
    labels = [str(e) for e in edges[:-1]] + [f"≥ {edges[-1]}" if len(edges) > 1 else f"≥ {edges[0]}"]
    a = td.filter(pl.col("attributable"))
    bin_expr = pl.lit(labels[-1])
    for e, lab in reversed(list(zip(edges[:-1], labels[:-1]))):
        bin_expr = pl.when(pl.col(count) == e).then(pl.lit(lab)).otherwise(bin_expr)
    a = a.with_columns(bin=pl.when(pl.col(count) < edges[0]).then(None).otherwise(bin_expr),
                       _bin_order=pl.col(count).clip(edges[0], edges[-1]))  # fmt: skip
    # in task order: the clustered interval's float sums are then the same on every call (a hash group_by's order
    # is not fixed)
    per_task = (a.group_by(*by, "bin", "_bin_order", "task_id").agg(y=pl.col("success").sum(), m=pl.len())
                .sort(*by, "_bin_order", "task_id", nulls_last=True))  # fmt: skip
    rows = []
    for key, g in per_task.group_by([*by, "bin", "_bin_order"], maintain_order=True):
        y, m = g["y"].to_numpy(), g["m"].to_numpy()
        n, x = int(m.sum()), int(y.sum())
        lo, hi = wilson(x, n, ci)
        n_eff, clo, chi = clustered_wilson(y, m, ci)
        rows.append({**dict(zip([*by, "bin", "_bin_order"], key)), "trials": n, "tasks": g.height, "successes": x,
                     "success": x / n if n else None, "wilson_low": lo, "wilson_high": hi, "n_eff": n_eff,
                     "clustered_low": clo, "clustered_high": chi})  # fmt: skip
    by_count = (pl.DataFrame(rows).sort([*by, "_bin_order"]).drop("_bin_order") if rows
                else pl.DataFrame())  # fmt: skip
    first = pl.when(pl.col("deviation").is_not_null()).then(pl.col("deviation") + pl.lit(" ") + pl.col("first_tool"))
    common = (
        a.filter(pl.col("deviation").is_not_null())
        .with_columns(_dev=first)
        .group_by(*by, "task_id", "_dev").agg(_k=pl.len())
        .sort("_k", "_dev", descending=[True, False])
        .group_by(*by, "task_id", maintain_order=True).first()
        .rename({"_dev": "most_common_deviation", "_k": "most_common_count"})
    )  # fmt: skip
    task_frame = (
        a.group_by(*by, "task_id")
        .agg(trials=pl.len(), success=pl.col("success").mean(),
             deviation_rate=(pl.col("n_decisive") > 0).mean(), mean_deviations=pl.col(count).mean())
        .join(common, on=[*by, "task_id"], how="left", nulls_equal=True)
        .sort(*by, "task_id")
    )  # fmt: skip
    fail = ~pl.col("success")
    dev = pl.col("n_state_diff") > 0
    groups = (
        td.group_by(*by)
        .agg(trials=pl.len(), attributable=pl.col("attributable").sum(),
             failures=(pl.col("attributable") & fail).sum(),
             failures_with_deviation=(pl.col("attributable") & fail & (dev | (pl.col("n_order") > 0))).sum(),
             extra_or_wrong=(pl.col("attributable") & fail & ((pl.col("n_extra") + pl.col("n_wrong_args")) > 0)).sum(),
             missing_only=(pl.col("attributable") & fail & (pl.col("n_extra") + pl.col("n_wrong_args") == 0)
                           & (pl.col("n_missing") > 0)).sum(),
             order_only=(pl.col("attributable") & fail & ~dev & (pl.col("n_order") > 0)).sum(),
             decisive_rate=(pl.col("n_decisive") > 0).filter(pl.col("attributable")).mean(),
             read_deviation_rate=((pl.col("n_read_missing") + pl.col("n_read_extra") + pl.col("n_read_wrong_args"))
                                  > 0).filter(pl.col("attributable")).mean())
        .sort(*by)
    )  # fmt: skip
    return DeviationProfile(by_count, task_frame, groups, by, count, ci, split_by_setup=by != asked)

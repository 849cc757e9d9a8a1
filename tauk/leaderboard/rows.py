"""Per leaderboard row: pass^k with its intervals, the run-to-run noise floor and what the row claims.

For every row whose histogram was recovered (:mod:`tauk.leaderboard.recovery`), the statistics are tauk's own, run
on the recovered :func:`tauk.stats.task_counts` frame — so they are the numbers the row's trajectories would give
(the default interval is a function of the histogram alone; on τ-bench gpt-4o airline it equals the trajectories'
to 1e-16): pass^k with the default calibrated interval for a new draw of tasks (``ci_low``/``ci_high``) and the
re-run interval for the same tasks (``rerun_ci_low``/``rerun_ci_high``); the noise floor of the row's setup — the
smallest gap between two single runs that is significant at α (``mdd_single_runs``, from
:func:`tauk.stats.noise.noise_floor.noise_floor`'s exact mid-p null, on the lattice of 1/T), with the share of tasks that
flip between trials; and what the row itself claims (which k it publishes, under which convention its figures
reproduce, its verification status). Rows that could not be recovered keep their published figures and their flag.

>>> import tauk
>>> from tauk.leaderboard import recover, row_intervals
>>> rows = row_intervals(recover("../shared/data/leaderboard"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from tauk.conventions import CI_LEVEL, CI_METHOD, RESAMPLES, SEED
from tauk.errors import TaukError
from tauk.table import Interval, SummaryTable

from ._stats import noise_floor, pass_hat_k, rerun_variance
from .recovery import Recovery, recover

__all__ = ["RowIntervals", "row_intervals", "task_values"]

ROW_KEYS = ("submission_id", "domain")
"""The join keys of every leaderboard table."""


def task_values(cells: Sequence[tuple[int, int, int]], k: int) -> np.ndarray:
    """Û_k = C(c, k)/C(n, k) of every task of a histogram ``((trials, successes, tasks), …)`` (tasks with fewer
    than k trials left out), in cell order.

    >>> task_values(((4, 0, 1), (4, 2, 2), (4, 4, 1)), 2).tolist()
    [0.0, 0.16666666666666666, 0.16666666666666666, 1.0]
    """
    from math import comb

    out: list[float] = []
    for n, c, h in cells:
        if n >= k:
            out += [comb(c, k) / comb(n, k)] * int(h)
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class RowIntervals:
    """Per-row statistics of a leaderboard (immutable; from :func:`row_intervals`).

    ``frame`` (:meth:`to_frame`): one row per (submission_id, domain) — model, modality, status, published_ks,
    convention, tasks, trials, published pass^1 (``published_1``, points), ``pass_1`` and its intervals (fractions),
    interval_method, mdd_single_runs and its size (fraction; null with fewer than 3 flipping tasks or one trial per
    task), flip_share (tasks neither always passed nor always failed), sd_single_run, residual (points) and note.
    ``passk``: one row per (submission_id, domain, k) with published (points), estimate, se_tasks, se_rerun,
    ci_low, ci_high, rerun_ci_low, rerun_ci_high, interval_method, rerun_interval_method.
    ``recovery``: the :class:`~tauk.leaderboard.recovery.Recovery` it was made from.
    """

    frame: pl.DataFrame
    passk: pl.DataFrame
    ci: float
    method: str
    alpha: float
    recovery: Recovery = field(repr=False)

    def to_frame(self) -> pl.DataFrame:
        """One row per (submission_id, domain); see the class docs."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per row, each with its ``pass_hat_k`` list (one dict per k)."""
        per: dict[tuple, list[dict[str, Any]]] = {}
        for r in self.passk.iter_rows(named=True):
            per.setdefault((r["submission_id"], r["domain"]), []).append(
                {c: v for c, v in r.items() if c not in ROW_KEYS})
        return [{**r, "pass_hat_k": per.get((r["submission_id"], r["domain"]), [])}
                for r in self.frame.iter_rows(named=True)]  # fmt: skip

    def summary(self, *, domain: str | Sequence[str] | None = None) -> SummaryTable:
        """The per-row table (text / HTML / LaTeX): published pass^1, the recovered estimate with both intervals,
        the noise floor and the row's flag; ``domain`` keeps some domains."""
        f = self.frame
        if domain is not None:
            f = f.filter(pl.col("domain").is_in([domain] if isinstance(domain, str) else list(domain)))
        f = f.sort(["domain", "published_1"], descending=[False, True], nulls_last=True)
        lvl = f"{self.ci:.0%}"
        cols = ["submission", "domain", "T×n", "published pass^1", f"pass^1 [{lvl} new tasks]",
                f"[{lvl} re-run]", "MDD 2 runs (pt)", "flip share", "status"]  # fmt: skip
        fields = ["submission_id", "domain", "layout", "published_1", "pass_1", "rerun", "mdd_single_runs",
                  "flip_share", "status"]  # fmt: skip
        rows = []
        for r in f.iter_rows(named=True):
            est = None if r["pass_1"] is None else 100 * r["pass_1"]
            iv = None if est is None else Interval(est, _pt(r["ci_low"]), _pt(r["ci_high"]))
            rr = None if r["rerun_ci_low"] is None else f"[{100 * r['rerun_ci_low']:.1f}, {100 * r['rerun_ci_high']:.1f}]"
            flag = r["status"] if r["status"] == "recovered" else (
                f"{r['status']}: {r['residual']:.3f} pt off" if r["residual"] is not None else r["status"])
            rows.append([r["submission_id"], r["domain"], f"{r['tasks']}×{r['trials']}", r["published_1"], iv, rr,
                         _pt(r["mdd_single_runs"]), r["flip_share"], flag])  # fmt: skip
        n_rec = int((f["status"] == "recovered").sum())
        notes = [
            f"{f.height} rows, {n_rec} recovered: their figures are tauk's statistics on the per-task counts recovered "
            "from the published pass^1 … pass^n (the trajectories would give the same)",
            f"new tasks: {lvl} interval for a new draw of tasks ({self.method}); re-run: the same tasks run again",
            f"MDD 2 runs: the smallest gap between two single runs of this setup significant at α = {self.alpha:g} "
            "(exact mid-p null on the lattice of 1/T); flip share: tasks neither always passed nor always failed",
            "rows not recovered keep their published figure and their flag (residual: points between the published "
            "figures and the nearest integer histogram)",
        ]
        if (f["trials"] == 1).any():
            notes.append("one-trial rows (voice: one simulation per task): both intervals are Clopper–Pearson on "
                         "(successes, T) — one trial per task shows no run-to-run noise, so no noise floor either")  # fmt: skip
        return SummaryTable.build("Leaderboard rows: pass^1 with intervals and noise floor", cols, rows, notes,
                                  digits=2, fields=fields, keys=2)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


def _pt(x: float | None) -> float | None:
    return None if x is None else 100.0 * x


def row_intervals(recovery: Any, *, ci: float = CI_LEVEL, method: str = CI_METHOD, resamples: int = RESAMPLES,
                  seed: int | None = SEED, alpha: float | None = None, progress: bool | None = None) -> RowIntervals:  # fmt: skip
    """Per-row pass^k intervals, noise floor and flags (see the module docs).

    Parameters
    ----------
    recovery
        A :class:`~tauk.leaderboard.recovery.Recovery`, or what :func:`~tauk.leaderboard.recovery.recover` takes.
    ci, method, resamples, seed, progress
        As for :func:`tauk.stats.pass_hat_k` (defaults from :mod:`tauk.conventions`).
    alpha
        Significance level of the noise floor (default 1 − ci).

    Returns
    -------
    RowIntervals
    """
    if not isinstance(recovery, Recovery):
        recovery = recover(recovery)
    if ci is None or not 0.0 < float(ci) < 1.0:
        raise TaukError(f"ci must be a level in (0, 1), got {ci!r}: every leaderboard row gets an interval")
    a = 1.0 - float(ci) if alpha is None else float(alpha)
    rec = recovery.to_frame()
    long_schema = {"submission_id": pl.String, "domain": pl.String, "k": pl.Int64, "published": pl.Float64,
                   "estimate": pl.Float64, "se_tasks": pl.Float64, "se_rerun": pl.Float64, "ci_low": pl.Float64,
                   "ci_high": pl.Float64, "rerun_ci_low": pl.Float64, "rerun_ci_high": pl.Float64,
                   "interval_method": pl.String, "rerun_interval_method": pl.String}  # fmt: skip
    published = []
    for (sid, dom), rr in recovery.rows.items():
        for k, v in rr.published:
            published.append({"submission_id": sid, "domain": dom, "k": k, "published": v})
    pub = pl.DataFrame(published, schema={c: long_schema[c] for c in ("submission_id", "domain", "k", "published")})
    if (rec["status"] == "recovered").any():
        counts = recovery.task_counts()
        est = pass_hat_k(counts, by=ROW_KEYS, ci=ci, method=method, resamples=resamples, seed=seed,
                         progress=progress).to_frame()  # fmt: skip
        est = est.select([c for c in long_schema if c != "published" and c in est.columns])
        passk = pub.join(est, on=[*ROW_KEYS, "k"], how="left")
    else:
        passk = pub.with_columns(pl.lit(None, dtype=long_schema[c]).alias(c) for c in long_schema if c not in pub.columns)
    passk = passk.select(list(long_schema)).sort([*ROW_KEYS, "k"])
    floor_rows = []
    for (sid, dom), rr in recovery.rows.items():
        row = {"submission_id": sid, "domain": dom, "mdd_single_runs": None, "mdd_size": None, "flip_share": None,
               "sd_single_run": None, "floor_note": None}  # fmt: skip
        cells = rr.cells
        if cells is not None:
            n = np.concatenate([np.full(h, t) for t, _, h in cells]).astype(np.int64)
            c = np.concatenate([np.full(h, s) for _, s, h in cells]).astype(np.int64)
            T = n.size
            if n.min() >= 2:
                row["flip_share"] = float(((c > 0) & (c < n)).mean())
                row["sd_single_run"] = float(np.sqrt(rerun_variance(n, c).sum()) / T)
                s, size = noise_floor(n, c, 1, a)
                if int(s) >= 0:
                    row["mdd_single_runs"], row["mdd_size"] = int(s) / T, float(size)
                else:
                    row["floor_note"] = "fewer than 3 tasks flip between trials: no noise floor"
            else:
                row["floor_note"] = "one trial per task: run-to-run noise not visible"
        floor_rows.append(row)
    floors = pl.DataFrame(floor_rows, schema={"submission_id": pl.String, "domain": pl.String,
                                              "mdd_single_runs": pl.Float64, "mdd_size": pl.Float64,
                                              "flip_share": pl.Float64, "sd_single_run": pl.Float64,
                                              "floor_note": pl.String})  # fmt: skip
    k1 = passk.filter(pl.col("k") == 1).select(
        *ROW_KEYS, pl.col("published").alias("published_1"), pl.col("estimate").alias("pass_1"), "ci_low", "ci_high",
        "rerun_ci_low", "rerun_ci_high", "interval_method")  # fmt: skip
    frame = (
        rec.select(*ROW_KEYS, "model", "modality", "manifest_section", "status", "published_ks", "convention", "tasks",
                   "trials", "residual", "explanation", "note")  # fmt: skip
        .join(k1, on=list(ROW_KEYS), how="left")
        .join(floors, on=list(ROW_KEYS), how="left")
        .with_columns(pl.coalesce("note", "floor_note").alias("note"))
        .drop("floor_note")
    )
    order = [*ROW_KEYS, "model", "modality", "manifest_section", "status", "published_ks", "convention", "tasks",
             "trials", "published_1", "pass_1", "ci_low", "ci_high", "rerun_ci_low", "rerun_ci_high",
             "interval_method", "mdd_single_runs", "mdd_size", "flip_share", "sd_single_run", "residual",
             "explanation", "note"]  # fmt: skip
    return RowIntervals(frame.select(order), passk, float(ci), method, a, recovery)

"""Voice rows: the interaction metrics read with their counts, each rate with an exact interval.

A voice submission publishes, per domain, an interaction panel (τ²-bench's full-duplex metrics) and the event
counts behind it (:func:`tauk.io.leaderboard.load_interaction_metrics`). Each rate is a count over a published
denominator, so the count is recovered (rate × denominator, checked to be a whole number) and given an exact
interval:

* shares of events — ``response_rate`` (responses / response_total), ``yield_rate`` (yields / yield_total) and the
  three selectivities (correct reactions / backchannel_total, vocal_tic_total, non_directed_total) —
  Clopper–Pearson;
* ``agent_interruption_rate`` (agent interruptions per response opportunity, not a share: it can exceed 1) — the
  exact Poisson (Garwood) interval of the count, divided by response_total;
* latencies are means of per-event durations whose spread is not published: no interval.

Both intervals treat the events as independent. They are not: events cluster within simulations (one simulation's
agent tends to interrupt, or to yield, again), so the interval is a **lower bound** on the uncertainty — measured in
``benchmarks/leaderboard_calibration.py``: with events correlated within simulations the Clopper–Pearson coverage
falls below its level. A bound on the spread of events per simulation would need the per-simulation counts, which a
submission does not publish.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tauk._lazy import lazy
from tauk.conventions import CI_LEVEL
from tauk.errors import TaukError
from tauk.io.leaderboard import load_interaction_metrics
from tauk.table import Interval, SummaryTable

sps = lazy("scipy.stats")

__all__ = ["InteractionIntervals", "interaction_intervals", "RATES", "clopper_pearson", "poisson_rate_interval"]

RATES: dict[str, tuple[str, str]] = {
    "response_rate": ("response_total", "share"),
    "yield_rate": ("yield_total", "share"),
    "agent_interruption_rate": ("response_total", "rate"),
    "selectivity_backchannel": ("backchannel_total", "share"),
    "selectivity_vocal_tic": ("vocal_tic_total", "share"),
    "selectivity_non_directed": ("non_directed_total", "share"),
}
"""Each rate of the panel: (its denominator among the published counts, ``share`` of events or ``rate`` per event)."""

LATENCIES = ("response_latency_mean", "yield_latency_mean")

CLUSTER_NOTE = ("events cluster within simulations (one simulation's agent tends to repeat its behaviour), so "
                "these intervals, which treat events as independent, are a lower bound on the uncertainty")  # fmt: skip


def clopper_pearson(x: int, n: int, level: float = CI_LEVEL) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval of a binomial share x / n.

    >>> [round(v, 4) for v in clopper_pearson(17, 18)]
    [0.7271, 0.9986]
    """
    a = 1.0 - level
    lo = 0.0 if x == 0 else float(sps.beta.ppf(a / 2, x, n - x + 1))
    hi = 1.0 if x == n else float(sps.beta.ppf(1 - a / 2, x + 1, n - x))
    return lo, hi


def poisson_rate_interval(x: int, exposure: float, level: float = CI_LEVEL) -> tuple[float, float]:
    """Exact (Garwood) interval of a Poisson count x, divided by ``exposure``.

    >>> [round(v, 4) for v in poisson_rate_interval(81, 392)]
    [0.1641, 0.2568]
    """
    a = 1.0 - level
    lo = 0.0 if x == 0 else float(sps.chi2.ppf(a / 2, 2 * x) / 2)
    hi = float(sps.chi2.ppf(1 - a / 2, 2 * x + 2) / 2)
    return lo / exposure, hi / exposure


@dataclass(frozen=True)
class InteractionIntervals:
    """Interaction metrics of voice rows with counts and exact intervals (immutable; from
    :func:`interaction_intervals`).

    ``frame`` (:meth:`to_frame`): one row per (submission_id, domain, metric) — submission_id, domain (the join
    keys), model, metric, value (as published), kind (share, rate, latency), numerator (recovered count), denominator
    (published), numerator_whole (rate × denominator is a whole number), ci_low, ci_high, n_simulations,
    events_per_simulation, note. ``adjacent``: per (domain, metric), rows ranked by value: adjacent pairs and how
    many have overlapping intervals.
    """

    frame: pl.DataFrame
    adjacent: pl.DataFrame
    ci: float

    def to_frame(self) -> pl.DataFrame:
        """One row per (submission_id, domain, metric); see the class docs."""
        return self.frame

    def records(self) -> list[dict[str, Any]]:
        """JSON-ready dicts, one per row of :meth:`to_frame`."""
        return self.frame.to_dicts()

    def summary(self, *, metric: str | Sequence[str] | None = None, domain: str | Sequence[str] | None = None) -> SummaryTable:
        """The table (text / HTML / LaTeX): each rate with its count, denominator and exact interval."""
        f = self.frame.filter(pl.col("kind") != "latency")
        if metric is not None:
            f = f.filter(pl.col("metric").is_in([metric] if isinstance(metric, str) else list(metric)))
        if domain is not None:
            f = f.filter(pl.col("domain").is_in([domain] if isinstance(domain, str) else list(domain)))
        f = f.sort(["domain", "metric", "value"], descending=[False, False, True])
        cols = ["submission", "domain", "metric", f"value [{self.ci:.0%} exact]", "count", "of", "sims", "note"]
        fields = ["submission_id", "domain", "metric", "value", "numerator", "denominator", "n_simulations", "note"]
        rows = [[r["submission_id"], r["domain"], r["metric"], Interval(r["value"], r["ci_low"], r["ci_high"]),
                 r["numerator"], r["denominator"], r["n_simulations"], r["note"]] for r in f.iter_rows(named=True)]  # fmt: skip
        adj = self.adjacent
        if metric is not None:
            adj = adj.filter(pl.col("metric").is_in([metric] if isinstance(metric, str) else list(metric)))
        if domain is not None:
            adj = adj.filter(pl.col("domain").is_in([domain] if isinstance(domain, str) else list(domain)))
        n_adj, n_ov = int(adj["n_adjacent"].sum()), int(adj["n_overlapping"].sum())
        notes = [
            "shares (response, yield, selectivity): Clopper–Pearson on count / denominator; agent_interruption_rate: "
            "interruptions per response opportunity, exact Poisson (Garwood); latencies: no spread published, no "
            "interval",
            CLUSTER_NOTE,
            f"ranked by value within domain × metric: {n_ov} of {n_adj} adjacent pairs have overlapping intervals",
        ]
        return SummaryTable.build("Voice rows: interaction metrics with counts", cols, rows, notes, digits=3,
                                  fields=fields, keys=3)  # fmt: skip

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return str(self.summary())


_SCHEMA = {
    "submission_id": pl.String, "domain": pl.String, "model": pl.String, "metric": pl.String, "value": pl.Float64,
    "kind": pl.String, "numerator": pl.Int64, "denominator": pl.Int64, "numerator_whole": pl.Boolean,
    "ci_low": pl.Float64, "ci_high": pl.Float64, "n_simulations": pl.Int64, "events_per_simulation": pl.Float64,
    "note": pl.String,
}  # fmt: skip


def interaction_intervals(metrics: Any, *, ci: float = CI_LEVEL, include_overall: bool = False) -> InteractionIntervals:
    """Each voice row's interaction rates with their counts and exact intervals (see the module docs).

    Parameters
    ----------
    metrics
        The frame of :func:`tauk.io.leaderboard.load_interaction_metrics`, or a path / folder to read it from.
    ci
        Level of the intervals.
    include_overall
        Keep the submissions' ``overall`` rows (the unweighted mean of the domain rates: no count behind it, so no
        interval).

    Examples
    --------
    >>> import polars as pl
    >>> m = pl.DataFrame({"submission_id": ["v"], "model": ["V"], "domain": ["airline"], "n_simulations": [50],
    ...                   "response_total": [392], "response_rate": [0.9081632653061225],
    ...                   "agent_interrupts_count": [81], "agent_interruption_rate": [0.2066326530612245]})
    >>> r = interaction_intervals(m)
    >>> r.to_frame().select("metric", "numerator", "denominator").rows()
    [('response_rate', 356, 392), ('agent_interruption_rate', 81, 392)]
    """
    if not isinstance(metrics, pl.DataFrame):
        metrics = load_interaction_metrics(metrics)
    if not 0.0 < float(ci) < 1.0:
        raise TaukError(f"ci must lie in (0, 1), got {ci!r}")
    if not include_overall:
        metrics = metrics.filter(pl.col("domain") != "overall")
    out = []
    for r in metrics.iter_rows(named=True):
        sims = r.get("n_simulations")
        base = {"submission_id": r["submission_id"], "domain": r["domain"], "model": r.get("model"),
                "n_simulations": sims}  # fmt: skip
        for m in LATENCIES:
            if r.get(m) is not None:
                out.append({**base, "metric": m, "value": r[m], "kind": "latency",
                            "note": "mean of per-event latencies (s); their spread is not published"})  # fmt: skip
        for m, (den_col, kind) in RATES.items():
            v = r.get(m)
            if v is None:
                continue
            row = {**base, "metric": m, "value": v, "kind": kind}
            den = r.get(den_col)
            if r["domain"] == "overall":
                row["note"] = "overall: unweighted mean of the domain rates (no single count behind it)"
                out.append(row)
                continue
            if den is None or den == 0:
                row["note"] = f"no {den_col} published: no interval"
                out.append(row)
                continue
            if m == "agent_interruption_rate" and r.get("agent_interrupts_count") is not None:
                x_float = float(r["agent_interrupts_count"])
            else:
                x_float = v * den
            x = int(round(x_float))
            whole = abs(x_float - x) <= 1e-6 * max(1.0, den)
            row.update(numerator=x, denominator=int(den), numerator_whole=whole,
                       events_per_simulation=None if not sims else den / sims)
            if kind == "share":
                if not 0 <= x <= den:
                    row["note"] = f"{m} × {den_col} = {x_float:.3f} is not a share of {den} events: no interval"
                    out.append(row)
                    continue
                lo, hi = clopper_pearson(x, int(den), ci)
            else:
                lo, hi = poisson_rate_interval(x, float(den), ci)
            if not whole:
                row["note"] = f"{m} × {den_col} = {x_float:.3f}, not a whole number: interval around the nearest count"
            elif m == "agent_interruption_rate" and abs(x / den - v) > 1e-9:
                row["note"] = f"published rate {v:.4g} ≠ agent_interrupts_count / response_total = {x / den:.4g}"
            row.update(ci_low=lo, ci_high=hi)
            out.append(row)
    frame = pl.DataFrame(out, schema=_SCHEMA) if out else pl.DataFrame(schema=_SCHEMA)
    adj_rows = []
    rated = frame.filter(pl.col("ci_low").is_not_null())
    for (dom, met), part in rated.group_by(["domain", "metric"], maintain_order=True):
        part = part.sort("value", descending=True)
        lo, hi = part["ci_low"].to_list(), part["ci_high"].to_list()
        n_adj = max(part.height - 1, 0)
        overlap = sum(1 for i in range(n_adj) if lo[i] <= hi[i + 1] and lo[i + 1] <= hi[i])
        adj_rows.append({"domain": dom, "metric": met, "n_rows": part.height, "n_adjacent": n_adj,
                         "n_overlapping": overlap})  # fmt: skip
    adjacent = pl.DataFrame(adj_rows, schema={"domain": pl.String, "metric": pl.String, "n_rows": pl.Int64,
                                              "n_adjacent": pl.Int64, "n_overlapping": pl.Int64})  # fmt: skip
    return InteractionIntervals(frame, adjacent, float(ci))

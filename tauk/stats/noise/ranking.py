"""The ranking of agents within a domain against run-to-run noise: signal to noise, and the trials per task that
resolve each adjacent pair (see :mod:`tauk.stats.noise.analysis` for the definitions)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from tauk._lazy import lazy

special = lazy("scipy.special")


__all__ = ["rank_agents"]


def rank_agents(frame: pl.DataFrame, by: tuple[str, ...], rank_by: str | None, alpha: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    other = [c for c in by if c != rank_by]
    z = float(special.ndtri(1 - alpha / 2))
    items: list[dict[str, Any]] = []
    sets: list[dict[str, Any]] = []
    if rank_by is None or rank_by not in by or frame.height == 0:
        return pl.DataFrame(), pl.DataFrame()
    parts = frame.group_by(other, maintain_order=True) if other else [((), frame)]
    for key, part in parts:
        part = part.filter(pl.col("pass1").is_not_null()).sort(["pass1", rank_by], descending=[True, False])
        if part.height < 2:
            continue
        kvals = dict(zip(other, key if isinstance(key, tuple) else (key,)))
        p = part["pass1"].to_numpy()
        sd = np.array([np.nan if x is None else x for x in part["sd_single_run"].to_list()], dtype=float)
        se = np.array([np.nan if x is None else x for x in part["se_rerun"].to_list()], dtype=float)
        nbar = part["n_trials_mean"].to_numpy()
        se = np.where(np.isfinite(se), se, sd / np.sqrt(nbar))
        have = bool(np.all(np.isfinite(sd)))
        noise = float(np.sqrt(np.mean(sd**2))) if have else None
        signal = float(np.sqrt(max(0.0, float(np.var(p, ddof=1)) - float(np.mean(se**2))))) if have else None
        snr = None if noise is None or noise == 0 else signal / noise
        worst: int | None = 0
        for i, r in enumerate(part.iter_rows(named=True)):
            gap = m_next = sdd = None
            if i + 1 < part.height:
                gap = float(p[i] - p[i + 1])
                if have:
                    sdd = float(math.sqrt(sd[i] ** 2 + sd[i + 1] ** 2))
                    if gap > 0:
                        m_next = max(1, math.ceil(z * z * sdd * sdd / (gap * gap) - 1e-9))
                if m_next is None:
                    worst = None
                elif worst is not None:
                    worst = max(worst, m_next)
            items.append({**kvals, rank_by: r[rank_by], "rank": i + 1, "pass1": r["pass1"], "sd_single_run": r["sd_single_run"],
                          "gap_to_next": gap, "sd_diff_single_runs": sdd, "trials_to_resolve_next": m_next})  # fmt: skip
        why = None
        if not have:
            why = "no single-run SD for some of them (one trial per task)"
        elif worst is None:
            why = "two of them tie"
        sets.append({**kvals, "n_ranked": part.height, "signal_sd": signal, "noise_sd": noise, "snr": snr,
                     "trials_to_resolve": worst, "note": why})  # fmt: skip
    return pl.DataFrame(items, infer_schema_length=None), pl.DataFrame(sets, infer_schema_length=None)

"""The designed ternary interval: for per-task differences that are all −1, 0 or 1, with T tasks in the table's range
and a 95 % level, the interval for δ = P(d = 1) − P(d = −1) is read from a table computed offline by integer
programming (``benchmarks/compare_ternary_design.py``; issue 23).

For each T the table gives, for every outcome (m⁺, m⁻), the ends of an interval chosen so that

* its coverage is ≥ 94 % at every trinomial parameter (required on a grid of step 0.005 in δ, at both ends and the
  middle of each step, with 40 nuisance values each; checked on a grid ten times finer with 200);
* it holds 0 exactly where the exact unconditional test (:func:`~tauk.stats.comparisons.score.ternary_em_pvalue`)
  does not reject at 5 %, so the interval and the p-value always agree;
* it holds the estimate (m⁺ − m⁻)/T, and its ends never move left when a task moves from −1 towards +1;
* neither end lies beyond the union interval of :func:`~tauk.stats.comparisons.score.ternary_ends` at 99 %;
* among such intervals, its largest mean width relative to the paired t's, over the calibration's ternary cells
  where the t covers ≥ 94 % (four task populations, one fit to τ-bench data; n = k ∈ {1, 4}; δ ∈ {0, ±0.07,
  ±0.15}), is as small as the search found (each outcome's width also counts a little, uniformly).

The widths were optimised for those populations; the coverage holds for every population. The price is paid where
those populations rarely land: where nearly every task went one way the interval can be as wide as the 99 % union
interval (19 – 1 of 20: [0.39, 0.995], the 95 % union [0.53, 1]). Outside the table (other levels, or T outside it)
the comparison uses the 95 % union interval itself.

>>> ends = designed_ends(8, 1, 20)  # 8 tasks won by A, 1 by B, 11 ties, at 95 %
>>> ends is not None and ends[0] > 0.0
True
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["DESIGN_ALPHA", "designed_ends", "designed_range"]

_TABLE = Path(__file__).with_name("ternary_design.npz")

#: the level the table was designed for: α = 0.05
DESIGN_ALPHA = 0.05


class _Table(NamedTuple):
    alpha: float
    ends: dict[int, tuple[np.ndarray, np.ndarray]]  # T → (lower ends, upper ends) in the order of :func:`_index`


@lru_cache(maxsize=1)
def _table() -> _Table | None:
    if not _TABLE.exists():
        return None
    with np.load(_TABLE) as z:
        step = float(z["step"])
        ends = {int(T): tuple(np.round(z[f"{end}_{T}"].astype(np.float64) * step - 1.0, 12) for end in ("lo", "hi"))
                for T in z["T"].tolist()}  # fmt: skip
        return _Table(float(z["alpha"]), ends)


def designed_range() -> tuple[int, int] | None:
    """(smallest, largest) T the table holds; None without a table."""
    tab = _table()
    return (min(tab.ends), max(tab.ends)) if tab and tab.ends else None


def _index(a: int, b: int, T: int) -> int:
    """Position of (m⁺, m⁻) = (a, b) in the table's order (m⁺ major, then m⁻ ascending, m⁺ + m⁻ ≤ T)."""
    return a * (T + 1) - a * (a - 1) // 2 + b


def designed_ends(a: int, b: int, T: int, alpha: float = DESIGN_ALPHA) -> tuple[float, float] | None:
    """The designed interval of a tasks at +1 and b at −1 out of T, or None where there is no design (another level,
    or T outside :func:`designed_range`)."""
    tab = _table()
    if tab is None or abs(alpha - tab.alpha) > 1e-9 or T not in tab.ends:
        return None
    if not (a >= 0 and b >= 0 and a + b <= T):
        raise ValueError(f"outcome ({a}, {b}) impossible with {T} tasks")
    lo, hi = tab.ends[T]
    i = _index(a, b, T)
    return float(lo[i]), float(hi[i])

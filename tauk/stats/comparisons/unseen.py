"""What no comparison interval over T tasks can see: decisive tasks that were not drawn.

A *decisive* task is one on which one agent always passes and the other never does (per-task difference ±1). If
a share a of the task population is decisive for A, a benchmark of T tasks draws none of them with probability
(1 − a)^T. So a share up to :func:`unseen_share` ``= 1 − (1 − level)^(1/T)`` goes unseen at least 1 − level of the
time, and any interval that keeps its level when some tasks are decisive must stretch that far towards the side
of an unseen effect. Averaged over the benchmarks of a population where such tasks are rare, by Pratt's identity,
its width is then at least :func:`decisive_floor`: ≈ 0.36 at T = 10, 0.19 at T = 20, 0.08 at T = 50 (95 %).

The paired t and the bootstrap do not do this — they treat the tasks drawn as representative — and neither does
tauk's default where the data look alike: at T = 10 their intervals are often narrower than the floor. With 10 or
20 % of a calibration population's tasks made decisive, the t covers down to 82.1 % and the default down to 87.5 %
(``benchmarks/compare_decisive_bound.py``, ``docs/calibration/comparisons.md``); where the floor exceeds 1.10× the
t's width, issue 23's width target cannot be met by an interval that stays valid there.
:func:`tauk.stats.compare` says so in ``interval_note`` when its interval is narrower than the floor.

>>> round(unseen_share(10), 3), round(decisive_floor(10), 3), round(decisive_floor(50), 3)
(0.259, 0.364, 0.08)
"""

from __future__ import annotations

import math

__all__ = ["decisive_floor", "unseen_note", "unseen_share"]


def unseen_share(T: int, level: float = 0.95) -> float:
    """The largest share a of tasks that a benchmark of ``T`` tasks misses entirely with probability ≥ 1 − level:
    (1 − a)^T = 1 − level (the "rule of three" at T large: ≈ 3 / T at 95 %)."""
    if T < 1:
        raise ValueError(f"T must be at least 1 (got {T})")
    return 1.0 - (1.0 - level) ** (1.0 / T)


def decisive_floor(T: int, level: float = 0.95) -> float:
    """Least mean width of any interval for the mean difference that covers with probability ≥ ``level`` in every
    population (1 − a − b)·P + a·[A always, B never] + b·[B always, A never], at a P where such tasks are rare.

    For each δ' the interval must contain δ' whenever no decisive task was drawn with probability at least
    1 − (1 − level)/(1 − a)^T (a the share that moves the mean to δ'); integrating over δ' (Pratt's identity) gives
    2·[a* − (1 − level)/(T − 1)·((1 − a*)^(1 − T) − 1)] with a* = :func:`unseen_share` (2·[level + (1 − level)·
    ln(1 − level)] at T = 1). ``benchmarks/compare_decisive_bound.py`` solves the same bound as a linear programme
    at each calibration cell.
    """
    a_star = unseen_share(T, level)
    miss = 1.0 - level
    if T == 1:
        return 2.0 * (level + miss * math.log(miss))
    return 2.0 * (a_star - miss / (T - 1) * ((1.0 - a_star) ** (1 - T) - 1.0))


def unseen_note(T: int, width: float, level: float) -> str | None:
    """The ``interval_note`` part for an interval of ``width`` over ``T`` tasks narrower than :func:`decisive_floor`
    (None otherwise)."""
    if T < 2 or not math.isfinite(width):
        return None
    floor = decisive_floor(T, level)
    if width >= floor:
        return None
    return (
        f"narrower than {floor:.2f}, the least mean width (where such tasks are rare) of any {level:.0%} interval "
        f"that stays valid when some tasks are decisive (one agent always passes, the other never): with {T} tasks "
        f"such tasks making up as much as {unseen_share(T, level):.0%} of all tasks are all missed "
        f"{1 - level:.0%} of the time; this interval treats the tasks drawn as representative"
    )

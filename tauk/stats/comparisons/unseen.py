"""What no comparison interval over T tasks can see: decisive tasks that were not drawn.

A *decisive* task is one on which one agent always passes and the other never does (per-task difference ±1). If
a share a of the task population is decisive for A, a benchmark of T tasks draws none of them with probability
(1 − a)^T. So a share up to :func:`unseen_share` ``= 1 − (1 − level)^(1/T)`` goes unseen at least 1 − level of the
time, and an interval procedure that keeps its level when some tasks are decisive must, often enough, reach that
far towards the side of an unseen effect. Averaged over the benchmarks of a population where such tasks are rare,
by Pratt's identity, its width is at least :func:`decisive_floor`: ≈ 0.36 at T = 10, 0.19 at T = 20, 0.08 at
T = 50 (95 %). A randomised rule reaches it — [−1, 1] when a decisive-looking task is seen, else [−x, x] with a
random x — so no argument of this kind can raise it.

The paired t and the bootstrap do not do this — they treat the tasks drawn as representative — and neither does
tauk's default where the data look alike: at T = 10 their intervals are often narrower than the floor. With 10 or
20 % of a calibration population's tasks made decisive, the t covers down to 82.1 % and the default down to 87.5 %
(``benchmarks/compare_decisive_bound.py``, ``docs/calibration/comparisons.md``); where the floor exceeds 1.10× the
t's width, issue 23's width target can be met only by an interval that is not valid when some tasks are decisive.
:func:`tauk.stats.compare` says so in ``interval_note`` when its final interval is narrower than the floor (a
single interval can be narrower and the procedure still valid; one that is often narrower is not).

>>> round(unseen_share(10), 3), round(decisive_floor(10), 3), round(decisive_floor(50), 3)
(0.259, 0.364, 0.08)
"""

from __future__ import annotations

import math

__all__ = ["decisive_floor", "refresh_unseen_note", "unseen_note", "unseen_share"]

_PREFIX = "narrower than "


def unseen_share(T: int, level: float = 0.95) -> float:
    """The largest share a of tasks that a benchmark of ``T`` tasks misses entirely with probability ≥ 1 − level:
    (1 − a)^T = 1 − level (the "rule of three" at T large: ≈ 3 / T at 95 %)."""
    if T < 1:
        raise ValueError(f"T must be at least 1 (got {T})")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1) (got {level})")
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
        f"{_PREFIX}{floor:.2f}, the least average width (where such tasks are rare) of any {level:.0%} interval "
        "procedure that stays valid when some tasks are decisive (one agent always passes, the other never): with "
        f"{T} tasks, such tasks making up as much as {unseen_share(T, level):.0%} of all tasks are all missed at "
        f"least {100 * (1 - level):.3g}% of the time, and a procedure that often gives intervals this narrow does "
        "not stay valid then"
    )


def refresh_unseen_note(note: str | None, T: int, width: float, level: float) -> str | None:
    """``note`` (an ``interval_note``, parts joined by "; ") with its :func:`unseen_note` part worked out again for
    an interval of ``width`` — after run effects or clusters widened it."""
    parts = [part for part in (note or "").split("; ") if part and not part.startswith(_PREFIX)]
    fresh = unseen_note(T, width, level)
    return "; ".join([*parts, fresh] if fresh else parts) or None

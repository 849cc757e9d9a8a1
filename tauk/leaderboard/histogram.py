r"""The histogram search behind :mod:`tauk.leaderboard.recovery`: every per-task success-count histogram whose
pass^1 … pass^n reproduce a row's published figures within their rounding.

With T tasks each run n times, S_k = Σ_c h_c C(c, k) = T·C(n, k)·pass^k is an integer; the published figures bound
each S_k to an interval as wide as their rounding, and :func:`fit_histogram` enumerates every integer combination
inside those intervals whose histogram h_c = Σ_{k ≥ c} (−1)^{k−c} C(k, c) S_k is non-negative (level by level,
k = n … 1), or finds the nearest histogram (a global minimum of max_k |reproduced − published|) when none does.

>>> fit_histogram({1: 42.0, 2: 27.3, 3: 22.0, 4: 20.0}, Layout(50, 4), rounding_tolerance(1)).n_solutions
1
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tauk.errors import TaukError

__all__ = ["MAX_DECIMALS", "Layout", "HistogramFit", "published_decimals", "rounding_tolerance", "fit_histogram"]


MAX_DECIMALS = 9
"""Figures published with more decimals are treated as exact to 0.5e-9 points (they are unrounded fractions)."""

_SLACK = 1e-9  # points: floating-point slack added to every tolerance
_MAX_RESIDUAL = 12.8  # points: the nearest-histogram search stops here
_MAX_KEPT = 64  # histograms kept per fit (all are counted)


# ------------------------------------------------------------------------------------------------ rounding
def published_decimals(values: Iterable[float | None]) -> int:
    """Decimals of the most precise figure (the shortest ``repr`` of each float): the row's rounding.

    >>> published_decimals([84.0, 77.67, 73.5]), published_decimals([57.99999999999999])
    (2, 9)
    """
    best = 0
    for v in values:
        if v is None:
            continue
        s = repr(float(v))
        if "e" in s or "E" in s:
            return MAX_DECIMALS
        d = len(s.split(".")[1].rstrip("0")) if "." in s else 0
        best = max(best, d)
    return min(best, MAX_DECIMALS)


def rounding_tolerance(decimals: int) -> float:
    """Half a unit of the last decimal (in points), plus a floating-point slack of 1e-9.

    >>> round(rounding_tolerance(1), 12), round(rounding_tolerance(2), 12)
    (0.050000001, 0.005000001)
    """
    return 0.5 * 10.0 ** (-int(decimals)) + _SLACK


# ------------------------------------------------------------------------------------------------ layouts
@dataclass(frozen=True)
class Layout:
    """What a row's figures are assumed to be over: ``tasks`` tasks (pass^1's denominator) with ``trials`` kept
    trials each, except ``short`` tasks with one fewer (the drop convention after an infrastructure error; pass^k then
    averages over the tasks with at least k trials, as tauk does for an explicit k). ``name`` says where T comes from
    (``"base"``, a split such as ``"test"``, or ``"base − 2 lost"``)."""

    tasks: int
    trials: int
    short: int = 0
    name: str = "base"

    @property
    def convention(self) -> str:
        """Which infrastructure convention the layout stands for."""
        if self.short or "lost" in self.name:
            return "drop"
        return "complete"

    def describe(self) -> str:
        """One line: T tasks × n trials, and what differs from the published setup."""
        text = f"{self.tasks} tasks × {self.trials} trials"
        if self.short:
            text += f", {self.short} task(s) with {self.trials - 1} (infrastructure errors dropped)"
        if "lost" in self.name:
            text += f" ({self.name.split('− ')[-1]} task(s) of the set left out: infrastructure errors dropped)"
        elif self.name != "base":
            text += f" (the {self.name} task set)"
        return text


@dataclass(frozen=True)
class HistogramFit:
    """Every integer histogram under one :class:`Layout` that reproduces the published figures within
    ``tolerance`` points, and the nearest one when none does.

    ``histograms``: each as ``cells`` — ``((trials, successes, tasks), …)``, the complete tasks first (c = 0 … n),
    then the short ones; ``n_solutions`` counts them all (at most 64 are kept). ``nearest``: the histogram with the
    smallest ``residual`` (max over published k of |reproduced − published|, points); ``residual`` is ``inf`` when
    none lies within 12.8 points. ``false_fit_chance``: Π_k min(1, 2·tol·T·C(n, k)/100) (× the short-task
    combinations tried), the chance that figures of this precision placed at random fit this layout by accident —
    an upper bound (measured in ``benchmarks/leaderboard_recovery.py``: random figures fit less often)."""

    layout: Layout
    histograms: tuple[tuple[tuple[int, int, int], ...], ...]
    n_solutions: int
    nearest: tuple[tuple[int, int, int], ...] | None
    residual: float
    tolerance: float
    false_fit_chance: float

    @property
    def fits(self) -> bool:
        return self.n_solutions > 0


def _comb(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def _compositions(total: int, parts: int) -> Iterable[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for a in range(total + 1):
        for rest in _compositions(total - a, parts - 1):
            yield (a, *rest)


def _reproduce(cells: Sequence[tuple[int, int, int]], ks: Sequence[int]) -> dict[int, float]:
    """pass^k (points) of a histogram under τ²-bench's rule, tasks with fewer than k trials left out of that k."""
    out = {}
    for k in ks:
        num = den = 0.0
        for n, c, h in cells:
            if n >= k and h:
                num += h * _comb(c, k) / _comb(n, k)
                den += h
        out[k] = 100.0 * num / den if den else float("nan")
    return out


def _search(targets: dict[int, tuple[float, float]], scale: dict[int, float], shift: dict[int, float],
            total: int, n: int, radius: float, keep: int) -> tuple[int, list[tuple[float, tuple[int, ...]]]]:  # fmt: skip
    """Integer S_1 … S_n of ``total`` complete tasks with every h ≥ 0 and |reproduced − published| ≤ radius for
    each k; S_k = C(n,k)·(D_k·p/100 − shift_k) = scale_k·p − C(n,k)·shift_k. Returns (count, [(residual, h)])."""
    frontier = np.zeros((1, 0), dtype=np.int64)  # columns: S_n, S_{n-1}, … chosen so far
    for k in range(n, 0, -1):
        pub, _ = targets[k]
        lo = scale[k] * (pub - radius) / 100.0 - _comb(n, k) * shift[k]
        hi = scale[k] * (pub + radius) / 100.0 - _comb(n, k) * shift[k]
        cand = np.arange(max(0, math.ceil(lo - 1e-9)), math.floor(hi + 1e-9) + 1, dtype=np.int64)
        if cand.size == 0 or frontier.shape[0] == 0:
            return 0, []
        f = np.repeat(frontier, cand.size, axis=0)
        s = np.tile(cand, frontier.shape[0])[:, None]
        frontier = np.concatenate([f, s], axis=1)
        # h_k = S_k + Σ_{k' > k} (−1)^{k'−k} C(k', k) S_{k'}; the columns hold S_n … S_k
        hk = frontier[:, -1].copy()
        for j, kk in enumerate(range(n, k, -1)):
            hk += (-1) ** (kk - k) * _comb(kk, k) * frontier[:, j]
        frontier = frontier[hk >= 0]
        if frontier.shape[0] > 4_000_000:
            raise TaukError("the histogram search grew too large (figures far from any histogram)")
    if frontier.shape[0] == 0:
        return 0, []
    S = np.concatenate([np.full((frontier.shape[0], 1), total, dtype=np.int64), frontier[:, ::-1]], axis=1)  # S_0..S_n
    H = np.zeros((S.shape[0], n + 1), dtype=np.int64)
    for c in range(n + 1):
        for k in range(c, n + 1):
            H[:, c] += (-1) ** (k - c) * _comb(k, c) * S[:, k]
    ok = (H >= 0).all(axis=1)
    H, S = H[ok], S[ok]
    if H.shape[0] == 0:
        return 0, []
    res = np.zeros(H.shape[0])
    for k in range(1, n + 1):
        p = 100.0 * (S[:, k] + _comb(n, k) * shift[k]) / scale[k]
        res = np.maximum(res, np.abs(p - targets[k][0]))
    order = np.argsort(res, kind="stable")[:keep]
    return int(H.shape[0]), [(float(res[i]), tuple(int(x) for x in H[i])) for i in order]


def fit_histogram(published: Mapping[int, float], layout: Layout, tolerance: float, *,
                  nearest: bool = True) -> HistogramFit:  # fmt: skip
    """Every histogram under ``layout`` reproducing ``published`` ({k: percentage}, every k = 1 … n) within
    ``tolerance`` points, and (``nearest=True``) the nearest histogram when none does.

    >>> fit = fit_histogram({1: 42.0, 2: 27.3, 3: 22.0, 4: 20.0}, Layout(50, 4), rounding_tolerance(1))
    >>> fit.n_solutions, fit.histograms[0]
    (1, ((4, 0, 14), (4, 1, 12), (4, 2, 10), (4, 3, 4), (4, 4, 10)))
    """
    n, T, j = layout.trials, layout.tasks, layout.short
    if n < 1 or T < 1 or not 0 <= j < T or (j and n < 2):
        raise TaukError(f"cannot fit a histogram to {layout.describe()}")
    missing = [k for k in range(1, n + 1) if published.get(k) is None]
    if missing:
        raise TaukError(f"fit_histogram needs pass^1 … pass^{n}; missing pass^{missing[0]}")
    ks = list(range(1, n + 1))
    targets = {k: (float(published[k]), 0.0) for k in ks}
    shorts = list(_compositions(j, n)) if j else [()]

    def run(radius: float, keep: int) -> tuple[int, list[tuple[float, tuple[tuple[int, int, int], ...]]]]:
        count, found = 0, []
        for g in shorts:
            scale, shift = {}, {}
            for k in ks:
                if j and k < n:
                    scale[k] = T * _comb(n, k)
                    shift[k] = sum(g[c] * _comb(c, k) for c in range(n)) / _comb(n - 1, k)
                else:
                    scale[k] = (T - j) * _comb(n, k)
                    shift[k] = 0.0
            cnt, sols = _search(targets, scale, shift, T - j, n, radius, keep)
            count += cnt
            for r, h in sols:
                cells = tuple((n, c, h[c]) for c in range(n + 1)) + tuple((n - 1, c, g[c]) for c in range(len(g)))
                found.append((r, cells))
        found.sort(key=lambda x: x[0])
        return count, found[:keep]

    count, found = run(tolerance, _MAX_KEPT)
    chance = 1.0
    for k in ks:
        width = 2.0 * tolerance * T * _comb(n, k) / 100.0
        chance *= min(1.0, width)
    chance = min(1.0, chance * len(shorts))
    if count:
        return HistogramFit(layout, tuple(c for _, c in found), count, found[0][1], found[0][0], tolerance, chance)
    best: tuple[float, Any] = (math.inf, None)
    if nearest:
        radius = max(2.0 * tolerance, 0.05)
        while radius <= _MAX_RESIDUAL * 1.0001:
            cnt, sols = run(radius, 1)
            if cnt:
                best = (sols[0][0], sols[0][1])
                break
            radius *= 2.0
    return HistogramFit(layout, (), 0, best[1], best[0], tolerance, chance)

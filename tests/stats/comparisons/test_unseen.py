"""tauk.stats.comparisons.unseen: the decisive-task floor under any comparison interval, and its note."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from scipy import optimize, special, stats

import tauk
from tauk.stats.comparisons.results import interval_agreement
from tauk.stats.comparisons.unseen import decisive_floor, refresh_unseen_note, unseen_note, unseen_share

from ..test_dependence import frame_of


def _lp_floor(T: int, level: float, step: float = 0.005, nq: int = 25) -> float:
    """The bound solved directly: a population with no decisive-looking task (π± = 0), δ = 0; per δ' the least
    P_0(δ' ∈ C) over randomised rules of (N⁺, N⁻) that cover ≥ level at every (a, b) on the line a − b = δ'."""
    i, j = np.meshgrid(np.arange(T + 1), np.arange(T + 1), indexing="ij")
    keep = i + j <= T
    i, j = i[keep], j[keep]
    coef = special.gammaln(T + 1) - special.gammaln(i + 1) - special.gammaln(j + 1) - special.gammaln(T - i - j + 1)
    p0 = ((i == 0) & (j == 0)).astype(float)
    total = 0.0
    for x in np.arange(-1 + step, 1, step):
        b = np.linspace(max(0.0, -x), (1 - x) / 2, nq)
        a = x + b
        q0 = np.clip(1 - a - b, 0, 1)[:, None]
        P = np.exp(coef + special.xlogy(i, a[:, None]) + special.xlogy(j, b[:, None]) + special.xlogy(T - i - j, q0))
        res = optimize.linprog(p0, A_ub=-P, b_ub=-np.full(len(P), level), bounds=(0, 1), method="highs")
        assert res.status == 0
        total += res.fun
    return step * total


@pytest.mark.parametrize(("T", "level"), [(1, 0.95), (5, 0.95), (10, 0.94), (12, 0.9)])
def test_the_closed_form_is_the_linear_programme(T, level):
    # the LP's Riemann sum on a grid of 0.005 is within a step of the integral
    assert decisive_floor(T, level) == pytest.approx(_lp_floor(T, level), abs=0.006)


def test_the_unseen_share_is_missed_exactly_one_minus_level_of_the_time():
    for T in (1, 3, 10, 50, 400):
        a = unseen_share(T, 0.95)
        assert (1 - a) ** T == pytest.approx(0.05)
    assert unseen_share(400) * 400 == pytest.approx(3.0, rel=0.01)  # the rule of three
    assert decisive_floor(10) > decisive_floor(20) > decisive_floor(50) > 0
    assert decisive_floor(1, 0.95) == pytest.approx(2 * (0.95 + 0.05 * math.log(0.05)))
    for bad in ((0, 0.95), (10, 1.0), (10, 0.0)):
        with pytest.raises(ValueError):
            unseen_share(*bad)


def test_an_interval_under_the_floor_misses_a_decisive_population():
    # u-shaped tasks (both agents share p ~ Beta(0.3, 0.3), 8 trials); in the second population a = 20 % of the
    # tasks are decisive for A (δ = 0.2). The paired t is narrower than the floor in the first, so it cannot keep
    # its level in the second.
    rng = np.random.default_rng(5)
    T, reps, a = 10, 4000, 0.2

    def t_interval(share):
        p = rng.beta(0.3, 0.3, (reps, T))
        d = (rng.binomial(8, p) - rng.binomial(8, p)) / 8
        d[rng.random((reps, T)) < share] = 1.0
        half = stats.t.ppf(0.975, T - 1) * d.std(axis=1, ddof=1) / np.sqrt(T)
        return d.mean(axis=1) - half, d.mean(axis=1) + half

    lo, hi = t_interval(0.0)
    assert np.mean(hi - lo) < decisive_floor(T)
    lo, hi = t_interval(a)
    assert np.mean((lo <= a) & (a <= hi)) < 0.92  # it treats the tasks drawn as representative


def test_the_note_says_when_an_interval_is_narrower_than_the_floor():
    d = np.array([0.0] * 8 + [0.125, -0.125])
    narrow = interval_agreement(d, -0.1, 0.1, 0.9, 0.95, "model", "score")["interval_note"]
    assert "narrower than 0.36" in narrow and "as much as 26% of all tasks" in narrow
    wide = interval_agreement(d, -0.2, 0.2, 0.9, 0.95, "model", "score")["interval_note"]
    assert wide is None
    d50 = np.resize([0.25, -0.25, 0.0], 50)
    assert interval_agreement(d50, -0.03, 0.03, 0.9, 0.95, "model", "score")["interval_note"].startswith(
        "narrower than 0.08"
    )
    assert unseen_note(50, 0.1, 0.95) is None and unseen_note(1, 0.0, 0.95) is None
    assert unseen_note(10, float("nan"), 0.95) is None
    assert "at least 2.5% of the time" in unseen_note(10, 0.1, 0.975)


def test_the_note_is_worked_out_again_for_the_final_interval():
    other = "zero-width interval from the paired t; test='score' gives one with width"
    stale = f"{other}; {unseen_note(10, 0.1, 0.95)}"
    assert refresh_unseen_note(stale, 10, 0.5, 0.95) == other
    assert refresh_unseen_note(stale, 10, 0.2, 0.95) == f"{other}; {unseen_note(10, 0.2, 0.95)}"
    assert refresh_unseen_note(None, 10, 0.5, 0.95) is None
    # run effects widen the interval past the floor: the note goes with them (T = 10 tasks, 4 passes each)
    rng = np.random.default_rng(5)
    lp = special.logit(np.clip(rng.beta(0.3, 0.3, 10), 1e-3, 1 - 1e-3))[:, None]
    ya = (rng.uniform(size=(10, 4)) < special.expit(lp + np.array([-1.5, 0, 0.5, 1.5]))).astype(int)
    yb = (rng.uniform(size=(10, 4)) < special.expit(lp + np.array([1.2, -1.2, 0, 0]))).astype(int)
    fr = pl.concat([frame_of(ya, "A"), frame_of(yb, "B")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain_result = tauk.stats.compare(fr, "A", "B", run_effects="report")
        plain, adjusted = plain_result.row(), tauk.stats.compare(fr, "A", "B").row()
        pairs = tauk.stats.compare_all(pl.concat([fr, frame_of(ya, "C")]), run_effects="report")
    # the printed tables carry the rows' interval notes, each text once with the rows it is about
    assert f"interval: {plain['interval_note']}" in " ".join(str(plain_result.summary()).split())
    printed = " ".join(str(pairs.summary()).split())
    assert printed.count("narrower than 0.36") == 1 and "interval (A vs B" in printed
    assert plain["ci_high"] - plain["ci_low"] < decisive_floor(10) <= adjusted["ci_high"] - adjusted["ci_low"]
    assert adjusted["adjusted_for"] and "narrower than" in plain["interval_note"]
    assert "narrower than" not in (adjusted["interval_note"] or "")

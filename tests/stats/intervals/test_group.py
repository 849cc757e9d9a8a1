"""The model intervals as pass^k / pass@k report them (tauk.stats.intervals.group): every interval holds its estimate."""

from __future__ import annotations

import warnings

import pytest

from stats.frames import make_trials
from tauk.stats import pass_at_k, pass_hat_k


def _frame(successes, n):
    return make_trials([{"task_id": t, "trial": i, "reward": float(i < c)} for t, c in enumerate(successes)
                        for i in range(n)])  # fmt: skip


@pytest.mark.parametrize("fn, successes, n, k, boundary", [
    (pass_hat_k, [0] * 20, 2, 1, 0.0),  # every task failed: pass^1 = 0
    (pass_hat_k, [0] * 6 + [1] + [0] * 12, 2, 2, 0.0),  # pass^2 = 0 though one task passed once
    (pass_hat_k, [4] * 20, 4, 1, 1.0),  # every trial passed
    (pass_at_k, [5, 5, 5, 5, 4, 5, 5], 5, 2, 1.0),  # pass@2 = 1
])  # fmt: skip
def test_model_interval_holds_a_unanimous_estimate(fn, successes, n, k, boundary):
    """Where every task's Û_k is 0 (or every one 1) the estimate is 0 (1), and the model's posterior of E[p^k] alone
    excludes it (a uniform prior on μ puts no mass on the boundary): before, pass^1 of 20 tasks × 2 trials all
    failed was 0.0000 [0.0009, 0.1250] — an interval that never covers a truly-0 agent. Now the interval reaches the
    estimate (the other end unchanged) and a note says so."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fn(_frame(successes, n), k=[k])
    r = res.to_frame().row(0, named=True)
    assert r["estimate"] == boundary
    assert r["interval_method"] == "model"
    assert r["ci_low"] <= r["estimate"] <= r["ci_high"]
    assert r["rerun_ci_low"] <= r["estimate"] <= r["rerun_ci_high"]
    assert 0.0 < r["ci_high"] - r["ci_low"] < 1.0
    assert any("reach the estimate" in note for note in res.summary().notes)


def test_model_interval_is_unchanged_away_from_the_boundary():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pass_hat_k(_frame([0, 1, 2, 2, 0, 1, 2, 0], 2), k=[1, 2])
    for r in res.to_frame().iter_rows(named=True):
        assert 0.0 < r["ci_low"] < r["estimate"] < r["ci_high"] < 1.0
    assert not any("reach the estimate" in note for note in res.summary().notes)

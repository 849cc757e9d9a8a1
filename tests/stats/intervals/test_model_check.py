"""The model's posterior predictive check (tauk.stats.intervals.model_check) and its fallback."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special

from tauk.errors import TaukError
from tauk.stats import intervals as M
from tauk.stats.intervals import unanimous_interval
from tauk.stats.intervals.bootstrap import interval
from tauk.stats.options import IntervalOptions


def test_check_passes_on_beta_and_fires_on_two_point_population():
    rng = np.random.default_rng(0)
    R, T, n = 40, 200, 8
    nn = np.full((R, T), n)
    beta = rng.binomial(nn, rng.beta(0.7, 1.5, (R, T)))
    two = rng.binomial(nn, np.where(rng.random((R, T)) < 0.5, 0.15, 0.85))
    pb = M.model_interval_batch(nn, beta, [1], fallback=None).check_p
    pt = M.model_interval_batch(nn, two, [1], fallback=None).check_p
    assert np.mean(pb < 0.05) <= 0.1
    assert np.mean(pt < 0.05) >= 0.9


@pytest.mark.parametrize("fallback", ["bca", "bootstrap-t"])
def test_failed_check_falls_back_to_a_task_interval(fallback):
    """A failed check reports the union of the model and the task-bootstrap interval (default BCa), or the
    bootstrap interval alone (``fallback_mode="replace"``); the model interval stays in model_lo / model_hi."""
    rng = np.random.default_rng(1)
    n = np.full(200, 8)
    c = rng.binomial(n, np.where(rng.random(200) < 0.5, 0.15, 0.85))
    U = np.stack([special.comb(c, k) / special.comb(n, k) for k in (1, 4)], 1)
    lo, hi = interval(U, IntervalOptions(method=fallback))  # the model's defaults: CI_LEVEL, RESAMPLES, SEED
    lo, hi = unanimous_interval(U, np.clip(lo, 0, 1), np.clip(hi, 0, 1), 0.95)
    kw = {} if fallback == "bca" else {"fallback": fallback}
    r = M.model_interval(n, c, ks=[1, 4], **kw)
    assert not r.check_passed and r.source == f"fallback:{fallback}"
    np.testing.assert_allclose(r.lo, np.minimum(lo, r.model_lo))
    np.testing.assert_allclose(r.hi, np.maximum(hi, r.model_hi))
    rep = M.model_interval(n, c, ks=[1, 4], fallback_mode="replace", **kw)
    np.testing.assert_allclose(rep.lo, lo)
    np.testing.assert_allclose(rep.hi, hi)
    assert np.all(np.isfinite(rep.model_lo)) and not np.allclose(rep.model_lo, rep.lo)


def test_check_threshold():
    assert M.check_threshold([10, 50, 120, 200, 1000]).tolist() == [0.05, 0.05, 0.12, 0.2, 0.2]
    assert M.check_threshold([10, 300], 0.01).tolist() == [0.01, 0.01]
    with pytest.raises(TaukError, match="check_alpha"):
        M.check_threshold([10], "strict")

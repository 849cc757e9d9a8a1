"""The task bootstrap (tauk.stats.intervals.bootstrap / nonparametric): the replicates' distribution, Clopper–Pearson where every task is at one end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.frames import make_trials
from tauk.stats import pass_at_k, pass_hat_k
from tauk.stats.intervals.bootstrap import interval
from tauk.stats.options import IntervalOptions
from tauk.stats.tasks import u_hat


def test_unanimous_tasks_get_clopper_pearson_not_a_point():
    """Every task at 1 (or every task at 0): the bootstrap and t intervals are the point; the population value is
    not known to be exactly 1, so the interval is Clopper–Pearson over the tasks."""
    ones = [{"task_id": t, "trial": i, "reward": 1.0} for t in range(8) for i in range(2)]
    zeros = [{"task_id": t, "trial": i, "reward": 0.0} for t in range(8) for i in range(2)]
    bound = 0.025 ** (1 / 8)
    for method in ("bca", "percentile", "t", "bootstrap-t"):
        r = pass_hat_k(make_trials(ones), k=[1, 2], method=method, resamples=500).to_frame()
        assert r["ci_low"].to_list() == pytest.approx([bound, bound]) and r["ci_high"].to_list() == [1.0, 1.0]
        z = pass_at_k(make_trials(zeros), k=1, method=method, resamples=500).to_frame()
        assert z["ci_low"][0] == 0.0 and z["ci_high"][0] == pytest.approx(1 - bound)
    # one task away from unanimous: the ordinary interval (not Clopper–Pearson) is used
    mixed = ones[:-1] + [{"task_id": 7, "trial": 1, "reward": 0.0}]
    m = pass_hat_k(make_trials(mixed), k=1, resamples=500).to_frame()
    assert m["ci_low"][0] != pytest.approx(bound) and m["ci_low"][0] < m["estimate"][0] < 1.0


@pytest.mark.parametrize("collapse", [False, True])
def test_bootstrap_replicates_have_the_task_bootstrap_distribution(collapse):
    """Both resample paths (per-task counts, distinct-row multinomial) give replicate means with mean Ū and
    variance var_pop(U)/T — the exact moments of the task bootstrap of a mean."""
    from tauk.stats.intervals.bootstrap import bootstrap_means

    rng = np.random.default_rng(8)
    n = np.full(60, 4)
    c = rng.binomial(4, rng.beta(0.5, 0.5, 60))
    U = np.column_stack([u_hat(n, c, 1), u_hat(n, c, 2)])
    B = 20000
    boot = bootstrap_means(U, B, seed=3, collapse=collapse)
    target_var = U.var(axis=0) / U.shape[0]
    assert np.all(np.abs(boot.mean(axis=0) - U.mean(axis=0)) <= 4 * np.sqrt(target_var / B))
    # sd of a sample variance ≈ var·√(2/(B−1)) (near-normal replicates)
    assert np.all(np.abs(boot.var(axis=0, ddof=1) / target_var - 1) <= 5 * np.sqrt(2 / (B - 1)))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["bca", "percentile", "bootstrap-t"]))
def test_seeded_bootstrap_does_not_depend_on_the_order_of_the_tasks(seed, method):
    """Tasks are exchangeable: the seeded task bootstrap must give the same interval whatever order (i.e. task ids)
    the tasks come in. Before: with many distinct per-task rows (unequal trial counts: no collapse to categories)
    the resample matrix was drawn over task positions, so renaming tasks moved pass^k's bca interval, e.g.
    [0.4167, 0.5163] → [0.4226, 0.5139] — and with it the model's fallback union."""
    rng = np.random.default_rng(seed)
    T = int(rng.integers(3, 30))
    n = rng.integers(1, 9, size=T)
    c = rng.binomial(n, rng.random())
    U = np.stack([u_hat(n, c, 1), u_hat(n, c, 2)], axis=1)
    perm = rng.permutation(T)
    opts = IntervalOptions(ci=0.95, method=method, resamples=499, seed=7)
    a, b = interval(U, opts), interval(U[perm], opts)
    np.testing.assert_allclose(a[0], b[0], atol=1e-12)
    np.testing.assert_allclose(a[1], b[1], atol=1e-12)

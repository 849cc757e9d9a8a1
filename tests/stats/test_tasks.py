"""Trials → per-task (n, c) (tauk.stats.tasks): the exact per-task estimator, the success rule, the infra conventions, τ-bench's denominator, grouping and task identity."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from stats.frames import make_trials
from tauk.errors import TaukError
from tauk.stats import pass_hat_k, summarize
from tauk.stats.tasks import u_hat


# ---------------------------------------------------------------- tests
def test_u_hat_exact_against_math_comb():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 1001, size=300)
    c = (rng.random(300) * (n + 1)).astype(int)
    for k in (1, 2, 7, 50, 500):
        got = u_hat(n, c, k)
        for ni, ci, gi in zip(n, c, got):
            if k > ni:
                assert math.isnan(gi)
            else:
                # Python's int/int true division is correctly rounded
                assert gi == math.comb(int(ci), k) / math.comb(int(ni), k)


def test_success_tolerance_and_null_reward():
    rows = [
        {"task_id": 1, "reward": 1 - 0.9e-6},  # success
        {"task_id": 2, "reward": 1 + 0.9e-6},  # success
        {"task_id": 3, "reward": 1 - 2e-6},  # failure
        {"task_id": 4, "reward": None},  # failure, excluded from avg_reward
        {"task_id": 5, "reward": 0.5},  # fractional: failure
    ]
    s = summarize(make_trials(rows), ci=None).records()[0]
    assert s["pass_hat_k"]["1"]["estimate"] == pytest.approx(2 / 5, abs=1e-15)
    assert s["avg_reward"] == pytest.approx((1 - 0.9e-6 + 1 + 0.9e-6 + 1 - 2e-6 + 0.5) / 4, abs=1e-15)
    assert s["n_simulations"] == 5 and s["n_tasks"] == 5


def test_infra_conventions():
    rows = [{"task_id": t, "reward": 1.0, "agent_cost": 0.1} for t in range(49)]
    rows.append({"task_id": 7, "reward": None, "termination_reason": "infrastructure_error"})
    rows.append({"task_id": 99, "reward": None, "termination_reason": "infrastructure_error"})
    df = make_trials(rows)
    drop = summarize(df, infra="drop", ci=None).records()[0]
    fail = summarize(df, infra="fail", ci=None).records()[0]
    assert drop["infra_error_count"] == fail["infra_error_count"] == 2
    assert drop["n_simulations"] == 49 and fail["n_simulations"] == 51
    assert drop["n_tasks"] == 49 and drop["n_tasks_no_kept"] == 1  # task 99 only had the infra error
    assert fail["n_tasks"] == 50 and fail["n_tasks_no_kept"] == 0
    assert drop["pass_hat_k"]["1"]["estimate"] == 1.0
    # task 7: 1 success out of 2 kept trials; task 99: 0/1
    assert fail["pass_hat_k"]["1"]["estimate"] == pytest.approx((48 + 0.5 + 0) / 50, abs=1e-15)
    assert drop["avg_agent_cost"] == pytest.approx(0.1) and drop["avg_reward"] == 1.0
    # an infra error with a (spurious) reward of 1 still counts as failure under "fail"
    df2 = make_trials([{"task_id": 1, "reward": 1.0, "termination_reason": "infrastructure_error"}, {"task_id": 2, "reward": 1.0}])
    assert summarize(df2, infra="fail", ci=None).records()[0]["pass_hat_k"]["1"]["estimate"] == 0.5
    with pytest.raises(TaukError):
        summarize(df, infra="ignore", ci=None)


def test_taubench_denominator_counts_missing_trials():
    # run with trial indices 0..3 (N = 4); task B only has 2 trials recorded, both successes
    rows = [{"task_id": "A", "trial": i, "reward": 1.0, "format": "taubench"} for i in range(4)]
    rows += [{"task_id": "B", "trial": i, "reward": 1.0, "format": "taubench"} for i in range(2)]
    res = pass_hat_k(make_trials(rows), ci=None).to_frame().sort("k")
    assert res["k"].to_list() == [1, 2, 3, 4]
    np.testing.assert_allclose(res["estimate"].to_numpy(), [(1 + 2 / 4) / 2, (1 + 1 / 6) / 2, 0.5, 0.5], atol=1e-15)
    # the same rows as τ²-bench use each task's own n (so k stops at 2)
    res2 = pass_hat_k(make_trials([{**r, "format": "tau2"} for r in rows]), ci=None).to_frame()
    assert res2["k"].to_list() == [1, 2] and res2["estimate"].to_list() == [1.0, 1.0]


def test_grouping_by_any_columns_and_task_identity():
    rows = []
    for dom in ("airline", "retail"):
        for t in range(3):
            rows.append({"run_id": f"run-{dom}", "domain": dom, "task_id": t, "reward": 1.0 if dom == "airline" else 0.0})
    df = make_trials(rows)
    by_agent = summarize(df, by="agent", ci=None, pool_setups=True).records()
    assert len(by_agent) == 1
    rec = by_agent[0]
    # same task ids in two domains are different tasks
    assert rec["n_tasks"] == 6 and rec["domain"] is None and rec["agent"] == "a"
    assert rec["pass_hat_k"]["1"]["estimate"] == 0.5
    by_dom = summarize(df, by=["agent", "domain"], ci=None).to_frame().sort("domain")
    assert by_dom["domain"].to_list() == ["airline", "retail"]
    assert summarize(df, by=None, ci=None, pool_setups=True).records()[0]["n_simulations"] == 6
    # by default the agent's two setups (domains) are not pooled: one row each, and the table says why
    apart = summarize(df, by="agent", ci=None)
    assert apart.by == ("agent", "setup") and apart.groups.height == 2
    assert any("span several setups" in n for n in apart.summary().notes)


def test_default_k_list_stays_readable_with_many_trials():
    """10 tasks × 40 trials: the default k list stops at DEFAULT_K_MAX (not 40 columns); a larger k asked for is
    computed (C(c,k)/C(n,k) against an independent count)."""
    from tauk.conventions import DEFAULT_K_MAX

    rng = np.random.default_rng(5)
    rows = [{"task_id": f"t{t}", "trial": i, "reward": float(rng.random() < 0.9)} for t in range(10) for i in range(40)]
    trials = make_trials(rows)
    res = pass_hat_k(trials, by=None, ci=None).to_frame()
    assert res["k"].to_list() == list(range(1, DEFAULT_K_MAX + 1))
    asked = pass_hat_k(trials, by=None, k=30, ci=None).to_frame()
    c = [sum(r["reward"] for r in rows if r["task_id"] == f"t{t}") for t in range(10)]
    want = np.mean([math.comb(int(x), 30) / math.comb(40, 30) for x in c])
    assert asked["estimate"].to_list() == [pytest.approx(want)]


@pytest.mark.parametrize("partial", [False, True])
def test_nan_reward_is_a_null_reward(partial):
    """A NaN reward (a float column filled with NaN, e.g. a recomputed score that could not be computed) is the same
    missing reward as a null one: a failure, left out of avg_reward, and a group with no reward at all is "not
    evaluated" — not pass^k = 0 with an interval and avg_reward NaN."""
    def frame(missing):
        return make_trials([{"task_id": t, "trial": i, "reward": (1.0 if partial and i else missing)}
                            for t in range(5) for i in range(2)])  # fmt: skip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nan = summarize(frame(float("nan")), k=1).records()[0]
        null = summarize(frame(None), k=1).records()[0]
    assert nan == null
    assert nan["rewards"] == ("binary" if partial else "none")
    assert nan["avg_reward"] == (1.0 if partial else None)
    assert nan["pass_hat_k"]["1"]["estimate"] == (0.5 if partial else None)

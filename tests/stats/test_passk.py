"""Point estimates and the upstream metrics of tauk.stats (hand-built trials frames + the τ-bench reference file)."""

from __future__ import annotations

import json
import math
import random
import warnings
from collections import defaultdict

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.frames import make_trials, taubench_frame
from tauk.errors import StatsWarning
from tauk.stats import SummaryTable, pass_at_k, pass_hat_k, per_task, summarize


# ---------------------------------------------------------------- independent reference implementations
def ref_tau2_metrics(rows, num_trials=None):
    """A literal re-statement of tau2-bench's compute_metrics (drop convention) in plain Python."""
    kept = [r for r in rows if r.get("termination_reason") != "infrastructure_error"]
    if not kept:
        return None, {}
    rewards = [r["reward"] for r in kept if r["reward"] is not None]
    avg = sum(rewards) / len(rewards) if rewards else None
    n, c = defaultdict(int), defaultdict(int)
    for r in kept:
        n[r["task_id"]] += 1
        rew = r["reward"]
        c[r["task_id"]] += int(rew is not None and 1 - 1e-6 <= rew <= 1 + 1e-6)
    kmax = min(n.values()) if num_trials is None else min(num_trials, min(n.values()))
    out = {}
    for k in range(1, kmax + 1):
        vals = [math.comb(c[t], k) / math.comb(n[t], k) for t in n]
        out[k] = sum(vals) / len(vals)
    return avg, out


def test_simple_passk_by_hand():
    # task A: 3/4 successes, task B: 1/4, task C: 4/4
    rows = []
    for t, succ in (("A", [1, 1, 1, 0]), ("B", [0, 0, 1, 0]), ("C", [1, 1, 1, 1])):
        rows += [{"task_id": t, "trial": i, "reward": float(s), "num_trials": 4} for i, s in enumerate(succ)]
    df = make_trials(rows)
    res = pass_hat_k(df, ci=None).to_frame().sort("k")
    expected = [(3 / 4 + 1 / 4 + 1) / 3, (3 / 6 + 0 + 1) / 3, (1 / 4 + 0 + 1) / 3, (0 + 0 + 1) / 3]
    assert res["k"].to_list() == [1, 2, 3, 4]
    np.testing.assert_allclose(res["estimate"].to_numpy(), expected, rtol=0, atol=1e-15)
    at = pass_at_k(df, ci=None).to_frame().sort("k")
    # pass@2 for A: 1 - C(1,2)/C(4,2) = 1; B: 1 - C(3,2)/C(4,2) = 0.5; C: 1
    assert at.filter(pl.col("k") == 2)["estimate"][0] == pytest.approx((1 + 0.5 + 1) / 3, abs=1e-15)
    assert at.filter(pl.col("k") == 1)["estimate"][0] == pytest.approx(expected[0], abs=1e-15)


def test_requested_k_beyond_some_tasks_is_reported():
    rows = [{"task_id": "A", "trial": i, "reward": 1.0} for i in range(4)]
    rows += [{"task_id": "B", "trial": i, "reward": 0.0} for i in range(2)]
    with pytest.warns(StatsWarning, match=r"k=3 leaves out 1 of 2 task\(s\); r: k=9 leaves out 2 of 2"):
        r = pass_hat_k(make_trials(rows), k=[1, 3, 9], ci=0.95, resamples=200).to_frame().sort("k")
    assert r["n_tasks"].to_list() == [2, 1, 0]
    assert r["n_tasks_excluded"].to_list() == [0, 1, 2]
    assert r["estimate"].to_list()[:2] == [0.5, 1.0] and r["estimate"][2] is None
    pt = per_task(make_trials(rows), k=[1, 3])
    assert pt.columns[-2:] == ["U_1", "U_3"]
    assert pt.sort("task_id")["U_3"].to_list() == [1.0, None]


def test_explicit_k_within_every_task_does_not_warn(recwarn):
    rows = [{"task_id": t, "trial": i, "reward": 1.0} for t in "AB" for i in range(4)]
    pass_hat_k(make_trials(rows), k=[1, 4], ci=None)
    summarize(make_trials(rows), k=4, ci=None)
    pass_hat_k(make_trials(rows + [{"task_id": "C", "trial": 0, "reward": 0.0}]), ci=None)  # default ks: never beyond
    assert not [w for w in recwarn if issubclass(w.category, StatsWarning)]
    with pytest.warns(StatsWarning, match="k=5 leaves out 2 of 2"):
        summarize(make_trials(rows), k=5, ci=None)


def test_num_trials_caps_default_k():
    rows = [{"task_id": t, "trial": i, "reward": 1.0, "num_trials": 2} for t in "AB" for i in range(3)]
    assert pass_hat_k(make_trials(rows), ci=None).to_frame()["k"].to_list() == [1, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.sampled_from([0.0, 1.0, 0.5, None, 1.0000001]), st.booleans()),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([None, 1, 2, 3]),
)
def test_matches_plain_python_upstream(cells, num_trials):
    rows = [
        {"task_id": t, "reward": rew, "termination_reason": "infrastructure_error" if infra else "user_stop",
         "num_trials": num_trials}
        for t, rew, infra in cells
    ]
    avg, ref = ref_tau2_metrics(rows, num_trials)
    s = summarize(make_trials(rows), ci=None).records()[0]
    got = {int(k): v["estimate"] for k, v in s["pass_hat_k"].items()}
    kept = [r for r in rows if r["termination_reason"] != "infrastructure_error"]
    if not kept:  # every trial dropped: the upstream has no pass^k; tauk null estimates, the reason, the bounds
        assert not ref and all(v is None for v in got.values())
        assert all(v["interval_method"].startswith("none: every trial") and v["estimate_dropped_fail"] == 0.0
                   and v["estimate_dropped_success"] == 1.0 for v in s["pass_hat_k"].values())  # fmt: skip
        return
    assert got.keys() == ref.keys()
    if kept and all(r["reward"] is None for r in kept):
        # nothing was evaluated: the upstream prints 0 (a null reward is a failure); tauk says "not defined"
        assert all(v is None for v in got.values()) and s["rewards"] == "none"
        return
    for k in ref:
        assert abs(got[k] - ref[k]) <= 1e-12
    if avg is None:
        assert s["avg_reward"] is None
    else:
        assert abs(s["avg_reward"] - avg) <= 1e-12


def test_se_formulas_by_hand():
    succ = {"A": [1, 1, 1, 0], "B": [0, 0, 1, 0], "C": [1, 1, 1, 1], "D": [0, 0, 0, 0], "E": [1, 0, 1, 0]}
    rows = [{"task_id": t, "trial": i, "reward": float(s)} for t, v in succ.items() for i, s in enumerate(v)]
    res = pass_hat_k(make_trials(rows), ci=0.9, method="t").to_frame().sort("k")
    u1 = np.array([sum(v) / 4 for v in succ.values()])
    u2 = np.array([math.comb(sum(v), 2) / 6 for v in succ.values()])
    T = 5
    assert res["se_tasks"][0] == pytest.approx(np.std(u1, ddof=1) / math.sqrt(T), rel=1e-12)
    assert res["se_rerun"][0] == pytest.approx(math.sqrt(np.sum(u1**2 - u2)) / T, rel=1e-12)
    assert res["se_rerun"][1] == pytest.approx(
        math.sqrt(np.sum(u2**2 - np.array([math.comb(sum(v), 4) / 1 for v in succ.values()]))) / T, rel=1e-12
    )
    assert res["se_rerun"][2] is None  # n = 4 < 2k = 6
    from scipy import stats

    q = stats.t.ppf(0.95, T - 1)
    assert res["ci_low"][0] == pytest.approx(u1.mean() - q * res["se_tasks"][0], rel=1e-12)


def test_same_seed_same_numbers_and_seed_matters():
    rng = random.Random(3)
    rows = [{"task_id": t, "trial": i, "reward": float(rng.random() < 0.4)} for t in range(30) for i in range(4)]
    df = make_trials(rows)
    a = pass_hat_k(df, ci=0.95, resamples=999, seed=5).to_frame()
    b = pass_hat_k(df.sample(fraction=1.0, shuffle=True, seed=1), ci=0.95, resamples=999, seed=5).to_frame()
    c = pass_hat_k(df, ci=0.95, resamples=999, seed=6).to_frame()
    assert a.equals(b)  # row order of the input does not matter
    # the default (model) population interval is a deterministic quadrature; its re-run interval is Monte Carlo
    assert a["ci_low"].equals(c["ci_low"]) and a["ci_high"].equals(c["ci_high"])
    assert not a["rerun_ci_low"].equals(c["rerun_ci_low"]) or not a["rerun_ci_high"].equals(c["rerun_ci_high"])
    a, c = (pass_hat_k(df, ci=0.95, method="bca", resamples=999, seed=s).to_frame() for s in (5, 6))
    assert not a["ci_low"].equals(c["ci_low"]) or not a["ci_high"].equals(c["ci_high"])


def test_summary_objects_render_and_are_frozen():
    df = make_trials([{"task_id": t, "reward": float(t % 2), "agent": "<b>x&y</b>_1"} for t in range(10)])
    s = summarize(df, by="agent", ci=0.95, resamples=500)
    tab = s.summary()
    assert isinstance(tab, SummaryTable)
    assert "pass^1" in str(tab)
    h = tab._repr_html_()
    assert "<b>x" not in h and "&lt;b&gt;x&amp;y&lt;/b&gt;" in h
    assert r"x\&y" in tab.to_latex() and r"\_1" in tab.to_latex()
    with pytest.raises(AttributeError):
        s.ci = 0.5  # frozen dataclass
    f = s.to_frame()
    assert f.height == 1 and f["pass_hat_k"].dtype == pl.List(pl.Struct)
    rec = s.records()[0]["pass_hat_k"]["1"]
    assert set(rec) == {"estimate", "ci_low", "ci_high", "se_tasks", "se_rerun", "rerun_ci_low", "rerun_ci_high",
                        "interval_method", "rerun_interval_method", "model_check_p", "model_check_passed",
                        "estimate_infra_fail", "estimate_dropped_fail", "ci_low_dropped_fail", "ci_high_dropped_fail",
                        "estimate_dropped_success", "ci_low_dropped_success", "ci_high_dropped_success", "substantive", "se_run", "se_cluster", "adjusted_for"}
    assert rec["estimate_dropped_fail"] == rec["estimate_dropped_success"] == rec["estimate"]  # nothing dropped
    assert rec["estimate_infra_fail"] == rec["estimate"]  # no infrastructure error: the conventions agree
    assert rec["interval_method"] == rec["rerun_interval_method"] == "blaker (n=1)"  # one trial per task
    assert rec["ci_low"] <= rec["estimate"] <= rec["ci_high"]
    json.dumps(s.records())


# ---------------------------------------------------------------- τ-bench reference figures
@pytest.mark.shared_data
def test_taubench_gpt4o_airline_reference(shared_data):
    df = taubench_frame(shared_data / "taubench/gpt-4o_airline_4trials.json")
    s = summarize(df, ci=0.95, method="bca")
    ph = s.records()[0]["pass_hat_k"]
    assert [ph[str(k)]["estimate"] for k in (1, 2, 3, 4)] == pytest.approx([0.42, 0.41 / 1.5, 0.22, 0.20], abs=1e-12)
    assert ph["2"]["estimate"] == pytest.approx(0.2733333333, abs=1e-9)
    assert ph["1"]["se_tasks"] == pytest.approx(0.0522, abs=5e-4)
    assert ph["4"]["ci_low"] == pytest.approx(0.10, abs=0.02 + 1e-9)
    assert ph["4"]["ci_high"] == pytest.approx(0.34, abs=0.02 + 1e-9)  # discrete: scipy gives 0.32 or 0.34 by seed
    # the default (model): pass^4 of a new draw of tasks [0.090, 0.291], the same 50 tasks re-run [0.107, 0.263]
    m = summarize(df, ci=0.95).records()[0]["pass_hat_k"]["4"]
    assert (m["ci_low"], m["ci_high"]) == pytest.approx((0.090, 0.291), abs=2e-3)
    assert (m["rerun_ci_low"], m["rerun_ci_high"]) == pytest.approx((0.107, 0.263), abs=5e-3)
    assert m["interval_method"] == "model" and m["model_check_passed"] is True
    # the naive per-trial SE (docs/spec.md: ≈ 0.035) is much smaller than the task-clustered one
    r = df["reward"].to_numpy() >= 1 - 1e-6
    assert np.std(r, ddof=1) / math.sqrt(r.size) == pytest.approx(0.035, abs=1e-3)


def test_an_unevaluated_group_is_not_blamed_on_k():
    """Every reward null (NaN): before, the StatsWarning said "k above the trials of some tasks — k=1 leaves out 5 of
    5 task(s)" for tasks with 2 trials each; now it names the real reason, and a group with k above its trials
    still gets the k warning."""
    rows = [{"task_id": t, "trial": i, "reward": None, "run_id": "none"} for t in range(5) for i in range(2)]
    rows += [{"task_id": t, "trial": 0, "reward": 1.0, "run_id": "one"} for t in range(5)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = pass_hat_k(make_trials(rows), by="run_id", k=[1, 2])
    msgs = [str(w.message) for w in caught if issubclass(w.category, StatsWarning)]
    assert any("none" in m and "no reward" in m for m in msgs), msgs
    assert not any("none: k=" in m for m in msgs), msgs
    assert any("one: k=2 leaves out 5 of 5" in m for m in msgs), msgs
    assert r.to_frame().filter(run_id="none")["estimate"].is_null().all()

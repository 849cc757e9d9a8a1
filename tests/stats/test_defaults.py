"""The calibrated statistics are the defaults: seeded calibration cells through the PUBLIC API, the columns that say
what made each interval, and the edge cases (each fails on the code before the model became the default).

* pass^k: ``tauk.stats.pass_hat_k(frame, k=4)`` on 300 simulated benchmarks of T = 10 tasks × n = 8 trials from
  Beta(0.7, 1.5): the default covers E[p^4] (a new draw of tasks) and mean_t p_t^4 (the same tasks re-run) in ≥ 93 %
  of benchmarks; ``method="bca"`` covers E[p^4] in < 90 % and its normal re-run interval mean_t p_t^4 in < 90 %.
* compare(): with one trial per task, d_t ∈ {−1, 0, 1}, so a comparison depends only on the counts (wins, losses):
  the type-I error of the default at T = 20 under Beta(0.3, 0.3) is an exact trinomial sum over every count, each
  count run through ``compare`` once (all of them as the ``by`` groups of one call).
* compare_all(): rank intervals of 5 close agents (0.50 … 0.58, T = 20, one trial).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest
from scipy import special

import tauk
from tauk.cli import main
from tauk.errors import StatsWarning

RNG_SEED = 2024


def trials_frame(c: np.ndarray, n: int | np.ndarray, *, run: str = "r", agent: str = "a", domain: str = "d",
                 group: np.ndarray | None = None) -> pl.DataFrame:  # fmt: skip
    """A trials frame with c[t] successes out of n[t] trials for task t (rows: simulations)."""
    c = np.asarray(c)
    n = np.broadcast_to(np.asarray(n), c.shape)
    task = np.repeat(np.arange(c.size), n)
    trial = np.concatenate([np.arange(m) for m in n]) if c.size else np.array([], dtype=int)
    reward = (trial < np.repeat(c, n)).astype(float)
    data = {"run_id": run, "simulation_id": [f"{run}-{t}-{j}" for t, j in zip(task, trial)],
            "task_id": task.astype(str), "trial": trial, "agent": agent, "domain": domain, "reward": reward,
            "termination_reason": "user_stop"}  # fmt: skip
    if group is not None:
        data["group"] = np.repeat(group, n)
    return pl.DataFrame(data)


def beta_moment(a: float, b: float, k: int) -> float:
    return math.prod((a + j) / (a + b + j) for j in range(k))


# ---------------------------------------------------------------------------------------------- calibration
def test_default_pass_hat_k_is_calibrated_where_bca_is_not():
    R, T, n, k = 300, 10, 8, 4
    rng = np.random.default_rng(RNG_SEED)
    p = rng.beta(0.7, 1.5, (R, T))
    c = rng.binomial(n, p)
    frame = pl.concat([trials_frame(c[r], n, run=f"b{r:03d}") for r in range(R)])
    truth_pop = beta_moment(0.7, 1.5, k)
    truth_fix = (p**k).mean(1)
    new = tauk.stats.pass_hat_k(frame, k=k).to_frame().sort("run_id")
    old = tauk.stats.pass_hat_k(frame, k=k, method="bca", resamples=999).to_frame().sort("run_id")
    assert new["estimate"].equals(old["estimate"])  # point estimates untouched

    def cover(df, lo, hi, truth):
        return float(np.mean((df[lo].to_numpy() <= truth) & (truth <= df[hi].to_numpy())))

    assert cover(new, "ci_low", "ci_high", truth_pop) >= 0.93
    assert cover(old, "ci_low", "ci_high", truth_pop) < 0.90
    assert cover(new, "rerun_ci_low", "rerun_ci_high", truth_fix) >= 0.93
    assert cover(old, "rerun_ci_low", "rerun_ci_high", truth_fix) < 0.90
    assert set(new["interval_method"]) <= {"model", "model+bca (check failed)"}
    assert set(old["interval_method"]) <= {"bca", "clopper-pearson over tasks (unanimous)"}


def _exact_type1(frame_by_count, rejects) -> float:
    total = 0.0
    for row in frame_by_count.iter_rows(named=True):
        total += row["prob"] * rejects(row)
    return total


def test_default_compare_has_its_nominal_type1_error_where_bca_does_not():
    """T = 20, one trial per task, p_A,t = p_B,t ~ Beta(0.3, 0.3): P(d_t = ±1) = E[p(1 − p)] each. Exact."""
    T, a, b = 20, 0.3, 0.3
    q = a * b / ((a + b) * (a + b + 1))
    counts = []
    for w in range(T + 1):
        for l in range(T + 1 - w):  # noqa: E741
            lp = (math.lgamma(T + 1) - math.lgamma(w + 1) - math.lgamma(l + 1) - math.lgamma(T - w - l + 1)
                  + (w + l) * math.log(q) + (T - w - l) * math.log(1 - 2 * q))  # fmt: skip
            if lp > math.log(1e-12):
                counts.append((w, l, math.exp(lp)))
    parts = []
    for i, (w, l, _) in enumerate(counts):  # noqa: E741
        ca = np.r_[np.ones(w), np.zeros(l), np.ones(T - w - l) * (np.arange(T - w - l) % 2)].astype(int)
        cb = np.r_[np.zeros(w), np.ones(l), np.ones(T - w - l) * (np.arange(T - w - l) % 2)].astype(int)
        parts += [trials_frame(ca, 1, run=f"A{i}", agent="A", group=np.full(T, i)),
                  trials_frame(cb, 1, run=f"B{i}", agent="B", group=np.full(T, i))]  # fmt: skip
    frame = pl.concat(parts)
    prob = pl.DataFrame({"group": np.arange(len(counts)), "prob": [c[2] for c in counts]})
    new = tauk.stats.compare(frame, "A", "B", by="group", permutations=999).to_frame().join(prob, on="group")
    old = tauk.stats.compare(frame, "A", "B", by="group", method="bca").to_frame().join(prob, on="group")
    assert sum(c[2] for c in counts) == pytest.approx(1.0, abs=1e-9)
    type1 = _exact_type1(new, lambda r: r["p_value"] < 0.05)
    type1_ci = _exact_type1(new, lambda r: not r["ci_low"] <= 0 <= r["ci_high"])
    type1_bca = _exact_type1(old, lambda r: not r["ci_low"] <= 0 <= r["ci_high"])
    assert 0.035 <= type1 <= 0.065, type1
    assert type1_ci == pytest.approx(type1, abs=1e-12)  # the interval is the test's own
    assert type1_bca > 0.065, type1_bca
    assert set(new["test"]) == {"score"} and set(new["interval_method"]) == {"score"}
    assert set(old["interval_method"]) == {"bca paired task bootstrap"}
    # the exact sign-flip cross-check (the old headline) is conservative here
    assert _exact_type1(new, lambda r: r["p_signflip"] < 0.05) < 0.02
    assert new["p_perm"].equals(new["p_signflip"])  # deprecated alias


def test_default_rank_intervals_cover_close_agents():
    """5 agents at pass^1 0.50 … 0.58 (true ranks 5 … 1), T = 20, one trial; 150 benchmarks as the groups of one
    compare_all call. The bootstrap rank quantiles compare_all reported before covered the best agent's rank ~81 %."""
    means = np.array([0.50, 0.52, 0.54, 0.56, 0.58])
    rng = np.random.default_rng(99)
    x = rng.normal(0, 1.5, 200_000) + rng.normal(0, 0.5, 200_000)
    shift = []
    for m in means:
        lo, hi = -5.0, 5.0
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if special.expit(x + mid).mean() < m else (lo, mid)
        shift.append(0.5 * (lo + hi))
    reps, T = 150, 20
    parts = []
    for r in range(reps):
        p = special.expit(rng.normal(0, 1.5, (T, 1)) + np.array(shift) + rng.normal(0, 0.5, (T, 5)))
        y = rng.binomial(1, p)
        parts += [trials_frame(y[:, j], 1, run=f"{r}-{j}", agent=f"agent{j}", group=np.full(T, r)) for j in range(5)]
    mc = tauk.stats.compare_all(pl.concat(parts), by="group", permutations=199)
    ranks = mc.ranks.with_columns(true=5 - pl.col("agent").str.slice(5).cast(pl.Int64))
    per = ranks.with_columns(ok=(pl.col("rank_low") <= pl.col("true")) & (pl.col("true") <= pl.col("rank_high")),
                             ok_sim=(pl.col("rank_low_simultaneous") <= pl.col("true"))
                             & (pl.col("true") <= pl.col("rank_high_simultaneous")))  # fmt: skip
    by_agent = per.group_by("agent").agg(pl.col("ok").mean()).sort("agent")
    assert by_agent["ok"].min() >= 0.95, by_agent
    assert per.group_by("group").agg(pl.col("ok_sim").all())["ok_sim"].mean() >= 0.95
    assert (per["rank_low_simultaneous"] <= per["rank_low"]).all() and (per["rank_high"] <= per["rank_high_simultaneous"]).all()
    notes = " ".join(mc.summary().notes)
    assert "per agent" in notes and "simultaneous" in notes and "score test" in notes


# ---------------------------------------------------------------------------------------------- columns
def test_columns_records_and_summary_say_what_made_each_interval():
    rng = np.random.default_rng(1)
    good = trials_frame(rng.binomial(8, rng.beta(1, 1, 30)), 8, run="beta")
    bimodal = trials_frame(rng.binomial(8, np.where(rng.random(300) < 0.5, 0.1, 0.9)), 8, run="two-point")
    frame = pl.concat([good, bimodal])
    r = tauk.stats.pass_hat_k(frame, k=[1, 4])
    f = r.to_frame()
    for col in ("interval_method", "rerun_interval_method", "model_check_p", "model_check_passed", "rerun_ci_low"):
        assert col in f.columns
    row = {x["run_id"]: x for x in f.filter(pl.col("k") == 4).iter_rows(named=True)}
    assert row["beta"]["interval_method"] == "model" and row["beta"]["model_check_passed"] is True
    assert row["two-point"]["interval_method"] == "model+bca (check failed)"
    assert row["two-point"]["model_check_passed"] is False and row["two-point"]["model_check_p"] < 0.05
    rec = {x["run_id"]: x["pass_hat_k"]["4"] for x in r.records()}
    assert rec["two-point"]["interval_method"] == "model+bca (check failed)"
    json.dumps(r.records())
    notes = " ".join(r.summary().notes)
    assert "beta-binomial model" in notes and "failed in 1 of 2 group(s)" in notes and "run_id=two-point" in notes
    s = tauk.stats.summarize(frame, k=[1, 4])
    assert "interval_method" in s.pass_hat_k.columns and "failed in 1 of 2" in " ".join(s.summary().notes)
    nested = s.to_frame()["pass_hat_k"][0][0]
    assert {"interval_method", "model_check_p", "rerun_ci_low"} <= set(nested)
    at = tauk.stats.pass_at_k(good, k=[1, 4]).to_frame()
    assert at["interval_method"].to_list() == ["model", "model"] and (at["ci_low"] < at["estimate"]).all()
    bca = tauk.stats.pass_hat_k(good, k=1, method="bca", resamples=499).to_frame().row(0, named=True)
    assert bca["interval_method"] == "bca" and bca["rerun_interval_method"] == "normal (se_rerun)"
    assert bca["model_check_p"] is None


def test_cli_method_model_and_json(capsys):
    assert main(["summary", "data", "--method", "model", "--by", "agent", "--format", "json", "--quiet"]) == 0
    recs = json.loads(capsys.readouterr().out)
    e = recs[0]["pass_hat_k"]["1"]
    assert e["interval_method"] == "model" and e["ci_low"] < e["estimate"] < e["ci_high"]
    assert e["rerun_ci_low"] is not None and isinstance(e["model_check_p"], float)
    assert main(["summary", "data", "--by", "agent", "--quiet"]) == 0  # the default is the model too
    assert "beta-binomial model" in capsys.readouterr().out
    assert main(["compare", "data", "--a", "atlas-small", "--b", "baseline", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "p_value: score test" in out and "95% interval (score)" in out
    assert main(["compare", "data", "--a", "atlas-small", "--b", "baseline", "--test", "signflip", "--format", "json",
                 "--quiet"]) == 0  # fmt: skip
    recs = json.loads(capsys.readouterr().out)
    assert len(recs) == 2  # compared within each setup (airline, retail)
    for rec in recs:
        assert rec["test"] == "signflip" and rec["interval_method"] == "sign-flip inversion"
    assert main(["compare", "data", "--a", "atlas-small", "--b", "baseline", "--test", "signflip", "--format", "json",
                 "--quiet", "--pool-setups"]) == 0  # fmt: skip
    (rec,) = json.loads(capsys.readouterr().out)
    assert rec["p_value"] < 0.001 and rec["p_signflip"] < 0.001  # exact (lattice) vs Monte-Carlo sign flips


# ---------------------------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("method", ["model", "bca"])
def test_edge_cases_give_finite_documented_intervals(method):
    cases = {
        "one task": (np.array([3]), np.array([4])),
        "all 0": (np.zeros(8, int), np.full(8, 4)),
        "all 1": (np.full(8, 4), np.full(8, 4)),
        "one trial": (np.arange(20) % 3 == 0, np.ones(20, int)),
        "unequal n": (np.array([6, 1, 0, 8, 1]), np.array([8, 2, 4, 8, 3])),
    }
    frame = pl.concat([trials_frame(np.asarray(c, int), n, run=name) for name, (c, n) in cases.items()])
    with pytest.warns(StatsWarning, match="k above the trials of some tasks"):
        f = tauk.stats.pass_hat_k(frame, k=[1, 2, 4], method=method, resamples=499).to_frame()
    assert not f.select(pl.col(pl.Float64).is_nan().any()).row(0).count(True)  # null, never NaN
    for r in f.iter_rows(named=True):
        # an interval is present, or null with a reason; never a point where the data are not unanimous on it
        for lo, hi, how in (("ci_low", "ci_high", "interval_method"), ("rerun_ci_low", "rerun_ci_high",
                                                                       "rerun_interval_method")):  # fmt: skip
            assert r[how] is not None, r
            if r[lo] is None:
                assert r[how].startswith("none: "), r
            else:
                assert 0.0 <= r[lo] < r[hi] <= 1.0, r
    get = {(r["run_id"], r["k"]): r for r in f.iter_rows(named=True)}
    assert get[("one trial", 2)]["interval_method"] == "none: no task has k trials"
    assert get[("unequal n", 4)]["n_tasks"] == 3 and get[("unequal n", 4)]["n_tasks_excluded"] == 2
    if method == "model":
        assert get[("one task", 1)]["ci_low"] is not None  # one task: a (wide) interval
        assert get[("one trial", 1)]["interval_method"] == "blaker (n=1)"
        assert get[("all 0", 4)]["interval_method"] == "model" and get[("all 0", 4)]["ci_high"] < 0.5
    else:
        assert get[("one task", 1)]["interval_method"] == "none: fewer than 2 tasks"
        assert get[("all 1", 1)]["interval_method"] == "clopper-pearson over tasks (unanimous)"
        # se_rerun = 0 (every task always or never solved): the model's fixed-task interval, not the point
        assert get[("all 0", 1)]["se_rerun"] == 0.0
        assert get[("all 0", 1)]["rerun_interval_method"] == "model (se_rerun = 0)"
        assert get[("all 0", 1)]["rerun_ci_high"] > 0


def test_taubench_denominators_and_default_ks():
    """τ-bench divides by N = distinct trial indices (a missing trial is a failure); the model fits (N, c)."""
    rows = []
    for t in range(6):
        for j in range(4 if t else 2):  # task 0 lost two trials
            rows.append({"run_id": "tb", "simulation_id": f"{t}-{j}", "task_id": str(t), "trial": j, "agent": "x",
                         "domain": "airline", "format": "taubench", "reward": float((t + j) % 3 == 0)})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = tauk.stats.pass_hat_k(pl.DataFrame(rows)).to_frame()
    assert f["k"].to_list() == [1, 2, 3, 4] and f["n_tasks_excluded"].to_list() == [0, 0, 0, 0]
    c = [sum((t + j) % 3 == 0 for j in range(4 if t else 2)) for t in range(6)]
    assert f["estimate"][0] == pytest.approx(np.mean(c) / 4)  # task 0: 1 success of N = 4, not of its 2 trials
    assert (f["ci_low"] < f["ci_high"]).all() and set(f["interval_method"]) == {"model"}


def test_notes_say_where_the_rerun_interval_rests_on_the_beta_shape():
    """k > n/2 for some task (se_rerun null): only a lower bound of the re-run variance is identified and the notes
    say so; with every n_t ≥ 2k they do not."""
    rng = np.random.default_rng(3)
    frame = trials_frame(rng.binomial(4, rng.beta(2, 2, 20)), 4)
    notes = " ".join(tauk.stats.pass_hat_k(frame, k=[1, 2, 3, 4]).summary().notes)
    assert "rerun_ci at k = 3, 4 (2 (group, k) cell(s)" in notes and "Beta shape" in notes
    notes = " ".join(tauk.stats.pass_hat_k(frame, k=[1, 2]).summary().notes)
    assert "Beta shape" not in notes
    bca = " ".join(tauk.stats.pass_hat_k(frame, k=[4], method="bca", resamples=199).summary().notes)
    assert "Beta shape" not in bca  # the note is the model's: bca reports no re-run interval there

"""Dropped and missing trials (issue 23 item 3), Blaker's interval at n = 1 and the re-run reason (item 5)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import polars as pl
import pytest
from scipy import stats

import tauk
from tauk.conventions import MIN_COVERAGE
from tauk.errors import TaukError

from .frames import make_trials

I = "I"  # an infrastructure error  # noqa: E741
# task 0: one infrastructure error; task 1: trial index 3 missing; task 2: every trial an infrastructure error;
# task 3: complete. 16 planned trials, 10 kept.
OUTCOMES = [[1, 1, I, 0], [1, 0, 1, None], [I, I, I, I], [1, 1, 1, 1]]


def dropped_frame(outcomes=OUTCOMES, fill=None, agent="a") -> pl.DataFrame:
    """The hand-made frame; ``fill`` = 0 / 1 replaces every dropped trial (infrastructure error or missing index)
    by a kept failure / success: the frame the bounds stand for."""
    rows = []
    for t, outs in enumerate(outcomes):
        for i, o in enumerate(outs):
            if (o is None or o == I) and fill is not None:
                o = fill
            if o is None:
                continue
            infra = o == I
            rows.append({"task_id": t, "trial": i, "num_trials": 4, "agent": agent,
                         "reward": 0.0 if infra else float(o),
                         "termination_reason": "infrastructure_error" if infra else "user_stop"})  # fmt: skip
    return make_trials(rows)


def _quiet_summary(frame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tauk.stats.summarize(frame, by="agent", **kw)


def test_coverage_and_bounds_by_hand():
    s = _quiet_summary(dropped_frame(), ci=None)
    g = s.groups.row(0, named=True)
    assert (g["n_planned"], g["n_dropped"]) == (16, 6)
    assert g["trial_coverage"] == pytest.approx(10 / 16)
    f = {r["k"]: r for r in s.pass_hat_k.iter_rows(named=True)}
    # dropped = failures: per-task successes of 4 planned trials (2, 2, 0, 4); = successes: (3, 3, 4, 4)
    assert f[1]["estimate_dropped_fail"] == pytest.approx((2 + 2 + 0 + 4) / 16)
    assert f[1]["estimate_dropped_success"] == pytest.approx((3 + 3 + 4 + 4) / 16)
    assert f[2]["estimate_dropped_fail"] == pytest.approx((1 / 6 + 1 / 6 + 0 + 1) / 4)
    assert f[2]["estimate_dropped_success"] == pytest.approx((3 / 6 + 3 / 6 + 1 + 1) / 4)
    for r in f.values():  # the kept-trial estimate lies between its bounds
        assert r["estimate_dropped_fail"] <= r["estimate"] <= r["estimate_dropped_success"]


@pytest.mark.parametrize("side,fill", [("fail", 0), ("success", 1)])
def test_bounds_and_intervals_equal_the_filled_in_frame(side, fill):
    """Each bound, with its interval, is the summary of the frame whose dropped trials all failed / succeeded."""
    s = _quiet_summary(dropped_frame(), resamples=999)
    filled = _quiet_summary(dropped_frame(fill=fill), resamples=999, k=[1, 2, 3])
    a = s.pass_hat_k.sort("k")
    b = filled.pass_hat_k.sort("k")
    assert a["k"].to_list() == b["k"].to_list() == [1, 2, 3]
    for mine, theirs in (("estimate", "estimate"), ("ci_low", "ci_low"), ("ci_high", "ci_high")):
        np.testing.assert_allclose(a[f"{mine}_dropped_{side}"].to_numpy(), b[theirs].to_numpy(), rtol=0, atol=1e-12)
    assert filled.groups["trial_coverage"].to_list() == [1.0]


def test_counts_give_the_same_bounds():
    frame = dropped_frame()
    counts = tauk.stats.task_counts(frame, by="agent")
    a = _quiet_summary(frame, ci=None)
    b = _quiet_summary(counts, ci=None)
    cols = ["k", "estimate_dropped_fail", "estimate_dropped_success"]
    assert a.pass_hat_k.select(cols).equals(b.pass_hat_k.select(cols))
    assert a.groups.select("n_planned", "trial_coverage").equals(b.groups.select("n_planned", "trial_coverage"))


def test_min_coverage_flags_and_does_not_rank():
    frame = pl.concat([dropped_frame(agent="a"), dropped_frame([[1, 0, 1, 1]] * 4, agent="b")])
    s = _quiet_summary(frame, ci=None)
    assert s.min_coverage == MIN_COVERAGE == 0.8
    g = {r["agent"]: r for r in s.groups.iter_rows(named=True)}
    assert g["a"]["low_coverage"] is True and g["a"]["rankable"] is False
    assert g["b"]["low_coverage"] is False and g["b"]["rankable"] is True and g["b"]["trial_coverage"] == 1.0
    rec = {r["agent"]: r for r in s.records()}
    assert rec["a"]["rankable"] is False and "estimate_dropped_fail" in rec["a"]["pass_hat_k"]["1"]
    text = str(s)
    assert "kept/planned" in text and "0.62 ⚠ low" in text and "not ranked" in text
    assert "pass^1 if dropped=fail" in text
    loose = _quiet_summary(frame, ci=None, min_coverage=0.5)
    assert loose.groups["low_coverage"].to_list() == [False, False]
    with pytest.raises(TaukError, match="min_coverage"):
        tauk.stats.summarize(frame, by="agent", ci=None, min_coverage=1.5)


def test_nothing_dropped_changes_nothing_shown():
    s = tauk.stats.summarize(tauk.load("data"), by=("agent", "domain"), ci=None)
    assert s.groups["trial_coverage"].to_list() == [1.0] * 6 and not s.groups["low_coverage"].any()
    f = s.pass_hat_k
    assert f["estimate_dropped_fail"].equals(f["estimate"].alias("estimate_dropped_fail"))
    assert "kept/planned" not in str(s)


def test_every_trial_dropped_is_documented_never_nan():
    frame = dropped_frame([[I, I, I, I], [I, I, I, None]])
    s = _quiet_summary(frame)
    f = s.pass_hat_k
    assert f["k"].to_list() == [1, 2, 3, 4]  # k up to num_trials: the missing index is planned too
    assert f["estimate"].is_null().all() and not f.select(pl.col(pl.Float64).is_nan().any()).row(0).count(True)
    assert all(m.startswith("none: every trial of the group was dropped") for m in f["interval_method"])
    assert f["estimate_dropped_fail"].to_list() == [0.0] * 4 and f["estimate_dropped_success"].to_list() == [1.0] * 4
    assert f["ci_high_dropped_fail"].is_not_null().all() and f["ci_low_dropped_success"].is_not_null().all()
    assert s.groups["trial_coverage"].to_list() == [0.0]
    assert "every trial was dropped in 1 group(s)" in str(s)


def test_cli_min_coverage(capsys, tmp_path):
    from tauk.cli import main

    assert main(["summary", "data", "--by", "agent,domain", "--format", "json", "--quiet", "--min-coverage",
                 "0.9", "--ci", "0"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert {r["trial_coverage"] for r in out} == {1.0} and {r["rankable"] for r in out} == {True}
    assert "estimate_dropped_success" in out[0]["pass_hat_k"]["1"]


# ---------------------------------------------------------------------------------------------- n = 1: Blaker
def _brute_blaker(x: int, N: int, level: float = 0.95, m: int = 20_001) -> tuple[float, float]:
    """Blaker's interval by its definition on a p grid: the hull of {p : P_p(γ(X) ≤ γ(x)) > α}."""
    ps = np.linspace(0.0, 1.0, m)
    y = np.arange(N + 1)
    cdf = stats.binom.cdf(y[None, :], N, ps[:, None])
    sf = stats.binom.sf(y[None, :] - 1, N, ps[:, None])
    g = np.minimum(cdf, sf)
    acc = (stats.binom.pmf(y[None, :], N, ps[:, None]) * (g <= g[:, [x]] * (1 + 1e-9))).sum(1)
    ok = ps[acc > 1 - level]
    return float(ok.min()), float(ok.max())


@pytest.mark.parametrize("x,N", [(0, 7), (3, 10), (7, 20), (12, 12), (9, 31)])
def test_blaker_at_n1_equals_brute_force(x, N):
    rows = [{"task_id": t, "reward": float(t < x)} for t in range(N)]
    f = tauk.stats.pass_hat_k(make_trials(rows), k=1).to_frame().row(0, named=True)
    assert f["interval_method"] == f["rerun_interval_method"] == "blaker (n=1)"
    lo, hi = _brute_blaker(x, N)
    assert f["ci_low"] == pytest.approx(lo, abs=1e-4) and f["ci_high"] == pytest.approx(hi, abs=1e-4)
    assert f["rerun_ci_low"] == f["ci_low"] and f["rerun_ci_high"] == f["ci_high"]
    cp = stats.binomtest(x, N).proportion_ci(0.95, method="exact")
    assert cp.low - 1e-12 <= f["ci_low"] and f["ci_high"] <= cp.high + 1e-12
    if 0 < x < N:
        assert f["ci_high"] - f["ci_low"] < cp.high - cp.low


def test_blaker_is_exact_at_every_mu():
    """Exact binomial sums: coverage ≥ 95 % on a μ grid (with the interval ends) at T = 15."""
    from tauk.stats.intervals.blaker import blaker

    T = 15
    lo, hi = blaker(np.arange(T + 1.0), np.full(T + 1, float(T)), 0.95)
    ends = np.concatenate([lo, hi])
    mus = np.clip(np.concatenate([np.linspace(0, 1, 2001), ends - 1e-10, ends + 1e-10]), 0, 1)
    pmf = stats.binom.pmf(np.arange(T + 1)[None, :], T, mus[:, None])
    cov = (pmf * ((lo <= mus[:, None]) & (mus[:, None] <= hi))).sum(1)
    assert cov.min() >= 0.95 - 1e-9


def test_rerun_reason_where_n_below_2k():
    rng = np.random.default_rng(3)
    rows = [{"task_id": t, "trial": i, "reward": float(rng.random() < 0.6)} for t in range(12) for i in range(4)]
    f = {r["k"]: r for r in tauk.stats.pass_hat_k(make_trials(rows), k=[1, 2, 3]).to_frame().iter_rows(named=True)}
    assert f[1]["rerun_interval_method"] == "model" and f[2]["rerun_interval_method"] == "model"
    assert f[3]["rerun_interval_method"].startswith("model (n<2k: ")


# ------------------------------------------------------------------- one vectorised fit for a group and its bounds
def _random_dropped(T=20, n=4, seed=3, share=0.15, agents=("a",)) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for agent in agents:
        p = rng.beta(0.8, 0.6, T)
        for t in range(T):
            for i in range(n):
                infra = rng.random() < share
                rows.append({"task_id": t, "trial": i, "num_trials": n, "agent": agent,
                             "reward": 0.0 if infra else float(rng.random() < p[t]),
                             "termination_reason": "infrastructure_error" if infra else "user_stop"})  # fmt: skip
    return make_trials(rows)


def test_dropped_trials_cost_no_second_posterior_fit(monkeypatch):
    """Speed (issue 23): a group with dropped trials fits its own posterior and its two bounds' in one vectorised
    call (before: one more fit per group); a summary without drops fits all its groups in one (issue 27)."""
    import tauk.stats.intervals.model as model_mod

    calls = []
    real = model_mod.posterior_points

    def counting(n, *a, **kw):
        calls.append(np.shape(n)[0])
        return real(n, *a, **kw)

    monkeypatch.setattr(model_mod, "posterior_points", counting)
    frame = _random_dropped(agents=("a", "b"))
    _quiet_summary(frame.with_columns(pl.lit("user_stop").alias("termination_reason")))
    plain = list(calls)
    calls.clear()
    _quiet_summary(frame)
    assert plain == [2]  # both groups in one fit
    assert calls == [3, 3]  # per group: the kept trials, dropped = fail, dropped = success


@pytest.mark.parametrize("metric", ["pass^k", "pass@k"])
def test_model_with_bounds_equals_the_separate_fits(metric):
    from tauk.stats.estimate import NO_INTERVAL
    from tauk.stats.intervals.group import group_model
    from tauk.stats.missing import bound_rows, model_with_bounds, planned_tasks
    from tauk.stats.options import IntervalOptions
    from tauk.stats.tasks import prepare_trials, task_groups

    df = prepare_trials(_random_dropped(T=15, n=5, seed=8, share=0.2), "drop")
    g = task_groups(df, ("agent",))[0]
    p = planned_tasks(df, ("agent",))[g.key]
    assert p.n_dropped > 0
    opts = IntervalOptions(ci=0.95, method="model")
    ks = [1, 2, 3]
    main, bounds = model_with_bounds(g, ks, p, opts, metric)
    assert bounds == bound_rows(p.planned, p.kept, p.c, ks, opts, metric, p.num_trials)  # bit-equal
    alone = group_model(g, ks, metric, opts, "both")
    for est in ("population", "fixed"):
        for f in ("lo", "hi", "posterior_mean"):
            np.testing.assert_allclose(getattr(main[est], f), getattr(alone[est], f), rtol=0, atol=1e-12)
        assert main[est].check_p == alone[est].check_p and main[est].source == alone[est].source
    assert bound_rows(p.planned, p.kept, p.c, ks, NO_INTERVAL)[0]["ci_low_dropped_fail"] is None


def test_summary_with_drops_equals_its_parts():
    """The stacked fit changes nothing a summary reports beyond rounding: the group's intervals are pass_hat_k's,
    each bound is the summary of the frame with the dropped trials filled in."""
    frame = _random_dropped(T=12, n=4, seed=5, share=0.2)
    s = _quiet_summary(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = tauk.stats.pass_hat_k(frame, by="agent")
    a, b = s.pass_hat_k.sort("k"), ref.frame.sort("k")
    for col in ("ci_low", "ci_high", "rerun_ci_low", "rerun_ci_high"):
        np.testing.assert_allclose(a[col].to_numpy(), b[col].to_numpy(), rtol=0, atol=1e-12)
    assert a["model_check_p"].to_list() == b["model_check_p"].to_list()


def test_other_infra_estimate_without_re_preparing():
    """estimate_infra_fail (infra="drop") is the estimate of the same trials under infra="fail", and back."""
    frame = _random_dropped(T=10, n=4, seed=2, share=0.25)
    drop = _quiet_summary(frame, ci=None, k=[1, 2, 3]).pass_hat_k.sort("k")
    fail = _quiet_summary(frame, ci=None, infra="fail", k=[1, 2, 3]).pass_hat_k.sort("k")
    assert drop["estimate_infra_fail"].to_list() == fail["estimate"].to_list()
    assert fail["estimate_infra_drop"].to_list() == drop["estimate"].to_list()


def test_bounds_hold_a_unanimous_estimate():
    """Every kept trial failed, one dropped: the dropped = fail bound is 0, and its model interval now reaches it
    (before: 0.0 with [0.0009, 0.125], as the kept-trial interval had been)."""
    rows = [{"task_id": t, "trial": i, "reward": 0.0,
             "termination_reason": "infrastructure_error" if (t, i) == (0, 0) else "user_stop"}
            for t in range(20) for i in range(2)]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cell = tauk.stats.summarize(make_trials(rows), k=[1]).records()[0]["pass_hat_k"]["1"]
    for side in ("", "_dropped_fail", "_dropped_success"):
        assert cell[f"ci_low{side}"] <= cell[f"estimate{side}"] <= cell[f"ci_high{side}"], side

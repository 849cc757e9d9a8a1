"""Power analysis (tauk.stats.power): tasks needed, the between/within split of a pilot, plans over the pilot's uncertainty, edge cases."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from stats.frames import make_trials, two_agents
from tauk.errors import TaukError
from tauk.stats import (
    compare,
    power_analysis,
    tasks_needed,
)


# ---------------------------------------------------------------------------------------------- power
def test_tasks_needed_formula():
    """The smallest T whose paired t test (noncentral t, T − 1 df) has the power; the normal formula (the old
    answer, 197) is 2 tasks short here."""
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert math.ceil(z**2 * 0.25 / 0.01) == 197
    T = tasks_needed(0.1, 0.25)
    assert T == 199 == power_analysis(delta=0.1, var_d=0.25).tasks_needed
    q = stats.t.ppf(0.975, np.array([T - 2, T - 1]))
    ncp = 0.1 * np.sqrt(np.array([T - 1, T]) / 0.25)
    pw = stats.nct.sf(q, q * 0 + np.array([T - 2, T - 1]), ncp) + stats.nct.cdf(-q, np.array([T - 2, T - 1]), ncp)
    assert pw[0] < 0.8 <= pw[1]


def test_power_split_recovers_simulated_components():
    # Simulate a large pilot with known σ²_between and σ²_within and check the estimates
    rng = np.random.default_rng(11)
    T, n = 4000, 4
    pa = rng.beta(2, 2, T)
    pb = np.clip(pa - 0.1 + rng.normal(0, 0.15, T), 0, 1)
    ca, cb = rng.binomial(n, pa), rng.binomial(n, pb)
    rows = []
    for agent, cc in (("A", ca), ("B", cb)):
        for t in range(T):
            rows += [{"agent": agent, "task_id": t, "trial": i, "reward": float(i < cc[t])} for i in range(n)]
    res = power_analysis(make_trials(rows), delta=0.05, trials_per_task=[1, 4, 16])
    true_between = np.var(pa - pb)
    true_within = np.mean(pa * (1 - pa) + pb * (1 - pb))
    assert res.var_between == pytest.approx(true_between, rel=0.1)
    assert res.var_within == pytest.approx(true_within, rel=0.05)
    assert res.icc == pytest.approx(true_between / (true_between + true_within), abs=0.03)
    needed = res.frame["tasks_needed"].to_list()
    assert needed[0] > needed[1] > needed[2]
    # at the pilot's own n the model variance matches the observed Var(d̄_t)
    v4 = res.frame.filter(pl.col("trials_per_task") == 4)["var_d"][0]
    assert v4 == pytest.approx(np.var(ca / n - cb / n, ddof=1), rel=1e-9)
    # the headline figure is the table's row at the pilot's own trials per task
    assert res.tasks_needed == res.frame.filter(pl.col("trials_per_task") == 4)["tasks_needed"][0]
    # a Comparison gives the same split
    c = compare(make_trials(rows), "A", "B", resamples=10)
    assert power_analysis(c, delta=0.05).icc == pytest.approx(res.icc, rel=1e-12)


def test_power_headline_agrees_with_table_when_between_clips_to_zero():
    rng = np.random.default_rng(3)
    p = rng.beta(2, 2, 40)  # the same task difficulty for both agents: no between-task difference
    rows = []
    for agent in ("A", "B"):
        c = rng.binomial(4, p)
        for t in range(40):
            rows += [{"agent": agent, "task_id": t, "trial": i, "reward": float(i < c[t])} for i in range(4)]
    res = power_analysis(make_trials(rows), delta=0.1, trials_per_task=[1, 4])
    assert res.var_between == 0.0  # the observed Var(d̄_t) is below the pilot's trial noise: reported clipped
    row4 = res.frame.filter(pl.col("trials_per_task") == 4).row(0, named=True)
    assert res.var_d == pytest.approx(row4["var_d"]) and res.tasks_needed == row4["tasks_needed"]
    # ... but the plan at the pilot's own trials per task uses the observed Var(d̂_t), not the clipped split
    # (clipping over-planned: 83.6 % delivered instead of 80 % at n = 4, measured before this change)
    d = {a: np.zeros(40) for a in ("A", "B")}
    for r in rows:
        d[r["agent"]][r["task_id"]] += r["reward"] / 4
    observed = float(np.var(d["A"] - d["B"], ddof=1))
    assert res.var_d == pytest.approx(observed, rel=1e-9) and "< 0, reported as 0" in res.note
    assert res.var_d < 0.0 + res.var_within / 4  # what the clipped split would have planned with
    # more trials never plan for more variance
    assert res.frame["var_d"].to_list() == sorted(res.frame["var_d"].to_list(), reverse=True)


def test_power_plans_for_the_pilots_uncertainty():
    from tauk.stats.power import VarianceModel, expected_power_t, pilot_df, power_t

    # the expected power lies below the plug-in power (concavity) and tends to it as the estimate firms up
    assert expected_power_t(63, 0.1, 0.077, 20) < expected_power_t(63, 0.1, 0.077, 200) < power_t(63, 0.1, 0.077)
    assert expected_power_t(63, 0.1, 0.077, 1e7) == pytest.approx(power_t(63, 0.1, 0.077), abs=1e-4)
    # a plan for an estimated variance needs more tasks, the fewer the degrees of freedom
    assert tasks_needed(0.1, 0.077) <= tasks_needed(0.1, 0.077, df=200) < tasks_needed(0.1, 0.077, df=20)
    T = tasks_needed(0.1, 0.077, df=20)
    assert expected_power_t(T, 0.1, 0.077, 20) >= 0.8 > expected_power_t(T - 1, 0.1, 0.077, 20)
    # the jackknife degrees of freedom of a sample variance of normal data are about T − 1 ...
    x = np.random.default_rng(5).standard_normal(2000)

    def fit(a):
        return VarianceModel(float(np.var(a[0], ddof=1)), 0.0, "test", True, "")

    (df,) = pilot_df(fit, [x], [1])
    assert 1600 < df < 2400
    # ... and far fewer for heavy-tailed differences (few tasks where the agents disagree)
    y = np.zeros(2000)
    y[:40] = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    (df_heavy,) = pilot_df(fit, [y], [1])
    assert df_heavy < 100
    # the public plan uses it by default, and plugs the estimate in on request
    rows = two_agents([1, 0, 1, 1, 0, 1, 0, 1], [0, 0, 1, 0, 0, 1, 1, 1])
    res = power_analysis(make_trials(rows), delta=0.1)
    plug = power_analysis(make_trials(rows), delta=0.1, pilot_uncertainty=False)
    assert res.df is not None and plug.df is None and res.var_d == plug.var_d
    assert res.tasks_needed == tasks_needed(0.1, res.var_d, df=res.df) > plug.tasks_needed == tasks_needed(0.1, res.var_d)


def test_power_one_trial_pilot_has_no_split_and_input_checks():
    rows = two_agents([1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 1])
    res = power_analysis(make_trials(rows), delta=0.1)
    # one trial per task: Var(d_t) at 1 trial is identified, its split is not — more trials assumed not to help
    assert res.icc is None and not res.identified and "within = 0 assumed" in res.note
    assert res.var_within == 0.0 and res.frame["var_d"].n_unique() == 1 and res.frame.height == 6
    assert res.tasks_needed == tasks_needed(0.1, res.var_d, df=res.df) > tasks_needed(0.1, res.var_d)
    assert res.var_d == pytest.approx(np.var(np.array([1, 0, 1, 1, 0, 1]) - np.array([0, 0, 1, 0, 0, 1]), ddof=1))
    stated = power_analysis(make_trials(rows), delta=0.1, icc=0.4, trials_per_task=[1, 4])
    assert stated.var_within > 0 and stated.frame["tasks_needed"][1] < stated.frame["tasks_needed"][0]
    with pytest.raises(TaukError):
        power_analysis(delta=0.1)
    with pytest.raises(TaukError):
        power_analysis(delta=0.0, var_d=0.1)


def test_power_plans_edge_cases():
    from tauk.stats.power import expected_power_t, pilot_df, power_t, variance_from_paired_pilot

    # large noncentrality: scipy's lower-tail cdf returns NaN there; the power stays a number and the search exact
    assert power_t(63, 0.1, 0.001) == pytest.approx(1.0)  # noncentrality 25: the old formula gave NaN
    assert all(np.isfinite(expected_power_t(T, 0.1, 0.077, 2)) for T in (63, 118, 155, 1000))
    T = tasks_needed(0.1, 0.077, df=2)
    assert expected_power_t(T, 0.1, 0.077, 2) >= 0.8 > expected_power_t(T - 1, 0.1, 0.077, 2)
    assert math.isnan(expected_power_t(1, 0.1, 0.077, 0.01))  # T < 2: NaN before anything is computed
    with pytest.raises(TaukError):
        expected_power_t(10, 0.1, 0.077, 0.0)
    with pytest.raises(TaukError):
        expected_power_t(10, 0.1, -1.0, 5)
    # two-task pilots: no jackknife (the estimate is plugged in), no error
    two = power_analysis(make_trials(two_agents([1, 0], [0, 0])), delta=0.1)
    assert two.df is None and two.tasks_needed == tasks_needed(0.1, two.var_d)
    # every task the same difference: the trial noise is planned with, not a variance of 0 (2 tasks)
    n = np.full(10, 4)
    c = np.array([4, 3, 0, 2, 4, 1, 2, 3, 1, 0])
    same = variance_from_paired_pilot(n, c, n, c)
    assert same.within > 0 and same.var_d(4) == pytest.approx(same.within / 4)
    # unequal trials per task: the task run once takes the others' mean trial variance, so the pilot keeps its
    # between/within split (before: one such task made it a '1 trial/task' pilot with σ²_within = 0, and more
    # trials per task planned no fewer tasks); the df stay finite and positive
    n_a = np.array([4] * 9 + [1])
    c_a = np.array([4, 3, 0, 2, 4, 1, 2, 3, 1, 0])
    c_b = np.array([3, 3, 0, 1, 2, 0, 2, 4, 1, 1])
    dfs = pilot_df(lambda a: variance_from_paired_pilot(*a), [n_a, c_a, n_a, c_b], [1, 2, 4])
    assert all(d is not None and 0 < d < float("inf") for d in dfs)
    m = variance_from_paired_pilot(n_a, c_a, n_a, c_b)
    wa = [c * (4 - c) / 12 for c in c_a[:9]]
    wb = [c * (4 - c) / 12 for c in c_b[:9]]
    assert m.within == pytest.approx(np.mean(wa + [np.mean(wa)]) + np.mean(wb + [np.mean(wb)]))
    assert m.source == "paired pilot" and m.identified and "one trial: 1 of 10 tasks" in m.note
    pw = power_analysis(make_trials(_unequal_rows(n_a, c_a, c_b)), delta=0.1, trials_per_task=[1, 2, 4])
    assert pw.frame["power"].is_finite().all() and pw.source == "paired pilot" and pw.var_within > 0
    assert pw.frame["var_d"].to_list() == sorted(pw.frame["var_d"].to_list(), reverse=True)
    assert pw.frame["tasks_needed"][0] > pw.frame["tasks_needed"][2]


def test_a_pilot_where_nothing_varies_gives_no_plan():
    """Every trial of every task passed for both agents: Var(d_t) = 0 planned 2 tasks at power 1.0 before, with only
    'Var(d_t) = 0.0' in the notes. Now no plan, a StatsWarning and a note saying what to give instead."""
    from tauk.errors import StatsWarning

    for rows in (two_agents([1] * 4, [1] * 4, trials=2), two_agents([0] * 5, [0] * 5, trials=3)):
        with pytest.warns(StatsWarning, match="nothing in the pilot varies"):
            pw = power_analysis(make_trials(rows), delta=0.1, a="A", b="B")
        assert pw.tasks_needed is None and pw.var_d is None and not pw.identified
        assert pw.frame["tasks_needed"].is_null().all() and pw.frame["power"].is_null().all()
        assert any("give var_d" in n for n in pw.summary().notes)
        assert not any("None" in n for n in pw.summary().notes), pw.summary().notes  # no Python None printed
    with pytest.warns(StatsWarning, match="nothing in the pilot varies"):  # one agent, every trial passed
        one = power_analysis(make_trials(two_agents([1] * 4, [1] * 4, trials=2)).filter(pl.col("agent") == "A"),
                             delta=0.1)  # fmt: skip
    assert one.tasks_needed is None
    # a pilot whose outcomes vary is planned as before
    assert power_analysis(make_trials(two_agents([1, 0, 1, 1], [1, 1, 0, 1], trials=2)), delta=0.1).tasks_needed > 2


def _unequal_rows(n, c_a, c_b):
    rows = []
    for agent, c in (("A", c_a), ("B", c_b)):
        for t in range(n.size):
            rows += [{"agent": agent, "task_id": t, "trial": i, "reward": float(i < c[t])} for i in range(n[t])]
    return rows


def test_a_pilot_pairs_tasks_within_a_setup_as_compare_does():
    """Two agents each in its own setup share task ids, not tasks (τ-bench's airline task 0 is not τ²-bench's):
    compare() pairs none of them; the pilot paired all of them (50 'paired' tasks, Var(d_t) 0.368, 298 tasks
    planned for τ-bench gpt-4o vs τ²-bench whissle airline). A pilot whose two agents share no setup is refused by
    name; where they share one, its tasks are paired as before."""
    from tauk.errors import TaukError
    from tauk.stats import compare

    apart = make_trials(two_agents([1, 0, 1, 1, 0, 1], [1, 1, 0, 0, 0, 1], trials=2)).with_columns(
        setup=pl.when(pl.col("agent") == "A").then(pl.lit("S1")).otherwise(pl.lit("S2")))
    assert set(compare(apart, "A", "B", ci=None).to_frame()["n_tasks"].to_list()) == {0}  # the premise
    with pytest.raises(TaukError, match="setup"):
        power_analysis(apart, delta=0.1, a="A", b="B")
    same = apart.with_columns(setup=pl.lit("S1"))
    assert power_analysis(same, delta=0.1, a="A", b="B").pilot_tasks == 6
    # one setup shared, one not: only the shared setup's tasks are paired
    extra = apart.filter(pl.col("agent") == "A").with_columns(setup=pl.lit("S2"), run_id=pl.lit("run-A2"))
    assert power_analysis(pl.concat([apart, extra]), delta=0.1, a="A", b="B").pilot_tasks == 6


def test_a_one_agent_pilot_keeps_its_setups_apart():
    """One agent on the same task ids in two setups: trials of different setups are not repeated trials of one
    task. Before, the pilot merged them (6 tasks × 4 'trials', each task 2 passes in one setup and 2 fails in the
    other); now 12 tasks of 2 trials, as summarize() would group them."""
    a = make_trials(two_agents([1, 0, 1, 1, 0, 1], [], trials=2)).with_columns(setup=pl.lit("S1"))
    b = make_trials(two_agents([0, 1, 0, 0, 1, 0], [], trials=2)).with_columns(setup=pl.lit("S2"),
                                                                              run_id=pl.lit("run-A2"))  # fmt: skip
    pw = power_analysis(pl.concat([a, b]), delta=0.1)
    assert pw.pilot_tasks == 12 and pw.pilot_trials_per_task == 2
    assert power_analysis(a, delta=0.1).pilot_tasks == 6  # one setup: as before


def test_options_a_plan_would_ignore_are_refused_or_named():
    """delta beyond a difference of rates, icc / disagreement where they are not used: an error or a StatsWarning,
    never a plan that silently dropped them."""
    from tauk.errors import StatsWarning

    with pytest.raises(TaukError, match=r"\[−1, 1\]"):
        tasks_needed(2.0, 0.2)
    with pytest.raises(TaukError, match="ignored"):
        power_analysis(delta=0.1, var_d=0.2, icc=0.3)
    with pytest.raises(TaukError, match="ignored"):
        power_analysis(delta=0.1, var_d=0.2, disagreement=0.05)
    with pytest.raises(TaukError, match="disagreement"):
        power_analysis(delta=0.1, var_d=0.2, disagreement=-1.0)
    rows = two_agents([[1, 0], [0, 0], [1, 1], [1, 0], [0, 1], [1, 1]], [[0, 0], [0, 1], [1, 1], [0, 0], [0, 0], [1, 0]])
    paired = make_trials(rows)
    with pytest.raises(TaukError, match="paired pilot measures"):
        power_analysis(paired, delta=0.1, disagreement=0.05)
    with pytest.warns(StatsWarning, match="icc = 0.3 not used") as caught:
        power_analysis(paired, delta=0.1, icc=0.3)
    assert sum("icc" in str(w.message) for w in caught) == 1  # once, not once per jackknife refit

"""Run-to-run consistency (tauk.stats.consistency, tauk.stats.noise): hand-computed figures, calibration by simulation, CLI, bad input.

* The τ-bench gpt-4o airline file (50 tasks × 4 trials): per-trial pass^1, flip rate, ICC(1) and the single-run SD
  recomputed here from the raw JSON with the json module and exact fractions.
* Calibration (vectorised; the library's own kernels): for synthetic benchmarks with known p_t, at T ∈ {20, 50} and
  n ∈ {2, 4, 8}: the mean of ``sd_single_run`` is within ±10 % of the empirical SD of pass^1 over 2,000 simulated
  single re-runs of the same tasks, and the noise floor ``mdd_single_runs`` declares 5 % ± 1.5 of identical-setup
  pairs of single runs different. ``benchmarks/calibrate_consistency.py`` prints the full table (more families,
  m-trial runs, the normal and conservative alternatives).
"""

from __future__ import annotations

import doctest
import json
import math
import os
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

import tauk
from conftest import ROOT, SAMPLE_DATA
from tauk.cli import main
from tauk.stats import consistency, pass_hat_k
from tauk.stats.noise import (
    MIN_FLAKY,
    beta_binomial_rho,
    difference_null,
    icc_oneway,
    mdd_threshold,
    noise_floor,
    rerun_variance,
)

TAUBENCH = "taubench/gpt-4o_airline_4trials.json"


@pytest.fixture(scope="module")
def sample():
    return tauk.load(SAMPLE_DATA)


@pytest.fixture(scope="module")
def sample_result(sample):
    return consistency(sample)


# ------------------------------------------------------------------------------------------ the τ-bench file by hand
def _success(r) -> bool:
    return r is not None and 1 - 1e-6 <= float(r) <= 1 + 1e-6


def test_taubench_gpt4o_by_hand(shared_data):
    raw = json.loads((shared_data / TAUBENCH).read_text())
    outcome: dict[str, dict[int, bool]] = {}
    for sim in raw:
        outcome.setdefault(str(sim["task_id"]), {})[int(sim["trial"])] = _success(sim["reward"])
    tasks = sorted(outcome)
    trials = sorted({j for d in outcome.values() for j in d})
    assert len(tasks) == 50 and trials == [0, 1, 2, 3]
    per_trial = [sum(outcome[t][j] for t in tasks) / len(tasks) for j in trials]
    n = {t: len(outcome[t]) for t in tasks}
    c = {t: sum(outcome[t].values()) for t in tasks}
    flip = sum(0 < c[t] < n[t] for t in tasks) / len(tasks)
    # ICC(1), one-way ANOVA, exact fractions
    T, N = len(tasks), sum(n.values())
    ybar = Fraction(sum(c.values()), N)
    msb = sum(n[t] * (Fraction(c[t], n[t]) - ybar) ** 2 for t in tasks) / (T - 1)
    msw = sum(Fraction(c[t] * (n[t] - c[t]), n[t]) for t in tasks) / (N - T)
    n0 = (N - Fraction(sum(v * v for v in n.values()), N)) / (T - 1)
    icc = (msb - msw) / (msb + (n0 - 1) * msw)
    var1 = sum(Fraction(c[t] * (n[t] - c[t]), n[t] * (n[t] - 1)) for t in tasks)  # Σ p(1−p), unbiased

    res = tauk.load(shared_data / TAUBENCH)
    r = consistency(res).records()
    assert len(r) == 1
    r = r[0]
    assert (r["agent"], r["domain"], r["n_tasks"], r["n_trials_min"], r["n_trials_max"]) == ("gpt-4o", "airline", 50, 4, 4)
    assert r["pass1_per_trial"] == per_trial == [0.42, 0.44, 0.4, 0.42]
    assert r["pass1"] == 0.42 and r["pass1_spread"] == pytest.approx(max(per_trial) - min(per_trial), abs=0)
    assert r["flip_rate"] == flip == 0.52 and r["n_flaky"] == 26
    assert r["icc_n0"] == float(n0) == 4.0
    assert r["icc"] == pytest.approx(float(icc), rel=1e-13, abs=1e-15)
    assert round(r["icc"], 4) == 0.4046
    assert r["sd_single_run"] == pytest.approx(math.sqrt(var1) / T, rel=1e-13)
    # the fixed-task SE of this file's own pass^1 is pass_hat_k's se_rerun at k = 1
    se = pass_hat_k(res, by=("agent", "domain"), k=1, ci=None).frame["se_rerun"][0]
    assert r["se_rerun"] == pytest.approx(se, rel=1e-13)
    assert r["se_rerun"] == pytest.approx(r["sd_single_run"] / 2, rel=1e-13)  # n = 4 everywhere
    # the noise floor is a multiple of 1/T and its null really puts P ≤ α + ½·P(= s) beyond it
    assert r["mdd_single_runs"] * 50 == pytest.approx(round(r["mdd_single_runs"] * 50), abs=1e-9)
    assert 0.0 < r["mdd_single_runs_size"] < 0.1
    assert 0.3 < r["bb_rho"] < 0.5 and r["bb_mean"] == pytest.approx(0.42, abs=0.03)


# ------------------------------------------------------------------------------------------ kernels
def test_difference_null_matches_convolution():
    v = np.array([0.1, 0.25, 0.5, 0.0, 1 / 3])
    for m in (1, 2, 3):
        d = np.array([1.0])
        for q in v:
            step = np.array([q, 1 - 2 * q, q])
            for _ in range(m):
                d = np.convolve(d, step)
        half = d.size // 2
        want = np.r_[d[half], 2 * d[half + 1 :]]
        np.testing.assert_allclose(difference_null(v, m), want, atol=1e-14)


def test_plugin_null_is_unbiased():
    """Putting v_t = c(n−c)/(n(n−1)) for p_t(1−p_t) estimates every point probability of the single-run difference
    without bias: checked exactly by enumerating every outcome of three tasks with three trials each."""
    p = np.array([0.2, 0.5, 0.9])
    n = 3
    truth = difference_null(p * (1 - p), 1)
    expect = np.zeros_like(truth)
    from itertools import product

    from scipy.stats import binom

    for cs in product(range(n + 1), repeat=3):
        w = np.prod([binom.pmf(ci, n, pi) for ci, pi in zip(cs, p)])
        expect += w * difference_null(rerun_variance(np.full(3, n), np.array(cs)), 1)
    np.testing.assert_allclose(expect, truth, atol=1e-12)


def test_mdd_threshold_mid_p():
    d = difference_null(np.full(20, 0.25))  # 20 coin-flip tasks: |ΔS| = |Bin(40, ½) − 20|
    s, size = mdd_threshold(d, 0.05)
    ge = np.cumsum(d[::-1])[::-1]
    assert ge[s + 1] + 0.5 * d[s] <= 0.05 < ge[s] + 0.5 * d[s - 1]
    assert size == pytest.approx(ge[s])


def test_icc_unequal_n_by_hand():
    n = np.array([4, 3, 2, 4, 1])
    c = np.array([4, 1, 1, 0, 1])
    r = icc_oneway(n, c, 0.05)
    N, T = n.sum(), n.size
    ybar = c.sum() / N
    msb = np.sum(n * (c / n - ybar) ** 2) / (T - 1)
    msw = np.sum(c * (n - c) / n) / (N - T)
    n0 = (N - np.sum(n**2) / N) / (T - 1)
    assert r["n0"] == pytest.approx(n0)
    assert r["icc"] == pytest.approx((msb - msw) / (msb + (n0 - 1) * msw))
    assert r["icc_low"] < r["icc"] < r["icc_high"] <= 1


def test_beta_binomial_recovers_rho():
    rng = np.random.default_rng(3)
    p = rng.beta(0.6, 0.9, 4000)  # ρ = 1/(1 + 1.5) = 0.4
    c = rng.binomial(4, p)
    mu, rho = beta_binomial_rho(np.full(4000, 4), c)
    assert mu == pytest.approx(0.4, abs=0.02) and rho == pytest.approx(0.4, abs=0.03)
    assert beta_binomial_rho(np.full(5, 4), np.zeros(5, dtype=int)) == (None, None)


# ------------------------------------------------------------------------------------------ calibration
FAMILIES = {  # p_t ~ … ; the asserted grid (benchmarks/calibrate_consistency.py also runs u-shaped and few-flaky)
    "taubench": lambda rng, T: rng.beta(0.63, 0.87, T),  # the beta-binomial fit of the gpt-4o airline file
    "moderate": lambda rng, T: rng.beta(2.0, 2.0, T),
    "coin": lambda rng, T: np.full(T, 0.5),
}
DATASETS, RERUNS = 10000, 2000


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("T", [20, 50])
@pytest.mark.parametrize("n", [2, 4, 8])
def test_calibration(family, T, n):
    fi = list(FAMILIES).index(family)
    p = FAMILIES[family](np.random.default_rng([fi, T]), T)
    rng = np.random.default_rng([fi, T, n, 1])
    c = rng.binomial(n, p, size=(DATASETS, T))
    nn = np.full_like(c, n)
    sd_hat = np.sqrt(rerun_variance(nn, c).sum(axis=1)) / T  # sd_single_run of every simulated data set
    reruns = rng.binomial(1, p, size=(RERUNS, T)).mean(axis=1)  # 2,000 single re-runs of the same tasks
    ratio = sd_hat.mean() / reruns.std(ddof=1)
    s, _ = noise_floor(nn, c, 1, 0.05)  # the threshold on |ΔS| behind mdd_single_runs = s / T
    gap = np.abs(rng.binomial(1, p, size=(DATASETS, T)).sum(axis=1) - rng.binomial(1, p, size=(DATASETS, T)).sum(axis=1))
    size = float(np.mean((s > 0) & (gap >= s)))
    print(f"{family:9s} T={T:2d} n={n}: sd ratio {ratio:.3f}, MDD size {100 * size:.1f}%")
    assert 0.9 <= ratio <= 1.1
    assert 0.035 <= size <= 0.065


def test_api_equals_kernels_on_a_simulated_benchmark():
    rng = np.random.default_rng(11)
    T, n = 30, 4
    p = rng.beta(0.63, 0.87, T)
    c = rng.binomial(n, p)
    rows = [{"run_id": "r", "agent": "a", "domain": "d", "task_id": str(t), "trial": j,
             "reward": float(j < c[t])} for t in range(T) for j in range(n)]  # fmt: skip
    r = consistency(pl.DataFrame(rows)).records()[0]
    order = np.argsort([str(t) for t in range(T)])  # tasks sort as strings
    s, size = noise_floor(np.full(T, n), c[order], 1, 0.05)
    assert r["sd_single_run"] == pytest.approx(math.sqrt(rerun_variance(np.full(T, n), c).sum()) / T)
    assert r["mdd_single_runs"] == s / T and r["mdd_single_runs_size"] == size
    s4, _ = noise_floor(np.full(T, n), c, 4, 0.05)
    assert r["mdd_m4"] == s4 / (4 * T)
    assert r["sd_m4"] == pytest.approx(r["sd_single_run"] / 2)


# ------------------------------------------------------------------------------------------ result object, CLI
def test_result_object(sample_result):
    c = sample_result
    f = c.to_frame()
    assert f.height == 6 and f.columns[:2] == ["agent", "domain"]
    assert {"pass1_per_trial", "pass1_spread", "flip_rate", "icc", "icc_low", "icc_high", "bb_rho", "sd_single_run",
            "sd_m2", "sd_m4", "sd_m8", "mdd_single_runs", "mdd_m2", "mdd_m4", "mdd_m8"} <= set(f.columns)  # fmt: skip
    assert (f["mdd_single_runs"] >= f["mdd_m2"]).all() and (f["mdd_m2"] >= f["mdd_m8"]).all()
    json.dumps(c.records(), allow_nan=False)
    text = str(c.summary())
    assert "ICC(1)" in text and "beta-binomial" in text and "signal/noise" in text
    assert "<table>" in c.summary()._repr_html_() and r"\begin{tabular}" in c.summary().to_latex()
    assert all(ord(ch) < 128 or ch == "—" for ch in c.summary().to_latex())  # pdflatex-safe, like the other tables
    flaky = c.flaky
    assert flaky["flaky"].all() and flaky.height == int(f["n_flaky"].sum())
    first = flaky.filter((pl.col("agent") == "baseline") & (pl.col("domain") == "retail"))
    und = (first["rate"] - 0.5).abs().to_list()
    assert und == sorted(und)
    assert c.per_trial.filter(pl.col("agent") == "atlas-large", pl.col("domain") == "airline")["pass1"].to_list() == \
        f.filter(pl.col("agent") == "atlas-large", pl.col("domain") == "airline")["pass1_per_trial"][0].to_list()


def test_ranking_by_hand(sample_result):
    c = sample_result
    air = c.frame.filter(pl.col("domain") == "airline").sort("pass1", descending=True)
    p, sd = air["pass1"].to_numpy(), air["sd_single_run"].to_numpy()
    z2 = 1.959963984540054**2
    need = [max(1, math.ceil(z2 * (sd[i] ** 2 + sd[i + 1] ** 2) / (p[i] - p[i + 1]) ** 2)) for i in range(2)]
    rk = c.ranking.filter(pl.col("domain") == "airline")
    assert rk["agent"].to_list() == air["agent"].to_list()
    assert rk["trials_to_resolve_next"].to_list()[:2] == need
    s = c.rankings.filter(pl.col("domain") == "airline").row(0, named=True)
    assert s["trials_to_resolve"] == max(need)
    signal = math.sqrt(max(0.0, np.var(p, ddof=1) - np.mean(air["se_rerun"].to_numpy() ** 2)))
    assert s["snr"] == pytest.approx(signal / math.sqrt(np.mean(sd**2)))


def test_cli_json_agrees_with_api(capsys, sample_result):
    assert main(["consistency", str(SAMPLE_DATA), "--format", "json", "--quiet"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == json.loads(json.dumps(sample_result.records()))


def test_cli_formats(capsys):
    for fmt in ("table", "csv", "markdown"):
        assert main(["consistency", str(SAMPLE_DATA), "--format", fmt, "--quiet", "--by", "agent"]) == 0
        out = capsys.readouterr().out
        assert "atlas-large" in out
    assert main(["consistency", str(SAMPLE_DATA), "--flaky", "3", "--quiet"]) == 0
    assert "flaky tasks" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------ bad input
def _frame(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["run_id", "agent", "domain", "task_id", "trial", "reward", "termination_reason"],
                        orient="row")  # fmt: skip


def test_one_trial_per_task_gives_nulls_and_a_note():
    rows = [("r1", "a", "airline", str(t), 0, float(t % 2), "user_stop") for t in range(10)]
    rows += [("r2", "b", "airline", str(t), j, float((t + j) % 2), "user_stop") for t in range(10) for j in range(3)]
    c = consistency(_frame(rows))
    one = c.to_frame().filter(pl.col("agent") == "a").row(0, named=True)
    for k in ("flip_rate", "icc", "icc_low", "bb_rho", "sd_single_run", "se_rerun", "mdd_single_runs", "mdd_m8",
              "pass1_spread"):  # fmt: skip
        assert one[k] is None, k
    assert one["pass1"] == 0.5 and one["n_trials_max"] == 1
    assert "one trial per task" in one["note"]
    multi = c.to_frame().filter(pl.col("agent") == "b").row(0, named=True)
    assert multi["flip_rate"] == 1.0 and multi["sd_single_run"] is not None
    assert "a, airline: one trial per task" in str(c.summary())
    json.dumps(c.records(), allow_nan=False)
    rk = c.rankings.row(0, named=True)
    assert rk["trials_to_resolve"] is None and rk["snr"] is None and "one trial per task" in rk["note"]
    assert c.records()[1]["ranking"]["note"] == rk["note"]


def test_a_tie_is_never_resolved():
    rows = [(a, a, "airline", str(t), j, float((t + j) % 2), "user_stop") for a in ("a", "b") for t in range(10)
            for j in range(2)]  # fmt: skip
    c = consistency(_frame(rows))
    rk = c.rankings.row(0, named=True)
    assert rk["trials_to_resolve"] is None and rk["note"] == "two of them tie"
    assert c.ranking["gap_to_next"][0] == 0.0 and c.ranking["trials_to_resolve_next"][0] is None


def test_infra_errors_follow_the_convention():
    rows = [("r", "a", "airline", str(t), j, float((t * 7 + j) % 3 == 0), "user_stop") for t in range(12) for j in range(4)]
    rows[1] = ("r", "a", "airline", "0", 1, None, "infrastructure_error")
    rows[6] = ("r", "a", "airline", "1", 2, None, "infrastructure_error")
    rows += [("r", "a", "airline", "12", 0, None, "infrastructure_error")]  # a task whose every trial failed to run
    df = _frame(rows)
    drop = consistency(df, infra="drop").records()[0]
    fail = consistency(df, infra="fail").records()[0]
    assert drop["infra_error_count"] == fail["infra_error_count"] == 3
    assert drop["n_obs"] == 46 and fail["n_obs"] == 49
    assert drop["n_tasks"] == 12 and drop["n_tasks_no_kept"] == 1 and fail["n_tasks"] == 13
    assert (drop["n_trials_min"], drop["n_trials_max"]) == (3, 4)
    assert fail["pass1"] < drop["pass1"]
    with pytest.raises(tauk.TaukError):
        consistency(df, infra="keep")


def test_unequal_trials_and_one_trial_tasks():
    rows = [("r", "a", "d", str(t), j, float((t + j) % 2), "user_stop") for t in range(8) for j in range(4)]
    rows += [("r", "a", "d", "x", 0, 1.0, "user_stop")]  # one task with a single trial
    r = consistency(_frame(rows)).records()[0]
    assert (r["n_trials_min"], r["n_trials_max"]) == (1, 4)
    assert r["n_trials_mean"] == pytest.approx(33 / 9)
    v = 8 * (2 * 2 / 12)  # every 4-trial task has c = 2: v = 1/3; the one-trial task gets the mean 1/3
    assert r["sd_single_run"] == pytest.approx(math.sqrt(v + 1 / 3) / 9)
    assert r["se_rerun"] is None and "one trial: their trial variance" in r["note"]
    assert r["flip_rate"] == 1.0  # over the tasks with ≥ 2 trials


def test_repeated_trial_indices_fall_back_to_each_tasks_jth_trial():
    rows = [(run, "a", "d", str(t), 0, float((t + k) % 2), "user_stop") for k, run in enumerate(["r1", "r2", "r3"])
            for t in range(6)]  # fmt: skip
    r = consistency(_frame(rows)).records()[0]
    assert r["n_trial_indices"] == 3 and r["n_trials_max"] == 3
    assert r["pass1_per_trial"] == [0.5, 0.5, 0.5]
    assert "j-th trial" in r["note"]


def test_too_few_flaky_tasks_have_no_floor():
    rows = [("r", "a", "d", str(t), j, float(t < 5 or (t == 5 and j == 0)), "user_stop") for t in range(10) for j in range(4)]
    r = consistency(_frame(rows)).records()[0]
    assert r["n_flaky"] == 1 < MIN_FLAKY
    assert r["mdd_single_runs"] is None and r["sd_single_run"] > 0
    assert "too few" in r["note"]
    steady = [("r", "a", "d", str(t), j, float(t < 5), "user_stop") for t in range(10) for j in range(4)]
    r = consistency(_frame(steady)).records()[0]
    assert r["flip_rate"] == 0.0 and r["icc"] == 1.0 and r["icc_low"] is None and r["sd_single_run"] == 0.0
    assert r["mdd_single_runs"] is None and "no task varied" in r["note"]


def test_reward_column_and_arguments():
    rows = [("r", "a", "d", str(t), j, 0.0, "user_stop") for t in range(6) for j in range(2)]
    df = _frame(rows).with_columns(score_reward=pl.Series([float(i % 3 == 0) for i in range(12)]))
    assert consistency(df).records()[0]["pass1"] == 0.0
    assert consistency(df, reward="score_reward").records()[0]["pass1"] > 0
    with pytest.raises(tauk.TaukError):
        consistency(df, reward="nope")
    with pytest.raises(tauk.TaukError):
        consistency(df, alpha=1.5)
    with pytest.raises(tauk.TaukError):
        consistency(df, by="nope")
    with pytest.raises(tauk.TaukError):
        consistency(42)
    assert consistency(df, by=None).frame.height == 1


# ------------------------------------------------------------------------------------------ figures, doctests
def test_figures(sample_result):
    import matplotlib as mpl

    from tauk import plot

    fig = plot.noise_floor(sample_result)
    assert isinstance(fig, mpl.figure.Figure) and len(fig.axes) == 1
    fig = plot.flaky_tasks(sample_result)
    assert len([a for a in fig.axes if a.get_visible()]) == 6
    one = plot.flaky_tasks(sample_result, group={"agent": "baseline", "domain": "retail"}, only_flaky=True)
    assert len(one.axes) == 1
    fig2, ax = plot.new_figure((4, 4))
    assert plot.flaky_tasks(sample_result, ax=ax, group=("atlas-small", "airline")) is fig2
    with pytest.raises(tauk.TaukError):
        plot.flaky_tasks(sample_result, ax=ax)
    with pytest.raises(tauk.TaukError):
        plot.noise_floor(42)


def test_untrusted_labels_render(tmp_path):
    from tauk import plot

    rows = [("r", "gpt-$4$o_\\alpha", "d", f"t${t}", j, float((t + j) % 3 == 0), "user_stop") for t in range(8)
            for j in range(3)]  # fmt: skip
    c = consistency(_frame(rows))
    for fig in (plot.noise_floor(c), plot.flaky_tasks(c)):
        paths = plot.save(fig, tmp_path / "f", formats=["png"])  # mathtext would raise on an unescaped "$4$o_\alpha"
        assert paths[0].read_bytes().startswith(b"\x89PNG")
        texts = [t.get_text() for a in fig.axes for t in a.get_yticklabels()]
        assert any(r"\$" in t for t in texts)


@pytest.mark.parametrize("module", ["tauk.stats.noise.analysis", "tauk.plot.noise"])
def test_doctests(module):
    import importlib

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        mod = importlib.import_module(module)
        fails, tried = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    finally:
        os.chdir(cwd)
    assert tried > 0 and fails == 0


def test_report_section(tmp_path, sample):
    from tauk.report import write_report

    write_report(sample.trials, tmp_path / "rep", resamples=99, formats=("png",))  # a bare frame: no scoring, quicker
    assert (tmp_path / "rep" / "tables" / "consistency.md").read_text().startswith("# run-to-run consistency")
    assert (tmp_path / "rep" / "figures" / "noise_floor.png").exists()
    assert (tmp_path / "rep" / "figures" / "flaky_tasks.png").exists()


def test_report_skips_single_trial(tmp_path):
    from tauk.report import write_report

    rows = [("r", "a", "airline", str(t), 0, float(t % 2), "user_stop") for t in range(10)]
    write_report(_frame(rows).with_columns(simulation_id=pl.col("task_id")), tmp_path / "rep", resamples=99,
                 formats=("png",))  # fmt: skip
    assert not (tmp_path / "rep" / "tables" / "consistency.md").exists()
    readme = (tmp_path / "rep" / "README.md").read_text()
    assert "**consistency**: one trial per task" in readme


def test_rank_by_outside_by_is_an_error_not_ignored():
    """rank_by names the by key ranked within the others; a column not in by was ignored in silence (no ranking)."""
    res = tauk.load(SAMPLE_DATA)
    with pytest.raises(tauk.TaukError, match="rank_by='domain' is not one of by"):
        tauk.stats.consistency(res, by=["agent"], rank_by="domain")
    assert tauk.stats.consistency(res, by=["domain"]).rank_by is None  # the default with no agent: nothing ranked
    ranked = tauk.stats.consistency(res, by=["agent", "domain"], rank_by="domain")
    assert ranked.rank_by == "domain"

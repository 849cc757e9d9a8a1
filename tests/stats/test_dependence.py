"""Run effects and task families (tauk.stats.dependence) in summaries, comparisons and overall(): seeded, fast."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from scipy import special

import tauk
from tauk.errors import StatsWarning
from tauk.stats.dependence import cluster_variance, run_effect, task_family


def frame_of(Y: np.ndarray, agent: str = "A", fam: np.ndarray | None = None, run: str | None = None) -> pl.DataFrame:
    """(T × R) successes → a trials frame: one run, trial index r = pass r."""
    T, R = Y.shape
    task = np.repeat(np.arange(T), R)
    cols = {"run_id": [run or f"run-{agent}"] * (T * R), "agent": [agent] * (T * R), "task_id": task.astype(str),
            "trial": np.tile(np.arange(R), T), "reward": Y.reshape(-1).astype(float),
            "termination_reason": ["user_stop"] * (T * R)}  # fmt: skip
    if fam is not None:
        cols["fam"] = np.asarray(fam)[task].astype(str)
    return pl.DataFrame(cols)


def draw(seed: int, T: int = 40, R: int = 4, shifts=None, fam_sd: float = 0.0, G: int = 10) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    fam = np.repeat(np.arange(G), T // G)
    mu = 0.3 + 1.2 * rng.standard_normal(T) + fam_sd * rng.standard_normal(G)[fam]
    b = np.zeros(R) if shifts is None else np.asarray(shifts, float)
    Y = (rng.uniform(size=(T, R)) < special.expit(mu[:, None] + b[None, :])).astype(int)
    return Y, fam


def summ(frame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        return tauk.stats.summarize(frame, by="run_id", k=[1, 2], **kw)


# ---- run effects -------------------------------------------------------------------------------------------
def test_summary_records_carry_the_run_effect_test_and_variance():
    Y, _ = draw(1, shifts=[-1.5, 0.0, 0.0, 1.5])
    s = summ(frame_of(Y))
    rec = s.records()[0]
    assert rec["n_passes"] == 4
    assert rec["run_effect_p"] < 0.001 and rec["run_var"] > 0.005
    assert rec["pass_hat_k"]["1"]["se_run"] > 0
    assert "run variance" in rec["pass_hat_k"]["1"]["adjusted_for"]
    assert any("Cochran" in n for n in s.summary().notes)


def test_a_run_effect_widens_both_intervals_and_report_keeps_them():
    Y, _ = draw(2, shifts=[-1.5, 0.0, 0.0, 1.5])
    adj = summ(frame_of(Y)).pass_hat_k.sort("k")
    rep = summ(frame_of(Y), run_effects="report").pass_hat_k.sort("k")
    assert (adj["ci_low"] < rep["ci_low"]).all() and (adj["ci_high"] > rep["ci_high"]).all()
    assert (adj["ci_low"] <= adj["estimate"]).all() and (adj["estimate"] <= adj["ci_high"]).all()
    assert (adj["rerun_ci_high"] - adj["rerun_ci_low"] > rep["rerun_ci_high"] - rep["rerun_ci_low"]).all()
    assert rep["se_run"].to_list() == adj["se_run"].to_list()  # reported either way
    assert rep["adjusted_for"].is_null().all() and adj["interval_method"].to_list() == rep["interval_method"].to_list()


def test_without_variation_across_passes_the_intervals_do_not_move():
    rng = np.random.default_rng(3)
    Y = np.repeat((rng.uniform(size=(30, 1)) < 0.5).astype(int), 4, axis=1)  # every task the same in every pass
    adj = summ(frame_of(Y))
    rep = summ(frame_of(Y), run_effects="report")
    assert adj.pass_hat_k["ci_low"].to_list() == rep.pass_hat_k["ci_low"].to_list()
    assert adj.groups["run_effect_p"].to_list() == [None]  # nothing varies within a task: not identifiable


def test_one_pass_says_a_run_effect_cannot_be_separated():
    Y, _ = draw(4, R=1)
    s = summ(frame_of(Y))
    assert s.groups["n_passes"].to_list() == [1] and s.groups["run_effect_p"].to_list() == [None]
    assert any("cannot be separated" in n and "noise" in n for n in s.summary().notes)
    lo, hi = s.pass_hat_k.filter(k=1).select("ci_low", "ci_high").row(0)
    assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
    Yb, _ = draw(5, R=1)
    c = tauk.stats.compare(pl.concat([frame_of(Y, "A"), frame_of(Yb, "B")]), "A", "B")
    assert any("agent difference" in n for n in c.summary().notes)


def test_cochran_q_equals_the_textbook_formula_on_a_complete_table():
    rng = np.random.default_rng(6)
    Y = (rng.uniform(size=(25, 5)) < 0.5).astype(float)
    re = run_effect(Y)
    keep = (Y.sum(1) > 0) & (Y.sum(1) < 5)  # all-0 / all-1 rows add nothing to Q
    C, L, R = Y[keep].sum(0), Y[keep].sum(1), Y.shape[1]
    q = R * (R - 1) * np.sum((C - C.mean()) ** 2) / np.sum(L * (R - L))
    assert re.statistic == pytest.approx(q, rel=1e-12)


def test_paired_comparison_adds_both_run_variances_and_stays_consistent():
    Ya, _ = draw(7, shifts=[-1.2, 0.0, 0.3, 1.2])
    Yb, _ = draw(8, shifts=[0.8, -0.8, 0.0, 0.0])
    fr = pl.concat([frame_of(Ya, "A"), frame_of(Yb, "B")])
    adj = tauk.stats.compare(fr, "A", "B").row()
    rep = tauk.stats.compare(fr, "A", "B", run_effects="report").row()
    assert adj["run_var_a"] > 0 and adj["se_run"] > 0 and adj["df"] > 1
    assert adj["ci_high"] - adj["ci_low"] > rep["ci_high"] - rep["ci_low"]
    assert adj["p_value"] > rep["p_value"]
    assert (adj["ci_low"] > 0 or adj["ci_high"] < 0) == (adj["p_value"] < 0.05)
    assert "run variance" in adj["adjusted_for"] and adj["interval_method"] == rep["interval_method"]


def test_an_adjusted_comparison_is_never_narrower_than_the_task_level_one():
    """No run effect, k = n (ternary differences: the score interval): wherever a chance run variance > 0 adjusts
    the comparison, its interval holds the report-only one and its p is not smaller (the adjusted t alone was
    narrower in 53–99.5 % of such benchmarks: benchmarks/results/run_effect_compare_width.txt)."""
    rng = np.random.default_rng(21)
    reps, T, R = 60, 20, 8
    parts = []
    for r in range(reps):
        mu = 0.3 + 1.2 * rng.standard_normal(T)
        for agent in "AB":
            Y = (rng.uniform(size=(T, R)) < special.expit(mu[:, None])).astype(int)
            parts.append(frame_of(Y, agent, run=f"{agent}{r}").with_columns(pl.lit(r).alias("rep")))
    fr = pl.concat(parts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StatsWarning)
        adj = tauk.stats.compare(fr, "A", "B", by="rep", k=R, permutations=50).frame.sort("rep")
        rep = tauk.stats.compare(fr, "A", "B", by="rep", k=R, permutations=50, run_effects="report").frame.sort("rep")
    hit = adj["adjusted_for"].is_not_null().to_numpy()
    assert hit.sum() >= 10
    a, b = adj.filter(pl.Series(hit)), rep.filter(pl.Series(hit))
    assert (a["ci_low"] <= b["ci_low"] + 1e-12).all() and (a["ci_high"] >= b["ci_high"] - 1e-12).all()
    assert (a["p_value"] >= b["p_value"] - 1e-12).all()
    assert (a["interval_excludes_0"] == a["p_below_alpha"]).all()


def test_run_effects_keep_the_paired_type_I_error_down():
    """A small seeded simulation: same tasks, independent run effects of SD 0.8 on the logit per agent (δ = 0)."""
    rng = np.random.default_rng(9)
    reps, T, R = 120, 30, 4
    parts = []
    for r in range(reps):
        mu = 0.3 + 1.2 * rng.standard_normal(T)
        for agent in "AB":
            b = 0.8 * rng.standard_normal(R)
            Y = (rng.uniform(size=(T, R)) < special.expit(mu[:, None] + b[None, :])).astype(int)
            parts.append(frame_of(Y, agent, run=f"{agent}{r}").with_columns(pl.lit(r).alias("rep")))
    fr = pl.concat(parts)
    rej = {}
    for how in ("adjust", "report"):
        f = tauk.stats.compare(fr, "A", "B", by="rep", permutations=50, run_effects=how).frame
        rej[how] = float((f["p_value"] < 0.05).mean())
    assert rej["report"] > 0.15  # the paired t alone is fooled by the passes
    assert rej["adjust"] < 0.10


# ---- task families --------------------------------------------------------------------------------------------
def test_cluster_widens_the_population_interval_under_family_correlation():
    Y, fam = draw(10, T=40, fam_sd=2.0, G=10)
    fr = frame_of(Y, fam=fam)
    base = summ(fr, run_effects="report").pass_hat_k.filter(k=1).row(0, named=True)
    cl = summ(fr, cluster="fam", run_effects="report")
    row = cl.pass_hat_k.filter(k=1).row(0, named=True)
    assert cl.groups["n_clusters"].to_list() == [10]
    assert row["se_cluster"] > base["se_tasks"]
    assert row["ci_low"] <= base["ci_low"] and row["ci_high"] >= base["ci_high"]
    assert row["ci_high"] - row["ci_low"] > base["ci_high"] - base["ci_low"]
    assert "clusters (10, CR2" in row["adjusted_for"]


def test_cluster_compare_uses_cr2_and_agrees_with_its_p_value():
    Y, fam = draw(11, T=40, fam_sd=1.0, G=10)
    rng = np.random.default_rng(12)
    shift = rng.normal(0, 1.5, 10)[fam]
    Yb = (rng.uniform(size=Y.shape) < special.expit(0.3 + shift)[:, None]).astype(int)
    fr = pl.concat([frame_of(Y, "A", fam), frame_of(Yb, "B", fam)])
    r = tauk.stats.compare(fr, "A", "B", cluster="fam", run_effects="report").row()
    tasks = tauk.stats.compare(fr, "A", "B", cluster="fam", run_effects="report").tasks
    V, G = cluster_variance(tasks["d"].to_numpy(), [str(fam[int(t)]) for t in tasks["task_id"]])
    assert r["n_clusters"] == G == 10 and r["se_cluster"] == pytest.approx(np.sqrt(V))
    assert (r["ci_low"] > 0 or r["ci_high"] < 0) == (r["p_value"] < 0.05)
    assert r["adjusted_for"].startswith("clusters (10, CR2")


def test_telecom_ids_give_issue_type_times_persona_families():
    ids = [f"[{i}]fault_{j}[PERSONA:{p}]" for i in ("mms_issue", "service_issue", "mobile_data_issue")
           for p in ("None", "Easy", "Hard") for j in range(3)]  # fmt: skip
    assert len({task_family("telecom", t) for t in ids}) == 9
    rng = np.random.default_rng(13)
    Y = (rng.uniform(size=(len(ids), 4)) < 0.5).astype(int)
    fr = frame_of(Y).with_columns(pl.Series("task_id", np.repeat(ids, 4)), pl.lit("telecom").alias("domain"))
    s = summ(fr, cluster="family")
    assert s.groups["n_clusters"].to_list() == [9]


def test_bad_clusters_one_cluster_warns_singletons_note_and_missing_column_errors():
    Y, _ = draw(14, T=20)
    fr = frame_of(Y).with_columns(pl.lit("x").alias("one"), pl.col("task_id").alias("own"))
    with pytest.warns(StatsWarning, match="fewer than 2 clusters"):
        s = tauk.stats.summarize(fr, by="run_id", k=1, cluster="one")
    lo, hi = s.pass_hat_k.select("ci_low", "ci_high").row(0)
    assert np.isfinite(lo) and np.isfinite(hi) and lo < hi
    assert any("fewer than 2 clusters" in n for n in s.summary().notes)
    s = summ(fr, cluster="own")
    assert any("every cluster" in n and "one task" in n for n in s.summary().notes)
    with pytest.raises(tauk.TaukError, match="not in the trials"):
        summ(fr, cluster="nope")
    two = fr.with_columns(pl.col("trial").cast(pl.String).alias("bad"))
    with pytest.raises(tauk.TaukError, match="one cluster"):
        summ(two, cluster="bad")


# ---- overall() --------------------------------------------------------------------------------------------------
def test_overall_has_an_interval_and_its_weights():
    s = tauk.stats.summarize(tauk.load("data"), by="agent")
    o = tauk.stats.overall(s).to_frame()
    assert {"ci_low", "ci_high", "weights"} <= set(o.columns)
    for r in o.iter_rows(named=True):
        assert r["ci_low"] <= r["estimate"] <= r["ci_high"] and r["ci_low"] < r["ci_high"]
        assert sum(r["weights"]) == pytest.approx(1.0) and len(r["weights"]) == r["n_setups"]
    # each side is √(Σ w² h²) of the per-setup half-widths
    long = s.pass_hat_k.filter(agent="atlas-large", k=1)
    h = (long["estimate"] - long["ci_low"]).to_numpy()
    r = o.filter(agent="atlas-large", k=1).row(0, named=True)
    assert r["estimate"] - r["ci_low"] == pytest.approx(np.sqrt(np.sum((h / 2) ** 2)))
    notes = tauk.stats.overall(s).summary().notes
    assert any("weights 1/setups" in n for n in notes)
    none = tauk.stats.overall(tauk.stats.summarize(tauk.load("data"), by="agent", ci=None))
    assert none.to_frame()["ci_low"].is_null().all()


def test_the_families_telecom_and_retail_tasks_really_have(shared_data):
    """The counts the clusters docstring states, from the published task files."""
    import collections
    import json
    import re

    telecom = json.loads((shared_data / "tasks" / "v0.1.0_telecom_tasks.json").read_text())
    fams = collections.Counter(task_family("telecom", t["id"]) for t in telecom)
    assert len(telecom) == 114 and len(fams) == 9 and min(fams.values()) == 9 and max(fams.values()) == 17
    retail = json.loads((shared_data / "tasks" / "v0.1.0_retail_tasks.json").read_text())
    users = collections.Counter(re.sub(r"\s+(in zip|living).*|,.*", "", t["user_scenario"]["instructions"]["known_info"]
                                       or "").strip() for t in retail)  # fmt: skip
    assert len(retail) == 114 and len(users) == 60 and sum(1 for n in users.values() if n >= 2) == 31  # shared users
    assert max(users.values()) == 5
    assert all(task_family("retail", str(t["id"])) == str(t["id"]) for t in retail)  # ids encode no family


# ---- the run-effect trade-off (benchmarks/run_effect_rules.py, run_effect_bound.py) ------------------------------
def _benchmark_module(name: str):
    import importlib.util
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "benchmarks"
    if str(bench) not in sys.path:
        sys.path.insert(0, str(bench))
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", bench / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_rules_benchmark_reproduces_the_library_adjustment():
    """run_effect_rules.py applies candidate rules to the report-only intervals; its rule (c = 1, no gate, m = 1)
    must be what summarize() and compare() do by default, or its trade-off says nothing about the library."""
    rules = _benchmark_module("run_effect_rules")
    cal = _benchmark_module("dependence_calibration")
    T, R, reps = 20, 4, 40
    data = rules.cell("B(2,2)", T, R, 0.5, reps, 3)
    res = rules.apply_rule(data, T, R, (1.0, 1.0, 1.0))
    # the same benchmarks through the public API with the default
    rng = np.random.default_rng(np.random.SeedSequence([3, rules.zlib.crc32(f"B(2,2) {T} {R} 0.5".encode())]))
    p = cal.POPULATIONS["B(2,2)"][0](rng, (reps, T))
    lp = special.logit(np.clip(p, 1e-300, 1 - 1e-16))
    Y = (rng.uniform(size=(reps, T, R)) < special.expit(lp[:, :, None] + 0.5 * rng.standard_normal((reps, 1, R))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = {how: tauk.stats.summarize(cal.frame_of(Y.astype(np.int8)), by="rep", k=[1, R], run_effects=how)
             .pass_hat_k.sort("rep", "k") for how in ("adjust", "report")}  # fmt: skip
    for k in (1, R):
        a, r = (f[h].filter(pl.col("k") == k) for h in ("adjust", "report"))
        ratio = float((a["ci_high"] - a["ci_low"]).mean() / (r["ci_high"] - r["ci_low"]).mean())
        assert res[("pop", k)][2] == pytest.approx(ratio, rel=1e-9)
        tr = cal.truth_of("B(2,2)", 0.5, k)
        cov = float(((a["ci_low"] <= tr) & (tr <= a["ci_high"])).mean())
        assert res[("pop", k)][0] == pytest.approx(cov, abs=1e-12)
    ys = [(rng.uniform(size=(reps, T, R)) < special.expit(lp[:, :, None] + 0.5 * rng.standard_normal((reps, 1, R))))
          .astype(np.int8) for _ in range(2)]  # fmt: skip
    fr = pl.concat([cal.frame_of(ys[0], "A"), cal.frame_of(ys[1], "B")])
    for k in (1, R):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = tauk.stats.compare(fr, "A", "B", by="rep", k=k, permutations=100).frame
        assert res[("pair", k)][0] == pytest.approx(float((c["p_value"] < 0.05).mean()), abs=1e-12)


def test_the_population_truth_of_the_calibration_is_exact():
    cal = _benchmark_module("dependence_calibration")
    assert cal.truth_of("B(2,2)", 0.0, 2) == pytest.approx(0.3, abs=1e-6)  # E p² = 2·3 / (4·5)
    assert cal.truth_of("0.2·δ0+B(2,2)", 0.0, 1) == pytest.approx(0.4, abs=1e-9)
    assert cal.truth_of("LN(0.3,1.5)", 0.5, 4) == pytest.approx(cal.truth(0.3, 1.5, 0.5, 4), rel=1e-9)


def test_the_default_keeps_coverage_under_a_run_effect_where_report_only_fails():
    """B(2,2), T = 50, R = 4 passes, a logit run effect of SD 0.5: report-only intervals miss the population pass^1
    far more often than 5 %; the default (widened by the run variance) does not."""
    cal = _benchmark_module("dependence_calibration")
    rng = np.random.default_rng(11)
    Y, _ = cal.draw_pop(rng, 200, 50, 4, "B(2,2)", 0.5)
    tr = {1: cal.truth_of("B(2,2)", 0.5, 1), 4: cal.truth_of("B(2,2)", 0.5, 4)}
    adj, _ = cal.summary_cov(cal.frame_of(Y), (1, 4), tr)
    rep, _ = cal.summary_cov(cal.frame_of(Y), (1, 4), tr, run_effects="report")
    assert rep[1][0] < 0.88 and adj[1][0] >= 0.92
    assert adj[4][0] >= rep[4][0]


@pytest.mark.slow
def test_no_q_driven_widening_meets_both_run_effect_targets_at_4_passes():
    """benchmarks/run_effect_bound.py: B(2,2), T = 50, R = 4, k = 1. The best widening factor any function of
    Cochran's p can apply to the library's report-only interval — chosen by a linear programme knowing the cell,
    in sample (which flatters it) — covers pass^1 under a logit run effect of SD 0.5 < 93.5 % of the time when it
    may cost ≤ 5 % width without a run effect (3,000 benchmarks a cell: 91.8 ± 0.5 %, run_effect_bound.txt). The
    targets 'coverage ≥ 93 %' and 'width ≤ ×1.05 without a run effect' cannot both hold there."""
    rules = _benchmark_module("run_effect_rules")
    bound = _benchmark_module("run_effect_bound")
    d = {sd: rules.cell("B(2,2)", 50, 4, sd, 600, 5, paired=False) for sd in (0.0, 0.5)}
    C = bound.tables(d[0.5][("pop", 1)])[0]
    W = bound.tables(d[0.0][("pop", 1)])[1]
    assert C[:, 0].sum() < 0.88  # report-only: the run effect is not covered
    assert bound.solve([C], [W]) < 0.935
    assert bound.solve([C], [W * 1.05 / 1.25]) > 0.95  # with a 25 % width budget the same LP reaches it


def test_cluster_compare_with_no_spread_between_clusters_says_the_task_level_test_is_kept():
    """Every cluster's mean difference the same: the CR2 variance is 0 and the task-level (score) test is kept —
    before, silently: adjusted_for null, n_clusters 3, se_cluster 0, and the notes still said the headline was the
    cluster-robust (CR2) t test and interval."""
    from stats.frames import make_trials, two_agents

    fr = make_trials(two_agents([1] * 6, [0] * 6, trials=2)).with_columns(
        fam=(pl.col("task_id").cast(pl.Int64) // 2).cast(pl.String))
    with pytest.warns(StatsWarning, match="cluster-robust variance is 0"):
        c = tauk.stats.compare(fr, "A", "B", cluster="fam")
    row = c.row()
    assert row["adjusted_for"] is None and row["n_clusters"] == 3 and row["se_cluster"] == 0.0
    assert 0 < row["ci_low"] < 1 == row["ci_high"]  # the score interval, not the zero-width CR2 t
    assert any("cluster-robust variance is 0" in n and "task-level test is kept" in n for n in c.summary().notes)


def test_cluster_compare_with_equal_cluster_means_up_to_rounding_is_the_zero_case():
    """d_t = 2/3 − 1/3 on every task (3 trials, A passes 2, B 1) in clusters of 1, 2 and 7 tasks: the residuals are
    rounding noise (V = 5.2e-33 > 0 in floating point), so the exact ``V == 0`` check missed it — adjusted_for
    'clusters (3, CR2, t_2)', se_cluster 7e-17 and no warning, the case the zero-variance fix is for."""
    from stats.frames import make_trials

    fam = ["f1", "f2", "f2"] + ["f3"] * 7
    assert cluster_variance(np.full(10, 2 / 3 - 1 / 3), fam)[0] == 0.0
    rows = [{"agent": ag, "task_id": t, "trial": i, "reward": float((i + t) % 3 < c), "fam": fam[t]}
            for t in range(10) for ag, c in (("A", 2), ("B", 1)) for i in range(3)]
    fr = make_trials([{k: v for k, v in r.items() if k != "fam"} for r in rows]).with_columns(
        fam=pl.Series([r["fam"] for r in rows]))
    with pytest.warns(StatsWarning, match="cluster-robust variance is 0"):
        row = tauk.stats.compare(fr, "A", "B", cluster="fam").row()
    assert row["adjusted_for"] is None and row["se_cluster"] == 0.0
    # a real spread between clusters is kept as it is
    x = np.array([0.5, 0.25, 0.25] + [1 / 3] * 7)
    assert cluster_variance(x, fam)[0] > 1e-6

"""tauk.leaderboard.ranking: rank intervals, tie groups and adjacent pairs; the unpaired test's size measured, the
paired view checked against tauk.stats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

import tauk
from tauk.errors import TaukError
from tauk.leaderboard import analyze, board_from_runs, domain_ranking, recover, row_intervals
from tauk.leaderboard.ranking import welch_pvalue


def test_welch_pvalue_is_scipys():
    rng = np.random.default_rng(1)
    for _ in range(20):
        x, y = rng.binomial(4, 0.6, 30) / 4, rng.binomial(4, 0.5, 45) / 4
        d, p = welch_pvalue(x, y)
        ref = stats.ttest_ind(x, y, equal_var=False)
        assert d == pytest.approx(x.mean() - y.mean()) and p == pytest.approx(ref.pvalue, rel=1e-10)
    assert welch_pvalue(np.ones(5), np.ones(5)) == (0.0, 1.0)
    assert welch_pvalue(np.ones(5), np.zeros(5)) == (1.0, 0.0)


def _row_values(rng, p_task, n=4):
    return rng.binomial(n, p_task) / n


def test_unpaired_test_size_and_conservatism_small():
    """Two identical agents on the same 50 tasks, 4 trials: the unpaired test rejects at about α when the agents'
    per-task success is independent, and less often when it is correlated (shared task difficulty). Seeded, 600
    benchmarks each (the fuller grid: benchmarks/leaderboard_calibration.py)."""
    rng = np.random.default_rng(20260)
    T, sims, alpha = 50, 600, 0.05
    rej_indep = rej_corr = 0
    for _ in range(sims):
        pa, pb = rng.beta(0.7, 0.7, T), rng.beta(0.7, 0.7, T)  # independent difficulty
        rej_indep += welch_pvalue(_row_values(rng, pa), _row_values(rng, pb))[1] <= alpha
        p = rng.beta(0.7, 0.7, T)  # one difficulty for both: positively correlated
        rej_corr += welch_pvalue(_row_values(rng, p), _row_values(rng, p))[1] <= alpha
    se = np.sqrt(alpha * (1 - alpha) / sims)
    assert abs(rej_indep / sims - alpha) <= 3 * se
    assert rej_corr / sims <= rej_indep / sims and rej_corr / sims <= alpha


def test_paired_view_equals_tauk_stats_rank_intervals():
    res = tauk.load("data")
    runs = board_from_runs(res)
    a = analyze(runs.board, trajectories=runs.trajectories, tasks=runs.tasks)
    ranks = tauk.stats.compare_all(res, by="domain").ranks
    got = a.ranking.to_frame().select("domain", "submission_id", "rank_low_paired", "rank_high_paired")
    want = ranks.select("domain", pl.col("agent").alias("submission_id"), "rank_low", "rank_high")
    joined = got.join(want, on=["domain", "submission_id"])
    assert joined.height == 6
    assert (joined["rank_low_paired"] == joined["rank_low"]).all()
    assert (joined["rank_high_paired"] == joined["rank_high"]).all()
    pairs = a.ranking.pairs
    assert pairs["p_unpaired"].is_not_null().all()
    c = tauk.stats.compare(res.trials.filter(pl.col("domain") == "retail"), "atlas-small", "baseline", pool_setups=True)
    assert (pairs["test"] == f"paired {c.test} test").all()  # names the test compare() used (the score test)
    got_p = pairs.filter(pl.col("domain") == "retail", pl.col("a") == "atlas-small")["p_paired"][0]
    assert got_p == pytest.approx(c.p_value, rel=1e-12)


def test_paired_and_unpaired_tie_groups_on_real_paired_runs(shared_data: Path):
    """gpt-4.1 and its fine-tune on the same 20 airline / 40 retail test tasks (v0.1 runs, one trial each)."""
    files = {f"{a}": shared_data / "tau2" / f"v0.1_{a}_{d}-test_1trial.json" for a in ("gpt-4.1", "ft-gpt-4.1")
             for d in ("retail",)}  # fmt: skip
    res = tauk.load(files)
    runs = board_from_runs(res)
    a = analyze(runs.board, trajectories=runs.trajectories, tasks=runs.tasks)
    t = a.ranking.summary()
    assert "rank [paired]" in t.columns and "tier paired" in t.columns
    f = a.ranking.to_frame()
    assert f["has_trajectories"].all() and set(f["submission_id"]) == {"gpt-4.1", "ft-gpt-4.1"}
    pair = a.ranking.pairs.row(0, named=True)
    c = tauk.stats.compare(res, pair["a"], pair["b"], pool_setups=True)
    assert pair["p_paired"] == pytest.approx(c.p_value, rel=1e-12)
    assert pair["p_unpaired"] == pytest.approx(welch_pvalue(
        c.tasks["u_a"].to_numpy(), c.tasks["u_b"].to_numpy())[1], rel=1e-12)  # fmt: skip


def test_shared_board_domains(shared_data: Path):
    r = domain_ranking(row_intervals(recover(shared_data / "leaderboard")))
    d = r.domains.filter(pl.col("modality") == "text")
    assert d["n_ranked"].sum() + d["n_left_out"].sum() == r.rows.to_frame().filter(
        pl.col("modality") == "text").height  # fmt: skip
    f = r.to_frame()
    assert (f["rank_low"] <= f["rank"]).all() and (f["rank"] <= f["rank_high"]).all()
    assert (f["rank_low_simultaneous"] <= f["rank_low"]).all() and (f["rank_high"] <= f["rank_high_simultaneous"]).all()
    assert f.filter(pl.col("rank") == 1)["possibly_best"].all()
    assert not f["has_trajectories"].any()
    adj = r.pairs.filter(pl.col("adjacent"))
    assert adj.height == int(r.domains["n_adjacent"].sum())
    # tiers change exactly after the separable adjacent pairs
    for (dom, mod), part in f.group_by(["domain", "modality"]):
        seps = adj.filter(pl.col("domain") == dom, pl.col("modality") == mod)["separable"].sum()
        assert part["tier"].max() == 1 + seps


def test_well_separated_and_identical_rows():
    import json
    import tempfile

    d = Path(tempfile.mkdtemp())
    from math import comb

    hists = {"a": (1, 1, 2, 6, 40), "b": (15, 5, 5, 5, 20), "c": (40, 6, 2, 1, 1), "d": (40, 6, 2, 1, 1)}
    for name, h in hists.items():
        pub = [round(100 * sum(h[c] * comb(c, k) / comb(4, k) for c in range(5)) / 50, 2) for k in range(1, 5)]
        doc = {"model_name": name, "model_organization": "o", "submitting_organization": "o",
               "submission_date": "2026-01-01", "results": {"airline": {f"pass_{k}": v for k, v in enumerate(pub, 1)}}}
        (d / f"{name}_o_2026-01-01.json").write_text(json.dumps(doc))
    r = domain_ranking(row_intervals(recover(d, decimals=2)))
    f = {x["submission_id"]: x for x in r.to_frame().iter_rows(named=True)}
    assert (f["a_o_2026-01-01"]["rank_low"], f["a_o_2026-01-01"]["rank_high"]) == (1, 1)
    assert (f["c_o_2026-01-01"]["rank_low"], f["d_o_2026-01-01"]["rank_high"]) == (3, 4)
    assert f["c_o_2026-01-01"]["tier"] == f["d_o_2026-01-01"]["tier"] == 3
    with pytest.raises(TaukError, match="question"):
        domain_ranking(r.rows, question="new")


def test_rows_of_different_setups_are_said_to_be_ranked_together(shared_data: Path):
    """The leaderboard ranks rows of different user simulators, τ²-bench versions and retrieval configurations
    together; the ranking says so per (domain, modality), with the fields and values that differ."""
    from tauk.io.leaderboard import load_leaderboard

    board = load_leaderboard(shared_data / "leaderboard")
    r = domain_ranking(row_intervals(recover(shared_data / "leaderboard")))
    ranked = r.to_frame().join(board.select("submission_id", "domain", "modality", "user_simulator",
                                            "tau2_bench_version", "retrieval_config"),
                               on=["submission_id", "domain", "modality"], how="left")  # fmt: skip
    notes = r.summary().notes
    for d in r.domains.iter_rows(named=True):
        part = ranked.filter(pl.col("domain") == d["domain"], pl.col("modality") == d["modality"])
        users = set(part["user_simulator"].fill_null("not published").to_list())
        versions = {v.removeprefix("v") for v in part["tau2_bench_version"].fill_null("not published").to_list()}
        retrieval = set(part["retrieval_config"].fill_null("not published").to_list())
        differs = len(users) > 1 or len(versions) > 1 or len(retrieval) > 1
        assert (d["setups_differ"] is not None) == differs, d
        assert ("user_simulator (" in (d["setups_differ"] or "")) == (len(users) > 1)
        said = [n for n in notes if n.startswith(f"{d['domain']} ({d['modality']}): the ranked rows ran different")]
        assert len(said) == int(differs)
    # the text leaderboard mixes user simulators in retail (v0.1.3 gpt-4.1 rows with v1.0.1 gpt-5.2 rows)
    retail = r.domains.filter(pl.col("domain") == "retail", pl.col("modality") == "text").row(0, named=True)
    assert "user_simulator" in retail["setups_differ"] and "tau2_bench_version" in retail["setups_differ"]


def test_rows_of_one_setup_get_no_setup_note():
    import json
    import tempfile
    from math import comb

    d = Path(tempfile.mkdtemp())
    for name, h in {"a": (1, 1, 2, 6, 40), "b": (15, 5, 5, 5, 20)}.items():
        pub = [round(100 * sum(h[c] * comb(c, k) / comb(4, k) for c in range(5)) / 50, 2) for k in range(1, 5)]
        doc = {"model_name": name, "model_organization": "o", "submitting_organization": "o",
               "submission_date": "2026-01-01",
               "methodology": {"user_simulator": "gpt-5.2", "tau2_bench_version": "v1.0.1" if name == "a" else "1.0.1"},
               "results": {"airline": {f"pass_{k}": v for k, v in enumerate(pub, 1)}}}  # fmt: skip
        (d / f"{name}_o_2026-01-01.json").write_text(json.dumps(doc))
    r = domain_ranking(row_intervals(recover(d, decimals=2)))
    assert r.domains["n_ranked"].to_list() == [2] and r.domains["setups_differ"].to_list() == [None]
    assert not any("different setups" in n for n in r.summary().notes)

"""tauk.leaderboard.rows: per-row intervals and noise floor, checked against the trajectories' own statistics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import tauk
from tauk.errors import TaukError
from tauk.leaderboard import recover, row_intervals, task_values


def _board(tmp_path: Path, results: dict, name: str = "gpt-4o_sierra_2024-06-20") -> Path:
    doc = {"model_name": "gpt-4o", "model_organization": "OpenAI", "submitting_organization": "Sierra",
           "submission_date": "2024-06-20", "results": results}  # fmt: skip
    (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    return tmp_path


def test_row_figures_equal_the_trajectories_statistics(tmp_path: Path, shared_data: Path):
    """The τ-bench gpt-4o airline row as its README publishes it, against the same run's 200 trajectories."""
    res = tauk.load(shared_data / "taubench" / "gpt-4o_airline_4trials.json")
    board = _board(tmp_path, {"airline": {"pass_1": 42.0, "pass_2": 27.3, "pass_3": 22.0, "pass_4": 20.0}})
    rows = row_intervals(recover(board))
    truth = tauk.stats.pass_hat_k(res).to_frame()
    got = rows.passk
    for c in ("estimate", "ci_low", "ci_high", "rerun_ci_low", "rerun_ci_high", "se_tasks"):
        assert np.max(np.abs(got[c].to_numpy() - truth[c].to_numpy())) <= 1e-12, c
    cons = tauk.stats.consistency(res).to_frame().row(0, named=True)
    r = rows.to_frame().row(0, named=True)
    assert r["mdd_single_runs"] == pytest.approx(cons["mdd_single_runs"], abs=1e-12)
    assert r["mdd_size"] == pytest.approx(cons["mdd_single_runs_size"], abs=1e-12)
    assert r["flip_share"] == pytest.approx(cons["flip_rate"], abs=1e-12)
    assert r["sd_single_run"] == pytest.approx(cons["sd_single_run"], abs=1e-12)
    assert r["published_1"] == 42.0 and r["status"] == "recovered"


def test_every_row_with_pass_1_to_4_has_an_interval_or_a_flag(shared_data: Path):
    rows = row_intervals(recover(shared_data / "leaderboard"))
    f = rows.to_frame().filter(pl.col("published_ks") == "1-4")
    assert f.height == 74
    rec = f.filter(pl.col("status") == "recovered")
    assert rec["ci_low"].is_not_null().all() and rec["rerun_ci_low"].is_not_null().all()
    assert (rec["ci_low"] <= rec["pass_1"]).all() and (rec["pass_1"] <= rec["ci_high"]).all()
    assert (np.abs(rec["pass_1"] * 100 - rec["published_1"]) <= 0.05 + 1e-9).all()
    bad = f.filter(pl.col("status") != "recovered")
    assert bad["residual"].is_not_null().all() and bad["ci_low"].is_null().all()
    assert rec["mdd_single_runs"].is_not_null().all()  # every text row with 4 trials flips on ≥ 3 tasks


def test_one_trial_rows_say_why_they_have_no_noise_floor(tmp_path: Path):
    doc = {"model_name": "v", "model_organization": "o", "submitting_organization": "o", "submission_date": "2026-01-01",
           "modality": "voice", "results": {"airline": {"pass_1": 58.0}}}  # fmt: skip
    (tmp_path / "v_o_2026-01-01.json").write_text(json.dumps(doc))
    r = row_intervals(recover(tmp_path)).to_frame().row(0, named=True)
    assert r["trials"] == 1 and r["mdd_single_runs"] is None and "one trial" in r["note"]
    lo, hi = r["ci_low"], r["ci_high"]
    import numpy as np
    from scipy import stats

    # one trial per task: Blaker's exact interval on 29 / 50 (inside Clopper–Pearson's), by brute force over p
    grid = np.linspace(0.25, 0.9, 65001)
    pmf = stats.binom.pmf(np.arange(51)[None, :], 50, grid[:, None])
    tails = np.minimum(np.cumsum(pmf, axis=1), np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1])
    p_value = (pmf * (tails <= tails[:, [29]] * (1 + 1e-7))).sum(axis=1)
    inside = grid[p_value > 0.05]
    assert (lo, hi) == pytest.approx((inside.min(), inside.max()), abs=2e-5)
    cp = stats.binomtest(29, 50).proportion_ci(method="exact")
    assert cp.low < lo < hi < cp.high


def test_task_values():
    assert task_values(((4, 1, 2), (4, 4, 1)), 1).tolist() == [0.25, 0.25, 1.0]
    assert task_values(((4, 4, 1), (3, 3, 1)), 4).tolist() == [1.0]


def test_tables_render_and_carry_keys(tmp_path: Path):
    board = _board(tmp_path, {"airline": {"pass_1": 42.0, "pass_2": 27.3, "pass_3": 22.0, "pass_4": 20.0},
                              "retail": {"pass_1": 64.2}})  # fmt: skip
    rows = row_intervals(recover(board))
    t = rows.summary()
    for text in (t.to_text(), t.to_markdown(), t.to_latex(), t.to_html(), t.to_csv()):
        assert "gpt-4o_sierra_2024-06-20" in text.replace("\\allowbreak{}", "").replace("\\_", "_")
    assert rows.to_frame().columns[:2] == ["submission_id", "domain"]
    assert rows.passk.columns[:3] == ["submission_id", "domain", "k"]
    recs = rows.records()
    assert [len(r["pass_hat_k"]) for r in recs] == [4, 1]
    with pytest.raises(TaukError, match="interval"):
        row_intervals(recover(board), ci=None)

"""Scoring on the real trial logs in ../shared/data: parity with every recorded reward, re-grading, τ-bench."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.scoring import RegradeWarning, action_checks, communicate_checks, score

pytestmark = pytest.mark.shared_data


def _load(path: Path) -> tauk.Results:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        return tauk.load(str(path), progress=False)


def conformant_files(shared: Path) -> list[Path]:
    return [*sorted((shared / "tau2").glob("*.json")), shared / "nonconformant" / "adaptive-agent_airline_wrapper_infra-error.json"]


def test_parity_every_conformant_simulation(shared_data):
    """score(evaluation="all") reproduces the recorded reward of every simulation in every conformant file."""
    checked = 0
    for path in conformant_files(shared_data):
        res = _load(path)
        s = score(res, evaluation="all")
        assert s.height == res.trials.height
        rec = s.filter(pl.col("has_reward_info"))
        bad = rec.filter(pl.col("score_reward").is_null() | ((pl.col("score_reward") - pl.col("reward")).abs() > 1e-9))
        assert bad.height == 0, (path.name, bad.select("simulation_id", "reward", "score_reward", "failure").rows())
        # both recomputed components agree with every recorded check list too
        for comp, recorded in (("communicate", "recorded_communicate"), ("action", "recorded_action")):
            cmp = rec.filter(pl.col(f"{comp}_source") == "recomputed", pl.col(recorded).is_not_null())
            assert (cmp.get_column(comp) == cmp.get_column(recorded)).all(), (path.name, comp)
        checked += rec.height
    assert checked >= 400


def test_parity_counts_recomputation(shared_data):
    """On files with task definitions the components really are recomputed, not copied from the record."""
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    s = score(res)
    assert s.get_column("communicate_source").unique().to_list() == ["recomputed"]
    assert s.get_column("action_source").unique().to_list() == ["recomputed"]


def test_voice_directory_has_no_reward_info(shared_data):
    s = score(_load(shared_data / "tau2-dir-voice"))
    assert s.height > 0
    assert s.get_column("failure").to_list() == ["no_reward_info"] * s.height
    assert s.get_column("score_reward").null_count() == s.height


def test_premature_endings_file(shared_data):
    s = score(_load(shared_data / "tau2" / "v0.1_qwen2.5-7b_airline_1trial_premature-endings.json"))
    prem = s.filter(~pl.col("termination_reason").is_in(["user_stop", "agent_stop"]))
    assert prem.height > 0
    assert (prem.get_column("score_reward") == 0.0).all()
    assert prem.get_column("failure").str.starts_with("premature:").all()
    assert (s.filter(pl.col("failure").is_null()).get_column("score_reward") == 1.0).all()


def test_failure_attribution_airline(shared_data):
    s = score(_load(shared_data / "tau2" / "v1.0_whissle_airline_1trial.json"))
    fails = s.filter(pl.col("score_reward") == 0.0)
    assert fails.get_column("failure").is_in(["DB", "COMMUNICATE", "DB+COMMUNICATE"]).all()
    assert s.filter(pl.col("score_reward") == 1.0).get_column("failure").null_count() == s.filter(
        pl.col("score_reward") == 1.0
    ).height


def test_explanations_real(shared_data):
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    s = score(res)
    cc = communicate_checks(res)
    per_sim = cc.group_by("simulation_id").agg(pl.col("met").all().cast(pl.Float64).alias("c"))
    j = s.join(per_sim, on="simulation_id", how="inner")
    assert (j.get_column("c") == j.get_column("communicate")).all()
    assert cc.filter(pl.col("met")).get_column("message_idx").null_count() == 0
    msgs = res.messages.join(cc.filter(pl.col("met")), on=["simulation_id", "message_idx"], how="inner")
    assert (msgs.get_column("role") == "assistant").all()
    ac = action_checks(res)
    assert ac.height == res.expected_actions.join(res.trials.select("run_id", "task_id"), on=["run_id", "task_id"]).height
    calls = res.tool_calls.join(ac.filter(pl.col("matched")), on=["simulation_id", "call_idx"], how="inner")
    assert (calls.get_column("name") == calls.get_column("name_right")).all()


def test_every_evaluation_type_on_real_data(shared_data):
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-test_1trial.json")  # basis ENV_ASSERTION [+ ACTION]
    base = score(res)
    ign = score(res, evaluation="all_ignore_basis")
    assert (ign.get_column("score_reward") <= base.get_column("score_reward")).all()
    assert score(res, evaluation="all_with_nl_assertions").get_column("score_reward").equals(base.get_column("score_reward"))
    with pytest.raises(tauk.EvaluationError, match="ACTION"):
        score(res, evaluation="env")  # the transfer tasks gate on ACTION too
    env_only = score(res, evaluation="env", reward_basis=["ENV_ASSERTION"])
    assert env_only.height == base.height


# -------------------------------------------------------------------------------------------------- re-grade
def test_regrade_same_definitions_reproduces_record(shared_data):
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegradeWarning)
        s = score(res, tasks=shared_data / "tasks" / "v0.1.0_airline_tasks.json")
    assert s.get_column("task_defined").all()
    assert not s.get_column("db_env_nl_reverifiable").any()
    assert ((s.get_column("score_reward") - s.get_column("reward")).abs() < 1e-9).all()


def test_regrade_retail_head_definitions(shared_data):
    """Head retail tasks grade on DB × NL_ASSERTION: the new basis is applied, NL taken from the record."""
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_retail-test_1trial.json")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        s = score(res, tasks=str(shared_data / "tasks" / "head_retail_tasks.json"))
    known = s.filter(pl.col("task_defined"))
    assert known.height > 0
    assert known.get_column("score_basis").list.contains("NL_ASSERTION").any()


def test_regrade_reports_missing_tasks(shared_data, tmp_path):
    import json

    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    # another domain's task definitions: refused by domain
    with pytest.raises(tauk.TaukError, match="re-grading with mock task definitions, but .* is airline"):
        score(res, tasks=shared_data / "tasks" / "v0.1.0_mock_tasks.json")
    tasks = json.loads((shared_data / "tasks" / "v0.1.0_airline_tasks.json").read_text())
    # definitions of the same domain sharing no id with the results: refused, not a column of nulls
    other = tmp_path / "other_ids.json"
    other.write_text(json.dumps([{**t, "id": f"x{t['id']}"} for t in tasks]))
    with pytest.raises(tauk.EvaluationError, match="none of the"):
        score(res, tasks=other)
    # definitions for only some of the tasks: those simulations are reported and get a null reward
    ids = sorted(set(res.trials["task_id"]))
    keep = [t for t in tasks if str(t["id"]) not in ids[:5]]
    part = tmp_path / "part.json"
    part.write_text(json.dumps(keep))
    with pytest.warns(RegradeWarning, match="5 task id.s. of the results are not in the new task definitions"):
        s = score(res, tasks=part)
    missing = s.filter(~pl.col("task_defined"))
    assert set(missing["task_id"]) == set(ids[:5])
    assert missing.get_column("failure").unique().to_list() == ["task_missing"]
    assert missing.get_column("score_reward").null_count() == missing.height


# ---------------------------------------------------------------------------------------------------- τ-bench
def test_taubench_r_outputs_recomputed(shared_data):
    res = _load(shared_data / "taubench" / "gpt-4o_airline_4trials.json")
    s = score(res)
    known = s.filter(pl.col("score_reward").is_not_null())
    assert known.height >= 195
    assert ((known.get_column("score_reward") - known.get_column("reward")).abs() < 1e-9).all()
    rec = s.filter(pl.col("recorded_communicate").is_not_null())
    assert rec.height > 0 and (rec.get_column("communicate") == rec.get_column("recorded_communicate")).all()

"""The newest upstream shapes: a bare list of τ²-bench simulations (as leaderboard submissions ship them), a
directory-format run given as its ``results.json``, JSON Lines (a hint, not a byte offset), ``MultiToolMessage``."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest
from upstream_tau2 import run_upstream

import tauk
from tauk.scoring import counters

WRAPPER = "nonconformant/adaptive-agent_airline_wrapper_infra-error.json"


def _bare_list(shared_data: Path, tmp_path: Path) -> Path:
    """The wrapper's simulations as a bare JSON list (the wrapper's keys dropped: nothing else changed)."""
    sims = json.loads((shared_data / WRAPPER).read_text())["simulations"]
    path = tmp_path / "claude-opus-4-6_airline_submission.json"
    path.write_text(json.dumps(sims))
    return path


def test_bare_list_reads_like_its_recorded_rewards(shared_data, expected, tmp_path):
    path = _bare_list(shared_data, tmp_path)
    exp = expected[WRAPPER]
    with pytest.warns(tauk.LoadWarning, match="bare list of τ²-bench simulations"):
        res = tauk.load(path)
    run = res.runs.row(0, named=True)
    assert (run["format"], run["agent"], run["domain"]) == ("tau2-list", "claude-opus-4-6", "airline")
    assert [i.kind for i in res.report.issues] == ["simulation_list"]
    sims = json.loads(path.read_text())
    tr = res.trials
    assert tr.height == len(sims) == exp["n_simulations"] + exp["infra_error_count"]
    assert run["n_infra_errors"] == exp["infra_error_count"] == sum(
        s["termination_reason"] == "infrastructure_error" for s in sims)  # fmt: skip
    assert tr["reward"].to_list() == [(s["reward_info"] or {}).get("reward") for s in sims]
    # pass^1 under both conventions: EXPECTED.json's figures (the published 98.0 is the infra-as-failure one)
    drop = tauk.stats.pass_hat_k(res, k=1, ci=None).to_frame()
    fail = tauk.stats.pass_hat_k(res, k=1, ci=None, infra="fail").to_frame()
    assert drop["estimate"].to_list() == pytest.approx([exp["pass_hat_k"]["1"]])
    assert fail["estimate"].to_list() == pytest.approx([exp["pass_hat_k_infra_as_failure"]["1"]])
    assert drop["n_tasks"].to_list() == [exp["n_tasks"]]
    # never "not evaluated": the summary has its figure
    summary = tauk.stats.summarize(res, by="agent", ci=None)
    assert summary.pass_hat_k.height == 1 and summary.pass_hat_k["estimate"][0] == pytest.approx(1.0)


def test_bare_list_messages_and_folder_scan(shared_data, tmp_path):
    path = _bare_list(shared_data, tmp_path)
    wrapper = shutil.copy(shared_data / WRAPPER, tmp_path / "wrapper.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        both = tauk.load({"list": path, "wrapper": wrapper})
    m = both.messages
    # the same simulations, the same messages, read from the two shapes
    per = m.group_by("run_id").agg(pl.len(), pl.col("content").drop_nulls().str.len_chars().sum()).sort("run_id")
    assert per["len"].n_unique() == 1 and per["content"].n_unique() == 1 and per["len"][0] > 0
    assert both.tool_calls.group_by("run_id").len()["len"].n_unique() == 1
    # a folder scan finds the list (it is a results file), not only τ-bench lists; other JSON lists are passed over
    folder = tmp_path / "scan"
    folder.mkdir()
    shutil.copy(path, folder / path.name)
    (folder / "notes.json").write_text(json.dumps([{"a": 1}]))
    shutil.copy(shared_data / "taubench/gpt-4o_airline_4trials.json", folder / "tb.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        scanned = tauk.load(folder)
    assert sorted(scanned.runs["format"].to_list()) == ["tau2-list", "taubench"]


def test_bare_list_counters_equal_upstream(shared_data, tmp_path):
    """upstream's compute_metrics over the same simulations (its Results built around the list)."""
    path = _bare_list(shared_data, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        mine = counters.head_counters(tauk.load(path).trials, by=None).row(0, named=True)
    theirs = run_upstream(UPSTREAM_LIST_METRICS, str(path), str(shared_data / "tau2/v1.0_whissle_airline_1trial.json"),
                          str(shared_data / "tasks/head_airline_tasks.json"))  # fmt: skip
    _assert_counters(mine, theirs)


UPSTREAM_LIST_METRICS = """
import json, sys
from tau2.data_model.simulation import Results, SimulationRun, Info
from tau2.data_model.tasks import Task
from tau2.metrics.agent_metrics import compute_metrics
sims = [SimulationRun.model_validate(s) for s in json.load(open(sys.argv[1]))]
info = Info.model_validate(json.load(open(sys.argv[2]))["info"])
tasks = [Task.model_validate(t) for t in json.load(open(sys.argv[3]))]
m = compute_metrics(Results(info=info, tasks=tasks, simulations=sims))
print(json.dumps(m.model_dump()))
"""

# tauk's counter -> upstream's AgentMetrics field
SCALARS = {
    "n_simulations": "total_simulations", "db_match": "db_match_count", "db_mismatch": "db_mismatch_count",
    "db_not_checked": "db_not_checked", "auth_succeeded": "auth_succeeded", "auth_failed": "auth_failed",
    "auth_not_needed": "auth_not_needed", "auth_not_checked": "auth_not_checked",
    "read_actions": "total_read_actions", "read_actions_correct": "correct_read_actions",
    "write_actions": "total_write_actions", "write_actions_correct": "correct_write_actions",
    "termination_user_stop": "termination_user_stop", "termination_agent_stop": "termination_agent_stop",
    "termination_max_steps": "termination_max_steps", "termination_error": "termination_error",
    "termination_infrastructure_error": "termination_infrastructure_error",
    "sims_with_unresponsive_period": "sims_with_unresponsive_period",
    "sims_with_responsiveness_info": "sims_with_responsiveness_info",
}  # fmt: skip


def _assert_counters(mine: dict, theirs: dict) -> None:
    for ours, up in SCALARS.items():
        assert mine[ours] == theirs[up], (ours, mine[ours], theirs[up])
    crit = {k: v for k, v in theirs["sims_by_first_critical_source"].items()}
    assert {s: mine[f"first_critical_{s}"] for s in ("agent", "user", "none") if mine[f"first_critical_{s}"]} == crit
    assert mine["agent_errors"] == sum(theirs["agent_errors_by_severity"].values())
    assert mine["user_errors"] == sum(theirs["user_errors_by_severity"].values())


def test_results_json_path_reads_the_directory(shared_data):
    folder = tauk.load(shared_data / "tau2-dir-voice")
    meta = tauk.load(shared_data / "tau2-dir-voice" / "results.json")
    assert meta.runs["format"].to_list() == ["tau2-dir"]
    assert meta.trials.drop("run_id").equals(folder.trials.drop("run_id"))
    assert meta.runs.drop("run_id").equals(folder.runs.drop("run_id"))


def test_results_json_without_simulations_folder_says_so(shared_data, tmp_path):
    shutil.copy(shared_data / "tau2-dir-voice" / "results.json", tmp_path / "results.json")
    with pytest.raises(tauk.LoadError, match="simulations/ folder is not beside it"):
        tauk.load(tmp_path / "results.json")
    shutil.copy(shared_data / "tau2-dir-voice" / "results.json", tmp_path / "meta.json")
    (tmp_path / "simulations").mkdir()
    with pytest.raises(tauk.LoadError, match="pass the folder"):
        tauk.load(tmp_path / "meta.json")


def test_json_lines_gets_a_hint(shared_data, tmp_path):
    sims = json.loads((shared_data / WRAPPER).read_text())["simulations"][:3]
    path = tmp_path / "sims.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in sims) + "\n")
    with pytest.raises(tauk.LoadError) as err:
        tauk.load(path)
    assert "JSON Lines" in err.value.message and "[...]" in err.value.message
    path.write_text("[" + ",\n".join(json.dumps(s) for s in sims) + "]")  # the fix the hint names
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        assert tauk.load(path).trials.height == 3


MULTI = "tau2/v0.1_gpt-4.1_airline-test_1trial.json"


def test_multi_tool_message_results_are_kept(shared_data, tmp_path):
    """Two consecutive tool messages wrapped in one MultiToolMessage: the frames equal the unwrapped file's."""
    doc = json.loads((shared_data / MULTI).read_text())
    wrapped = 0
    for sim in doc["simulations"]:
        msgs = sim["messages"]
        for i in range(len(msgs) - 1):
            if msgs[i]["role"] == msgs[i + 1]["role"] == "tool":
                msgs[i : i + 2] = [{"role": "tool", "tool_messages": msgs[i : i + 2]}]
                wrapped += 1
                break
    assert wrapped > 0
    path, same = tmp_path / "multi.json", tmp_path / "unedited.json"
    path.write_text(json.dumps(doc))
    same.write_text(json.dumps(json.loads((shared_data / MULTI).read_text())))  # the same JSON writer
    original, edited = tauk.load(same), tauk.load(path)
    assert edited.messages.drop("run_id").equals(original.messages.drop("run_id"))
    calls = edited.tool_calls
    assert calls.drop("run_id").equals(original.tool_calls.drop("run_id"))
    assert calls.filter(pl.col("role") == "assistant")["result"].null_count() == \
        original.tool_calls.filter(pl.col("role") == "assistant")["result"].null_count()  # fmt: skip
    assert tauk.audit(edited).totals() == tauk.audit(original).totals()

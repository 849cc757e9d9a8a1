"""Loaders: every shared file loads; frames carry their keys and agree with the raw JSON."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.io.columns import (
    EXPECTED_ACTIONS_SCHEMA,
    MESSAGES_SCHEMA,
    RUNS_SCHEMA,
    TASKS_SCHEMA,
    TOOL_CALLS_SCHEMA,
    TRIALS_SCHEMA,
)


@pytest.fixture(scope="module")
def all_shared(shared_data: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        return tauk.load(shared_data)


def test_every_shared_results_file_loads(all_shared, expected, shared_data):
    sources = {Path(s).resolve() for s in all_shared.runs["source"]}
    for rel in expected:
        assert (shared_data / rel).resolve() in sources, rel
    assert (shared_data / "tau2-dir-voice").resolve() in sources
    # the folder scan skipped task files, the leaderboard and EXPECTED.json
    assert not any("leaderboard" in s or s.endswith("EXPECTED.json") for s in all_shared.runs["source"])


def test_frames_have_contract_schemas(all_shared):
    for frame, schema in [
        (all_shared.runs, RUNS_SCHEMA),
        (all_shared.trials, TRIALS_SCHEMA),
        (all_shared.messages, MESSAGES_SCHEMA),
        (all_shared.tool_calls, TOOL_CALLS_SCHEMA),
        (all_shared.tasks, TASKS_SCHEMA),
        (all_shared.expected_actions, EXPECTED_ACTIONS_SCHEMA),
    ]:
        assert dict(frame.schema) == schema


def test_keys_join(all_shared):
    tr, msgs, calls = all_shared.trials, all_shared.messages, all_shared.tool_calls
    assert tr.select("run_id", "simulation_id").is_duplicated().sum() == 0
    # every message and tool call belongs to a trial
    assert msgs.join(tr, on=["run_id", "simulation_id"], how="anti").height == 0
    assert calls.join(msgs, on=["run_id", "simulation_id", "message_idx"], how="anti").height == 0
    # message counts on trials (built without materialising messages) agree with the messages frame
    counts = msgs.group_by("run_id", "simulation_id").len()
    joined = tr.filter(pl.col("n_messages").is_not_null()).join(counts, on=["run_id", "simulation_id"], how="left")
    assert (joined["len"].fill_null(0) == joined["n_messages"]).all()
    ncalls = calls.group_by("run_id", "simulation_id").len()
    j2 = tr.join(ncalls, on=["run_id", "simulation_id"], how="left")
    assert (j2["len"].fill_null(0) == j2["n_tool_calls"].fill_null(0)).all()
    assert all_shared.runs["run_id"].n_unique() == all_shared.runs.height


@pytest.mark.parametrize("rel", ["tau2/v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json", "tau2/v1.0_whissle_airline_1trial.json"])
def test_trials_agree_with_raw_json(shared_data, rel):
    raw = json.loads((shared_data / rel).read_text())
    res = tauk.load(shared_data / rel)
    tr = res.trials
    assert tr.height == len(raw["simulations"])
    for sim, row in zip(raw["simulations"], tr.iter_rows(named=True)):
        assert row["simulation_id"] == sim["id"]
        assert row["task_id"] == str(sim["task_id"])
        assert row["reward"] == sim["reward_info"]["reward"]
        assert row["termination_reason"] == sim["termination_reason"]
        assert row["n_messages"] == len(sim["messages"])
        assert row["recorded_reward_basis"] == sim["reward_info"]["reward_basis"]
        assert row["agent_cost"] == sim["agent_cost"]
    run = res.runs.row(0, named=True)
    assert run["agent"] == (raw["info"]["agent_info"]["llm"] or raw["info"]["agent_info"]["implementation"])
    assert run["domain"] == raw["info"]["environment_info"]["domain_name"]
    assert run["num_trials"] == raw["info"]["num_trials"]
    # messages: content and tool-call arguments round-trip (arguments as canonical JSON text)
    sim0 = raw["simulations"][0]
    msgs = res.messages.filter(pl.col("simulation_id") == sim0["id"]).sort("message_idx")
    assert msgs["content"].to_list() == [m.get("content") for m in sim0["messages"]]
    calls = res.tool_calls.filter(pl.col("simulation_id") == sim0["id"]).sort("call_idx")
    gold = [tc for m in sim0["messages"] for tc in (m.get("tool_calls") or [])]
    assert [json.loads(a) for a in calls["arguments"]] == [tc["arguments"] for tc in gold]
    assert calls["name"].to_list() == [tc["name"] for tc in gold]


def test_directory_format_voice(shared_data):
    res = tauk.load(shared_data / "tau2-dir-voice")
    assert res.runs["format"].to_list() == ["tau2-dir"]
    tr = res.trials
    assert tr.height == len(list((shared_data / "tau2-dir-voice" / "simulations").glob("*.json")))
    assert tr["n_messages"].null_count() == tr.height  # full duplex: ticks, no messages
    assert tr["has_reward_info"].sum() == 0 and tr["reward"].null_count() == tr.height
    assert tr["duration"].dtype == pl.Float64 and tr["duration"].null_count() == 0  # written as strings
    assert res.messages.height == 0


def test_wrapper_loads_with_warning(shared_data):
    with pytest.warns(tauk.LoadWarning, match="wrapper"):
        res = tauk.load(shared_data / "nonconformant/adaptive-agent_airline_wrapper_infra-error.json")
    run = res.runs.row(0, named=True)
    assert run["format"] == "tau2-wrapper" and run["domain"] == "airline" and run["n_infra_errors"] == 1
    assert res.report.counts() == {"wrapper_without_info": 1}


def test_taubench_shape(shared_data):
    res = tauk.load(shared_data / "taubench/gpt-4o_airline_4trials.json")
    tr = res.trials
    assert tr.height == 200 and tr["task_id"].n_unique() == 50
    assert res.runs.row(0, named=True)["num_trials"] == 4
    assert res.runs.row(0, named=True)["agent"] == "gpt-4o" and res.runs.row(0, named=True)["domain"] == "airline"
    assert tr.select((pl.col("recorded_db") * pl.col("recorded_communicate") - pl.col("reward")).abs().max()).item() < 1e-12
    assert res.tasks.height == 50 and res.expected_actions.height > 0


def test_mapping_labels_and_agent_override(shared_data):
    a = shared_data / "tau2/v0.1_gpt-4.1_airline-test_1trial.json"
    b = shared_data / "tau2/v0.1_ft-gpt-4.1_airline-test_1trial.json"
    res = tauk.load({"base": a, "ft": b})
    assert res.runs["run_id"].to_list() == ["base", "ft"]
    assert res.runs["agent"].to_list() == ["base", "ft"]
    assert set(res.trials["agent"]) == {"base", "ft"}
    res2 = tauk.load([a, b], agent="x")
    assert set(res2.runs["agent"]) == {"x"}


def test_an_agent_mapping_key_that_names_no_run_is_refused(tmp_path):
    """agent={...} relabels runs by run id or path; a key that names no loaded run (a typo) used to be ignored, the
    run keeping its own label with no word (the loader audit's open question)."""
    from tauk.errors import TaukError

    sample = Path(__file__).resolve().parents[1] / "data" / "atlas-small_airline.json"
    ok = tauk.load(sample, agent={str(sample): "X"})
    assert ok.runs["agent"].to_list() == ["X"]
    with pytest.raises(TaukError, match="agent= names no loaded run: 'nope'"):
        tauk.load(sample, agent={"nope": "X"})
    # a folder holding a monolithic results.json is named by the folder, as the user gave it
    import shutil

    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(sample, folder / "results.json")
    assert tauk.load(folder, agent={str(folder): "Y"}).runs["agent"].to_list() == ["Y"]


def test_glob_and_list(shared_data):
    res = tauk.load(str(shared_data / "tau2" / "v0.2_*.json"))
    assert res.runs.height == 5
    assert set(res.runs["format_version"]) == {"<1.0"}


def test_load_tasks(shared_data):
    tasks, actions = tauk.load_tasks(shared_data / "tasks/head_airline_tasks.json")
    raw = json.loads((shared_data / "tasks/head_airline_tasks.json").read_text())
    assert tasks.height == len(raw)
    assert actions.height == sum(len((t.get("evaluation_criteria") or {}).get("actions") or []) for t in raw)
    assert tasks["run_id"].null_count() == tasks.height


def test_sample_data_loads_without_issues():
    sample = Path(__file__).resolve().parents[1] / "data"
    files = sorted(sample.glob("*.json"))
    assert files, "the bundled sample (tauk synth --sample) is missing from data/"
    res = tauk.load(sample)
    assert res.report.ok
    assert res.trials.height > 0 and res.messages.height > 0


def test_folder_scan_reads_each_file_once(tmp_path, monkeypatch):
    """A scanned folder: every JSON file read once (no peek then read), results files loaded, other JSON objects
    and lists passed over, a results file with an error raised by name, a folder of no results an error."""
    from tauk.io import files, read

    sample = Path(__file__).resolve().parents[1] / "data"
    folder = tmp_path / "scan"
    folder.mkdir()
    for name in ("baseline_airline.json", "atlas-small_retail.json"):
        (folder / name).write_bytes((sample / name).read_bytes())
    (folder / "config.json").write_text(json.dumps({"info": "not a run", "model": "x"}))
    (folder / "numbers.json").write_text("[1, 2, 3]")
    (folder / "tasks.json").write_text(json.dumps({"tasks": []}))
    reads: list[str] = []
    real = files.read_bytes

    def counting(path, **kw):  # noqa: ANN001, ANN003, ANN202
        reads.append(Path(path).name)
        return real(path, **kw)

    monkeypatch.setattr(read, "read_bytes", counting)
    res = tauk.load(folder)
    assert sorted(Path(s).name for s in res.runs["source"]) == ["atlas-small_retail.json", "baseline_airline.json"]
    assert sorted(reads) == sorted(p.name for p in folder.iterdir())  # once each
    # the same set as the peek-then-read path the store's ingest still uses
    from tauk.io.load import find_sources

    assert sorted(p.name for _, p in find_sources(folder, tauk.LoadReport())) == sorted(
        Path(s).name for s in res.runs["source"])
    # a results file with an error is not passed over: it is raised, naming the file
    bad = json.loads((sample / "baseline_airline.json").read_text())
    bad["simulations"][0]["reward_info"] = "broken"
    (folder / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(tauk.LoadError, match="bad.json"):
        tauk.load(folder)
    # only JSON that is not results: one error, not an empty load
    empty = tmp_path / "none"
    empty.mkdir()
    (empty / "config.json").write_text(json.dumps({"info": "not a run"}))
    with pytest.raises(tauk.LoadError, match="no results files found"):
        tauk.load(empty)

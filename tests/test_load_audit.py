"""Loader audit: every τ²-bench shape gets the same checks, task ids are one definition each, and files that are not
UTF-8 JSON text are named for what they are."""

from __future__ import annotations

import copy
import gzip
import json
import re
import unicodedata
import warnings
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.errors import LoadError

SAMPLE = Path(__file__).resolve().parents[1] / "data"
A = SAMPLE / "atlas-small_airline.json"


def _doc() -> dict:
    return json.loads(A.read_text())


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _lenient(inputs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        return tauk.load(inputs, strict=False, **kw)


def _refused_then_reported(path: Path, match: str, location: str, kind: str):
    """Strict: a LoadError matching ``match`` at ``location``; lenient: loaded with one ``kind`` in the report."""
    with pytest.raises(LoadError, match=match) as err:
        tauk.load(path)
    assert err.value.location == location
    res = _lenient(path)
    assert res.report.counts() == {kind: 1}
    return res


def _as_dir(tmp_path: Path, doc: dict) -> Path:
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    top = {k: v for k, v in doc.items() if k != "simulations"}
    _write(run / "results.json", top)
    for sim in doc["simulations"]:
        _write(run / "simulations" / f"{sim['id']}.json", sim)
    return run


def _shapes(tmp_path: Path, doc: dict) -> dict[str, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return {"file": _write(tmp_path / "mono.json", doc), "list": _write(tmp_path / "list.json", doc["simulations"]),
            "dir": _as_dir(tmp_path, doc)}  # fmt: skip


# ---- the same checks for a file, a directory and a bare list -------------------------------------------------------
@pytest.mark.parametrize("shape", ["file", "list", "dir"])
def test_respelled_infra_error_and_odd_reward_read_alike_in_every_shape(tmp_path, shape):
    doc = _doc()
    doc["simulations"][0]["termination_reason"] = "infra_error"
    doc["simulations"][1]["reward_info"]["reward"] = 5.0
    res = _lenient(_shapes(tmp_path, doc)[shape])
    first = res.trials.filter(res.trials["simulation_id"] == doc["simulations"][0]["id"])
    assert first["termination_reason"].to_list() == ["infrastructure_error"]
    counts = res.report.counts()
    assert counts.get("termination_reason_respelled") == 1 and counts.get("reward_out_of_range") == 1


def _stringify_calls(doc: dict, bad: bool = False) -> int:
    n = 0
    for sim in doc["simulations"]:
        for m in sim["messages"] or ():
            if m.get("tool_calls"):
                m["tool_calls"] = "[{'id': 1, 'name': (lambda: 0)}]" if bad else repr(m["tool_calls"])
                n += 1
    return n


@pytest.mark.parametrize("shape", ["file", "list", "dir"])
def test_unparsable_stringified_tool_calls_are_reported_in_every_shape(tmp_path, shape):
    doc = _doc()
    assert _stringify_calls(doc, bad=True) > 0
    path = _shapes(tmp_path, doc)[shape]
    with pytest.raises(LoadError, match="tool_calls string is neither JSON nor a Python literal") as err:
        tauk.load(path)
    if shape == "dir":  # the place names the simulation's own file
        assert "simulations/" in str(err.value) and "$.messages[" in str(err.value)
    res = _lenient(path)
    assert res.report.counts().get("unparsable_tool_calls", 0) > 0
    assert res.report.counts().get("stringified_tool_calls") == 1


def test_stringified_tool_calls_in_a_directory_run_are_reported_and_read(tmp_path):
    doc = _doc()
    plain = tauk.load(_write(tmp_path / "plain.json", doc)).tool_calls.height
    _stringify_calls(doc)
    res = _lenient(_as_dir(tmp_path, doc))
    assert res.report.counts().get("stringified_tool_calls") == 1
    assert res.tool_calls.height == plain > 0


def test_duplicate_simulation_id_in_a_directory_names_both_files(tmp_path):
    doc = _doc()
    run = _as_dir(tmp_path, doc)
    first = doc["simulations"][0]
    _write(run / "simulations" / "zz-copy.json", first)
    with pytest.raises(LoadError) as err:
        tauk.load(run)
    assert f"{first['id']}.json" in str(err.value) and "zz-copy.json" in str(err.value)


def test_duplicate_simulation_id_names_the_first_copy_by_its_place_in_the_file(tmp_path):
    doc = _doc()
    doc["simulations"][0]["trial"] = {"not": "a number"}  # skipped when lenient: positions shift by one
    doc["simulations"].append(copy.deepcopy(doc["simulations"][2]))
    res = _lenient(_write(tmp_path / "d.json", doc))
    dup = [i for i in res.report.issues if i.kind == "duplicate_simulation_id"]
    assert len(dup) == 1 and "first at $.simulations[2].id" in dup[0].message


# ---- task definitions ----------------------------------------------------------------------------------------------
def test_task_ids_with_different_definitions_are_refused_or_kept_once(tmp_path):
    doc = _doc()
    other = copy.deepcopy(doc["tasks"][0])
    other["evaluation_criteria"] = {"actions": [], "communicate_info": ["something else"]}
    doc["tasks"].append(other)
    path = _write(tmp_path / "t.json", doc)
    res = _refused_then_reported(path, r"reuse the id of a different definition", f"$.tasks[{len(doc['tasks']) - 1}].id",
                                 "conflicting_task_definitions")  # fmt: skip
    keys = res.tasks.group_by("run_id", "task_id").len()
    assert keys["len"].max() == 1 and res.tasks.height == len(doc["tasks"]) - 1
    joined = res.trials.join(res.tasks, on=["run_id", "task_id"], how="left")
    assert joined.height == res.trials.height == len(doc["simulations"])
    kept = res.tasks.filter(res.tasks["task_id"] == str(other["id"]))
    assert kept["communicate_info"].to_list()[0] != ["something else"]  # the first definition


@pytest.mark.parametrize("shape", ["file", "dir"])
def test_a_task_repeated_word_for_word_is_kept_once_and_reported(tmp_path, shape):
    doc = _doc()
    doc["tasks"].append(json.loads(json.dumps(doc["tasks"][0], indent=3)))
    res = tauk.load(_shapes(tmp_path, doc)[shape])  # not an error: the same definition
    assert res.report.counts() == {"duplicate_task_definition": 1}
    assert res.tasks.height == len(doc["tasks"]) - 1
    assert res.trials.join(res.tasks, on=["run_id", "task_id"]).height == len(doc["simulations"])


def test_task_id_in_another_unicode_normal_form_is_reported(tmp_path):
    doc = _doc()
    nfc = "caf\u00e9-task"
    old = doc["tasks"][0]["id"]
    doc["tasks"][0]["id"] = nfc
    for sim in doc["simulations"]:
        if sim["task_id"] == old:
            sim["task_id"] = unicodedata.normalize("NFD", nfc)
    res = _lenient(_write(tmp_path / "u.json", doc))
    issues = [i for i in res.report.issues if i.kind == "task_id_unicode_form"]
    assert len(issues) == 1 and "cafe\\u0301-task" in issues[0].message
    # kept as written (τ²-bench compares ids as they are): nothing renamed
    assert unicodedata.normalize("NFD", nfc) in res.trials["task_id"].to_list()


# ---- files that are not UTF-8 JSON text --------------------------------------------------------------------------
@pytest.mark.parametrize(("encode", "what"), [
    (gzip.compress, "gzip-compressed"),
    (lambda b: b.decode().encode("utf-16"), "UTF-16"),
    (lambda b: b.decode().encode("utf-32"), "UTF-32"),
])  # fmt: skip
def test_compressed_or_utf16_files_are_named_for_what_they_are(tmp_path, encode, what):
    path = tmp_path / "x.json"
    path.write_bytes(encode(A.read_bytes()))
    with pytest.raises(LoadError, match=f"not a JSON text file: {what}"):
        tauk.load(path)


def test_control_bytes_before_the_json_are_named_not_skipped(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b"\x1c" + A.read_bytes())
    with pytest.raises(LoadError, match=r"found '\\x1c'"):
        tauk.load(path)


# ---- numbers τ²-bench's models accept ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["file", "list", "dir"])
def test_whole_floats_where_integers_belong_are_read_as_integers(tmp_path, shape):
    doc = _doc()
    doc["info"]["num_trials"], doc["info"]["max_steps"] = 4.0, 100.0
    for sim in doc["simulations"]:
        sim["trial"] = float(sim["trial"])
    res = tauk.load(_shapes(tmp_path, doc)[shape])  # strict: upstream's pydantic models take 1.0 for an int
    assert res.report.counts() == ({"simulation_list": 1} if shape == "list" else {})
    got = dict(zip(res.trials["simulation_id"].to_list(), res.trials["trial"].to_list()))
    assert got == {s["id"]: s["trial"] for s in _doc()["simulations"]}
    if shape != "list":
        assert res.runs.select("num_trials", "max_steps").rows() == [(4, 100)]


@pytest.mark.parametrize(("where", "value"), [("trial", 1.5), ("trial", "1.5"), ("num_trials", 4.5),
                                              ("num_trials", "four")])  # fmt: skip
def test_a_fraction_or_text_where_an_integer_belongs_is_named(tmp_path, where, value):
    doc = _doc()
    (doc["info"] if where == "num_trials" else doc["simulations"][3])[where] = value
    path = _write(tmp_path / "x.json", doc)
    place = "$.info.num_trials" if where == "num_trials" else "$.simulations[3].trial"
    with pytest.raises(LoadError) as err:
        tauk.load(path)
    assert err.value.location == place and "not" in err.value.message
    res = _lenient(path)
    assert res.report.counts() == {"invalid_number": 1}
    if where == "num_trials":
        assert res.runs["num_trials"].to_list() == [None]  # never 4 from 4.5, nor a guess


@pytest.mark.parametrize("field", ["seed", "trial"])
def test_an_integer_beyond_64_bits_is_reported_not_nulled_in_silence(tmp_path, field):
    doc = _doc()
    doc["simulations"][0][field] = 2**70
    doc["info"]["seed"] = -(2**64)
    res = tauk.load(_write(tmp_path / "x.json", doc))  # valid upstream: not an error
    assert res.report.counts() == {"integer_out_of_range": 1}
    assert res.report.issues[0].message.startswith("2 integer(s) beyond 64 bits read as null")
    assert res.trials[field].to_list()[0] is None and res.runs["seed"].to_list() == [None]


def test_a_long_digit_string_is_read_exactly(tmp_path):
    doc = _doc()
    doc["simulations"][0]["seed"] = str(2**62 + 1)  # float() would round it
    res = tauk.load(_write(tmp_path / "x.json", doc))
    assert res.trials["seed"].to_list()[0] == 2**62 + 1


# ---- a store holding runs written by another version of tauk -------------------------------------------------------
def _as_older_version(root: Path, entry_file: Path, drop: str = "review_errors") -> str:
    """Rewrite one stored run's trials parts as a tauk without column ``drop`` wrote them (the entry's sizes kept
    true, so only the columns differ); the part's path."""
    import polars as pl

    e = json.loads(entry_file.read_text())
    for rel in e["files"]["trials"]:
        pl.read_parquet(root / rel).drop(drop).write_parquet(root / rel)
        e["sizes"][rel] = (root / rel).stat().st_size
    entry_file.write_text(json.dumps(e))
    return e["files"]["trials"][0]


@pytest.mark.parametrize("which", [0, 1])
def test_a_run_stored_by_another_version_is_named_and_refreshed_by_the_next_ingest(tmp_path, which):
    from tauk.store import StoreError

    root = tmp_path / "st"
    sources = [A, SAMPLE / "baseline_retail.json"]
    tauk.ingest(sources, root, progress=False)
    entries = sorted((root / "sources").glob("*.json"), key=lambda p: json.loads(p.read_text())["run_id"])
    old = _as_older_version(root, entries[which])
    with pytest.raises(StoreError, match="has the columns of another version of tauk .without review_errors.") as err:
        tauk.open(root).trials  # noqa: B018
    assert old in str(err.value)  # the old run's part, whichever comes first
    report = tauk.ingest(sources, root, progress=False)  # the sources did not change: refreshed all the same
    assert report.counts() == {"refreshed": 1} and len(report.unchanged) == 1
    res = tauk.open(root)
    assert "review_errors" in res.trials.columns and res.trials.height == 200


def test_a_store_all_of_another_version_is_refreshed_by_the_next_ingest(tmp_path):
    root = tmp_path / "st"
    tauk.ingest([A], root, progress=False)
    _as_older_version(root, next((root / "sources").glob("*.json")))
    assert "review_errors" not in tauk.open(root).trials.columns  # readable as it is
    assert tauk.ingest([A], root, progress=False).counts() == {"refreshed": 1}
    assert "review_errors" in tauk.open(root).trials.columns


# ---- leaderboard submissions ---------------------------------------------------------------------------------------
def _a_submission(shared_data: Path) -> Path:
    return sorted(f for f in (shared_data / "leaderboard").glob("*.json")
                  if f.name not in ("schema.json", "manifest.json"))[0]  # fmt: skip


def test_a_leaderboard_submission_with_a_byte_order_mark_loads_like_a_results_file(tmp_path, shared_data):
    sub = _a_submission(shared_data)
    path = tmp_path / sub.name
    path.write_bytes(b"\xef\xbb\xbf" + sub.read_bytes())
    assert tauk.load_leaderboard(path).drop("source").equals(tauk.load_leaderboard(sub).drop("source"))


@pytest.mark.parametrize("loader", ["load_leaderboard", "load_interaction_metrics"])
def test_one_submission_in_two_files_is_refused_not_counted_twice(tmp_path, shared_data, loader):
    from tauk.io import leaderboard

    sub = _a_submission(shared_data)
    (tmp_path / "x").mkdir()
    (tmp_path / "x.json").write_bytes(sub.read_bytes())
    (tmp_path / "x" / "submission.json").write_bytes(sub.read_bytes())
    with pytest.raises(LoadError, match=r"submission 'x' is read from two files .*x[/\\]submission.json"):
        getattr(leaderboard, loader)(tmp_path)
    one = tauk.load_leaderboard([sub, sub])  # the same file twice is read once
    assert one.height == tauk.load_leaderboard(sub).height > 0


# ---- task files ----------------------------------------------------------------------------------------------------
def test_a_task_file_defining_one_id_twice_differently_is_refused_by_place(tmp_path):
    tasks = _doc()["tasks"]
    other = copy.deepcopy(tasks[0])
    other["evaluation_criteria"] = {"actions": [], "communicate_info": ["something else"]}
    path = _write(tmp_path / "tasks.json", [*tasks, other])
    with pytest.raises(LoadError, match=r"defined twice, differently \(\$\[0\] and \$\[\d+\]\)") as err:
        tauk.load_tasks(path)
    assert err.value.location == f"$[{len(tasks)}].id"
    res = tauk.load(A)
    with pytest.raises(LoadError, match="defined twice"):  # re-grading with it names the same place
        tauk.score(res, tasks=path)
    repeated = _write(tmp_path / "repeated.json", [*tasks, tasks[0]])
    assert tauk.load_tasks(repeated)[0].height == len(tasks)  # a word-for-word repeat: one task


def test_a_wrapped_task_list_names_the_place_under_its_tasks_key(tmp_path):
    # {"tasks": [...]} (a results file given as tasks=, say) is unwrapped: the places are under $.tasks, not $
    doc = _doc()
    other = copy.deepcopy(doc["tasks"][0])
    other["evaluation_criteria"] = {"actions": [], "communicate_info": ["something else"]}
    doc["tasks"].append(other)
    path = _write(tmp_path / "results-as-tasks.json", doc)
    with pytest.raises(LoadError, match=r"\(\$\.tasks\[0\] and \$\.tasks\[\d+\]\)") as err:
        tauk.load_tasks(path)
    assert err.value.location == f"$.tasks[{len(doc['tasks']) - 1}].id"
    doc["tasks"][-1] = 7
    with pytest.raises(LoadError) as err:
        tauk.load_tasks(_write(tmp_path / "not-an-object.json", doc))
    assert err.value.location == f"$.tasks[{len(doc['tasks']) - 1}]"


# ---- message turn indices ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["file", "dir"])
def test_a_whole_float_turn_index_is_an_integer_and_a_fraction_is_named(tmp_path, shape):
    doc = _doc()
    sim = doc["simulations"][0]
    want = [m.get("turn_idx") for m in sim["messages"]]
    for m in sim["messages"]:
        if m.get("turn_idx") is not None:
            m["turn_idx"] = float(m["turn_idx"])
    res = tauk.load(_shapes(tmp_path / "whole", doc)[shape])  # valid upstream: strict loading reads it
    got = res.messages.filter(res.messages["simulation_id"] == sim["id"])["turn_idx"].to_list()
    assert got == want and res.report.counts() == {}
    sim["messages"][1]["turn_idx"] = 1.5
    path = _shapes(tmp_path / "frac", doc)[shape]
    with pytest.raises(LoadError, match=r"messages\[1\]\.turn_idx: Expected an integer, got 1\.5"):
        tauk.load(path).messages  # noqa: B018
    res = _lenient(path)
    assert res.messages.filter(res.messages["simulation_id"] == sim["id"]).height == 0  # never 1 from 1.5
    assert res.report.counts() == {"invalid_messages": 1}


@pytest.mark.parametrize("shape", ["file", "list", "dir"])
def test_a_reward_written_as_text_is_read_as_the_number(tmp_path, shape):
    doc = _doc()
    first, second = doc["simulations"][0], doc["simulations"][1]
    want = (first["reward_info"]["reward"], second["reward_info"]["reward"])
    first["reward_info"]["reward"] = str(float(want[0]))
    res = tauk.load(_shapes(tmp_path, doc)[shape])  # valid upstream (pydantic reads "1.0" as 1.0)
    assert res.trials.filter(res.trials["simulation_id"] == first["id"])["reward"].to_list() == [want[0]]
    second["reward_info"]["reward"] = "full marks"
    path = _shapes(tmp_path / "bad", doc)[shape]
    with pytest.raises(LoadError, match="'full marks' is not a number") as err:
        tauk.load(path)
    assert err.value.location.endswith("reward_info.reward")
    res = _lenient(path)  # as a reward of the wrong type: that simulation skipped and counted
    assert second["id"] not in res.trials["simulation_id"].to_list()
    assert res.trials.height == len(doc["simulations"]) - 1
    assert res.report.counts().get("invalid_simulation") == 1


# ---- what a directory run's simulations/ holds besides <id>.json -------------------------------------------------
@pytest.mark.parametrize("how", ["folder", "gzip"])
def test_simulations_kept_another_way_in_a_directory_run_are_not_passed_over(tmp_path, how):
    doc = _doc()
    run = _as_dir(tmp_path, doc)
    moved = run / "simulations" / f"{doc['simulations'][0]['id']}.json"
    if how == "folder":
        (run / "simulations" / "batch1").mkdir()
        moved.rename(run / "simulations" / "batch1" / moved.name)
        name = "batch1/"
    else:
        (run / "simulations" / (moved.name + ".gz")).write_bytes(gzip.compress(moved.read_bytes()))
        moved.unlink()
        name = moved.name + ".gz"
    (run / "simulations" / "README.txt").write_text("notes")  # other files are left alone
    with pytest.raises(LoadError, match=rf"1 entry in simulations/ that is not a simulation file .*{name}"):
        tauk.load(run)
    res = _lenient(run)
    assert res.report.counts() == {"unknown_in_simulations": 1}
    assert res.trials.height == len(doc["simulations"]) - 1


def test_tau_bench_records_of_one_task_carrying_different_tasks_are_named(tmp_path, shared_data):
    records = json.loads((shared_data / "taubench" / "gpt-4o_airline_4trials.json").read_text())
    tid = records[0]["task_id"]
    later = next(i for i, r in enumerate(records) if r["task_id"] == tid and i > 0)
    records[later]["info"]["task"]["instruction"] = "another version of the task"
    path = _write(tmp_path / "tb.json", records)
    res = _refused_then_reported(path, r"carry a task other than the first record of their task id",
                                 f"$[{later}].info.task", "conflicting_task_definitions")  # fmt: skip
    assert res.tasks.height == len({r["task_id"] for r in records})  # one definition per task, the first


def test_a_file_left_out_as_a_copy_counts_as_skipped_not_loaded(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.json").write_bytes(A.read_bytes())
    (tmp_path / "b.json").write_bytes(A.read_bytes())  # the same results under another name
    res = _lenient(tmp_path)
    assert res.runs.height == 1 and res.report.counts() == {"duplicate_run": 1}
    assert (res.report.files_loaded, res.report.files_skipped) == (1, 1)
    assert str(res.report).startswith("LoadReport: 1 file(s) loaded, 1 skipped")


def test_a_run_without_its_simulations_key_is_named_by_a_folder_scan(tmp_path):
    (tmp_path / "good.json").write_bytes(A.read_bytes())
    doc = _doc()
    doc["sims"] = doc.pop("simulations")  # a renamed key: a results file all the same
    _write(tmp_path / "renamed.json", doc)
    _write(tmp_path / "config.json", {"info": {"note": "not a run"}, "seed": 3})  # other JSON: left alone
    with pytest.raises(LoadError, match="missing required field 'simulations'") as err:
        tauk.load(tmp_path)
    assert err.value.path.endswith("renamed.json")
    res = _lenient(tmp_path)
    assert res.runs.height == 1 and res.report.counts() == {"unreadable_file": 1}


def test_a_list_of_results_objects_is_named_for_what_it_is(tmp_path):
    path = _write(tmp_path / "all.json", [_doc(), _doc()])
    what = "a JSON list of τ²-bench results (objects holding 'simulations')"
    with pytest.raises(LoadError, match=re.escape(what)):
        tauk.load(path)
    for target in (path, tmp_path):  # the file, and a folder scan meeting it: named, never passed over
        res = _lenient(target)
        assert res.report.counts() == {"unreadable_file": 1} and what in res.report.issues[0].message


# ---- reward_info without a reward --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["file", "list", "dir"])
def test_an_empty_reward_info_is_not_graded_and_never_a_rescored_success(tmp_path, shape):
    doc = _doc()
    i = next(j for j, s in enumerate(doc["simulations"]) if s["reward_info"]["reward"] == 0)
    sim = doc["simulations"][i]
    sim["reward_info"] = {}  # invalid upstream (reward is required): it records nothing
    res = _lenient(_shapes(tmp_path, doc)[shape])
    assert {k: v for k, v in res.report.counts().items() if k != "simulation_list"} == {"empty_reward_info": 1}
    row = res.trials.filter(res.trials["simulation_id"] == sim["id"])
    assert row.select("reward", "has_reward_info").rows() == [(None, False)]
    scored = tauk.score(res).filter(pl.col("simulation_id") == sim["id"])
    # before: DB absent ⇒ 1 from 'the record', a success; now ungraded, as a simulation without reward_info
    # (a bare != [1.0] would also pass with the row gone)
    assert scored.select("score_reward", "failure").rows() == [(None, "no_reward_info")]


def test_a_reward_info_with_checks_but_no_reward_is_kept_and_reported(tmp_path):
    doc = _doc()
    doc["simulations"][0]["reward_info"]["reward"] = None
    res = tauk.load(_write(tmp_path / "x.json", doc))
    assert res.report.counts() == {"reward_info_without_reward": 1}
    assert res.trials.filter(res.trials["simulation_id"] == doc["simulations"][0]["id"])["has_reward_info"].to_list() == [True]


def test_tau_bench_records_without_a_reward_are_reported(tmp_path, shared_data):
    records = json.loads((shared_data / "taubench" / "gpt-4o_airline_4trials.json").read_text())
    del records[0]["reward"]
    records[5]["reward"] = None
    res = tauk.load(_write(tmp_path / "tb.json", records))
    assert res.report.counts() == {"missing_reward": 1}
    assert res.report.issues[0].message.startswith("2 record(s) without a reward (e.g. at $[0].reward)")


# ---- a folder holding a monolithic results.json ------------------------------------------------------------------
def test_a_folder_holding_a_monolithic_results_json_reads_its_simulations(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_bytes(A.read_bytes())
    n = len(_doc()["simulations"])
    for target in (run, tmp_path):  # the folder given, and a scan meeting it
        res = tauk.load(target)
        assert res.trials.height == n and res.report.counts() == {}  # before: 0 trials, "no simulation files"


def test_simulations_in_results_json_beside_a_simulations_folder_are_named(tmp_path):
    doc = _doc()
    run = _as_dir(tmp_path, doc)
    _write(run / "results.json", doc)  # the folder's files and the same run's array besides
    with pytest.raises(LoadError, match=r"results.json holds \d+ simulation\(s\) of its own beside the simulations/"):
        tauk.load(run)
    res = _lenient(run)
    assert res.report.counts() == {"simulations_beside_folder": len(doc["simulations"])}
    assert res.trials.height == len(doc["simulations"])  # read once, from simulations/
    res = _lenient(run / "results.json")  # the file given: its own simulations, the folder's named
    assert res.report.counts() == {"simulations_folder_beside": 1}
    assert res.trials.height == len(doc["simulations"])


def test_an_empty_list_is_reported_as_a_run_without_simulations(tmp_path):
    res = tauk.load(_write(tmp_path / "empty.json", []))
    assert res.trials.height == 0 and res.report.counts() == {"zero_simulations": 1}


def test_a_trial_index_recorded_twice_is_reported_and_counted(tmp_path, shared_data):
    """Two simulations (different ids) of one task with the same trial index: both count, as τ²-bench's metrics
    count them, and the load report says so (the loader audit's open question: 20 trials, empty report)."""
    doc = json.loads((shared_data / "tau2" / "v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json").read_text())
    task = doc["simulations"][0]["task_id"]
    (i,) = [j for j, s in enumerate(doc["simulations"]) if s["task_id"] == task and s["trial"] == 2]
    doc["simulations"][i]["trial"] = 1
    with pytest.warns(tauk.LoadWarning, match=r"trial 1 is also recorded at .*simulations\[\d+\]\.trial"):
        res = tauk.load(_write(tmp_path / "x.json", doc))
    assert res.trials.height == len(doc["simulations"]) and res.report.counts() == {"repeated_trial": 1}
    (issue,) = res.report.issues
    assert issue.location == f"$.simulations[{i}].trial"
    clean = tauk.load(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json")
    assert "repeated_trial" not in clean.report.counts()


def test_whole_turns_reads_and_names_tool_message_turns():
    # the turn_idx pass spells a place only for a value that is not an integer: a tool message's own place is named
    import msgspec

    from tauk.io import structs as S
    from tauk.io.frames.messages import _whole_turns

    tool = [S.Message(role="tool", turn_idx=2.0), S.Message(role="tool", turn_idx=" 3 ")]
    msgs = [S.Message(role="user", turn_idx=0), S.Message(role="tool", turn_idx="1", tool_messages=tool)]
    assert [m.turn_idx for m in _whole_turns(msgs)] == [0, 1] and [t.turn_idx for t in tool] == [2, 3]
    tool.append(S.Message(role="tool", turn_idx=4.5))
    with pytest.raises(msgspec.ValidationError, match=r"\$\.messages\[1\]\.tool_messages\[2\]\.turn_idx"):
        _whole_turns(msgs)

"""Bad input: one exception type naming file, place and problem; non-strict loads count what they skip."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tauk
from tauk.errors import LoadError

SMALL_TAU2 = "tau2/v0.2_gpt-4.1-mini_mock_1sim.json"
MULTI_TAU2 = "tau2/v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json"
TAUBENCH = "taubench/gpt-4o_airline_4trials.json"


def _write(tmp_path: Path, name: str, obj) -> Path:
    p = tmp_path / name
    p.write_bytes(obj if isinstance(obj, bytes) else orjson.dumps(obj))
    return p


@pytest.fixture(scope="module")
def multi(shared_data):
    return json.loads((shared_data / MULTI_TAU2).read_text())


def test_invalid_json_names_offset(tmp_path):
    p = _write(tmp_path, "bad.json", b'{"info": {"num_trials": 1,, }')
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.path == str(p) and e.value.location.startswith("byte ")
    assert "bad.json" in str(e.value)


def test_truncated_file(tmp_path, shared_data):
    data = (shared_data / MULTI_TAU2).read_bytes()
    p = _write(tmp_path, "trunc.json", data[: len(data) // 2])
    with pytest.raises(LoadError, match="trunc.json") as e:
        tauk.load(p)
    assert e.value.location is not None and "truncated" in e.value.message.lower()


@pytest.mark.parametrize("payload", [b'"a string"', b"42", b"null", b"   "])
def test_wrong_top_level_type(tmp_path, payload):
    p = _write(tmp_path, "top.json", payload)
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.location == "byte 0"


def test_missing_required_field(tmp_path, multi):
    doc = copy.deepcopy(multi)
    del doc["simulations"][3]["task_id"]
    p = _write(tmp_path, "missing.json", doc)
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.location == "$.simulations[3]" and "task_id" in e.value.message


def test_huge_integers_and_non_json_literals(tmp_path, multi):
    doc = copy.deepcopy(multi)
    calls = [tc for m in doc["simulations"][0]["messages"] for tc in (m.get("tool_calls") or [])]
    calls[0]["arguments"]["big"] = 2**70  # beyond 64 bits: kept exactly
    p = _write(tmp_path, "big.json", json.dumps(doc).encode())
    res = tauk.load(p)
    assert json.loads(res.tool_calls["arguments"][0])["big"] == 2**70
    calls[0]["arguments"] = json.dumps({"big": 10**30 + 1})  # arguments written as a JSON string: the same
    p1 = _write(tmp_path, "big_str.json", json.dumps(doc).encode())
    assert json.loads(tauk.load(p1).tool_calls["arguments"][0])["big"] == 10**30 + 1
    msgs = doc["simulations"][0]["messages"]
    i = next(j for j, m in enumerate(msgs) if m.get("tool_calls"))
    msgs[i]["tool_calls"] = "[{'id': 'x', 'name': 'f', 'arguments': {'ids': {1, 2}}}]"  # a set: not JSON
    p2 = _write(tmp_path, "set.json", doc)
    with pytest.raises(LoadError, match="JSON cannot represent") as e:
        tauk.load(p2)
    assert e.value.location == f"$.simulations[0].messages[{i}].tool_calls"


def test_unreadable_messages_raise_when_strict_else_warn_and_count(tmp_path, multi):
    """Message bodies are decoded on first use of `messages`: a simulation whose messages cannot be read raises
    a LoadError naming it under strict loading, and is skipped, warned about and counted otherwise. Its
    tool-call count on `trials` is unknown (null), not guessed."""
    doc = copy.deepcopy(multi)
    i = next(j for j, m in enumerate(doc["simulations"][2]["messages"]) if m.get("tool_calls"))
    doc["simulations"][2]["messages"][i]["tool_calls"] = 7  # neither a list nor a string
    p = _write(tmp_path, "calls_int.json", doc)
    res = tauk.load(p)
    assert res.trials["n_tool_calls"][2] is None and res.trials["n_tool_calls"][1] is not None
    with pytest.raises(LoadError) as e:
        _ = res.messages
    assert e.value.location == f"$.simulations[2].messages[{i}].tool_calls", e.value.location
    lenient = tauk.load(p, strict=False)
    with pytest.warns(tauk.LoadWarning, match="invalid_messages"):
        msgs = lenient.messages
    assert lenient.report.counts() == {"invalid_messages": 1}
    kept = set(msgs["simulation_id"].unique())
    assert str(doc["simulations"][2]["id"]) not in kept and str(doc["simulations"][1]["id"]) in kept
    # scoring decodes a selection of columns, `messages` all of them: the problem is reported once
    again = tauk.load(p, strict=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tauk.audit(again), tauk.score(again), again.messages
    assert again.report.counts() == {"invalid_messages": 1}


def test_same_results_twice(tmp_path, shared_data, multi):
    f = shared_data / MULTI_TAU2
    with pytest.raises(LoadError, match="already loaded"):
        tauk.load([f, f])
    copy_path = _write(tmp_path, "copy.json", multi)  # another file holding the same simulations
    with pytest.raises(LoadError, match="already loaded"):
        tauk.load([f, copy_path])
    with pytest.warns(tauk.LoadWarning, match="already loaded"):
        res = tauk.load([f, copy_path], strict=False)
    assert res.runs.height == 1 and res.report.counts() == {"duplicate_run": 1}
    assert tauk.load({"a": f, "b": f}).runs.height == 2  # under different labels: deliberate, kept


def test_wrong_type_names_json_path(tmp_path, multi):
    doc = copy.deepcopy(multi)
    doc["simulations"][7]["reward_info"]["reward"] = "high"
    p = _write(tmp_path, "types.json", doc)
    with pytest.raises(LoadError) as e:
        tauk.load(p)
    assert e.value.location == "$.simulations[7].reward_info.reward"


def test_non_strict_skips_bad_simulation_and_reports(tmp_path, multi):
    doc = copy.deepcopy(multi)
    doc["simulations"][7]["reward_info"]["reward"] = "high"
    p = _write(tmp_path, "types.json", doc)
    with pytest.warns(tauk.LoadWarning):
        res = tauk.load(p, strict=False)
    assert res.trials.height == len(doc["simulations"]) - 1
    assert res.report.counts() == {"invalid_simulation": 1}
    assert res.report.issues[0].location == "$.simulations[7].reward_info.reward"


def test_duplicate_simulation_ids(tmp_path, multi):
    doc = copy.deepcopy(multi)
    doc["simulations"][5]["id"] = doc["simulations"][2]["id"]
    p = _write(tmp_path, "dup.json", doc)
    with pytest.raises(LoadError, match="duplicate simulation id") as e:
        tauk.load(p)
    assert e.value.location == "$.simulations[5].id"
    with pytest.warns(tauk.LoadWarning):
        res = tauk.load(p, strict=False)
    assert res.trials.height == len(doc["simulations"]) - 1
    assert res.report.counts() == {"duplicate_simulation_id": 1}


def test_directory_index_disagrees(tmp_path, multi):
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    sims = multi["simulations"][:3]
    top = {k: v for k, v in multi.items() if k != "simulations"}
    top["simulation_index"] = [{"id": s["id"]} for s in sims] + [{"id": "ghost"}]
    (run / "results.json").write_bytes(orjson.dumps(top))
    for s in sims:
        (run / "simulations" / f"{s['id']}.json").write_bytes(orjson.dumps(s))
    with pytest.raises(LoadError, match="simulation_index disagrees") as e:
        tauk.load(run)
    assert e.value.location == "$.simulation_index"
    top["simulation_index"] = [{"id": s["id"]} for s in sims]
    (run / "results.json").write_bytes(orjson.dumps(top))
    assert tauk.load(run).trials.height == 3


def test_stringified_tool_calls_parsed_never_evaluated(tmp_path, multi):
    doc = copy.deepcopy(multi)
    sim = doc["simulations"][0]
    n_calls = 0
    for m in sim["messages"]:
        m["turn_idx"] = str(m.get("turn_idx"))
        if m.get("tool_calls"):
            n_calls += len(m["tool_calls"])
            m["tool_calls"] = repr(m["tool_calls"]).replace("None", "None")  # Python repr: True/None/quotes
        else:
            m["tool_calls"] = "None"
    marker = tmp_path / "pwned"
    sim["messages"][1]["tool_calls"] = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    p = _write(tmp_path, "repr.json", doc)
    with pytest.raises(LoadError, match="neither JSON nor a Python literal") as e:  # strict: the place is named
        tauk.load(p)
    assert e.value.location == "$.simulations[0].messages[1].tool_calls"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = tauk.load(p, strict=False)
        calls = res.tool_calls.filter(res.tool_calls["simulation_id"] == sim["id"])
    assert not marker.exists()
    assert any(issubclass(x.category, tauk.LoadWarning) for x in w)
    assert calls.height == n_calls and calls["parsed_from_string"].all()
    assert res.report.counts().get("unparsable_tool_calls") == 1
    # that simulation's calls are incomplete: ACTION is not recomputed from them (the record is used instead)
    row = res.trials.filter(res.trials["simulation_id"] == sim["id"]).row(0, named=True)
    assert row["n_tool_calls"] is None and row["n_messages"] == len(sim["messages"])
    scored = tauk.score(res).filter(tauk.score(res)["simulation_id"] == sim["id"]).row(0, named=True)
    assert scored["action_source"] != "recomputed"
    msgs = res.messages.filter(res.messages["simulation_id"] == sim["id"])
    assert msgs["turn_idx"].null_count() < msgs.height


# ---- property-based: mutate real files, expect success or LoadError, never anything else --------------------


def _paths(obj, prefix=(), depth=0):
    yield prefix
    if depth > 6:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,), depth + 1)
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            yield from _paths(v, prefix + (i,), depth + 1)


def _get(obj, path):
    for p in path:
        obj = obj[p]
    return obj


REPLACEMENTS = [None, "x", 7, 1.5, True, [], {}, ["a", 1], {"k": None}]


def _mutations(doc):
    paths = [p for p in _paths(doc) if p]
    return st.one_of(
        st.tuples(st.just("drop"), st.sampled_from(paths)),
        st.tuples(st.just("retype"), st.sampled_from(paths), st.sampled_from(REPLACEMENTS)),
        st.tuples(st.just("truncate"), st.floats(0.0, 1.0)),
        st.tuples(st.just("duplicate"), st.just(None)),
    )


def _apply(doc, mutation):
    kind = mutation[0]
    data = copy.deepcopy(doc)
    if kind == "drop":
        parent = _get(data, mutation[1][:-1])
        del parent[mutation[1][-1]]
    elif kind == "retype":
        parent = _get(data, mutation[1][:-1])
        parent[mutation[1][-1]] = mutation[2]
    elif kind == "duplicate":
        if isinstance(data, list):
            data.append(copy.deepcopy(data[0]))
        else:
            data["simulations"].append(copy.deepcopy(data["simulations"][0]))
    raw = orjson.dumps(data)
    if kind == "truncate":
        raw = raw[: int(len(raw) * mutation[1])]
    return raw


def _exercise(path: Path, strict: bool):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = tauk.load(path, strict=strict)
            for frame in ("runs", "trials", "tasks", "expected_actions", "messages", "tool_calls"):
                getattr(res, frame)
    except LoadError as exc:
        assert str(path) in str(exc)
        assert exc.message


def _small_docs(shared_data):
    tau2 = json.loads((shared_data / SMALL_TAU2).read_text())
    tb = json.loads((shared_data / TAUBENCH).read_text())[:3]
    return tau2, tb


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), strict=st.booleans(), which=st.sampled_from(["tau2", "taubench"]))
def test_mutated_real_files_fail_cleanly(tmp_path, shared_data, data, strict, which):
    tau2, tb = _small_docs(shared_data)
    doc = tau2 if which == "tau2" else tb
    mutation = data.draw(_mutations(doc))
    p = tmp_path / "mutant.json"
    p.write_bytes(_apply(doc, mutation))
    _exercise(p, strict)


def test_file_names_with_control_characters_are_shown_escaped(tmp_path: Path):
    """A file name is untrusted text: the load report and a LoadError show its control characters made visible
    (an ANSI escape in a downloaded file's name must not recolour or clear the terminal); ``.path`` keeps it."""
    sample = sorted((Path(__file__).resolve().parents[1] / "data").glob("*.json"))[0]
    doc = json.loads(sample.read_text())
    doc["simulations"][1]["id"] = doc["simulations"][0]["id"]  # a duplicate: one report entry
    p = tmp_path / "run\x1b[2J\u202e.json"
    p.write_text(json.dumps(doc))
    with pytest.warns(tauk.LoadWarning):
        res = tauk.load(p, strict=False)
    shown = str(res.report) + repr(res)
    assert "run\\x1b[2J\\u202e.json" in shown
    assert "\x1b" not in shown and "\u202e" not in shown
    with pytest.raises(tauk.LoadError) as ei:
        tauk.load(p)
    assert ei.value.path == str(p) and "\x1b" not in str(ei.value) and "\\x1b[2J" in str(ei.value)

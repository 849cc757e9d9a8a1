"""Pydantic models document the format: every conformant shared file validates; problems name their JSON path."""

from __future__ import annotations

import json

import pytest

from tauk.errors import LoadError
from tauk.schema import DirectoryResults, Results, TauBenchRecord, validate


def test_conformant_files_validate(shared_data):
    files = sorted((shared_data / "tau2").glob("*.json"))
    assert files
    for f in files:
        res = validate(f)
        assert isinstance(res, Results)
        assert len(res.simulations) == len(json.loads(f.read_text())["simulations"])
    assert isinstance(validate(shared_data / "tau2-dir-voice"), DirectoryResults)
    tb = validate(shared_data / "taubench/gpt-4o_airline_4trials.json")
    assert len(tb) == 200 and isinstance(tb[0], TauBenchRecord)


def test_wrapper_is_not_a_results_file_for_the_schema(shared_data):
    with pytest.raises(LoadError) as e:
        validate(shared_data / "nonconformant/adaptive-agent_airline_wrapper_infra-error.json")
    assert e.value.location == "$.info"


def test_schema_error_location(tmp_path, shared_data):
    doc = json.loads((shared_data / "tau2/v0.2_gpt-4.1-mini_mock_1sim.json").read_text())
    doc["simulations"][0]["messages"][2]["role"] = "narrator"
    p = tmp_path / "x.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(LoadError) as e:
        validate(p)
    assert e.value.location == "$.simulations[0].messages[2].role"

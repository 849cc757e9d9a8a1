"""Pydantic models document the format: every conformant shared file validates; problems name their JSON path."""

from __future__ import annotations

import json
import typing

import msgspec
import pydantic
import pytest

from tauk import schema
from tauk.errors import LoadError
from tauk.io import structs
from tauk.schema import DirectoryResultsModel, ResultsModel, TauBenchRecordModel, validate


def test_conformant_files_validate(shared_data):
    files = sorted((shared_data / "tau2").glob("*.json"))
    assert files
    for f in files:
        res = validate(f)
        assert isinstance(res, ResultsModel)
        assert len(res.simulations) == len(json.loads(f.read_text())["simulations"])
    assert isinstance(validate(shared_data / "tau2-dir-voice"), DirectoryResultsModel)
    tb = validate(shared_data / "taubench/gpt-4o_airline_4trials.json")
    assert len(tb) == 200 and isinstance(tb[0], TauBenchRecordModel)


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


# ---- the two descriptions of the format agree -------------------------------------------------------------------

# every msgspec struct the loaders decode with -> the pydantic model(s) documenting the same JSON object
STRUCT_TO_MODEL = {
    "AgentInfo": schema.AgentInfoModel,
    "UserInfo": schema.UserInfoModel,
    "Skipped": schema.TickModel,
    "TurnTaking": schema.TurnTakingModel,
    "Chunk": schema.TickChunkModel,
    "Tick": schema.TickModel,
    "AuthClassification": schema.AuthClassificationModel,
    "ReviewError": schema.ReviewErrorModel,
    "Review": schema.ReviewModel,
    "SimulationInfo": schema.SimulationInfoModel,
    "TickSimulation": schema.SimulationRunModel,
    "TickResults": schema.ResultsModel,
    "EnvironmentInfo": schema.EnvironmentInfoModel,
    "Info": schema.InfoModel,
    "Action": schema.ActionModel,
    "EvaluationCriteria": schema.EvaluationCriteriaModel,
    "Task": schema.TaskModel,
    "DBCheck": schema.DBCheckModel,
    "EnvAssertionCheck": schema.EnvAssertionCheckModel,
    "ActionCheck": schema.ActionCheckModel,
    "MetCheck": (schema.NLAssertionCheckModel, schema.CommunicateCheckModel),
    "RewardInfo": schema.RewardInfoModel,
    "LightMessage": (schema.MessageModel, schema.TauBenchMessageModel),
    "ToolCall": schema.ToolCallModel,
    "Message": schema.MessageModel,
    "LightSimulation": schema.SimulationRunModel,
    "FullSimulation": schema.SimulationRunModel,
    "LightResults": schema.ResultsModel,
    "RawResults": schema.ResultsModel,
    "FullResults": schema.ResultsModel,
    "FullRawResults": schema.ResultsModel,
    "DirectoryResults": schema.DirectoryResultsModel,
    "_Peek": schema.ResultsModel,
    "TBAction": schema.TauBenchActionModel,
    "TBTask": schema.TauBenchTaskModel,
    "TBRewardInner": schema.TauBenchRewardDetailsModel,
    "TBRewardInfo": schema.TauBenchRewardInfoModel,
    "TBInfo": schema.TauBenchInfoModel,
    "TBFunction": schema.TauBenchFunctionModel,
    "TBToolCall": schema.TauBenchToolCallModel,
    "TBMessage": schema.TauBenchMessageModel,
    "TBLightRecord": schema.TauBenchRecordModel,
    "TBFullRecord": schema.TauBenchRecordModel,
}
# keys the loaders read that are not part of the format: the nonconformant wrapper {domain, agent, model, ...}
NONCONFORMANT = {"LightResults": {"domain", "agent", "model"}, "RawResults": {"domain", "agent", "model"}}


def _structs() -> dict[str, type]:
    return {name: obj for name, obj in vars(structs).items()
            if isinstance(obj, type) and issubclass(obj, msgspec.Struct) and obj.__module__ == structs.__name__}


def _models(model) -> tuple:
    return model if isinstance(model, tuple) else (model,)


def _classes(tp, base: type) -> set[type]:
    """The subclasses of ``base`` a type annotation refers to (through unions, lists and dicts)."""
    if isinstance(tp, type) and issubclass(tp, base):
        return {tp}
    return set().union(*(_classes(a, base) for a in typing.get_args(tp))) if typing.get_args(tp) else set()


def test_every_struct_has_a_model() -> None:
    assert sorted(_structs()) == sorted(STRUCT_TO_MODEL)


def test_no_public_name_is_shared() -> None:
    import tauk

    models = {n for n in schema.__all__ if n[0].isupper()}
    assert not models & set(vars(structs)), models & set(vars(structs))
    assert not models & set(tauk.__all__)


@pytest.mark.parametrize("name", sorted(STRUCT_TO_MODEL))
def test_struct_fields_exist_in_the_model(name: str) -> None:
    struct = _structs()[name]
    hints = typing.get_type_hints(struct)
    for field in struct.__struct_fields__:
        if field in NONCONFORMANT.get(name, ()):
            continue
        for model in _models(STRUCT_TO_MODEL[name]):
            assert field in model.model_fields, f"{name}.{field} is not documented in {model.__name__}"
            # a nested struct is documented by the corresponding nested model
            nested = _classes(hints[field], msgspec.Struct)
            documented = _classes(model.model_fields[field].annotation, pydantic.BaseModel)
            for sub in nested:
                assert set(_models(STRUCT_TO_MODEL[sub.__name__])) & documented, (
                    f"{name}.{field}: {sub.__name__} is documented by {sorted(m.__name__ for m in documented)}")

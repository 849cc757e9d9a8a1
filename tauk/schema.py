"""Pydantic models of the τ²-bench results format (every version, docs/spec.md §1.1–1.2) and τ-bench records (§1.3).

They document the format and validate on request (:func:`validate`); the loaders decode straight to frames
with the msgspec structs of :mod:`tauk.io.structs` and produce the same values. Every field a struct decodes is a
field of the corresponding model (``tests/test_schema.py`` checks it); the models are named ``…Model`` so that
no name is shared with a struct or with :class:`tauk.Results`. Unknown keys are kept (``extra="allow"``), since
versions and branches add fields freely, and every field that real files leave null is optional.

Examples
--------
>>> from tauk.schema import validate
>>> results = validate("data/baseline_retail.json")
>>> type(results).__name__, results.simulations[0].reward_info.reward_basis
('ResultsModel', ['DB', 'COMMUNICATE'])
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tauk.conventions import COMPONENTS, TERMINATION_REASONS
from tauk.errors import LoadError

__all__ = [
    "ActionCheckModel",
    "ActionModel",
    "AgentInfoModel",
    "AuthClassificationModel",
    "CommunicateCheckModel",
    "DBCheckModel",
    "DirectoryResultsModel",
    "EnvAssertionCheckModel",
    "EnvironmentInfoModel",
    "EvaluationCriteriaModel",
    "InfoModel",
    "MessageModel",
    "NLAssertionCheckModel",
    "ResultsModel",
    "ReviewErrorModel",
    "ReviewModel",
    "RewardInfoModel",
    "SimulationInfoModel",
    "SimulationRunModel",
    "TERMINATION_REASONS",
    "TaskModel",
    "TauBenchActionModel",
    "TauBenchFunctionModel",
    "TauBenchInfoModel",
    "TauBenchMessageModel",
    "TauBenchRecordModel",
    "TauBenchRewardDetailsModel",
    "TauBenchRewardInfoModel",
    "TauBenchTaskModel",
    "TauBenchToolCallModel",
    "TickChunkModel",
    "TickModel",
    "ToolCallModel",
    "TurnTakingModel",
    "UserInfoModel",
    "validate",
]

RewardComponent = Literal[COMPONENTS]  # type: ignore[valid-type]  # the five names of tauk.conventions


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class AgentInfoModel(_Model):
    """``user_info`` / ``agent_info``: the implementation and its LLM."""

    implementation: str | None = None
    llm: str | None = None
    llm_args: dict[str, Any] | None = None


class UserInfoModel(AgentInfoModel):
    """``user_info``: the user simulator (its implementation, LLM and, at HEAD, persona)."""

    persona_config: Any = None


class EnvironmentInfoModel(_Model):
    domain_name: str | None = None
    policy: str | None = None
    tool_defs: Any = None


class InfoModel(_Model):
    """``info``: how the run was made. The agent label is ``agent_info.llm`` (else ``implementation``)."""

    git_commit: str | None = None
    num_trials: int | None = None
    max_steps: int | None = None
    max_errors: int | None = None
    seed: int | None = None
    user_info: UserInfoModel | None = None
    agent_info: AgentInfoModel | None = None
    environment_info: EnvironmentInfoModel | None = None
    # v1.0+: settings that make runs distinct experiments (tauk.io.frames.runs.setup_identity)
    text_streaming_config: dict[str, Any] | None = None
    speech_complexity: str | None = None
    audio_native_config: dict[str, Any] | None = None
    retrieval_config: str | None = None
    retrieval_config_kwargs: dict[str, Any] | None = None


class ActionModel(_Model):
    """A gold action. ``compare_args`` None ⇒ compare the call's own keys; [] ⇒ compare the name only."""

    action_id: str | None = None
    requestor: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: Any = None
    compare_args: list[str] | None = None


class EvaluationCriteriaModel(_Model):
    actions: list[ActionModel] | None = None
    env_assertions: list[dict[str, Any]] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardComponent] | None = None  # absent ⇒ conventions.DEFAULT_REWARD_BASIS


class TaskModel(_Model):
    id: str
    description: Any = None
    user_scenario: Any = None
    initial_state: Any = None
    evaluation_criteria: EvaluationCriteriaModel | None = None


class ToolCallModel(_Model):
    id: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: str | None = None


class MessageModel(_Model):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCallModel] | None = None
    turn_idx: int | None = None
    timestamp: str | None = None
    cost: float | None = None
    usage: dict[str, Any] | None = None
    raw_data: Any = None
    id: str | None = None  # tool messages: the call id they answer
    requestor: str | None = None
    error: bool | None = None
    tool_messages: list[MessageModel] | None = None  # a MultiToolMessage: the tool messages it wraps


class TurnTakingModel(_Model):
    action: str | None = None
    info: str | None = None


class TickChunkModel(_Model):
    """A tick's agent or user chunk: a piece of a streamed utterance (chunks sharing ``utterance_ids`` merge)."""

    role: str | None = None
    content: str | None = None
    tool_calls: list[ToolCallModel] | None = None
    utterance_ids: list[str] | None = None
    contains_speech: bool | None = None
    is_audio: bool | None = None
    turn_taking_action: TurnTakingModel | None = None
    timestamp: str | None = None


class TickModel(_Model):
    """One tick of a full-duplex simulation: both sides' chunks, tool calls and results in that tick."""

    tick_id: int | None = None
    timestamp: str | None = None
    agent_chunk: TickChunkModel | None = None
    user_chunk: TickChunkModel | None = None
    agent_tool_calls: list[ToolCallModel] | None = None
    user_tool_calls: list[ToolCallModel] | None = None
    agent_tool_results: list[MessageModel] | None = None
    user_tool_results: list[MessageModel] | None = None
    user_transcript: str | None = None
    tick_duration_seconds: float | None = None
    wall_clock_duration_seconds: float | None = None


class DBCheckModel(_Model):
    db_match: bool | None = None
    db_reward: float | None = None


class EnvAssertionCheckModel(_Model):
    env_assertion: Any = None
    met: bool | None = None
    reward: float | None = None


class ActionCheckModel(_Model):
    action: Any = None
    action_match: bool | None = None
    action_reward: float | None = None
    tool_type: str | None = None


class NLAssertionCheckModel(_Model):
    nl_assertion: str | None = None
    met: bool | None = None
    justification: str | None = None


class CommunicateCheckModel(_Model):
    info: str | None = None
    met: bool | None = None
    justification: str | None = None


class RewardInfoModel(_Model):
    reward: float | None = None
    db_check: DBCheckModel | None = None
    env_assertions: list[EnvAssertionCheckModel] | None = None
    action_checks: list[ActionCheckModel] | None = None
    nl_assertions: list[NLAssertionCheckModel] | None = None
    communicate_checks: list[CommunicateCheckModel] | None = None
    reward_basis: list[str] | None = None
    reward_breakdown: dict[str, float | None] | None = None
    info: Any = None


class AuthClassificationModel(_Model):
    status: str | None = None  # succeeded | failed | not_needed
    reasoning: str | None = None
    cost: float | None = None


class ReviewErrorModel(_Model):
    source: str | None = None  # agent | user | unknown (absent in a user-only review)
    severity: str | None = None
    error_type: str | None = None
    error_tags: list[str] | None = None
    turn_idx: int | None = None
    tick_start: int | None = None
    tick_end: int | None = None
    reasoning: str | None = None


class ReviewModel(_Model):
    """``review`` / ``user_only_review``: an LLM judge's list of errors."""

    summary: str | None = None
    has_errors: bool | None = None
    errors: list[ReviewErrorModel] | None = None


class SimulationInfoModel(_Model):
    """A simulation's ``info`` (free-form diagnostics)."""

    had_unresponsive_period: bool | None = None


class SimulationRunModel(_Model):
    """One simulation. ``messages`` is null for full-duplex voice runs (they carry ``ticks``)."""

    id: str
    task_id: str | int
    trial: int | None = None
    seed: int | None = None
    timestamp: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    duration: float | None = None
    termination_reason: str  # unknown values are kept; see TERMINATION_REASONS
    agent_cost: float | None = None
    user_cost: float | None = None
    reward_info: RewardInfoModel | None = None
    messages: list[MessageModel] | None = None
    ticks: list[TickModel] | None = None
    mode: str | None = None
    auth_classification: AuthClassificationModel | None = None
    review: ReviewModel | None = None
    user_only_review: ReviewModel | None = None
    info: SimulationInfoModel | None = None


class ResultsModel(_Model):
    """A monolithic τ²-bench results file."""

    timestamp: str | None = None
    info: InfoModel
    tasks: list[TaskModel] = Field(default_factory=list)
    simulations: list[SimulationRunModel]
    simulation_index: Any = None  # v1.0+: null in monolithic files
    format_version: str | int | None = None


class DirectoryResultsModel(_Model):
    """``results.json`` of the v1.0 directory format (simulations live in ``simulations/<id>.json``)."""

    timestamp: str | None = None
    info: InfoModel
    tasks: list[TaskModel] = Field(default_factory=list)
    simulation_index: Any = None
    format_version: str | int | None = None


class TauBenchActionModel(_Model):
    """A τ-bench gold action: a tool name and its keyword arguments."""

    name: str
    kwargs: dict[str, Any] | None = None


class TauBenchTaskModel(_Model):
    user_id: str | None = None
    actions: list[TauBenchActionModel] | None = None
    instruction: str | None = None
    outputs: list[str] | None = None


class TauBenchRewardDetailsModel(_Model):
    """``reward_info.info``: the two checks (reward = r_actions × r_outputs; r_outputs only when the task has
    outputs) and the hash of the final database."""

    r_actions: float | None = None
    r_outputs: float | None = None
    gt_data_hash: str | None = None


class TauBenchRewardInfoModel(_Model):
    reward: float | None = None
    info: TauBenchRewardDetailsModel | None = None
    actions: Any = None


class TauBenchInfoModel(_Model):
    task: TauBenchTaskModel | None = None
    source: str | None = None
    user_cost: float | None = None
    reward_info: TauBenchRewardInfoModel | None = None


class TauBenchFunctionModel(_Model):
    name: str
    arguments: str | dict[str, Any] | None = None  # a JSON string in OpenAI-style messages


class TauBenchToolCallModel(_Model):
    id: str | None = None
    type: str | None = None
    function: TauBenchFunctionModel


class TauBenchMessageModel(_Model):
    """An OpenAI-style message of a τ-bench trajectory."""

    role: str | None = None
    content: str | None = None
    tool_calls: list[TauBenchToolCallModel] | None = None
    tool_call_id: str | None = None


class TauBenchRecordModel(_Model):
    """One τ-bench (v1) trajectory; a results file is a JSON list of these. Reward = r_actions × r_outputs."""

    task_id: int
    trial: int | None = None
    reward: float
    info: TauBenchInfoModel | None = None
    traj: list[TauBenchMessageModel] = Field(default_factory=list)


def _loc(err: dict[str, Any]) -> str:
    out = "$"
    for part in err.get("loc", ()):
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate(path: str | Path) -> ResultsModel | DirectoryResultsModel | list[TauBenchRecordModel]:
    """Validate a results file (or a directory's ``results.json``) against the models.

    Slow on big files (it builds every object): the loaders do not need it.

    Parameters
    ----------
    path : str or Path
        A monolithic results file, a results directory or a τ-bench results file.

    Returns
    -------
    ResultsModel or DirectoryResultsModel or list of TauBenchRecordModel

    Raises
    ------
    tauk.LoadError
        Naming the first problem's JSON path.

    Examples
    --------
    >>> len(validate("data/atlas-large_airline.json").simulations)
    100
    """
    p = Path(path)
    target = p / "results.json" if p.is_dir() else p
    try:
        data = json.loads(target.read_bytes())
    except json.JSONDecodeError as exc:
        raise LoadError(str(target), f"byte {exc.pos}", f"invalid JSON: {exc.msg}") from None
    try:
        if isinstance(data, list):
            return [TauBenchRecordModel.model_validate(r) for r in data]
        if p.is_dir():
            return DirectoryResultsModel.model_validate(data)
        return ResultsModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise LoadError(str(target), _loc(first), f"{first['msg']} ({exc.error_count()} problem(s) in all)") from None

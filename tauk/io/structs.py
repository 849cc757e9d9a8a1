"""msgspec structs that decode results files straight into typed objects.

Unknown keys are skipped by the decoder (never an error), so every version and branch of the format decodes with
the same structs. Two levels exist for speed: the *light* simulation skips message bodies (content, raw_data),
which is all the ``runs`` and ``trials`` frames need; the *full* message is decoded only when messages or tool
calls are asked for. Field types are deliberately lenient where real files deviate (numbers written as strings,
tool calls written as a Python-repr string); the frame builders normalise and report them.
"""

# no `from __future__ import annotations`: msgspec builds a decoder from real annotations ~4× faster than by
# evaluating strings (a command decodes with them once, at its start)

from typing import Any

import msgspec
from msgspec import Raw, Struct

Num = float | str | None
IntLike = int | str | None
# the integers tauk.io.checks.check_numbers reads (a whole float, 1.0, is an integer to τ²-bench's models)
Whole = int | float | str | None
NULL = Raw(b"null")  # a Raw field that is absent reads as JSON null
ABSENT = Raw(b"")  # ... or as nothing, where presence itself matters


class AgentInfo(Struct):
    implementation: str | None = None
    llm: str | None = None


class EnvironmentInfo(Struct):
    domain_name: str | None = None


class UserInfo(Struct):
    implementation: str | None = None
    llm: str | None = None
    persona_config: Raw = NULL  # the user simulator's persona (part of the setup when recorded)


class Info(Struct):
    git_commit: str | None = None
    num_trials: Whole = None
    max_steps: Whole = None
    max_errors: Whole = None
    seed: Whole = None
    user_info: UserInfo | None = None
    agent_info: AgentInfo | None = None
    environment_info: EnvironmentInfo | None = None
    # v1.0+ (what makes runs distinct experiments, see tauk.io.frames.runs.setup_identity); kept undecoded
    text_streaming_config: Raw = ABSENT
    speech_complexity: Raw = NULL
    audio_native_config: Raw = NULL
    retrieval_config: Raw = NULL
    retrieval_config_kwargs: Raw = NULL


# ---- tasks -------------------------------------------------------------------------------------------------------


class Action(Struct):
    name: str
    action_id: str | None = None
    requestor: str | None = None
    arguments: dict[str, Any] | None = None
    compare_args: list[str] | None = None


class EvaluationCriteria(Struct, dict=True):
    actions: list[Action] | None = None
    env_assertions: list[Raw] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] | None | msgspec.UnsetType = msgspec.UNSET

    def __post_init__(self) -> None:
        # absent → None (the default basis) as before; an explicit null is remembered: τ²-bench's model refuses it
        self.reward_basis_null = self.reward_basis is None
        if self.reward_basis is msgspec.UNSET:
            self.reward_basis = None


class Task(Struct):
    id: str | int
    description: Raw = NULL
    user_scenario: Raw = NULL
    initial_state: Raw = NULL
    evaluation_criteria: EvaluationCriteria | None = None
    initial_state: Raw = NULL


# ---- reward info -------------------------------------------------------------------------------------------------


class DBCheck(Struct):
    db_match: bool | None = None
    db_reward: float | None = None


class EnvAssertionCheck(Struct):
    met: bool | None = None
    reward: float | None = None


class ActionCheck(Struct):
    action_match: bool | None = None
    action_reward: float | None = None
    action: Raw = NULL  # the gold action checked (its name is read only where a tool type is recorded)
    tool_type: Raw = ABSENT  # v1.0+: "read" / "write" / "think" / "generic" (null: unknown tool); absent before


class MetCheck(Struct):
    met: bool | None = None


class RewardInfo(Struct):
    reward: Num = None  # a number written as text is read as one (tauk.io.checks.check_numbers)
    db_check: DBCheck | None = None
    env_assertions: list[EnvAssertionCheck] | None = None
    action_checks: list[ActionCheck] | None = None
    nl_assertions: list[MetCheck] | None = None
    communicate_checks: list[MetCheck] | None = None
    reward_basis: list[str] | None = None
    reward_breakdown: dict[str, float | None] | None = None


# ---- messages ----------------------------------------------------------------------------------------------------


class LightMessage(Struct):
    """Only what the trials frame counts: the tool calls, left undecoded (counted on demand)."""

    tool_calls: Raw = NULL


class Skipped(Struct):
    """An object whose content the light decode skips (a tick: only counted)."""


class ToolCall(Struct):
    name: str
    id: str | None = None
    arguments: dict[str, Any] | str | None = None
    requestor: str | None = None


class Message(Struct):
    role: str | None = None
    content: str | None = None
    tool_calls: list[ToolCall] | str | None = None
    turn_idx: Whole = None  # made an integer (or refused) by tauk.io.frames.messages
    timestamp: str | None = None
    cost: Num = None
    usage: Raw = NULL
    raw_data: Raw = NULL
    id: str | None = None
    requestor: str | None = None
    error: bool | str | None = None
    tool_messages: "list[Message] | None" = None  # a MultiToolMessage: the tool messages it wraps


# ---- full-duplex ticks -------------------------------------------------------------------------------------------


class TurnTaking(Struct):
    action: str | None = None
    info: str | None = None


class Chunk(Struct):
    """A tick's agent or user chunk (a streaming message)."""

    role: str | None = None
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    utterance_ids: list[str] | None = None
    contains_speech: bool | None = None
    is_audio: bool | None = None
    turn_taking_action: TurnTaking | None = None
    timestamp: str | None = None


class Tick(Struct):
    tick_id: IntLike = None
    timestamp: str | None = None
    agent_chunk: Chunk | None = None
    user_chunk: Chunk | None = None
    agent_tool_calls: list[ToolCall] | None = None
    user_tool_calls: list[ToolCall] | None = None
    agent_tool_results: list[Message] | None = None
    user_tool_results: list[Message] | None = None
    user_transcript: str | None = None
    tick_duration_seconds: Num = None
    wall_clock_duration_seconds: Num = None


# ---- v1.0+ reviews and classifications ---------------------------------------------------------------------------


class AuthClassification(Struct):
    status: str | None = None


class ReviewError(Struct):
    source: str | None = None
    severity: str | None = None
    error_tags: list[str] | None = None
    turn_idx: IntLike = None
    tick_start: IntLike = None


class Review(Struct):
    """``review`` (agent and user errors) or ``user_only_review`` (user errors; no ``source``)."""

    errors: list[ReviewError] | None = None


class SimulationInfo(Struct):
    """A simulation's ``info`` (diagnostics): only whether it records an unresponsive period (full-duplex)."""

    had_unresponsive_period: Raw = ABSENT


# ---- simulations -------------------------------------------------------------------------------------------------


class LightSimulation(Struct):
    id: str | int
    task_id: str | int
    termination_reason: str | None = None
    trial: Whole = None
    seed: Whole = None
    start_time: str | None = None
    end_time: str | None = None
    duration: Num = None
    agent_cost: Num = None
    user_cost: Num = None
    mode: str | None = None
    reward_info: RewardInfo | None = None
    messages: list[LightMessage] | None = None
    ticks: list[Skipped] | None = None  # full-duplex: counted here, decoded on first use (tauk.io.frames.ticks)
    # v1.0+: what upstream's metrics count (authentication, LLM reviews, responsiveness)
    auth_classification: AuthClassification | None = None
    review: Review | None = None
    user_only_review: Review | None = None
    info: SimulationInfo | None = None


class FullSimulation(Struct):
    id: str | int
    messages: list[Message] | None = None


class TickSimulation(Struct):
    id: str | int
    ticks: list[Tick] | None = None


class LightResults(Struct):
    timestamp: str | None = None
    info: Info | None = None
    tasks: list[Task] | None = None
    simulations: list[LightSimulation] | None = None
    simulation_index: Raw = ABSENT
    format_version: str | int | None = None
    # custom wrappers (nonconformant): {domain, agent, model, total_tasks, passed, pass_rate, simulations}
    domain: str | None = None
    agent: str | None = None
    model: str | None = None


class RawResults(Struct):
    """Top level with simulations left undecoded: the fallback that localises errors per simulation."""

    timestamp: str | None = None
    info: Info | None = None
    tasks: list[Task] | None = None
    simulations: list[Raw] | None = None
    simulation_index: Raw = ABSENT
    format_version: str | int | None = None
    domain: str | None = None
    agent: str | None = None
    model: str | None = None


class FullResults(Struct):
    simulations: list[FullSimulation] | None = None


class FullRawResults(Struct):
    simulations: list[Raw] | None = None


class DirectoryResults(Struct):
    """``results.json`` of the directory format (no simulations)."""

    timestamp: str | None = None
    info: Info | None = None
    tasks: list[Task] | None = None
    simulation_index: list[Raw] | dict[str, Any] | None = None
    format_version: str | int | None = None


# ---- τ-bench (v1) ------------------------------------------------------------------------------------------------


class TBAction(Struct):
    name: str
    kwargs: dict[str, Any] | None = None


class TBTask(Struct):
    user_id: str | None = None
    actions: list[TBAction] | None = None
    instruction: str | None = None
    outputs: list[str] | None = None


class TBRewardInner(Struct):
    r_actions: float | None = None
    r_outputs: float | None = None


class TBRewardInfo(Struct):
    reward: float | None = None
    info: TBRewardInner | None = None


class TBInfo(Struct):
    task: TBTask | None = None
    source: str | None = None
    user_cost: float | None = None
    reward_info: TBRewardInfo | None = None


class TBFunction(Struct):
    name: str
    arguments: str | dict[str, Any] | None = None


class TBToolCall(Struct):
    function: TBFunction
    id: str | None = None


class TBMessage(Struct):
    role: str | None = None
    content: str | None = None
    tool_calls: list[TBToolCall] | None = None
    tool_call_id: str | None = None


class TBLightRecord(Struct):
    task_id: int | str
    reward: float | None = None
    trial: Whole = None
    info: TBInfo | None = None
    traj: list[LightMessage] | None = None


class TBFullRecord(Struct):
    task_id: int | str
    trial: Whole = None
    traj: list[TBMessage] | None = None


class TickResults(Struct):
    simulations: list[TickSimulation] | None = None


class _Peek(Struct):
    """Which keys a dict-shaped file has (values skipped; an absent key stays empty)."""

    info: Raw = ABSENT
    simulations: Raw = ABSENT
    tasks: Raw = ABSENT


class _Decoder:
    """A :class:`msgspec.json.Decoder` built on its first ``decode``: building one resolves every annotation of
    its structs (17 decoders: ~80 ms of the command line's start), and a command reads one or two formats."""

    __slots__ = ("_dec", "_tp")

    def __init__(self, tp: Any) -> None:
        self._tp, self._dec = tp, None

    def decode(self, data: Any) -> Any:
        if self._dec is None:
            self._dec = msgspec.json.Decoder(self._tp)
        return self._dec.decode(data)


def decoder(tp: Any) -> Any:
    """A JSON decoder of ``tp`` (``.decode(bytes)``), built when first used."""
    return _Decoder(tp)

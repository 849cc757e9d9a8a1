"""Pydantic models of the τ²-bench results format (every version, SPEC §1.1–1.2) and τ-bench records (§1.3).

They document the format and validate on request (:func:`validate`); the loaders decode straight to frames
with msgspec and produce the same values. Unknown keys are kept (``extra="allow"``), since versions and branches
add fields freely, and every field that real files leave null is optional.

>>> from tauk.schema import validate
>>> results = validate("run.json")          # doctest: +SKIP
>>> results.simulations[0].reward_info.reward  # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tauk.errors import LoadError

TERMINATION_REASONS = (
    "user_stop", "agent_stop", "max_steps", "too_many_errors",  # all versions
    "agent_error", "user_error",  # 0.2.1+
    "timeout", "infrastructure_error", "context_window_exceeded", "unexpected_error",  # 1.0+
)  # fmt: skip
RewardComponent = Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ModelInfo(_Model):
    implementation: str | None = None
    llm: str | None = None
    llm_args: dict[str, Any] | None = None


class EnvironmentInfo(_Model):
    domain_name: str | None = None
    policy: str | None = None
    tool_defs: Any = None


class Info(_Model):
    """``info``: how the run was made. The agent label is ``agent_info.llm`` (else ``implementation``)."""

    git_commit: str | None = None
    num_trials: int | None = None
    max_steps: int | None = None
    max_errors: int | None = None
    seed: int | None = None
    user_info: ModelInfo | None = None
    agent_info: ModelInfo | None = None
    environment_info: EnvironmentInfo | None = None


class Action(_Model):
    """A gold action. ``compare_args`` None ⇒ compare the call's own keys; [] ⇒ compare the name only."""

    action_id: str | None = None
    requestor: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: Any = None
    compare_args: list[str] | None = None


class EvaluationCriteria(_Model):
    actions: list[Action] | None = None
    env_assertions: list[dict[str, Any]] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[RewardComponent] | None = None  # absent ⇒ ["DB", "COMMUNICATE"]


class Task(_Model):
    id: str
    description: Any = None
    user_scenario: Any = None
    initial_state: Any = None
    evaluation_criteria: EvaluationCriteria | None = None


class ToolCall(_Model):
    id: str | None = None
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: str | None = None


class Message(_Model):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    turn_idx: int | None = None
    timestamp: str | None = None
    cost: float | None = None
    usage: dict[str, Any] | None = None
    raw_data: Any = None
    id: str | None = None  # tool messages: the call id they answer
    requestor: str | None = None
    error: bool | None = None


class DBCheck(_Model):
    db_match: bool | None = None
    db_reward: float | None = None


class EnvAssertionCheck(_Model):
    env_assertion: Any = None
    met: bool | None = None
    reward: float | None = None


class ActionCheck(_Model):
    action: Any = None
    action_match: bool | None = None
    action_reward: float | None = None
    tool_type: str | None = None


class NLAssertionCheck(_Model):
    nl_assertion: str | None = None
    met: bool | None = None
    justification: str | None = None


class CommunicateCheck(_Model):
    info: str | None = None
    met: bool | None = None
    justification: str | None = None


class RewardInfo(_Model):
    reward: float | None = None
    db_check: DBCheck | None = None
    env_assertions: list[EnvAssertionCheck] | None = None
    action_checks: list[ActionCheck] | None = None
    nl_assertions: list[NLAssertionCheck] | None = None
    communicate_checks: list[CommunicateCheck] | None = None
    reward_basis: list[str] | None = None
    reward_breakdown: dict[str, float | None] | None = None
    info: Any = None


class SimulationRun(_Model):
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
    reward_info: RewardInfo | None = None
    messages: list[Message] | None = None
    mode: str | None = None


class Results(_Model):
    """A monolithic τ²-bench results file."""

    timestamp: str | None = None
    info: Info
    tasks: list[Task] = Field(default_factory=list)
    simulations: list[SimulationRun]
    simulation_index: Any = None  # v1.0+: null in monolithic files


class DirectoryResults(_Model):
    """``results.json`` of the v1.0 directory format (simulations live in ``simulations/<id>.json``)."""

    timestamp: str | None = None
    info: Info
    tasks: list[Task] = Field(default_factory=list)
    simulation_index: Any = None
    format_version: str | int | None = None


class TauBenchTask(_Model):
    user_id: str | None = None
    actions: list[dict[str, Any]] | None = None
    instruction: str | None = None
    outputs: list[str] | None = None


class TauBenchRewardInfo(_Model):
    reward: float | None = None
    info: dict[str, Any] | None = None  # r_actions, r_outputs, gt_data_hash
    actions: Any = None


class TauBenchInfo(_Model):
    task: TauBenchTask | None = None
    source: str | None = None
    user_cost: float | None = None
    reward_info: TauBenchRewardInfo | None = None


class TauBenchRecord(_Model):
    """One τ-bench (v1) trajectory; a results file is a JSON list of these. Reward = r_actions × r_outputs."""

    task_id: int
    trial: int | None = None
    reward: float
    info: TauBenchInfo | None = None
    traj: list[dict[str, Any]] = Field(default_factory=list)


def _loc(err: dict[str, Any]) -> str:
    out = "$"
    for part in err.get("loc", ()):
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate(path: str | Path) -> Results | DirectoryResults | list[TauBenchRecord]:
    """Validate a results file (or directory's ``results.json``) against the models; raise :class:`tauk.LoadError`
    naming the first problem's JSON path. Slow on big files (it builds every object): the loaders do not need it."""
    p = Path(path)
    target = p / "results.json" if p.is_dir() else p
    try:
        data = json.loads(target.read_bytes())
    except json.JSONDecodeError as exc:
        raise LoadError(str(target), f"byte {exc.pos}", f"invalid JSON: {exc.msg}") from None
    try:
        if isinstance(data, list):
            return [TauBenchRecord.model_validate(r) for r in data]
        if p.is_dir():
            return DirectoryResults.model_validate(data)
        return Results.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise LoadError(str(target), _loc(first), f"{first['msg']} ({exc.error_count()} problem(s) in all)") from None

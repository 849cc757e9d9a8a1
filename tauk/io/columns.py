"""The column contracts of the frames: for each, the ordered columns with their type and meaning.

This module is the one description of the frames: the builders (:mod:`tauk.io.frames`) produce exactly these
columns with these dtypes, and ARCHITECTURE.md's frame tables are :func:`markdown_table` of them (a test compares
them). A type is written as in the docs: ``str``, ``i64``, ``f64``, ``bool`` or ``list[str]``, with ``?`` when the
column can be null.

Examples
--------
>>> from tauk.io.columns import CONTRACTS, TRIALS
>>> list(CONTRACTS)
['runs', 'trials', 'messages', 'tool_calls', 'tasks', 'expected_actions', 'ticks', 'utterances', 'tick_tool_calls']
>>> TRIALS[0].name, TRIALS[0].type, TRIALS[0].dtype
('run_id', 'str', String)
"""

from __future__ import annotations

from typing import NamedTuple

import polars as pl

__all__ = [
    "CONTRACTS",
    "FRAMES",
    "EXPECTED_ACTIONS",
    "EXPECTED_ACTIONS_SCHEMA",
    "LIST_STR",
    "MESSAGES",
    "MESSAGES_SCHEMA",
    "RUNS",
    "RUNS_SCHEMA",
    "TASKS",
    "TASKS_SCHEMA",
    "TICKS",
    "TICKS_SCHEMA",
    "TICK_FRAMES",
    "TICK_TOOL_CALLS",
    "TICK_TOOL_CALLS_SCHEMA",
    "UTTERANCES",
    "UTTERANCES_SCHEMA",
    "TOOL_CALLS",
    "TOOL_CALLS_SCHEMA",
    "TRIALS",
    "TRIALS_SCHEMA",
    "Column",
    "markdown_table",
    "schema",
]

LIST_STR = pl.List(pl.String)

_DTYPES: dict[str, pl.DataType] = {
    "str": pl.String(), "i64": pl.Int64(), "f64": pl.Float64(), "bool": pl.Boolean(), "list[str]": LIST_STR,
}  # fmt: skip


class Column(NamedTuple):
    """One column of a frame: its name, its type as written in the docs (``?``: nullable) and its meaning."""

    name: str
    type: str
    meaning: str

    @property
    def dtype(self) -> pl.DataType:
        """The Polars dtype."""
        return _DTYPES[self.type.rstrip("?")]

    @property
    def nullable(self) -> bool:
        """Whether the column can hold nulls."""
        return self.type.endswith("?")


def _contract(*rows: tuple[str, str, str]) -> tuple[Column, ...]:
    cols = tuple(Column(*r) for r in rows)
    for c in cols:
        c.dtype  # noqa: B018  (an unknown type fails at import)
    return cols


RUNS = _contract(
    ("run_id", "str", "label given by the caller, else the file/dir path relative to the common parent"),
    ("source", "str", "path of the file or directory"),
    ("format", "str", "`tau2`, `tau2-dir`, `tau2-wrapper`, `tau2-list` (a bare list of simulations), `taubench`"),
    ("format_version", "str?", "`format_version` if the file has one, else inferred: `>=1.0` when the "
                               "`simulation_index` key is present, else `<1.0`; null for τ-bench"),
    ("agent", "str?", "caller override, else `agent_info.llm`, else `agent_info.implementation` (wrapper: `model`, "
                      "else `agent`; τ-bench and a bare simulation list: the file name before the domain)"),
    ("agent_implementation", "str?", "`info.agent_info.implementation`"),
    ("user_model", "str?", "`info.user_info.llm`"),
    ("user_implementation", "str?", "`info.user_info.implementation`"),
    ("domain", "str?", "`environment_info.domain_name` (wrapper: `domain`; τ-bench and a bare simulation list: from "
                       "the file name when it names a domain)"),
    ("setup", "str", "what makes runs repeated trials of one experiment: `domain/mode/user model/reward bases`, then "
                     "`#` and six hex digits summing up the other setup fields below when any is recorded (the same "
                     "fields give the same key; `tauk.io.frames.runs.setup_legend` spells it out); statistics never "
                     "pool setups unless asked"),
    ("mode", "str", "`solo` (solo agent or dummy user), `full_duplex` (voice), `normal` (turn-based: `half_duplex` or "
                    "no `mode`); other recorded modes as written, several joined by `+`"),
    ("reward_bases", "str", "the reward bases of the run's task definitions (without: the recorded ones), e.g. "
                            "`DB×COMMUNICATE`"),
    ("evaluator_version", "str?", "`info.git_commit`: the τ²-bench code that ran and graded (a setup field)"),
    ("retrieval_config", "str?", "`info.retrieval_config` (knowledge retrieval; a setup field)"),
    ("retrieval_config_kwargs", "str?", "`info.retrieval_config_kwargs` as canonical JSON (a setup field)"),
    ("speech_complexity", "str?", "`info.speech_complexity` (voice; a setup field)"),
    ("audio_settings", "str?", "`info.audio_native_config` as canonical JSON without `provider`, `model`, "
                               "`reasoning_effort`, `cascaded_config_name` (the agent itself; a setup field)"),
    ("text_streaming_config", "str?", "`info.text_streaming_config` as canonical JSON; null when absent or upstream's "
                                      "default `{\"chunk_by\": \"words\", \"chunk_size\": 1}` (a setup field)"),
    ("user_persona", "str?", "`info.user_info.persona_config` as canonical JSON (a setup field)"),
    ("num_trials", "i64?", "`info.num_trials` (τ-bench: distinct trial indices)"),
    ("max_steps", "i64?", "`info.max_steps`"),
    ("max_errors", "i64?", "`info.max_errors`"),
    ("seed", "i64?", "`info.seed`"),
    ("git_commit", "str?", "`info.git_commit`"),
    ("timestamp", "str?", "top-level `timestamp`"),
    ("n_simulations", "i64", "simulations kept"),
    ("n_tasks", "i64", "task definitions embedded in the file (τ-bench: distinct task ids)"),
    ("n_infra_errors", "i64", "simulations ending with `infrastructure_error`"),
)
"""``runs``: one row per results file or directory."""

TRIALS = _contract(
    ("run_id", "str", "the run"),
    ("simulation_id", "str", "the simulation's `id` (τ-bench: `<task_id>-<trial>`, or `<task_id>-#<position>` "
                             "without a trial)"),
    ("task_id", "str", "the task's id, as a string"),
    ("trial", "i64?", "trial index"),
    ("format", "str", "the run's format"),
    ("agent", "str?", "the run's agent label"),
    ("domain", "str?", "the run's domain"),
    ("user_model", "str?", "the run's user model"),
    ("agent_implementation", "str?", "the run's agent implementation"),
    ("user_implementation", "str?", "the run's user implementation"),
    ("setup", "str", "the run's setup (see `runs`)"),
    ("num_trials", "i64?", "the run's `num_trials`"),
    ("termination_reason", "str?", "as recorded, unknown values kept (null for τ-bench)"),
    ("is_infra_error", "bool", "termination_reason is `infrastructure_error`"),
    ("reward", "f64?", "`reward_info.reward`; null when reward_info is null"),
    ("has_reward_info", "bool", "reward_info is present"),
    ("recorded_db", "f64?", "`db_check.db_reward` (τ-bench: `r_actions`, its DB-hash check)"),
    ("recorded_env_assertion", "f64?", "product of `env_assertions[].reward` (else `met` as 1.0/0.0); null when "
                                       "the list is null"),
    ("recorded_nl_assertion", "f64?", "all `nl_assertions[].met` as 1.0/0.0, else `reward_breakdown.NL_ASSERTION`"),
    ("recorded_communicate", "f64?", "`reward_breakdown.COMMUNICATE`, else all `communicate_checks[].met` "
                                     "(τ-bench: `r_outputs`, 1.0 when the task has no outputs)"),
    ("recorded_action", "f64?", "`reward_breakdown.ACTION`, else all `action_checks[].action_match`"),
    ("recorded_reward_basis", "list[str]?", "`reward_info.reward_basis`"),
    ("reward_basis", "list[str]", "recorded basis, else the task's, else [\"DB\", \"COMMUNICATE\"]"),
    ("reward_breakdown", "str?", "`reward_info.reward_breakdown` as JSON (keys sorted)"),
    ("agent_cost", "f64?", "`agent_cost`"),
    ("user_cost", "f64?", "`user_cost` (τ-bench: `info.user_cost`)"),
    ("duration", "f64?", "`duration` (seconds)"),
    ("start_time", "str?", "`start_time`"),
    ("end_time", "str?", "`end_time`"),
    ("seed", "i64?", "the simulation's `seed`"),
    ("mode", "str?", "`mode` (e.g. full-duplex voice runs)"),
    ("n_messages", "i64?", "messages recorded; null when `messages` is null"),
    ("n_tool_calls", "i64?", "tool calls recorded; null when `messages` is null or some tool calls could not be "
                             "read"),
    ("n_ticks", "i64?", "full-duplex ticks recorded (`tauk.Results.ticks`); null when `ticks` is null"),
    ("db_match", "bool?", "`reward_info.db_check.db_match` (a recorded check with no `db_match` reads false, as "
                          "upstream counts it); null when no DB check is recorded"),
    ("auth_status", "str?", "`auth_classification.status` (`succeeded`, `failed`, `not_needed`); null when not "
                            "classified"),
    ("n_read_actions", "i64?", "`action_checks` whose `tool_type` is `read`; null when no action check is recorded, or "
                               "none of the run's records a `tool_type` (before v1.0)"),
    ("n_read_actions_correct", "i64?", "of those, matched (`action_match`)"),
    ("n_write_actions", "i64?", "`action_checks` whose `tool_type` is `write`; null as `n_read_actions`"),
    ("n_write_actions_correct", "i64?", "of those, matched"),
    ("had_unresponsive_period", "bool?", "`info.had_unresponsive_period` (full-duplex); null when not recorded"),
    ("review", "str?", "which LLM review the simulation carries: `review` (agent and user errors) or "
                       "`user_only_review`; null for none"),
    ("review_errors", "str?", "that review's errors in order, as a JSON list of `{source, severity, error_tags, "
                              "turn_idx, tick_start}` (user-only review: source `user`)"),
)
"""``trials``: one row per simulation."""

MESSAGES = _contract(
    ("run_id", "str", "the run"),
    ("simulation_id", "str", "the simulation"),
    ("message_idx", "i64", "0-based position in the simulation's message list (a `MultiToolMessage` counts as the "
                           "tool messages it wraps, one row each)"),
    ("role", "str?", "`system`, `user`, `assistant` or `tool`"),
    ("content", "str?", "the text"),
    ("turn_idx", "i64?", "`turn_idx`"),
    ("timestamp", "str?", "`timestamp`"),
    ("cost", "f64?", "`cost`"),
    ("n_tool_calls", "i64", "tool calls the message carries"),
    ("tool_call_id", "str?", "tool messages: the call id they answer"),
    ("requestor", "str?", "`requestor`"),
    ("is_error", "bool?", "tool messages: the tool reported an error"),
    ("usage", "str?", "`usage` as JSON"),
    ("raw_data", "str?", "`raw_data` (the provider's response) as JSON"),
)
"""``messages``: one row per message (built on first use)."""

TOOL_CALLS = _contract(
    ("run_id", "str", "the run"),
    ("simulation_id", "str", "the simulation"),
    ("message_idx", "i64", "the message carrying the call"),
    ("call_idx", "i64", "0-based position of the call within its simulation, in trajectory order"),
    ("tool_call_id", "str?", "the call's `id`"),
    ("name", "str?", "the tool's name"),
    ("arguments", "str", "JSON, canonical (keys sorted)"),
    ("requestor", "str?", "`requestor`"),
    ("role", "str?", "role of the carrying message"),
    ("result", "str?", "content of the tool message answering it"),
    ("is_error", "bool?", "that tool message reported an error"),
    ("parsed_from_string", "bool", "the calls were written as a string (nonconformant) and parsed"),
)
"""``tool_calls``: one row per tool call (built on first use)."""

TICKS = _contract(
    ("run_id", "str", "the run"),
    ("simulation_id", "str", "the simulation (full-duplex: it records `ticks`)"),
    ("tick_idx", "i64", "0-based position in the simulation's tick list"),
    ("tick_id", "i64?", "`tick_id`"),
    ("timestamp", "str?", "`timestamp`"),
    ("agent_content", "str?", "the agent chunk's text"),
    ("agent_utterance_ids", "list[str]?", "the agent chunk's `utterance_ids` (chunks sharing one merge)"),
    ("agent_speech", "bool?", "the agent chunk's `contains_speech`"),
    ("agent_turn_action", "str?", "the agent chunk's `turn_taking_action.action`"),
    ("user_content", "str?", "the user chunk's text"),
    ("user_utterance_ids", "list[str]?", "the user chunk's `utterance_ids`"),
    ("user_speech", "bool?", "the user chunk's `contains_speech`"),
    ("user_turn_action", "str?", "the user chunk's `turn_taking_action.action` (e.g. `wait`, `interrupt`)"),
    ("user_transcript", "str?", "`user_transcript`"),
    ("n_agent_tool_calls", "i64", "`agent_tool_calls` made in the tick"),
    ("n_user_tool_calls", "i64", "`user_tool_calls` made in the tick"),
    ("n_tool_results", "i64", "`agent_tool_results` and `user_tool_results` returned in the tick"),
    ("tick_duration_seconds", "f64?", "`tick_duration_seconds` (the configured tick)"),
    ("wall_clock_duration_seconds", "f64?", "`wall_clock_duration_seconds`"),
)
"""``ticks``: one row per tick of a full-duplex simulation (built on first use)."""

UTTERANCES = _contract(
    ("run_id", "str", "the run"),
    ("simulation_id", "str", "the simulation"),
    ("role", "str", "`assistant` (the agent) or `user`"),
    ("utterance_idx", "i64", "0-based position among that side's merged messages"),
    ("first_tick_idx", "i64", "the tick of its first chunk"),
    ("last_tick_idx", "i64", "the tick of its last chunk"),
    ("n_chunks", "i64", "chunks merged"),
    ("content", "str?", "the merged text, as upstream's full-duplex COMMUNICATE reads it"),
)
"""``utterances``: each side's streamed chunks merged into messages (chunks carrying tool calls left out; merged
messages without text — most chunks of a voice run carry none — are not listed)."""

TICK_TOOL_CALLS = _contract(
    ("run_id", "str", "the run"),
    ("simulation_id", "str", "the simulation"),
    ("tick_idx", "i64", "the tick the call was made in"),
    ("call_idx", "i64", "0-based position of the call within its simulation (per tick: the user's calls, then the "
                        "agent's)"),
    ("tool_call_id", "str?", "the call's `id`"),
    ("name", "str?", "the tool's name"),
    ("arguments", "str", "JSON, canonical (keys sorted)"),
    ("requestor", "str?", "`requestor` (else the side that made it)"),
    ("role", "str", "`assistant` (`agent_tool_calls`) or `user` (`user_tool_calls`)"),
    ("result", "str?", "content of the tool result answering it (same id)"),
    ("is_error", "bool?", "that result reported an error"),
    ("paired", "bool", "its side of its tick returned as many results as calls, the one at its position answering it "
                       "(same id): what upstream's replay of ticks requires"),
)
"""``tick_tool_calls``: one row per tool call made in a tick (what upstream's full-duplex ACTION reads)."""

TASKS = _contract(
    ("run_id", "str?", "the run embedding the definition (null for a tasks file read on its own)"),
    ("task_id", "str", "the task's id, as a string"),
    ("reward_basis", "list[str]", "`evaluation_criteria.reward_basis`, else [\"DB\", \"COMMUNICATE\"]"),
    ("reward_basis_defaulted", "bool", "the task names no basis"),
    ("has_evaluation_criteria", "bool", "`evaluation_criteria` is not null"),
    ("communicate_info", "list[str]?", "`evaluation_criteria.communicate_info` (τ-bench: `outputs`)"),
    ("nl_assertions", "list[str]?", "`evaluation_criteria.nl_assertions`"),
    ("n_actions", "i64", "gold actions"),
    ("n_env_assertions", "i64", "environment assertions"),
    ("n_communicate_info", "i64", "communicate strings"),
    ("n_nl_assertions", "i64", "natural-language assertions"),
    ("description", "str?", "`description` as JSON"),
    ("user_scenario", "str?", "`user_scenario` as canonical JSON (keys sorted; τ-bench: instruction and user id)"),
    ("initial_state", "str?", "`initial_state` as canonical JSON"),
    ("env_assertions", "str?", "`evaluation_criteria.env_assertions` as canonical JSON"),
    ("graded_as_embedded", "bool?", "every simulation's recorded action checks name this definition's gold actions, in "
                                    "order (false: the record was graded with other definitions; null: none recorded)"),
    ("actions_null", "bool", "`evaluation_criteria.actions` is null (τ²-bench then replays no gold state)"),
)
"""``tasks``: one row per (run, task definition)."""

EXPECTED_ACTIONS = _contract(
    ("run_id", "str?", "as in tasks"),
    ("task_id", "str", "the task"),
    ("action_idx", "i64", "0-based position in the task's actions"),
    ("action_id", "str?", "`action_id`"),
    ("name", "str", "the tool's name"),
    ("arguments", "str", "JSON, canonical (keys sorted; τ-bench: `kwargs`)"),
    ("compare_args", "list[str]?", "null means \"the call's own keys\", [] means \"name only\""),
    ("requestor", "str?", "`requestor`"),
    ("tool_type", "str?", "the tool type the run's action checks record for this tool (v1.0: `read`, `write`, "
                          "`think`, `generic`); null in a tasks file or where none is recorded"),
)
"""``expected_actions``: one row per gold action."""

CONTRACTS: dict[str, tuple[Column, ...]] = {
    "runs": RUNS, "trials": TRIALS, "messages": MESSAGES, "tool_calls": TOOL_CALLS, "tasks": TASKS,
    "expected_actions": EXPECTED_ACTIONS, "ticks": TICKS, "utterances": UTTERANCES, "tick_tool_calls": TICK_TOOL_CALLS,
}  # fmt: skip
"""Frame name → its columns, in order."""

FRAMES = ("runs", "trials", "tasks", "expected_actions", "messages", "tool_calls")
"""The frames of a results set (:class:`tauk.Results`, a store), in the order they are listed."""

TICK_FRAMES = ("ticks", "utterances", "tick_tool_calls")
"""The full-duplex frames of a :class:`tauk.Results` (decoded on first use; not kept in a store)."""


def schema(columns: tuple[Column, ...]) -> dict[str, pl.DataType]:
    """Column name → Polars dtype, in order.

    Examples
    --------
    >>> schema(EXPECTED_ACTIONS)["compare_args"]
    List(String)
    """
    return {c.name: c.dtype for c in columns}


RUNS_SCHEMA = schema(RUNS)
TRIALS_SCHEMA = schema(TRIALS)
MESSAGES_SCHEMA = schema(MESSAGES)
TOOL_CALLS_SCHEMA = schema(TOOL_CALLS)
TASKS_SCHEMA = schema(TASKS)
TICKS_SCHEMA = schema(TICKS)
UTTERANCES_SCHEMA = schema(UTTERANCES)
TICK_TOOL_CALLS_SCHEMA = schema(TICK_TOOL_CALLS)
EXPECTED_ACTIONS_SCHEMA = schema(EXPECTED_ACTIONS)


def markdown_table(frame: str) -> str:
    """The contract of ``frame`` as the Markdown table ARCHITECTURE.md shows.

    Examples
    --------
    >>> print(markdown_table("expected_actions").splitlines()[2])
    | run_id | str? | as in tasks |
    """
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += [f"| {c.name} | {c.type} | {c.meaning} |" for c in CONTRACTS[frame]]
    return "\n".join(lines)

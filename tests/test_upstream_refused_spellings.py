"""Spellings τ²-bench's own models refuse (its loader would not grade the file) but tauk reads: each is named (a load
report line and a LoadWarning), never a silent number. Found by benchmarks/fuzz_scoring_upstream.py."""

from __future__ import annotations

import copy
import json
import warnings

import pytest
from upstream_tau2 import run_upstream

import tauk

GOLD = {"action_id": "a0", "requestor": "assistant", "name": "f", "arguments": {"x": 1}, "compare_args": None}
TASK = {"id": "t", "user_scenario": {"instructions": "call f"},
        "evaluation_criteria": {"actions": [GOLD], "communicate_info": ["done"], "reward_basis": ["ACTION"]}}  # fmt: skip
MESSAGES = [
    {"role": "assistant", "content": "hi", "turn_idx": 0},
    {"role": "assistant", "content": None, "turn_idx": 1,
     "tool_calls": [{"id": "c1", "name": "f", "arguments": {"x": 1}, "requestor": "assistant"}]},
    {"role": "tool", "id": "c1", "content": "ok", "requestor": "assistant", "turn_idx": 2},
    {"role": "assistant", "content": "done", "turn_idx": 3},
]  # fmt: skip
SIM = {"id": "s", "task_id": "t", "trial": 0, "start_time": "2025-01-01T00:00:00", "end_time": "2025-01-01T00:00:01",
       "duration": 1.0, "termination_reason": "user_stop", "messages": MESSAGES,
       "reward_info": {"reward": 1.0, "reward_basis": ["ACTION"]}}  # fmt: skip
TOP = {"timestamp": "2025-01-01T00:00:00",
       "info": {"git_commit": "x", "num_trials": 1, "max_steps": 10, "max_errors": 10, "seed": 1,
                "user_info": {"implementation": "user_simulator", "llm": "u"},
                "agent_info": {"implementation": "llm_agent", "llm": "a"},
                "environment_info": {"domain_name": "mock", "policy": ""}}}  # fmt: skip


def _spell(kind: str) -> dict:
    task, sim = copy.deepcopy(TASK), copy.deepcopy(SIM)
    call = sim["messages"][1]["tool_calls"][0]
    if kind == "missing_termination_reason":
        sim["termination_reason"] = None
    elif kind == "gold_action_without_arguments":
        del task["evaluation_criteria"]["actions"][0]["arguments"]
    elif kind == "reward_basis_respelled":
        task["evaluation_criteria"]["reward_basis"] = ["action"]
    elif kind == "reward_basis_null":
        task["evaluation_criteria"]["reward_basis"] = None
    elif kind == "unknown_message_role":
        sim["messages"][1]["role"] = "Assistant"
    elif kind == "tool_call_without_arguments":
        call["arguments"] = None
    elif kind == "tool_call_arguments_as_text":
        call["arguments"] = json.dumps(call["arguments"])
    return {**TOP, "tasks": [task], "simulations": [sim]}


# the reading tauk gives (and says): (action, score_reward)
CASES = {
    "missing_termination_reason": (1.0, 0.0),  # the gate fails
    "gold_action_without_arguments": (0.0, 0.0),  # {} against the call's {"x": 1}
    "reward_basis_respelled": (1.0, 1.0),  # read as ACTION
    "reward_basis_null": (1.0, 1.0),  # read as the default DB × COMMUNICATE (no db_check: 1; "done" was said)
    "unknown_message_role": (0.0, 0.0),  # the call of a message of no known role is not pooled
    "tool_call_without_arguments": (1.0, 1.0),  # {}: compare_args null compares the call's keys, none
    "tool_call_arguments_as_text": (1.0, 1.0),  # the object the text holds
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_named_not_silent(kind, tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(_spell(kind)))
    with pytest.warns(tauk.LoadWarning, match="τ²-bench"):
        res = tauk.load(f, strict=False, progress=False)
        row = tauk.score(res).row(0, named=True)
    assert kind in {i.kind for i in res.report.issues}
    assert (row["action"], row["score_reward"]) == CASES[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        again = tauk.load(f, strict=False, progress=False)
        tauk.score(again)
        _ = again.messages  # a second decode (another column selection) does not report twice
    assert sum(i.kind == kind for i in again.report.issues) == 1


def test_conformant_file_reports_none(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(_spell("none")))
    with warnings.catch_warnings():
        warnings.simplefilter("error", tauk.LoadWarning)
        res = tauk.load(f, strict=False, progress=False)
        row = tauk.score(res).row(0, named=True)
    assert res.report.ok and (row["action"], row["score_reward"]) == (1.0, 1.0)


UPSTREAM = """
import json, sys
from pathlib import Path
from tau2.data_model.simulation import Results
out = {}
for p in sys.argv[1:]:
    try:
        Results.load(Path(p))
        out[Path(p).stem] = "loaded"
    except Exception as exc:
        out[Path(p).stem] = type(exc).__name__
print(json.dumps(out))
"""


def test_upstream_refuses_every_one(tmp_path):
    """The premise: τ²-bench's loader refuses each of these files (and loads the conformant one)."""
    paths = []
    for kind in [*CASES, "none"]:
        f = tmp_path / f"{kind}.json"
        f.write_text(json.dumps(_spell(kind)))
        paths.append(str(f))
    got = run_upstream(UPSTREAM, *paths)
    assert got == {**dict.fromkeys(CASES, "ValidationError"), "none": "loaded"}

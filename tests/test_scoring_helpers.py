"""Hand-built frames (ARCHITECTURE.md column contract) for the scoring tests, and a plain-Python reference of
docs/spec.md §2 written as a straight transcription of its text.  No tests here; imported by test_scoring_*.py."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import polars as pl

from tauk.scoring import task_frames

TRIALS_SCHEMA = {
    "run_id": pl.String,
    "simulation_id": pl.String,
    "task_id": pl.String,
    "trial": pl.Int64,
    "format": pl.String,
    "termination_reason": pl.String,
    "is_infra_error": pl.Boolean,
    "reward": pl.Float64,
    "has_reward_info": pl.Boolean,
    "recorded_db": pl.Float64,
    "recorded_env_assertion": pl.Float64,
    "recorded_nl_assertion": pl.Float64,
    "recorded_communicate": pl.Float64,
    "recorded_action": pl.Float64,
    "recorded_reward_basis": pl.List(pl.String),
    "reward_basis": pl.List(pl.String),
    "reward_breakdown": pl.String,
    "n_messages": pl.Int64,
    "n_tool_calls": pl.Int64,
}
MESSAGES_SCHEMA = {
    "run_id": pl.String,
    "simulation_id": pl.String,
    "message_idx": pl.Int64,
    "role": pl.String,
    "content": pl.String,
    "n_tool_calls": pl.Int64,
}
CALLS_SCHEMA = {
    "run_id": pl.String,
    "simulation_id": pl.String,
    "message_idx": pl.Int64,
    "call_idx": pl.Int64,
    "tool_call_id": pl.String,
    "name": pl.String,
    "arguments": pl.String,
    "requestor": pl.String,
    "role": pl.String,
}


def msg(role: str, content: str | None = None, calls: list[tuple[str, dict]] | None = None, **kw: Any) -> dict:
    """A message; ``calls`` = [(name, arguments)]."""
    tcs = None
    if calls:
        tcs = [{"name": n, "arguments": a, "requestor": kw.get("requestor", role)} for n, a in calls]
    return {"role": role, "content": content, "tool_calls": tcs}


def task(
    tid: str,
    communicate_info: list[str] | None = None,
    actions: list[dict] | None = None,
    reward_basis: list[str] | None = None,
    criteria: bool = True,
    nl_assertions: list[str] | None = None,
) -> dict:
    t: dict[str, Any] = {"id": tid, "description": None, "user_scenario": {}}
    if not criteria:
        t["evaluation_criteria"] = None
        return t
    ec: dict[str, Any] = {"actions": actions, "communicate_info": communicate_info, "nl_assertions": nl_assertions}
    if reward_basis is not None:
        ec["reward_basis"] = reward_basis
    t["evaluation_criteria"] = ec
    return t


def action(name: str, arguments: dict, compare_args: list[str] | None = None, requestor: str = "assistant") -> dict:
    return {"action_id": None, "name": name, "arguments": arguments, "compare_args": compare_args, "requestor": requestor}


def sim(
    sid: str,
    tid: str,
    messages: list[dict] | None,
    termination_reason: str | None = "user_stop",
    db: float | None = 1.0,
    env: float | None = None,
    nl: float | None = None,
    has_reward_info: bool = True,
    reward: float | None = None,
    recorded_communicate: float | None = None,
    recorded_action: float | None = None,
    fmt: str = "tau2",
) -> dict:
    return {
        "id": sid,
        "task_id": tid,
        "messages": messages,
        "termination_reason": termination_reason,
        "db": db,
        "env": env,
        "nl": nl,
        "has_reward_info": has_reward_info,
        "reward": reward,
        "recorded_communicate": recorded_communicate,
        "recorded_action": recorded_action,
        "format": fmt,
    }


def build(sims: list[dict], tasks: list[dict], run_id: str = "run") -> SimpleNamespace:
    """Frames exactly as ARCHITECTURE.md names them, from the dicts above."""
    tasks_f, acts_f = task_frames(tasks, run_id=run_id)
    basis_of = {t["task_id"]: t["reward_basis"] for t in tasks_f.to_dicts()}
    trials, msgs, calls = [], [], []
    for s in sims:
        ms = s["messages"]
        ncalls = 0
        for i, m in enumerate(ms or []):
            tcs = m.get("tool_calls") or []
            msgs.append(
                {
                    "run_id": run_id,
                    "simulation_id": s["id"],
                    "message_idx": i,
                    "role": m["role"],
                    "content": m.get("content"),
                    "n_tool_calls": len(tcs),
                }
            )
            for c in tcs:
                calls.append(
                    {
                        "run_id": run_id,
                        "simulation_id": s["id"],
                        "message_idx": i,
                        "call_idx": ncalls,
                        "tool_call_id": f"c{ncalls}",
                        "name": c["name"],
                        "arguments": json.dumps(c["arguments"], sort_keys=True),
                        "requestor": c.get("requestor"),
                        "role": m["role"],
                    }
                )
                ncalls += 1
        hri = s["has_reward_info"]
        trials.append(
            {
                "run_id": run_id,
                "simulation_id": s["id"],
                "task_id": s["task_id"],
                "trial": 0,
                "format": s["format"],
                "termination_reason": s["termination_reason"],
                "is_infra_error": s["termination_reason"] == "infrastructure_error",
                "reward": s["reward"],
                "has_reward_info": hri,
                "recorded_db": s["db"] if hri else None,
                "recorded_env_assertion": s["env"] if hri else None,
                "recorded_nl_assertion": s["nl"] if hri else None,
                "recorded_communicate": s["recorded_communicate"],
                "recorded_action": s["recorded_action"],
                "recorded_reward_basis": None,
                "reward_basis": basis_of.get(s["task_id"], ["DB", "COMMUNICATE"]),
                "reward_breakdown": None,
                "n_messages": None if ms is None else len(ms),
                "n_tool_calls": ncalls,
            }
        )
    return SimpleNamespace(
        trials=pl.DataFrame(trials, schema=TRIALS_SCHEMA),
        messages=pl.DataFrame(msgs, schema=MESSAGES_SCHEMA),
        tool_calls=pl.DataFrame(calls, schema=CALLS_SCHEMA),
        tasks=tasks_f,
        expected_actions=acts_f,
    )


# ------------------------------------------------------------------------------------------------- reference
# A straight transcription of docs/spec.md §2 over the dicts above, one simulation at a time, in plain Python.

COMPONENTS = ["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]


class RefSafetyError(Exception):
    pass


def has_text_content(m: dict) -> bool:
    c = m.get("content")
    return c is not None and c.strip() != ""


def ref_communicate(messages: list[dict], communicate_info: list[str] | None, respond_only: bool = False) -> float:
    if not communicate_info:
        return 1.0
    for s in communicate_info:
        found = False
        for m in messages:
            if m["role"] != "assistant" or not has_text_content(m):
                continue
            if respond_only and m.get("tool_calls"):
                continue
            if s.lower() in m["content"].lower().replace(",", ""):
                found = True
                break
        if not found:
            return 0.0
    return 1.0


def ref_call_matches(gold: dict, call: dict) -> bool:
    if gold["name"] != call["name"]:
        return False
    keys = call["arguments"].keys() if gold["compare_args"] is None else gold["compare_args"]
    if len(keys) == 0:
        return True
    tool_args = {k: v for k, v in call["arguments"].items() if k in keys}
    gold_args = {k: v for k, v in gold["arguments"].items() if k in keys}
    return tool_args == gold_args


def ref_action(messages: list[dict], actions: list[dict] | None) -> float:
    if not actions:
        return 1.0
    calls = [c for m in messages if m["role"] in ("assistant", "user") for c in (m.get("tool_calls") or [])]
    return 1.0 if all(any(ref_call_matches(g, c) for c in calls) for g in actions) else 0.0


def ref_score(s: dict, t: dict | None, evaluation: str = "all", basis_override: list[str] | None = None) -> dict:
    """-> {gate, db, env_assertion, nl_assertion, communicate, action, score_reward, failure}; raises RefSafetyError."""
    out: dict[str, Any] = {}
    out["gate"] = 1.0 if s["termination_reason"] in ("user_stop", "agent_stop") else 0.0
    hri = s["has_reward_info"]
    out["db"] = (1.0 if s["db"] is None else s["db"]) if hri else None
    if s["format"] == "taubench":
        # τ-bench: DB is r_actions (docs/spec.md §1.3); its info keeps r_actions only when the task has no outputs, else
        # r_outputs = 1 still tells it through the reward (r_actions × r_outputs); otherwise it is unknown.
        db = s["db"] if hri else None
        if db is None and s["recorded_communicate"] == 1.0 and s["reward"] is not None:
            db = 1.0 if s["reward"] > 0 else 0.0
        out["db"] = db
    out["env_assertion"] = (1.0 if s["env"] is None else s["env"]) if hri else None
    ec = t.get("evaluation_criteria") if t else None
    # unjudged NL: 1.0 only where the task is known to have no NL assertion (τ²-bench's evaluator gives 1.0 then),
    # else (NL assertions, or no task definition) unknown
    to_judge = t is None or bool((ec or {}).get("nl_assertions"))
    out["nl_assertion"] = (s["nl"] if s["nl"] is not None else None if to_judge else 1.0) if hri else None
    msgs = s["messages"]
    respond_only = s["format"] == "taubench"
    if msgs is None:
        out["communicate"] = s["recorded_communicate"]
        out["action"] = s["recorded_action"]
    else:
        out["communicate"] = ref_communicate(msgs, (ec or {}).get("communicate_info"), respond_only)
        out["action"] = ref_action(msgs, (ec or {}).get("actions"))
    if basis_override is not None:
        basis = list(basis_override)
    elif ec is not None and ec.get("reward_basis") is not None:
        basis = list(ec["reward_basis"])
    else:
        basis = ["DB", "COMMUNICATE"]
    if out["gate"] == 0.0:
        out["score_reward"], out["failure"] = 0.0, f"premature:{s['termination_reason']}"
        return out
    if t is not None and ec is None:
        out["score_reward"], out["failure"] = 1.0, None
        return out
    evaluated = {
        "env": {"DB", "ENV_ASSERTION"},
        "communicate": {"COMMUNICATE"},
        "action": {"ACTION"},
        "nl_assertions": {"NL_ASSERTION"},
        "all": set(COMPONENTS),
        "all_with_nl_assertions": set(COMPONENTS),
        "all_ignore_basis": {"DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"},
        "all_with_nl_assertions_ignore_basis": set(COMPONENTS),
    }[evaluation]
    if set(basis) - evaluated:
        raise RefSafetyError(sorted(set(basis) - evaluated))
    if evaluation == "all_ignore_basis":
        factors = [c for c in ("DB", "ENV_ASSERTION") if c in basis] + ["ACTION", "COMMUNICATE"]
    elif evaluation == "all_with_nl_assertions_ignore_basis":
        factors = [c for c in ("DB", "ENV_ASSERTION") if c in basis] + ["NL_ASSERTION", "ACTION", "COMMUNICATE"]
    elif evaluation == "env":
        factors = [c for c in ("DB", "ENV_ASSERTION") if c in basis]
    elif evaluation in ("communicate", "action", "nl_assertions"):  # that evaluator's reward, whatever the basis
        factors = [{"communicate": "COMMUNICATE", "action": "ACTION", "nl_assertions": "NL_ASSERTION"}[evaluation]]
    else:
        factors = [c for c in COMPONENTS if c in basis]
    col = {"DB": "db", "ENV_ASSERTION": "env_assertion", "NL_ASSERTION": "nl_assertion", "ACTION": "action",
           "COMMUNICATE": "communicate"}  # fmt: skip
    vals = {c: out[col[c]] for c in factors}
    zero = [c for c in COMPONENTS if c in vals and vals[c] == 0.0]
    if zero:
        out["score_reward"], out["failure"] = 0.0, "+".join(zero)
    elif any(v is None for v in vals.values()):
        out["score_reward"], out["failure"] = None, "no_reward_info"
    else:
        r = 1.0
        for v in vals.values():
            r *= v
        out["score_reward"], out["failure"] = r, None
    return out

"""Property test: the vectorised kernel agrees with the plain-Python transcription of docs/spec.md §2
(test_scoring_helpers.ref_*) on random trajectories, criteria, records and evaluation types."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_scoring_helpers import (
    COMPONENTS,
    RefSafetyError,
    build,
    has_text_content,
    ref_call_matches,
    ref_score,
)

import tauk
from tauk.scoring import EVALUATION_TYPES, action_checks, communicate_checks, score

ALPHABET = "aAbB1 ,.$\t\n\x1c\u00a0éÉΣ"
texts = st.text(alphabet=ALPHABET, max_size=14)
needles = st.text(alphabet="aAb1 ,.É", min_size=0, max_size=3)
KEYS = ["x", "y", "z"]
NAMES = ["f", "g", "h"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0]),
    st.sampled_from(["1", "a", "A", ""]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["p", "q"]), inner, max_size=2)
    ),
    max_leaves=4,
)
arg_dicts = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3)
calls = st.lists(st.tuples(st.sampled_from(NAMES), arg_dicts), max_size=2)


@st.composite
def messages(draw):
    out = []
    for _ in range(draw(st.integers(0, 7))):
        role = draw(st.sampled_from(["system", "user", "assistant", "tool", "assistant"]))
        content = draw(st.one_of(st.none(), texts))
        # calls of system and tool messages too: a file may record them; τ²-bench's models ignore them
        tcs = draw(calls) if role in ("assistant", "user") or draw(st.integers(0, 3)) == 0 else []
        out.append(
            {
                "role": role,
                "content": content,
                "tool_calls": [{"name": n, "arguments": a, "requestor": role} for n, a in tcs] or None,
            }
        )
    return out


@st.composite
def scenario(draw):
    n_tasks = draw(st.integers(1, 3))
    all_calls: list[tuple[str, dict]] = []
    sims = []
    for i in range(draw(st.integers(1, 6))):
        msgs = draw(st.one_of(messages(), st.just(None))) if draw(st.integers(0, 9)) == 0 else draw(messages())
        for m in msgs or []:
            all_calls += [(c["name"], c["arguments"]) for c in m["tool_calls"] or []]
        sims.append(
            {
                "id": f"s{i}",
                "task_id": f"t{draw(st.integers(0, n_tasks - 1))}",
                "messages": msgs,
                "termination_reason": draw(st.sampled_from(["user_stop", "agent_stop", "max_steps", "user_error"])),
                "db": draw(st.sampled_from([None, 0.0, 1.0])),
                "env": draw(st.sampled_from([None, 0.0, 1.0])),
                "nl": draw(st.sampled_from([None, 0.0, 1.0])),
                "has_reward_info": draw(st.booleans()) or draw(st.booleans()),
                "reward": draw(st.sampled_from([None, 0.0, 1.0])),
                "recorded_communicate": draw(st.sampled_from([None, 0.0, 1.0])),
                "recorded_action": draw(st.sampled_from([None, 0.0, 1.0])),
                "format": draw(st.sampled_from(["tau2", "tau2", "taubench"])),
            }
        )
    tasks = []
    for j in range(n_tasks):
        if draw(st.integers(0, 9)) == 0:
            tasks.append({"id": f"t{j}", "evaluation_criteria": None, "user_scenario": {}})
            continue
        golds = None
        if draw(st.booleans()):
            golds = []
            for _ in range(draw(st.integers(0, 3))):
                if all_calls and draw(st.booleans()):
                    name, args = draw(st.sampled_from(all_calls))
                else:
                    name, args = draw(st.sampled_from(NAMES)), draw(arg_dicts)
                ca = draw(st.one_of(st.none(), st.just([]), st.lists(st.sampled_from(KEYS), max_size=3)))
                golds.append(
                    {"action_id": None, "name": name, "arguments": args, "compare_args": ca,
                     "requestor": draw(st.sampled_from(["assistant", "user"]))}  # fmt: skip
                )
        ec = {
            "actions": golds,
            "communicate_info": draw(st.one_of(st.none(), st.lists(needles, max_size=3))),
            "nl_assertions": None,
        }
        if draw(st.booleans()):
            ec["reward_basis"] = draw(st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=3, unique=True))
        tasks.append({"id": f"t{j}", "evaluation_criteria": ec, "user_scenario": {}})
    evaluation = draw(st.sampled_from(EVALUATION_TYPES))
    override = draw(
        st.one_of(st.none(), st.lists(st.sampled_from(COMPONENTS), min_size=1, max_size=3, unique=True))
    )
    return sims, tasks, evaluation, override


COLS = ["gate", "db", "env_assertion", "nl_assertion", "communicate", "action", "score_reward", "failure"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenario())
def test_score_matches_reference(case):
    sims, tasks, evaluation, override = case
    by_id = {t["id"]: t for t in tasks}
    try:
        expected = [ref_score(s, by_id[s["task_id"]], evaluation, override) for s in sims]
    except RefSafetyError:
        expected = None
    r = build(sims, tasks)
    if expected is None:
        with pytest.raises(tauk.EvaluationError):
            score(r, evaluation=evaluation, reward_basis=override)
        return
    got = score(r, evaluation=evaluation, reward_basis=override).select(COLS).to_dicts()
    for s, g, e in zip(sims, got, expected):
        assert g == {c: e[c] for c in COLS}, (s, by_id[s["task_id"]])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(scenario())
def test_checks_match_reference(case):
    sims, tasks, _, _ = case
    by_id = {t["id"]: t for t in tasks}
    r = build(sims, tasks)
    exp_c, exp_a = [], []
    for s in sims:
        ec = by_id[s["task_id"]].get("evaluation_criteria") or {}
        if s["messages"] is None:
            continue
        ms = s["messages"]
        for i, info in enumerate(ec.get("communicate_info") or []):
            first = next(
                (k for k, m in enumerate(ms)
                 if m["role"] == "assistant" and has_text_content(m)
                 and not (s["format"] == "taubench" and m["tool_calls"])
                 and info.lower() in m["content"].lower().replace(",", "")),
                None,
            )  # fmt: skip
            exp_c.append((s["id"], i, info, first is not None, first))
        # call_idx numbers every recorded call of the simulation; only those of assistant and user messages pool
        numbered = [(m["role"], c) for m in ms for c in m["tool_calls"] or []]
        pool = [(k, c) for k, (role, c) in enumerate(numbered) if role in ("assistant", "user")]
        for j, g in enumerate(ec.get("actions") or []):
            first = next((k for k, c in pool if ref_call_matches(g, c)), None)
            exp_a.append((s["id"], j, first is not None, first))
    got_c = communicate_checks(r).select("simulation_id", "info_idx", "info", "met", "message_idx").rows()
    got_a = action_checks(r).select("simulation_id", "action_idx", "matched", "call_idx").rows()
    assert got_c == exp_c
    assert got_a == exp_a

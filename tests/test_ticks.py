"""Full-duplex runs are graded from their ticks: the ``ticks`` / ``utterances`` / ``tick_tool_calls`` frames, and
COMMUNICATE / ACTION recomputed and audited as upstream's full-duplex evaluators compute them.

The real voice run (``tau2-dir-voice``) records no text, no tool calls, no reward and no tasks; the tests write a
minimally edited copy — the three retail tasks embedded, a few agent chunks given text and utterance ids, a few ticks
given tool calls, a recorded reward_info — and compare with ``FullDuplexCommunicateEvaluator`` /
``FullDuplexActionEvaluator`` of upstream τ²-bench.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import polars as pl
import pytest
from upstream_tau2 import run_upstream

import tauk
from tauk.io import structs as S
from tauk.io.frames.ticks import merge_chunks

VOICE = "tau2-dir-voice"
SIMS = {  # simulation id -> its task
    "cd9c5ed2-9751-4c86-8dac-8a895a332e41": "20",
    "49b22f0c-4a56-41c5-922f-bc2a56e53a23": "40",
    "7c6a3e3e-ac3f-406f-aea9-8cacb0a2e680": "98",
}
COMMUNICATE_INFO = {"20": ["80280"], "40": ["60", "mastercard"], "98": ["#W3916020"]}  # 40: the task's own
RECORDED = {"20": (0.0, 0.0), "40": (1.0, 1.0), "98": (1.0, 1.0)}  # (COMMUNICATE, ACTION) written into the copy


def _call(cid: str, name: str, args: dict, requestor: str = "assistant") -> dict:
    return {"id": cid, "name": name, "arguments": args, "requestor": requestor}


def _result(cid: str, content: str, requestor: str = "assistant") -> dict:
    return {"id": cid, "role": "tool", "content": content, "requestor": requestor, "error": False}


# per task: agent chunks (tick offset among the ticks where the agent speaks, text, utterance ids, tool calls on the
# chunk) and tick tool calls (offset, side, calls)
CHUNKS = {
    "20": [(0, "Your zip code is", ["u1"], None), (1, " 80,", ["u1"], None), (2, "280, right?", ["u1", "u2"], None),
           (3, "Let me check.", ["u3"], None)],
    "40": [(0, "The total is", ["u5"], None), (1, " $60", ["u5"], None),
           (2, "mastercard", ["u6"], [_call("x1", "transfer_to_human_agents", {"summary": "mastercard"})]),
           (3, "master", None, None), (4, "card", None, None), (5, "", ["u7"], None)],
    "98": [(0, "Exchange for order", ["u8"], None), (1, "#W39", ["u8", "u9"], None), (2, "16020", ["u9"], None),
           (3, "done", ["u8"], None), (4, "   ", ["u10"], None)],
}  # fmt: skip
CALLS = {
    "20": [(10, "agent", [_call("c1", "find_user_id_by_name_zip",
                                {"first_name": "Ethan", "last_name": "Garcia", "zip": "80280"})]),
           (11, "agent", [_call("c2", "get_user_details", {"user_id": "ethan_garcia_1261"})])],
    "40": [(10, "agent", [_call("c1", "find_user_id_by_email", {"email": "isabella.lopez3271@example.com"}),
                          _call("c2", "get_user_details", {"user_id": "isabella_lopez_6490"})]),
           (11, "user", [_call("c3", "get_order_details", {"order_id": "#W4923227"}, "user")]),
           (12, "agent", [_call("c4", "modify_pending_order_payment",
                                {"order_id": "#W4923227", "payment_method_id": "credit_card_8897086"})])],
    "98": [(10, "agent", [_call("c1", "exchange_delivered_order_items",
                                {"order_id": "#W4689314", "item_ids": ["5996159312"], "new_item_ids": ["8363011723"],
                                 "payment_method_id": "credit_card_8105988"})]),
           (11, "agent", [_call("c2", "exchange_delivered_order_items",  # item order swapped: no match
                                {"order_id": "#W3916020", "item_ids": ["4068787148", "7758198585"],
                                 "new_item_ids": ["5606522780", "6245746168"],
                                 "payment_method_id": "credit_card_8105988"})]),
           (12, "agent", [_call("c3", "cancel_pending_order", {"order_id": "#W8855135", "reason": "no longer needed"})])],
}  # fmt: skip


def voice_copy(shared_data: Path, dest: Path) -> Path:
    """The edited copy of the voice run (see the module docstring); returns its folder."""
    folder = dest / "voice"
    shutil.copytree(shared_data / VOICE, folder)
    meta = json.loads((folder / "results.json").read_text())
    tasks = {t["id"]: t for t in json.loads((shared_data / "tasks/head_retail_tasks.json").read_text())}
    meta["tasks"] = []
    for tid in SIMS.values():
        task = json.loads(json.dumps(tasks[tid]))
        task["evaluation_criteria"]["communicate_info"] = COMMUNICATE_INFO[tid]
        task["evaluation_criteria"]["reward_basis"] = ["DB", "COMMUNICATE", "ACTION"]
        meta["tasks"].append(task)
    (folder / "results.json").write_text(json.dumps(meta))
    for sid, tid in SIMS.items():
        f = folder / "simulations" / f"{sid}.json"
        sim = json.loads(f.read_text())
        speaking = [t for t in sim["ticks"] if t["agent_chunk"]["contains_speech"]]
        for offset, text, ids, calls in CHUNKS[tid]:
            chunk = speaking[offset]["agent_chunk"]
            chunk["content"] = text
            if ids is not None:
                chunk["utterance_ids"] = ids
            if calls is not None:
                chunk["tool_calls"] = calls
        for offset, side, calls in CALLS[tid]:
            tick = speaking[offset]
            tick[f"{side}_tool_calls"] = calls
            tick[f"{side}_tool_results"] = [_result(c["id"], f"ok {c['name']}", c["requestor"]) for c in calls]
        comm, act = RECORDED[tid]
        sim["reward_info"] = {
            "reward": comm * act, "db_check": {"db_match": True, "db_reward": 1.0},
            "reward_basis": ["DB", "COMMUNICATE", "ACTION"],
            "reward_breakdown": {"DB": 1.0, "COMMUNICATE": comm, "ACTION": act},
        }  # fmt: skip
        f.write_text(json.dumps(sim))
    return folder


UPSTREAM_FULL_DUPLEX = """
import json, sys
from tau2.data_model.simulation import Results
from tau2.evaluator.evaluator_action import FullDuplexActionEvaluator
from tau2.evaluator.evaluator_communicate import FullDuplexCommunicateEvaluator
res = Results.load(sys.argv[1])
tasks = {t.id: t for t in res.tasks}
out = {}
for sim in res.simulations:
    task = tasks[sim.task_id]
    msgs = FullDuplexCommunicateEvaluator.ticks_to_message_history(sim.ticks)
    calls = FullDuplexActionEvaluator.extract_tool_calls(sim.ticks)
    out[sim.id] = {
        "communicate": FullDuplexCommunicateEvaluator.calculate_reward(task, sim.ticks).reward,
        "action": FullDuplexActionEvaluator.calculate_reward(task, sim.ticks).reward,
        "messages": [m.content for m in msgs],
        "calls": [[c.name, c.arguments] for c in calls],
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def voice(shared_data, tmp_path_factory):
    folder = voice_copy(shared_data, tmp_path_factory.mktemp("ticks"))
    return folder, run_upstream(UPSTREAM_FULL_DUPLEX, str(folder))


def test_ticks_frame_is_the_ticks(shared_data):
    res = tauk.load(shared_data / VOICE)
    ticks = res.ticks
    docs = {p.stem: json.loads(p.read_text()) for p in (shared_data / VOICE / "simulations").glob("*.json")}
    assert ticks.height == sum(len(d["ticks"]) for d in docs.values())
    assert res.trials.select("simulation_id", "n_ticks").sort("simulation_id").rows() == sorted(
        (sid, len(d["ticks"])) for sid, d in docs.items())  # fmt: skip
    for sid, d in docs.items():
        mine = ticks.filter(pl.col("simulation_id") == sid).sort("tick_idx")
        assert mine["tick_id"].to_list() == [t["tick_id"] for t in d["ticks"]]
        assert mine["agent_speech"].to_list() == [t["agent_chunk"]["contains_speech"] for t in d["ticks"]]
        assert mine["user_turn_action"].to_list() == [(t["user_chunk"]["turn_taking_action"] or {}).get("action")
                                                      for t in d["ticks"]]  # fmt: skip
    # the real run records no text and no calls: nothing to read, and nothing is invented
    assert res.utterances.height == 0 and res.tick_tool_calls.height == 0


def test_utterances_and_calls_are_upstreams(voice):
    folder, up = voice
    res = tauk.load(folder)
    utt = res.utterances.filter(pl.col("role") == "assistant").sort("simulation_id", "utterance_idx")
    for sid, u in up.items():
        texts = [m for m in u["messages"] if m]  # tauk lists the merged messages that have text
        assert utt.filter(pl.col("simulation_id") == sid)["content"].to_list() == texts, sid
        mine = res.tick_tool_calls.filter(pl.col("simulation_id") == sid).sort("call_idx")
        assert [[n, json.loads(a)] for n, a in mine.select("name", "arguments").rows()] == u["calls"], sid
    calls = res.tick_tool_calls
    assert calls["result"].null_count() == 0 and set(calls["role"]) == {"assistant", "user"}


def test_full_duplex_components_are_recomputed_as_upstream(voice):
    folder, up = voice
    scored = tauk.score(tauk.load(folder))
    assert set(scored["communicate_source"]) == set(scored["action_source"]) == {"recomputed"}
    for sid, comm, act in scored.select("simulation_id", "communicate", "action").rows():
        assert (comm, act) == (up[sid]["communicate"], up[sid]["action"]), sid


def test_ticks_without_a_mode_are_graded_from_the_ticks(voice, tmp_path):
    # trajectories that predate SimulationRun.mode: τ²-bench grades a simulation that records ticks from its ticks
    # (evaluate_trajectories.get_communication_mode), so COMMUNICATE / ACTION are recomputed there too
    folder, up = voice
    old = tmp_path / "voice-no-mode"
    shutil.copytree(folder, old)
    for f in (old / "simulations").glob("*.json"):
        sim = json.loads(f.read_text())
        sim.pop("mode", None)
        f.write_text(json.dumps(sim))
    scored = tauk.score(tauk.load(old))
    assert scored["mode"].null_count() == scored.height
    assert set(scored["communicate_source"]) == set(scored["action_source"]) == {"recomputed"}
    for sid, comm, act in scored.select("simulation_id", "communicate", "action").rows():
        assert (comm, act) == (up[sid]["communicate"], up[sid]["action"]), sid


def test_audit_finds_the_tick_level_mismatches(voice):
    folder, up = voice
    res = tauk.load(folder)
    a = tauk.audit(res)
    want = {"COMMUNICATE": set(), "ACTION": set(), "REWARD": set()}
    for sid, tid in SIMS.items():
        comm, act = RECORDED[tid]
        if comm != up[sid]["communicate"]:
            want["COMMUNICATE"].add(sid)
        if act != up[sid]["action"]:
            want["ACTION"].add(sid)
        if comm * act != up[sid]["communicate"] * up[sid]["action"]:  # DB recorded 1.0
            want["REWARD"].add(sid)
    assert want["COMMUNICATE"] and want["ACTION"]  # the copy was made to disagree
    got = a.mismatches()
    for comp, sids in want.items():
        assert set(got.filter(pl.col("component") == comp)["simulation_id"]) == sids, comp
    t = a.totals()
    assert (t["n_checked"], t["communicate_mismatch"], t["action_mismatch"]) == \
        (3, len(want["COMMUNICATE"]), len(want["ACTION"]))  # fmt: skip
    title = a.summary().title
    assert f"COMMUNICATE {len(want['COMMUNICATE'])}/3" in title and "not checked" not in title
    assert not a.ok


def test_unrecorded_voice_run_is_not_checked(shared_data):
    a = tauk.audit(tauk.load(shared_data / VOICE))
    assert a.not_checked() == ["COMMUNICATE", "ACTION", "reward"]
    title = a.summary().title
    assert title.endswith("COMMUNICATE, ACTION, reward not checked") and "COMMUNICATE 0" not in title


UPSTREAM_MERGE = """
import json, sys
from tau2.data_model.message import Tick
from tau2.evaluator.evaluator_communicate import FullDuplexCommunicateEvaluator
cases = json.load(open(sys.argv[1]))
out = [[m.content for m in FullDuplexCommunicateEvaluator.ticks_to_message_history([Tick.model_validate(t) for t in c])]
       for c in cases]
print(json.dumps(out))
"""


def test_chunk_merging_matches_upstream_on_random_streams(tmp_path):
    """400 random chunk streams (utterance ids overlapping or not, missing, empty texts, chunks with tool calls)."""
    rng = random.Random(7)
    cases = []
    for _ in range(400):
        ticks = []
        for i in range(rng.randint(1, 12)):
            chunk = {"role": "assistant", "content": rng.choice([None, "", " ", "a", "b,c", "dd", "e f"])}
            r = rng.random()
            if r < 0.8:
                chunk["utterance_ids"] = rng.sample(["u1", "u2", "u3", "u4"], rng.randint(0, 2))
            if rng.random() < 0.1:
                chunk["tool_calls"] = [] if rng.random() < 0.5 else [_call("x", "t", {})]
            ticks.append({"tick_id": i, "timestamp": "t", "agent_chunk": chunk if rng.random() < 0.9 else None})
        cases.append(ticks)
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    theirs = run_upstream(UPSTREAM_MERGE, str(path))
    import msgspec

    for case, want in zip(cases, theirs):
        ticks = msgspec.json.decode(json.dumps(case), type=list[S.Tick])
        chunks = [(i, t.agent_chunk) for i, t in enumerate(ticks) if t.agent_chunk and t.agent_chunk.tool_calls is None]
        assert [m[3] for m in merge_chunks(chunks)] == want, case


def test_voice_copy_counters_equal_upstream(voice):
    from test_counters import UPSTREAM_METRICS
    from test_shapes_head import _assert_counters

    from tauk.scoring import counters

    folder, _ = voice
    up = run_upstream(UPSTREAM_METRICS, str(folder))[str(folder)]
    mine = counters.head_counters(tauk.load(folder).trials, by=None).row(0, named=True)
    _assert_counters(mine, up)
    assert mine["db_match"] == 3 and mine["n_simulations"] == 3

"""Action-level attribution (tauk.scoring.deviations / trial_deviations) against an independent brute-force count
over the raw JSON: Python multisets of (tool, sorted-key JSON arguments), the tool table's lookup one name at a
time, and τ²-bench's own recorded DB verdicts."""

from __future__ import annotations

import bisect
import collections
import json
from functools import cache
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.scoring import deviations, trial_deviations
from tauk.tasks import lookup_tool

pytestmark = pytest.mark.filterwarnings("ignore::tauk.LoadWarning")

EVIDENCE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "deviation_evidence_upstream.json"


@cache
def _sc(domain: str, name: str, side: str | None) -> bool | None:
    return lookup_tool(name, domain=domain, requestor=side).state_changing


def _canon(v):
    """Python equality as JSON text: an integral float is the int (``2 == 2.0``), a bool the int."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon(x) for x in v]
    return v


def _key(name: str, args) -> tuple[str, str]:
    return name, json.dumps(_canon(args), sort_keys=True)


def _taubench_brute(path: Path) -> dict[str, dict]:
    out = {}
    for s in json.loads(path.read_text()):
        gold = collections.Counter(_key(a["name"], a["kwargs"]) for a in s["info"]["task"]["actions"]
                                   if _sc("airline", a["name"], None))  # fmt: skip
        calls = collections.Counter()
        for m in s["traj"]:
            for tc in m.get("tool_calls") or []:
                f = tc["function"]
                if _sc("airline", f["name"], None):
                    calls[_key(f["name"], json.loads(f["arguments"]))] += 1
        extra, missing = calls - gold, gold - calls
        out[f"{s['task_id']}-{s['trial']}"] = {
            "n": sum(extra.values()) + sum(missing.values()), "extra": bool(extra), "missing": bool(missing),
            "success": s["reward"] == 1}  # fmt: skip
    return out


def test_taubench_table_equals_brute_force(shared_data):
    path = shared_data / "taubench" / "gpt-4o_airline_4trials.json"
    brute = _taubench_brute(path)
    td = trial_deviations(tauk.load(path))
    assert td.height == len(brute) == 200
    got = {r["simulation_id"]: r for r in td.iter_rows(named=True)}
    for sid, b in brute.items():
        assert got[sid]["n_state_diff"] == b["n"], sid
        assert got[sid]["success"] == b["success"], sid
    # the table, from the brute force, equals tauk's conditional success
    bins = collections.defaultdict(lambda: [0, 0])
    for b in brute.values():
        bins[min(b["n"], 3)][0] += 1
        bins[min(b["n"], 3)][1] += b["success"]
    prof = tauk.stats.deviation_profile(td, by=("agent",))
    rows = {r["bin"]: (r["trials"], r["successes"]) for r in prof.by_count.iter_rows(named=True)}
    assert rows == {"0": tuple(bins[0]), "1": tuple(bins[1]), "2": tuple(bins[2]), "≥ 3": tuple(bins[3])}
    fails = [b for b in brute.values() if not b["success"]]
    g = prof.groups.row(0, named=True)
    assert g["failures"] == len(fails)
    assert g["failures_with_deviation"] == sum(b["n"] > 0 for b in fails)
    assert g["extra_or_wrong"] == sum(b["extra"] for b in fails)
    assert g["missing_only"] == sum((not b["extra"]) and b["missing"] for b in fails)


def _lis(seq: list[int]) -> int:
    tails: list[int] = []
    for x in seq:
        i = bisect.bisect_left(tails, x)
        tails[i:i + 1] = [x]
    return len(tails)


def _tau2_brute(path: Path) -> dict[str, dict]:
    """Per simulation: the multiset difference of state-changing calls (any requestor; solo runs: either side) and
    gold actions, the out-of-order count of the matched calls, and the recorded DB verdict."""
    d = json.loads(path.read_text())
    info = d["info"]
    dom = info["environment_info"]["domain_name"]
    solo = "solo" in (info["agent_info"].get("implementation") or "") or \
        info["user_info"].get("implementation") == "dummy_user"  # fmt: skip
    tasks = {str(t["id"]): t for t in d["tasks"]}
    out = {}
    for s in d["simulations"]:
        t = tasks.get(str(s["task_id"]))
        if t is None or s.get("messages") is None:
            continue
        acts = [a for a in (t.get("evaluation_criteria") or {}).get("actions") or []
                if _sc(dom, a["name"], None if solo else (a.get("requestor") or "assistant"))]  # fmt: skip
        keys = [_key(a["name"], a["arguments"]) for a in acts]
        calls = []
        for m in s["messages"]:
            tcs = m.get("tool_calls") or []
            for tc in tcs:
                side = None if solo else (tc.get("requestor") or m["role"])
                if _sc(dom, tc["name"], side):
                    calls.append(_key(tc["name"], tc["arguments"]))
        g, c = collections.Counter(keys), collections.Counter(calls)
        where = collections.defaultdict(list)
        for i, k in enumerate(keys):
            where[k].append(i)
        seen, seq = collections.Counter(), []
        for k in calls:
            if seen[k] < len(where[k]):
                seq.append(where[k][seen[k]])
            seen[k] += 1
        db = ((s.get("reward_info") or {}).get("db_check") or {}).get("db_reward")
        out[s["id"]] = {"n": sum((c - g).values()) + sum((g - c).values()), "ooo": len(seq) - _lis(seq), "db": db}
    return out


def _tau2_files(shared_data: Path) -> list[Path]:
    return [p for p in sorted((shared_data / "tau2").glob("*.json")) if "no-simulations" not in p.name]


def test_tau2_files_db_verdicts(shared_data):
    """≥ 95 % of DB-failed simulations get a deviation type; every DB-passed simulation with a decisive
    state-changing deviation is listed (the equivalent end states) and, with upstream's replay evidence, at most
    1 % stay unexplained."""
    failed = typed = passed = 0
    decisive_passed, exact_multiset_failed = [], 0
    evidence = json.loads(EVIDENCE.read_text()) if EVIDENCE.exists() else None
    unexplained_with_evidence, typed_with_evidence = [], 0
    for path in _tau2_files(shared_data):
        brute = _tau2_brute(path)
        res = tauk.load(path)
        td = trial_deviations(res)
        got = {r["simulation_id"]: r for r in td.iter_rows(named=True)}
        for sid, b in brute.items():
            r = got[sid]
            assert r["n_state_diff"] == b["n"], (path.name, sid)
            if b["db"] == 0:
                failed += 1
                typed += r["deviation"] is not None
                exact_multiset_failed += b["n"] == 0 and b["ooo"] == 0
                # a type is given exactly when the brute force sees a multiset or an order deviation, except the
                # neutral ones (tauk's only addition)
                if b["n"] == 0 and b["ooo"] == 0:
                    assert r["deviation"] is None
            elif b["db"] == 1:
                passed += 1
                if r["n_decisive"] > 0:
                    decisive_passed.append((path.name, sid))
        if evidence is not None and path.name in evidence:
            frame = _evidence_frame(evidence[path.name]).with_columns(run_id=pl.lit(res.run_ids[0]))
            td_ev = trial_deviations(res, evidence=frame).join(
                res.trials.select("simulation_id", "recorded_db"), on="simulation_id")
            unexplained_with_evidence += [(path.name, s) for s in td_ev.filter(
                (pl.col("recorded_db") == 1) & (pl.col("n_decisive") > 0))["simulation_id"]]  # fmt: skip
            typed_with_evidence += td_ev.filter((pl.col("recorded_db") == 0) & pl.col("deviation").is_not_null()).height
    assert failed == 213 and passed == 197  # the shared files' recorded verdicts
    assert typed / failed >= 0.95, (typed, failed)
    assert typed + exact_multiset_failed == failed
    # offline, the DB-passed simulations with a decisive deviation are the equivalent end states docs list
    assert len(decisive_passed) <= 0.06 * passed, decisive_passed
    if evidence is not None:
        assert len(evidence) == len(_tau2_files(shared_data)), "replay evidence for every file"
        # the DB-passed simulations whose deviations the replay does not explain (listed in the docs)
        assert len(unexplained_with_evidence) <= 0.01 * passed, unexplained_with_evidence
        assert typed_with_evidence / failed >= 0.95, (typed_with_evidence, failed)


def _evidence_frame(ev: dict) -> pl.DataFrame:
    """The replay's JSON (benchmarks/deviation_evidence_upstream.py, per call and --net) as an evidence= frame."""
    rows = []
    for sid, e in ev.items():
        rows += [(sid, int(k), None, v, None) for k, v in e.get("calls", {}).items()]
        rows += [(sid, None, int(k), v, None) for k, v in e.get("gold", {}).items()]
        if "net_calls_changed" in e:
            rows += [(sid, int(k), None, None, e["net_calls_changed"]) for k in e["net_calls"]]
        if "net_gold_changed" in e:
            rows += [(sid, None, int(k), None, e["net_gold_changed"]) for k in e["net_gold"]]
    return pl.DataFrame(rows, schema={"simulation_id": pl.String, "call_idx": pl.Int64, "action_idx": pl.Int64,
                                      "changed_state": pl.Boolean, "net_changed": pl.Boolean}, orient="row")  # fmt: skip


def test_net_evidence_makes_cancelling_deviations_neutral():
    """Two extra calls that each change the state but together do not (a reset, then a reboot that restores it):
    per-call evidence leaves them decisive, net evidence makes them neutral; a missing gold action whose removal
    changes the gold end state stays decisive; a wrong-argument pair needs both sides unchanged."""
    trials = pl.DataFrame({"run_id": ["r"] * 2, "simulation_id": ["a", "b"], "task_id": ["t"] * 2,
                           "domain": ["telecom"] * 2, "setup": ["telecom/normal/u/DB"] * 2, "format": ["tau2"] * 2,
                           "reward": [1.0, 0.0], "n_messages": [3, 3]})  # fmt: skip
    actions = pl.DataFrame({"run_id": ["r"] * 2, "task_id": ["t"] * 2, "action_idx": [0, 1],
                            "name": ["toggle_data", "refuel_data"], "arguments": ["{}", '{"gb_amount":2}'],
                            "requestor": ["user", "assistant"]})  # fmt: skip
    calls = pl.DataFrame({
        "run_id": ["r"] * 6, "simulation_id": ["a"] * 4 + ["b"] * 2, "call_idx": [0, 1, 2, 3, 0, 1],
        "message_idx": [0, 1, 1, 2, 0, 1],
        "name": ["toggle_data", "reset_apn_settings", "reboot_device", "refuel_data", "toggle_data", "refuel_data"],
        "arguments": ["{}", "{}", "{}", '{"gb_amount":2}', "{}", '{"gb_amount":5}'],
        "requestor": ["user", "user", "user", "assistant", "user", "assistant"],
    })  # fmt: skip
    messages = pl.DataFrame({"run_id": ["r"] * 6, "simulation_id": ["a"] * 3 + ["b"] * 3,
                             "message_idx": [0, 1, 2] * 2, "role": ["user", "user", "assistant"] * 2})  # fmt: skip
    res = {"trials": trials, "expected_actions": actions, "tool_calls": calls, "messages": messages,
           "tasks": pl.DataFrame({"run_id": ["r"], "task_id": ["t"]})}  # fmt: skip
    off = {r["simulation_id"]: r for r in trial_deviations(res).iter_rows(named=True)}
    assert (off["a"]["n_extra"], off["a"]["n_decisive"]) == (2, 2)
    assert (off["b"]["n_wrong_args"], off["b"]["n_decisive"]) == (1, 1)

    def ev(rows):
        return pl.DataFrame(rows, schema={"run_id": pl.String, "simulation_id": pl.String, "call_idx": pl.Int64,
                                          "action_idx": pl.Int64, "changed_state": pl.Boolean,
                                          "net_changed": pl.Boolean}, orient="row")  # fmt: skip

    per_call = ev([("r", "a", 1, None, True, None), ("r", "a", 2, None, True, None)])
    assert trial_deviations(res, evidence=per_call).filter(pl.col("simulation_id") == "a")["n_decisive"].item() == 2
    net = ev([("r", "a", 1, None, None, False), ("r", "a", 2, None, None, False),
              ("r", "b", 1, None, None, False), ("r", "b", None, 1, None, True)])  # fmt: skip
    both = pl.concat([per_call, net])
    dv = deviations(res, evidence=both)
    a = dv.filter(pl.col("simulation_id") == "a")
    assert a["neutral"].to_list() == ["no_net_change", "no_net_change"] and not a["decisive"].any()
    # b: the wrong call changed nothing net, the gold action it replaced did: still decisive
    b = dv.filter(pl.col("simulation_id") == "b")
    assert b["decisive"].to_list() == [True] and b["neutral"].to_list() == [None]
    b2 = deviations(res, evidence=ev([("r", "b", 1, None, None, False), ("r", "b", None, 1, None, False)]))
    assert b2.filter(pl.col("simulation_id") == "b")["neutral"].to_list() == ["no_net_change"]
    with pytest.raises(tauk.TaukError, match="net_changed"):
        deviations(res, evidence=pl.DataFrame({"run_id": ["r"], "simulation_id": ["a"], "call_idx": [1]}))


def test_kinds_on_a_constructed_trial():
    """missing / extra / wrong_args (which argument) / order / errored, and the first decisive deviation."""
    trials = pl.DataFrame({"run_id": ["r"], "simulation_id": ["s"], "task_id": ["t"], "domain": ["airline"],
                           "setup": ["airline/normal/u/DB"], "format": ["tau2"], "reward": [0.0], "n_messages": [9]})
    actions = pl.DataFrame({
        "run_id": ["r"] * 3, "task_id": ["t"] * 3, "action_idx": [0, 1, 2],
        "name": ["cancel_reservation", "update_reservation_baggages", "get_user_details"],
        "arguments": ['{"reservation_id":"A"}', '{"reservation_id":"B","total_baggages":2}', '{"user_id":"u"}'],
        "requestor": ["assistant"] * 3,
    })  # fmt: skip
    calls = pl.DataFrame({
        "run_id": ["r"] * 4, "simulation_id": ["s"] * 4, "call_idx": [0, 1, 2, 3], "message_idx": [2, 4, 6, 8],
        "name": ["update_reservation_baggages", "book_reservation", "cancel_reservation", "book_reservation"],
        "arguments": ['{"reservation_id":"B","total_baggages":3}', '{"x":1}', '{"reservation_id":"Z"}', '{"x":2}'],
        "requestor": ["assistant"] * 4, "role": ["assistant"] * 4, "result": ["ok", "Error: no", "ok", "ok"],
        "is_error": [False, True, False, False],
    })  # fmt: skip
    messages = pl.DataFrame({"run_id": ["r"] * 9, "simulation_id": ["s"] * 9, "message_idx": list(range(9)),
                             "role": ["user", "assistant", "assistant", "tool", "assistant", "tool", "assistant",
                                      "tool", "assistant"]})  # fmt: skip
    tasks = pl.DataFrame({"run_id": ["r"], "task_id": ["t"]})
    res = {"trials": trials, "expected_actions": actions, "tool_calls": calls, "messages": messages, "tasks": tasks}
    dv = deviations(res)
    kinds = sorted((r["kind"], r["tool"], r["state_changing"], r["decisive"], r["neutral"], tuple(r["wrong_args"]))
                   for r in dv.iter_rows(named=True))  # fmt: skip
    assert kinds == sorted([
        ("wrong_args", "update_reservation_baggages", True, True, None, ("total_baggages",)),
        ("wrong_args", "cancel_reservation", True, True, None, ("reservation_id",)),
        ("extra", "book_reservation", True, False, "errored", ()),
        ("extra", "book_reservation", True, True, None, ()),
        ("missing", "get_user_details", False, False, None, ()),
        # the two wrong-argument pairs are out of gold order, one side: not decisive
        ("order", "update_reservation_baggages", True, False, "same_side_order", ()),
    ])  # fmt: skip
    td = trial_deviations(res).row(0, named=True)
    assert (td["n_state_diff"], td["n_wrong_args"], td["n_extra"], td["n_missing"], td["n_read_missing"],
            td["n_order"], td["n_decisive"]) == (6, 2, 2, 0, 1, 1, 3)
    assert (td["deviation"], td["first_tool"], td["first_wrong_args"], td["first_message_idx"], td["first_turn"]) == (
        "wrong_args", "update_reservation_baggages", ["total_baggages"], 2, 2)


def test_order_across_sides_is_decisive_within_a_side_neutral():
    gold = ["toggle_data", "toggle_roaming", "refuel_data"]
    req = ["user", "user", "assistant"]
    trials = pl.DataFrame({"run_id": ["r", "r"], "simulation_id": ["a", "b"], "task_id": ["t", "t"],
                           "domain": ["telecom"] * 2, "setup": ["telecom/normal/u/ENV_ASSERTION"] * 2,
                           "format": ["tau2"] * 2, "reward": [0.0, 1.0], "n_messages": [3, 3]})  # fmt: skip
    actions = pl.DataFrame({"run_id": ["r"] * 3, "task_id": ["t"] * 3, "action_idx": [0, 1, 2], "name": gold,
                            "arguments": ["{}", "{}", '{"gb_amount":2.0}'], "requestor": req})  # fmt: skip
    # a: refuel (agent) before the user's toggles -> cross-side; b: the two user toggles swapped -> same side
    calls = pl.DataFrame({
        "run_id": ["r"] * 6, "simulation_id": ["a"] * 3 + ["b"] * 3, "call_idx": [0, 1, 2] * 2,
        "message_idx": [0, 1, 2] * 2,
        "name": ["refuel_data", "toggle_data", "toggle_roaming", "toggle_roaming", "toggle_data", "refuel_data"],
        "arguments": ['{"gb_amount":2}', "{}", "{}", "{}", "{}", '{"gb_amount":2}'],
        "requestor": ["assistant", "user", "user", "user", "user", "assistant"],
    })  # fmt: skip
    messages = pl.DataFrame({"run_id": ["r"] * 6, "simulation_id": ["a"] * 3 + ["b"] * 3,
                             "message_idx": [0, 1, 2] * 2, "role": ["assistant", "user", "user"] * 2})  # fmt: skip
    res = {"trials": trials, "expected_actions": actions, "tool_calls": calls, "messages": messages,
           "tasks": pl.DataFrame({"run_id": ["r"], "task_id": ["t"]})}  # fmt: skip
    td = {r["simulation_id"]: r for r in trial_deviations(res).iter_rows(named=True)}
    assert td["a"]["n_state_diff"] == td["b"]["n_state_diff"] == 0  # 2 == 2.0
    assert (td["a"]["n_order"], td["a"]["deviation"]) == (1, "order")
    assert (td["b"]["n_order"], td["b"]["n_decisive"], td["b"]["deviation"]) == (1, 0, None)


def test_viewer_highlights_the_first_decisive_deviation_escaped():
    from tauk.widgets import render_trajectory

    evil = "<script>alert(1)</script>"
    calls = pl.DataFrame({"run_id": ["r"], "simulation_id": ["s"], "call_idx": [0], "message_idx": [1],
                          "name": [evil], "arguments": ['{"a":"<b>"}'], "requestor": ["assistant"]})  # fmt: skip
    messages = pl.DataFrame({"run_id": ["r"] * 2, "simulation_id": ["s"] * 2, "message_idx": [0, 1],
                             "role": ["user", "assistant"], "content": ["hi", None]})  # fmt: skip
    dv = [{"kind": "wrong_args", "tool": evil, "wrong_args": ["<a>"], "call_idx": 0, "turn": 1, "decisive": True,
           "state_changing": True, "gold_arguments": '{"a":"<i>"}', "action_idx": 0}]  # fmt: skip
    html = render_trajectory(messages, calls, trial={"reward": 0.0}, deviations=dv)
    assert "first decisive deviation" in html and "tauk-decisive" in html
    assert "<script>" not in html and "<a>" not in html and "&lt;script&gt;" in html


def test_calls_of_system_and_tool_messages_are_not_pooled():
    """As ACTION (and τ²-bench) pools only the calls of assistant and user messages, so do the deviations: a gold's
    call recorded on a tool message leaves the gold missing."""
    trials = pl.DataFrame({"run_id": ["r"], "simulation_id": ["s"], "task_id": ["t"], "domain": ["airline"],
                           "setup": ["airline/normal/u/DB"], "format": ["tau2"], "reward": [0.0], "n_messages": [3]})
    actions = pl.DataFrame({"run_id": ["r"], "task_id": ["t"], "action_idx": [0], "name": ["get_user_details"],
                            "arguments": ['{"user_id":"u"}'], "requestor": ["assistant"]})  # fmt: skip
    calls = pl.DataFrame({
        "run_id": ["r"] * 2, "simulation_id": ["s"] * 2, "call_idx": [0, 1], "message_idx": [1, 2],
        "name": ["get_user_details"] * 2, "arguments": ['{"user_id":"u"}'] * 2, "requestor": ["assistant"] * 2,
        "role": ["tool", "system"], "result": ["ok", "ok"], "is_error": [False, False],
    })  # fmt: skip
    messages = pl.DataFrame({"run_id": ["r"] * 3, "simulation_id": ["s"] * 3, "message_idx": [0, 1, 2],
                             "role": ["user", "tool", "system"]})  # fmt: skip
    res = {"trials": trials, "expected_actions": actions, "tool_calls": calls, "messages": messages,
           "tasks": pl.DataFrame({"run_id": ["r"], "task_id": ["t"]})}  # fmt: skip
    assert [(r["kind"], r["tool"]) for r in deviations(res).iter_rows(named=True)] == [("missing", "get_user_details")]

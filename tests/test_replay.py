"""tauk.replay's own rules, each checked against τ²-bench's ``evaluate_simulation`` on trajectories built for it:
values that change type but compare equal, tool calls and tool messages that do not pair up, hallucinated tool
names, user-side calls, domains without an environment, the one-line message without τ²-bench, the containers that
track what a simulation reached, and the state put back exactly after every simulation.

The cases are made from a real airline run (``tau2/v1.0_whissle_airline_1trial.json``, task 12 whose gold actions
end with ``update_reservation_baggages(YAX4DR, total_baggages=2, nonfree_baggages=0, …)``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.replay._tracking import TrackedDict, TrackedList

pytestmark = pytest.mark.replay

WHISSLE = "tau2/v1.0_whissle_airline_1trial.json"
BAGS = {"reservation_id": "YAX4DR", "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "credit_card_4938634"}


# -- no τ²-bench needed ---------------------------------------------------------------------------------------------
def test_tracked_dict_notes_the_keys_handed_out_written_or_deleted():
    d = TrackedDict({"a": 1, "b": 2, "c": 3})
    assert "a" in d and len(d) == 3 and sorted(d) == ["a", "b", "c"] and d.touched == set()  # no record handed out
    d["a"], d.get("b"), d.get("zz")
    d["new"] = 4
    d.pop("c")
    assert d.touched == {"a", "b", "zz", "new", "c"} and not d.all
    d.reset()
    _ = list(d.items())
    assert d.all
    d.reset()
    d.update({"x": 1}, y=2)
    assert d.touched == {"x", "y"} and dict(d)["y"] == 2
    assert type(copy.deepcopy(d)) is dict and copy.deepcopy(d) == dict(d)


def test_tracked_list_is_reached_whole():
    lst = TrackedList([1, 2, 3])
    assert not lst.all and len(lst) == 3
    _ = lst[0]
    assert lst.all
    lst.reset()
    for _ in lst:
        pass
    assert lst.all and type(copy.deepcopy(lst)) is list


def test_without_tau2_one_line_says_what_to_install(monkeypatch, capsys):
    from tauk.replay import INSTALL_HINT, ReplayUnavailable, _upstream, replay

    monkeypatch.setattr(_upstream, "available", lambda: False)
    _upstream.require.cache_clear()
    try:
        with pytest.raises(ReplayUnavailable) as err:
            replay(tauk.load(Path(__file__).resolve().parents[1] / "data" / "baseline_airline.json"))
        text = str(err.value)
        assert "\n" not in text and text.startswith(INSTALL_HINT[:40]) and "pip install" in text
        assert "Python ≥ 3.12" in text and "TAU2_DATA_DIR" in text
        from tauk.cli import main

        assert main(["audit", str(Path(__file__).resolve().parents[1] / "data" / "baseline_airline.json"),
                     "--replay", "--quiet"]) == 2  # fmt: skip
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("tauk: error: replay needs τ²-bench")
    finally:
        _upstream.require.cache_clear()


def test_the_tasks_frame_keeps_what_replay_needs(tmp_path):
    tasks = [
        {"id": "a", "initial_state": {"initialization_actions": [{"env_type": "user", "func_name": "f",
                                                                   "arguments": {"x": 1}}]},
         "evaluation_criteria": {"actions": [], "env_assertions": [{"env_type": "assistant", "func_name": "g",
                                                                    "arguments": {}, "assert_value": True}]}},
        {"id": "b", "evaluation_criteria": {"reward_basis": ["DB"]}},
        {"id": "c"},
    ]  # fmt: skip
    p = tmp_path / "tasks.json"
    p.write_text(json.dumps(tasks))
    t, _ = tauk.load_tasks(p)
    rows = {r["task_id"]: r for r in t.iter_rows(named=True)}
    assert json.loads(rows["a"]["initial_state"])["initialization_actions"][0]["func_name"] == "f"
    assert json.loads(rows["a"]["env_assertions"])[0]["assert_value"] is True
    assert rows["a"]["actions_null"] is False  # [] is not null: τ²-bench replays a gold state for it
    assert rows["b"]["actions_null"] is True and rows["b"]["env_assertions"] is None
    assert rows["c"]["actions_null"] is True and rows["c"]["initial_state"] is None


def test_tauk_score_writes_every_simulation_with_where_db_came_from(tmp_path, capsys):
    from tauk.cli import main

    sample = Path(__file__).resolve().parents[1] / "data" / "baseline_airline.json"
    out = tmp_path / "s.parquet"
    assert main(["score", str(sample), "--out", str(out), "--quiet"]) == 0
    scored = pl.read_parquet(out)
    direct = tauk.score(tauk.load(sample))
    assert scored.equals(direct)
    assert set(scored["db_source"]) == {"record"} and scored["env_assertion_source"].null_count() == 0
    text = capsys.readouterr().out
    assert "n_db_record" in text and "--replay computes them" in text
    assert main(["score", str(sample), "--evaluation", "nope"]) == 2


# -- against τ²-bench ------------------------------------------------------------------------------------------------
def _case(shared: Path, tmp: Path, name: str, messages: list[dict], domain: str | None = None,
          solo: bool = False) -> Path:  # fmt: skip
    """A one-simulation results file: task 12 of the whissle airline run with ``messages``."""
    d = json.loads((shared / WHISSLE).read_text())
    sim = copy.deepcopy(next(s for s in d["simulations"] if s["task_id"] == "12"))
    sim["id"] = f"case-{name}"
    sim["messages"] = messages
    sim["termination_reason"] = "agent_stop"
    d["simulations"] = [sim]
    d["simulation_index"] = None
    d["tasks"] = [t for t in d["tasks"] if t["id"] == "12"]
    if domain is not None:
        d["info"]["environment_info"]["domain_name"] = domain
    if solo:
        d["info"]["agent_info"]["implementation"] = "llm_agent_solo"
        d["info"]["user_info"]["implementation"] = "dummy_user"
    p = tmp / f"{name}.json"
    p.write_text(json.dumps(d))
    return p


def _call(name: str, args: dict, cid: str = "c1", requestor: str = "assistant") -> list[dict]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [{"id": cid, "name": name, "arguments": args,
                                                                "requestor": requestor}]},
        {"role": "tool", "id": cid, "content": "{}", "requestor": requestor, "error": False},
    ]  # fmt: skip


def _upstream(path: Path) -> tuple[float | None, float | None] | str:
    """τ²-bench's own verdict (``tau2 evaluate-trajs``' code path), or the exception it raises, as text."""
    from tau2.data_model.simulation import Results
    from tau2.scripts.evaluate_trajectories import compute_simulation_rewards

    try:
        ri = compute_simulation_rewards(Results.load(path)).simulations[0].reward_info
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    env = None if ri.db_check is None else float(all(c.met for c in ri.env_assertions or []))
    return (None if ri.db_check is None else ri.db_check.db_reward, env)


def _tauk(path: Path) -> dict:
    from tauk.replay import replay

    return replay(tauk.load(path), verify=True).row(0, named=True)


def test_values_that_change_type_but_compare_equal_follow_the_hash(tau2, shared_data, tmp_path):
    """``2.0`` where the gold action has ``2``: Python says equal, τ²-bench's hash (``json.dumps``) says different
    — tauk gives the hash's verdict (its comparison serialises the records as the hash does)."""
    cases = {
        "ints": _call("update_reservation_baggages", BAGS),
        "float-total": _call("update_reservation_baggages", {**BAGS, "total_baggages": 2.0}),
        "true-for-1": _call("update_reservation_baggages", {**BAGS, "total_baggages": True, "nonfree_baggages": 0}),
    }
    seen = {}
    for name, msgs in cases.items():
        p = _case(shared_data, tmp_path, name, msgs)
        up, mine = _upstream(p), _tauk(p)
        assert (mine["replayed_db"], mine["replayed_env_assertion"]) == up, name
        seen[name] = up[0]
    assert seen == {"ints": 1.0, "float-total": 0.0, "true-for-1": 0.0}


@pytest.mark.parametrize("name, messages, words", [
    ("id-mismatch", [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "name": "update_reservation_baggages", "arguments": BAGS}]},
        {"role": "tool", "id": "c2", "content": "{}"}], "Tool call id mismatch"),
    ("text-between", [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "name": "update_reservation_baggages", "arguments": BAGS}]},
        {"role": "assistant", "content": "one moment"},
        {"role": "tool", "id": "c1", "content": "{}"}], "Tool message expected"),
    ("orphan-result", [{"role": "assistant", "content": "hi"}, {"role": "tool", "id": "c9", "content": "{}"}],
     "Tool message not expected"),
    ("missing-result", [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "name": "update_reservation_baggages", "arguments": BAGS}]}],
     "Tool message expected"),
])  # fmt: skip
def test_unpaired_tool_calls_fail_per_simulation_as_upstream_raises(tau2, shared_data, tmp_path, name, messages,
                                                                     words):  # fmt: skip
    p = _case(shared_data, tmp_path, name, messages)
    up = _upstream(p)
    assert isinstance(up, str) and words in up  # τ²-bench raises (evaluate-trajs would fail the whole file)
    mine = _tauk(p)
    assert mine["replay_status"] == "failed" and mine["replayed_db"] is None
    assert mine["replay_reason"].startswith("tool-call pairing:") and words in mine["replay_reason"]


def test_hallucinated_tools_and_user_side_calls_replay_as_upstream(tau2, shared_data, tmp_path):
    cases = {
        "hallucinated": _call("refund_everything", {"reservation_id": "YAX4DR"}) + _call(
            "update_reservation_baggages", BAGS, cid="c2"),
        "user-side": _call("update_reservation_baggages", BAGS, requestor="user"),
        "read-only": _call("get_reservation_details", {"reservation_id": "YAX4DR"}),
    }
    for name, msgs in cases.items():
        p = _case(shared_data, tmp_path, name, msgs)
        mine = _tauk(p)
        assert (mine["replayed_db"], mine["replayed_env_assertion"]) == _upstream(p), name


def test_no_environment_is_not_replayable_never_guessed(tau2, shared_data, tmp_path):
    from tauk.replay import replay

    p = _case(shared_data, tmp_path, "weather", _call("update_reservation_baggages", BAGS), domain="weather")
    row = replay(tauk.load(p)).row(0, named=True)
    assert row["replay_status"] == "not_replayable" and "no environment for domain 'weather'" in row["replay_reason"]
    assert row["replayed_db"] is None
    p = _case(shared_data, tmp_path, "solo-airline", _call("update_reservation_baggages", BAGS), solo=True)
    row = replay(tauk.load(p)).row(0, named=True)
    assert row["replay_status"] == "not_replayable" and "solo mode" in row["replay_reason"]
    assert "does not support solo mode" in _upstream(p)  # τ²-bench cannot build it either

    frame = replay(tauk.load([shared_data / "taubench" / "gpt-4o_airline_4trials.json",
                              shared_data / "tau2-dir-voice",
                              shared_data / "nonconformant" / "adaptive-agent_airline_wrapper_infra-error.json"],
                             strict=False))  # fmt: skip
    why = {Path(r).name: w for r, w in frame.group_by("run_id").agg(pl.col("replay_reason").first()).iter_rows()}
    assert set(frame["replay_status"]) == {"not_replayable"} and frame["replayed_db"].null_count() == frame.height
    assert "τ-bench (v1)" in why["gpt-4o_airline_4trials.json"]
    assert "task definition is missing" in why["tau2-dir-voice"]  # it embeds no tasks (see the full-duplex test)
    assert "task definition is missing" in why["adaptive-agent_airline_wrapper_infra-error.json"]


def test_banking_knowledge_is_replayed_only_where_its_environment_can_be_built(tau2, shared_data, tmp_path):
    """No shared results run banking_knowledge: a trajectory with no tool calls on one of its tasks. Where
    τ²-bench cannot build the domain's retrieval configuration here (an optional package, an embedding service),
    neither can tauk, and the simulation is not replayable, saying why; where it can, the verdicts agree."""
    task = json.loads((shared_data / "tasks" / "head_banking_knowledge_tasks.json").read_text())[0]
    p = _case(shared_data, tmp_path, "bank", [{"role": "assistant", "content": "hello"}], domain="banking_knowledge")
    d = json.loads(p.read_text())
    d["tasks"] = [task]
    d["simulations"][0]["task_id"] = task["id"]
    p.write_text(json.dumps(d))
    up, mine = _upstream(p), _tauk(p)
    if isinstance(up, str):  # here: τ²-bench's default retrieval configuration needs rank_bm25 and an embedder
        assert mine["replay_status"] == "not_replayable", mine
        assert "banking_knowledge retrieval configuration" in mine["replay_reason"]
        assert up.split(":")[0] in mine["replay_reason"]  # τ²-bench's own error, named
    else:
        assert (mine["replayed_db"], mine["replayed_env_assertion"]) == up


def test_a_retrieval_configuration_that_cannot_be_built_is_not_replayable_per_simulation(tau2, shared_data, tmp_path,
                                                                                          monkeypatch):  # fmt: skip
    """Whatever stops τ²-bench building banking_knowledge's retrieval configuration (here an embedding service that
    does not answer) makes its simulations not replayable, each saying why; the other simulations of the same call
    replay."""
    from tau2.registry import registry

    from tauk.replay._engine import Engine
    from tauk.replay._jobs import plan

    task = json.loads((shared_data / "tasks" / "head_banking_knowledge_tasks.json").read_text())[0]
    bank = _case(shared_data, tmp_path, "bank2", [{"role": "assistant", "content": "hello"}], domain="banking_knowledge")
    d = json.loads(bank.read_text())
    d["tasks"] = [task]
    d["simulations"][0]["task_id"] = task["id"]
    bank.write_text(json.dumps(d))
    airline = _case(shared_data, tmp_path, "air2", _call("update_reservation_baggages", BAGS))
    real = registry.get_env_constructor

    def ctor(domain: str):
        if domain == "banking_knowledge":
            def fail(**kwargs):
                raise ConnectionError("the embedding service did not answer")
            return fail
        return real(domain)

    monkeypatch.setattr(registry, "get_env_constructor", ctor)
    p = plan(tauk.load([bank, airline]))
    out = {o.pos: o for o in Engine(verify=True).run(p.jobs, p.tasks)}
    keys = p.keys["run_id"].to_list()
    b, a = out[keys.index("bank2.json")], out[keys.index("air2.json")]
    assert b.status == "not_replayable" and b.db is None
    assert "banking_knowledge retrieval configuration" in b.reason and "did not answer" in b.reason
    assert a.status == "replayed" and a.db in (0.0, 1.0)


def test_state_is_restored_exactly_and_gold_states_are_computed_once(tau2, shared_data):
    """After every simulation the databases hash as pristine (``verify``); each distinct task's gold state is
    computed once however many trials it has; one environment per (domain, solo mode); tool schemas are built only
    when an environment is (τ²-bench builds them for every simulation)."""
    from tau2.environment import toolkit

    from tauk.replay._engine import Engine
    from tauk.replay._jobs import plan

    res = tauk.load(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json")
    p = plan(res)
    eng = Engine(verify=True)
    built = []
    orig = toolkit.ToolKitBase.get_tools
    toolkit.ToolKitBase.get_tools = lambda self, *a, **k: built.append(1) or orig(self, *a, **k)
    try:
        out = eng.run(p.jobs, p.tasks)
    finally:
        toolkit.ToolKitBase.get_tools = orig
    assert len(out) == 20 and {o.status for o in out} == {"replayed"}
    assert eng.n_golds == res.trials["task_id"].n_unique() == 5
    assert eng.n_states_built == 2  # telecom solo (replayed side) and telecom (gold side)
    assert len(built) <= eng.n_states_built  # when an environment is built (solo mode's check), never per simulation


# -- full-duplex (voice) runs: the tool calls in ticks -------------------------------------------------------------
def _upstream_full_duplex(folder: Path, tasks: Path | None = None) -> dict[str, tuple | str]:
    """τ²-bench's ``evaluate_simulation(ENV, strict_replay=False)`` on every simulation of a full-duplex run (its
    ``ticks`` as the trajectory; ENV: the environment evaluator alone, as in ALL, without the LLM judge some head
    tasks name): ``{id: (db, env_assertion)}``, or the exception it raises, as text."""
    from tau2.data_model.simulation import Results
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.scripts.evaluate_trajectories import _build_eval_env_kwargs, get_communication_mode

    r = Results.load(folder)
    defs = r.tasks if tasks is None else [Task.model_validate(t) for t in json.loads(tasks.read_text())]
    by_id = {t.id: t for t in defs}
    out: dict[str, tuple | str] = {}
    for s in r.simulations:
        task = by_id[s.task_id]
        try:
            ri = evaluate_simulation(domain="retail", task=task, simulation=s, evaluation_type=EvaluationType.ENV,
                                     solo_mode=False, mode=get_communication_mode(r, s),
                                     env_kwargs=_build_eval_env_kwargs("retail", task), strict_replay=False)
        except Exception as exc:  # noqa: BLE001
            out[s.id] = f"{type(exc).__name__}: {exc}"
            continue
        db = None if ri.db_check is None else ri.db_check.db_reward
        out[s.id] = (db, None if db is None else float(all(c.met for c in ri.env_assertions or [])))
    return out  # fmt: skip


def test_full_duplex_runs_replay_their_ticks_as_upstream(tau2, shared_data, tmp_path):
    """The shared voice run (``tau2-dir-voice``, retail, full-duplex) records no tool calls and no tasks. As
    recorded, graded against the head retail task definitions, every simulation replays no call: the verdicts are
    τ²-bench's. The edited copy of tests/test_ticks.py (tasks embedded, tool calls and their results written into
    ticks, agent and user side, mutating ones among them) replays as τ²-bench's full-duplex evaluator replays
    (its ``ticks_to_message_history``); a tick whose results do not answer its calls in order makes τ²-bench raise,
    and the simulation fails, saying why."""
    from test_ticks import voice_copy

    from tauk.replay import replay

    head = shared_data / "tasks" / "head_retail_tasks.json"
    real = shared_data / "tau2-dir-voice"
    frame = replay(tauk.load(real), tasks=head, verify=True)
    up = _upstream_full_duplex(real, head)
    assert set(frame["replay_status"]) == {"replayed"} and frame.height == len(up) == 3
    for sid, db, env in frame.select("simulation_id", "replayed_db", "replayed_env_assertion").iter_rows():
        assert (db, env) == up[sid], sid

    folder = voice_copy(shared_data, tmp_path)
    res = tauk.load(folder)
    assert res.tick_tool_calls["paired"].all() and res.tick_tool_calls.height >= 8
    frame = replay(res, verify=True)
    up = _upstream_full_duplex(folder)
    assert set(frame["replay_status"]) == {"replayed"}
    got = {sid: (db, env) for sid, db, env in frame.select("simulation_id", "replayed_db", "replayed_env_assertion")
           .iter_rows()}  # fmt: skip
    assert got == up
    assert {v[0] for v in got.values()} == {0.0, 1.0}  # the copy was made to match on one task and not on others

    # one tick's results swapped: τ²-bench raises on the pairing; tauk fails that simulation only
    sid = "49b22f0c-4a56-41c5-922f-bc2a56e53a23"
    f = folder / "simulations" / f"{sid}.json"
    sim = json.loads(f.read_text())
    tick = next(t for t in sim["ticks"] if len(t.get("agent_tool_calls") or []) == 2)
    tick["agent_tool_results"] = tick["agent_tool_results"][::-1]
    f.write_text(json.dumps(sim))
    res = tauk.load(folder)
    assert not res.tick_tool_calls.filter(pl.col("simulation_id") == sid)["paired"].all()
    up = _upstream_full_duplex(folder)
    assert isinstance(up[sid], str) and "Tool call id mismatch" in up[sid]
    frame = replay(res)
    row = frame.filter(pl.col("simulation_id") == sid).row(0, named=True)
    assert row["replay_status"] == "failed" and row["replayed_db"] is None
    assert row["replay_reason"].startswith("tool-call pairing:") and "tick" in row["replay_reason"]
    others = frame.filter(pl.col("simulation_id") != sid)
    assert {s: (d, e) for s, d, e in others.select("simulation_id", "replayed_db", "replayed_env_assertion")
            .iter_rows()} == {s: v for s, v in up.items() if s != sid}  # fmt: skip


def test_gold_states_handed_to_another_process_give_the_same_verdicts(tau2, shared_data):
    """What a worker process does with the gold states another process computed: it takes them instead of
    computing them again, and its verdicts are those it would have computed itself."""
    from tauk.replay._engine import Engine
    from tauk.replay._jobs import plan

    p = plan(tauk.load(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json"))
    first = Engine(verify=True)
    mine = first.run(p.jobs, p.tasks)
    golds = first.gold_states()
    assert len(golds) == first.n_golds == 5
    other = Engine(verify=True)
    other.add_gold_states(golds)
    assert other.run(p.jobs, p.tasks) == mine and other.n_golds == 0
    assert first.gold_states(exclude=set(golds)) == {}

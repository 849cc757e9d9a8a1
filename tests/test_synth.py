"""tauk.synth: determinism, exact τ²-bench shape, agreement with the scoring kernel (docs/spec.md §2), calibration."""

from __future__ import annotations

import argparse
import math
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import orjson
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tauk import synth
from tauk.synth import (
    SAMPLE_AGENTS,
    SAMPLE_DOMAINS,
    SAMPLE_N_TASKS,
    SAMPLE_SEED,
    synthesize,
    true_success_probabilities,
    write_corpus,
    write_results,
    write_sample,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "data"

TOP_KEYS = ["timestamp", "info", "tasks", "simulations", "simulation_index"]
INFO_KEYS = {"git_commit", "num_trials", "max_steps", "max_errors", "seed", "user_info", "agent_info",
             "environment_info"}
SIM_KEYS = ["id", "task_id", "timestamp", "start_time", "end_time", "duration", "termination_reason", "agent_cost",
            "user_cost", "reward_info", "messages", "trial", "seed"]
REWARD_INFO_KEYS = ["reward", "db_check", "env_assertions", "action_checks", "nl_assertions", "communicate_checks",
                    "reward_basis", "reward_breakdown", "info"]
LLM_MSG_KEYS = ["role", "content", "tool_calls", "turn_idx", "timestamp", "cost", "usage", "raw_data"]
TOOL_MSG_KEYS = ["id", "role", "content", "requestor", "error", "turn_idx", "timestamp"]


# ---------------------------------------------------------------------------------------------------------------
# An independent, plain-Python re-implementation of the scoring kernel (docs/spec.md §2)
# ---------------------------------------------------------------------------------------------------------------


def _communicate(messages: list[dict], infos: list[str] | None) -> float:
    texts = [m["content"] for m in messages
             if m["role"] == "assistant" and isinstance(m.get("content"), str) and m["content"].strip()]
    for s in infos or []:
        if not any(s.lower() in t.lower().replace(",", "") for t in texts):
            return 0.0
    return 1.0


def _call_matches(call: dict, gold: dict) -> bool:
    if call["name"] != gold["name"]:
        return False
    keys = call["arguments"].keys() if gold.get("compare_args") is None else gold["compare_args"]
    if not keys:
        return True
    got = {k: v for k, v in call["arguments"].items() if k in keys}
    want = {k: v for k, v in gold["arguments"].items() if k in keys}
    return got == want


def _action(messages: list[dict], golds: list[dict] | None) -> float:
    calls = [c for m in messages for c in (m.get("tool_calls") or [])]
    return float(all(any(_call_matches(c, g) for c in calls) for g in golds or []))


def kernel_reward(sim: dict, task: dict) -> float:
    """Reward under docs/spec.md §2: termination gate, no criteria ⇒ 1, product over the task's reward basis."""
    if sim["termination_reason"] not in ("user_stop", "agent_stop"):
        return 0.0
    crit = task.get("evaluation_criteria")
    if crit is None:
        return 1.0
    basis = crit.get("reward_basis") or ["DB", "COMMUNICATE"]
    db_check = (sim["reward_info"] or {}).get("db_check") or {}
    db = db_check.get("db_reward")
    comps = {
        "DB": 1.0 if db is None else float(db),
        "COMMUNICATE": _communicate(sim["messages"], crit.get("communicate_info")),
        "ACTION": _action(sim["messages"], crit.get("actions")),
    }
    reward = 1.0
    for c in basis:
        reward *= comps[c]
    return reward


# ---------------------------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def results() -> list[dict]:
    return synthesize(SAMPLE_AGENTS, ("airline", "retail"), n_tasks=30, n_trials=4, seed=11, infra_error_rate=0.03)


def _sims(results: list[dict]):
    for res in results:
        tasks = {t["id"]: t for t in res["tasks"]}
        for sim in res["simulations"]:
            yield res, tasks[sim["task_id"]], sim


# ---------------------------------------------------------------------------------------------------------------
# Determinism
# ---------------------------------------------------------------------------------------------------------------


def _write(tmp: Path, **kw) -> dict[str, bytes]:
    args = {"agents": {"a": 0.7, "b": 0.4}, "domains": ("airline", "retail"), "n_tasks": 9, "n_trials": 2,
            "seed": 3, "infra_error_rate": 0.05} | kw
    paths = write_results(tmp, **args)
    return {p.name: p.read_bytes() for p in paths}


def test_same_arguments_give_identical_bytes(tmp_path: Path) -> None:
    a = _write(tmp_path / "a")
    b = _write(tmp_path / "b")
    assert sorted(a) == ["a_airline.json", "a_retail.json", "b_airline.json", "b_retail.json"]
    assert a == b
    c = _write(tmp_path / "c", seed=4)
    assert all(a[k] != c[k] for k in a)


def test_files_equal_synthesize_dicts(tmp_path: Path) -> None:
    paths = write_results(tmp_path, {"x": 0.6}, ("retail",), n_tasks=6, n_trials=2, seed=5, payload_bytes=300)
    (res,) = synthesize({"x": 0.6}, ("retail",), n_tasks=6, n_trials=2, seed=5, payload_bytes=300)
    assert paths[0].read_bytes() == orjson.dumps(res)
    assert orjson.loads(paths[0].read_bytes()) == res


def test_outcomes_do_not_depend_on_payload() -> None:
    kw = {"agents": {"x": 0.5}, "domains": ("airline",), "n_tasks": 8, "n_trials": 3, "seed": 9}
    plain = synthesize(**kw)[0]["simulations"]
    padded = synthesize(**kw, payload_bytes=1500)[0]["simulations"]
    assert [s["reward_info"] for s in plain] == [s["reward_info"] for s in padded]
    assert [s["id"] for s in plain] == [s["id"] for s in padded]


def test_tasks_shared_across_agents_and_prefix_stable() -> None:
    res = synthesize({"a": 0.7, "b": 0.3}, ("airline",), n_tasks=10, n_trials=1, seed=2)
    assert res[0]["tasks"] == res[1]["tasks"]
    longer = synthesize({"a": 0.7}, ("airline",), n_tasks=14, n_trials=1, seed=2)
    assert longer[0]["tasks"][:10] == res[0]["tasks"]


# ---------------------------------------------------------------------------------------------------------------
# Shape
# ---------------------------------------------------------------------------------------------------------------


def test_upstream_shape(results: list[dict]) -> None:
    assert len(results) == 6  # 3 agents × 2 domains
    for res in results:
        assert list(res) == TOP_KEYS
        assert res["simulation_index"] is None
        info = res["info"]
        assert set(info) == INFO_KEYS
        assert set(info["user_info"]) >= {"implementation", "llm", "llm_args"}
        assert set(info["agent_info"]) == {"implementation", "llm", "llm_args"}
        assert set(info["environment_info"]) == {"domain_name", "policy", "tool_defs"}
        assert info["agent_info"]["llm"] in SAMPLE_AGENTS
        assert info["num_trials"] == 4
        task_ids = [t["id"] for t in res["tasks"]]
        assert len(set(task_ids)) == len(task_ids) == 30
        assert all(isinstance(t, str) for t in task_ids)
        for t in res["tasks"]:
            assert set(t) >= {"id", "description", "user_scenario", "initial_state", "evaluation_criteria"}
            crit = t["evaluation_criteria"]
            if crit is not None:
                assert set(crit) == {"actions", "env_assertions", "communicate_info", "nl_assertions",
                                     "reward_basis"}
                for a in crit["actions"]:
                    assert list(a) == ["action_id", "requestor", "name", "arguments", "info", "compare_args"]
        sims = res["simulations"]
        assert len(sims) == 30 * 4
        assert Counter((s["task_id"], s["trial"]) for s in sims) == Counter(
            {(t, k): 1 for t in task_ids for k in range(4)})
        assert len({s["id"] for s in sims}) == len(sims)


def test_simulation_and_message_shape(results: list[dict]) -> None:
    n_tool_calls = 0
    for _res, _task, sim in _sims(results):
        assert list(sim) == SIM_KEYS
        assert uuid.UUID(sim["id"]).version == 4
        assert sim["start_time"] <= sim["end_time"] <= sim["timestamp"]
        assert sim["duration"] > 0
        msgs = sim["messages"]
        assert msgs[0]["role"] == "assistant" and msgs[0]["content"] == "Hi! How can I help you today?"
        assert [m["turn_idx"] for m in msgs] == list(range(len(msgs)))
        stamps = [m["timestamp"] for m in msgs]
        assert stamps == sorted(stamps)
        assert sim["start_time"] <= stamps[0] and stamps[-1] <= sim["end_time"]
        pending: dict[str, dict] = {}
        for m in msgs:
            assert m["role"] in ("assistant", "user", "tool")
            if m["role"] == "tool":
                assert list(m) == TOOL_MSG_KEYS
                assert m["id"] in pending, "tool message must answer an earlier call"
                assert m["requestor"] == "assistant" and isinstance(m["error"], bool)
                orjson.loads(m["content"]) if m["content"].startswith(("{", "[")) else None
                del pending[m["id"]]
            else:
                assert list(m) == LLM_MSG_KEYS
                for tc in m["tool_calls"] or []:
                    assert m["role"] == "assistant"
                    assert list(tc) == ["id", "name", "arguments", "requestor"]
                    assert isinstance(tc["arguments"], dict) and tc["requestor"] == "assistant"
                    pending[tc["id"]] = tc
                    n_tool_calls += 1
                if m["turn_idx"] > 0:
                    assert set(m["usage"]) == {"prompt_tokens", "completion_tokens"} and m["cost"] > 0
        if sim["reward_info"] is not None:
            assert list(sim["reward_info"]) == REWARD_INFO_KEYS
    assert n_tool_calls > 1000


# ---------------------------------------------------------------------------------------------------------------
# Kernel consistency
# ---------------------------------------------------------------------------------------------------------------


def _check_kernel(results: list[dict]) -> Counter:
    seen: Counter = Counter()
    for _res, task, sim in _sims(results):
        ri = sim["reward_info"]
        if sim["termination_reason"] == "infrastructure_error":
            assert ri is None
            seen["infra"] += 1
            continue
        assert ri is not None
        assert ri["reward"] == kernel_reward(sim, task), (sim["id"], task["id"])
        seen["checked"] += 1
        crit = task["evaluation_criteria"]
        if sim["termination_reason"] not in ("user_stop", "agent_stop"):
            assert ri["reward"] == 0.0 and ri["reward_breakdown"] is None
            seen[sim["termination_reason"]] += 1
            continue
        if crit is None:
            seen["no_criteria"] += 1
            continue
        # recorded checks agree with the trajectory
        for chk in ri["communicate_checks"] or []:
            assert chk["met"] == bool(_communicate(sim["messages"], [chk["info"]]))
        assert (ri["communicate_checks"] is None) == (not crit["communicate_info"])
        assert (ri["action_checks"] is None) == (not crit["actions"])
        for chk, gold in zip(ri["action_checks"] or [], crit["actions"], strict=True):
            assert chk["action"] == gold
            assert chk["action_match"] == bool(_action(sim["messages"], [gold]))
            assert chk["action_reward"] == float(chk["action_match"])
        assert ri["reward_basis"] == crit["reward_basis"]
        assert list(ri["reward_breakdown"]) == crit["reward_basis"]
        assert ri["db_check"]["db_match"] == (ri["db_check"]["db_reward"] == 1.0)
        comps = {"DB": ri["db_check"]["db_reward"],
                 "COMMUNICATE": _communicate(sim["messages"], crit["communicate_info"]),
                 "ACTION": _action(sim["messages"], crit["actions"])}
        assert ri["reward_breakdown"] == {c: comps[c] for c in crit["reward_basis"]}
        for c, v in comps.items():
            if v == 0.0:
                seen[f"fail_{c}_{'in' if c in crit['reward_basis'] else 'out'}_basis"] += 1
        if ri["reward"] == 1.0 and 0.0 in comps.values():
            seen["diagnostic_only_failure"] += 1
    return seen


def test_recorded_reward_follows_the_kernel(results: list[dict]) -> None:
    seen = _check_kernel(results)
    # the corpus exercises every path of the kernel
    for key in ("infra", "max_steps", "too_many_errors", "no_criteria", "fail_DB_in_basis",
                "fail_COMMUNICATE_in_basis", "fail_ACTION_in_basis", "fail_ACTION_out_basis",
                "diagnostic_only_failure"):
        assert seen[key] > 0, (key, seen)


def test_edge_cases_present(results: list[dict]) -> None:
    golds = [a for res in results[:1] + results[3:4] for t in res["tasks"]
             for a in ((t["evaluation_criteria"] or {}).get("actions") or [])]
    kinds = Counter("none" if a["compare_args"] is None else "empty" if a["compare_args"] == [] else "subset"
                    for a in golds)
    assert kinds["none"] and kinds["empty"] and kinds["subset"], kinds
    bases = Counter(tuple((t["evaluation_criteria"] or {}).get("reward_basis") or ())
                    for res in results for t in res["tasks"])
    assert bases[("DB", "COMMUNICATE")] > bases[("DB", "COMMUNICATE", "ACTION")] > 0
    airline = results[0]
    comma = [t for t in airline["tasks"]
             if any("," in s for s in (t["evaluation_criteria"] or {}).get("communicate_info") or [])]
    assert [t["id"] for t in comma] == ["7"]
    for res in results[:3]:  # airline: the comma task never succeeds
        rewards = [s["reward_info"]["reward"] for s in res["simulations"]
                   if s["task_id"] == "7" and s["reward_info"] is not None]
        assert rewards and set(rewards) == {0.0}
    retail_null = [t["id"] for t in results[3]["tasks"] if t["evaluation_criteria"] is None]
    assert retail_null == ["5"]
    assert sum(t["evaluation_criteria"] is None for t in airline["tasks"]) == 0
    terms = Counter(s["termination_reason"] for res in results for s in res["simulations"])
    assert terms["user_stop"] > terms["agent_stop"] > 0


def test_kernel_on_large_mixed_run() -> None:
    res = synthesize({"strong": 0.9, "weak": 0.15}, ("airline", "retail"), n_tasks=40, n_trials=5, seed=123,
                     infra_error_rate=0.02, premature_rate=0.2)
    seen = _check_kernel(res)
    assert seen["checked"] > 700


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), level=st.floats(0.02, 0.98), premature=st.floats(0, 1),
       diagnostic=st.floats(0, 1), infra=st.sampled_from([0.0, 0.1]))
def test_kernel_property(seed: int, level: float, premature: float, diagnostic: float, infra: float) -> None:
    res = synthesize({"x": level}, ("airline", "retail"), n_tasks=9, n_trials=2, seed=seed, infra_error_rate=infra,
                     premature_rate=premature, diagnostic_rate=diagnostic)
    seen = _check_kernel(res)
    assert seen["checked"] + seen["infra"] == 36


# ---------------------------------------------------------------------------------------------------------------
# Calibration against the true probabilities
# ---------------------------------------------------------------------------------------------------------------


def test_true_probabilities_frame() -> None:
    df = true_success_probabilities(SAMPLE_AGENTS, SAMPLE_DOMAINS, 12, seed=4)
    assert df.columns == ["agent", "domain", "task_id", "level", "skill", "difficulty", "p"]
    assert df.height == 3 * 2 * 12
    assert df["p"].is_between(0, 1).all()
    assert df.filter((pl.col("domain") == "airline") & (pl.col("task_id") == "7"))["p"].to_list() == [0.0] * 3
    assert df.equals(true_success_probabilities(SAMPLE_AGENTS, SAMPLE_DOMAINS, 12, seed=4))
    # stronger agents have higher p on every task
    wide = df.filter(pl.col("p") > 0).pivot("agent", index=["domain", "task_id"], values="p")
    assert (wide["atlas-large"] > wide["atlas-small"]).all() and (wide["atlas-small"] > wide["baseline"]).all()
    # a sequence of names gets evenly spread levels
    seq = true_success_probabilities(["a", "b", "c"], ("retail",), 3, seed=0)
    assert seq.group_by("agent").agg(pl.col("level").first()).sort("agent")["level"].to_list() == [0.8, 0.55, 0.3]


def test_success_rates_converge_to_true_p() -> None:
    agents, domains, n_tasks, n_trials, seed = {"mid": 0.5}, ("airline", "retail"), 10, 300, 7
    res = synthesize(agents, domains, n_tasks, n_trials, seed, infra_error_rate=0.05)
    truth = true_success_probabilities(agents, domains, n_tasks, seed)
    p = {(r["domain"], r["task_id"]): r["p"] for r in truth.iter_rows(named=True)}
    wins: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in res:
        dom = r["info"]["environment_info"]["domain_name"]
        for s in r["simulations"]:
            if s["reward_info"] is None:
                continue
            w = wins[(dom, s["task_id"])]
            w[0] += s["reward_info"]["reward"] == 1.0
            w[1] += 1
    assert set(wins) == set(p)
    z2 = 0.0
    for key, (c, n) in wins.items():
        pk = p[key]
        if pk in (0.0, 1.0):
            assert c == n * pk
            continue
        sd = math.sqrt(pk * (1 - pk) / n)
        assert abs(c / n - pk) < 4.5 * sd, (key, c, n, pk)
        z2 += ((c / n - pk) / sd) ** 2
    # chi-square with ~19 df: far in the tail would mean a biased generator
    assert z2 < 50, z2
    n_infra = sum(s["reward_info"] is None for r in res for s in r["simulations"])
    assert 0.03 < n_infra / (2 * n_tasks * n_trials) < 0.07


# ---------------------------------------------------------------------------------------------------------------
# Payload, corpus, sample, CLI
# ---------------------------------------------------------------------------------------------------------------


def test_payload_bytes_pads_raw_data() -> None:
    (res,) = synthesize({"x": 0.6}, ("airline",), n_tasks=5, n_trials=2, seed=1, payload_bytes=3000)
    sizes = [len(orjson.dumps(m["raw_data"])) for s in res["simulations"] for m in s["messages"]
             if m.get("raw_data") is not None]
    assert sizes and all(2900 <= n <= 3100 for n in sizes), (min(sizes), max(sizes))
    (plain,) = synthesize({"x": 0.6}, ("airline",), n_tasks=5, n_trials=2, seed=1, raw_data="user")
    roles = {m["role"] for s in plain["simulations"] for m in s["messages"] if m.get("raw_data") is not None}
    assert roles == {"user"}


def test_write_corpus(tmp_path: Path) -> None:
    path = write_corpus(tmp_path / "corpus.json", n_simulations=230, payload_bytes=1000, seed=3, n_tasks=50)
    doc = orjson.loads(path.read_bytes())
    assert list(doc) == TOP_KEYS
    assert len(doc["simulations"]) == 250  # 50 tasks × ceil(230 / 50) trials
    assert doc["info"]["num_trials"] == 5
    assert path.stat().st_size > 250 * 10 * 1000
    assert path.read_bytes() == write_corpus(tmp_path / "again.json", 230, 1000, 3, n_tasks=50).read_bytes()


def test_bundled_sample_is_up_to_date(tmp_path: Path) -> None:
    paths = write_sample(tmp_path)
    names = sorted(p.name for p in paths)
    assert names == sorted([f"{a}_{d}.json" for a in SAMPLE_AGENTS for d in SAMPLE_DOMAINS] + ["README.md"])
    for p in paths:
        committed = SAMPLE_DIR / p.name
        assert committed.exists(), f"{committed} missing: run `tauk synth --sample`"
        assert committed.read_bytes() == p.read_bytes(), f"{committed} is stale: run `tauk synth --sample`"
    total = sum(p.stat().st_size for p in paths)
    assert total < 6_000_000
    assert f"`{SAMPLE_SEED}`" in (tmp_path / "README.md").read_text()
    assert "tauk synth --sample" in (tmp_path / "README.md").read_text()
    doc = orjson.loads((tmp_path / "atlas-large_airline.json").read_bytes())
    assert len(doc["tasks"]) == SAMPLE_N_TASKS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tauk")
    sub = parser.add_subparsers(dest="command")
    synth.add_cli(sub)
    return parser


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(["synth", str(tmp_path / "out"), "--agents", "a=0.7,b=0.5", "--domains", "retail",
                                 "--tasks", "4", "--trials", "2", "--seed", "9", "--payload-bytes", "200"])
    assert args.func(args) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a_retail.json", "b_retail.json"]
    doc = orjson.loads((tmp_path / "out" / "a_retail.json").read_bytes())
    assert doc["info"]["seed"] == 9 and len(doc["simulations"]) == 8
    assert "wrote 2 files" in capsys.readouterr().out
    args = _parser().parse_args(["synth", str(tmp_path / "s"), "--sample"])
    assert synth._cli(args) == 0
    assert (tmp_path / "s" / "README.md").exists()
    args = _parser().parse_args(["synth", str(tmp_path / "bad"), "--domains", "banking"])
    assert synth._cli(args) == 2
    args = _parser().parse_args(["synth"])
    assert synth._cli(args) == 2
    with pytest.raises(SystemExit):
        _parser().parse_args(["synth", "x", "--agents", "a=0.5,b"])


@pytest.mark.parametrize(
    "kwargs",
    [{"domains": ("banking",)}, {"agents": {"a": 1.0}}, {"agents": {"a": 0.0}}, {"agents": []},
     {"n_tasks": 0}, {"payload_bytes": -1}, {"agents": {"a/b": 0.5}}, {"domains": ("retail", "retail")},
     {"raw_data": "some"}],
)
def test_bad_arguments(kwargs: dict) -> None:
    args = {"agents": {"a": 0.5}, "domains": ("retail",), "n_tasks": 2, "n_trials": 1} | kwargs
    with pytest.raises(ValueError):
        synthesize(**args)


def test_vectorised_kernel_agrees_with_the_oracle(tmp_path: Path) -> None:
    """tauk.score recomputes every synthetic trial's reward and components as the oracle recorded them."""
    import tauk

    write_results(tmp_path, {"strong": 0.85, "weak": 0.25}, ("airline", "retail"), n_tasks=20, n_trials=3, seed=31,
                  infra_error_rate=0.05, premature_rate=0.25, diagnostic_rate=0.3)
    scored = tauk.score(tauk.load(tmp_path))
    graded = scored.filter(pl.col("has_reward_info"))
    assert graded.height > 200 and scored.height > graded.height  # some infrastructure errors
    assert (graded["score_reward"] == graded["reward"]).all()
    assert set(graded["communicate_source"]) == set(graded["action_source"]) == {"recomputed"}
    for component in ("communicate", "action"):
        both = graded.filter(pl.col(f"recorded_{component}").is_not_null())
        assert both.height > 100
        assert (both[component] == both[f"recorded_{component}"]).all(), component
    # every path of the kernel is exercised: failures of each component, inside and outside the basis
    assert graded.filter(pl.col("action") == 0.0)["reward"].to_list().count(1.0) > 0
    assert (graded["communicate"] == 0.0).any() and (graded["recorded_db"] == 0.0).any()

"""tauk.tasks.validity: inaction-passable tasks, components that pass by themselves, unscored gold actions and
assertions, and the do-nothing bound — against the issue's figures, a plain-Python transcription of the rules,
τ²-bench's own grade of a do-nothing conversation, and a hand-checked sample."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.errors import TaukError

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM_DO_NOTHING = ROOT / "benchmarks" / "results" / "do_nothing_upstream.json"
SAMPLE = ROOT / "tests" / "fixtures" / "validity_sample.json"
DOMAINS = ("banking_knowledge", "airline", "retail", "telecom", "mock")


@pytest.fixture(scope="module")
def shared_validity(shared_data: Path) -> tauk.tasks.TaskValidity:
    return tauk.tasks.validity(shared_data / "tasks")


def _bound(v, task_set: str) -> dict:
    return v.bounds.filter(pl.col("task_set") == task_set, pl.col("split").is_null()).row(0, named=True)


def test_the_issue_figures(shared_validity):
    """Done means: head airline 24 / 23 / 44; head retail 72 / 40 / 6; v0.1.0 airline 19."""
    a = _bound(shared_validity, "head_airline_tasks")
    assert (a["n_tasks"], a["n_no_state_change"], a["n_inaction_passable"], a["n_auto_communicate"]) == (50, 24, 23, 44)
    assert a["do_nothing_pass1"] == pytest.approx(0.46)
    r = _bound(shared_validity, "head_retail_tasks")
    assert (r["n_tasks"], r["n_auto_nl_assertion"], r["n_nl_live"], r["n_inaction_passable"]) == (114, 72, 40, 6)
    assert _bound(shared_validity, "v0.1.0_airline_tasks")["n_inaction_passable"] == 19


# ---- a plain-Python transcription of the rules (docs: tauk.tasks.validity), over every shared task file
def _writes() -> dict[tuple[str, str, str], bool]:
    doc = json.loads((ROOT / "tauk" / "tasks" / "tool_types.json").read_text(encoding="utf-8"))
    return {(r["domain"], r["side"], r["name"]): r["mutates_state"] for r in doc["tools"]}


def _and(values):
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _reference(task: dict, domain: str, writes: dict) -> dict:
    ec = task.get("evaluation_criteria")
    if ec is None:
        return {"inaction_passable": True}
    basis = [b.upper() for b in (ec.get("reward_basis") or ["DB", "COMMUNICATE"])]
    acts = ec.get("actions") or []
    kinds = [writes.get((domain, "user" if a.get("requestor") == "user" else "agent", a["name"])) for a in acts]
    db = False if any(k is True for k in kinds) else (None if any(k is None for k in kinds) else True)
    verdict = {"DB": db, "COMMUNICATE": not ec.get("communicate_info"), "NL_ASSERTION": True if not ec.get("nl_assertions") else None,
               "ACTION": not acts, "ENV_ASSERTION": True if not ec.get("env_assertions") else None}  # fmt: skip
    unscored = [] if "ACTION" in basis else [a["name"] for a, k in zip(acts, kinds) if k is False]
    return {
        "inaction_passable": _and([verdict[c] for c in basis]),
        "no_state_change": db,
        "auto_pass": [c for c, key in (("COMMUNICATE", "communicate_info"), ("NL_ASSERTION", "nl_assertions"),
                                        ("ENV_ASSERTION", "env_assertions"), ("ACTION", "actions")) if c in basis and not ec.get(key)],
        "nl_live": "NL_ASSERTION" in basis and bool(ec.get("nl_assertions")),
        "nl_unscored": "NL_ASSERTION" not in basis and bool(ec.get("nl_assertions")),
        "unscored_actions": unscored,
    }  # fmt: skip


def test_every_shared_task_matches_the_plain_transcription(shared_data, shared_validity):
    writes = _writes()
    got = {(r["task_set"], r["task_id"]): r for r in shared_validity.records()}
    n = 0
    for path in sorted((shared_data / "tasks").glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, list):
            continue
        domain = next(d for d in DOMAINS if d in path.stem)
        for task in data:
            ref = _reference(task, domain, writes)
            row = got[(path.stem, str(task["id"]))]
            assert row["domain"] == domain
            for k, v in ref.items():
                assert row[k] == v, (path.stem, task["id"], k, row[k], v)
            n += 1
    assert n == len(got) == 695


def test_no_false_flags_against_upstreams_own_grade_of_doing_nothing(shared_validity):
    """benchmarks/do_nothing_upstream.py: τ²-bench grades a conversation without a tool call on its own
    environments. Every task tauk calls inaction-passable gets reward 1 there (0 false flags); every task it calls
    not inaction-passable gets 0, except two v0.1.0 retail tasks whose gold write fails in upstream's own replay
    (a task bug fixed at head) — offline, a gold write is taken to change the database."""
    up = json.loads(UPSTREAM_DO_NOTHING.read_text())
    counts = {"true_1": 0, "false_0": 0, "unknown": 0, "false_1": [], "true_0": []}
    for r in shared_validity.records():
        u = up[r["task_set"]][r["task_id"]]
        if u["reward"] is None:
            continue
        ip, passed = r["inaction_passable"], u["reward"] == 1.0
        if ip is None:
            counts["unknown"] += 1
        elif ip and passed:
            counts["true_1"] += 1
        elif not ip and not passed:
            counts["false_0"] += 1
        else:
            counts["true_0" if ip else "false_1"].append((r["task_set"], r["task_id"]))
    assert counts["true_0"] == []  # no false flag
    assert counts["false_1"] == [("v0.1.0_retail_tasks", "105"), ("v0.1.0_retail_tasks", "12")]
    assert counts["true_1"] == 55 and counts["false_0"] >= 460


def test_upstream_evidence_closes_every_gap(shared_data):
    """Given what replay tells (the ENV assertions on the initial state, whether the gold actions move the
    database), tauk's flag equals upstream's grade on every task it could grade without an LLM judge."""
    up = json.loads(UPSTREAM_DO_NOTHING.read_text())
    rows = [{"task_set": s, "task_id": t, "env_holds_initially": u.get("env"), "gold_state_unchanged":
             None if u.get("db") is None else u["db"] == 1.0} for s, d in up.items() for t, u in d.items()]  # fmt: skip
    ev = pl.DataFrame(rows, schema={"task_set": pl.String, "task_id": pl.String, "env_holds_initially": pl.Boolean,
                                    "gold_state_unchanged": pl.Boolean})  # fmt: skip
    v = tauk.tasks.validity(shared_data / "tasks", evidence=ev)
    graded = 0
    for r in v.records():
        u = up[r["task_set"]][r["task_id"]]
        if u["reward"] is None:
            continue
        graded += 1
        assert r["inaction_passable"] == (u["reward"] == 1.0), (r["task_set"], r["task_id"])
    assert graded == sum(u["reward"] is not None for d in up.values() for u in d.values()) == 653


def test_hand_checked_sample_has_no_false_flag(shared_validity):
    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    entries = doc["tasks"]
    per_domain = {}
    for e in entries:
        per_domain[e["domain"]] = per_domain.get(e["domain"], 0) + 1
    assert per_domain == {"airline": 20, "retail": 20, "telecom": 20, "mock": 19, "banking_knowledge": 20}
    got = {(r["task_set"], r["task_id"]): r for r in shared_validity.records()}
    for e in entries:
        row = got[(e["task_set"], e["task_id"])]
        assert {k: row[k] for k in e["expected"]} == e["expected"], (e["task_set"], e["task_id"], e["reasoning"])
        if e["upstream_do_nothing_reward"] is not None and e["expected"]["inaction_passable"] is not None:
            assert e["expected"]["inaction_passable"] == (e["upstream_do_nothing_reward"] == 1.0), e["reasoning"]


def test_splits_and_missing_split_tasks(shared_data, shared_validity):
    splits = json.loads((shared_data / "tasks" / "head_airline_split_tasks.json").read_text())
    up = json.loads(UPSTREAM_DO_NOTHING.read_text())["head_airline_tasks"]
    b = shared_validity.bounds.filter(pl.col("task_set") == "head_airline_tasks", pl.col("split") == "test").row(0, named=True)
    assert b["n_tasks"] == len(splits["test"]) == 20
    assert b["n_inaction_passable"] == sum(up[i]["reward"] == 1.0 for i in splits["test"])
    full = shared_validity.bounds.filter(pl.col("task_set") == "head_telecom_tasks_small", pl.col("split") == "full")
    assert full["n_split_tasks_missing"].item() > 0 and full["do_nothing_pass1"].item() is None


def test_evidence_from_recorded_simulations(shared_data):
    """A telecom run: simulations that only read tell the ENV assertions' values on the initial state."""
    res = tauk.load(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-test_1trial.json")
    ev = tauk.tasks.initial_env_evidence(res)
    calls = res.tool_calls.join(ev.select("simulation_id"), on="simulation_id")
    doc = json.loads((ROOT / "tauk" / "tasks" / "tool_types.json").read_text())
    writes = {(r["side"], r["name"]) for r in doc["tools"] if r["domain"] == "telecom" and r["mutates_state"]}
    assert ev.height == 2
    assert not any(("user" if q == "user" else "agent", n) in writes for n, q in calls.select("name", "requestor").rows())
    sims = res.trials.join(ev.select("simulation_id"), on="simulation_id")
    assert (sims["recorded_env_assertion"] == 1.0).all()
    v = tauk.tasks.validity(res)
    assert v.tasks.filter(pl.col("env_holds_initially")).height == 2
    assert tauk.tasks.validity(res, evidence=None).tasks["env_holds_initially"].null_count() == 40


def test_results_and_task_file_agree(shared_data):
    """A run's embedded definitions audit the same as the task file they came from."""
    res = tauk.load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    from_run = tauk.tasks.validity(res).tasks.drop("task_set")
    ids = from_run["task_id"].to_list()
    from_file = tauk.tasks.validity(shared_data / "tasks" / "v0.1.0_airline_tasks.json").tasks.filter(pl.col("task_id").is_in(ids)).drop("task_set")
    assert from_run.sort("task_id").equals(from_file.sort("task_id"))


def test_bad_input(tmp_path):
    (tmp_path / "x.json").write_text('{"a": 1}')
    with pytest.raises(TaukError, match="neither a list of task definitions nor a split file"):
        tauk.tasks.validity(tmp_path / "x.json")
    with pytest.raises(TaukError, match="no such file"):
        tauk.tasks.validity(tmp_path / "missing.json")
    with pytest.raises(TaukError, match="got int"):
        tauk.tasks.validity(3)
    tasks = tauk.scoring.task_frames([{"id": "1", "evaluation_criteria": {}}])
    with pytest.raises(TaukError, match="gold_state_unchanged needs a task_set"):
        tauk.tasks.validity(tasks, evidence=pl.DataFrame({"task_id": ["1"], "gold_state_unchanged": [True]}))
    with pytest.raises(TaukError, match="evidence= frame needs"):
        tauk.tasks.validity(tasks, evidence=pl.DataFrame({"task_id": ["1"]}))


def test_hand_built_tasks():
    """Edge cases: no evaluation criteria, an unknown tool, an unknown component, ACTION-only with reads."""
    tasks = [
        {"id": "none", "evaluation_criteria": None},
        {"id": "unknown_tool", "evaluation_criteria": {"actions": [{"name": "frobnicate", "arguments": {}}]}},
        {"id": "bogus", "evaluation_criteria": {"reward_basis": ["DB", "BOGUS"]}},
        {"id": "reads", "evaluation_criteria": {"actions": [{"name": "get_user_details", "arguments": {}}],
                                                "reward_basis": ["ACTION"]}},
    ]  # fmt: skip
    v = tauk.tasks.validity(tauk.scoring.task_frames(tasks), domain="airline").tasks
    got = {r["task_id"]: (r["inaction_passable"], r["no_state_change"], r["inaction_fails"]) for r in v.to_dicts()}
    assert got == {"none": (True, True, []), "unknown_tool": (None, None, []), "bogus": (None, True, []),
                   "reads": (False, True, ["ACTION"])}  # fmt: skip


def test_cli(shared_data):
    run = [sys.executable, "-m", "tauk", "validity", str(shared_data / "tasks" / "head_airline_tasks.json")]
    out = subprocess.run(run + ["--format", "json"], capture_output=True, text=True, check=True, cwd=ROOT)
    doc = json.loads(out.stdout)
    assert doc["bounds"][0]["n_inaction_passable"] == 23 and len(doc["tasks"]) == 50
    text = subprocess.run(run, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "head_airline_tasks" in text and "0.4600" in text
    per = subprocess.run(run + ["--per-task", "--format", "csv"], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert per.splitlines()[0].startswith("task_set,task_id,inaction_passable")


def test_inaction_marks_and_summary(shared_data):
    """The marks join on (run_id, task_id); the summary's counts equal a plain recount."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tauk.load([shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json",
                         shared_data / "tau2" / "v0.1_ft-gpt-4.1_airline-test_1trial.json"])  # fmt: skip
    m = tauk.tasks.inaction_marks(res)
    assert m.height == res.trials.select("run_id", "task_id").unique().height
    assert (m["substantive"] == ~m["inaction_passable"]).all()
    s = tauk.tasks.inaction_summary(res, by=("run_id",))
    for row in s.to_dicts():
        t = res.trials.filter(pl.col("run_id") == row["run_id"]).join(m, on=["run_id", "task_id"])
        ok = t.with_columns(ok=(pl.col("reward") - 1).abs() < 1e-6)
        assert row["n_successes"] == ok["ok"].sum()
        assert row["n_successes_inaction_passable"] == ok.filter(pl.col("inaction_passable"))["ok"].sum()
        assert row["n_tasks_inaction_passable"] == t.filter(pl.col("inaction_passable"))["task_id"].n_unique()
        sub = ok.filter(~pl.col("inaction_passable")).group_by("task_id").agg(pl.col("ok").mean())["ok"].mean()
        assert row["pass1_substantive"] == pytest.approx(sub)
    # marks from a task file for every run; another domain's tasks are refused
    m2 = tauk.tasks.inaction_marks(res, shared_data / "tasks" / "v0.1.0_airline_tasks.json")
    assert m2.sort("run_id", "task_id").equals(m.sort("run_id", "task_id"))
    with pytest.raises(TaukError, match="retail"):
        tauk.tasks.inaction_marks(res, shared_data / "tasks" / "head_retail_tasks.json")
    table = tauk.tasks.inaction_section(res, by=("agent",))
    assert table.columns[0] == "agent" and "share" in table.columns


def test_a_taubench_results_list_is_audited_as_results(shared_data):
    """A τ-bench results file is a JSON list too: read as results (its records' tasks), not as a task list (which
    defined each task once per trial and was refused)."""
    path = shared_data / "taubench" / "gpt-4o_airline_4trials.json"
    by_path = tauk.tasks.validity(path).bounds.select("n_tasks", "n_inaction_passable").row(0)
    by_load = tauk.tasks.validity(tauk.load(path)).bounds.select("n_tasks", "n_inaction_passable").row(0)
    assert by_path == by_load == (50, 19)


def test_gold_actions_keep_their_file_order(shared_data):
    """The task sets' gold actions come out in the order of the definitions (task by task, action by action) on
    every run — Polars' joins are free to reorder rows unless told not to."""
    from tauk.tasks._input import resolve

    ts = resolve(shared_data / "tasks")
    a = ts.actions.with_row_index("_r")
    first = ts.tasks.select("task_set", "task_id").with_row_index("_t")
    order = a.join(first, on=["task_set", "task_id"], how="left", maintain_order="left")
    assert order["_t"].is_sorted()
    assert order.group_by("_t", maintain_order=True).agg(ok=pl.col("action_idx").is_sorted())["ok"].all()


def test_a_call_of_an_unknown_tool_is_no_evidence(shared_data):
    """A solo telecom agent calls the user's device tools itself (toggle_data, reboot_device …), which tauk's table
    does not type on the agent's side: such a simulation may have changed the state, so it tells nothing of the
    initial one. Every evidence simulation's calls are known not to change state, and no task the recorded
    evidence calls inaction-passable gets less than 1 from τ²-bench's own grade of doing nothing."""
    names = [f"tau2/v0.1_{a}_{s}_1trial.json" for a in ("gpt-4.1", "ft-gpt-4.1") for s in ("telecom-test",
                                                                                          "telecom-solo-test")]  # fmt: skip
    res = tauk.load([shared_data / n for n in names])
    ev = tauk.tasks.initial_env_evidence(res)
    calls = res.tool_calls.join(ev.select("run_id", "simulation_id"), on=["run_id", "simulation_id"])
    calls = calls.join(res.trials.select("run_id", "simulation_id", "domain"), on=["run_id", "simulation_id"])
    typed = tauk.tasks.classify_tools(calls, recorded=res.expected_actions.select("run_id", "name", "tool_type"))
    assert typed.filter(pl.col("state_changing").is_null() | pl.col("state_changing")).height == 0
    solo = res.tool_calls.join(res.trials.filter(pl.col("run_id").str.contains("solo")).select("simulation_id"),
                               on="simulation_id")  # fmt: skip
    assert solo.filter(pl.col("name") == "toggle_data").height > 0  # the premise: solo agents touch the device
    up = json.loads(UPSTREAM_DO_NOTHING.read_text())["v0.1.0_telecom_tasks"]
    flagged = [r["task_id"] for r in tauk.tasks.validity(res).records() if r["inaction_passable"]]
    assert [t for t in flagged if up[t]["reward"] is not None and up[t]["reward"] != 1.0] == []


def test_the_table_says_the_bound_counts_unknown_tasks_as_failed(shared_data):
    """v0.1 gpt-4.1 telecom test: most tasks' verdicts are unknown; the table's do-nothing pass^1 counts them as
    failed, so it must give the figure if they passed (the JSON's do_nothing_pass1_max) beside it."""
    v = tauk.tasks.validity(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-test_1trial.json")
    b = v.bounds.filter(pl.col("split").is_null()).row(0, named=True)
    assert b["n_inaction_unknown"] > 0 and b["do_nothing_pass1_max"] > b["do_nothing_pass1"]  # the premise
    notes = "\n".join(v.summary().notes)
    assert f"up to {b['do_nothing_pass1_max']:.2f}" in notes and b["task_set"] in notes
    airline = tauk.tasks.validity(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    assert not any("up to" in n for n in airline.summary().notes)  # no unknown, no such note

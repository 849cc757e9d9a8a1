"""Re-grade eligibility: what changed between task versions, and which (run, task) pairs a re-grade may report —
against the issue's figures, a plain-Python diff, and τ²-bench's own full re-evaluation (DB by replay)."""

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
from tauk.scoring import RegradeWarning, score
from tauk.tasks import REGRADED, regrade_eligibility, task_changes

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM_REGRADE = ROOT / "benchmarks" / "results" / "regrade_upstream.json"


def _load(path: Path) -> tauk.Results:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tauk.load(path, strict=False)


def _plain_changes(old: Path, new: Path) -> tuple[int, int]:
    """(gold-action changes, scenario changes) by comparing the JSON directly."""
    def acts(t):
        return [(a["name"], json.dumps(a.get("arguments") or {}, sort_keys=True), a.get("requestor") or "assistant",
                 a.get("compare_args")) for a in (t.get("evaluation_criteria") or {}).get("actions") or []]  # fmt: skip

    o = {t["id"]: t for t in json.loads(old.read_text())}
    n = {t["id"]: t for t in json.loads(new.read_text())}
    common = set(o) & set(n)
    return (sum(acts(o[i]) != acts(n[i]) for i in common),
            sum(o[i].get("user_scenario") != n[i].get("user_scenario") for i in common))  # fmt: skip


@pytest.mark.parametrize("domain,expected", [("airline", (12, 22)), ("retail", (10, 21))])
def test_version_changes_the_issue_counts(shared_data, domain, expected):
    old, new = shared_data / "tasks" / f"v0.1.0_{domain}_tasks.json", shared_data / "tasks" / f"head_{domain}_tasks.json"
    ch = task_changes(old, new)
    got = (int(ch["gold_actions_changed"].sum()), int(ch["scenario_changed"].sum()))
    assert got == expected == _plain_changes(old, new)
    assert ch["in_new"].all() and not ch["initial_state_changed"].any()
    # retail's basis moved from the default DB × COMMUNICATE to DB × NL_ASSERTION on every task
    if domain == "retail":
        assert ch["basis_changed"].all()


def test_every_reported_regrade_equals_upstreams_full_reevaluation(shared_data):
    """For each results file re-graded in benchmarks/regrade_upstream.py, every simulation tauk re-grades
    (unchanged / regradable) gets exactly upstream's reward; every other one gets no reward and its class."""
    up = json.loads(UPSTREAM_REGRADE.read_text())
    folders = {p.name: p for p in (shared_data / "tau2").glob("*.json")} | {
        p.name: p for p in (shared_data / "nonconformant").glob("*.json")}  # fmt: skip
    totals = {c: 0 for c in ("unchanged", "regradable", "needs_replay", "needs_judge", "not_comparable")}
    compared = carried_nl = 0
    for key, sims in up.items():
        res_name, _, task_name = key.partition(" @ ")
        res = _load(folders[res_name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RegradeWarning)
            s = score(res, tasks=shared_data / "tasks" / task_name)
        assert s["regrade_class"].null_count() == 0
        for row in s.iter_rows(named=True):
            totals[row["regrade_class"]] += 1
            if row["regrade_class"] in REGRADED:
                want = sims[row["simulation_id"]]
                if want["reward"] is None:  # upstream needs a judge; tauk carries the recorded verdict of the same
                    assert "judge" in want["why"]  # assertions on the same trajectory
                    assert "NL_ASSERTION" in row["regrade_reason"].split("carried: ")[1].split(";")[0]
                    carried_nl += 1
                    continue
                assert row["score_reward"] == pytest.approx(want["reward"], abs=1e-9), (key, row["simulation_id"])
                compared += 1
            else:
                assert row["score_reward"] is None, (key, row["simulation_id"])
                assert row["failure"] in ("task_missing", f"not_regraded:{row['regrade_class']}")
    assert compared + carried_nl == totals["unchanged"] + totals["regradable"] and compared > 0
    assert all(totals[c] > 0 for c in totals), totals
    print(f"classes {totals}; {compared} re-graded rewards equal upstream's, {carried_nl} carry a recorded NL verdict")


def test_the_hybrid_regrade_would_have_been_wrong(shared_data):
    """On the mislabelled toolorchestra run the old hybrid (recorded DB × recomputed COMMUNICATE) disagrees with
    upstream's re-evaluation; the graded definitions differ from the embedded ones (its action checks name other
    gold actions) and those pairs are not comparable."""
    path = shared_data / "nonconformant" / "toolorchestra_airline_1trial.json"
    doc = json.loads(path.read_text())
    gold = {t["id"]: [a["name"] for a in (t["evaluation_criteria"] or {}).get("actions") or []] for t in doc["tasks"]}
    other = {s["task_id"] for s in doc["simulations"]
             if (s.get("reward_info") or {}).get("action_checks") and
             [c["action"]["name"] for c in s["reward_info"]["action_checks"]] != gold[s["task_id"]]}  # fmt: skip
    res = _load(path)
    assert set(res.tasks.filter(pl.col("graded_as_embedded") == False)["task_id"]) == other  # noqa: E712
    e = regrade_eligibility(res, shared_data / "tasks" / "head_airline_tasks.json")
    flagged = e.filter(pl.col("regrade_reason").str.contains("graded with other gold actions"))
    assert set(flagged["task_id"]) == other and len(other) == 42
    up = json.loads(UPSTREAM_REGRADE.read_text())["toolorchestra_airline_1trial.json @ head_airline_tasks.json"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegradeWarning)
        s = score(res, tasks=shared_data / "tasks" / "head_airline_tasks.json")
    comps = {"DB": "db", "COMMUNICATE": "communicate"}
    hybrid = s.with_columns(h=pl.col("gate") * pl.col(comps["DB"]) * pl.col(comps["COMMUNICATE"]))
    wrong = [r for r in hybrid.iter_rows(named=True) if abs(r["h"] - up[r["simulation_id"]]["reward"]) > 1e-9]
    assert wrong and all(r["regrade_class"] not in REGRADED for r in wrong)
    print(f"hybrid mean {hybrid['h'].mean():.2f}, upstream {sum(u['reward'] for u in up.values()) / len(up):.2f}, "
          f"record {res.trials['reward'].mean():.2f}; {len(wrong)} hybrid rewards wrong, all withheld")  # fmt: skip


def test_domain_mismatch_is_an_error(shared_data):
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_retail-test_1trial.json")
    airline = shared_data / "tasks" / "head_airline_tasks.json"
    with pytest.raises(TaukError, match="re-grading with airline task definitions, but .* is retail"):
        score(res, tasks=airline)
    with pytest.raises(TaukError, match="is retail"):
        regrade_eligibility(res, airline)
    with pytest.raises(TaukError, match="is retail"):
        tauk.audit(res, tasks=airline)


def test_replay_makes_needs_replay_regradable(shared_data):
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json")
    head = shared_data / "tasks" / "head_airline_tasks.json"
    offline = regrade_eligibility(res, head)
    replay = regrade_eligibility(res, head, recomputable=("COMMUNICATE", "ACTION", "DB", "ENV_ASSERTION"))
    moved = offline.filter(pl.col("regrade_class") == "needs_replay")["task_id"].to_list()
    assert moved and set(replay.filter(pl.col("task_id").is_in(moved))["regrade_class"]) == {"regradable"}
    same = offline.filter(pl.col("regrade_class") != "needs_replay").select("task_id", "regrade_class")
    assert same.join(replay.select("task_id", "regrade_class"), on=["task_id", "regrade_class"]).height == same.height
    with pytest.raises(TaukError, match="unknown component"):
        regrade_eligibility(res, head, recomputable=("BOGUS",))


def test_same_definitions_are_unchanged_and_reproduce_the_record(shared_data):
    res = _load(shared_data / "tau2" / "v0.1_gpt-4.1_telecom-test_1trial.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegradeWarning)
        s = score(res, tasks=shared_data / "tasks" / "v0.1.0_telecom_tasks.json")
    assert set(s["regrade_class"]) == {"unchanged"}
    assert ((s["score_reward"] - s["reward"]).abs() < 1e-9).all()


def test_audit_cli_counts_by_class(shared_data):
    out = subprocess.run(
        [sys.executable, "-m", "tauk", "audit", str(shared_data / "tau2" / "v0.1_gpt-4.1_retail-test_1trial.json"),
         "--tasks", str(shared_data / "tasks" / "head_retail_tasks.json"), "--format", "json"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    (row,) = json.loads(out.stdout)
    by = row["regrade_tasks"]
    e = regrade_eligibility(_load(shared_data / "tau2" / "v0.1_gpt-4.1_retail-test_1trial.json"),
                            shared_data / "tasks" / "head_retail_tasks.json")  # fmt: skip
    assert by == dict(e.group_by("regrade_class").len().rows())
    assert sum(by.values()) == 40 and "tauk: warning: re-grading" in out.stderr

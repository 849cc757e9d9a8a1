"""What used to be accepted in silence is now a load-report line (lenient) or a named error (strict): unknown files
beside a directory run's results.json, rewards outside [0, 1], termination reasons not spelled as τ²-bench writes
them, non-regular entries of simulations/, and empty or NUL labels."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import pytest

import tauk
from tauk.errors import LoadError

SAMPLE = Path(__file__).resolve().parents[1] / "data"
ONE = SAMPLE / "baseline_airline.json"


def _lenient(path, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = tauk.load(path, strict=False, **kw)
        res.trials  # noqa: B018
    return res, [str(w.message) for w in caught]


def _dir_run(tmp_path: Path, n: int = 10) -> Path:
    """The sample file in the directory format: results.json and simulations/<id>.json."""
    doc = json.loads(ONE.read_text())
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    sims = doc.pop("simulations")[:n]
    for s in sims:
        (run / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    (run / "results.json").write_text(json.dumps(doc))
    return run


def _write(tmp_path: Path, doc, name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# ---- files beside results.json --------------------------------------------------------------------------------
def test_a_taubench_list_beside_results_json_is_not_ignored(tmp_path, shared_data):
    run = _dir_run(tmp_path)
    shutil.copy(shared_data / "taubench" / "gpt-4o_airline_4trials.json", run / "taubench.json")
    for target in (run, tmp_path):  # the run itself, and a folder scanned for runs
        with pytest.raises(LoadError, match=r"1 entry beside results.json .* not read: taubench.json"):
            tauk.load(target)
        res, warned = _lenient(target)
        assert res.report.counts() == {"unknown_beside_results": 1}
        assert any("taubench.json" in w for w in warned)
        assert res.trials.height == 10
    (run / "notes.md").write_text("a note")  # other files and upstream's artifacts/ are left alone
    (run / "artifacts").mkdir()
    (run / "taubench.json").unlink()
    assert tauk.load(run).report.ok


# ---- non-regular entries of simulations/ ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["folder", "broken_link"])
def test_a_non_regular_simulation_entry_is_an_error_under_strict_loading(tmp_path, kind):
    run = _dir_run(tmp_path)
    odd = run / "simulations" / "odd.json"
    if kind == "folder":
        odd.mkdir()
    else:
        odd.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(LoadError, match="not a regular file: a simulation file must be a regular file"):
        tauk.load(run)
    res, warned = _lenient(run)
    assert res.report.counts().get("not_a_regular_file") == 1 and res.trials.height == 10


# ---- rewards outside [0, 1] -----------------------------------------------------------------------------------
def test_rewards_outside_zero_one_are_reported_and_kept(tmp_path):
    doc = json.loads(ONE.read_text())
    doc["simulations"][0]["reward_info"]["reward"] = 1.5
    doc["simulations"][1]["reward_info"]["reward"] = -2.0
    doc["simulations"][2]["reward_info"]["reward"] = 1.0 + 5e-7  # within the success tolerance: not reported
    path = _write(tmp_path, doc)
    for strict in (True, False):
        with pytest.warns(tauk.LoadWarning, match=r"2 reward\(s\) outside \[0, 1\] \(e.g. 1.5 at \$.simulations\[0\]"):
            res = tauk.load(path, strict=strict)
        assert res.report.counts() == {"reward_out_of_range": 1}
    rewards = [s["reward_info"]["reward"] for s in doc["simulations"]]
    assert res.trials["reward"].mean() == pytest.approx(sum(rewards) / len(rewards))  # kept, as recorded
    success = sum(1 - 1e-6 <= r <= 1 + 1e-6 for r in rewards)
    got = tauk.stats.pass_hat_k(res, k=1, ci=None).to_frame()["estimate"][0]
    assert got == pytest.approx(success / len(rewards))  # 1.5 is not a success


def test_taubench_rewards_outside_zero_one_are_reported(tmp_path, shared_data):
    recs = json.loads((shared_data / "taubench" / "gpt-4o_airline_4trials.json").read_text())
    recs[3]["reward"] = 7.0
    with pytest.warns(tauk.LoadWarning, match=r"1 reward\(s\) outside \[0, 1\] \(e.g. 7.0 at \$\[3\].reward\)"):
        res = tauk.load(_write(tmp_path, recs))
    assert res.report.counts() == {"reward_out_of_range": 1}


# ---- termination reasons --------------------------------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["TerminationReason.INFRASTRUCTURE_ERROR", "INFRASTRUCTURE_ERROR", "infra_error",
                                      "Infrastructure Error"])  # fmt: skip
def test_infra_errors_spelled_otherwise_are_infra_errors(tmp_path, spelling):
    doc = json.loads(ONE.read_text())
    for s in doc["simulations"][:3]:
        s["termination_reason"] = spelling
    path = _write(tmp_path, doc)
    with pytest.warns(tauk.LoadWarning, match=rf"{spelling!r} → 'infrastructure_error' \(3\)"):
        res = tauk.load(path)
    assert res.report.counts() == {"termination_reason_respelled": 1}
    assert int(res.trials["is_infra_error"].sum()) == 3
    s = tauk.stats.summarize(res, by="agent", k=1, ci=None).groups
    assert s["infra_error_count"][0] == 3 and s["n_simulations"][0] == 97  # dropped, and counted
    # dropped (the default) rather than counted as normal endings
    kept = doc["simulations"][3:]
    per: dict = {}
    for x in kept:  # pass^1: the mean over tasks of each task's share of successes
        ok = 1 - 1e-6 <= (x["reward_info"] or {}).get("reward", 0) <= 1 + 1e-6
        per.setdefault(x["task_id"], []).append(ok)
    want = sum(sum(v) / len(v) for v in per.values()) / len(per)
    assert tauk.stats.pass_hat_k(res, k=1, ci=None).to_frame()["estimate"][0] == pytest.approx(want)


def test_other_respellings_map_and_unknown_reasons_are_reported(tmp_path):
    doc = json.loads(ONE.read_text())
    doc["simulations"][0]["termination_reason"] = "USER_STOP"
    doc["simulations"][1]["termination_reason"] = "exploded"
    path = _write(tmp_path, doc)
    res, warned = _lenient(path)
    assert res.report.counts() == {"termination_reason_respelled": 1, "unknown_termination_reason": 1}
    assert res.trials["termination_reason"][0] == "user_stop" and res.trials["termination_reason"][1] == "exploded"
    assert any("'exploded' (1)" in w for w in warned)


# ---- labels ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("label", ["", "   ", "a\x00b", "\x00"])
def test_empty_or_nul_labels_are_refused(tmp_path, label):
    with pytest.raises(LoadError, match="empty label|NUL character"):
        tauk.load({label: ONE})
    with pytest.raises(LoadError, match="empty label|NUL character"):
        tauk.ingest({label: ONE}, tmp_path / "st", progress=False)
    assert not list((tmp_path / "st").glob("sources/*.json")) if (tmp_path / "st").exists() else True
    with pytest.raises(LoadError, match="empty agent|NUL character"):
        tauk.load(ONE, agent=label)


def test_ordinary_labels_still_work(tmp_path):
    res = tauk.load({"gpt-4o (v2)": ONE, "ünï\nline": SAMPLE / "baseline_retail.json"})
    assert sorted(res.runs["agent"]) == ["gpt-4o (v2)", "ünï\nline"]  # kept, escaped where rendered
    assert os.path.exists(ONE)

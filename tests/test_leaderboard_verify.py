"""tauk.leaderboard.verify: a submission against its own trajectories, under both infrastructure conventions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tauk.errors import LoadError, TaukError
from tauk.leaderboard import find_trajectories, verify_submission


def _submission(tmp: Path, doc: dict, files: dict[str, Path]) -> Path:
    d = tmp / "sub"
    (d / "trajectories").mkdir(parents=True)
    doc = {**doc, "trajectory_files": {dom: p.name for dom, p in files.items()}}
    (d / "submission.json").write_text(json.dumps(doc))
    for p in files.values():
        shutil.copy(p, d / "trajectories" / p.name)
    return d


def test_published_toolorchestra_airline_reproduces(tmp_path: Path, shared_data: Path):
    doc = json.loads((shared_data / "leaderboard" / "toolorchestra_nvidia_2025-12-02.json").read_text())
    sub = _submission(tmp_path, doc, {"airline": shared_data / "nonconformant" / "toolorchestra_airline_1trial.json"})
    v = verify_submission(sub)
    row = v.to_frame().row(0, named=True)
    assert (row["domain"], row["k"], row["published"]) == ("airline", 1, 56.0)
    assert row["drop"] == pytest.approx(56.0) and row["reproduces"] == "both"
    dom = {r["domain"]: r for r in v.domains.iter_rows(named=True)}
    assert dom["airline"]["status"] == "verified" and dom["airline"]["tasks"] == 50
    assert dom["retail"]["status"] == "missing" and not v.ok  # retail and telecom have no trajectories here
    assert "partly verified" in v.summary().title
    # the figures follow from the rewards as recorded; tauk.audit finds some that do not follow from the trajectories
    import tauk

    totals = tauk.audit(tauk.load(shared_data / "nonconformant" / "toolorchestra_airline_1trial.json",
                                  strict=False)).totals()  # fmt: skip
    assert totals["reward_mismatch"] > 0
    assert (dom["airline"]["rewards_checked"], dom["airline"]["rewards_not_following"]) == (
        totals["n_checked"], totals["reward_mismatch"])  # fmt: skip
    assert f"({totals['reward_mismatch']} of the verified domains' rewards do not follow" in v.summary().title
    assert "recorded rewards do not follow" in dom["airline"]["note"]


def test_infrastructure_convention_is_named(tmp_path: Path, shared_data: Path, expected: dict):
    name = "adaptive-agent_airline_wrapper_infra-error.json"
    e = expected[f"nonconformant/{name}"]
    published = round(100 * e["pass_hat_k_infra_as_failure"]["1"], 1)  # the figure as the leaderboard published it
    doc = {"model_name": "adaptive", "model_organization": "o", "submitting_organization": "o",
           "submission_date": "2026-01-01", "results": {"airline": {"pass_1": published}}}  # fmt: skip
    v = verify_submission(_submission(tmp_path, doc, {"airline": shared_data / "nonconformant" / name}))
    row = v.to_frame().row(0, named=True)
    assert row["drop"] == pytest.approx(100 * e["pass_hat_k"]["1"]) and row["fail"] == pytest.approx(published)
    assert row["reproduces"] == "fail" and v.ok
    assert v.domains["convention"].to_list() == ["fail"] and v.domains["infra_errors"].to_list() == [1]
    assert v.domains["rewards_not_following"].to_list() in ([0], [None])  # nothing to qualify
    assert "do not follow" not in v.summary().title


def test_a_wrong_figure_is_listed(tmp_path: Path, shared_data: Path):
    doc = {"model_name": "m", "model_organization": "o", "submitting_organization": "o",
           "submission_date": "2026-01-01", "results": {"airline": {"pass_1": 58.0}}}  # fmt: skip
    sub = _submission(tmp_path, doc, {"airline": shared_data / "nonconformant" / "toolorchestra_airline_1trial.json"})
    v = verify_submission(sub)
    assert not v.ok and v.differences().height == 1
    assert v.differences()["difference_drop"][0] == pytest.approx(-2.0)
    assert "NOT verified" in v.summary().title


def test_bad_submissions(tmp_path: Path):
    with pytest.raises(LoadError, match="no submission.json"):
        verify_submission(tmp_path)
    (tmp_path / "submission.json").write_text(json.dumps({
        "model_name": "m", "model_organization": "o", "submitting_organization": "o", "submission_date": "2026-01-01",
        "results": {"airline": {"pass_1": 50.0}}}))  # fmt: skip
    with pytest.raises(TaukError, match="nothing to verify"):
        verify_submission(tmp_path)
    doc = json.loads((tmp_path / "submission.json").read_text())
    doc["trajectory_files"] = {"airline": "../../etc/passwd"}
    (tmp_path / "submission.json").write_text(json.dumps(doc))
    with pytest.raises(LoadError, match="trajectory_files.airline"):
        find_trajectories(tmp_path)

"""Upstream HEAD's metric counters (``tauk.scoring.counters``) equal what ``compute_metrics`` gives — on every shared
results file upstream loads, and on a minimally edited copy that records authentication, LLM reviews,
responsiveness and an infrastructure error — and pass^k is given under both infrastructure conventions."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from test_shapes_head import _assert_counters
from upstream_tau2 import run_upstream

import tauk
from tauk.scoring import counters

UPSTREAM_METRICS = """
import json, sys
from tau2.data_model.simulation import Results
from tau2.metrics.agent_metrics import compute_metrics
out = {}
for path in sys.argv[1:]:
    out[path] = compute_metrics(Results.load(path)).model_dump()
print(json.dumps(out))
"""


def _shared_files(shared_data: Path) -> list[Path]:
    return [*sorted((shared_data / "tau2").glob("*.json")), shared_data / "nonconformant/toolorchestra_airline_1trial.json"]


def test_counters_equal_upstream_on_every_shared_file(shared_data):
    files = _shared_files(shared_data)
    theirs = run_upstream(UPSTREAM_METRICS, *map(str, files))
    checked = 0
    for f in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tauk.LoadWarning)
            trials = tauk.load(f).trials
        mine = counters.head_counters(trials, by=None).row(0, named=True)
        up = theirs[str(f)]
        if up["total_simulations"] == 0:
            assert mine["n_simulations"] == 0
            continue
        _assert_counters(mine, up)
        checked += 1
    assert checked == len(files) - 2  # the two files without simulations aside


REVIEWS = [
    {"summary": "", "has_errors": True, "errors": [
        {"source": "agent", "severity": "minor", "error_tags": ["tone"], "turn_idx": 3, "reasoning": "r"},
        {"source": "agent", "severity": "critical", "error_tags": ["policy", "tone"], "turn_idx": 9, "reasoning": "r"},
        {"source": "user", "severity": "critical_hindered", "error_tags": ["hallucination"], "turn_idx": 5,
         "reasoning": "r"}]},
    {"summary": "", "has_errors": True, "errors": [
        {"source": "user", "severity": "minor", "error_tags": ["early_stop"], "tick_start": 40, "reasoning": "r"},
        {"source": "agent", "severity": None, "error_tags": ["other"], "reasoning": "r"},
        {"source": "unknown", "severity": "critical", "error_tags": ["x"], "reasoning": "r"}]},
    {"summary": "", "has_errors": False, "errors": []},
    {"summary": "", "has_errors": True, "errors": [
        {"source": "agent", "severity": "critical", "error_tags": [], "tick_start": 12, "reasoning": "r"},
        {"source": "user", "severity": "critical_helped", "error_tags": ["leak"], "tick_start": 7, "reasoning": "r"}]},
]  # fmt: skip
USER_ONLY = [
    {"summary": "", "has_errors": True, "errors": [
        {"severity": "minor", "error_tags": ["tone"], "turn_idx": 1, "reasoning": "r"}]},
    {"summary": "", "has_errors": False, "errors": []},
]  # fmt: skip


def _reviewed_copy(shared_data: Path, tmp_path: Path) -> Path:
    """The v1.0 text run with authentication, reviews, responsiveness and one infrastructure error recorded."""
    doc = json.loads((shared_data / "tau2/v1.0_whissle_airline_1trial.json").read_text())
    sims = doc["simulations"]
    statuses = ["succeeded", "failed", "not_needed"]
    for i, s in enumerate(sims):
        if i % 4 != 3:
            s["auth_classification"] = {"status": statuses[i % 3], "reasoning": ""}
        if i < len(REVIEWS):
            s["review"] = REVIEWS[i]
        elif i < len(REVIEWS) + len(USER_ONLY):
            s["user_only_review"] = USER_ONLY[i - len(REVIEWS)]
        if i % 5 == 0:
            s["info"] = {"had_unresponsive_period": i % 10 == 0}
    sims[-1]["termination_reason"] = "infrastructure_error"
    sims[-1]["review"] = REVIEWS[0]  # left out of every counter but the infrastructure count, as upstream does
    sims[-2]["termination_reason"] = "too_many_errors"
    path = tmp_path / "reviewed.json"
    path.write_text(json.dumps(doc))
    return path


def test_review_and_auth_counters_equal_upstream(shared_data, tmp_path):
    path = _reviewed_copy(shared_data, tmp_path)
    up = run_upstream(UPSTREAM_METRICS, str(path))[str(path)]
    trials = tauk.load(path).trials
    mine = counters.head_counters(trials, by=None).row(0, named=True)
    _assert_counters(mine, up)
    assert up["auth_succeeded"] and up["auth_failed"] and up["auth_not_needed"] and up["auth_not_checked"]
    assert up["sims_with_unresponsive_period"] and up["termination_error"] == 1
    sev = counters.review_severities(trials, by=None)
    for side in ("agent", "user"):
        part = sev.filter(source=side)
        assert dict(zip(part["severity"], part["errors"])) == {**dict.fromkeys(
            [s for s, n in zip(part["severity"], part["errors"]) if n == 0], 0),
            **up[f"{side}_errors_by_severity"]}  # fmt: skip
        at_max = {s: n for s, n in zip(part["severity"], part["simulations_at_max"]) if n}
        assert at_max == up[f"sims_by_max_{side}_severity"], side
    tags = counters.review_tags(trials, by=None)
    for side in ("agent", "user"):
        part = tags.filter(source=side)
        got: dict = {}
        for tag, severity, n in part.select("tag", "severity", "errors").rows():
            got.setdefault(tag, {})[severity] = n
        assert got == up[f"{side}_error_tags_by_severity"], side
    assert sev["n_reviewed"].unique().to_list() == [len(REVIEWS) + len(USER_ONLY)]


def test_counters_by_group_add_up(shared_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        res = tauk.load(_shared_files(shared_data), strict=False)
    table = counters.head_counters(res, by=("agent", "domain", "setup"))
    whole = counters.head_counters(res, by=None).row(0, named=True)
    for col in ("n_simulations", "db_match", "db_mismatch", "db_not_checked", "read_actions", "write_actions",
                "termination_user_stop", "termination_infrastructure_error", "auth_not_checked"):
        assert table[col].sum() == whole[col], col
    ends = ["termination_user_stop", "termination_agent_stop", "termination_max_steps", "termination_error",
            "termination_other"]  # fmt: skip
    assert (table.select(ends).sum_horizontal() == table["n_simulations"]).all()
    db = table.select("db_match", "db_mismatch", "db_not_checked").sum_horizontal()
    assert (db == table["n_simulations"]).all()


def test_both_infra_conventions_match_expected(shared_data, expected):
    """A summary's estimate and its other-convention estimate against EXPECTED.json (both conventions) on every
    file with simulations, from the trials and from their per-task counts."""
    for rel, exp in expected.items():
        if not exp.get("pass_hat_k"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tauk.LoadWarning)
            trials = tauk.load(shared_data / rel, strict=False).trials
        ks = [int(k) for k in exp["pass_hat_k"]]
        long = tauk.stats.summarize(trials, by=None, k=ks, ci=None).pass_hat_k.sort("k")
        assert long["estimate"].to_list() == pytest.approx([exp["pass_hat_k"][str(k)] for k in ks]), rel
        fail = exp.get("pass_hat_k_infra_as_failure") or exp["pass_hat_k"]
        assert long["estimate_infra_fail"].to_list() == pytest.approx([fail[str(k)] for k in ks]), rel
        back = tauk.stats.summarize(trials, by=None, k=ks, ci=None, infra="fail").pass_hat_k.sort("k")
        assert back["estimate_infra_drop"].to_list() == pytest.approx(long["estimate"].to_list()), rel
        for infra, col in (("drop", "estimate_infra_fail"), ("fail", "estimate_infra_drop")):  # from per-task counts
            counts = tauk.stats.task_counts(trials, infra=infra)
            from_counts = tauk.stats.summarize(counts, by=None, k=ks, ci=None, infra=infra).pass_hat_k.sort("k")
            from_trials = back if infra == "fail" else long
            assert from_counts[col].to_list() == pytest.approx(from_trials[col].to_list()), (rel, infra)


@pytest.mark.shared_data
def test_summary_rows_carry_the_counters_and_the_other_infra_convention(shared_data, expected):
    """Every summary row: the HEAD counters with their denominator (as head_counters gives them for the group) and
    pass^k under the other infrastructure convention — EXPECTED.json's figure for the adaptive-agent file (the
    published 98.0 is the infra-as-failure figure)."""
    name = "nonconformant/adaptive-agent_airline_wrapper_infra-error.json"
    res = tauk.load(shared_data / name, strict=False)
    s = tauk.stats.summarize(res, by="agent", ci=None)
    rec = s.records()[0]
    exp = expected[name]
    one = rec["pass_hat_k"]["1"]
    assert one["estimate"] == pytest.approx(exp["pass_hat_k"]["1"])
    assert one["estimate_infra_fail"] == pytest.approx(exp["pass_hat_k_infra_as_failure"]["1"])
    assert "pass^1 would be" in "\n".join(s.summary().notes)
    direct = counters.head_counters(res, by="agent").row(0, named=True)
    assert rec["counters"]["n_counted"] == direct["n_simulations"]
    assert {k: v for k, v in rec["counters"].items() if k != "n_counted"} == {
        k: v for k, v in direct.items() if k not in ("agent", "n_simulations")}
    # the other convention from infra="fail"
    s2 = tauk.stats.summarize(res, by="agent", ci=None, infra="fail")
    assert s2.records()[0]["pass_hat_k"]["1"]["estimate_infra_drop"] == pytest.approx(one["estimate"])


def test_grouped_head_counters_are_the_separate_counters_joined(shared_data):
    """The grouped head counters are one query (issue 27, startup); each of their columns equals the public counter
    it comes from, row for row — a group of infrastructure errors only included (its counts 0, its accuracies null)."""
    import polars as pl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        res = tauk.load(_shared_files(shared_data), strict=False)
    t = res.trials
    only_infra = t.head(3).with_columns(pl.lit("infra-only").alias("agent"),
                                        pl.lit("infrastructure_error").alias("termination_reason"))  # fmt: skip
    t = pl.concat([t, only_infra])
    keys = ["agent", "domain"]
    got = counters.head_counters(t, by=keys)
    assert got.filter(agent="infra-only").row(0, named=True)["n_simulations"] == 0
    assert got.filter(agent="infra-only")["read_accuracy"].is_null().all()
    parts = [counters.db_checks(t, by=keys), counters.authentication(t, by=keys), counters.action_accuracy(t, by=keys),
             counters.responsiveness(t, by=keys), counters.terminations(t, by=keys), counters.first_critical(t, by=keys)]
    for part in parts:
        cols = [c for c in part.columns if c not in keys and c != "n_reviewed"]
        want = got.select(keys).join(part, on=keys, how="left", nulls_equal=True).select(cols)
        counts = [c for c in cols if want.schema[c] == pl.Int64]
        want = want.with_columns([pl.col(c).fill_null(0) for c in counts])
        assert got.select(cols).equals(want), cols

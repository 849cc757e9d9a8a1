"""`tauk summary` matches EXPECTED.json (upstream rules) on every shared results file, both infra conventions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tauk.cli import main

REQUIRED_KEYS = {"run", "agent", "domain", "n_simulations", "n_tasks", "infra_error_count", "avg_reward",
                 "avg_agent_cost", "pass_hat_k"}  # fmt: skip


def _summary_json(capsys, *args) -> list[dict]:
    assert main(["summary", *args, "--format", "json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def _close(a, b, tol=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol


@pytest.mark.parametrize("infra", ["drop", "fail"])
def test_parity_with_expected(capsys, shared_data, expected, infra):
    paths = [str(shared_data / rel) for rel in expected]
    recs = _summary_json(capsys, *paths, "--infra", infra)
    by_run = {r["run"]: r for r in recs}
    assert len(by_run) == len(expected)
    key = "pass_hat_k" if infra == "drop" else "pass_hat_k_infra_as_failure"
    for rel, exp in expected.items():
        r = by_run[str(shared_data / rel)]
        assert set(r) >= REQUIRED_KEYS
        assert r["n_simulations"] == exp["n_simulations"] + (exp["infra_error_count"] if infra == "fail" else 0), rel
        if infra == "drop":
            assert r["n_tasks"] == exp["n_tasks"], rel
            assert _close(r["avg_reward"], exp["avg_reward"]), rel
            assert _close(r["avg_agent_cost"], exp["avg_agent_cost"]), rel
        assert r["infra_error_count"] == exp["infra_error_count"], rel
        assert set(r["pass_hat_k"]) == set(exp[key]), rel
        for k, v in exp[key].items():
            assert _close(r["pass_hat_k"][k]["estimate"], v), (rel, k)


def test_taubench_reference_figures(capsys, shared_data):
    (r,) = _summary_json(capsys, str(shared_data / "taubench/gpt-4o_airline_4trials.json"))
    est = [r["pass_hat_k"][str(k)]["estimate"] for k in (1, 2, 3, 4)]
    assert est == pytest.approx([0.42, 0.2733333333333333, 0.22, 0.20], abs=1e-12)


def test_summary_ci_fields(capsys, shared_data):
    (r,) = _summary_json(capsys, str(shared_data / "taubench/gpt-4o_airline_4trials.json"), "--ci", "0.95",
                         "--resamples", "999", "--seed", "3")  # fmt: skip
    for k in "1234":
        e = r["pass_hat_k"][k]
        assert set(e) >= {"estimate", "ci_low", "ci_high", "se_tasks", "se_rerun"}
        assert e["ci_low"] <= e["estimate"] <= e["ci_high"]
    assert r["pass_hat_k"]["1"]["se_rerun"] is not None and r["pass_hat_k"]["4"]["se_rerun"] is None  # n ≥ 2k


@pytest.mark.parametrize(("fmt", "column"), [("table", "pass^4"), ("csv", "pass_hat_4_ci_high"),
                                              ("markdown", "pass^4"), ("latex", r"pass\textasciicircum{}4")])
def test_other_formats(capsys, shared_data, fmt, column):
    assert main(["summary", str(shared_data / "tau2/v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json"), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert column in out and "0.8" in out


def test_console_script_and_bad_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"simulations": [')
    p = subprocess.run([sys.executable, "-m", "tauk", "summary", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and "bad.json" in p.stderr and "Traceback" not in p.stderr


def test_json_records_carry_the_counters(capsys):
    """The README's JSON keys: every record has the HEAD counters with their denominator, as the library gives."""
    import tauk

    recs = _summary_json(capsys, "data", "--ci", "0")
    s = tauk.stats.summarize(tauk.load("data"), by="run_id", ci=None)
    lib = {r["run_id"]: r["counters"] for r in s.records()}
    assert len(recs) == len(lib)
    for rec in recs:
        assert rec["counters"]["n_counted"] == rec["n_simulations"] - rec["infra_error_count"]
        assert rec["counters"] in lib.values()


@pytest.mark.parametrize("name", ["tau2/v0.1_gpt-4.1_airline-test_1trial.json", "taubench/gpt-4o_airline_4trials.json"])
def test_a_filter_keeps_the_task_definitions(capsys, shared_data, name):
    """--task / --failed select simulations, not task definitions: the substantive figures of the kept tasks are
    those of the whole file's verdicts, not null 'no task definitions' (which the file has)."""
    path = str(shared_data / name)
    (whole,) = _json(capsys, path)
    assert whole["task_definitions"] == "embedded" and whole["n_tasks_substantive"]  # the premise
    ids = sorted({str(s["task_id"]) for s in _sims(shared_data / name)})[:5]
    (part,) = _json(capsys, path, "--task", ",".join(ids))
    assert part["n_tasks"] == len(ids) and part["task_definitions"] == "embedded"
    known = part["n_tasks_inaction_passable"] + part["n_tasks_substantive"] + part["n_tasks_inaction_unknown"]
    assert known == len(ids) and part["pass_hat_k"]["1"]["substantive"]["n_tasks"] == part["n_tasks_substantive"]
    (failed,) = _json(capsys, path, "--failed")
    assert failed["task_definitions"] == "embedded" and failed["n_tasks_inaction_passable"] is not None


def _json(capsys, *args: str) -> list[dict]:
    assert main(["summary", *args, "--format", "json", "--quiet", "--ci", "0"]) == 0
    return json.loads(capsys.readouterr().out)


def _sims(path) -> list[dict]:
    doc = json.loads(path.read_text())
    return doc if isinstance(doc, list) else doc["simulations"]

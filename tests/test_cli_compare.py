"""`tauk compare`: the JSON contract, labels from files or LABEL=PATH, self-comparison."""

from __future__ import annotations

import json

import pytest

import tauk
from tauk.cli import COMPARE_KEYS, main
from tauk.stats import compare


def _run(capsys, *args) -> list[dict]:
    assert main(["compare", *args, "--format", "json", "--quiet", "--resamples", "999"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_json_contract_and_values(capsys, shared_data):
    a = shared_data / "tau2/v0.1_gpt-4.1_airline-test_1trial.json"
    b = shared_data / "tau2/v0.1_ft-gpt-4.1_airline-test_1trial.json"
    (rec,) = _run(capsys, f"base={a}", f"ft={b}", "--a", "ft", "--b", "base")
    assert set(rec) >= set(COMPARE_KEYS)
    direct = compare(tauk.load({"base": a, "ft": b}), "ft", "base", resamples=999).to_frame().row(0, named=True)
    assert rec["difference"] == pytest.approx(direct["diff"]) and rec["n_tasks"] == 20
    assert rec["ci_low"] <= rec["difference"] <= rec["ci_high"]
    assert rec["p_value"] == pytest.approx(direct["p_value"]) and rec["test"] == "score"
    assert rec["interval_method"] == "score" and rec["p_signflip"] == pytest.approx(direct["p_signflip"])
    assert rec["interval_excludes_0"] == (rec["p_value"] < 0.05) == rec["p_below_alpha"]
    assert rec["p_adjusted"] == pytest.approx(rec["p_value"])  # one comparison: nothing to adjust
    assert rec["p_value_adjusted"] == rec["p_adjusted"]  # the old key, kept one release


def test_compare_by_domain_adjusts(capsys):
    recs = _run(capsys, "data", "--a", "atlas-large", "--b", "baseline", "--by", "domain")
    assert [r["domain"] for r in recs] == ["airline", "retail"]
    assert all(r["p_adjusted"] >= r["p_value"] for r in recs)
    assert all(r["difference"] > 0 for r in recs)  # the stronger synthetic agent


def test_compare_agent_with_itself(capsys):
    (rec,) = _run(capsys, "a=data/baseline_airline.json", "b=data/baseline_airline.json", "--a", "a", "--b", "b")
    assert rec["difference"] == 0 and rec["p_value"] == 1


def test_unknown_label_is_a_clear_error(capsys):
    assert main(["compare", "data", "--a", "nobody", "--b", "baseline", "--quiet"]) == 2
    assert "nobody" in capsys.readouterr().err


def test_k_beyond_the_trials_is_said_not_hidden(capsys):
    assert main(["compare", "data", "--a", "atlas-large", "--b", "baseline", "--k", "5", "--format", "json",
                 "--quiet", "--resamples", "99"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    recs = json.loads(captured.out)  # one per setup (airline, retail)
    assert [r["n_tasks_excluded"] for r in recs] == [25, 25]
    assert all(r["n_tasks"] == 0 and r["difference"] is None for r in recs)
    assert "no shared task with at least k=5" in captured.err


def test_agents_in_different_setups_are_not_paired_and_it_is_said(capsys, shared_data):
    """τ-bench's airline tasks 0 … 49 are not τ²-bench's: the default does not pair them, the note says why, and
    --pool-setups pairs them when asked."""
    tb, t2 = shared_data / "taubench/gpt-4o_airline_4trials.json", shared_data / "tau2/v1.0_whissle_airline_1trial.json"
    assert main(["compare", f"tb={tb}", f"t2={t2}", "--a", "tb", "--b", "t2", "--format", "json", "--quiet"]) == 0
    captured = capsys.readouterr()
    recs, err = json.loads(captured.out), captured.err
    assert len(recs) == 2 and all("setup" in r and r["n_tasks"] == 0 and r["difference"] is None for r in recs)
    assert "has no trial here (the agents ran in different setups" in err
    (pooled,) = _run(capsys, f"tb={tb}", f"t2={t2}", "--a", "tb", "--b", "t2", "--pool-setups")
    assert pooled["n_tasks"] > 0 and "setup" not in pooled
    # asked to pool: the table says over which setups and how they differ
    assert main(["compare", f"tb={tb}", f"t2={t2}", "--a", "tb", "--b", "t2", "--pool-setups", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "pooled over 2 setups that differ in" in out and "evaluator_version" in out


def test_the_table_carries_the_comparisons_own_notes(capsys):
    """The command line's table shows what the library's result says beyond the method (here the run-effect test
    and the setups pooled), not only its own lines."""
    from tauk import load
    from tauk.stats import compare

    c = compare(load("data"), "atlas-large", "baseline", pool_setups=True)
    assert main(["compare", "data", "--a", "atlas-large", "--b", "baseline", "--pool-setups", "--quiet"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert c.caveats() and all(" ".join(n.split()) in out for n in c.caveats())


def test_the_help_says_agents_are_paired_only_within_a_setup(capsys):
    """--pool-setups' help of tauk compare says what the default does to two agents (it said only 'a group spanning
    setups is reported per setup', which is summary's rule, not the pairing)."""
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "by default two agents are paired only within a setup" in text
    assert "the table names the setups pooled" in text

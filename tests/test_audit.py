"""tauk.audit: recomputed vs recorded COMMUNICATE / ACTION / reward, per run; the `tauk audit` CLI."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import polars as pl
import pytest
from test_scoring_helpers import action, build, msg, sim, task

import tauk
from tauk.errors import TaukError
from tauk.scoring import Audit, audit
from tauk.stats import SummaryTable

ORCH = "nonconformant/toolorchestra_airline_1trial.json"


def _load(path) -> tauk.Results:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        return tauk.load(str(path), progress=False)


# ------------------------------------------------------------------------------------------------ hand-built
def _small() -> Audit:
    good = [msg("assistant", "code 42", calls=[("f", {"x": 1})])]
    sims = [
        sim("ok", "t", good, reward=1.0, recorded_communicate=1.0, recorded_action=1.0),
        sim("comm", "t", good, reward=1.0, recorded_communicate=0.0, recorded_action=1.0),
        sim("act", "t", good, reward=1.0, recorded_communicate=1.0, recorded_action=0.0),
        sim("none", "t", good, reward=None, has_reward_info=False),
    ]
    return audit(build(sims, [task("t", communicate_info=["code 42"], actions=[action("f", {"x": 1})])]))


def test_audit_counts_and_mismatches():
    a = _small()
    f = a.to_frame()
    assert f.columns[:7] == ["run", "run_id", "n_simulations", "n_checked", "communicate_mismatch",
                             "action_mismatch", "reward_mismatch"]  # fmt: skip
    row = f.row(0, named=True)
    assert row["n_simulations"] == 4 and row["n_checked"] == 3
    assert (row["communicate_mismatch"], row["action_mismatch"], row["reward_mismatch"]) == (1, 1, 0)
    m = a.mismatches()
    assert sorted(zip(m.get_column("simulation_id"), m.get_column("component"))) == [
        ("act", "ACTION"), ("comm", "COMMUNICATE")]  # fmt: skip
    assert not a.ok and a.totals()["communicate_mismatch"] == 1


def test_audit_is_immutable_and_renders():
    a = _small()
    with pytest.raises(dataclasses.FrozenInstanceError):
        a._runs = None  # type: ignore[misc]
    a.to_frame().clear()  # a copy: the audit is unchanged
    assert a.to_frame().height == 1
    table = a.summary()
    assert isinstance(table, SummaryTable)  # the same table object as every statistics result
    text = str(table)
    assert "communicate_mismatch" in text and "run" in text and str(a) == text
    assert text.startswith("tauk audit: 1 run(s); mismatches / checked: COMMUNICATE 1/3, ACTION 1/3, reward 0/3")
    html = table._repr_html_()
    assert "<table>" in html and a._repr_html_() == html
    latex = table.to_latex()
    assert "\\begin{tabular}" in latex and "communicate\\_mismatch" in latex
    assert a.records() == a.to_frame().to_dicts()


def test_audit_summary_fmt_is_deprecated_but_works():
    a = _small()
    table = a.summary()
    for fmt, want in (("text", str(table)), ("html", table._repr_html_()), ("latex", table.to_latex())):
        with pytest.warns(DeprecationWarning, match="summary"):
            assert a.summary(fmt) == want
    with pytest.warns(DeprecationWarning), pytest.raises(TaukError):
        a.summary("pdf")


def test_audit_reward_mismatch():
    sims = [sim("s", "t", [msg("assistant", "nothing")], reward=1.0)]
    a = audit(build(sims, [task("t", communicate_info=["code 42"])]))
    assert a.totals()["reward_mismatch"] == 1
    m = a.mismatches()
    assert m.filter(pl.col("component") == "REWARD").select("recorded", "recomputed").row(0) == (1.0, 0.0)


# ----------------------------------------------------------------------------------------------- shared data
@pytest.mark.shared_data
def test_audit_matches_expected_on_every_file(shared_data, expected):
    checked = 0
    for rel, exp in expected.items():
        if "recomputed_vs_recorded" not in exp:  # τ-bench files: no figure under τ²-bench rules
            continue
        checked += 1
        a = audit(_load(shared_data / rel))
        row = a.to_frame().row(0, named=True)
        want = exp["recomputed_vs_recorded"]
        got = {k: row[k] for k in want}
        assert got == want, rel
    assert checked >= 20


@pytest.mark.shared_data
def test_audit_toolorchestra(shared_data, expected):
    a = audit(_load(shared_data / ORCH))
    row = a.to_frame().row(0, named=True)
    assert (row["communicate_mismatch"], row["action_mismatch"], row["reward_mismatch"]) == (7, 0, 3)
    assert row["n_checked"] == 50
    # its embedded actions are not the graded ones: the grader's diagnostic action checks disagree
    assert row["action_diagnostic_mismatch"] > 0
    m = a.mismatches()
    assert m.height == 10 and m.get_column("simulation_id").n_unique() <= 10
    assert set(m.get_column("component")) == {"COMMUNICATE", "REWARD"}
    assert a.mismatches(diagnostic=True).height > m.height


@pytest.mark.shared_data
def test_audit_all_conformant_zero(shared_data):
    paths = [*sorted((shared_data / "tau2").glob("*.json")), shared_data / "tau2-dir-voice",
             shared_data / "nonconformant" / "adaptive-agent_airline_wrapper_infra-error.json"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        res = tauk.load([str(p) for p in paths], progress=False)
    a = audit(res)
    assert a.ok
    f = a.to_frame()
    assert f.height == len(paths)
    assert f.get_column("n_checked").sum() >= 400


@pytest.mark.shared_data
def test_cli_audit_json(shared_data, capsys):
    from tauk.cli import main

    rc = main(["audit", str(shared_data / ORCH), str(shared_data / "tau2" / "v0.2_gpt-4.1-mini_airline_1sim.json"),
               "--format", "json", "--quiet"])  # fmt: skip
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out, list) and len(out) == 2
    by = {Path(r["run"]).name: r for r in out}
    orch = by[Path(ORCH).name]
    for k in ("run", "n_checked", "communicate_mismatch", "action_mismatch", "reward_mismatch"):
        assert k in orch
    assert (orch["communicate_mismatch"], orch["action_mismatch"], orch["reward_mismatch"]) == (7, 0, 3)
    assert by["v0.2_gpt-4.1-mini_airline_1sim.json"]["reward_mismatch"] == 0


@pytest.mark.shared_data
def test_cli_audit_table_and_tasks(shared_data, capsys):
    from tauk.cli import main

    rc = main(["audit", str(shared_data / ORCH), "--quiet"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "communicate_mismatch" in out and "mismatch(es)" in out
    rc = main(["audit", str(shared_data / "tau2" / "v0.1_gpt-4.1_airline-test_1trial.json"), "--format", "json",
               "--quiet", "--tasks", str(shared_data / "tasks" / "v0.1.0_airline_tasks.json")])  # fmt: skip
    assert rc == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["reward_mismatch"] == 0 and row["communicate_mismatch"] == 0


def test_audit_decodes_the_messages_once_without_unread_columns(monkeypatch):
    """Scoring reads a few message columns and the tool calls: one decode of the file, without the provider's
    raw_data (it once decoded the file twice at the same time, once whole: 2.9× the file's size in memory)."""
    calls: list[object] = []
    decode = tauk.Results._decode_messages

    def counting(self, columns=None):
        calls.append(None if columns is None else tuple(columns))
        return decode(self, columns)

    monkeypatch.setattr(tauk.Results, "_decode_messages", counting)
    res = _load(Path(__file__).resolve().parents[1] / "data")
    assert tauk.audit(res).ok
    assert len(calls) == 1 and calls[0] is not None and "raw_data" not in calls[0]
    assert res.tool_calls.height > 0 and len(calls) == 1  # the calls decoded on the way are kept
    tauk.score(res), tauk.audit(res)
    assert len(calls) == 1  # and so is the selection: scoring again decodes nothing

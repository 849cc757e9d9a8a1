"""`tauk leaderboard`: the tables of tauk.leaderboard on the command line, and --verify."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tauk.cli import main
from tauk.leaderboard import TABLES, analyze


def test_tables_and_formats(capsys, shared_data: Path):
    board = str(shared_data / "leaderboard")
    assert main(["leaderboard", board, "--domain", "airline"]) == 0
    out = capsys.readouterr().out
    assert "Leaderboard ranking" in out and "claude-opus-4-5" in out and "retail" not in out.split("* ")[0]
    assert main(["leaderboard", board, "--table", "rows", "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    want = analyze(board).rows.to_frame()
    assert len(recs) == want.height and recs[0].keys() == set(want.columns)
    for fmt in ("csv", "markdown", "latex"):
        assert main(["leaderboard", board, "--table", "voice", "--domain", "retail", "--format", fmt]) == 0
        out = capsys.readouterr().out.replace("\\allowbreak{}", "").replace("\\_", "_")
        assert "response_rate" in out
    assert main(["leaderboard", board, "--table", "all", "--format", "json", "--domain", "telecom"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == set(TABLES)


def test_pairs_name_the_difference(capsys, shared_data: Path):
    """One name per quantity: the pairs' column is ``difference`` in every format; JSON keeps ``diff`` one release."""
    board = str(shared_data / "leaderboard")
    for fmt in ("table", "csv", "markdown", "latex"):
        assert main(["leaderboard", board, "--table", "pairs", "--domain", "airline", "--format", fmt]) == 0
        head = capsys.readouterr().out.replace("\\allowbreak{}", "")
        assert "difference" in head and "diff " not in head and "diff," not in head, fmt
    assert main(["leaderboard", board, "--table", "pairs", "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert recs and all(r["diff"] == r["difference"] for r in recs)
    assert "difference" in analyze(board).ranking.pairs.columns and "diff" not in analyze(board).ranking.pairs.columns


def test_verify(capsys, tmp_path: Path, shared_data: Path):
    sub = tmp_path / "toolorchestra_nvidia_2025-12-02"
    (sub / "trajectories").mkdir(parents=True)
    doc = json.loads((shared_data / "leaderboard" / "toolorchestra_nvidia_2025-12-02.json").read_text())
    doc["trajectory_files"] = {"airline": "airline.json"}
    (sub / "submission.json").write_text(json.dumps(doc))
    shutil.copy(shared_data / "nonconformant" / "toolorchestra_airline_1trial.json", sub / "trajectories" / "airline.json")
    assert main(["leaderboard", "--verify", str(sub)]) == 1  # retail and telecom have no trajectories
    out = capsys.readouterr().out
    assert "partly verified" in out and "56.0" in out
    doc["results"] = {"airline": doc["results"]["airline"]}
    (sub / "submission.json").write_text(json.dumps(doc))
    assert main(["leaderboard", "--verify", str(sub), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["status"] == "verified"


@pytest.mark.parametrize("argv, message", [
    (["leaderboard"], "give a leaderboard folder"),
    (["leaderboard", "x", "--ci", "0"], "every leaderboard row gets an interval"),
    (["leaderboard", "no/such/folder"], "no such file or directory"),
])  # fmt: skip
def test_errors_are_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1

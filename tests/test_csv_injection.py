"""CSV formula injection: agent names (untrusted text from results files) starting with ``=``, ``+``, ``-``, ``@``,
a tab or a CR are written with a leading single quote in every CSV tauk writes (summary, consistency, compare, the
report's tables), so a spreadsheet shows them as text; numbers stay numbers."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

import tauk
from tauk.cli import main
from tauk.report import write_report
from tauk.table._format import csv_safe

SAMPLE = Path(__file__).resolve().parents[1] / "data"
HOSTILE = ["=HYPERLINK(\"http://e.vil\",\"x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)", "\t=1+1", "\r=1"]
DANGER = ("=", "+", "-", "@", "\t", "\r")


def _cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


def _assert_inert(text: str) -> None:
    for cell in _cells(text):
        assert not cell.startswith(DANGER) or _is_number(cell), repr(cell)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _hostile_copy(tmp_path: Path, pattern: str = "*.json") -> Path:
    """The sample files with hostile agent names (``agent_info.llm``) written into the files themselves."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    names = {"atlas-large": HOSTILE[0], "atlas-small": HOSTILE[1], "baseline": HOSTILE[3]}
    for f in SAMPLE.glob(pattern):
        doc = json.loads(f.read_text())
        agent = doc["info"]["agent_info"]
        agent["llm"] = names.get(agent.get("llm"), agent.get("llm"))
        (folder / f.name).write_text(json.dumps(doc))
    return folder


@pytest.mark.parametrize("text", HOSTILE)
def test_csv_safe_neutralises_a_leading_formula_character(text):
    out = csv_safe(text)
    assert out.startswith("'") and out[1:2] not in ("\t", "\r")
    assert csv_safe("gpt-4o") == "gpt-4o" and csv_safe("a=b") == "a=b"


def test_summary_table_csv_quotes_hostile_text_and_keeps_numbers():
    from tauk.table import SummaryTable

    t = SummaryTable("t", ["agent", "x"], [[HOSTILE[2], -0.5], [HOSTILE[0], 1.0]])
    rows = list(csv.reader(io.StringIO(t.to_csv())))
    assert rows[1] == ["'-2+3", "-0.5"] and rows[2][0] == "'" + HOSTILE[0]
    _assert_inert(t.to_csv())


def test_every_csv_the_command_line_writes_is_inert(tmp_path, capsys):
    folder = _hostile_copy(tmp_path)
    for args in (["summary", str(folder), "--by", "agent,domain", "--ci", "0"],
                 ["consistency", str(folder)],
                 ["compare", str(folder), "--a", HOSTILE[0], "--b", HOSTILE[3]]):  # fmt: skip
        assert main([*args, "--format", "csv"]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        if args[0] != "compare":  # compare's CSV names setups, not agents
            assert {"'" + HOSTILE[0], "'" + HOSTILE[3]} <= set(_cells(out)), args
        _assert_inert(out)


def test_the_report_csvs_are_inert(tmp_path):
    folder = _hostile_copy(tmp_path, "*_airline.json")
    out = tmp_path / "report"
    paths = write_report(tauk.load(folder), out, formats=("png",), resamples=99)
    csvs = [p for p in paths if str(p).endswith(".csv")]
    assert csvs
    seen = False
    for p in csvs:
        text = p.read_text(encoding="utf-8")
        seen |= "'" + HOSTILE[0] in _cells(text)
        _assert_inert(text)
    assert seen
    shutil.rmtree(out)


def test_a_comparison_csv_names_the_agents_and_k(tmp_path, capsys):
    """The CSV of one comparison says which agent is a and which is b, and the k of pass^k — the text, Markdown and
    LaTeX carry them in the title and headers, which a CSV has not — and they are inert."""
    from tauk.stats import compare

    folder = _hostile_copy(tmp_path)
    assert main(["compare", str(folder), "--a", HOSTILE[0], "--b", HOSTILE[3], "--k", "2", "--format", "csv",
                 "--resamples", "99"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and all((r["agent_a"], r["agent_b"], r["k"]) == ("'" + HOSTILE[0], "'" + HOSTILE[3], "2") for r in rows)
    _assert_inert(out)
    table = compare(tauk.load(SAMPLE), a="atlas-large", b="baseline", resamples=99).summary()
    rec = table.records()[0]
    assert (rec["agent_a"], rec["agent_b"], rec["k"]) == ("atlas-large", "baseline", 1)
    assert "agent_a" not in table.to_text() and "agent_a" not in table.to_markdown()  # the title says it there


def test_the_scores_csv_is_inert(tmp_path, capsys):
    """``tauk score --out FILE.csv`` writes every simulation with its agent label, task id and reasons — untrusted
    text like the tables' — through the same guard; numbers stay numbers, lists stay JSON."""
    folder = _hostile_copy(tmp_path, "*_airline.json")
    out = tmp_path / "scores.csv"
    assert main(["score", str(folder), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {"'" + HOSTILE[0], "'" + HOSTILE[3]} <= {r["agent"] for r in rows}
    _assert_inert(text)
    assert all(_is_number(r["trial"]) for r in rows)


def test_the_scores_csv_keeps_the_text_it_guards(tmp_path, capsys):
    """A data export changes no text beyond the formula guard: a task id with a newline or a tab inside is written
    as it is (quoted by the CSV writer), where the display sanitiser csv_safe dropped them ("a\\nb" became "ab")."""
    folder = tmp_path / "odd"
    folder.mkdir()
    for f in SAMPLE.glob("*_airline.json"):
        doc = json.loads(f.read_text())
        for sim in doc["simulations"]:
            sim["task_id"] = f"line\nbreak\t{sim['task_id']}"
        for task in doc.get("tasks", []):
            task["id"] = f"line\nbreak\t{task['id']}"
        (folder / f.name).write_text(json.dumps(doc))
    out = tmp_path / "scores.csv"
    assert main(["score", str(folder), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
    assert rows and all(r["task_id"].startswith("line\nbreak\t") for r in rows)


def test_csv_keeps_names_that_differ_only_by_a_control_character_apart():
    """csv_safe dropped control characters, so agents 'gpt' and 'gpt<ESC>' were one name in a CSV table; they are
    shown as the terminal shows them, and a formula cannot come first."""
    from tauk.table import SummaryTable

    t = SummaryTable("t", ["agent", "x"], [["gpt", 1.0], ["gpt\x1b", 2.0], ["\x00=1+1", 3.0]])
    rows = list(csv.reader(io.StringIO(t.to_csv())))
    assert [r[0] for r in rows[1:]] == ["gpt", "gpt\\x1b", "\\x00=1+1"]
    _assert_inert(t.to_csv())

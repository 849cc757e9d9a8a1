"""The one table renderer: tables people can read, in every target, with escaping for each."""

from __future__ import annotations

import csv
import io
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest

import tauk
from tauk.cli import main
from tauk.table import Interval, SummaryTable, latex_escape, markdown_escape, terminal_safe

SAMPLE = Path(__file__).resolve().parents[1] / "data"
NASTY = ["<img src=x onerror=alert(1)> a|b", "line\nbreak\rcr ![x](http://e.vil/x.png)",
         "\x1b[31mred\x1b[0m $\\x$ 50% _ & # ~ ^ {}"]


@pytest.fixture(scope="module")
def sample():
    return tauk.load(SAMPLE)


@pytest.fixture(scope="module")
def nasty_trials(sample):
    """The sample's trials with the three agents renamed to untrusted text."""
    names = dict(zip(["atlas-large", "atlas-small", "baseline"], NASTY))
    return sample.trials.with_columns(pl.col("agent").replace(names))


def _out(capsys, argv) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


# ---- terminal ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["summary", str(SAMPLE)],
    ["summary", str(SAMPLE), "--by", "agent,domain"],
    ["compare", str(SAMPLE), "--a", "atlas-large", "--b", "atlas-small"],
    ["compare", str(SAMPLE), "--a", "atlas-large", "--b", "atlas-small", "--by", "domain"],
    ["audit", str(SAMPLE)],
])  # fmt: skip
def test_terminal_tables_fit_100_columns(capsys, argv):
    out = _out(capsys, [*argv, "--resamples", "499"] if argv[0] != "audit" else argv)
    lines = out.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)  # the notes too: they wrap
    assert "pass" in out or "mismatch" in out


def test_notes_wrap_at_the_width_unless_wide():
    note = "a note " * 30 + "http://example.org/a-very-long-address-that-is-one-word"
    t = SummaryTable.build("t", ["agent", "x"], [["a", 1.0]], notes=[note])
    lines = t.to_text(width=60).splitlines()
    wrapped = lines[lines.index(next(ln for ln in lines if ln.startswith("* "))):]
    assert len(wrapped) > 1 and all(ln.startswith("  ") for ln in wrapped[1:])
    assert max(map(len, wrapped[:-1])) <= 60
    assert " ".join(ln.strip() for ln in wrapped) == f"* {note}".strip()  # nothing lost or reworded
    assert f"* {note}" in t.to_text(width=60, wide=True).splitlines()


def test_wide_tables_on_request(capsys):
    out = _out(capsys, ["summary", str(SAMPLE), "--wide", "--resamples", "499"])
    assert max(map(len, out.splitlines())) > 100


def test_terminal_text_has_no_control_characters(nasty_trials):
    text = tauk.stats.summarize(nasty_trials, by="agent", ci=None, pool_setups=True).summary().to_text()
    assert "\x1b" not in text and "\r" not in text
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text)
    assert "\\x1b[31m" in text  # made visible, not dropped silently
    assert terminal_safe("a\u202eb") == "a\\u202eb"



def test_terminal_columns_line_up_with_wide_and_combining_characters():
    """A terminal draws a CJK character or an emoji two columns wide and a combining accent in none: the columns
    after such a label still start at one place (measured in display columns, not code points)."""
    import unicodedata

    def cols(text: str) -> int:
        return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
                   for ch in text)  # fmt: skip

    t = SummaryTable.build("t", ["agent", "n"], [["模型-😀", 1], ["e\u0301te\u0301", 22], ["plain-ascii", 333]])
    lines = t.to_text().splitlines()[2:]
    ends = {cols(ln) for ln in lines if ln and not ln.startswith("-")}
    assert len(ends) == 1, lines  # every row (and the header) ends in the same column: numbers right-aligned
    assert cols(lines[1]) == max(map(cols, lines[:1] + lines[2:]))  # the rule is as wide as the rows


def test_a_left_out_prefix_is_shown_as_the_cells_show_it():
    """The note naming a common prefix left out shows a control character the way the cells do (``\\n``), not
    escaped twice (``\\\\n``)."""
    t = SummaryTable.build("t", ["setup", "n"], [["user\nx/" + "a" * 50, 1], ["user\nx/" + "b" * 50, 2]])
    text = t.to_text()
    assert "common prefix 'user\\nx/'" in text, text


@pytest.mark.filterwarnings("ignore:.*unknown termination reasons kept:tauk.LoadWarning")
def test_errors_and_warnings_on_stderr_have_no_control_characters(tmp_path, capsys):
    """A message naming untrusted text (an unknown termination reason listed among the choices of --termination,
    the load warning naming it, the agent labels of an error, a lenient load's report) prints it made visible."""
    import json

    doc = json.loads((SAMPLE / "baseline_airline.json").read_text())
    doc["simulations"][0]["termination_reason"] = "weird\x1b[2J\u202e reason"
    doc["info"]["agent_info"]["llm"] = "red\x1b[31m"
    (tmp_path / "baseline_airline.json").write_text(json.dumps(doc))
    (tmp_path / "broken_retail.json").write_text("{\"info\": \x1b[31m")
    for argv, status in ((["summary", str(tmp_path / "baseline_airline.json"), "--termination", "zzz"], 2),
                         (["compare", str(tmp_path / "baseline_airline.json"), "--a", "nope", "--b", "x"], 2),
                         (["summary", str(tmp_path), "--lenient", "--ci", "0"], 0)):  # fmt: skip
        assert main(argv) == status, argv
        err = capsys.readouterr().err
        assert "tauk: " in err and not re.search(r"[\x00-\x09\x0b-\x1f\x7f\u202a-\u202e]", err), (argv, err)
        assert "\\x1b" in err, (argv, err)  # shown, not dropped


def test_json_on_the_terminal_has_no_raw_control_characters(tmp_path, capsys):
    """``--format json`` is printed too: JSON escapes C0 controls itself, but C1 controls (U+009B is a terminal's
    CSI), line separators and bidi overrides went out raw; now as ``\\uXXXX`` escapes, the same JSON value."""
    import json

    name = "red\x9b31m\u202eT\u2028x"
    doc = json.loads((SAMPLE / "baseline_airline.json").read_text())
    doc["info"]["agent_info"]["llm"] = name
    (tmp_path / "baseline_airline.json").write_text(json.dumps(doc))
    assert main(["summary", str(tmp_path), "--by", "agent", "--ci", "0", "--format", "json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", out)
    assert {r["agent"] for r in json.loads(out)} == {name}  # the same value

# ---- Markdown ----------------------------------------------------------------------------------------------------
def test_markdown_cells_cannot_escape(nasty_trials):
    md = tauk.stats.summarize(nasty_trials, by="agent", ci=None, pool_setups=True).summary().to_markdown()
    rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len(rows) == 1 + 3  # header + three agents: no row broken by a newline or pipe
    assert all(len(re.findall(r"(?<!\\)\|", r)) == len(rows[0].split(" | ")) + 1 for r in rows)
    assert "<img" not in md and "](http" not in md.replace("\\](http", "")
    assert "\r" not in md and "\x1b" not in md
    assert markdown_escape("a*b_c") == "a\\*b_c"


@pytest.mark.parametrize(("name", "shown"), [
    ("cost $x_1$ and $y$", "cost \\$x_1\\$ and \\$y\\$"),  # GitHub renders $…$ as math
    ("~~old~~ ~new~", "\\~\\~old\\~\\~ \\~new\\~"),  # GitHub strikes through ~…~ and ~~…~~
    ("_draft_ __init__", "\\_draft\\_ \\_\\_init\\_\\_"),  # _ at a word's edge emphasises
    ("gpt_4o_mini p_t ~ Beta", "gpt_4o_mini p_t ~ Beta"),  # inside a word, or ~ between spaces: inert, kept
])  # fmt: skip
def test_markdown_names_are_not_math_strikethrough_or_emphasis(name, shown):
    assert markdown_escape(name) == shown
    md = SummaryTable.build("t", ["agent", "n"], [[name, 1]]).to_markdown()
    assert f"| {shown} | 1 |" in md


def test_report_markdown_escapes_agent_names(tmp_path, nasty_trials):
    from tauk.report import write_report

    write_report(nasty_trials, tmp_path, resamples=199, formats=("png",))
    for md in (tmp_path / "tables").glob("*.md"):
        text = md.read_text()
        assert "<img" not in text and "\r" not in text and "\x1b" not in text, md.name


# ---- CSV and frames --------------------------------------------------------------------------------------------
def test_csv_numbers_are_numbers_at_full_precision(capsys):
    out = _out(capsys, ["summary", str(SAMPLE), "--by", "agent", "--format", "csv", "--resamples", "499"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {"pass_hat_1", "pass_hat_1_ci_low", "pass_hat_1_ci_high", "avg_reward"} <= set(rows[0])
    for r in rows:
        lo, est, hi = (float(r[f"pass_hat_1{s}"]) for s in ("_ci_low", "", "_ci_high"))
        assert lo <= est <= hi
    numbers = [v for r in rows for k, v in r.items() if k not in ("agent", "setup", "domain") and "." in v]
    assert any(len(v.split(".")[-1]) > 4 for v in numbers)  # not rounded like the text (p = 0.0002)
    text = _out(capsys, ["summary", str(SAMPLE), "--by", "agent", "--resamples", "499"])
    assert text.count(".") and all(len(w.split(".")[-1].rstrip("],")) <= 4 for w in text.split() if w[:1].isdigit()
                                   and "." in w)  # fmt: skip
    digits2 = _out(capsys, ["summary", str(SAMPLE), "--by", "agent", "--format", "csv", "--digits", "2",
                            "--resamples", "499"])  # fmt: skip
    assert all(len(v.split(".")[-1]) <= 2 or abs(float(v)) < 0.01 for r in csv.DictReader(io.StringIO(digits2))
               for k, v in r.items() if k not in ("agent", "setup", "domain") and "." in v)  # fmt: skip


def test_table_frame_and_records():
    t = SummaryTable.build("t", ["agent", "pass^1", "n"], [["a", Interval(0.5, 0.4, 0.6), 3]],
                           fields=["agent", "pass_hat_1", "n_tasks"])  # fmt: skip
    assert t.to_frame().columns == ["agent", "pass_hat_1", "pass_hat_1_ci_low", "pass_hat_1_ci_high", "n_tasks"]
    assert t.records() == [{"agent": "a", "pass_hat_1": 0.5, "pass_hat_1_ci_low": 0.4, "pass_hat_1_ci_high": 0.6,
                            "n_tasks": 3}]  # fmt: skip


# ---- families and empty pairs --------------------------------------------------------------------------------
def test_holm_note_states_the_family_and_empty_pairs_are_a_footnote(sample):
    # two more agents that ran one domain each: pooled over domains, their pair shares no task
    solo = [
        sample.trials.filter(pl.col("agent") == "baseline", pl.col("domain") == d).with_columns(
            agent=pl.lit(f"solo-{d}"), run_id=pl.lit(f"solo-{d}")
        )
        for d in ("airline", "retail")
    ]
    mc = tauk.stats.compare_all(pl.concat([sample.trials, *solo]), resamples=199, pool_setups=True)
    table = mc.summary()
    n_p = int(mc.pairs["p_adjusted"].is_not_null().sum())
    assert (n_p, mc.pairs.height) == (9, 10)
    assert f"over the {n_p} comparison(s) with a p-value (of 10 pairs)" in table.notes[1]
    assert table.notes[0].startswith("p_value: score test")
    assert len(table.rows) == n_p  # no row for the pair without common tasks
    empty = [n for n in table.notes if "share no task" in n]
    assert len(empty) == 1 and "1 pair(s)" in empty[0] and "solo-airline vs solo-retail" in empty[0]
    assert not any("None" in n for n in table.notes)


# ---- LaTeX -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["", "twocolumn"])
def test_latex_tables_compile_and_fit_the_column(tmp_path, sample, nasty_trials, layout, pdflatex):
    exe = pdflatex
    tables = [
        tauk.stats.summarize(sample, by="run_id", resamples=199).summary(),
        tauk.stats.summarize(nasty_trials, by=("agent", "domain"), resamples=199).summary(),
        tauk.stats.compare_all(sample, by="domain", resamples=199).summary(),
        tauk.audit(sample).summary(),
    ]
    body = "\n\n".join(t.to_latex(label=f"tab:t{i}") for i, t in enumerate(tables))
    refs = " ".join(f"Table~\\ref{{tab:t{i}}}" for i in range(len(tables)))
    doc = (
        f"\\documentclass[{layout}]{{article}}\n\\usepackage[T1]{{fontenc}}\n\\usepackage{{booktabs,array,graphicx}}\n"
        f"\\begin{{document}}\n{refs}.\n\n{body}\n\\end{{document}}\n"
    )
    (tmp_path / "t.tex").write_text(doc)
    for _ in range(2):  # twice: the references resolve on the second run
        p = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
        assert p.returncode == 0, p.stdout[-3000:]
    log = (tmp_path / "t.log").read_text(errors="replace")
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)[:3]
    assert "undefined" not in log.lower() or "Reference" not in log


def test_latex_escape_covers_specials_and_newlines():
    assert latex_escape("a\nb") == "a b"
    assert latex_escape("<x>|") == r"\textless{}x\textgreater{}\textbar{}"


def test_text_labels_keep_what_differs_never_cut_in_the_middle():
    long_a = "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm-telecom-solo"
    long_b = "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm-telecom-normal"
    t = SummaryTable.build("t", ["agent", "n"], [[long_a, 1], [long_b, 2], ["gpt-4.1", 3]])
    text = t.to_text()
    assert "…" not in text
    rows = [ln.split()[0] for ln in text.splitlines()[4:7]]
    assert rows[2] == "gpt-4.1" and rows[0] != rows[1]  # the two fine-tuned runs stay apart
    assert f"= {long_a}" in text.replace("\n  ", " ") and f"= {long_b}" in text.replace("\n  ", " ")
    # a shared prefix is left out (and said so) before any key is needed
    paths = SummaryTable.build("t", ["run", "n"], [["results/2025/run-solo/x.json", 1],
                                                   ["results/2025/run-normal/x.json", 2]])  # fmt: skip
    out = paths.to_text(max_label=12)
    assert "run-solo" in out and "run-normal" in out and "common prefix 'results/2025/'" in out


UNICODE_NAMES = ["模型-ü-😀", "Ελληνικά", "модель", "ąę «x»", "e\u0301té", "ok-ASCII"]


def test_latex_tables_compile_whatever_the_script_of_a_name(tmp_path, pdflatex):
    """Names in any script (CJK, emoji, Cyrillic, Greek, T1-only letters, a combining accent) compile in a stock
    ``article`` (OT1, pdflatex's utf8): what it cannot typeset is shown as its code point, never passed raw."""
    from conftest import compile_latex_tables
    from tauk.table import LATEX_WIDTH_PT
    from tauk.table._format import _PDFLATEX_TEXT

    passed = "".join(chr(c) for c in range(0x20, 0x2500) if _PDFLATEX_TEXT.match(chr(c)))  # every one kept raw
    t = SummaryTable.build("pass^1 of 模型", ["agent", "n"], [[n, i] for i, n in enumerate(UNICODE_NAMES)],
                           notes=["note on модель 😀", " ".join(passed[i:i + 20] for i in range(0, len(passed), 20))],
                           label="tab:unicode")  # fmt: skip
    tex = tmp_path / "unicode.tex"
    tex.write_text(t.to_latex(), encoding="utf-8")
    assert compile_latex_tables(pdflatex, [tex], tmp_path, LATEX_WIDTH_PT) == []
    text = tex.read_text(encoding="utf-8")
    assert "U+6A21" in text and "U+1F600" in text and "ü" in text and "ok-ASCII" in text
    assert latex_escape("é ü ß – —") == "é ü ß – —"  # what pdflatex typesets stays as it is



def test_a_caption_of_long_model_names_breaks_after_their_separators(tmp_path, pdflatex):
    """A comparison's caption names both agents; names joined by "_" or ":" (no space, no hyphen) broke nowhere and
    stuck out of the column."""
    from conftest import compile_latex_tables
    from tauk.table import LATEX_WIDTH_PT

    a, b = "claude_3_5_sonnet_20241022_with_tools_v2", "my_org/qwen2_5_72b_instruct_tau2_sft_retail"
    t = SummaryTable.build(f"{a} vs {b}", ["setup", "n"], [["airline", 1]], label="tab:long")
    tex = tmp_path / "long.tex"
    tex.write_text(t.to_latex(), encoding="utf-8")
    assert compile_latex_tables(pdflatex, [tex], tmp_path, LATEX_WIDTH_PT) == []
    assert "\\allowbreak" not in SummaryTable.build("pass^k summary", ["x"], [[1]]).to_latex()  # as before

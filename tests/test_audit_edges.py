"""Edges found by an adversarial audit of the public statistics API and the command line: plausible but bad
options that raised a raw traceback (Polars, NumPy, Python's format) instead of one line naming what was wrong,
numbers shown without the note that makes them readable, and figures or profiles that pooled setups silently."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from stats.frames import make_trials

import tauk
from tauk.cli import main
from tauk.errors import TaukError

SAMPLE = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def sample():
    return tauk.load(SAMPLE)


# ---- bad options: one line, not a traceback ---------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda r: tauk.stats.summarize(r, by=("agent", "agent"), ci=None),
    lambda r: tauk.stats.compare_all(r, by=["domain", "domain"]),
    lambda r: tauk.stats.reliability(r, by=["agent", "agent"], trajectory=False),
    lambda r: tauk.stats.deviation_profile(r, by=["agent", "agent"]),
])  # fmt: skip
def test_a_column_named_twice_in_by_is_one_clear_error(sample, call):
    """``by=("agent", "agent")`` (``--by agent,agent``) raised Polars' DuplicateError from inside a grouping."""
    with pytest.raises(TaukError, match="'agent'|'domain'"):
        call(sample)


def test_a_negative_seed_is_one_clear_error(sample):
    """``seed=-5`` (``--seed -5``) raised NumPy's "expected non-negative integer" from inside the bootstrap."""
    with pytest.raises(TaukError, match="seed"):
        tauk.stats.summarize(sample, by="agent", seed=-5)


@pytest.mark.parametrize("argv", [
    ["summary", str(SAMPLE), "--by", "agent,agent"],
    ["summary", str(SAMPLE), "--seed", "-5"],
    ["summary", str(SAMPLE), "--by", "agent", "--ci", "0", "--digits", "0"],
    ["summary", str(SAMPLE), "--by", "agent", "--ci", "0", "--digits", "-1", "--format", "csv"],
    ["consistency", str(SAMPLE), "--flaky", "-1"],
])  # fmt: skip
def test_bad_options_on_the_command_line_are_one_line(capsys, argv):
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tauk: error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_power_analysis_refuses_zero_trials_per_task(sample):
    """``trials_per_task=(0,)`` divided by zero inside the variance model (a raw ZeroDivisionError)."""
    c = tauk.stats.compare(sample, "atlas-large", "atlas-small", resamples=199)
    with pytest.raises(TaukError, match="trials_per_task"):
        tauk.stats.power_analysis(c, delta=0.1, trials_per_task=(0, 4))


# ---- setups are not pooled silently -----------------------------------------------------------------------------
def _two_setups_of_one_domain() -> pl.DataFrame:
    """Agent A ran the airline tasks under two user models (two setups): always passing under one, never under the
    other; B ran them once."""
    rows = []
    for agent, setup, reward in (("A", "airline/u1", 1.0), ("A", "airline/u2", 0.0), ("B", "airline/u1", 0.5)):
        for t in range(6):
            for i in range(2):
                r = reward if reward != 0.5 else float((t + i) % 2)
                rows.append({"run_id": f"{agent}-{setup}", "agent": agent, "task_id": t, "trial": i, "reward": r,
                             "setup": setup})  # fmt: skip
    setups = [r.pop("setup") for r in rows]
    return make_trials(rows).with_columns(setup=pl.Series(setups))


def test_success_heatmap_gives_each_setup_its_own_column():
    """An agent with two setups of one domain had one cell per task, overwritten by whichever setup came last (here
    A showed 0 or 1 everywhere for a task it passed always under one setup and never under the other)."""
    fig = tauk.plot.success_heatmap(_two_setups_of_one_domain())
    m = fig.axes[0].images[0].get_array()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert m.shape == (6, 3), labels
    cols = {lab: m[:, j].tolist() for j, lab in enumerate(labels)}
    assert sorted(tuple(set(v)) for lab, v in cols.items() if lab.startswith("A")) == [(0.0,), (1.0,)]
    caption = " ".join(t.get_text() for t in fig.texts).replace("\n", " ")
    assert "One column per setup for A" in caption and "u1" in caption and "u2" in caption


@pytest.fixture(scope="module")
def two_user_models(tmp_path_factory):
    """Agent A run on the same airline tasks under two user models (two setups), B under one: real files."""
    import json

    from tauk.synth import write_results

    root = tmp_path_factory.mktemp("two_setups")
    write_results(root / "u1", agents={"A": 0.9, "B": 0.5}, domains=("airline",), n_tasks=12, n_trials=3, seed=1)
    (p,) = write_results(root / "u2", agents={"A": 0.2}, domains=("airline",), n_tasks=12, n_trials=3, seed=2)
    doc = json.loads(p.read_text())
    doc["info"]["user_info"]["llm"] = "other-user-model"
    p.write_text(json.dumps(doc))
    return tauk.load({"A1": root / "u1" / "A_airline.json", "B1": root / "u1" / "B_airline.json",
                      "A2": p}, agent={"A1": "A", "B1": "B", "A2": "A"})  # fmt: skip


def test_deviation_profile_does_not_pool_setups(two_user_models):
    """deviation_profile pooled an agent's two setups (two user models) into one success rate per bin, silently;
    every other statistic reports them per setup unless pool_setups=True."""
    prof = tauk.stats.deviation_profile(two_user_models)
    assert prof.by == ("agent", "domain", "setup")
    a = prof.by_count.filter(agent="A")
    assert a["setup"].n_unique() == 2
    assert any("grouped by setup too" in n for n in prof.summary().notes)
    pooled = tauk.stats.deviation_profile(two_user_models, pool_setups=True)
    assert pooled.by == ("agent", "domain") and not any("grouped by setup" in n for n in pooled.summary().notes)
    assert pooled.by_count.filter(agent="A")["trials"].sum() == a["trials"].sum()  # the same trials, split or not
    one = tauk.stats.deviation_profile(two_user_models.filter(agent="B"))
    assert one.by == ("agent", "domain")  # one setup: nothing added


def test_wilson_ends_are_exact_at_zero_and_all():
    """At 0 successes the lower end printed as 2.78e-17 (and at n the upper as 1 − 1e-16): centre − half in
    floating point."""
    from tauk.stats.deviation_profile import clustered_wilson, wilson
    from tauk.stats.reliability.estimators import wilson_outcome_interval

    for n in (3, 6, 9, 45 / 6, 12):
        assert wilson(0, n, 0.95)[0] == 0.0 and wilson(n, n, 0.95)[1] == 1.0
    assert clustered_wilson(np.zeros(3), np.full(3, 3.0), 0.95)[1] == 0.0
    assert wilson_outcome_interval(np.ones(7), 0.95)[3] == 1.0
    assert wilson_outcome_interval(-np.ones(7), 0.95)[2] == -1.0


# ---- numbers with the note that makes them readable -------------------------------------------------------------
@pytest.mark.parametrize("missing", [None, float("nan")])
def test_a_summary_says_when_some_simulations_have_no_reward(missing):
    """Kept simulations without a reward count as failed trials in pass^k (τ²-bench's rule) but are left out of
    avg_reward: the two figures rested on different trials with nothing in the table saying so (here pass^1 0.5
    beside avg_reward 0.67 for 5 unrewarded of 20)."""
    rows = [{"task_id": t, "trial": i, "reward": (missing if (t % 2 == 0 and i == 1) else float(i == 0 or t % 2))}
            for t in range(10) for i in range(2)]  # fmt: skip
    s = tauk.stats.summarize(make_trials(rows), by="agent", ci=None)
    g = s.groups.row(0, named=True)
    assert (g["n_simulations"], g["n_evaluated"]) == (20, 15)
    notes = [n for n in s.summary().notes if "have no reward" in n]
    assert notes == ["a: 5 of 20 simulation(s) kept have no reward: pass^k counts them as failed trials (τ²-bench's "
                     "rule), avg_reward leaves them out"]  # fmt: skip
    full = make_trials([{**r, "reward": 0.0 if r["reward"] is None or r["reward"] != r["reward"] else r["reward"]}
                        for r in rows])  # fmt: skip
    assert not [n for n in tauk.stats.summarize(full, by="agent", ci=None).summary().notes if "have no reward" in n]


def test_reliability_names_zero_width_and_missing_intervals():
    """Every task passed on all of its trials: outcome consistency printed as 1.000 [1.000, 1.000], a point
    interval with no note; with one task, an estimate without an interval and no word why."""
    all_pass = make_trials([{"task_id": t, "trial": i, "reward": 1.0} for t in range(10) for i in range(4)])
    table = tauk.stats.reliability(all_pass, trajectory=False).summary()
    assert "1.000 [1.000, 1.000]" in table.to_text()
    point = [n for n in table.notes if n.startswith("zero-width interval")]
    assert len(point) == 1 and "a · airline outcome consistency (U)" in point[0]
    one = make_trials([{"task_id": 0, "trial": i, "reward": float(i % 2)} for i in range(4)])
    notes = tauk.stats.reliability(one, trajectory=False).summary().notes
    assert any(n.startswith("no interval") and "outcome consistency (U)" in n for n in notes)
    mixed = make_trials([{"task_id": t, "trial": i, "reward": float((t + i) % 3 == 0)} for t in range(10)
                         for i in range(4)])  # fmt: skip
    assert not [n for n in tauk.stats.reliability(mixed, trajectory=False).summary().notes
                if n.startswith(("zero-width", "no interval"))]  # fmt: skip


def test_forest_says_its_intervals_are_not_adjusted_where_they_disagree_with_the_fill(tmp_path):
    """compare_all's forest fills a marker by the adjusted p but draws each pair's own interval: an interval clear of
    0 beside a hollow marker (p 0.044, Holm-adjusted 0.13) had no word saying the two answer different questions."""
    from tauk.synth import write_results

    write_results(tmp_path, agents={"a": 0.75, "b": 0.6, "c": 0.45}, domains=("airline",), n_tasks=12, n_trials=3,
                  seed=7)  # fmt: skip
    mc = tauk.stats.compare_all(tauk.load(tmp_path), resamples=199)
    p = mc.pairs
    apart = p.filter(((pl.col("ci_low") > 0) | (pl.col("ci_high") < 0)) & (pl.col("p_adjusted") >= 0.05)).height
    assert apart == 1  # this seed's data have one such pair
    caption = " ".join(t.get_text() for t in tauk.plot.forest(mc).texts).replace("\n", " ")
    assert "1 of them exclude 0 while the Holm-adjusted p is ≥ 0.05" in caption
    single = tauk.stats.compare(tauk.load(tmp_path), "a", "c", resamples=199)  # one pair: p and interval agree
    assert "not adjusted" not in " ".join(t.get_text() for t in tauk.plot.forest(single).texts)


def test_compare_all_takes_each_agent_once(sample):
    """compare_all(agents=[x, x, y]) put x − x and x − y twice into the Holm family (p-values adjusted over 3 pairs
    instead of 1); agents="x" was read as the agents 'x'-letters ("agent value(s) ['b', 'a', 's', …] not found")."""
    with pytest.raises(TaukError, match="more than once"):
        tauk.stats.compare_all(sample, agents=["baseline", "baseline", "atlas-large"])
    with pytest.raises(TaukError, match="list of agent values"):
        tauk.stats.compare_all(sample, agents="baseline")


# ---- untrusted text in HTML -------------------------------------------------------------------------------------
def test_html_shows_control_characters_as_the_terminal_does(tmp_path):
    """A task id "t\\r8" was written raw into the page (HTML reads a lone CR as a line break: it showed "t 8"), an
    agent name's ANSI colour code too (shown as nothing): names that differ only there looked alike. Now shown as
    ``\\r`` / ``\\x1b`` like the bidi overrides already were; newlines and tabs of message texts stay."""
    from tauk.table import html_escape

    assert html_escape("t\r8 \x1b[31mred") == "t\\r8 \\x1b[31mred"
    assert html_escape("line\nnext\ttab\r\nwindows") == "line\nnext\ttab\r\nwindows"
    trials = make_trials([{"task_id": "t\r8", "trial": i, "reward": float(i % 2), "agent": "red\x1b[31m"}
                          for i in range(2)])  # fmt: skip
    page = tauk.stats.summarize(trials, by=("agent", "task_id"), ci=None).summary().to_html()
    assert "\x1b" not in page and "\r" not in page
    assert "red\\x1b[31m" in page and "t\\r8" in page


def test_flaky_tasks_of_no_trials_is_one_clear_error():
    """An empty trials frame (a filter that kept nothing) raised ZeroDivisionError from the panel layout."""
    empty = make_trials([{"task_id": 0, "reward": 1.0}]).clear()
    with pytest.raises(TaukError, match="no group"):
        tauk.plot.flaky_tasks(tauk.stats.consistency(empty))


def test_p_value_tools_refuse_what_would_give_a_wrong_p(sample):
    """sign_flip_pvalue([0.1, nan]) returned p = 0 ("exact"): the NaN fell out of every comparison; holm([1.5, -0.1])
    returned [1, -0.2], a negative adjusted p; permutations=0 gave p = 1 whatever the data, -1 a ZeroDivisionError."""
    with pytest.raises(TaukError, match="finite"):
        tauk.stats.sign_flip_pvalue(np.array([0.1, np.nan]))
    with pytest.raises(TaukError, match=r"\[0, 1\]"):
        tauk.stats.holm([1.5, -0.1])
    with pytest.raises(TaukError, match=r"\[0, 1\]"):
        tauk.stats.adjust_pvalues([0.2, 2.0], adjust="bh")
    assert tauk.stats.holm([0.01, np.nan, 1 + 1e-12]).tolist()[0] == pytest.approx(0.02)  # rounding is not an error
    d = np.random.default_rng(0).random(30) - 0.2  # no lattice: the Monte Carlo branch
    for bad in (0, -1):
        with pytest.raises(TaukError, match="permutations"):
            tauk.stats.sign_flip_pvalue(d, permutations=bad, exact_max=10)
        with pytest.raises(TaukError, match="permutations"):
            tauk.stats.compare(sample, "atlas-large", "baseline", permutations=bad)


def test_a_level_must_be_a_number_in_0_1(sample):
    """ci="0.95" (a string, as a config file gives it) raised a raw TypeError from a comparison; deviation_profile
    took ci=2 and printed NaN intervals (a normal quantile of 1.5)."""
    with pytest.raises(TaukError, match="level"):
        tauk.stats.summarize(sample, ci="0.95")
    with pytest.raises(TaukError, match="level"):
        tauk.stats.deviation_profile(sample, ci=2)
    assert tauk.stats.deviation_profile(sample, ci=0.9).ci == 0.9



@pytest.mark.parametrize("argv", [["--failed"], ["--passed"], ["--termination", "user_stop"]])
def test_an_outcome_filter_says_its_dropped_trials_are_the_filters(capsys, argv):
    """``tauk summary --failed`` counted the passed simulations it left out as dropped trials: kept/planned 0.38
    ⚠ low, a "pass^1 if dropped=success" bound, and a note blaming "infrastructure errors or missing trial indices"
    for them."""
    assert main(["summary", str(SAMPLE), "--by", "agent", "--resamples", "199", "--quiet", *argv]) == 0
    out = capsys.readouterr().out.replace("\n  ", " ")
    assert "count the simulations this filter left out as dropped trials" in out
    assert main(["summary", str(SAMPLE), "--by", "agent", "--resamples", "199", "--quiet", "--task", "1,2"]) == 0
    assert "this filter left out" not in capsys.readouterr().out  # whole tasks: nothing dropped within one


def test_per_agent_bars_say_when_they_pool_setups_of_one_domain(two_user_models, sample):
    """failure_breakdown's "failed / all trials" (37/72) and termination_reasons pooled an agent's two user models on
    the same tasks (8 and 29 of 36 failed) into one bar with nothing saying so. A caption names such bars; the
    per-agent bars of the sample, which span domains, are unchanged."""
    for fig in (tauk.plot.failure_breakdown(tauk.score(two_user_models)), tauk.plot.termination_reasons(two_user_models)):
        caption = " ".join(t.get_text() for t in fig.texts).replace("\n", " ")
        assert "A bar pools setups" in caption and "A (2 setups of one domain)" in caption and "B (" not in caption
    for fig in (tauk.plot.failure_breakdown(tauk.score(sample)), tauk.plot.termination_reasons(sample)):
        assert "pools setups" not in " ".join(t.get_text() for t in fig.texts)


def test_markdown_shows_control_characters_instead_of_dropping_them():
    """Markdown dropped ESC and bidi overrides (and tabs, gluing words): agents "gpt" and "gpt<ESC>" showed as two
    identical rows, where the terminal and HTML show ``\\x1b``. Now shown the same way; line breaks and tabs fold to
    a space; a table row still has one cell per column."""
    from tauk.table import SummaryTable, markdown_escape

    assert markdown_escape("gpt\x1b") != markdown_escape("gpt")
    assert markdown_escape("gpt\x1b[31m") == "gpt\\\\x1b\\[31m"  # renders as gpt\x1b[31m
    assert markdown_escape("a\u202eb") == "a\\\\u202eb"
    assert markdown_escape("a\r\nb\tc") == "a b c"
    md = SummaryTable.build("t", ["agent", "n"], [["gpt", 1], ["gpt\x1b", 2], ["x|\t\u202ey", 3]]).to_markdown()
    rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len(rows) == 4 and len({r for r in rows[1:]}) == 3
    assert all(len(re.findall(r"(?<!\\)\|", r)) == 3 for r in rows)
    assert not re.search(r"[\x00-\x1f\u202a-\u202e]", md.replace("\n", ""))


def test_latex_shows_control_characters_as_code_points(tmp_path, pdflatex):
    """LaTeX dropped ESC and bidi overrides ("gpt" and "gpt<ESC>" were two identical rows) and tabs (gluing words);
    now a control character is shown as its code point, as a character pdflatex cannot typeset already was, and a
    tab is a space. The table still compiles."""
    from conftest import compile_latex_tables
    from tauk.table import LATEX_WIDTH_PT, SummaryTable, latex_escape

    assert latex_escape("gpt\x1b") == r"gpt\texttt{U+001B}" != latex_escape("gpt")
    assert latex_escape("a\u202eb") == r"a\texttt{U+202E}b"
    assert latex_escape("a\tb\u2028c") == "a b c"
    names = ["gpt", "gpt\x1b[31m", "=cmd|\x1b[31mred\r\u202eevil_%&#${}~^\\", "a\tb\x85d\x00e\x7f", "[x] \x1b"]
    t = SummaryTable.build("pass of gpt\x1b", ["agent", "n"], [[n, i] for i, n in enumerate(names)],
                           notes=["note \x1b \u202e"], label="tab:controls")  # fmt: skip
    tex = tmp_path / "controls.tex"
    tex.write_text(t.to_latex(), encoding="utf-8")
    assert compile_latex_tables(pdflatex, [tex], tmp_path, LATEX_WIDTH_PT) == []


def test_a_command_on_nothing_says_so(tmp_path, capsys):
    """An ingest that found no results file leaves an empty store; every command then printed an empty table (or
    []) and exit 0 — so did a lenient load whose every file was skipped. Now one line, exit 2."""
    (tmp_path / "empty").mkdir()
    assert main(["ingest", str(tmp_path / "empty"), "--store", str(tmp_path / "none")]) == 2
    assert not (tmp_path / "none").exists()  # a failed first ingest leaves no store behind
    (tmp_path / "bad.json").write_text('{"bad')
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bad.json").write_text('{"bad')
    assert main(["ingest", str(tmp_path / "in"), "--store", str(tmp_path / "st"), "--lenient"]) == 0  # every file skipped
    capsys.readouterr()
    for argv in (["summary", str(tmp_path / "st")], ["summary", str(tmp_path / "st"), "--format", "json"],
                 ["consistency", str(tmp_path / "st")], ["summary", str(tmp_path / "bad.json"), "--lenient"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.splitlines()[-1].startswith("tauk: error: ") and "no run to analyse" in err, err

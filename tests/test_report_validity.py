"""The report's task-validity section and the figure of pass^k on all beside the substantive tasks (issue 25)."""

from __future__ import annotations

import warnings

import polars as pl

import tauk
from tauk.report_sections import definitions_table, substantive_table, validity_section

WHISSLE = "tau2/v1.0_whissle_airline_1trial.json"
WRAPPER = "nonconformant/adaptive-agent_airline_wrapper_infra-error.json"


def _load(shared_data, *names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tauk.load([shared_data / n for n in names], strict=False, progress=False)


def test_definitions_table_on_shared_runs(shared_data):
    res = _load(shared_data, WHISSLE, WRAPPER)
    t = definitions_table(res)
    rows = {r[1] == "none": dict(zip(t.fields, r)) for r in t.rows}
    head = rows[False]
    # the head airline task file's audit: 23 of 50 inaction-passable, a do-nothing agent's pass^1 0.46
    bound = tauk.tasks.validity(shared_data / "tasks" / "head_airline_tasks.json").bounds.filter(pl.col("split").is_null())
    assert (head["n_tasks"], head["n_inaction_passable"]) == tuple(bound.select("n_tasks", "n_inaction_passable").row(0))
    assert head["do_nothing_pass1"] == bound["do_nothing_pass1"].item() == 0.46
    assert head["n_runs"] == 1 and head["definitions"].startswith("#")
    none = rows[True]
    assert none["n_runs"] == 1 and none["n_tasks"] is None and "adaptive-agent" in none["first_run"]


def test_runs_with_the_same_definitions_share_a_row(shared_data):
    res = _load(shared_data, "tau2/v0.1_gpt-4.1_airline-test_1trial.json", "tau2/v0.1_ft-gpt-4.1_airline-test_1trial.json",
                WHISSLE)  # fmt: skip
    t = definitions_table(res)
    assert sorted(r[2] for r in t.rows) == [1, 2]  # the two v0.1 test runs embed the same 20 tasks


def test_section_tables_markdown_and_what_it_skips(shared_data):
    res = _load(shared_data, WHISSLE, WRAPPER)
    s = tauk.stats.summarize(res, by=("agent", "domain"), resamples=199)
    sec = validity_section(res, s)
    assert [n for n, _, _ in sec.tables] == ["task_validity", "substantive"] and not sec.skipped
    md = "\n".join(sec.markdown)
    assert "## Task validity" in md and "23 of 50 tasks inaction-passable" in md and "0.46" in md
    assert "without task definitions" in md
    sub = substantive_table(s)
    row = {r[0]: dict(zip(sub.fields, r)) for r in sub.rows}["whissle"]
    assert row["n_tasks_inaction_passable"] == 23 and row["substantive_n_tasks"] == 27
    # a trials frame: no definitions, both tables skipped with the reason
    bare = tauk.stats.summarize(res.trials, by=("agent", "domain"), ci=None)
    sec = validity_section(res.trials, bare)
    assert not sec.tables and {n for n, _ in sec.skipped} == {"task_validity", "substantive"}


def test_substantive_figure_draws_both_and_the_bound():
    s = tauk.stats.summarize(tauk.load("data"), by=("agent", "domain"), resamples=199)
    fig = tauk.plot.substantive_estimates(s)
    ax = fig.axes[0]
    assert len(ax.get_yticklabels()) == 6
    # per group: an error bar for all and for substantive (each a Line2D marker), and the do-nothing ×
    markers = [ln.get_marker() for ln in ax.lines]
    assert markers.count("o") == 6 and markers.count("s") == 6 and markers.count("x") == 6
    xs = sorted(round(float(ln.get_xdata()[0]), 4) for ln in ax.lines if ln.get_marker() == "x")
    assert xs == [0.08] * 3 + [0.12] * 3  # 2 / 25 airline, 3 / 25 retail
    none = tauk.stats.summarize(tauk.load("data").trials, by=("agent", "domain"), ci=None)
    fig = tauk.plot.substantive_estimates(none)
    markers = [ln.get_marker() for ln in fig.axes[0].lines]
    assert markers.count("s") == 0 and markers.count("x") == 0 and "not known" in fig.axes[0].get_yticklabels()[0].get_text()

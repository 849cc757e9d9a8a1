"""Every summary row carries the substantive figures (issue 25): ``n_tasks_inaction_passable``, pass^k on the
substantive tasks with its own interval, the share of successes on inaction-passable tasks — checked on the shared
files against figures computed without tauk's statistics (the raw JSON's rewards, the shared task files' audit)."""

from __future__ import annotations

import json
import warnings

import polars as pl
import pytest

import tauk
from tauk.stats.estimate import LONG_SCHEMA
from tauk.stats.substantive import GROUP_FIELDS, NO_DEFINITIONS, SUBSTANTIVE_FIELDS

WHISSLE = "tau2/v1.0_whissle_airline_1trial.json"  # a v1.0 file embedding head airline's 50 tasks
QWEN = "tau2/v0.1_qwen2.5-7b_airline_1trial_premature-endings.json"  # v0.1: v0.1.0 airline's tasks
TB = "taubench/gpt-4o_airline_4trials.json"  # τ-bench: each record carries its task (actions, outputs)
WRAPPER = "nonconformant/adaptive-agent_airline_wrapper_infra-error.json"  # no task definitions
TELECOM = "tau2/v0.1_gpt-4.1_telecom-solo_5tasks_4trials.json"  # ENV assertions: some verdicts unknown


def _raw_rates(path) -> dict[str, tuple[int, int]]:
    """(successes, trials) per task from the file itself (plain json, reward 1 = success)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[int]] = {}
    for s in data["simulations"]:
        r = (s.get("reward_info") or {}).get("reward")
        ok = r is not None and abs(r - 1.0) <= 1e-6
        c = out.setdefault(str(s["task_id"]), [0, 0])
        c[0] += ok
        c[1] += 1
    return {t: (c, n) for t, (c, n) in out.items()}


def _passable(task_file) -> set[str]:
    v = tauk.tasks.validity(task_file).tasks
    return set(v.filter(pl.col("inaction_passable") == True)["task_id"].to_list())  # noqa: E712


@pytest.mark.parametrize(("name", "task_file"), [(WHISSLE, "head_airline_tasks.json"),
                                                 (QWEN, "v0.1.0_airline_tasks.json")])  # fmt: skip
def test_figures_equal_an_independent_count_on_shared_files(shared_data, name, task_file):
    path = shared_data / name
    s = tauk.stats.summarize(tauk.load(path), resamples=199)
    g = s.records()[0]
    rates = _raw_rates(path)
    ip = _passable(shared_data / "tasks" / task_file) & set(rates)  # the task version's audit, not the file's
    assert ip, "the test means something: the run has inaction-passable tasks"
    assert g["task_definitions"] == "embedded"
    assert g["n_tasks_inaction_passable"] == len(ip)
    assert g["n_tasks_substantive"] == len(rates) - len(ip) and g["n_tasks_inaction_unknown"] == 0
    # tauk.tasks' own marks for the run agree too
    m = tauk.tasks.inaction_marks(tauk.load(path))
    assert int(m["inaction_passable"].sum()) == len(ip)
    sub = [c / n for t, (c, n) in rates.items() if t not in ip]
    p1 = g["pass_hat_k"]["1"]
    assert p1["substantive"]["n_tasks"] == len(sub)
    assert p1["substantive"]["estimate"] == pytest.approx(sum(sub) / len(sub), abs=1e-12)
    assert p1["estimate"] == pytest.approx(sum(c / n for c, n in rates.values()) / len(rates), abs=1e-12)
    assert p1["substantive"]["estimate"] != p1["estimate"]  # the figures differ on these files
    succ = sum(c for c, _ in rates.values())
    assert g["share_successes_inaction_passable"] == pytest.approx(sum(rates[t][0] for t in ip) / succ, abs=1e-12)
    lo, hi = p1["substantive"]["ci_low"], p1["substantive"]["ci_high"]
    assert lo is not None and lo <= p1["substantive"]["estimate"] <= hi


def test_substantive_interval_is_pass_hat_k_on_the_substantive_trials(shared_data):
    """Same estimator, same options: the figures equal pass_hat_k on the trials of the substantive tasks."""
    res = tauk.load(shared_data / TB)
    s = tauk.stats.summarize(res, k=[1, 2], resamples=199, seed=5)
    marks = tauk.tasks.inaction_marks(res)
    trials = res.trials.join(marks, on=["run_id", "task_id"]).filter(pl.col("substantive"))
    direct = tauk.stats.pass_hat_k(trials, by="run_id", k=[1, 2], resamples=199, seed=5).to_frame()
    mine = s.pass_hat_k.select("k", *(pl.col(f"substantive_{f}").alias(f) for f in SUBSTANTIVE_FIELDS))
    assert mine.sort("k").equals(direct.select(mine.columns).sort("k"))
    assert s.groups["n_tasks_inaction_passable"].item() == int(marks["inaction_passable"].sum()) == 19


def test_pass_hat_k_on_all_is_unchanged(shared_data):
    res = tauk.load([shared_data / WHISSLE, shared_data / QWEN])
    with_marks = tauk.stats.summarize(res, by="agent", resamples=199)
    without = tauk.stats.summarize(res, by="agent", resamples=199, marks=False)
    cols = [c for c in without.pass_hat_k.columns if not c.startswith("substantive_")]
    assert with_marks.pass_hat_k.select(cols).equals(without.pass_hat_k.select(cols))
    assert without.groups["task_definitions"].to_list() == ["not computed"] * 2
    assert without.pass_hat_k["substantive_estimate"].null_count() == without.pass_hat_k.height


def test_no_definitions_null_with_a_note_never_guessed(shared_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tauk.load(shared_data / WRAPPER, strict=False)
    s = tauk.stats.summarize(res, resamples=199)
    g = s.records()[0]
    assert g["task_definitions"] == "none"
    for f in ("n_tasks_inaction_passable", "n_tasks_substantive", "share_successes_inaction_passable"):
        assert g[f] is None
    assert g["pass_hat_k"]["1"]["estimate"] is not None and g["pass_hat_k"]["1"]["substantive"]["estimate"] is None
    assert any(NO_DEFINITIONS in n for n in s.summary().notes)
    # a bare trials frame carries no definitions either
    t = tauk.stats.summarize(tauk.load(shared_data / WHISSLE).trials, ci=None)
    assert t.groups["task_definitions"].to_list() == ["none"]
    # … but marks can be given: the run's marks against a task file
    marks = tauk.tasks.inaction_marks(res, tasks=shared_data / "tasks" / "head_airline_tasks.json")
    given = tauk.stats.summarize(res, ci=None, marks=marks).records()[0]
    assert given["task_definitions"] == "given"
    assert given["n_tasks_inaction_passable"] == int(marks["inaction_passable"].sum()) > 0


def test_unknown_verdicts_are_left_out_and_counted(shared_data):
    res = tauk.load(shared_data / TELECOM)
    s = tauk.stats.summarize(res, ci=None)
    g = s.records()[0]
    marks = tauk.tasks.inaction_marks(res)
    assert g["n_tasks_inaction_unknown"] == marks["inaction_passable"].null_count() > 0
    assert g["n_tasks_inaction_passable"] + g["n_tasks_inaction_unknown"] + g["n_tasks_substantive"] == g["n_tasks"]
    assert g["pass_hat_k"]["1"]["substantive"]["n_tasks"] == g["n_tasks_substantive"]
    assert any("cannot be told" in n for n in s.summary().notes)


def test_counts_with_marks_give_the_figures_of_the_trials():
    res = tauk.load("data")
    marks = tauk.tasks.inaction_marks(res)
    a = tauk.stats.summarize(tauk.stats.task_counts(res), by=("agent", "domain"), resamples=199, marks=marks)
    b = tauk.stats.summarize(res, by=("agent", "domain"), resamples=199, run_effects="report")
    dep = ("se_run", "se_cluster", "adjusted_for")  # counts carry no pass: run effects are the trials' alone
    assert a.pass_hat_k.drop(dep, strict=False).equals(b.pass_hat_k.drop(dep, strict=False))
    cols = [*("agent", "domain"), *(c for c in GROUP_FIELDS if c != "task_definitions")]
    assert a.groups.select(cols).equals(b.groups.select(cols))


def test_every_output_carries_them():
    s = tauk.stats.summarize(tauk.load("data"), by=("agent", "domain"), ci=None)
    nested = s.to_frame()["pass_hat_k"].explode().struct.fields
    assert set(LONG_SCHEMA) <= set(nested) and {f"substantive_{f}" for f in SUBSTANTIVE_FIELDS} <= set(nested)
    table = s.summary()
    assert "inaction-passable" in table.columns and "substantive pass^1" in table.columns
    assert set(GROUP_FIELDS) <= set(s.records()[0])
    with pytest.raises(tauk.TaukError, match="marks= needs columns"):
        tauk.stats.summarize(tauk.load("data"), ci=None, marks=pl.DataFrame({"task_id": ["1"]}))


def test_cli_json_has_the_keys(capsys):
    from tauk.cli import main

    assert main(["summary", "data/baseline_airline.json", "--format", "json", "--ci", "0"]) == 0
    rec = json.loads(capsys.readouterr().out)[0]
    assert rec["n_tasks_inaction_passable"] == 2 and rec["task_definitions"] == "embedded"
    assert rec["pass_hat_k"]["1"]["substantive"]["n_tasks"] == 23

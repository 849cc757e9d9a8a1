"""tauk.widgets driven from Python: set a child's value, the observers fire, assert on the HTML / Output content."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402

import tauk  # noqa: E402
import tauk.plot  # noqa: E402
from tauk import scoring, widgets  # noqa: E402

SAMPLE_DATA = Path(__file__).resolve().parents[1] / "data"

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"
XSS = f"{XSS_SCRIPT} and {XSS_IMG}"


@pytest.fixture(scope="module")
def res() -> tauk.Results:
    return tauk.load(SAMPLE_DATA)


@pytest.fixture(scope="module")
def scored(res) -> pl.DataFrame:
    return tauk.score(res)


def _output_data(out) -> dict:
    assert len(out.outputs) == 1
    return out.outputs[0]["data"]


@pytest.fixture
def fake_plots(monkeypatch):
    """Stand-ins for tauk.plot functions (only where the plot layer does not provide them yet), drawing something
    that depends on their input so a change is visible in the PNG."""
    calls: list[tuple[str, dict]] = []

    def make(name):
        def fn(obj, **kw):
            calls.append((name, kw))
            fig, ax = plt.subplots(figsize=(3, 2))
            if hasattr(obj, "pass_hat_k"):
                df = obj.pass_hat_k.filter(pl.col("k") == kw.get("k", 1))
                ax.bar(range(df.height), df["estimate"].fill_null(0).to_list())
            else:
                ax.plot([0, 1], [0, obj.to_frame().height])
            return fig

        return fn

    for name in ("domain_estimates", "pass_k_curve", "cost_vs_pass", "forest"):
        if not callable(getattr(tauk.plot, name, None)):
            monkeypatch.setattr(tauk.plot, name, make(name), raising=False)
    return calls


# ------------------------------------------------------------------------------------------------ explorer
def test_explorer_k_reslices_without_recomputing(res, fake_plots):
    ex = widgets.explorer(res, resamples=200)
    assert ex.n_computed == 1
    assert ex.k.max == 4
    t1, png1 = ex.table.value, ex.figure_png
    assert "pass^1" in t1 and "pass^3" not in t1
    assert "atlas-large" in t1 and "baseline" in t1
    assert png1 is not None and "image/png" in _output_data(ex.output)

    ex.k.value = 3
    assert ex.n_computed == 1, "moving k must not re-run the bootstrap"
    assert "pass^3" in ex.table.value and "pass^1" not in ex.table.value
    assert ex.table.value != t1
    assert ex.figure_png != png1
    assert base64.b64decode(_output_data(ex.output)["image/png"]) == ex.figure_png

    # the k=3 cell matches the public API's number
    s = tauk.stats.summarize(res, by=["agent", "domain"], k=3, ci=0.95, resamples=200)
    est = s.pass_hat_k.filter((pl.col("agent") == "atlas-large") & (pl.col("domain") == "airline"))["estimate"][0]
    assert f"{est:.4f}" in ex.table.value


def test_explorer_caches_per_selection(res, fake_plots):
    ex = widgets.explorer(res, resamples=100)
    ex.infra.value = "fail"
    assert ex.n_computed == 2
    ex.infra.value = "drop"
    assert ex.n_computed == 2, "back to a seen selection: from the cache"
    ex.agents.value = ("baseline",)
    assert ex.n_computed == 3
    assert "baseline" in ex.table.value and "atlas-large" not in ex.table.value
    ex.domains.value = ("retail",)
    assert "retail" in ex.table.value and "airline" not in ex.table.value
    ex.k.value = 2
    ex.figure.value = "pass_k_curve"
    assert ex.n_computed == 4
    assert ex.figure_png is not None


def test_explorer_evaluation_and_basis(res, fake_plots):
    ex = widgets.explorer(res, resamples=100)
    assert ex.reward_basis.disabled
    recorded = ex.table.value
    ex.evaluation.value = "all"
    assert not ex.reward_basis.disabled
    assert ex.n_computed == 2
    assert "tauk-error" not in ex.status.value
    # a type that cannot evaluate the tasks' basis: the EvaluationError is shown (escaped), not raised
    ex.evaluation.value = "communicate"
    assert "EvaluationError" in ex.status.value and ex.table.value == ""
    assert "<script" not in ex.status.value
    ex.reward_basis.value = "COMMUNICATE"
    assert "tauk-error" not in ex.status.value and ex.table.value
    assert ex.table.value != recorded
    # the numbers are the public API's: score under that basis, summarize the recomputed reward
    sc = scoring.score(res, evaluation="communicate", reward_basis=["COMMUNICATE"])
    s = tauk.stats.summarize(sc.with_columns(reward=pl.col("score_reward")), by=["agent", "domain"], k=1, ci=None)
    v = s.pass_hat_k.filter((pl.col("agent") == "baseline") & (pl.col("domain") == "retail"))["estimate"][0]
    assert f"{v:.4f}" in ex.table.value


def test_explorer_hold_computes_once(res, fake_plots):
    ex = widgets.explorer(res, resamples=100)
    with ex.hold():
        ex.evaluation.value = "all"
        ex.reward_basis.value = "DB+COMMUNICATE+ACTION"
        ex.infra.value = "fail"
        ex.k.value = 2
        assert ex.n_computed == 1
    assert ex.n_computed == 2
    assert "pass^2" in ex.table.value and "counted as failed trials" in ex.table.value


def test_explorer_empty_selection_and_summary_html(res, fake_plots):
    ex = widgets.explorer(res, resamples=100)
    ex.agents.value = ()
    assert ex.summary is None and ex.table.value == ""
    assert "nothing selected" in _output_data(ex.output)["text/plain"]
    s = tauk.stats.summarize(res, by="agent", ci=None)
    assert "pass^2" in widgets.summary_html(s, 2) and "pass^1" not in widgets.summary_html(s, 2)
    assert "pass^4" in widgets.summary_html(s)


def test_explorer_repr_mimebundle(res, fake_plots):
    ex = widgets.explorer(res, resamples=50)
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


# ------------------------------------------------------------------------------------------------ comparison
def test_comparison_pair_updates(res, fake_plots):
    cw = widgets.comparison(res, resamples=200)
    assert cw.a.value == "atlas-large" and cw.b.value == "atlas-small"
    assert "atlas-large vs atlas-small" in cw.table.value
    assert "airline" in cw.table.value and "retail" in cw.table.value
    png1 = cw.figure_png
    assert png1 is not None
    cw.b.value = "baseline"
    assert "atlas-large vs baseline" in cw.table.value
    expected = tauk.stats.compare(res, "atlas-large", "baseline", k=1, by="domain", resamples=200)
    assert cw.table.value == widgets.comparison_html(expected)
    assert cw.n_computed == 2
    cw.by_domain.value = False
    assert "<th>domain</th>" not in cw.table.value
    cw.by_domain.value = True
    assert cw.n_computed == 3, "seen choice: from the cache"
    cw.k.value = 2
    assert "pass^2 atlas-large" in cw.table.value
    cw.a.value = "baseline"
    assert "pick two different agents" in cw.status.value and cw.table.value == ""


def test_comparison_needs_two_agents(res):
    one = res.trials.filter(pl.col("agent") == "baseline")
    with pytest.raises(ValueError, match="two agents"):
        widgets.comparison(one)


# ------------------------------------------------------------------------------------------------ trajectory
def _first(df: pl.DataFrame, cond) -> dict:
    rows = df.filter(cond)
    assert rows.height, "the sample should contain such a simulation"
    return rows.row(0, named=True)


def _sim_frames(res, run_id, sim):
    key = (pl.col("run_id") == run_id) & (pl.col("simulation_id") == sim)
    return res.messages.filter(key), res.tool_calls.filter(key), key


def test_viewer_highlights_unsaid_communicate(res, scored):
    comm = scoring.communicate_checks(res)
    row = _first(comm, pl.col("met") == False)  # noqa: E712
    v = widgets.trajectory_viewer(res, scored)
    v.show(row["run_id"], row["simulation_id"])
    assert v.trial.value == row["simulation_id"]
    h = v.html.value
    assert "communicate string never said" in h
    assert row["info"] in h


def test_viewer_highlights_unmatched_action_and_premature(res, scored):
    acts = scoring.action_checks(res)
    row = _first(acts, pl.col("matched") == False)  # noqa: E712
    html_ = widgets.trajectory_viewer(res, scored).render(row["run_id"], row["simulation_id"])
    assert "gold action #" in html_ and "never matched" in html_
    assert row["name"] in html_
    tr = _first(scored, pl.col("failure").str.starts_with("premature:"))
    html_ = widgets.trajectory_viewer(res, scored).render(tr["run_id"], tr["simulation_id"])
    assert "premature ending" in html_ and tr["termination_reason"] in html_


def test_viewer_shows_roles_calls_and_results(res, scored):
    call = res.tool_calls.row(0, named=True)
    v = widgets.trajectory_viewer(res, scored)
    v.show(call["run_id"], call["simulation_id"])
    h = v.html.value
    assert "tauk-role-assistant" in h and "tauk-role-user" in h
    assert call["name"] in h
    arg_key = next(iter(json.loads(call["arguments"])))
    assert arg_key in h
    assert "tool call #0" in h and "result" in h


def test_viewer_navigation_and_failures_only(res, scored):
    v = widgets.trajectory_viewer(res, scored, failures_only=True)
    labels = [lbl for lbl, _ in v.trial.options]
    assert labels and all("failed" in lbl for lbl in labels)
    run2 = res.runs["run_id"][3]
    v.run.value = run2
    assert v.html.value and run2 in v.html.value
    first_task = v.task.value
    other = [t for _, t in v.task.options if t != first_task][0]
    v.task.value = other
    assert f"task <b>{other}</b>" in v.html.value
    n_fail = len(v.task.options)
    labels_fail = [lbl for lbl, _ in v.task.options]
    v.failures_only.value = False
    assert len(v.task.options) >= n_fail
    assert all(lbl.split("(")[1].startswith("0/") for lbl in labels_fail)
    assert any(not lbl.split("(")[1].startswith("0/") for lbl, _ in v.task.options)


def test_render_trajectory_escapes_everything():
    messages = [
        {"message_idx": 0, "role": "user", "content": XSS},
        {"message_idx": 1, "role": "assistant", "content": f"sure {XSS}", "n_tool_calls": 1},
        {"message_idx": 2, "role": "tool", "content": XSS, "tool_call_id": "c1", "is_error": False},
        {"message_idx": 3, "role": XSS_IMG, "content": "odd role"},
    ]
    calls = [
        {"message_idx": 1, "call_idx": 0, "tool_call_id": "c1", "name": f"lookup{XSS_SCRIPT}",
         "arguments": json.dumps({"q": XSS, XSS_IMG: 1}), "result": XSS, "is_error": True},
    ]
    trial = {"run_id": XSS_IMG, "simulation_id": XSS_SCRIPT, "task_id": XSS, "trial": 0, "reward": 0.0,
             "termination_reason": XSS_SCRIPT, "failure": f"DB+{XSS_IMG}"}
    comm = [{"info_idx": 0, "info": XSS, "met": False, "message_idx": None}]
    acts = [{"action_idx": 0, "action_id": XSS_IMG, "name": XSS_SCRIPT, "arguments": json.dumps({"x": XSS}),
             "compare_args": None, "matched": False, "call_idx": None}]
    h = widgets.render_trajectory(messages, calls, trial=trial, communicate=comm, actions=acts)
    low = h.lower()
    assert "<script" not in low
    assert "<img" not in low
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in h
    assert "&lt;img src=x onerror=alert(1)&gt;" in h
    # every channel carried its escaped text: content, arguments (JSON-quoted), results, checks
    assert h.count("&lt;script&gt;") >= 6
    assert "communicate string never said" in h and "never matched" in h and "premature ending" in h
    # style block aside, the only tags are the renderer's own
    import re

    tags = set(re.findall(r"<\s*([a-zA-Z0-9]+)", h))
    assert tags <= {"style", "div", "span", "b", "pre", "ul", "li", "code"}


def test_viewer_escapes_a_malicious_results_file(tmp_path: Path):
    d = json.loads((SAMPLE_DATA / "baseline_airline.json").read_text())
    sim = d["simulations"][0]
    msgs = sim["messages"]
    msgs[1]["content"] = XSS
    call_msg = next(m for m in msgs if m.get("tool_calls"))
    call_msg["content"] = XSS
    call_msg["tool_calls"][0]["arguments"] = {"user_id": XSS, "note": XSS_IMG}
    call_id = call_msg["tool_calls"][0]["id"]
    tool_msg = next(m for m in msgs if m.get("role") == "tool" and m.get("id") == call_id)
    tool_msg["content"] = XSS
    d["simulations"] = [sim]
    p = tmp_path / "evil_airline.json"
    p.write_text(json.dumps(d))
    res = tauk.load(p)
    v = widgets.trajectory_viewer(res)
    h = v.html.value
    assert v.trial.value == sim["id"]
    assert "<script" not in h.lower() and "<img" not in h.lower()
    assert h.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 4  # user content, assistant content, argument, result
    assert "&lt;img src=x onerror=alert(1)&gt;" in h


def test_failure_reasons_pure():
    items = widgets.failure_reasons({"termination_reason": "user_stop", "failure": "DB+COMMUNICATE"},
                                    communicate=[{"info": "42", "met": False}], actions=[])
    text = " ".join(items)
    assert "communicate string never said" in text and "42" in text
    assert "DB" in text and "COMMUNICATE" not in text.split("failed component")[-1]
    assert widgets.failure_reasons({"termination_reason": "agent_stop", "reward": 1.0}) == []


def test_checks_outside_the_basis_are_set_apart():
    trial = {"termination_reason": "user_stop", "reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"]}
    acts = [{"action_idx": 3, "name": "refund", "arguments": "{}", "compare_args": None, "matched": False}]
    assert widgets.failure_reasons(trial, actions=acts) == []
    h = widgets.render_trajectory([], [], trial=trial, actions=acts)
    assert "passed" in h and "why it failed" not in h
    assert "outside the reward basis" in h and "refund()" in h
    failing = {**trial, "reward": 0.0, "reward_basis": ["DB", "ACTION"], "failure": "ACTION"}
    items = widgets.failure_reasons(failing, actions=acts)
    assert len(items) == 1 and "gold action #3 never matched" in items[0]


def test_explorer_on_a_trials_frame(res, fake_plots):
    ex = widgets.explorer(res.trials, by=("agent",), resamples=100)
    assert "<th>agent</th>" in ex.table.value and "atlas-small" in ex.table.value
    ex.evaluation.value = "all"  # re-scoring needs the messages: the error is shown, not raised
    assert "class='tauk-error'" in ex.status.value and ex.summary is None
    ex.evaluation.value = "recorded"
    assert ex.summary is not None and ex.n_computed == 1


def test_explorer_shows_the_library_numbers_of_its_selection(res, fake_plots, tmp_path):
    """The explorer summarised a trials frame, which carries no task definitions: its substantive figures
    (n_tasks_substantive, share_successes_inaction_passable …) were null and task_definitions 'none' where
    tauk.stats.summarize of the same results gives them — for a store too."""
    store = tmp_path / "st"
    tauk.ingest(SAMPLE_DATA, store, progress=False)
    for source in (res, tauk.open(store)):
        ex = widgets.explorer(source, resamples=99)
        ex.agents.value = ("atlas-small", "baseline")
        lib = tauk.stats.summarize(source.filter(agent=["atlas-small", "baseline"]), by=("agent", "domain"),
                                   resamples=99, progress=False)  # fmt: skip
        assert ex.summary.groups.drop("run_id", strict=False).equals(lib.groups.drop("run_id", strict=False))
        assert ex.summary.pass_hat_k.equals(lib.pass_hat_k)
        assert ex.summary.groups["n_tasks_substantive"].null_count() == 0
        assert set(ex.summary.groups["task_definitions"]) == {"embedded"}


def test_viewer_task_counts_are_the_library_counts(tmp_path):
    """The viewer's "c/n passed" per task counted infrastructure errors as failed attempts (2/5 where
    tauk.stats.per_task, infra='drop', gives 2/3); they are left out and named."""
    from tauk.synth import write_results

    write_results(tmp_path, agents={"a": 0.6}, domains=("airline",), n_tasks=12, n_trials=5, seed=7,
                  infra_error_rate=0.2)  # fmt: skip
    res = tauk.load(tmp_path)
    v = widgets.trajectory_viewer(res)
    lib = {t: (c, n) for t, c, n in tauk.stats.per_task(res, by="run_id").select("task_id", "c", "n").rows()}
    shown = {t: tuple(int(x) for x in label.split("(")[1].split(" ")[0].split("/")) for label, t in v.task.options}
    assert shown == {t: lib.get(t, (0, 0)) for t in shown}
    assert any("infra error(s) not counted" in label for label, _ in v.task.options)

"""Results files on which τ²-bench's metrics stop (its loader refuses them, or ``compute_metrics`` raises) but tauk
reads: each is named in the load report, never a silent number. Found by benchmarks/fuzz_metrics_upstream.py."""

from __future__ import annotations

import copy
import json
import warnings

import pytest
from test_upstream_refused_spellings import SIM, TASK, TOP
from upstream_tau2 import run_upstream

import tauk


def _doc(kind: str) -> dict:
    top, task = copy.deepcopy(TOP), copy.deepcopy(TASK)
    sims = []
    for j, reward in enumerate((1.0, 0.0, 1.0)):
        s = copy.deepcopy(SIM)
        s["id"], s["trial"], s["reward_info"]["reward"] = f"s{j}", j, reward
        sims.append(s)
    top["info"]["num_trials"] = 3
    tasks = [task]
    if kind == "integer_id":
        task["id"] = 7
        for s in sims:
            s["task_id"] = 7
    elif kind == "simulation_without_task":
        sims[1]["task_id"] = "u"
    elif kind == "no_tasks":
        tasks = []
    elif kind == "num_trials_missing":
        top["info"]["num_trials"] = None
    return {**top, "tasks": tasks, "simulations": sims}


KINDS = {"integer_id": "integer_id", "simulation_without_task": "simulation_without_task",
         "no_tasks": "simulation_without_task", "num_trials_missing": "num_trials_missing"}  # fmt: skip


def _figures(path) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tauk.LoadWarning)
        res = tauk.load(path, strict=False, progress=False)
    s = tauk.stats.summarize(res, by=None, ci=None)
    g = s.groups.row(0, named=True)
    return res, (g["n_simulations"], g["avg_reward"], tuple(s.pass_hat_k.sort("k")["estimate"].to_list()))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_named_in_the_load_report(kind, tmp_path):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(_doc(kind)))
    base = tmp_path / "base.json"
    base.write_text(json.dumps(_doc("none")))
    res, figures = _figures(f)
    assert KINDS[kind] in {i.kind for i in res.report.issues}, res.report
    if kind != "no_tasks":
        with pytest.warns(tauk.LoadWarning, match="τ²-bench"):
            tauk.load(f, strict=False, progress=False)
    if kind != "simulation_without_task":  # the same trials: the same figures as the conformant file
        assert figures == _figures(base)[1]
    base_res, _ = _figures(base)
    assert base_res.report.ok


UPSTREAM = """
import json, sys
from pathlib import Path
from tau2.data_model.simulation import Results
from tau2.metrics.agent_metrics import compute_metrics
out = {}
for p in sys.argv[1:]:
    try:
        res = Results.load(Path(p))
    except Exception as exc:
        out[Path(p).stem] = "load:" + type(exc).__name__
        continue
    try:
        compute_metrics(res)
        out[Path(p).stem] = "ok"
    except Exception as exc:
        out[Path(p).stem] = "metrics:" + type(exc).__name__
print(json.dumps(out))
"""


def test_upstream_stops_on_every_one(tmp_path):
    """The premise: τ²-bench refuses each file or its compute_metrics raises (and the conformant one passes)."""
    paths = []
    for kind in [*KINDS, "none"]:
        f = tmp_path / f"{kind}.json"
        f.write_text(json.dumps(_doc(kind)))
        paths.append(str(f))
    got = run_upstream(UPSTREAM, *paths)
    assert got == {"integer_id": "load:ValidationError", "simulation_without_task": "metrics:StopIteration",
                   "no_tasks": "metrics:StopIteration", "num_trials_missing": "load:ValidationError",
                   "none": "ok"}  # fmt: skip


def test_checkpoint_infra_error_retried_in_the_final_file_is_named(tmp_path):
    """A checkpoint (an infrastructure error, which τ²-bench's resume retries under a new id) loaded beside the
    final file: the error shares no id with the final file, so the overlap check misses it; it is counted (the
    infrastructure count, a failed trial under infra="fail") and named."""
    final = _doc("none")
    bad = copy.deepcopy(final["simulations"][1])
    bad["id"], bad["termination_reason"], bad["reward_info"] = "s1-infra", "infrastructure_error", None
    (tmp_path / "ckpt.json").write_text(json.dumps({**final, "simulations": [bad]}))
    (tmp_path / "final.json").write_text(json.dumps(final))
    with pytest.warns(tauk.LoadWarning, match="retried in the final file"):
        res = tauk.load([tmp_path / "ckpt.json", tmp_path / "final.json"], strict=False, progress=False)
    issues = [i for i in res.report.issues if i.kind == "retried_infrastructure_error"]
    assert len(issues) == 1 and issues[0].path.endswith("ckpt.json")
    s = tauk.stats.summarize(res, by=["agent", "domain"], ci=None)
    assert s.groups["infra_error_count"].to_list() == [1]  # counted, as documented, and named
    with warnings.catch_warnings():  # a completed simulation at the same task and trial of another agent: no line
        warnings.simplefilter("ignore", tauk.LoadWarning)
        other = copy.deepcopy(final)
        other["info"]["agent_info"]["llm"] = "b"
        (tmp_path / "other.json").write_text(json.dumps(other))
        res = tauk.load([tmp_path / "ckpt.json", tmp_path / "other.json"], strict=False, progress=False)
    assert "retried_infrastructure_error" not in {i.kind for i in res.report.issues}


def test_directory_index_entry_without_integer_trial_is_named(tmp_path):
    """τ²-bench's index model requires an integer trial (its loader refuses the run); tauk reads the simulation
    files, so the figures stand, and names the index entry."""
    doc = _doc("none")
    (tmp_path / "simulations").mkdir()
    for s in doc["simulations"]:
        (tmp_path / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    index = [{"id": s["id"], "task_id": s["task_id"], "trial": s["trial"]} for s in doc["simulations"]]
    index[1]["trial"] = None
    meta = {k: v for k, v in doc.items() if k != "simulations"}
    (tmp_path / "results.json").write_text(json.dumps({**meta, "simulation_index": index, "format_version": "1.0"}))
    with pytest.warns(tauk.LoadWarning, match="integer trial"):
        res = tauk.load(tmp_path, strict=False, progress=False)
    assert "simulation_index_invalid" in {i.kind for i in res.report.issues}
    base = tmp_path / "base.json"
    base.write_text(json.dumps(doc))
    s = tauk.stats.summarize(res, by=None, ci=None)
    assert tuple(s.pass_hat_k.sort("k")["estimate"].to_list()) == _figures(base)[1][2]

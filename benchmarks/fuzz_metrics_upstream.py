"""Differential fuzzing of tauk's load -> trials frame -> metrics path against upstream τ²-bench's
``compute_metrics`` (the judge).

    python benchmarks/fuzz_metrics_upstream.py --n 600 --seed 0 [--keep DIR] [--out FILE]

Each case is a results file (or a directory-format run, or two files of one run) built from a real shared τ²-bench
file (../shared/data/tau2): a few of its tasks, 1-4 trials each (its simulations cloned with fresh ids and trial
indices, the recorded reward set to 0 or 1 at random), then one to three seeded, realistic file-level mutations:
dropped / duplicated simulations, trial indices missing / duplicated / non-contiguous, ``info.num_trials`` off,
rewards at the success tolerance's edges / NaN / null / strings, ``reward_info`` null or missing, termination
reasons of every kind (infrastructure errors included, whole tasks and whole runs of them), orphan simulations and
unused tasks, integer task ids, duplicated task definitions, agent costs null / text, a checkpoint left by an
interrupted resume (an infrastructure error and its retry), the directory format (with / without an index, a file
missing), and a run split over two files (or the same file twice).

The scoring kernel is not fuzzed here (benchmarks/fuzz_scoring_upstream.py does that): both sides take the
recorded reward.

Upstream (``/work/venv312``) loads each case with ``Results.load`` and runs its unmodified ``compute_metrics``
(infrastructure errors dropped). tauk loads it with ``strict=False`` and runs ``tauk.stats.summarize(ci=None)``
(``infra="drop"``, one group per agent and domain) and compares n simulations, n tasks, the infrastructure count,
avg reward, avg agent cost, pass^1..pass^k (the same set of k) and the termination / DB counters. Outcomes:

* ``agree`` — every figure equal (1e-9);
* ``documented`` — a difference docs/spec.md states (nothing evaluated: upstream prints 0, tauk null);
* ``upstream_refuses`` + ``tauk_named`` — upstream's models refuse the file; tauk refuses with a named error or
  reads it and names the problem (a load-report entry or a warning);
* ``upstream_refuses`` + ``tauk_silent`` — upstream refuses; tauk gives numbers and names nothing (a defect);
* ``upstream_crashes`` — upstream loads the file but ``compute_metrics`` raises; tauk's outcome as above;
* ``tauk_refuses_named`` — tauk refuses a file upstream reads, naming why;
* ``named_difference`` — figures differ because of input tauk named (a load-report line that skipped it — a
  duplicate simulation id, a reward of the wrong type — or that says how it is counted: a checkpoint's retried
  infrastructure error, ``retried_infrastructure_error``);
* ``upstream_crashes/tauk_null_documented`` — every kept reward null: upstream raises, tauk gives null figures;
* ``mismatch`` — both give numbers and they differ (split into flagged / silent by whether tauk named anything).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_scoring_upstream import (  # noqa: E402
    DATA,
    REASONS,
    TAU2_DATA_DIR,
    UPSTREAM_PYTHON,
    example_lines,
    finish,
    refusal_reason,
)

KINDS = ("drop_sims", "dup_sim", "trial_index", "num_trials", "reward_value", "reward_info", "termination",
         "infra_task", "task_orphan", "task_id_type", "task_def_dup", "agent_cost", "checkpoint", "dir_format",
         "multi_file")  # fmt: skip

# upstream AgentMetrics field -> tauk counters column
COUNTERS = {"db_match_count": "db_match", "db_mismatch_count": "db_mismatch", "db_not_checked": "db_not_checked",
            "termination_user_stop": "termination_user_stop", "termination_agent_stop": "termination_agent_stop",
            "termination_max_steps": "termination_max_steps", "termination_error": "termination_error",
            "termination_infrastructure_error": "termination_infrastructure_error"}  # fmt: skip

EDGE_REWARDS = [1 - 1e-6, 1 + 1e-6, 0.999999, 1.0000001, 0.9999989, 1.0000011, 0.9999990000000001, 1e-7, 0.5, -0.0,
                2.0, -1.0, 1, 0, True, False, "1.0", "1", "0", " 1", float("nan"), float("inf"), None]  # fmt: skip


# ------------------------------------------------------------------------------------------------------ pool
def pool(data: Path) -> list[dict]:
    """Every shared τ²-bench file with simulations and tasks: its top-level keys, tasks by id and simulations by task
    (message ``raw_data`` / ``usage`` dropped to keep the cases small)."""
    out = []
    for f in sorted((data / "tau2").glob("*.json")):
        d = json.loads(f.read_text())
        tasks = {str(t["id"]): t for t in d.get("tasks") or []}
        by_task: dict[str, list] = defaultdict(list)
        for s in d.get("simulations") or []:
            if str(s.get("task_id")) in tasks and s.get("reward_info") is not None:
                for m in s.get("messages") or []:
                    m.pop("raw_data", None)
                    m.pop("usage", None)
                by_task[str(s["task_id"])].append(s)
        if by_task:
            out.append({"file": f.name, "top": {k: v for k, v in d.items() if k not in ("tasks", "simulations")},
                        "tasks": tasks, "sims": dict(by_task)})  # fmt: skip
    return out


# ------------------------------------------------------------------------------------------------- mutations
def _sims(doc: dict) -> list[dict]:
    return doc["simulations"]


def _pick(rng: random.Random, doc: dict) -> dict | None:
    return rng.choice(_sims(doc)) if _sims(doc) else None


def m_drop_sims(rng, doc, notes):
    n = rng.randint(1, max(1, len(_sims(doc)) // 2))
    for _ in range(n):
        if _sims(doc):
            _sims(doc).pop(rng.randrange(len(_sims(doc))))
    notes.append(f"drop_sims:{n}")


def m_dup_sim(rng, doc, notes):
    s = _pick(rng, doc)
    if s is None:
        return
    o = rng.choice(["same_id", "new_id_same_trial", "new_id_new_trial", "new_id_no_trial"])
    notes.append(f"dup_sim:{o}")
    d = copy.deepcopy(s)
    if o != "same_id":
        d["id"] = f"{s['id']}-dup{rng.randrange(10**6)}"
    if o == "new_id_new_trial":
        d["trial"] = max((x.get("trial") or 0) for x in _sims(doc) if isinstance(x.get("trial"), int)) + 1
    if o == "new_id_no_trial":
        d["trial"] = None
    if d.get("reward_info") and rng.random() < 0.5:
        d["reward_info"]["reward"] = 1.0 - float(d["reward_info"].get("reward") == 1.0)
    _sims(doc).insert(rng.randint(0, len(_sims(doc))), d)


def m_trial_index(rng, doc, notes):
    o = rng.choice(["null_one", "null_all", "dup", "gap", "shift", "string", "float", "negative"])
    notes.append(f"trial_index:{o}")
    sims = _sims(doc)
    if not sims:
        return
    if o == "null_one":
        rng.choice(sims)["trial"] = None
    elif o == "null_all":
        for s in sims:
            s["trial"] = None
    elif o == "dup":
        a = rng.choice(sims)
        same = [s for s in sims if s["task_id"] == a["task_id"] and s is not a]
        if same:
            rng.choice(same)["trial"] = a.get("trial")
    elif o == "gap":
        for s in sims:
            if isinstance(s.get("trial"), int):
                s["trial"] *= 2
    elif o == "shift":
        for s in sims:
            if isinstance(s.get("trial"), int):
                s["trial"] += 1
    elif o == "string":
        s = rng.choice(sims)
        s["trial"] = str(s.get("trial"))
    elif o == "float":
        s = rng.choice(sims)
        s["trial"] = float(s.get("trial") or 0)
    elif o == "negative":
        rng.choice(sims)["trial"] = -1


def m_num_trials(rng, doc, notes):
    o = rng.choice(["smaller", "larger", "zero", "null", "string", "float", "float_frac", "missing"])
    notes.append(f"num_trials:{o}")
    info = doc["info"]
    n = info.get("num_trials") or 1
    info["num_trials"] = {"smaller": max(1, n - 1), "larger": n + rng.randint(1, 3), "zero": 0, "null": None,
                          "string": str(n), "float": float(n), "float_frac": n + 0.5}.get(o, n)  # fmt: skip
    if o == "missing":
        info.pop("num_trials", None)


def m_reward_value(rng, doc, notes):
    sims = [s for s in _sims(doc) if isinstance(s.get("reward_info"), dict)]
    if not sims:
        return
    for s in rng.sample(sims, rng.randint(1, min(3, len(sims)))):
        v = rng.choice(EDGE_REWARDS)
        notes.append(f"reward_value:{v!r}")
        s["reward_info"]["reward"] = v


def m_reward_info(rng, doc, notes):
    s = _pick(rng, doc)
    if s is None:
        return
    o = rng.choice(["null", "missing", "empty", "no_reward", "all_null"])
    notes.append(f"reward_info:{o}")
    if o == "null":
        s["reward_info"] = None
    elif o == "missing":
        s.pop("reward_info", None)
    elif o == "empty":
        s["reward_info"] = {}
    elif o == "no_reward" and isinstance(s.get("reward_info"), dict):
        s["reward_info"].pop("reward", None)
    elif o == "all_null":
        for x in _sims(doc):
            x["reward_info"] = None


def m_termination(rng, doc, notes):
    for s in rng.sample(_sims(doc), min(len(_sims(doc)), rng.randint(1, 3))):
        r = rng.choice([*REASONS, "infrastructure_error", "INFRASTRUCTURE_ERROR", "infrastructure error", None,
                        "something_else"])  # fmt: skip
        notes.append(f"termination:{r}")
        s["termination_reason"] = r


def m_infra_task(rng, doc, notes):
    o = rng.choice(["one_task", "all", "all_but_one"])
    notes.append(f"infra_task:{o}")
    sims = _sims(doc)
    if not sims:
        return
    if o == "one_task":
        t = rng.choice(sims)["task_id"]
        chosen = [s for s in sims if s["task_id"] == t]
    elif o == "all":
        chosen = sims
    else:
        chosen = sims[1:]
    for s in chosen:
        s["termination_reason"] = "infrastructure_error"
        if rng.random() < 0.5:
            s["reward_info"] = None if rng.random() < 0.5 else {"reward": 0.0}


def m_task_orphan(rng, doc, notes):
    o = rng.choice(["sim_without_task", "task_without_sims", "task_without_sims_only_infra"])
    notes.append(f"task_orphan:{o}")
    if o == "sim_without_task" and doc["tasks"]:
        used = {s["task_id"] for s in _sims(doc)}
        cand = [t for t in doc["tasks"] if t["id"] in used]
        if cand:
            doc["tasks"].remove(rng.choice(cand))
    elif o.startswith("task_without_sims"):
        t = copy.deepcopy(rng.choice(doc["tasks"]))
        t["id"] = f"{t['id']}_unused{rng.randrange(1000)}"
        doc["tasks"].append(t)
        if o.endswith("only_infra") and _sims(doc):
            s = copy.deepcopy(rng.choice(_sims(doc)))
            s["id"], s["task_id"], s["termination_reason"] = s["id"] + "-infra", t["id"], "infrastructure_error"
            _sims(doc).append(s)


def m_task_id_type(rng, doc, notes):
    o = rng.choice(["int_sims", "int_tasks", "int_both", "pad_sims", "pad_tasks"])
    notes.append(f"task_id_type:{o}")

    def conv(v):
        if o.startswith("int"):
            try:
                return int(v)
            except (TypeError, ValueError):
                return abs(hash(v)) % 1000
        return f" {v}"

    if o in ("int_tasks", "int_both", "pad_tasks"):
        for t in doc["tasks"]:
            t["id"] = conv(t["id"])
    if o in ("int_sims", "int_both", "pad_sims"):
        # one task's simulations (or all of them)
        tids = list({s["task_id"] for s in _sims(doc)})
        pick = set(tids) if rng.random() < 0.5 or not tids else {rng.choice(tids)}
        for s in _sims(doc):
            if s["task_id"] in pick:
                s["task_id"] = conv(s["task_id"])


def m_task_def_dup(rng, doc, notes):
    if not doc["tasks"]:
        return
    o = rng.choice(["identical", "different"])
    notes.append(f"task_def_dup:{o}")
    t = copy.deepcopy(rng.choice(doc["tasks"]))
    if o == "different":
        t["description"] = {"purpose": "changed", "relevant_policies": None, "notes": None}
    doc["tasks"].append(t)


def m_agent_cost(rng, doc, notes):
    for s in rng.sample(_sims(doc), min(len(_sims(doc)), rng.randint(1, 3))):
        v = rng.choice([None, "0.01", float("nan"), -0.5, 0, 1e308, "abc"])
        notes.append(f"agent_cost:{v!r}")
        s["agent_cost"] = v


def m_checkpoint(rng, doc, notes):
    """An interrupted resume: an infrastructure error left beside its retry (same task, trial, seed), or the
    checkpoint's tasks listed before their simulations ran."""
    o = rng.choice(["infra_and_retry", "unrun_tasks"])
    notes.append(f"checkpoint:{o}")
    s = _pick(rng, doc)
    if s is None:
        return
    if o == "infra_and_retry":
        bad = copy.deepcopy(s)
        bad["id"] = s["id"] + "-infra"
        bad["termination_reason"] = "infrastructure_error"
        bad["reward_info"] = None if rng.random() < 0.5 else {"reward": 0.0}
        _sims(doc).insert(_sims(doc).index(s), bad)
    else:
        tid = s["task_id"]
        doc["simulations"] = [x for x in _sims(doc) if x["task_id"] != tid]


def m_dir_format(rng, doc, notes):
    doc["_layout"] = rng.choice(["dir_index", "dir_no_index", "dir_missing_file", "dir_extra_file",
                                 "dir_renamed_file", "dir_renamed_file_no_index"])
    notes.append(f"dir_format:{doc['_layout']}")


def m_multi_file(rng, doc, notes):
    doc["_layout"] = rng.choice(["split", "split", "copy", "checkpoint_and_final", "two_runs", "two_runs_seed"])
    notes.append(f"multi_file:{doc['_layout']}")


MUTATIONS = {k: globals()[f"m_{k}"] for k in KINDS}


def make_case(base: dict, i: int, seed: int, only: tuple[str, ...] = ()) -> dict:
    rng = random.Random(seed * 1_000_003 + i)
    tids = sorted(base["sims"])
    chosen = rng.sample(tids, rng.randint(1, min(6, len(tids))))
    if len(chosen) > 2 and rng.random() < 0.15:
        chosen = chosen[:1]
    m = rng.choice([1, 2, 2, 3, 4, 4, 5, 8, 18])  # 18: beyond tauk's default k cap of 16
    sims = []
    for ti, t in enumerate(chosen):
        pool_t = base["sims"][t]
        for j in range(m):
            s = copy.deepcopy(pool_t[j % len(pool_t)])
            s["id"] = f"c{i:05d}-t{ti}-{j}"
            s["trial"] = j
            if rng.random() < 0.5:
                s["reward_info"]["reward"] = float(rng.random() < 0.5)
            sims.append(s)
    rng.shuffle(sims)
    top = copy.deepcopy(base["top"])
    top["info"]["num_trials"] = m
    doc = {**top, "tasks": [copy.deepcopy(base["tasks"][t]) for t in chosen], "simulations": sims}
    kinds = rng.sample(only or KINDS, min(len(only or KINDS), rng.choice([1, 1, 2, 2, 3])))
    if "dir_format" in kinds and "multi_file" in kinds:
        kinds.remove("multi_file")
    notes: list[str] = []
    for k in kinds:
        try:
            MUTATIONS[k](rng, doc, notes)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):
            pass
    return {"case": f"c{i:05d}", "kinds": kinds, "notes": sorted(set(notes)), "base": base["file"], "doc": doc,
            "rng": rng.random()}  # fmt: skip


def write_case(c: dict, work: Path) -> None:
    """Write the case: ``c["up_path"]`` what upstream loads (a merged file for a split run), ``c["tauk_paths"]`` what
    tauk loads."""
    doc = c.pop("doc")
    layout = doc.pop("_layout", "file")
    c["layout"] = layout
    rng = random.Random(c["rng"])
    d = work / c["case"]
    d.mkdir()
    if layout == "file":
        p = d / "results.json"
        p.write_text(json.dumps(doc))
        c["up_path"], c["tauk_paths"] = str(p), [str(p)]
    elif layout.startswith("dir"):
        meta = {k: v for k, v in doc.items() if k != "simulations"}
        sims = doc["simulations"]
        (d / "simulations").mkdir()
        for s in sims:
            (d / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
        if layout.startswith("dir_renamed_file") and sims:  # a simulation file named other than its id
            s = rng.choice(sims)
            (d / "simulations" / f"{s['id']}.json").rename(d / "simulations" / f"{s['id']}-renamed.json")
        if layout not in ("dir_no_index", "dir_renamed_file_no_index"):
            meta["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"], "trial": s.get("trial"),
                                         "seed": s.get("seed")} for s in sims]  # fmt: skip
            meta["format_version"] = "1.0"
        if layout == "dir_missing_file" and sims:
            (d / "simulations" / f"{rng.choice(sims)['id']}.json").unlink()
        if layout == "dir_extra_file" and sims:
            extra = copy.deepcopy(rng.choice(sims))
            extra["id"] += "-extra"
            (d / "simulations" / f"{extra['id']}.json").write_text(json.dumps(extra))
        (d / "results.json").write_text(json.dumps(meta))
        c["up_path"], c["tauk_paths"] = str(d), [str(d)]
    else:  # split / copy: two files of one run
        sims = doc["simulations"]
        cut = rng.randint(0, len(sims))
        # checkpoint_and_final: a checkpoint of the run (its first simulations, an infrastructure error the resume
        # retried among them) loaded beside the finished file
        parts = {"split": [sims[:cut], sims[cut:]], "copy": [sims, sims]}.get(layout)
        merged_doc = doc
        if layout.startswith("two_runs"):  # the run repeated (new ids, its own outcomes): one setup, pooled
            again = copy.deepcopy(sims)
            for s in again:
                s["id"] += "-again"
                if isinstance(s.get("reward_info"), dict) and type(s["reward_info"].get("reward")) is float:
                    s["reward_info"]["reward"] = float(rng.random() < 0.5)
            parts = [sims, again]
            merged_doc = {**doc, "simulations": sims + again}
        if parts is None:
            ckpt = copy.deepcopy(sims[:cut])
            if ckpt:
                bad = rng.choice(ckpt)
                bad["id"] += "-infra"
                bad["termination_reason"], bad["reward_info"] = "infrastructure_error", None
            parts = [ckpt, sims]
        paths = []
        for j, part in enumerate(parts):
            p = d / f"part{j}.json"
            top = copy.deepcopy(doc) if layout == "two_runs_seed" and j else doc
            if top is not doc and isinstance(top.get("info"), dict):
                top["info"]["seed"] = (top["info"].get("seed") or 0) + 1
                top["timestamp"] = "2026-01-01T00:00:00"
            p.write_text(json.dumps({**top, "simulations": part}))
            paths.append(str(p))
        merged = d / "merged.json"
        merged.write_text(json.dumps(merged_doc))  # the run as one file: what upstream would have written
        c["up_path"], c["tauk_paths"] = str(merged), paths


# -------------------------------------------------------------------------------------------------- upstream
UPSTREAM = r'''
import json, sys, math
from tau2.data_model.simulation import Results
from tau2.metrics.agent_metrics import compute_metrics
FIELDS = ["avg_reward", "avg_agent_cost", "total_simulations", "total_tasks", "infra_error_count", "db_match_count",
          "db_mismatch_count", "db_not_checked", "termination_user_stop", "termination_agent_stop",
          "termination_max_steps", "termination_error", "termination_infrastructure_error"]
def num(v):
    v = float(v)
    return None if math.isnan(v) else v
out = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    c = json.loads(line)
    r = {"case": c["case"]}
    try:
        res = Results.load(c["path"])
    except Exception as exc:
        r["load_error"] = f"{type(exc).__name__}: {str(exc)[:600]}"
        out.write(json.dumps(r) + "\n"); continue
    try:
        m = compute_metrics(res)
        for f in FIELDS:
            v = getattr(m, f)
            r[f] = num(v) if isinstance(v, float) else int(v)
        r["pass_hat_ks"] = {str(k): num(v) for k, v in m.pass_hat_ks.items()}
    except Exception as exc:
        r["metrics_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    # the leaderboard's older convention (tauk's infra="fail"): an infrastructure error is a failed trial — the
    # same metrics with each one re-labelled a failure ending with reward 0
    try:
        from tau2.data_model.simulation import RewardInfo, TerminationReason
        fail = res.model_copy(deep=True)
        for s in fail.simulations:
            if s.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR:
                s.termination_reason = TerminationReason.AGENT_ERROR
                s.reward_info = RewardInfo(reward=0.0)
        r["pass_hat_ks_infra_fail"] = {str(k): num(v) for k, v in compute_metrics(fail).pass_hat_ks.items()}
    except Exception as exc:
        r["infra_fail_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    out.write(json.dumps(r) + "\n")
out.close()
print(json.dumps({"ok": True}))
'''


def refusal(load_error: str) -> str:
    """Why upstream refused, as in fuzz_scoring_upstream (the index and the directory check too, paths removed)."""
    import re

    if "Dir format integrity check failed" in load_error:
        return "ValueError: Dir format integrity check failed (simulation_index vs simulations/)"
    m = re.search(r"\n(simulation_index)\.\d+\.(\w+)\n\s+[^\n]*\[type=(\w+)", load_error)
    if m and not re.search(r"\n(simulations|tasks|info)\.", load_error):
        return f"simulation_index.*.{m.group(2)}: {m.group(3)}"
    return refusal_reason(load_error)


def run_upstream(cases: list[dict], work: Path) -> dict[str, dict]:
    src, dst = work / "up_in.jsonl", work / "up_out.jsonl"
    src.write_text("".join(json.dumps({"case": c["case"], "path": c["up_path"]}) + "\n" for c in cases))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TAU2_DATA_DIR"] = TAU2_DATA_DIR
    out = subprocess.run([str(UPSTREAM_PYTHON), "-c", UPSTREAM, str(src), str(dst)], env=env, capture_output=True,
                         text=True, timeout=3600)  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"upstream failed:\n{out.stderr[-4000:]}")
    return {r["case"]: r for r in map(json.loads, dst.read_text().splitlines())}


# ------------------------------------------------------------------------------------------------------ tauk
def _f(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def run_tauk_one(c: dict) -> dict:
    import tauk

    paths = c["tauk_paths"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = tauk.load(paths if len(paths) > 1 else paths[0], strict=False, progress=False)
            s = tauk.stats.summarize(res, by=["agent", "domain"], ci=None)
        except tauk.TaukError as exc:
            return {"error": f"{type(exc).__name__}: {exc}"[:400], "flags": [str(w.message)[:200] for w in caught]}
    flags = [f"{i.kind}: {i.message}"[:200] for i in res.report.issues]
    flags += [f"{type(w.message).__name__}: {w.message}"[:200] for w in caught
              if issubclass(w.category, (tauk.LoadWarning,)) or "Warning" in w.category.__name__]  # fmt: skip
    g = s.groups
    r: dict[str, Any] = {"flags": flags, "n_groups": g.height}
    if g.height != 1:
        return r
    row = g.row(0, named=True)
    r.update(total_simulations=row["n_simulations"], total_tasks=row["n_tasks"],
             infra_error_count=row["infra_error_count"], avg_reward=_f(row["avg_reward"]),
             avg_agent_cost=_f(row["avg_agent_cost"]), rewards=row.get("rewards"))  # fmt: skip
    pk = s.pass_hat_k
    r["pass_hat_ks"] = {str(k): _f(v) for k, v in zip(pk["k"], pk["estimate"])} if pk.height else {}
    r["pass_hat_ks_infra_fail"] = ({str(k): _f(v) for k, v in zip(pk["k"], pk["estimate_infra_fail"])}
                                   if pk.height else {})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:  # the stand-alone function gives the summary's estimates
            f = tauk.stats.pass_hat_k(res, by=["agent", "domain"], ci=None).to_frame()
            r["pass_hat_k_fn"] = {str(k): _f(v) for k, v in zip(f["k"], f["estimate"])}
        except tauk.TaukError as exc:
            r["pass_hat_k_fn"] = f"{type(exc).__name__}: {exc}"[:200]
    if s.counters is not None and s.counters.height == 1:
        crow = s.counters.row(0, named=True)
        for up_name, mine in COUNTERS.items():
            r[up_name] = crow.get(mine)
    return r


# ------------------------------------------------------------------------------------------------- compare
SCALARS = ("total_simulations", "total_tasks", "infra_error_count", "avg_reward", "avg_agent_cost", *COUNTERS)


def _eq(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(float(a)) or math.isinf(float(b)):
        return float(a) == float(b)
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))


def diff(up: dict, tk: dict) -> list[str]:
    out = [f for f in SCALARS if not _eq(up.get(f), tk.get(f))]
    ku, kt = up.get("pass_hat_ks", {}), tk.get("pass_hat_ks", {})
    # documented: tauk shows k <= 16 unless a k is asked for (docs/spec.md §3)
    capped = set(kt) == {k for k in ku if int(k) <= 16} and len(ku) > 16
    if set(ku) != set(kt) and not capped:
        out.append("k_set")
    out += [f"pass^{k}" for k in sorted(set(ku) & set(kt), key=int) if not _eq(ku[k], kt[k])]
    # infra="fail" (the other convention, reported beside): upstream's metrics with infrastructure errors as failures
    fu, ft = up.get("pass_hat_ks_infra_fail"), tk.get("pass_hat_ks_infra_fail", {})
    if fu is not None:
        out += [f"infra_fail^{k}" for k in sorted(ft, key=int) if ft[k] is not None and not _eq(fu.get(k), ft[k])]
    fn = tk.get("pass_hat_k_fn")
    if isinstance(fn, dict) and any(not _eq(fn.get(k), v) for k, v in kt.items()):
        out.append("pass_hat_k_fn")
    return out


def compare(c: dict, up: dict, tk: dict) -> tuple[str, list[str]]:
    named = bool(tk.get("flags")) or "error" in tk
    if "load_error" in up:
        return ("upstream_refuses/" + ("tauk_refuses_named" if "error" in tk else
                                       "tauk_named" if named else "tauk_silent"), [])  # fmt: skip
    nothing = tk.get("rewards") == "none" and tk.get("avg_reward") is None and not any(
        v is not None for v in (tk.get("pass_hat_ks") or {}).values())  # fmt: skip
    if "metrics_error" in up and nothing and "error" not in tk:
        # every kept reward null: upstream's success test meets None and raises; tauk gives no figure (rewards
        # "none", pass^k null: docs/spec.md §3, Summary.groups)
        return ("upstream_crashes/tauk_null_documented", [])
    if "metrics_error" in up:
        return ("upstream_crashes/" + ("tauk_refuses_named" if "error" in tk else
                                       "tauk_named" if named else "tauk_silent"), [])  # fmt: skip
    if "error" in tk:
        return ("tauk_refuses_named", [])
    if tk.get("n_groups") == 0 and named:  # every file skipped, by name (e.g. NaN in the JSON: unreadable_file)
        return ("tauk_refuses_named", [])
    if tk.get("n_groups") != 1:
        return ("tauk_groups_" + str(tk.get("n_groups")), [])
    d = diff(up, tk)
    if not d:
        return ("agree", [])
    # documented: nothing evaluated (every simulation an infrastructure error / no reward): upstream prints 0 and no
    # pass^k (and, returning early, leaves its termination_infrastructure_error counter at 0), tauk null
    if up.get("total_simulations") == 0 or tk.get("rewards") == "none":
        early = ("termination_infrastructure_error",) if up.get("total_simulations") == 0 else ()
        # every kept reward null but some float in the column (an excluded infrastructure error's): upstream's
        # pass^k is 0 (NaN fails), tauk's null ("not defined", docs/spec.md §3 / Summary.groups rewards "none")
        zeros = [x for x in d if x.startswith(("pass^", "infra_fail^"))
                 if not (tk.get("pass_hat_ks") or {}).get(x.split("^")[1])]  # fmt: skip
        rest = [x for x in d if x not in ("avg_reward", "avg_agent_cost", "k_set", *early, *zeros)]
        if not rest:
            return ("documented", d)
    skipped = any("skipped" in f or f.split(":")[0] in EXPLAINING for f in tk.get("flags") or [])
    return ("named_difference" if skipped else "mismatch/" + ("flagged" if named else "silent"), d)


# load-report kinds that name why tauk's counts differ from upstream's reading of the same input
EXPLAINING = {"duplicate_simulation_id", "overlapping_runs", "duplicate_run", "retried_infrastructure_error",
              "invalid_simulation"}  # fmt: skip

GOOD = ("agree", "documented", "named_difference", "upstream_crashes/tauk_null_documented",
        "upstream_refuses/tauk_refuses_named", "upstream_refuses/tauk_named", "upstream_crashes/tauk_refuses_named", "upstream_crashes/tauk_named", "tauk_refuses_named")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=600, help="cases")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--keep", type=Path, default=None, help="keep the case files here")
    ap.add_argument("--out", type=Path, default=None, help="also write the summary to this file")
    ap.add_argument("--chunk", type=int, default=300)
    ap.add_argument("--kinds", default="", help="comma-separated mutation kinds (default: all)")
    ap.add_argument("--show", type=int, default=3, help="disagreeing cases printed per outcome")
    a = ap.parse_args(argv)
    only = tuple(k for k in a.kinds.split(",") if k)
    if set(only) - set(KINDS):
        ap.error(f"unknown kinds {sorted(set(only) - set(KINDS))}; known: {', '.join(KINDS)}")
    t0 = time.time()
    base = pool(a.data)
    work = Path(tempfile.mkdtemp(prefix="fuzz_metrics_")) if a.keep is None else a.keep
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    cases: list[dict] = []
    up: dict[str, dict] = {}
    tk: dict[str, dict] = {}
    t_up = t_tk = 0.0
    for start in range(0, a.n, a.chunk):
        chunk = []
        for i in range(start, min(a.n, start + a.chunk)):
            c = make_case(base[rng.randrange(len(base))], i, a.seed, only)
            write_case(c, work)
            chunk.append(c)
        t = time.time()
        up.update(run_upstream(chunk, work))
        t_up += time.time() - t
        t = time.time()
        for c in chunk:
            tk[c["case"]] = run_tauk_one(c)
        t_tk += time.time() - t
        if a.keep is None:
            for c in chunk:
                shutil.rmtree(work / c["case"], ignore_errors=True)
        cases += chunk
        print(f"  {len(cases)} cases ({time.time() - t0:.0f} s)", file=sys.stderr)

    outcome: Counter = Counter()
    table: dict[str, Counter] = defaultdict(Counter)
    fields: Counter = Counter()
    bad: dict[str, list] = defaultdict(list)
    per_note: dict[str, Counter] = defaultdict(Counter)
    refusals: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        o, d = compare(c, up[c["case"]], tk[c["case"]])
        outcome[o] += 1
        for k in c["kinds"]:
            table[k][o] += 1
        if o not in GOOD:
            fields.update(d)
            bad[o].append((c, d))
            for n in c["notes"] or ["-"]:
                per_note[n][o] += 1
        if "load_error" in up[c["case"]]:
            refusals[refusal(up[c["case"]]["load_error"])][o.split("/")[1]] += 1
    cols = [o for o in ("agree", "documented", "named_difference", "mismatch/silent", "mismatch/flagged", "upstream_refuses/tauk_named",
                        "upstream_refuses/tauk_refuses_named", "upstream_refuses/tauk_silent",
                        "upstream_crashes/tauk_named", "upstream_crashes/tauk_null_documented",
                        "upstream_crashes/tauk_refuses_named",
                        "upstream_crashes/tauk_silent", "tauk_refuses_named") if True]  # fmt: skip
    cols += sorted(set(outcome) - set(cols))
    short = {o: o.replace("upstream_refuses/", "up_ref/").replace("upstream_crashes/", "up_crash/")
             .replace("tauk_refuses_named", "tk_ref_named").replace("tauk_null_documented", "tk_null_doc")
             .replace("named_difference", "named_diff").replace("tauk_", "tk_") for o in cols}  # fmt: skip
    head = f"  {'kind':<14}" + "".join(f"{short[o]:>20}" for o in cols)
    lines = [
        f"fuzz_metrics_upstream: n={a.n} seed={a.seed} base files={len(base)} kinds={','.join(only) or 'all'}",
        f"time: total {time.time() - t0:.1f} s (upstream {t_up:.1f} s, tauk {t_tk:.1f} s)",
        "", "outcomes:", *[f"  {o:<40} {outcome[o]:>6}{'' if o in GOOD else '   <-- disagreement'}" for o in cols
                           if outcome[o]],
        "", "mutation kind x outcome (a case applies 1-3 kinds; it counts under each):", head,
        *[f"  {k:<14}" + "".join(f"{table[k][o]:>20}" for o in cols) for k in KINDS],
        "", f"disagreements: {sum(n for o, n in outcome.items() if o not in GOOD)}",
        "figures that differ (mismatches): " + (", ".join(f"{f}={n}" for f, n in fields.most_common()) or "none"),
        "disagreements by mutation option:",
        *[f"  {n:<48} " + ", ".join(f"{o}={x}" for o, x in sorted(v.items())) for n, v in sorted(per_note.items())],
        "", "upstream refuses the file, by reason: tauk's outcome",
        *[f"  {r:<72} " + ", ".join(f"{o}={n}" for o, n in sorted(v.items())) for r, v in sorted(refusals.items())],
    ]  # fmt: skip
    named = Counter((tk[c["case"]].get("error") or next(iter(tk[c["case"]].get("flags") or []), "?")).split(":")[0]
                    for c in cases if compare(c, up[c["case"]], tk[c["case"]])[0] == "tauk_refuses_named")  # fmt: skip
    lines += ["", "tauk refuses (or skips every file of) a case upstream reads, naming why: " +
              (", ".join(f"{k}={n}" for k, n in named.most_common()) or "none")]  # fmt: skip
    for o, cs in sorted(bad.items()):
        lines.append(f"\nexamples of {o} ({len(cs)}):")
        for c, d in cs[: a.show]:
            lines.append(f"  {c['case']} layout={c['layout']} notes={c['notes']} base={c['base']} differs={d}")
            lines += example_lines(up[c["case"]], tk[c["case"]], 500)
    return finish(lines, a, work)


if __name__ == "__main__":
    sys.exit(main())

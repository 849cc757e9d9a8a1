"""Hand-built trials frames shared by the statistics tests."""

from __future__ import annotations

import json

import polars as pl

SCHEMA = {
    "run_id": pl.String,
    "simulation_id": pl.String,
    "task_id": pl.String,
    "trial": pl.Int64,
    "format": pl.String,
    "agent": pl.String,
    "domain": pl.String,
    "user_model": pl.String,
    "num_trials": pl.Int64,
    "termination_reason": pl.String,
    "is_infra_error": pl.Boolean,
    "reward": pl.Float64,
    "agent_cost": pl.Float64,
}


def make_trials(rows: list[dict]) -> pl.DataFrame:
    """rows: dicts with at least task_id, reward; defaults fill the rest of the trials contract."""
    out = []
    for i, r in enumerate(rows):
        base = {
            "run_id": "r",
            "simulation_id": f"s{i}",
            "trial": 0,
            "format": "tau2",
            "agent": "a",
            "domain": "airline",
            "user_model": "u",
            "num_trials": None,
            "termination_reason": "user_stop",
            "agent_cost": None,
        }
        base.update(r)
        base["task_id"] = str(base["task_id"])
        base["is_infra_error"] = base["termination_reason"] == "infrastructure_error"
        out.append(base)
    return pl.DataFrame(out, schema=SCHEMA)


def taubench_frame(path) -> pl.DataFrame:
    data = json.loads(path.read_text())
    return make_trials(
        [
            {"run_id": "tb", "task_id": r["task_id"], "trial": r["trial"], "format": "taubench", "reward": float(r["reward"]),
             "agent": "gpt-4o"}
            for r in data
        ]
    )


def two_agents(success_a, success_b, trials=1, domain="airline"):
    rows = []
    for agent, succ in (("A", success_a), ("B", success_b)):
        for t, s in enumerate(succ):
            vals = s if isinstance(s, list | tuple) else [s] * trials
            rows += [{"run_id": f"run-{agent}-{domain}", "agent": agent, "domain": domain, "task_id": t, "trial": i,
                      "reward": float(v)} for i, v in enumerate(vals)]
    return rows


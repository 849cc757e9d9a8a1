"""Task definitions -> the ``tasks`` / ``expected_actions`` frames of ARCHITECTURE.md.

Used by :func:`tauk.score` when re-grading with another task file and ``tauk.load_tasks`` is not available,
and by tests.  Accepts τ²-bench task dicts (``evaluation_criteria``) and τ-bench v1 task dicts
(``actions[{name, kwargs}]``, ``outputs``; the outputs become ``communicate_info``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadError

DEFAULT_BASIS = ["DB", "COMMUNICATE"]

TASKS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "task_id": pl.String(),
    "reward_basis": pl.List(pl.String()),
    "reward_basis_defaulted": pl.Boolean(),
    "has_evaluation_criteria": pl.Boolean(),
    "communicate_info": pl.List(pl.String()),
    "nl_assertions": pl.List(pl.String()),
    "n_actions": pl.Int64(),
    "n_env_assertions": pl.Int64(),
    "n_communicate_info": pl.Int64(),
    "n_nl_assertions": pl.Int64(),
    "description": pl.String(),
}

EXPECTED_ACTIONS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "task_id": pl.String(),
    "action_idx": pl.Int64(),
    "action_id": pl.String(),
    "name": pl.String(),
    "arguments": pl.String(),
    "compare_args": pl.List(pl.String()),
    "requestor": pl.String(),
}


def _str_list(x: Any) -> list[str] | None:
    if x is None:
        return None
    if isinstance(x, str):
        return [x]
    return [v if isinstance(v, str) else json.dumps(v) for v in x]


def _dumps(x: Any) -> str | None:
    return None if x is None else json.dumps(x, sort_keys=True, ensure_ascii=False)


def task_frames(
    tasks: Iterable[Mapping[str, Any]], run_id: str | None = None, source: str = "<tasks>"
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Build ``(tasks, expected_actions)`` frames from task dicts (τ²-bench or τ-bench v1)."""
    trows: list[dict[str, Any]] = []
    arows: list[dict[str, Any]] = []
    for i, t in enumerate(tasks):
        if not isinstance(t, Mapping):
            raise LoadError(source, f"$[{i}]", f"task definition is a {type(t).__name__}, not an object")
        if "id" in t:
            tid = t["id"]
        elif "task_id" in t:
            tid = t["task_id"]
        else:
            tid = i  # τ-bench task lists are indexed by position
        task_id = str(tid)
        if "evaluation_criteria" in t or "user_scenario" in t:  # τ²-bench
            ec = t.get("evaluation_criteria")
            has_ec = ec is not None
            ec = ec or {}
            basis = ec.get("reward_basis")
            actions = ec.get("actions")
            comm = _str_list(ec.get("communicate_info"))
            nl = _str_list(ec.get("nl_assertions"))
            env = ec.get("env_assertions")
            norm_actions = [
                {
                    "action_id": a.get("action_id"),
                    "name": a.get("name"),
                    "arguments": a.get("arguments") or {},
                    "compare_args": a.get("compare_args"),
                    "requestor": a.get("requestor"),
                }
                for a in (actions or [])
            ]
        else:  # τ-bench v1
            has_ec = True
            basis = None
            comm = _str_list(t.get("outputs"))
            nl = None
            env = None
            norm_actions = [
                {
                    "action_id": None,
                    "name": a.get("name"),
                    "arguments": a.get("kwargs") or a.get("arguments") or {},
                    "compare_args": None,
                    "requestor": None,
                }
                for a in (t.get("actions") or [])
            ]
        defaulted = basis is None
        trows.append(
            {
                "run_id": run_id,
                "task_id": task_id,
                "reward_basis": [str(b).upper() for b in basis] if basis is not None else list(DEFAULT_BASIS),
                "reward_basis_defaulted": defaulted,
                "has_evaluation_criteria": has_ec,
                "communicate_info": comm,
                "nl_assertions": nl,
                "n_actions": len(norm_actions),
                "n_env_assertions": len(env or []),
                "n_communicate_info": len(comm or []),
                "n_nl_assertions": len(nl or []),
                "description": _dumps(t.get("description")),
            }
        )
        for j, a in enumerate(norm_actions):
            ca = a["compare_args"]
            arows.append(
                {
                    "run_id": run_id,
                    "task_id": task_id,
                    "action_idx": j,
                    "action_id": None if a["action_id"] is None else str(a["action_id"]),
                    "name": a["name"],
                    "arguments": _dumps(a["arguments"]),
                    "compare_args": None if ca is None else [str(k) for k in ca],
                    "requestor": a["requestor"],
                }
            )
    return (
        pl.DataFrame(trows, schema=TASKS_SCHEMA),
        pl.DataFrame(arows, schema=EXPECTED_ACTIONS_SCHEMA),
    )


def read_tasks_file(path: str | Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read a task file (a JSON list of task dicts) into ``(tasks, expected_actions)``."""
    p = Path(path)
    try:
        data = json.loads(p.read_bytes())
    except (OSError, ValueError) as e:
        raise LoadError(str(p), None, f"cannot read task file: {e}") from e
    if isinstance(data, Mapping) and isinstance(data.get("tasks"), list):
        data = data["tasks"]
    if not isinstance(data, list):
        raise LoadError(
            str(p), "$", f"a task file is a JSON list of task objects, found {type(data).__name__}"
            + (" (this looks like a split file: task ids per split)" if isinstance(data, Mapping) else "")
        )
    return task_frames(data, source=str(p))

"""The ``tasks`` and ``expected_actions`` frames: task definitions and their gold actions.

Contracts: :data:`tauk.io.columns.TASKS` and :data:`tauk.io.columns.EXPECTED_ACTIONS`. τ-bench (v1) tasks are read
as τ²-bench ones (:func:`taubench_task`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
import polars as pl

from tauk.conventions import DEFAULT_REWARD_BASIS
from tauk.io import structs as S
from tauk.io.columns import EXPECTED_ACTIONS, TASKS
from tauk.io.frames._build import canonical_json, new_columns, raw_text, to_frame
from tauk.io.read import RunData

__all__ = ["build_tasks", "taubench_task", "tasks_from_list"]

_DEFAULT_BASIS = list(DEFAULT_REWARD_BASIS)


def _decoded(text: str) -> Any:
    """A JSON value, numbers of any size included (msgspec refuses those beyond 64-bit / double range)."""
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return json.loads(text)


def _canonical(raw: msgspec.Raw | None) -> str | None:
    """Canonical JSON (keys sorted) of an undecoded value: two spellings of one definition compare equal."""
    text = raw_text(raw)
    if text is None:
        return None
    return canonical_json(_decoded(text))


def _recorded_tool_type(raw: msgspec.Raw) -> str | None:
    """An action check's ``tool_type`` ("read", "write", …), lower-cased; None where absent, null or not a string."""
    text = raw_text(raw)
    if not text:
        return None
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return None
    return value.lower() if isinstance(value, str) else None


class _Named(msgspec.Struct):
    """The ``name`` of a JSON object (other keys skipped, not built)."""

    name: Any = None


_NAMED = S.decoder(_Named)


def _checked_name(raw: msgspec.Raw) -> str | None:
    """The tool name an action check records (None: absent, null, not an object, not a string)."""
    if raw is None:
        return None
    try:
        name = _NAMED.decode(raw).name
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return name if isinstance(name, str) else None


def _recorded_checks(run: RunData) -> tuple[dict[str, str], dict[str, bool]]:
    """From the run's action checks: tool name -> recorded tool type (v1.0 files, first seen), and task id ->
    whether every simulation's checks name the embedded gold actions in order (tasks without checks: absent)."""
    gold = {str(t.id): [a.name for a in (t.evaluation_criteria.actions or ())] if t.evaluation_criteria else []
            for t in run.tasks}  # fmt: skip
    types: dict[str, str] = {}
    graded: dict[str, bool] = {}
    for sim in run.simulations:
        ri = sim.reward_info
        checks = ri.action_checks if ri is not None else None
        tid = str(sim.task_id)
        if checks is None or tid not in gold or (not checks and gold[tid]):
            continue
        names = [_checked_name(c.action) for c in checks]
        graded[tid] = graded.get(tid, True) and names == gold[tid]
        for c, name in zip(checks, names):
            tool_type = _recorded_tool_type(c.tool_type)
            if tool_type is not None and name is not None:
                types.setdefault(name, tool_type)
    return types, graded


def _task_rows(task_cols: dict[str, list], action_cols: dict[str, list], rid: str | None,
               tasks: Sequence[S.Task], checks: tuple[dict[str, str], dict[str, bool]] | None = None) -> None:  # fmt: skip
    tool_types, graded = checks or ({}, {})
    for t in tasks:
        ec = t.evaluation_criteria
        tid = str(t.id)
        basis = list(ec.reward_basis) if ec is not None and ec.reward_basis is not None else None
        task_cols["run_id"].append(rid)
        task_cols["task_id"].append(tid)
        task_cols["reward_basis"].append(basis if basis is not None else _DEFAULT_BASIS)
        task_cols["reward_basis_defaulted"].append(basis is None)
        task_cols["has_evaluation_criteria"].append(ec is not None)
        task_cols["communicate_info"].append(
            list(ec.communicate_info) if ec and ec.communicate_info is not None else None
        )
        task_cols["nl_assertions"].append(list(ec.nl_assertions) if ec and ec.nl_assertions is not None else None)
        task_cols["n_actions"].append(len(ec.actions or ()) if ec else 0)
        task_cols["n_env_assertions"].append(len(ec.env_assertions or ()) if ec else 0)
        task_cols["n_communicate_info"].append(len(ec.communicate_info or ()) if ec else 0)
        task_cols["n_nl_assertions"].append(len(ec.nl_assertions or ()) if ec else 0)
        task_cols["description"].append(raw_text(t.description))
        task_cols["user_scenario"].append(_canonical(t.user_scenario))
        task_cols["initial_state"].append(_canonical(t.initial_state))
        task_cols["env_assertions"].append(
            canonical_json([_decoded(bytes(e).decode("utf-8", "replace")) for e in ec.env_assertions])
            if ec is not None and ec.env_assertions is not None else None
        )
        task_cols["graded_as_embedded"].append(graded.get(tid))
        task_cols["actions_null"].append(ec is None or ec.actions is None)
        for i, a in enumerate((ec.actions or ()) if ec else ()):
            action_cols["run_id"].append(rid)
            action_cols["task_id"].append(tid)
            action_cols["action_idx"].append(i)
            action_cols["action_id"].append(a.action_id)
            action_cols["name"].append(a.name)
            action_cols["arguments"].append(canonical_json(a.arguments or {}))
            action_cols["compare_args"].append(list(a.compare_args) if a.compare_args is not None else None)
            action_cols["requestor"].append(a.requestor)
            action_cols["tool_type"].append(tool_types.get(a.name))


def taubench_task(task_id: Any, tb: S.TBTask) -> S.Task:
    """A τ-bench (v1) task as a τ²-bench one: ``outputs`` are its communicate strings, ``actions`` its golds.

    Examples
    --------
    >>> tb = S.TBTask(user_id="u1", actions=[S.TBAction("find_user", {"id": 1})], outputs=["42"])
    >>> t = taubench_task(3, tb)
    >>> t.id, t.evaluation_criteria.communicate_info, t.evaluation_criteria.actions[0].arguments
    ('3', ['42'], {'id': 1})
    """
    actions = [S.Action(name=a.name, arguments=a.kwargs or {}) for a in tb.actions or ()]
    desc = msgspec.Raw(orjson.dumps({"instruction": tb.instruction, "user_id": tb.user_id}))
    ec = S.EvaluationCriteria(actions=actions, communicate_info=list(tb.outputs or []))
    return S.Task(id=str(task_id), description=desc, user_scenario=desc, evaluation_criteria=ec)


def _taubench_tasks(run: RunData) -> list[S.Task]:
    seen: dict[str, S.Task] = {}
    for r in run.tb_records:
        tid = str(r.task_id)
        if tid in seen or r.info is None or r.info.task is None:
            continue
        seen[tid] = taubench_task(tid, r.info.task)
    return list(seen.values())


def build_tasks(runs: Sequence[RunData], run_ids: Sequence[str | None]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ``tasks`` and ``expected_actions`` frames of the task definitions the runs embed.

    Parameters
    ----------
    runs : sequence of RunData
        The decoded sources (τ-bench runs: the tasks their records carry).
    run_ids : sequence of str
        Their run ids.

    Returns
    -------
    (polars.DataFrame, polars.DataFrame)
        ``tasks`` (one row per run × task) and ``expected_actions`` (one row per gold action).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> tasks, actions = build_tasks([run], ["r"])
    >>> tasks.height, actions.columns[:3]
    (25, ['run_id', 'task_id', 'action_idx'])
    """
    task_cols, action_cols = new_columns(TASKS), new_columns(EXPECTED_ACTIONS)
    for run, rid in zip(runs, run_ids):
        if run.format == "taubench":
            _task_rows(task_cols, action_cols, rid, _taubench_tasks(run))
        else:
            _task_rows(task_cols, action_cols, rid, run.tasks, _recorded_checks(run))
    return to_frame(task_cols, TASKS), to_frame(action_cols, EXPECTED_ACTIONS)


def tasks_from_list(tasks: Sequence[S.Task], run_id: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ``tasks`` and ``expected_actions`` frames of decoded task definitions (``run_id`` on every row).

    Examples
    --------
    >>> tasks, actions = tasks_from_list([S.Task(id=1, evaluation_criteria=S.EvaluationCriteria(
    ...     actions=[S.Action(name="cancel", arguments={"id": "A"})]))])
    >>> tasks.select("task_id", "reward_basis_defaulted", "n_actions").row(0), actions["arguments"].to_list()
    (('1', True, 1), ['{"id":"A"}'])
    """
    task_cols, action_cols = new_columns(TASKS), new_columns(EXPECTED_ACTIONS)
    _task_rows(task_cols, action_cols, run_id, tasks)
    return to_frame(task_cols, TASKS), to_frame(action_cols, EXPECTED_ACTIONS)

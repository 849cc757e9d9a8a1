"""What the task functions take: task files, folders of them, frames or a results set → one :class:`TaskSets`.

Every task carries ``task_set`` (the file's stem, the mapping's label, or the run id of a results set) and
``domain``: the run's domain for a results set, else the task's ``user_scenario.instructions.domain``, else a domain
named in the file name, else the one standard domain whose tool table holds every gold action's tool — or null.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import polars as pl

from tauk.errors import TaukError
from tauk.io.files import bounded_nesting, read_bytes
from tauk.io.formats import list_kind
from tauk.io.frames import tasks_from_list
from tauk.io.load import task_list
from tauk.tasks.tools import classify_tools, tool_table

__all__ = ["TaskSets", "resolve"]

TASK_COLUMNS = ("user_scenario", "initial_state", "env_assertions")
"""Columns of the tasks frame the task functions read when present (older stores lack them)."""


@dataclass(frozen=True)
class TaskSets:
    """Tasks (``task_set, domain, task_id`` + the tasks-frame columns), their gold actions classified
    (``task_set, task_id, action_idx, name, arguments, compare_args, requestor, tool_type, state_changing``),
    the splits (``task_set, split, task_id``) and the results the definitions came from, if any."""

    tasks: pl.DataFrame
    actions: pl.DataFrame
    splits: pl.DataFrame
    results: Any = None


def _domain_in_name(stem: str, domains: Sequence[str]) -> str | None:
    found = [d for d in sorted(domains, key=len, reverse=True) if re.search(rf"(^|[^a-z]){d}([^a-z]|$)", stem.lower())]
    return found[0] if found else None


def _split_file(data: Any) -> bool:
    return isinstance(data, Mapping) and bool(data) and all(
        isinstance(v, list) and all(isinstance(x, str | int) for x in v) for v in data.values()
    )


def _fill(tasks: pl.DataFrame) -> pl.DataFrame:
    """The optional tasks-frame columns, null where the frame lacks them."""
    missing = [c for c in TASK_COLUMNS if c not in tasks.columns]
    return tasks.with_columns([pl.lit(None, pl.String).alias(c) for c in missing]) if missing else tasks


def _from_frames(label: str | None, tasks: pl.DataFrame, actions: pl.DataFrame | None, domain: str | None,
                 run_domains: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:  # fmt: skip
    complete = all(c in tasks.columns for c in TASK_COLUMNS)
    tasks = _fill(tasks.with_columns(pl.col("task_id").cast(pl.String), _complete=pl.lit(complete)))
    if run_domains is not None and "run_id" in tasks.columns:
        tasks = tasks.join(run_domains, on="run_id", how="left")
    else:
        tasks = tasks.with_columns(_run_domain=pl.lit(None, pl.String))
    run_col = pl.col("run_id").cast(pl.String)
    per_run = run_domains is not None and "run_id" in tasks.columns and tasks.get_column("run_id").n_unique() > 1
    if label is None:
        set_expr = run_col
    elif per_run:
        set_expr = pl.lit(f"{label}/") + run_col
    else:
        set_expr = pl.lit(label, pl.String)
    tasks = tasks.with_columns(
        task_set=set_expr,
        _own_domain=pl.col("user_scenario").str.json_path_match("$.instructions.domain"),
        _given=pl.lit(domain, pl.String),
    )
    if actions is None:
        actions = pl.DataFrame(schema={"run_id": pl.String, "task_id": pl.String, "action_idx": pl.Int64,
                                       "name": pl.String, "arguments": pl.String, "requestor": pl.String})  # fmt: skip
    keys = ["run_id", "task_id"] if (label is None or per_run) else ["task_id"]
    actions = actions.with_columns(pl.col("task_id").cast(pl.String)).join(
        tasks.select(*keys, "task_set").unique(subset=keys, keep="first", maintain_order=True), on=keys, how="inner",
        maintain_order="left",  # the gold actions in their file order, every time (Polars' default order is free)
    )
    return tasks, actions


def _infer_domains(tasks: pl.DataFrame, actions: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """``domain`` per task: given > run > the task's own > the file name > the tool table."""
    drop = ["_given", "_run_domain", "_own_domain", "_file_domain", "_tools_domain"]
    if tasks.select(pl.coalesce("_given", "_run_domain").is_not_null().all()).item():
        # every task's domain is given or its run's (results): the later sources would never be read
        return tasks.with_columns(domain=pl.coalesce("_given", "_run_domain")).drop(drop[:3])
    table = tool_table()
    domains = sorted(set(table["domain"]))
    by_name = pl.DataFrame({"task_set": list(names), "_file_domain": [_domain_in_name(s, domains) for s in names.values()]},
                           schema={"task_set": pl.String, "_file_domain": pl.String})  # fmt: skip
    # the domains whose table holds every gold tool name of the task set
    tool_domains = table.select("domain", "name").unique()
    n_names = actions.group_by("task_set").agg(_n=pl.col("name").n_unique())
    fits = (
        actions.select("task_set", "name").unique()
        .join(tool_domains, on="name", how="inner")
        .group_by("task_set", "domain").agg(_k=pl.len())
        .join(n_names, on="task_set")
        .filter(pl.col("_k") == pl.col("_n"))
        .group_by("task_set").agg(_tools_domain=pl.when(pl.len() == 1).then(pl.col("domain").first()))
    )  # fmt: skip
    tasks = tasks.join(by_name, on="task_set", how="left").join(fits, on="task_set", how="left")
    return tasks.with_columns(domain=pl.coalesce(*drop)).drop(drop)


def _read_path(path: Path) -> tuple[str, Any]:
    """("tasks", (tasks, actions)), ("splits", {split: ids}), ("results", Results) or ("other", reason) for one
    JSON file. An object is decoded one level deep first, so a results file is not decoded twice."""
    raw = read_bytes(path)
    head = bytes(raw[:64]).lstrip()
    try:
        with bounded_nesting():
            if head.startswith(b"{"):
                top = msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
                if "simulations" in top or "info" in top:  # a results file: its embedded definitions
                    from tauk.results import load

                    return "results", load(path)
                data: Any = {k: msgspec.json.decode(v) for k, v in top.items()}
            else:
                data = msgspec.json.decode(raw)
                if isinstance(data, list) and data and isinstance(data[0], Mapping) and \
                        list_kind(set(data[0])) != "tasks":  # fmt: skip
                    from tauk.results import load  # a list of τ-bench records or τ²-bench simulations

                    return "results", load(path)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        return "other", f"not JSON ({exc})"
    if _split_file(data):
        return "splits", data
    if isinstance(data, list) or (isinstance(data, Mapping) and isinstance(data.get("tasks"), list)):
        return "tasks", tasks_from_list(task_list(data, str(path)))  # as tauk.load_tasks, decoded once
    return "other", "neither a list of task definitions nor a split file"


def _split_owner(split_stem: str, task_stems: Sequence[str]) -> str | None:
    """``head_airline_split_tasks`` → ``head_airline_tasks``; ``head_telecom_split_tasks`` →
    ``head_telecom_tasks*`` when exactly one file matches."""
    prefix = split_stem.replace("_split_tasks", "").replace("_split", "")
    exact = [s for s in task_stems if s == f"{prefix}_tasks"]
    if exact:
        return exact[0]
    loose = [s for s in task_stems if s.startswith(f"{prefix}_tasks")]
    return loose[0] if len(loose) == 1 else None


def _expand(source: Any) -> list[tuple[str | None, Any]]:
    """(label, item) pairs: a folder's files, a mapping's entries, a list's items."""
    if isinstance(source, str | Path):
        p = Path(source)
        if p.is_dir() and (p / "results.json").exists() and (p / "simulations").is_dir():
            from tauk.results import load

            return [(None, load(p))]  # a results directory (τ²-bench ≥ 1.0)
        if p.is_dir():
            files = sorted(p.glob("*.json"))
            if not files:
                raise TaukError(f"{p}: no .json task files in this folder")
            return [(f.stem, f) for f in files]
        return [(p.stem, p)]
    if isinstance(source, Mapping) and isinstance(source.get("tasks"), pl.DataFrame):  # frames of a results set
        return [(None, SimpleNamespace(**{k: v for k, v in source.items() if isinstance(k, str)}))]
    if isinstance(source, Mapping) and not hasattr(source, "tasks"):
        return [(str(k), v) for k, v in source.items()]
    if isinstance(source, list) and all(isinstance(x, str | Path) for x in source):
        return [pair for x in source for pair in _expand(x)]
    return [(None, source)]


def resolve(source: Any, *, domain: str | None = None) -> TaskSets:
    """Read task definitions of any accepted kind into :class:`TaskSets`.

    ``source``: a task file, a folder of task files (split files ``*_split_tasks.json`` are attached to the task
    file of the same prefix; other JSON files are refused), a list of them, a mapping ``label → file / frames``, a
    ``(tasks, expected_actions)`` pair, a tasks frame, or results — a ``tauk.Results``, a results file or a
    results directory (their embedded definitions, one task set per run, the run's domain).
    """
    task_parts: list[pl.DataFrame] = []
    action_parts: list[pl.DataFrame] = []
    split_rows: list[dict[str, str]] = []
    names: dict[str, str] = {}
    results = None
    pending_splits: list[tuple[str, dict]] = []
    for label, item in _expand(source):
        run_domains = None
        if isinstance(item, str | Path):
            path = Path(item)
            if not path.exists():
                raise TaukError(f"{path}: no such file or folder")
            kind, value = _read_path(path)
            if kind == "splits":
                pending_splits.append((path.stem, value))
                continue
            if kind == "other":
                raise TaukError(f"{path}: {value}")
            if kind == "results":
                item, label = value, None
            else:
                tasks, actions = value
        if isinstance(item, str | Path):
            pass
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], pl.DataFrame):
            tasks, actions = item
        elif isinstance(item, pl.DataFrame):
            tasks, actions = item, None
        elif isinstance(getattr(item, "tasks", None), pl.DataFrame):
            tasks, actions = item.tasks, getattr(item, "expected_actions", None)
            runs = getattr(item, "runs", None)
            if isinstance(runs, pl.DataFrame) and "domain" in runs.columns:
                run_domains = runs.select(pl.col("run_id").cast(pl.String), _run_domain=pl.col("domain").cast(pl.String))
            results = item
        else:
            raise TaukError(
                "task definitions: give a task file, a folder of them, a list or mapping of them, a (tasks, "
                f"expected_actions) pair, a tasks frame or a tauk.Results; got {type(item).__name__}"
            )
        if label is None and ("run_id" not in tasks.columns or tasks.get_column("run_id").null_count()):
            label = "tasks"
        t, a = _from_frames(label, tasks, actions, domain, run_domains)
        for s in t.get_column("task_set").unique().to_list():
            names[s] = s
        task_parts.append(t)
        action_parts.append(a)
    if not task_parts:
        raise TaukError("no task definitions found (only split files?)")
    tasks = pl.concat(task_parts, how="diagonal_relaxed")
    actions = pl.concat(action_parts, how="diagonal_relaxed")
    dup = tasks.group_by("task_set", "task_id").len().filter(pl.col("len") > 1)
    if dup.height:
        first = dup.row(0, named=True)
        raise TaukError(f"task set {first['task_set']!r} defines task {first['task_id']!r} {first['len']} times "
                        "(give each file its own label)")  # fmt: skip
    tasks = _infer_domains(tasks, actions, names)
    stems = list(names)
    for stem, data in pending_splits:
        owner = _split_owner(stem, stems)
        if owner is None:
            continue  # a split file without its task file: nothing to attach it to
        split_rows += [{"task_set": owner, "split": str(k), "task_id": str(x)} for k, ids in data.items() for x in ids]
    splits = pl.DataFrame(split_rows, schema={"task_set": pl.String, "split": pl.String, "task_id": pl.String})
    if "requestor" not in actions.columns:
        actions = actions.with_columns(requestor=pl.lit(None, pl.String))
    actions = actions.join(tasks.select("task_set", "task_id", "domain"), on=["task_set", "task_id"], how="left",
                           maintain_order="left")
    recorded = "recorded_tool_type"
    if "tool_type" in actions.columns:
        actions = actions.rename({"tool_type": recorded})
    else:
        actions = actions.with_columns(pl.lit(None, pl.String).alias(recorded))
    actions = classify_tools(actions, recorded=recorded)
    return TaskSets(tasks, actions, splits, results)

"""Reading every shape of input: :func:`read_inputs` (what ``tauk.load`` wraps into a ``Results``) and
:func:`load_tasks`."""

from __future__ import annotations

import glob as _glob
import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from tauk.errors import LoadError, LoadReport, LoadWarning, TaukError
from tauk.io import structs as S
from tauk.io.read import (
    RunData,
    bounded_nesting,
    is_regular,
    looks_like_results,
    read_bytes,
    read_scanned,
    read_source,
)

PathLike = str | os.PathLike
Inputs = PathLike | Iterable[PathLike] | Mapping[str, PathLike]


def _expand(p: PathLike, label: str | None, explicit: bool) -> list[tuple[str | None, Path, bool]]:
    """(label, path, explicit) for each results source under p."""
    s = os.fspath(p)
    if any(ch in s for ch in "*?[") and not Path(s).exists():
        hits = sorted(_glob.glob(s, recursive=True))
        if not hits:
            raise LoadError(s, None, "glob matched no file")
        out: list[tuple[str | None, Path, bool]] = []
        for h in hits:
            out += _expand(h, label, False)
        return out
    path = Path(s)
    if not path.exists():
        raise LoadError(s, None, "no such file or directory")
    if not path.is_dir():  # a file (a FIFO, device or socket is refused when read, never opened)
        return [(label, path, explicit)]
    if (path / "results.json").exists():
        return [(label, path, True)]
    out = []
    for sub in sorted(path.rglob("*")):
        if sub.is_dir() and (sub / "results.json").exists():
            out.append((label, sub, True))
    dir_runs = [o[1] for o in out]
    for f in sorted(path.rglob("*.json")):
        if any(d in f.parents for d in dir_runs):
            continue
        out.append((label, f, False))
    if not out:
        raise LoadError(s, None, "directory holds no results files")
    return out


def _common_parent(paths: list[Path]) -> Path:
    if not paths:
        return Path(".")
    try:
        return Path(os.path.commonpath([str(p.resolve().parent) for p in paths]))
    except ValueError:
        return Path("/")


def check_label(label: object, what: str = "label") -> str:
    """A label (an agent's or a run's name) as text, refused by name when empty, blank or holding a NUL — it would
    name nothing, or be cut short by every C string it passes through. Other untrusted text is kept and escaped
    wherever it is rendered."""
    text = str(label)
    if not text.strip():
        raise LoadError("<inputs>", None, f"empty {what} {text!r}: give every input a name")
    if "\x00" in text:
        raise LoadError("<inputs>", None, f"{what} {text!r} holds a NUL character")
    return text


class LoadedRuns(NamedTuple):
    """What :func:`read_inputs` read: the decoded runs with their run ids and agent labels, and the load report."""

    runs: list[RunData]
    run_ids: list[str]
    agents: list[str | None]
    report: LoadReport
    strict: bool


def find_sources(inputs: Inputs, report: LoadReport, *, _stacklevel: int = 2) -> list[tuple[str | None, Path]]:
    """``(label, path)`` of every results source under ``inputs`` (files, directory-format runs, folders scanned
    for results files, globs, lists, ``{label: path}``); files of a scanned folder that are not results files are
    passed over, non-regular files skipped with a report entry."""
    found = _candidates(inputs, report, _stacklevel=_stacklevel + 1)
    kept = [(label, path) for label, path, scanned in found if not scanned or looks_like_results(path)]
    if not kept:
        _none_found(inputs)
    return kept


def _none_found(inputs: Inputs) -> None:
    raise LoadError(os.fspath(inputs) if isinstance(inputs, str | os.PathLike) else "<inputs>", None,
                    "no results files found")  # fmt: skip


def _candidates(inputs: Inputs, report: LoadReport, *, _stacklevel: int = 2) -> list[tuple[str | None, Path, bool]]:
    """``(label, path, scanned)`` of every source under ``inputs``; ``scanned``: a file a folder scan met, which is
    read only if it is a results file (:func:`looks_like_results`). Non-regular scanned files are skipped with a
    report entry."""
    items: list[tuple[str | None, Path, bool]] = []
    if isinstance(inputs, Mapping):
        for label, p in inputs.items():
            items += _expand(p, check_label(label), True)
    elif isinstance(inputs, str | os.PathLike):
        items += _expand(inputs, None, True)
    else:
        for p in inputs:
            items += _expand(p, None, True)
    kept: list[tuple[str | None, Path, bool]] = []
    for label, path, explicit in items:
        if not explicit and not path.is_dir() and not is_regular(path):
            msg = "not a regular file (a FIFO, device, socket or broken link); skipped by the folder scan"
            report.add(str(path), None, "not_a_regular_file", msg, skipped=1)
            warnings.warn(f"{path}: {msg}", LoadWarning, stacklevel=_stacklevel + 1)
            continue
        kept.append((label, path, not explicit and not path.is_dir()))
    return kept


def read_inputs(
    inputs: Inputs,
    *,
    agent: str | Mapping[str, str] | None = None,
    strict: bool = True,
    progress: bool | None = None,
    _stacklevel: int = 2,
) -> LoadedRuns:
    """Read every results source under ``inputs`` (see :func:`tauk.load`, which wraps this into a ``Results``)."""
    report = LoadReport()
    if isinstance(agent, str):
        check_label(agent, "agent")
    elif isinstance(agent, Mapping):
        for v in agent.values():
            check_label(v, "agent")
    # a scanned file is read once: decoded straight away, skipped when it turns out not to be a results file
    kept = _candidates(inputs, report, _stacklevel=_stacklevel + 1)
    show = progress if progress is not None else len(kept) > 8
    iterator = kept
    if show:
        from tqdm.auto import tqdm

        # a folder scan counts every JSON file it examines (which are results files is known once each is read)
        scanning = any(scanned for _, _, scanned in kept)
        iterator = tqdm(kept, desc="scanning" if scanning else "loading", unit="file")
    runs: list[RunData] = []
    labels: list[str | None] = []
    passed_over = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        for label, path, scanned in iterator:
            try:
                run = read_scanned(path, strict, report) if scanned else read_source(path, strict, report)
                if run is None:  # not a results file
                    passed_over += 1
                    continue
                runs.append(run)
                labels.append(label)
                report.files_loaded += 1
            except LoadError as exc:
                if strict:
                    raise
                report.files_skipped += 1
                report.add(exc.path, exc.location, "unreadable_file", exc.message + "; file skipped", skipped=1)
    if passed_over == len(kept):  # nothing to read, or only JSON that is not results
        _none_found(inputs)
    for w in caught:  # re-emit once each, from the caller's frame
        warnings.warn(str(w.message), w.category, stacklevel=_stacklevel)
    if not strict and report.issues and not caught:
        warnings.warn(f"load skipped or repaired input: {report.counts()} (see Results.report)", LoadWarning,
                      stacklevel=_stacklevel)  # fmt: skip

    runs, labels = _drop_duplicate_runs(runs, labels, strict, report, _stacklevel + 1)
    _report_retried_infra(runs, labels, report, _stacklevel + 1)
    parent = _common_parent([r.path for r in runs])
    run_ids: list[str] = []
    seen: set[str] = set()
    for run, label in zip(runs, labels):
        try:
            rel = str(run.path.resolve().relative_to(parent))
        except ValueError:
            rel = str(run.path)
        rid = rel if label is None else (label if sum(lab == label for lab in labels) == 1 else f"{label}/{rel}")
        base, n = rid, 1
        while rid in seen:
            n += 1
            rid = f"{base}#{n}"
        seen.add(rid)
        run_ids.append(rid)
    agents: list[str | None] = []
    used: set[str] = set()
    for run, rid, label in zip(runs, run_ids, labels):
        if isinstance(agent, str):
            agents.append(agent)
        elif isinstance(agent, Mapping):
            # by run id, or by the path as given: the file, or the folder of a directory run / of a results.json
            paths = (str(run.path), *([str(run.path.parent)] if run.path.name == "results.json" else []))
            key = rid if rid in agent else next((p for p in paths if p in agent), None)
            used.update([key] if key is not None else [])
            agents.append(agent[key] if key is not None else label)
        else:
            agents.append(label)
    if isinstance(agent, Mapping) and set(agent) - used:  # a typo would otherwise leave a run under its own label
        unknown = sorted(map(str, set(agent) - used))
        raise TaukError(f"agent= names no loaded run: {', '.join(map(repr, unknown))}; the run ids are "
                        f"{', '.join(map(repr, run_ids[:20]))}{' …' if len(run_ids) > 20 else ''} (or give a file's "
                        "path as loaded)")  # fmt: skip
    return LoadedRuns(runs, run_ids, agents, report, strict)


def task_list(items: Any, source: str = "<tasks>") -> list[S.Task]:
    """Task definitions from decoded JSON: τ²-bench task objects, or τ-bench (v1) ones (``actions[{name, kwargs}]``,
    ``outputs``; indexed by position when they carry no id). A wrapper ``{"tasks": [...]}`` is unwrapped. Each id
    once: a repeated definition is kept once, two different ones under one id are a :class:`LoadError`."""
    from tauk.io.frames import taubench_task

    at = "$"  # the JSON path of the list, for the places errors name
    if isinstance(items, Mapping) and isinstance(items.get("tasks"), list):
        items, at = items["tasks"], "$.tasks"
    if not isinstance(items, list):
        hint = " (this looks like a split file: task ids per split)" if isinstance(items, Mapping) else ""
        raise LoadError(source, "$", f"a tasks file is a JSON list of task objects, found {type(items).__name__}{hint}")
    out = []
    for i, t in enumerate(items):
        if not isinstance(t, Mapping):
            raise LoadError(source, f"{at}[{i}]", f"task definition is a {type(t).__name__}, not an object")
        raw = msgspec.json.encode(t)  # integers of any size (orjson refuses those beyond 64 bits)
        try:
            if "evaluation_criteria" in t or "user_scenario" in t or "id" in t:
                out.append(msgspec.json.decode(raw, type=S.Task))
            else:
                tid = t.get("task_id", i)
                out.append(taubench_task(tid, msgspec.json.decode(raw, type=S.TBTask)))
        except msgspec.ValidationError as exc:
            from tauk.io.read import _raise

            raise _raise(Path(source), exc, f"{at}[{i}]") from None
    return _one_definition_per_id(out, source, at)


def _one_definition_per_id(tasks: list[S.Task], source: str, at: str = "$") -> list[S.Task]:
    """Each task id once: a word-for-word repeat of a definition is kept once (nothing is lost); two different
    definitions under one id are a :class:`LoadError` naming both places — which one is meant is not known, and
    the tasks frame would hold two rows for one task."""
    from tauk.io.checks import definitions_by_id

    _, out, _, differing = definitions_by_id(tasks)
    if differing:
        i, j, tid = differing[0]
        raise LoadError(source, f"{at}[{i}].id", f"task {tid!r} is defined twice, differently ({at}[{j}] and "
                        f"{at}[{i}]): which definition is meant is not known")  # fmt: skip
    return out


def _trial_keys(run: RunData, label: str | None) -> list[tuple]:
    """One key per kept simulation: the same simulation read twice has the same key. τ²-bench: its id (a UUID);
    τ-bench (no ids): (agent, domain, task, trial) of the file."""
    if run.format == "taubench":
        from tauk.io.frames import run_agent, run_domain

        who = (run_agent(run, None), run_domain(run))
        # a record without a trial index cannot be matched across files: its key is its own
        return [(label, *who, str(r.task_id), r.trial if r.trial is not None else ("#", id(r)))
                for r in run.tb_records]  # fmt: skip
    return [(label, str(s.id)) for s in run.simulations]


def _drop_duplicate_runs(runs: list[RunData], labels: list[str | None], strict: bool, report: LoadReport,
                         stacklevel: int = 3):  # fmt: skip
    """Simulations read twice under the same label — the same file twice, a copy of it, or a checkpoint and the
    final file that share most simulations — would count twice. Under strict loading that is an error naming
    both files and the overlap; otherwise each simulation is kept once (from the first file), and the report
    says which files overlapped and by how many. Under different labels it is deliberate (e.g. comparing a run
    with itself) and kept."""
    first_seen: dict[tuple, Path] = {}
    paths: dict[tuple, Path] = {}
    keep_runs, keep_labels = [], []
    for run, label in zip(runs, labels):
        where = (label, run.path.resolve())
        if where in paths:
            _overlap(run, paths[where], None, strict, report, stacklevel)
            continue
        keys = _trial_keys(run, label)
        dup = [i for i, k in enumerate(keys) if k in first_seen]
        if dup and len(dup) == len(keys):
            _overlap(run, first_seen[keys[dup[0]]], None, strict, report, stacklevel)
            continue
        if dup:
            sources = sorted({str(first_seen[keys[i]]) for i in dup})
            _overlap(run, Path(sources[0]), (len(dup), len(keys), sources), strict, report, stacklevel)
            drop = set(dup)
            if run.format == "taubench":
                run.tb_records = [r for i, r in enumerate(run.tb_records) if i not in drop]
            else:
                run.simulations = [r for i, r in enumerate(run.simulations) if i not in drop]
            run.sim_sources = [r for i, r in enumerate(run.sim_sources) if i not in drop]
            keys = [k for i, k in enumerate(keys) if i not in drop]
        paths[where] = run.path
        for k in keys:
            first_seen.setdefault(k, run.path)
        keep_runs.append(run)
        keep_labels.append(label)
    return keep_runs, keep_labels


def _report_retried_infra(runs: list[RunData], labels: list[str | None], report: LoadReport,
                          stacklevel: int) -> None:  # fmt: skip
    """An infrastructure error in one τ²-bench file whose task and trial (and seed) a simulation of the same agent and
    domain records in another file under the same label (completed, or an error again): what a checkpoint loaded beside its final file
    leaves (τ²-bench's resume retries infrastructure errors under new ids, so the overlap by id misses them). It is
    counted as its own trial — dropped under ``infra="drop"``, a failed trial under ``infra="fail"`` and in the
    infrastructure count — so the report names it (a line and a warning per file), in both modes."""
    from tauk.conventions import INFRA_REASON
    from tauk.io.frames import run_agent, run_domain

    def key(run: RunData, label: str | None, sim: Any) -> tuple:
        return (label, run_agent(run, None), run_domain(run), str(sim.task_id), sim.trial, sim.seed)

    seen: dict[tuple, list[Path]] = {}
    for run, label in zip(runs, labels):
        if run.format == "taubench":
            continue
        for sim in run.simulations:
            if sim.trial is not None:
                paths = seen.setdefault(key(run, label, sim), [])
                if run.path not in paths:
                    paths.append(run.path)
    for run, label in zip(runs, labels):
        if run.format == "taubench":
            continue
        hits = [(sim, other) for sim in run.simulations if sim.termination_reason == INFRA_REASON
                and sim.trial is not None
                for other in [next((p for p in seen.get(key(run, label, sim), ()) if p != run.path), None)]
                if other is not None]  # fmt: skip
        if not hits:
            continue
        sim, other = hits[0]
        msg = (f"{len(hits)} infrastructure error(s) whose task and trial {other} records too (e.g. task "
               f"{str(sim.task_id)!r} trial {sim.trial}: a checkpoint's error, retried in the final file?); each is "
               "counted as its own trial — in the infrastructure count, and a failure under infra='fail'")  # fmt: skip
        report.add(str(run.path), None, "retried_infrastructure_error", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=stacklevel)


def _overlap(run: RunData, first: Path, partial: tuple | None, strict: bool, report: LoadReport,
             stacklevel: int) -> None:  # fmt: skip
    if partial is None:
        msg = f"the same results were already loaded from {first}; every trial would count twice"
        hint, kind, done = " (give different labels to compare a run with itself)", "duplicate_run", "this copy skipped"
        skipped = 1
    else:
        n, total, sources = partial
        msg = (f"{n} of its {total} simulations were already loaded from {', '.join(sources)} (a checkpoint and "
               "its final file?); they would count twice")  # fmt: skip
        hint, kind, done = " (load one of them, or give different labels)", "overlapping_runs", "kept once"
        skipped = n
    if strict:
        raise LoadError(str(run.path), None, msg + hint)
    report.add(str(run.path), None, kind, f"{msg}; {done}", skipped=skipped)
    if partial is None:  # the whole file left out: a file skipped, not loaded
        report.files_loaded -= 1
        report.files_skipped += 1
    warnings.warn(f"{run.path}: {msg}; {done}", LoadWarning, stacklevel=stacklevel)


def load_tasks(path: PathLike):
    """Read a tasks file (a JSON list of τ²-bench or τ-bench tasks) into ``(tasks, expected_actions)`` frames.

    Examples
    --------
    >>> import json, tempfile, tauk
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "airline_tasks.json"
    >>> _ = path.write_text(json.dumps(json.loads(Path("data/baseline_airline.json").read_text())["tasks"]))
    >>> tasks, actions = tauk.load_tasks(path)
    >>> tasks.height, actions.columns[:3]
    (25, ['run_id', 'task_id', 'action_idx'])
    """
    from tauk.io.frames import tasks_from_list
    from tauk.io.read import _raise

    p = Path(path)
    try:
        with bounded_nesting():
            data = msgspec.json.decode(read_bytes(p))
    except (msgspec.DecodeError, RecursionError) as exc:
        raise _raise(p, exc) from None
    return tasks_from_list(task_list(data, str(p)))

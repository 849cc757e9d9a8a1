"""One reader per results format, each giving a :class:`~tauk.io.rundata.RunData`: a monolithic τ²-bench file
(or a custom wrapper holding simulations), the τ²-bench v1.0 directory format and a τ-bench (v1) list.

Errors name the file, the place in it and what was wrong (:class:`tauk.LoadError`). In non-strict mode a problem
confined to one simulation skips that simulation and is counted in the :class:`tauk.LoadReport`.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path
from typing import Any

import msgspec

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io import structs as S
from tauk.io.checks import (
    check_duplicates,
    check_ids,
    check_numbers,
    check_rewards,
    check_stringified,
    check_tasks,
    check_taubench_tasks,
    check_termination_reasons,
    check_trial_numbers,
)
from tauk.io.files import DECODE_ERRORS, _raise, file_kind, is_regular, read_bytes
from tauk.io.rundata import RunData, remember
from tauk.io.scan import array_elements

__all__ = ["TASKS_FILE_HINT", "decode_each", "list_kind", "read_list", "read_tau2_dir", "read_tau2_file",
           "read_tau2_list", "read_taubench"]


_LIGHT = S.decoder(S.LightResults)
_RAW = S.decoder(S.RawResults)
_SIM = S.decoder(S.LightSimulation)
_DIR = S.decoder(S.DirectoryResults)
_TB_LIGHT = S.decoder(list[S.TBLightRecord])
_TB_RAW = S.decoder(list[msgspec.Raw])
_TB_REC = S.decoder(S.TBLightRecord)
_PEEK = S.decoder(S._Peek)
_SIM_LIST = S.decoder(list[S.LightSimulation])
_KEYS = S.decoder(dict[str, msgspec.Raw])

# keys that only a τ²-bench simulation (SimulationRun) has, and the τ-bench trajectory's own key
SIMULATION_KEYS = frozenset({"reward_info", "termination_reason", "messages", "ticks"})


def _version(has_index: bool, declared: Any) -> str:
    if declared is not None:
        return str(declared)
    return ">=1.0" if has_index else "<1.0"


def decode_each(path: Path, raws: list[Any], dec: msgspec.json.Decoder, prefix: str, what: str,
                strict: bool, report: LoadReport, starts: list[int] | None = None
                ) -> tuple[list[Any], list[int]]:  # fmt: skip
    """Decode items one by one so that an error names its item (``prefix`` + index, and the byte when the items'
    ``starts`` in the file are known); non-strict skips it."""
    items, srcs = [], []
    for i, raw in enumerate(raws):
        try:
            items.append(dec.decode(raw))
            srcs.append(i)
        except DECODE_ERRORS as exc:
            err = _raise(path, exc, f"{prefix}[{i}]", raw, starts[i] if starts is not None else None)
            if strict:
                raise err from None
            report.add(str(path), err.location, f"invalid_{what}", f"{err.message}; {what} skipped", skipped=1)
    return items, srcs


def read_tau2_file(path: Path, data: bytes, strict: bool, report: LoadReport) -> RunData:
    """A monolithic τ²-bench results file (or a custom wrapper holding simulations)."""
    spans = None
    try:
        top = _LIGHT.decode(data)
        sims = top.simulations
        srcs = list(range(len(sims))) if sims is not None else []
    except (msgspec.ValidationError, RecursionError) as exc:
        # locate the problem: re-decode with simulations left raw (or, when something is nested too deep for
        # the decoder, cut the array of simulations into its elements by a structural scan)
        try:
            rtop = _RAW.decode(data)
            raws = rtop.simulations
        except RecursionError:
            spans = array_elements(data, key="simulations")
            rtop, raws = _top_without_simulations(path, data, spans, exc), [memoryview(data)[a:b] for a, b in spans]
        except (msgspec.ValidationError, msgspec.DecodeError) as exc2:
            raise _raise(path, exc2, data=data) from None
        if raws is None:
            raise _raise(path, exc, data=data) from None
        starts = [a for a, _ in spans] if spans is not None else None
        sims, srcs = decode_each(path, raws, _SIM, "$.simulations", "simulation", strict, report, starts)
        top = rtop
    except msgspec.DecodeError as exc:
        raise _raise(path, exc, data=data) from None

    if top.info is None and top.simulations is None:
        hint = ""
        if isinstance(top, S.LightResults | S.RawResults) and top.tasks is not None:
            hint = " (it holds 'tasks': a task-definition file? pass it as tasks= / --tasks)"
        raise LoadError(str(path), "$", "not a τ²-bench results file: neither 'info' nor 'simulations' present" + hint)
    if top.simulations is None:
        hint = ""
        if top.info is not None:
            if (path.parent / "simulations").is_dir():
                hint = (f" (a directory-format run's metadata, its simulations in {path.parent / 'simulations'}: "
                        f"pass the folder {path.parent}, or name this file results.json)")
            else:
                hint = (" (a directory-format run's results.json? its simulations/ folder is not beside it: pass the "
                        "folder holding both)")
        raise LoadError(str(path), "$.simulations", "missing required field 'simulations'" + hint)

    if top.simulations and (path.parent / "simulations").is_dir() and any(path.parent.glob("simulations/*.json")):
        msg = (f"a simulations/ folder beside this file holds simulation files: not read (this file's own "
               f"{len(top.simulations)} simulations are; load the folder {path.parent} to read the directory-format "
               "run, as τ²-bench would)")  # fmt: skip
        report.add(str(path), None, "simulations_folder_beside", msg)
        warnings.warn(f"{path}: {msg}", LoadWarning, stacklevel=4)
    fmt = "tau2"
    wrapper: dict[str, Any] = {}
    if top.info is None:
        fmt = "tau2-wrapper"
        wrapper = {"domain": top.domain, "agent": top.agent, "model": top.model}
        msg = "no 'info' (custom wrapper): agent/domain taken from the wrapper's own keys"
        if top.tasks is None:
            msg += "; no 'tasks': reward_basis falls back to the recorded one"
        report.add(str(path), "$", "wrapper_without_info", msg)
        warnings.warn(f"{path}: {msg}", LoadWarning, stacklevel=4)
    run = RunData(
        path=path,
        format=fmt,
        format_version=_version(len(bytes(top.simulation_index)) > 0, top.format_version) if fmt == "tau2" else None,
        timestamp=top.timestamp,
        info=top.info,
        tasks=list(top.tasks or []),
        simulations=list(sims),
        sim_sources=srcs,
        wrapper=wrapper,
        spans=spans,
    )
    remember(run, path, data, as_buffer=True)
    if not run.simulations:
        report.add(str(path), "$.simulations", "zero_simulations", "the file holds no simulations")
    tau2_checks(run, strict, report)
    return run


def tau2_checks(run: RunData, strict: bool, report: LoadReport) -> None:
    """The checks every τ²-bench shape gets alike (a monolithic file or wrapper, a directory, a bare list), so that
    the same simulation reads the same whatever file it came in."""
    check_numbers(run, strict, report)
    check_duplicates(run, strict, report)
    check_stringified(run, strict, report)
    check_rewards(run, strict, report)
    check_termination_reasons(run, strict, report)
    check_ids(run, strict, report)
    check_tasks(run, strict, report)


def _top_without_simulations(path: Path, data: Any, spans: list[tuple[int, int]], exc: Exception) -> S.RawResults:
    """The top level of a file whose simulations must be decoded one by one: decoded with the simulations array
    cut out (so a too-deep value inside one simulation does not stop the others)."""
    view = memoryview(data)
    if not spans:
        raise _raise(path, exc, data=data)
    head, tail = bytes(view[: spans[0][0]]), bytes(view[spans[-1][1] :])
    try:
        return _RAW.decode(head + tail)
    except DECODE_ERRORS:
        raise _raise(path, exc, data=data) from None


def read_tau2_dir(path: Path, strict: bool, report: LoadReport) -> RunData:
    """The v1.0 directory format: ``results.json`` + ``simulations/<id>.json`` (``path``: the folder)."""
    rpath = path / "results.json"
    data = read_bytes(rpath)
    try:
        top = _DIR.decode(data)
    except DECODE_ERRORS as exc:
        raise _raise(rpath, exc, data=data) from None
    sim_dir = path / "simulations"
    embedded = _embedded_simulations(data)
    if embedded and not sim_dir.is_dir():  # a monolithic results file named results.json: read as the file it is
        return read_tau2_file(rpath, data, strict, report)
    if embedded:
        msg = (f"results.json holds {embedded} simulation(s) of its own beside the simulations/ folder: not read "
               "(a directory-format run's simulations are the files in simulations/, as τ²-bench reads them)")
        if strict:
            raise LoadError(str(rpath), "$.simulations", msg + "; load results.json on its own to read them")
        report.add(str(rpath), "$.simulations", "simulations_beside_folder", msg, skipped=embedded)
        warnings.warn(f"{rpath}: {msg}", LoadWarning, stacklevel=4)
    files = sorted(sim_dir.glob("*.json")) if sim_dir.is_dir() else []
    identity: dict[str, tuple[int, int, str]] = {}
    probe = RunData(path=path, format="tau2-dir", format_version=None, identity=identity)
    sims, srcs = [], []
    _check_beside(path, strict, report)
    _check_inside(sim_dir, strict, report)
    for f in files:
        if not is_regular(f):
            what = f"{file_kind(os.stat(f).st_mode) if f.exists() else 'a broken link'}, not a regular file"
            if strict:
                raise LoadError(str(f), None, f"{what}: a simulation file must be a regular file (load leniently "
                                "to skip it)")  # fmt: skip
            msg = f"{what}; skipped"
            report.add(str(f), None, "not_a_regular_file", msg, skipped=1)
            warnings.warn(f"{f}: {msg}", LoadWarning, stacklevel=4)
            continue
        sim_bytes = read_bytes(f)
        try:
            sims.append(_SIM.decode(sim_bytes))
            srcs.append(str(f.relative_to(path)))
            remember(probe, f, sim_bytes)
        except DECODE_ERRORS as exc:
            err = _raise(f, exc, data=sim_bytes)
            if strict:
                raise err from None
            report.add(str(f), err.location, "invalid_simulation", err.message + "; simulation skipped", skipped=1)
    if top.simulation_index is not None:
        idx = top.simulation_index
        if isinstance(idx, dict):
            ids = {str(k) for k in idx}
        else:
            ids = set()
            bad_trial: list[int] = []
            for i, raw in enumerate(idx):
                v = msgspec.json.decode(raw)
                ids.add(str(v.get("id") if isinstance(v, dict) else v))
                trial = v.get("trial") if isinstance(v, dict) else 0
                if type(trial) is not int and not (type(trial) is float and math.isfinite(trial)
                                                   and trial == int(trial)):  # fmt: skip
                    bad_trial.append(i)
            if bad_trial:  # τ²-bench's SimulationIndexEntry requires an integer trial: its loader refuses the run
                where = f"$.simulation_index[{bad_trial[0]}].trial"
                msg = (f"{len(bad_trial)} simulation_index entr(y/ies) without an integer trial (τ²-bench's index "
                       "model requires one); the index is not read for figures: the simulation files are")  # fmt: skip
                report.add(str(rpath), where, "simulation_index_invalid", msg)
                warnings.warn(f"{rpath} at {where}: {msg}", LoadWarning, stacklevel=4)
        on_disk = {f.stem for f in files if is_regular(f)}
        if ids != on_disk:
            missing, extra = sorted(ids - on_disk), sorted(on_disk - ids)
            msg = (
                f"simulation_index disagrees with simulations/: {len(missing)} indexed id(s) without a file "
                f"{missing[:5]}, {len(extra)} file(s) not indexed {extra[:5]}"
            )
            if strict:
                raise LoadError(str(rpath), "$.simulation_index", msg)
            report.add(str(rpath), "$.simulation_index", "simulation_index_mismatch", msg)
    run = RunData(
        path=path,
        format="tau2-dir",
        format_version=_version(True, top.format_version),
        timestamp=top.timestamp,
        info=top.info,
        tasks=list(top.tasks or []),
        simulations=sims,
        sim_sources=srcs,
        identity=identity,
    )
    if not sims:
        report.add(str(path), "simulations/", "zero_simulations", "the directory holds no simulation files")
    tau2_checks(run, strict, report)
    return run


DIR_KNOWN = {"results.json", "simulations", "artifacts"}
"""What τ²-bench writes into a directory-format run (``artifacts/``: its verbose logs and audio)."""


def _embedded_simulations(data: Any) -> int:
    """How many simulations a ``results.json`` holds in its own ``simulations`` array (0 for none, null or [])."""
    try:
        raw = bytes(_PEEK.decode(data).simulations)
        if raw.strip() in (b"", b"null", b"[]"):
            return 0
        return len(_TB_RAW.decode(raw))
    except DECODE_ERRORS:
        return 0  # not an array of values: the directory reader does not read it either


def _check_beside(path: Path, strict: bool, report: LoadReport) -> None:
    """JSON files or folders beside ``results.json`` that τ²-bench does not write (a τ-bench list or another run
    copied into the folder) are not read: a named error under strict loading, else a report line and a warning —
    never passed over in silence. Hidden entries and other files (notes, logs) are left alone."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return
    other = [n for n in names if n not in DIR_KNOWN and not n.startswith(".")
             and (n.lower().endswith(".json") or (path / n).is_dir())]  # fmt: skip
    if not other:
        return
    msg = (f"{len(other)} entr{'y' if len(other) == 1 else 'ies'} beside results.json that a directory-format run "
           f"does not hold, not read: {', '.join(other[:5])}{' …' if len(other) > 5 else ''}")  # fmt: skip
    if strict:
        raise LoadError(str(path), None, msg + " (load that file on its own, or move it out of the run's folder)")
    report.add(str(path), None, "unknown_beside_results", msg)
    warnings.warn(f"{path}: {msg}", LoadWarning, stacklevel=5)


def _check_inside(sim_dir: Path, strict: bool, report: LoadReport) -> None:
    """Entries of ``simulations/`` that are not ``<id>.json`` files but look like simulations kept another way — a
    folder (``simulations/batch1/``), a compressed or renamed copy (``<id>.json.gz``) — are not read (τ²-bench reads
    ``simulations/*.json`` only): a named error under strict loading, else a report line and a warning, never
    passed over in silence. Hidden entries and other files are left alone."""
    try:
        names = sorted(os.listdir(sim_dir))
    except OSError:
        return
    other = [n for n in names if not n.startswith(".") and not n.endswith(".json")
             and (".json" in n.lower() or (sim_dir / n).is_dir())]  # fmt: skip
    if not other:
        return
    shown = ", ".join(n + ("/" if (sim_dir / n).is_dir() else "") for n in other[:5]) + (" …" if len(other) > 5 else "")
    msg = (f"{len(other)} entr{'y' if len(other) == 1 else 'ies'} in simulations/ that {'is' if len(other) == 1 else 'are'}"
           f" not a simulation file (<id>.json), not read: {shown}")  # fmt: skip
    if strict:
        raise LoadError(str(sim_dir), None, msg + " (decompress or move the simulations into simulations/ as <id>.json, "
                        "or load leniently to read the others)")  # fmt: skip
    report.add(str(sim_dir), None, "unknown_in_simulations", msg)
    warnings.warn(f"{sim_dir}: {msg}", LoadWarning, stacklevel=5)


def _first_keys(data: Any) -> tuple[list[Any] | None, set[str]]:
    """(the elements of a JSON array left undecoded, the keys of its first element); (None, set()) when the array
    cannot be cut into elements (the reader then explains what is wrong)."""
    try:
        raws = _TB_RAW.decode(data)
    except DECODE_ERRORS:
        return None, set()
    if not raws:
        return raws, set()
    try:
        return raws, set(_KEYS.decode(raws[0]))
    except DECODE_ERRORS:
        return raws, set()


def list_kind(keys: set[str]) -> str:
    """What a JSON list holds, from its first element's keys: ``"tasks"`` (task definitions), ``"simulations"``
    (τ²-bench ``SimulationRun`` objects: a bare list, as leaderboard submissions ship them) or ``"taubench"``
    (τ-bench trajectories, the default).

    Examples
    --------
    >>> list_kind({"id", "task_id", "reward_info", "messages"}), list_kind({"task_id", "traj", "reward"})
    ('simulations', 'taubench')
    >>> list_kind({"id", "user_scenario", "evaluation_criteria"})
    'tasks'
    """
    if "traj" not in keys and keys & SIMULATION_KEYS:
        return "simulations"
    if keys & {"evaluation_criteria", "user_scenario"} or ({"actions", "instruction"} <= keys and "traj" not in keys):
        return "tasks"
    return "taubench"


def read_list(path: Path, data: bytes, strict: bool, report: LoadReport) -> RunData:
    """A JSON list: τ²-bench simulations (:func:`read_tau2_list`) or τ-bench trajectories (:func:`read_taubench`);
    a list of task definitions is refused with a hint."""
    _, keys = _first_keys(data)
    kind = list_kind(keys)
    if kind == "tasks":
        raise LoadError(str(path), "$", TASKS_FILE_HINT)
    if "simulations" in keys and "traj" not in keys:
        raise LoadError(str(path), "$[0]", "a JSON list of τ²-bench results (objects holding 'simulations'), not of "
                        "simulations or τ-bench records: write each results object to a file of its own and load "
                        "those")  # fmt: skip
    if kind == "simulations":
        return read_tau2_list(path, data, strict, report)
    return read_taubench(path, data, strict, report)


LIST_NOTE = ("a bare list of τ²-bench simulations (no 'info', no 'tasks'): agent and domain from the file name, "
             "reward_basis the recorded one; rewards as recorded")


def read_tau2_list(path: Path, data: bytes, strict: bool, report: LoadReport) -> RunData:
    """A bare JSON list of τ²-bench simulations (``SimulationRun`` objects), read like a wrapper without ``info``:
    recorded rewards, no task definitions, a load-report line (``simulation_list``)."""
    spans = None
    try:
        sims = _SIM_LIST.decode(data)
        srcs = list(range(len(sims)))
    except (msgspec.ValidationError, RecursionError) as exc:
        try:
            raws = _TB_RAW.decode(data)
        except RecursionError:
            spans = array_elements(data)
            if not spans:
                raise _raise(path, exc, data=data) from None
            raws = [memoryview(data)[a:b] for a, b in spans]
        except (msgspec.ValidationError, msgspec.DecodeError) as exc2:
            raise _raise(path, exc2, data=data) from None
        starts = [a for a, _ in spans] if spans is not None else None
        sims, srcs = decode_each(path, raws, _SIM, "$", "simulation", strict, report, starts)
    except msgspec.DecodeError as exc:
        raise _raise(path, exc, data=data) from None
    report.add(str(path), "$", "simulation_list", LIST_NOTE)
    warnings.warn(f"{path}: {LIST_NOTE}", LoadWarning, stacklevel=4)
    run = RunData(path=path, format="tau2-list", format_version=None, simulations=list(sims), sim_sources=srcs,
                  spans=spans)  # fmt: skip
    remember(run, path, data, as_buffer=True)
    tau2_checks(run, strict, report)
    return run


TASKS_FILE_HINT = ("this is a task-definition file (a list of tasks), not results: pass it as the task definitions "
                   "to re-grade with (tauk.score(res, tasks=PATH), tauk audit --tasks PATH)")  # fmt: skip


def read_taubench(path: Path, data: bytes, strict: bool, report: LoadReport) -> RunData:
    """A τ-bench (v1) list of trajectories."""
    spans = None
    try:
        recs = _TB_LIGHT.decode(data)
        srcs = list(range(len(recs)))
        total = len(recs)
    except (msgspec.ValidationError, RecursionError) as exc:
        try:
            raws = _TB_RAW.decode(data)
        except RecursionError:
            spans = array_elements(data)
            if not spans:
                raise _raise(path, exc, data=data) from None
            raws = [memoryview(data)[a:b] for a, b in spans]
        except (msgspec.ValidationError, msgspec.DecodeError) as exc2:
            raise _raise(path, exc2, data=data) from None
        starts = [a for a, _ in spans] if spans is not None else None
        recs, srcs = decode_each(path, raws, _TB_REC, "$", "record", strict, report, starts)
        total = len(raws)
    except msgspec.DecodeError as exc:
        raise _raise(path, exc, data=data) from None
    run = RunData(path=path, format="taubench", format_version=None, tb_records=recs, sim_sources=srcs, spans=spans)
    remember(run, path, data, as_buffer=True)
    if total == 0:
        report.add(str(path), "$", "zero_simulations", "the file holds no records (an empty list)")
    check_numbers(run, strict, report)
    recs, srcs = run.tb_records, run.sim_sources
    seen: dict[tuple, int] = {}
    keep, keep_src = [], []
    for i, r in enumerate(recs):
        key = (str(r.task_id), r.trial)
        if r.trial is not None and key in seen:
            msg = f"duplicate (task_id, trial) {key} (first at $[{srcs[seen[key]]}])"
            if strict:
                raise LoadError(str(path), f"$[{srcs[i]}]", msg)
            report.add(str(path), f"$[{srcs[i]}]", "duplicate_simulation_id", msg + "; later copy skipped", skipped=1)
            continue
        seen[key] = i
        keep.append(r)
        keep_src.append(srcs[i])
    run.tb_records, run.sim_sources = keep, keep_src
    check_trial_numbers(run, strict, report)
    check_rewards(run, strict, report)
    check_taubench_tasks(run, strict, report)
    return run


"""Read one results file or directory into a :class:`RunData` (decoded, not yet framed).

Errors name the file, the place in it and what was wrong (:class:`tauk.LoadError`). In non-strict mode a problem
confined to one simulation skips that simulation and is counted in the :class:`tauk.LoadReport`.
"""

from __future__ import annotations

import ast
import json
import mmap
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io import structs as S

_LOC = re.compile(r"^(.*?)(?: - at `(\$[^`]*)`)?$", re.S)
_BYTE = re.compile(r"\(byte (\d+)\)")


@dataclass
class RunData:
    """Decoded content of one results source (monolithic file, directory, wrapper or τ-bench list)."""

    path: Path
    format: str  # tau2 | tau2-dir | tau2-wrapper | taubench
    format_version: str | None
    timestamp: str | None = None
    info: S.Info | None = None
    tasks: list[S.Task] = field(default_factory=list)
    simulations: list[S.LightSimulation] = field(default_factory=list)
    # positions in the source of each kept simulation (index in list, or file path for the directory format)
    sim_sources: list[Any] = field(default_factory=list)
    tb_records: list[S.TBLightRecord] = field(default_factory=list)
    wrapper: dict[str, Any] = field(default_factory=dict)
    stringified_tool_calls: bool = False


def _err_location(exc: Exception, prefix: str = "$") -> tuple[str | None, str]:
    """Split a msgspec error into (location, message)."""
    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):  # malformed or truncated JSON: a byte offset
        m = _BYTE.search(text)
        return (f"byte {m.group(1)}" if m else "end of file"), text
    m2 = _LOC.match(text)
    msg, loc = (m2.group(1), m2.group(2)) if m2 else (text, None)
    if loc is not None and prefix != "$":
        loc = prefix + loc[1:]
    return loc or (prefix if prefix != "$" else None), msg


def _raise(path: Path, exc: Exception, prefix: str = "$") -> LoadError:
    loc, msg = _err_location(exc, prefix)
    return LoadError(str(path), loc, msg)


def read_bytes(path: Path) -> bytes | mmap.mmap:
    """The file's bytes; large files are memory-mapped (no copy, pages shared with the OS cache)."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < (1 << 20):
                return f.read()
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise LoadError(str(path), None, f"cannot read file: {exc.strerror or exc}") from None


def first_char(data: bytes) -> str:
    for b in data[:4096]:
        c = chr(b)
        if not c.isspace() and c != "\ufeff":
            return c
    return ""


_LIGHT = S.decoder(S.LightResults)
_RAW = S.decoder(S.RawResults)
_SIM = S.decoder(S.LightSimulation)
_DIR = S.decoder(S.DirectoryResults)
_TB_LIGHT = S.decoder(list[S.TBLightRecord])
_TB_RAW = S.decoder(list[msgspec.Raw])
_TB_REC = S.decoder(S.TBLightRecord)
_PEEK = S.decoder(S._Peek)


def _version(has_index: bool, declared: Any) -> str:
    if declared is not None:
        return str(declared)
    return ">=1.0" if has_index else "<1.0"


def parse_tool_calls_string(text: str) -> list[dict] | None:
    """Parse a tool-calls list written as a Python repr (``"[{'id': ..., 'arguments': {...}}]"``) or JSON.

    Only literals are accepted (``ast.literal_eval``, never ``eval``); returns None for ``"None"``/empty and raises
    ValueError for anything that is not a list of dicts.
    """
    s = text.strip()
    if s in ("", "None", "null", "[]"):
        return None if s != "[]" else []
    try:
        value = msgspec.json.decode(s)
    except msgspec.DecodeError:
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise ValueError(f"tool_calls string is neither JSON nor a Python literal: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"tool_calls string does not hold a list of objects (got {type(value).__name__})")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:  # a set, bytes, complex, a non-string key ...
        raise ValueError(f"tool_calls string holds a value JSON cannot represent: {exc}") from None
    return value


def _check_duplicates(run: RunData, strict: bool, report: LoadReport) -> None:
    seen: dict[str, int] = {}
    keep_sims, keep_src = [], []
    for i, sim in enumerate(run.simulations):
        sid = str(sim.id)
        src = run.sim_sources[i]
        if sid in seen:
            where = f"$.simulations[{src}].id" if isinstance(src, int) else f"{src}: $.id"
            msg = f"duplicate simulation id {sid!r} (first at simulations[{seen[sid]}])"
            if strict:
                raise LoadError(str(run.path), where, msg)
            report.add(str(run.path), where, "duplicate_simulation_id", msg + "; later copy skipped", skipped=1)
            continue
        seen[sid] = i
        keep_sims.append(sim)
        keep_src.append(src)
    run.simulations, run.sim_sources = keep_sims, keep_src


def decode_each(path: Path, raws: list[msgspec.Raw], dec: msgspec.json.Decoder, prefix: str, what: str,
                strict: bool, report: LoadReport) -> tuple[list[Any], list[int]]:  # fmt: skip
    """Decode items one by one so that an error names its item (``prefix`` + index); non-strict skips it."""
    items, srcs = [], []
    for i, raw in enumerate(raws):
        try:
            items.append(dec.decode(raw))
            srcs.append(i)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            err = _raise(path, exc, f"{prefix}[{i}]")
            if strict:
                raise err from None
            report.add(str(path), err.location, f"invalid_{what}", f"{err.message}; {what} skipped", skipped=1)
    return items, srcs


def read_tau2_file(path: Path, data: bytes, strict: bool, report: LoadReport) -> RunData:
    """A monolithic τ²-bench results file (or a custom wrapper holding simulations)."""
    try:
        top = _LIGHT.decode(data)
        sims = top.simulations
        srcs = list(range(len(sims))) if sims is not None else []
    except msgspec.ValidationError as exc:
        # locate the problem: re-decode with simulations left raw
        try:
            rtop = _RAW.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc2:
            raise _raise(path, exc2) from None
        if rtop.simulations is None:
            raise _raise(path, exc) from None
        sims, srcs = decode_each(path, rtop.simulations, _SIM, "$.simulations", "simulation", strict, report)
        top = rtop
    except msgspec.DecodeError as exc:
        raise _raise(path, exc) from None

    if top.info is None and top.simulations is None:
        raise LoadError(str(path), "$", "not a τ²-bench results file: neither 'info' nor 'simulations' present")
    if top.simulations is None:
        raise LoadError(str(path), "$.simulations", "missing required field 'simulations'")

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
    )
    if not run.simulations:
        report.add(str(path), "$.simulations", "zero_simulations", "the file holds no simulations")
    _check_duplicates(run, strict, report)
    _check_stringified(run, strict, report)
    return run


def _check_stringified(run: RunData, strict: bool, report: LoadReport) -> None:
    """Tool calls written as a string (a Python repr): count them, and check that each parses as a literal."""
    null = S.NULL
    n = 0
    for sim, src in zip(run.simulations, run.sim_sources):
        for j, tc in enumerate([m.tool_calls for m in sim.messages or ()]):
            if tc == null or not len(tc) or memoryview(tc)[0] != 0x22:  # '"': a string where a list belongs
                continue
            n += 1
            try:
                parse_tool_calls_string(msgspec.json.decode(tc, type=str))
            except ValueError as exc:
                where = f"$.simulations[{src}].messages[{j}].tool_calls"
                if strict:
                    raise LoadError(str(run.path), where, str(exc)) from None
                report.add(str(run.path), where, "unparsable_tool_calls", f"{exc}; these tool calls are skipped")
                warnings.warn(f"{run.path} at {where}: {exc}; these tool calls are skipped", LoadWarning,
                              stacklevel=5)  # fmt: skip
    if n:
        run.stringified_tool_calls = True
        msg = (
            f"{n} message(s) carry tool_calls as a string (Python repr); parsed as literals, never evaluated; "
            "string 'None' contents read as null"
        )
        report.add(str(run.path), "$.simulations[*].messages[*].tool_calls", "stringified_tool_calls", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)


def read_tau2_dir(path: Path, strict: bool, report: LoadReport) -> RunData:
    """The v1.0 directory format: ``results.json`` + ``simulations/<id>.json``."""
    rpath = path / "results.json"
    data = read_bytes(rpath)
    try:
        top = _DIR.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _raise(rpath, exc) from None
    sim_dir = path / "simulations"
    files = sorted(sim_dir.glob("*.json")) if sim_dir.is_dir() else []
    sims, srcs = [], []
    for f in files:
        try:
            sims.append(_SIM.decode(read_bytes(f)))
            srcs.append(str(f.relative_to(path)))
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            err = _raise(f, exc)
            if strict:
                raise err from None
            report.add(str(f), err.location, "invalid_simulation", err.message + "; simulation skipped", skipped=1)
    if top.simulation_index is not None:
        idx = top.simulation_index
        if isinstance(idx, dict):
            ids = {str(k) for k in idx}
        else:
            ids = set()
            for raw in idx:
                v = msgspec.json.decode(raw)
                ids.add(str(v.get("id") if isinstance(v, dict) else v))
        on_disk = {f.stem for f in files}
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
    )
    if not sims:
        report.add(str(path), "simulations/", "zero_simulations", "the directory holds no simulation files")
    _check_duplicates(run, strict, report)
    return run


def read_taubench(path: Path, data: bytes, strict: bool, report: LoadReport) -> RunData:
    """A τ-bench (v1) list of trajectories."""
    try:
        recs = _TB_LIGHT.decode(data)
        srcs = list(range(len(recs)))
    except msgspec.ValidationError:
        try:
            raws = _TB_RAW.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc2:
            raise _raise(path, exc2) from None
        recs, srcs = decode_each(path, raws, _TB_REC, "$", "record", strict, report)
    except msgspec.DecodeError as exc:
        raise _raise(path, exc) from None
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
    return RunData(path=path, format="taubench", format_version=None, tb_records=keep, sim_sources=keep_src)


def read_source(path: Path, strict: bool, report: LoadReport) -> RunData:
    """Read a results file or directory, detecting its shape."""
    if path.is_dir():
        if (path / "results.json").exists():
            return read_tau2_dir(path, strict, report)
        raise LoadError(str(path), None, "a directory without results.json is not a directory-format run")
    data = read_bytes(path)
    c = first_char(data)
    if c == "{":
        return read_tau2_file(path, data, strict, report)
    if c == "[":
        return read_taubench(path, data, strict, report)
    if c == "":
        raise LoadError(str(path), "byte 0", "empty file")
    raise LoadError(
        str(path), "byte 0", f"top level must be a JSON object (τ²-bench) or array (τ-bench), found {c!r}"
    )


def looks_like_results(path: Path) -> bool:
    """Cheap check used when scanning folders: is this JSON file a results file at all?"""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    c = first_char(data)
    if c == "{":
        try:
            p = _PEEK.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return True  # let the real reader explain what is wrong
        return len(bytes(p.simulations)) > 0
    if c == "[":
        try:
            raws = _TB_RAW.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            return True
        if not raws:
            return False
        try:
            first = msgspec.json.decode(raws[0])
        except msgspec.DecodeError:
            return True
        return isinstance(first, dict) and "traj" in first
    return False

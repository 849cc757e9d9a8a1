"""The ``messages`` and ``tool_calls`` frames: the full decode of message bodies, done on first use.

Contracts: :data:`tauk.io.columns.MESSAGES` and :data:`tauk.io.columns.TOOL_CALLS`. A simulation whose messages
cannot be decoded raises :class:`tauk.LoadError` under strict loading, else is skipped and reported
(``invalid_messages``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import polars as pl

from tauk.errors import LoadError, LoadReport
from tauk.io import structs as S
from tauk.io.columns import MESSAGES, TOOL_CALLS
from tauk.io.frames._build import (
    canonical_json,
    new_columns,
    raw_text,
    taubench_simulation_id,
    to_float,
    to_frame,
    to_int,
)
from tauk.io.read import _TB_RAW, DECODE_ERRORS, RunData, error_location, parse_tool_calls_string, read_again

__all__ = ["build_messages"]

_FULL = S.decoder(S.FullResults)
_FULL_RAW = S.decoder(S.FullRawResults)
_FULL_SIM = S.decoder(S.FullSimulation)
_TB_FULL = S.decoder(list[S.TBFullRecord])
_TB_FULL_REC = S.decoder(S.TBFullRecord)


def _unreadable_messages(report: LoadReport, strict: bool, path: object, location: str, exc: Exception,
                         raw: Any = None, base: int | None = None) -> None:  # fmt: skip
    """Messages that cannot be decoded: a LoadError under strict loading, else skipped and reported."""
    where, what = error_location(exc, location, raw, base)
    if strict:
        raise LoadError(str(path), where, f"{what} (load with strict=False to skip such simulations' messages)")
    report.add(str(path), where, "invalid_messages", f"{what}; messages skipped", skipped=1)


def _full_simulations(
    run: RunData, report: LoadReport, strict: bool
) -> list[tuple[str, list[S.Message] | None]]:
    """(simulation_id, messages) for every kept simulation of a τ²-bench run."""
    if run.format == "tau2-dir":
        out = []
        for sim, src in zip(run.simulations, run.sim_sources):
            f = run.path / src
            try:
                full = _FULL_SIM.decode(read_again(run, f))
                out.append((str(sim.id), full.messages))
            except DECODE_ERRORS as exc:
                _unreadable_messages(report, strict, f, "$.messages", exc, read_again(run, f), None)
                out.append((str(sim.id), None))
        return out
    data = read_again(run, run.path)
    kept = list(zip(run.simulations, run.sim_sources))
    try:
        if run.spans is not None:
            raise RecursionError  # known not to decode whole
        full_sims = _FULL.decode(data).simulations or []
        return [(str(sim.id), full_sims[i].messages) for sim, i in kept]
    except DECODE_ERRORS:
        if run.spans is not None:
            raws = [memoryview(data)[a:b] for a, b in run.spans]
        else:
            raws = _FULL_RAW.decode(data).simulations or []
        out = []
        for sim, i in kept:
            try:
                out.append((str(sim.id), _FULL_SIM.decode(raws[i]).messages))
            except DECODE_ERRORS as exc:
                base = run.spans[i][0] if run.spans is not None else None
                _unreadable_messages(report, strict, run.path, f"$.simulations[{i}]", exc, raws[i], base)
                out.append((str(sim.id), None))
        return out


def _args_text(args: Any) -> str:
    if args is None:
        return "{}"
    if isinstance(args, str):
        try:
            args = msgspec.json.decode(args)  # integers of any size (orjson reads those beyond 64 bits as floats)
        except msgspec.DecodeError:
            return args
    return canonical_json(args)


def _tool_call_dicts(tc: Any) -> tuple[list[dict], bool]:
    if tc is None:
        return [], False
    if isinstance(tc, str):
        try:
            return [
                {"id": d.get("id"), "name": d.get("name"), "arguments": d.get("arguments"),
                 "requestor": d.get("requestor")}
                for d in parse_tool_calls_string(tc) or ()
            ], True  # fmt: skip
        except ValueError:  # reported (or raised, when strict) by the loader when it read the file
            return [], True
    return [{"id": t.id, "name": t.name, "arguments": t.arguments, "requestor": t.requestor} for t in tc], False


def _err(v: Any) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1", "yes")


def build_messages(
    runs: Sequence[RunData], run_ids: Sequence[str], report: LoadReport, progress: bool = False, strict: bool = True
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ``messages`` and ``tool_calls`` frames (decoding every message body).

    Parameters
    ----------
    runs : sequence of RunData
        The decoded sources; their files are read again for the message bodies.
    run_ids : sequence of str
        Their run ids.
    report : LoadReport
        Where unreadable messages are reported (non-strict loading).
    progress : bool
        Show a progress bar over files.
    strict : bool
        Raise :class:`tauk.LoadError` on unreadable messages instead of skipping them.

    Returns
    -------
    (polars.DataFrame, polars.DataFrame)
        ``messages`` (one row per message) and ``tool_calls`` (one row per tool call).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> messages, calls = build_messages([run], ["r"], LoadReport())
    >>> messages.columns[:4], calls["parsed_from_string"].any()
    (['run_id', 'simulation_id', 'message_idx', 'role'], False)
    """
    from tqdm.auto import tqdm

    message_cols, call_cols = new_columns(MESSAGES), new_columns(TOOL_CALLS)
    it = zip(runs, run_ids)
    if progress and len(runs) > 1:
        it = tqdm(list(it), desc="messages", unit="file")
    for run, rid in it:
        if run.format == "taubench":
            _taubench_messages(message_cols, call_cols, run, rid, report, strict)
            continue
        repair_none = run.stringified_tool_calls
        for sid, messages in _full_simulations(run, report, strict):
            if not messages:
                continue
            results: dict[str, tuple[str | None, bool | None]] = {}
            for msg in messages:
                if msg.role == "tool" and msg.id is not None and msg.id not in results:
                    results[msg.id] = (msg.content, _err(msg.error))
            call_idx = 0
            for i, msg in enumerate(messages):
                content = msg.content
                if repair_none and content == "None":
                    content = None
                calls, from_str = _tool_call_dicts(msg.tool_calls)
                message_cols["run_id"].append(rid)
                message_cols["simulation_id"].append(sid)
                message_cols["message_idx"].append(i)
                message_cols["role"].append(msg.role)
                message_cols["content"].append(content)
                message_cols["turn_idx"].append(to_int(msg.turn_idx))
                message_cols["timestamp"].append(msg.timestamp)
                message_cols["cost"].append(to_float(msg.cost))
                message_cols["n_tool_calls"].append(len(calls))
                message_cols["tool_call_id"].append(msg.id if msg.role == "tool" else None)
                message_cols["requestor"].append(msg.requestor)
                message_cols["is_error"].append(_err(msg.error) if msg.role == "tool" else None)
                message_cols["usage"].append(raw_text(msg.usage))
                message_cols["raw_data"].append(raw_text(msg.raw_data))
                for call in calls:
                    res = results.get(call["id"]) if call["id"] is not None else None
                    call_cols["run_id"].append(rid)
                    call_cols["simulation_id"].append(sid)
                    call_cols["message_idx"].append(i)
                    call_cols["call_idx"].append(call_idx)
                    call_cols["tool_call_id"].append(call["id"])
                    call_cols["name"].append(call["name"])
                    call_cols["arguments"].append(_args_text(call["arguments"]))
                    call_cols["requestor"].append(call["requestor"])
                    call_cols["role"].append(msg.role)
                    call_cols["result"].append(res[0] if res else None)
                    call_cols["is_error"].append(res[1] if res else None)
                    call_cols["parsed_from_string"].append(from_str)
                    call_idx += 1
    return to_frame(message_cols, MESSAGES), to_frame(call_cols, TOOL_CALLS)


def _taubench_messages(message_cols: dict[str, list], call_cols: dict[str, list], run: RunData, rid: str,
                       report: LoadReport, strict: bool) -> None:  # fmt: skip
    data = read_again(run, run.path)
    try:
        if run.spans is not None:
            raise RecursionError  # known not to decode whole
        recs = _TB_FULL.decode(data)
    except DECODE_ERRORS:
        if run.spans is not None:
            recs = [memoryview(data)[a:b] for a, b in run.spans]
        else:
            recs = _TB_RAW.decode(data)
    for pos in run.sim_sources:
        r = recs[pos]
        if not isinstance(r, S.TBFullRecord):
            try:
                r = _TB_FULL_REC.decode(r)
            except DECODE_ERRORS as exc:
                base = run.spans[pos][0] if run.spans is not None else None
                _unreadable_messages(report, strict, run.path, f"$[{pos}]", exc, r, base)
                continue
        sid = taubench_simulation_id(r.task_id, r.trial, pos)
        traj = r.traj or []
        results = {msg.tool_call_id: msg.content for msg in traj if msg.role == "tool" and msg.tool_call_id}
        call_idx = 0
        for i, msg in enumerate(traj):
            calls = msg.tool_calls or []
            message_cols["run_id"].append(rid)
            message_cols["simulation_id"].append(sid)
            message_cols["message_idx"].append(i)
            message_cols["role"].append(msg.role)
            message_cols["content"].append(msg.content)
            message_cols["turn_idx"].append(None)
            message_cols["timestamp"].append(None)
            message_cols["cost"].append(None)
            message_cols["n_tool_calls"].append(len(calls))
            message_cols["tool_call_id"].append(msg.tool_call_id)
            message_cols["requestor"].append(None)
            message_cols["is_error"].append(None)
            message_cols["usage"].append(None)
            message_cols["raw_data"].append(None)
            for call in calls:
                call_cols["run_id"].append(rid)
                call_cols["simulation_id"].append(sid)
                call_cols["message_idx"].append(i)
                call_cols["call_idx"].append(call_idx)
                call_cols["tool_call_id"].append(call.id)
                call_cols["name"].append(call.function.name)
                call_cols["arguments"].append(_args_text(call.function.arguments))
                call_cols["requestor"].append("assistant")
                call_cols["role"].append(msg.role)
                call_cols["result"].append(results.get(call.id))
                call_cols["is_error"].append(None)
                call_cols["parsed_from_string"].append(False)
                call_idx += 1

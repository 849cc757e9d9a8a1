"""The ``messages`` and ``tool_calls`` frames: the full decode of message bodies, done on first use.

Contracts: :data:`tauk.io.columns.MESSAGES` and :data:`tauk.io.columns.TOOL_CALLS`. A simulation whose messages
cannot be decoded raises :class:`tauk.LoadError` under strict loading, else is skipped and reported
(``invalid_messages``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import polars as pl

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io import structs as S
from tauk.io.columns import MESSAGES, TOOL_CALLS
from tauk.io.files import record_message, record_shortfall, release
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

__all__ = ["BATCH", "build_messages", "iter_messages"]

_FULL_RAW = S.decoder(S.FullRawResults)
_FULL_SIM = S.decoder(S.FullSimulation)
_TB_FULL_REC = S.decoder(S.TBFullRecord)


def _unreadable_messages(report: LoadReport, strict: bool, path: object, location: str, exc: Exception,
                         raw: Any = None, base: int | None = None) -> None:  # fmt: skip
    """Messages that cannot be decoded: a LoadError under strict loading, else skipped and reported."""
    where, what = error_location(exc, location, raw, base)
    if strict:
        raise LoadError(str(path), where, f"{what} (load with strict=False to skip such simulations' messages)")
    report.add(str(path), where, "invalid_messages", f"{what}; messages skipped", skipped=1)


def _fits(raw: Any, report: LoadReport, strict: bool, path: object, location: str) -> bool:
    """Whether the message bodies of one simulation (``raw``: its bytes) can be decoded in the memory and address
    space left; if not, a :class:`LoadError` (strict) or a report line and its messages skipped — never a decode
    that would crash the process."""
    short = record_shortfall(len(raw))
    if short is None:
        return True
    msg = record_message(len(raw), short)
    if strict:
        raise LoadError(str(path), location, msg)
    report.add(str(path), location, "not_enough_memory", f"{msg}; its messages skipped", skipped=1)
    return False


def _full_simulations(run: RunData, report: LoadReport, strict: bool) -> Iterator[tuple[str, list[S.Message] | None]]:
    """(simulation_id, messages) for every kept simulation of a τ²-bench run, decoded one simulation at a time
    (the file's simulations are cut into raw views first, so no more than one is decoded at once)."""
    if run.format == "tau2-dir":
        for sim, src in zip(run.simulations, run.sim_sources):
            f = run.path / src
            data = read_again(run, f)
            if not _fits(data, report, strict, f, "$.messages"):
                yield str(sim.id), None
                continue
            try:
                yield str(sim.id), _whole_turns(_FULL_SIM.decode(data).messages)
            except DECODE_ERRORS as exc:
                _unreadable_messages(report, strict, f, "$.messages", exc, data, None)
                yield str(sim.id), None
        return
    data = read_again(run, run.path)
    if run.spans is not None:
        raws: Sequence[Any] = [memoryview(data)[a:b] for a, b in run.spans]
    else:
        try:
            raws = (_TB_RAW.decode(data) if run.format == "tau2-list" else _FULL_RAW.decode(data).simulations) or []
        except DECODE_ERRORS:  # the light pass decoded it: a race with the file; read_again checked its identity
            raws = []
    for n, (sim, i) in enumerate(zip(run.simulations, run.sim_sources), start=1):
        if n % 256 == 0:
            release(data)  # the pages of the simulations already decoded need not stay resident
        if not _fits(raws[i], report, strict, run.path, f"$.simulations[{i}]"):
            yield str(sim.id), None
            continue
        try:
            yield str(sim.id), _whole_turns(_FULL_SIM.decode(raws[i]).messages)
        except DECODE_ERRORS as exc:
            base = run.spans[i][0] if run.spans is not None else None
            _unreadable_messages(report, strict, run.path, f"{run.sims_path}[{i}]", exc, raws[i], base)
            yield str(sim.id), None


def _whole_turns(messages: list[S.Message] | None) -> list[S.Message] | None:
    """``turn_idx`` as τ²-bench's models read it: a whole float (``3.0``) or a numeric string is that integer; a
    fraction or other text raises a ``msgspec.ValidationError`` naming its place (reported like any message that
    does not decode), never truncated or nulled in silence."""
    for j, msg in enumerate(messages or ()):  # the places are spelled only where a value needs a word
        v = msg.turn_idx
        if v is not None and type(v) is not int:
            msg.turn_idx = _whole_turn(v, f"$.messages[{j}]")
        for k, t in enumerate(msg.tool_messages or ()):
            v = t.turn_idx
            if v is not None and type(v) is not int:
                t.turn_idx = _whole_turn(v, f"$.messages[{j}].tool_messages[{k}]")
    return messages


def _whole_turn(v: Any, where: str) -> int:
    try:
        x = float(v)
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or not x.is_integer():
        raise msgspec.ValidationError(f"Expected an integer, got {v!r} - at `{where}.turn_idx`")
    return int(v) if type(v) is str and v.strip().lstrip("+-").isdigit() else int(x)


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


def flatten_messages(messages: list[S.Message]) -> list[S.Message]:
    """The message list with each ``MultiToolMessage`` (``{"role": "tool", "tool_messages": [...]}``) replaced by the
    tool messages it wraps, in order (as upstream's own trajectories hold them).

    Examples
    --------
    >>> m = msgspec.json.decode(b'[{"role": "user", "content": "hi"}, {"role": "tool", "tool_messages": '
    ...                         b'[{"role": "tool", "id": "a"}, {"role": "tool", "id": "b"}]}]', type=list[S.Message])
    >>> [(x.role, x.id) for x in flatten_messages(m)]
    [('user', None), ('tool', 'a'), ('tool', 'b')]
    """
    if all(m.tool_messages is None for m in messages):
        return messages
    out: list[S.Message] = []
    for m in messages:
        if m.tool_messages is None:
            out.append(m)
        else:
            out.extend(flatten_messages(m.tool_messages))
    return out


BATCH = 2000
"""Simulations whose messages are turned into frames at a time (bounds the Python objects alive at once)."""


def iter_messages(runs: Sequence[RunData], run_ids: Sequence[str], report: LoadReport, *, strict: bool = True,
                  batch: int = BATCH, progress: bool = False,
                  columns: Sequence[str] | None = None) -> Iterator[tuple[str, pl.DataFrame, pl.DataFrame]]:  # fmt: skip
    """``(run_id, messages, tool_calls)`` frames, ``batch`` simulations at a time, run by run (every batch holds
    whole simulations, in file order). Memory stays near the file plus one batch of decoded objects. ``columns``:
    only these columns of ``messages`` (the provider's ``usage`` and ``raw_data``, most of a file's bytes, are then
    not even copied out of the file unless asked for).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> [m["simulation_id"].n_unique() for _, m, _ in iter_messages([run], ["r"], LoadReport(), batch=40)]
    [40, 40, 20]
    """
    from tqdm.auto import tqdm

    it: Any = zip(runs, run_ids)
    if progress and len(runs) > 1:
        it = tqdm(list(it), desc="messages", unit="file")
    raw = columns is None or "usage" in columns or "raw_data" in columns

    def frames(cols: list[dict[str, list]]) -> tuple[pl.DataFrame, pl.DataFrame]:
        messages = to_frame(cols[0], MESSAGES)
        return (messages if columns is None else messages.select(columns)), to_frame(cols[1], TOOL_CALLS)

    for run, rid in it:
        cols = [new_columns(MESSAGES), new_columns(TOOL_CALLS)]
        n = 0
        rows = _taubench_rows(cols, run, rid, report, strict) if run.format == "taubench" else \
            _tau2_rows(cols, run, rid, report, strict, raw)  # fmt: skip
        for _ in rows:
            n += 1
            if n == batch:
                yield rid, *frames(cols)
                cols[0], cols[1] = new_columns(MESSAGES), new_columns(TOOL_CALLS)
                n = 0
        if n:
            yield rid, *frames(cols)


def build_messages(
    runs: Sequence[RunData], run_ids: Sequence[str], report: LoadReport, progress: bool = False, strict: bool = True
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ``messages`` and ``tool_calls`` frames (decoding every message body, :data:`BATCH` simulations at a
    time: see :func:`iter_messages`).

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
    parts = list(iter_messages(runs, run_ids, report, strict=strict, progress=progress))
    if not parts:
        return to_frame(new_columns(MESSAGES), MESSAGES), to_frame(new_columns(TOOL_CALLS), TOOL_CALLS)
    messages = pl.concat([m for _, m, _ in parts], rechunk=False)
    calls = pl.concat([c for _, _, c in parts], rechunk=False)
    return messages, calls


def _tau2_rows(cols: list[dict[str, list]], run: RunData, rid: str, report: LoadReport, strict: bool,
               raw: bool = True) -> Iterator[None]:  # fmt: skip
    """Append one τ²-bench simulation's messages and tool calls to ``cols`` (the current batch), then yield
    (``raw=False``: ``usage`` and ``raw_data`` left null)."""
    repair_none = run.stringified_tool_calls
    odd = _Spellings()
    for sid, messages in _full_simulations(run, report, strict):
        if not messages:
            yield
            continue
        messages = flatten_messages(messages)
        message_cols, call_cols = cols
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
            if msg.role not in _ROLES:
                odd.roles[str(msg.role)] = odd.roles.get(str(msg.role), 0) + 1
            if not from_str:
                for call in calls:
                    if call["arguments"] is None:
                        odd.no_args += 1
                    elif isinstance(call["arguments"], str):
                        odd.text_args += 1
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
            message_cols["usage"].append(raw_text(msg.usage) if raw else None)
            message_cols["raw_data"].append(raw_text(msg.raw_data) if raw else None)
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
        yield
    odd.report(run, report)


_ROLES = ("system", "user", "assistant", "tool")


class _Spellings:
    """Message spellings τ²-bench's message models refuse but tauk reads, counted over one run and reported once
    (a report line and a warning, in both modes): a role not among ``system / user / assistant / tool`` (its
    message is neither the agent's text nor a pooled tool call), a tool call whose ``arguments`` is missing or null
    (read as ``{}``) or a JSON text (read as the object it holds)."""

    def __init__(self) -> None:
        self.roles: dict[str, int] = {}
        self.no_args = 0
        self.text_args = 0

    def report(self, run: RunData, report: LoadReport) -> None:
        parts = []
        if self.roles:
            shown = ", ".join(f"{r!r} ({n})" for r, n in self.roles.items())
            parts.append(("unknown_message_role", f"messages with a role τ²-bench does not know: {shown} — they count "
                          "neither as the agent's text (COMMUNICATE) nor for their tool calls (ACTION)"))  # fmt: skip
        if self.no_args:
            parts.append(("tool_call_without_arguments", f"{self.no_args} tool call(s) without arguments (missing or "
                          "null): read as {}"))  # fmt: skip
        if self.text_args:
            parts.append(("tool_call_arguments_as_text", f"{self.text_args} tool call(s) whose arguments are a JSON "
                          "text: read as the object it holds"))  # fmt: skip
        path = str(run.path)
        for kind, what in parts:
            if any(i.kind == kind and i.path == path for i in report.issues):
                continue  # the messages are decoded once per column selection: reported once
            msg = f"{what} (τ²-bench's message models refuse these: its loader would not grade the file)"
            report.add(path, f"{run.sims_path}[*].messages", kind, msg)
            warnings.warn(f"{path}: {msg}", LoadWarning, stacklevel=2)


def _taubench_rows(cols: list[dict[str, list]], run: RunData, rid: str, report: LoadReport,
                   strict: bool) -> Iterator[None]:  # fmt: skip
    """Append one τ-bench record's messages and tool calls to ``cols`` (the current batch), then yield."""
    data = read_again(run, run.path)
    if run.spans is not None:
        recs: Sequence[Any] = [memoryview(data)[a:b] for a, b in run.spans]
    else:
        try:
            recs = _TB_RAW.decode(data)
        except DECODE_ERRORS:
            recs = []
    for n, pos in enumerate(run.sim_sources, start=1):
        if n % 256 == 0:
            release(data)
        if not _fits(recs[pos], report, strict, run.path, f"$[{pos}]"):
            yield
            continue
        try:
            r = _TB_FULL_REC.decode(recs[pos])
        except DECODE_ERRORS as exc:
            base = run.spans[pos][0] if run.spans is not None else None
            _unreadable_messages(report, strict, run.path, f"$[{pos}]", exc, recs[pos], base)
            yield
            continue
        message_cols, call_cols = cols
        light = run.tb_records[n - 1]  # its trial as the trials frame has it (numbered by the loader if missing)
        sid = taubench_simulation_id(light.task_id, light.trial, pos)
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
        yield

"""The full-duplex frames: ``ticks`` (one row per tick), ``utterances`` (each side's streamed chunks merged into
messages) and ``tick_tool_calls`` (the tool calls made in ticks), decoded from the files on first use.

Contracts: :data:`tauk.io.columns.TICKS`, :data:`tauk.io.columns.UTTERANCES`, :data:`tauk.io.columns.TICK_TOOL_CALLS`.

Upstream τ²-bench (HEAD) grades a full-duplex simulation from its ticks: COMMUNICATE reads the agent's chunks merged
into messages — consecutive chunks whose ``utterance_ids`` overlap form one message, their texts joined with a space
where a chunk's ids are disjoint from the previous one's; chunks that carry ``tool_calls`` are left out, a chunk
without ids stands alone — and ACTION every call in ``user_tool_calls`` and ``agent_tool_calls``. The
``utterances`` (``role == "assistant"``) and ``tick_tool_calls`` frames are those two inputs, so that
:func:`tauk.score` recomputes both components for voice runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import polars as pl

from tauk.errors import LoadError, LoadReport
from tauk.io import structs as S
from tauk.io.columns import TICK_TOOL_CALLS, TICKS, UTTERANCES
from tauk.io.files import release
from tauk.io.frames._build import canonical_json, new_columns, to_float, to_frame, to_int
from tauk.io.read import DECODE_ERRORS, RunData, error_location, read_again

__all__ = ["build_ticks", "merge_chunks"]

_TICK_SIM = S.decoder(S.TickSimulation)
_TICK_RAW = S.decoder(S.FullRawResults)
_RAW_LIST = S.decoder(list[msgspec.Raw])


def _unreadable(report: LoadReport, strict: bool, path: object, location: str, exc: Exception, raw: Any = None,
                base: int | None = None) -> None:  # fmt: skip
    where, what = error_location(exc, location, raw, base)
    if strict:
        raise LoadError(str(path), where, f"{what} (load with strict=False to skip such simulations' ticks)")
    report.add(str(path), where, "invalid_ticks", f"{what}; ticks skipped", skipped=1)


def _tick_simulations(run: RunData, report: LoadReport, strict: bool) -> Iterator[tuple[str, list[S.Tick]]]:
    """(simulation_id, ticks) of every kept simulation that recorded ticks, decoded one simulation at a time."""
    wanted = [(sim, src) for sim, src in zip(run.simulations, run.sim_sources) if sim.ticks is not None]
    if not wanted or run.format == "taubench":
        return
    if run.format == "tau2-dir":
        for sim, src in wanted:
            f = run.path / src
            data = read_again(run, f)
            try:
                yield str(sim.id), _TICK_SIM.decode(data).ticks or []
            except DECODE_ERRORS as exc:
                _unreadable(report, strict, f, "$.ticks", exc, data, None)
        return
    data = read_again(run, run.path)
    if run.spans is not None:
        raws: Sequence[Any] = [memoryview(data)[a:b] for a, b in run.spans]
    else:
        try:
            raws = (_RAW_LIST.decode(data) if run.format == "tau2-list" else _TICK_RAW.decode(data).simulations) or []
        except DECODE_ERRORS:
            raws = []
    for n, (sim, i) in enumerate(wanted, start=1):
        if n % 256 == 0:
            release(data)
        try:
            yield str(sim.id), _TICK_SIM.decode(raws[i]).ticks or []
        except DECODE_ERRORS as exc:
            base = run.spans[i][0] if run.spans is not None else None
            _unreadable(report, strict, run.path, f"{run.sims_path}[{i}]", exc, raws[i], base)


def merge_chunks(chunks: Sequence[tuple[int, S.Chunk]]) -> list[tuple[int, int, int, str | None]]:
    """Upstream's merge of one side's streamed chunks into messages: ``(first tick, last tick, chunks, content)``
    per message. ``chunks``: ``(tick index, chunk)`` in tick order, chunks carrying tool calls already left out.

    Examples
    --------
    >>> c = [S.Chunk(content="Your order", utterance_ids=["u1"]), S.Chunk(content="is", utterance_ids=["u1", "u2"]),
    ...      S.Chunk(content="shipped", utterance_ids=["u2"]), S.Chunk(content="Bye", utterance_ids=["u3"])]
    >>> merge_chunks(list(enumerate(c)))
    [(0, 2, 3, 'Your orderisshipped'), (3, 3, 1, 'Bye')]
    >>> c = [S.Chunk(content="one", utterance_ids=["a", "b"]), S.Chunk(content="two", utterance_ids=["b"]),
    ...      S.Chunk(content="three", utterance_ids=["a"]), S.Chunk(content="four")]
    >>> [m[3] for m in merge_chunks(list(enumerate(c)))]  # "three" overlaps the message, not the chunk before it
    ['onetwo three', 'four']
    """
    out: list[tuple[int, int, int, str | None]] = []
    group: list[tuple[int, S.Chunk]] = []
    ids: set[str] = set()
    for tick, chunk in chunks:
        chunk_ids = set(chunk.utterance_ids or ())
        if group and ids and chunk_ids and not ids.isdisjoint(chunk_ids):
            group.append((tick, chunk))
            ids |= chunk_ids
            continue
        if group:
            out.append(_merged(group))
        group, ids = [(tick, chunk)], chunk_ids
    if group:
        out.append(_merged(group))
    return out


def _merged(group: list[tuple[int, S.Chunk]]) -> tuple[int, int, int, str | None]:
    first, last = group[0][0], group[-1][0]
    if len(group) == 1:
        return first, last, 1, group[0][1].content
    parts: list[str] = []
    prev: set[str] = set()
    for _, chunk in group:
        text = chunk.content or ""
        if not text:
            continue
        ids = set(chunk.utterance_ids or ())
        if parts and ids and prev and ids.isdisjoint(prev):
            parts.append(" ")
        parts.append(text)
        prev = ids
    return first, last, len(group), "".join(parts)


def _err(v: Any) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1", "yes")


def _args(args: Any) -> str:
    if args is None:
        return "{}"
    if isinstance(args, str):
        try:
            args = msgspec.json.decode(args)
        except msgspec.DecodeError:
            return args
    return canonical_json(args)


def _rows(cols: list[dict[str, list]], rid: str, sid: str, ticks: list[S.Tick]) -> None:
    tick_cols, utt_cols, call_cols = cols
    results: dict[str, tuple[str | None, bool | None]] = {}
    for t in ticks:
        for m in (*(t.agent_tool_results or ()), *(t.user_tool_results or ())):
            if m.id is not None and m.id not in results:
                results[m.id] = (m.content, _err(m.error))
    sides: dict[str, list[tuple[int, S.Chunk]]] = {"assistant": [], "user": []}
    call_idx = 0
    for i, t in enumerate(ticks):
        a, u = t.agent_chunk, t.user_chunk
        tick_cols["run_id"].append(rid)
        tick_cols["simulation_id"].append(sid)
        tick_cols["tick_idx"].append(i)
        tick_cols["tick_id"].append(to_int(t.tick_id))
        tick_cols["timestamp"].append(t.timestamp)
        for side, chunk in (("agent", a), ("user", u)):
            tick_cols[f"{side}_content"].append(chunk.content if chunk is not None else None)
            tick_cols[f"{side}_utterance_ids"].append(list(chunk.utterance_ids) if chunk is not None
                                                      and chunk.utterance_ids is not None else None)  # fmt: skip
            tick_cols[f"{side}_speech"].append(chunk.contains_speech if chunk is not None else None)
            action = chunk.turn_taking_action if chunk is not None else None
            tick_cols[f"{side}_turn_action"].append(action.action if action is not None else None)
        tick_cols["user_transcript"].append(t.user_transcript)
        tick_cols["n_agent_tool_calls"].append(len(t.agent_tool_calls or ()))
        tick_cols["n_user_tool_calls"].append(len(t.user_tool_calls or ()))
        tick_cols["n_tool_results"].append(len(t.agent_tool_results or ()) + len(t.user_tool_results or ()))
        tick_cols["tick_duration_seconds"].append(to_float(t.tick_duration_seconds))
        tick_cols["wall_clock_duration_seconds"].append(to_float(t.wall_clock_duration_seconds))
        for role, chunk in (("assistant", a), ("user", u)):
            if chunk is not None and chunk.tool_calls is None:  # upstream leaves out chunks carrying tool calls
                sides[role].append((i, chunk))
        # upstream's order within a tick: the user's calls, then the agent's
        for role, calls, answers in (("user", t.user_tool_calls, t.user_tool_results),
                                     ("assistant", t.agent_tool_calls, t.agent_tool_results)):  # fmt: skip
            answers = answers or ()
            for k, c in enumerate(calls or ()):
                res = results.get(c.id) if c.id is not None else None
                call_cols["paired"].append(len(answers) == len(calls) and c.id is not None
                                           and answers[k].id == c.id)  # fmt: skip
                call_cols["run_id"].append(rid)
                call_cols["simulation_id"].append(sid)
                call_cols["tick_idx"].append(i)
                call_cols["call_idx"].append(call_idx)
                call_cols["tool_call_id"].append(c.id)
                call_cols["name"].append(c.name)
                call_cols["arguments"].append(_args(c.arguments))
                call_cols["requestor"].append(c.requestor if c.requestor is not None else role)
                call_cols["role"].append(role)
                call_cols["result"].append(res[0] if res else None)
                call_cols["is_error"].append(res[1] if res else None)
                call_idx += 1
    for role in ("assistant", "user"):
        merged = [m for m in merge_chunks(sides[role]) if m[3]]  # a message without text cannot be read
        for j, (first, last, n, content) in enumerate(merged):
            utt_cols["run_id"].append(rid)
            utt_cols["simulation_id"].append(sid)
            utt_cols["role"].append(role)
            utt_cols["utterance_idx"].append(j)
            utt_cols["first_tick_idx"].append(first)
            utt_cols["last_tick_idx"].append(last)
            utt_cols["n_chunks"].append(n)
            utt_cols["content"].append(content)


def build_ticks(runs: Sequence[RunData], run_ids: Sequence[str], report: LoadReport, *,
                strict: bool = True) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:  # fmt: skip
    """The ``ticks``, ``utterances`` and ``tick_tool_calls`` frames of the runs' full-duplex simulations (every
    simulation that recorded ``ticks``), decoding each simulation's ticks from its file.

    Parameters
    ----------
    runs, run_ids
        The decoded sources and their run ids (their files are read again).
    report : LoadReport
        Where unreadable ticks are reported (non-strict loading).
    strict : bool
        Raise :class:`tauk.LoadError` on unreadable ticks instead of skipping them.

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> [f.height for f in build_ticks([run], ["r"], LoadReport())]  # a text run has no ticks
    [0, 0, 0]
    """
    cols = [new_columns(TICKS), new_columns(UTTERANCES), new_columns(TICK_TOOL_CALLS)]
    for run, rid in zip(runs, run_ids):
        for sid, ticks in _tick_simulations(run, report, strict):
            _rows(cols, rid, sid, ticks)
    return to_frame(cols[0], TICKS), to_frame(cols[1], UTTERANCES), to_frame(cols[2], TICK_TOOL_CALLS)

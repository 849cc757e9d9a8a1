"""Checks on a decoded run: numbers written as text, duplicate simulation ids, tool calls written as a string."""

from __future__ import annotations

import ast
import json
import math
import warnings
from typing import TYPE_CHECKING, Any

import msgspec

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io import structs as S

if TYPE_CHECKING:  # pragma: no cover
    from tauk.io.read import RunData

__all__ = ["check_numbers", "check_duplicates", "check_stringified", "parse_tool_calls_string"]


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


_FLOATS = ("agent_cost", "user_cost", "duration")
_INTS = ("trial", "seed")


def _where(run: RunData, src: Any, name: str) -> str:
    return f"{run.sims_path}[{src}].{name}" if isinstance(src, int) else f"{src}: $.{name}"


def _coerce(value: Any, integer: bool) -> tuple[Any, str | None]:
    """(the number a value written as a string stands for, or None; what is wrong with it, or None)."""
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        return None, f"{value!r} is not a number"
    if integer:
        if not math.isfinite(number) or number != int(number):
            return None, f"{value!r} is not an integer"
        return int(number), None
    if not math.isfinite(number):
        return None, "nan"
    return number, None


def check_numbers(run: RunData, strict: bool, report: LoadReport) -> None:
    """Numbers written as strings (``"0.05"``, ``"1"``) are read as numbers; one that is not a number (``"abc"``,
    ``"$0.05"``) or not an integer where one belongs (a trial ``"1.9"``) raises a :class:`LoadError` naming its
    place under strict loading, else becomes null with a report entry. ``"nan"``/``"inf"`` costs and durations
    become null (left out of the means) and are counted in the report."""
    items = run.tb_records if run.format == "taubench" else run.simulations
    fields = (("trial", True),) if run.format == "taubench" else (*((f, False) for f in _FLOATS),
                                                                      *((f, True) for f in _INTS))  # fmt: skip
    non_finite: list[str] = []
    for item, src in zip(items, run.sim_sources):
        for name, integer in fields:
            value = getattr(item, name)
            if type(value) is not str:
                continue
            number, problem = _coerce(value, integer)
            setattr(item, name, number)
            if problem == "nan":
                non_finite.append(_where(run, src, name))
            elif problem is not None:
                where = _where(run, src, name)
                if strict:
                    raise LoadError(str(run.path), where, problem)
                report.add(str(run.path), where, "invalid_number", f"{problem}; read as null")
                warnings.warn(f"{run.path} at {where}: {problem}; read as null", LoadWarning, stacklevel=5)
    if non_finite:
        msg = f"{len(non_finite)} value(s) written as NaN or infinity read as null (left out of the means)"
        report.add(str(run.path), non_finite[0], "non_finite_number", msg)
        warnings.warn(f"{run.path}: {msg}, first at {non_finite[0]}", LoadWarning, stacklevel=5)


def check_duplicates(run: RunData, strict: bool, report: LoadReport) -> None:
    seen: dict[str, int] = {}
    keep_sims, keep_src = [], []
    for i, sim in enumerate(run.simulations):
        sid = str(sim.id)
        src = run.sim_sources[i]
        if sid in seen:
            where = f"{run.sims_path}[{src}].id" if isinstance(src, int) else f"{src}: $.id"
            msg = f"duplicate simulation id {sid!r} (first at simulations[{seen[sid]}])"
            if strict:
                raise LoadError(str(run.path), where, msg)
            report.add(str(run.path), where, "duplicate_simulation_id", msg + "; later copy skipped", skipped=1)
            continue
        seen[sid] = i
        keep_sims.append(sim)
        keep_src.append(src)
    run.simulations, run.sim_sources = keep_sims, keep_src


def check_stringified(run: RunData, strict: bool, report: LoadReport) -> None:
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
                where = f"{run.sims_path}[{src}].messages[{j}].tool_calls"
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
        report.add(str(run.path), f"{run.sims_path}[*].messages[*].tool_calls", "stringified_tool_calls", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)

"""What every frame builder shares: column accumulators, the final frame, value normalisation and the τ-bench key.

A builder collects one Python list per column (:func:`new_columns`), appends row values (or extends whole columns
at once), and turns the lists into a frame of exactly its contract's columns and dtypes (:func:`to_frame`).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import orjson
import polars as pl

from tauk.io.columns import LIST_STR, Column

__all__ = ["canonical_json", "check_huge_values", "new_columns", "raw_text", "taubench_simulation_id", "to_float",
           "to_frame", "to_int"]

_SEP = "\x1f"


def _str_lists(name: str, values: list[list[str] | None]) -> pl.Series:
    """A List(String) column, built via one joined string per row (much faster than nested conversion)."""
    if any(_SEP in x or x == "" for v in values if v for x in v):
        return pl.Series(name, values, dtype=LIST_STR, strict=False)
    joined = pl.Series(name, [None if v is None else _SEP.join(v) for v in values], dtype=pl.String)
    empty = pl.lit([], dtype=LIST_STR)
    return pl.select(pl.when(joined == "").then(empty).otherwise(joined.str.split(_SEP)).alias(name)).to_series()


def new_columns(contract: tuple[Column, ...]) -> dict[str, list]:
    """An empty list per column of ``contract``.

    Examples
    --------
    >>> from tauk.io.columns import EXPECTED_ACTIONS
    >>> list(new_columns(EXPECTED_ACTIONS))[:3]
    ['run_id', 'task_id', 'action_idx']
    """
    return {c.name: [] for c in contract}


_PLANS: dict[int, tuple[tuple[str, Any, bool], ...]] = {}


def _plan(contract: tuple[Column, ...]) -> tuple[tuple[str, Any, bool], ...]:
    """(name, dtype, is a list of strings) per column of a contract, worked out once: a plain dtype as its class,
    which Polars takes a few microseconds faster per column than an instance (small files have many columns)."""
    plan = _PLANS.get(id(contract))
    if plan is None:
        plan = _PLANS[id(contract)] = tuple(
            (c.name, c.dtype, True) if c.dtype == LIST_STR else (c.name, type(c.dtype), False) for c in contract
        )
    return plan


def to_frame(columns: dict[str, list], contract: tuple[Column, ...]) -> pl.DataFrame:
    """The frame of ``contract``: its columns in order, with its dtypes (a missing column is empty).

    Examples
    --------
    >>> from tauk.io.columns import EXPECTED_ACTIONS
    >>> cols = new_columns(EXPECTED_ACTIONS)
    >>> for name, value in zip(cols, ["r", "1", 0, None, "cancel", "{}", ["id"], None, "write"]):
    ...     cols[name].append(value)
    >>> to_frame(cols, EXPECTED_ACTIONS).row(0)
    ('r', '1', 0, None, 'cancel', '{}', ['id'], None, 'write')
    """
    series = []
    for name, dtype, is_list in _plan(contract):
        values = columns.get(name, [])
        if len(values) > 64 and values[-1] is None and values.count(None) == len(values):  # nothing recorded
            series.append(pl.Series(name, [None], dtype=dtype).new_from_index(0, len(values)))
        elif is_list:
            series.append(_str_lists(name, values))
        else:
            series.append(pl.Series(name, values, dtype=dtype, strict=False))
    return pl.DataFrame(series)


def to_int(v: Any) -> int | None:
    """An integer from an int, a bool, a numeric string or a float; None when there is none."""
    if v is None or isinstance(v, bool):
        return None if v is None else int(v)
    if isinstance(v, int):
        return v
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def to_float(v: Any) -> float | None:
    """A float from a number or a numeric string; None when there is none."""
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def raw_text(raw: msgspec.Raw | None) -> str | None:
    """The JSON text of an undecoded value (None for an absent value or JSON null)."""
    if raw is None:
        return None
    b = bytes(raw)
    return None if b == b"null" else b.decode("utf-8", "replace")


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys (the stored form of tool arguments).

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [2, 3]})
    '{"a":[2,3],"b":1}'
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # e.g. an integer beyond 64 bits, which the standard library writes exactly
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def taubench_simulation_id(task_id: Any, trial: Any, pos: int) -> str:
    """The simulation id of a τ-bench record: ``<task_id>-<trial>``, or ``<task_id>-#<position>`` without a trial.

    Examples
    --------
    >>> taubench_simulation_id(3, 1, 10), taubench_simulation_id(3, None, 10)
    ('3-1', '3-#10')
    """
    return f"{task_id}-{trial if trial is not None else f'#{pos}'}"


def check_huge_values(frame: pl.DataFrame, paths: dict[str, str], what: str) -> pl.DataFrame:
    """``frame``, unless one of its text values is so large (a megabyte or more: a file holding one huge string where
    an id or a reason belongs) that the work ahead cannot fit in the address space or memory left — then a
    :class:`tauk.LoadError` naming the file and the column, before Polars runs out and aborts the process.
    ``paths``: the file of each run id."""
    from tauk.errors import LoadError
    from tauk.io.files import record_shortfall

    text = [c for c, t in frame.schema.items() if t == pl.String]
    if not text or not frame.height:
        return frame
    sizes = frame.select(pl.col(text).str.len_bytes().max())
    col, big = max(sizes.row(0, named=True).items(), key=lambda kv: kv[1] or 0)
    short = record_shortfall(int(big or 0))
    if short is None:
        return frame
    rid = frame.filter(pl.col(col).str.len_bytes() == big)["run_id"][0] if "run_id" in frame.columns else None
    kind, needed, left = short
    raise LoadError(paths.get(rid, str(rid)), None, f"a {col} of {big / 1e6:,.0f} MB in its {what}: working with it "
                    f"needs about {needed / 1e6:,.0f} MB of {kind}, {max(left, 0) / 1e6:,.0f} MB left; free memory or "
                    "raise the limit")  # fmt: skip

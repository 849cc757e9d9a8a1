"""The vectorised COMMUNICATE and ACTION checks (SPEC §2.3), as joins and Polars expressions.

Conventions of this module: every simulation carries an integer ``_sid`` (its row in the trials frame being
scored), every task definition an integer ``_tid`` and every gold action an integer ``_gid``.  Nothing here loops
over simulations in Python; the only Python loop is :func:`explode_arguments`, which parses each *distinct*
argument JSON text once (data preparation) into (key, canonical value) rows.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import polars as pl

try:  # orjson is a declared dependency, but keep the kernel importable without it
    import orjson

    _fast_loads = orjson.loads
except ImportError:  # pragma: no cover
    _fast_loads = json.loads

# Python's str.isspace() set = Unicode White_Space (Rust regex \s) + the four ASCII separators \x1c-\x1f.
# has_text_content() in τ²-bench is `content is not None and content.strip() != ""`.
BLANK_RE = r"^[\s\x1c-\x1f]*$"

_nan_ids = itertools.count()


class _NaN(Exception):
    pass


def _canon(v: Any) -> Any:
    """Map a JSON value to a representative under Python equality: bool -> int, integral float -> int,
    recursively through lists and dicts (dict key order is removed later by ``sort_keys``)."""
    if v is True or v is False:
        return int(v)
    if isinstance(v, float):
        if v != v:  # NaN != NaN in Python: never equal to anything
            raise _NaN
        if math.isfinite(v) and v.is_integer():
            return int(v)
        return v
    if isinstance(v, dict):
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon(x) for x in v]
    return v


def canonical_value(v: Any) -> str:
    """Canonical JSON text of a value such that ``canonical_value(a) == canonical_value(b)`` iff ``a == b`` for
    JSON values under Python semantics (``1 == 1.0 == True``, ``"1" != 1``, list order matters, dict key order
    does not).  A value containing NaN gets a unique token (NaN equals nothing)."""
    try:
        return json.dumps(_canon(v), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except _NaN:
        return f"<NaN#{next(_nan_ids)}>"


def _parse_object(text: str | None) -> dict:
    if text is None:
        return {}
    try:
        d = _fast_loads(text)
    except Exception:
        try:
            d = json.loads(text)
        except ValueError:
            return {}
    return d if isinstance(d, dict) else {}


def explode_arguments(frame: pl.DataFrame, id_cols: list[str], col: str = "arguments") -> pl.DataFrame:
    """Long frame ``id_cols + [key, value]``: one row per top-level argument, ``value`` canonical JSON text.

    Each distinct argument text is parsed once (a list comprehension over the distinct texts: data preparation);
    the fan-out to rows is a join."""
    schema = {**{c: frame.schema[c] for c in id_cols}, "key": pl.String(), "value": pl.String()}
    if frame.height == 0:
        return pl.DataFrame(schema=schema)
    uniq = frame.get_column(col).unique()
    parsed = [_parse_object(s) for s in uniq.to_list()]
    table = pl.DataFrame(
        {
            col: uniq,
            "key": [list(d.keys()) for d in parsed],
            "value": [[canonical_value(x) for x in d.values()] for d in parsed],
        },
        schema={col: pl.String(), "key": pl.List(pl.String()), "value": pl.List(pl.String())},
    )
    table = table.explode(["key", "value"]).drop_nulls("key")
    out = frame.select(*id_cols, col).join(table, on=col, how="inner", nulls_equal=True).drop(col)
    return out.select(list(schema))


# ----------------------------------------------------------------------------------------------- COMMUNICATE
def communicate_long(
    sims: pl.DataFrame, task_info: pl.DataFrame, messages: pl.DataFrame
) -> pl.DataFrame:
    """One row per (simulation, communicate string): ``_sid, info_idx, info, met, message_idx``.

    sims: ``_sid, _tid, _respond_only`` for the simulations to check (``_respond_only``: τ-bench, only assistant
    messages without tool calls count).  task_info: ``_tid, communicate_info``.  messages: ``_sid, message_idx,
    role, content, n_tool_calls``.
    """
    infos = (
        task_info.select("_tid", "communicate_info")
        .filter(pl.col("communicate_info").list.len() > 0)
        .with_columns(info_idx=pl.int_ranges(pl.col("communicate_info").list.len()))
        .explode(["communicate_info", "info_idx"])
        .rename({"communicate_info": "info"})
        .filter(pl.col("info").is_not_null())
        .with_columns(pl.col("info_idx").cast(pl.Int64), _needle=pl.col("info").str.to_lowercase())
    )
    crit = sims.select("_sid", "_tid").join(infos, on="_tid", how="inner").drop("_tid")
    need = sims.select("_sid", "_respond_only").join(crit.select("_sid").unique(), on="_sid", how="semi")
    asst = (
        messages.select("_sid", "message_idx", "role", "content", "n_tool_calls")
        .join(need, on="_sid", how="inner")
        .filter(
            (pl.col("role") == "assistant")
            & pl.col("content").is_not_null()
            & ~pl.col("content").str.contains(BLANK_RE)
            & (~pl.col("_respond_only") | (pl.col("n_tool_calls").fill_null(0) == 0))
        )
        .select(
            "_sid",
            "message_idx",
            _hay=pl.col("content").str.to_lowercase().str.replace_all(",", "", literal=True),
        )
    )
    hits = (
        crit.select("_sid", "info_idx", "_needle")
        .join(asst, on="_sid", how="inner")
        .filter(pl.col("_hay").str.contains(pl.col("_needle"), literal=True))
        .group_by("_sid", "info_idx")
        .agg(message_idx=pl.col("message_idx").min())
    )
    return (
        crit.join(hits, on=["_sid", "info_idx"], how="left")
        .select(
            "_sid",
            "info_idx",
            "info",
            met=pl.col("message_idx").is_not_null(),
            message_idx=pl.col("message_idx").cast(pl.Int64),
        )
        .sort("_sid", "info_idx")
    )


# ---------------------------------------------------------------------------------------------------- ACTION
def action_long(
    sims: pl.DataFrame, golds: pl.DataFrame, calls: pl.DataFrame
) -> pl.DataFrame:
    """One row per (simulation, gold action): ``_sid, _gid, matched, call_idx`` (first matching call).

    sims: ``_sid, _tid``.  golds: ``_gid, _tid, name, arguments, compare_args``.  calls: ``_sid, call_idx, name,
    arguments`` (assistant and user calls pooled; ``requestor`` is not looked at).
    """
    sim_golds = sims.select("_sid", "_tid").join(
        golds.select("_gid", "_tid", "name", _cmp_null=pl.col("compare_args").is_null()), on="_tid", how="inner"
    ).drop("_tid")
    pairs = (
        sim_golds.join(calls.select("_sid", "call_idx", "name"), on=["_sid", "name"], how="inner")
        .drop("name")
        .with_row_index("_pid")
    )
    # Argument rows are needed only for calls and golds that form a candidate pair.
    pair_calls = calls.join(pairs.select("_sid", "call_idx").unique(), on=["_sid", "call_idx"], how="semi")
    call_kv = explode_arguments(pair_calls, ["_sid", "call_idx"]).rename({"value": "_cv"})
    gold_kv = explode_arguments(
        golds.join(pairs.select("_gid").unique(), on="_gid", how="semi"), ["_gid"]
    ).rename({"value": "_gv"})

    # compare_args null: keys = the call's own keys; the gold must hold each with an equal value.
    bad_own = (
        pairs.filter(pl.col("_cmp_null"))
        .select("_pid", "_sid", "call_idx", "_gid")
        .join(call_kv, on=["_sid", "call_idx"], how="inner")
        .join(gold_kv, on=["_gid", "key"], how="left")
        .filter(pl.col("_gv").is_null() | (pl.col("_gv") != pl.col("_cv")))
        .select("_pid")
    )
    # compare_args given: keys = compare_args; per key, absent on both sides or equal values.
    gold_keys = (
        golds.filter(pl.col("compare_args").is_not_null())
        .select("_gid", key=pl.col("compare_args"))
        .explode("key")
        .drop_nulls("key")
        .unique()
    )
    bad_listed = (
        pairs.filter(~pl.col("_cmp_null"))
        .select("_pid", "_sid", "call_idx", "_gid")
        .join(gold_keys, on="_gid", how="inner")
        .join(call_kv, on=["_sid", "call_idx", "key"], how="left")
        .join(gold_kv, on=["_gid", "key"], how="left")
        .filter(~pl.col("_cv").eq_missing(pl.col("_gv")))
        .select("_pid")
    )
    bad = pl.concat([bad_own, bad_listed]).unique()
    first = (
        pairs.join(bad, on="_pid", how="anti")
        .group_by("_sid", "_gid")
        .agg(call_idx=pl.col("call_idx").min())
    )
    return (
        sim_golds.select("_sid", "_gid")
        .join(first, on=["_sid", "_gid"], how="left")
        .select("_sid", "_gid", matched=pl.col("call_idx").is_not_null(), call_idx=pl.col("call_idx").cast(pl.Int64))
        .sort("_sid", "_gid")
    )

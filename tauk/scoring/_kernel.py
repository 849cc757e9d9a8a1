"""The vectorised COMMUNICATE and ACTION checks (docs/spec.md §2.3), as joins and Polars expressions.

Conventions of this module: every simulation carries an integer ``_sid`` (its row in the trials frame being
scored), every task definition an integer ``_tid`` and every gold action an integer ``_gid``.  Nothing here loops
over simulations in Python; the only Python loop is :func:`explode_arguments`, which parses each *distinct*
argument JSON text once (data preparation) into (key, canonical value) rows.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
from typing import Any

import msgspec
import numpy as np
import polars as pl

try:  # orjson is a declared dependency, but keep the kernel importable without it
    import orjson as _orjson
except ImportError:  # pragma: no cover
    _orjson = None

_decode_any = msgspec.json.Decoder().decode


_STR_TAG = "\x01"  # canonical text of a top-level string: tag + the string (JSON text never starts with \x01)

# Python's str.isspace() set = Unicode White_Space (Rust regex \s) + the four ASCII separators \x1c-\x1f.
# has_text_content() in τ²-bench is `content is not None and content.strip() != ""`.
BLANK_RE = r"^[\s\x1c-\x1f]*$"

_nan_ids = itertools.count()


@functools.lru_cache(maxsize=1)
def lowercase_mismatch_class() -> str | None:
    """A regex character class of the code points whose lower case differs between Python's ``str.lower`` (what
    τ²-bench runs) and Polars' ``str.to_lowercase``, with their lower cases on either side — or None when the two
    agree everywhere. They follow different Unicode versions (Python 3.11–3.12: 15.0; Polars 1.x: 16.0, which gave
    a lower case to 55 code points of scripts added in 2024). Worked out once per process against the running
    interpreter (≈ 0.1 s): blocks of 256 code points are lowered both ways and only the blocks that differ are
    checked code point by code point.

    >>> cls = lowercase_mismatch_class()
    >>> cls is None or cls.startswith("[")
    True
    """
    step = 256
    blocks = ["".join(chr(c) for c in range(b, b + step) if not 0xD800 <= c <= 0xDFFF) for b in range(0, 0x110000, step)]
    polars_low = pl.Series(blocks, dtype=pl.String).str.to_lowercase().to_list()
    odd: set[str] = set()
    for block, theirs in zip(blocks, polars_low, strict=True):
        if block.lower() == theirs:
            continue
        chars = pl.Series(list(block), dtype=pl.String).str.to_lowercase().to_list()
        odd |= {x for c, low in zip(block, chars, strict=True) if c.lower() != low for x in (c, *c.lower(), *low)}
    return "[" + "".join(re.escape(c) for c in sorted(odd)) + "]" if odd else None


def _lower_as_python(frame: pl.LazyFrame, col: str, out: str, cls: str) -> pl.LazyFrame:
    """``frame`` with ``out`` = ``col`` lower-cased as Python's ``str.lower`` does: Polars' ``str.to_lowercase``,
    Python's on the rows holding a code point of ``cls`` (:func:`lowercase_mismatch_class`); rows may come back in
    another order."""
    odd = pl.col(col).str.contains(cls).fill_null(False)
    return pl.concat([
        frame.filter(~odd).with_columns(pl.col(col).str.to_lowercase().alias(out)),
        frame.filter(odd).with_columns(pl.col(col).map_elements(str.lower, return_dtype=pl.String).alias(out)),
    ])  # fmt: skip


class _Special(Exception):
    """A float NaN/inf somewhere in the value: take the slow, exact path."""


def _canon(v: Any) -> Any:
    """Map a JSON value to a representative under Python equality: bool -> int, integral float -> int,
    recursively through lists and dicts (dict key order is removed later by ``sort_keys``)."""
    t = type(v)
    if t is str or t is int or v is None:
        return v
    if t is dict:
        return {k: _canon(x) for k, x in v.items()}
    if t is list:
        return [_canon(x) for x in v]
    if t is bool:
        return int(v)
    if t is float:
        if not math.isfinite(v):
            raise _Special
        if v.is_integer():
            return int(v)
        return v
    return v


def _canon_slow(v: Any) -> Any:
    if v is True or v is False:
        return int(v)
    if isinstance(v, float):
        if v != v:  # NaN != NaN in Python: never equal to anything
            raise ValueError("nan")
        if math.isfinite(v) and v.is_integer():
            return int(v)
        return v
    if isinstance(v, dict):
        return {k: _canon_slow(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon_slow(x) for x in v]
    return v


def canonical_value(v: Any) -> str:
    """Canonical text of a JSON value such that ``canonical_value(a) == canonical_value(b)`` iff ``a == b`` for
    JSON values under Python semantics (``1 == 1.0 == True``, ``"1" != 1``, list order matters, dict key order
    does not).  Top-level strings are the string behind a ``\x01`` tag (no JSON text starts with it); other values
    are compact JSON with sorted keys after bool -> int and integral float -> int.  A value containing NaN gets a
    unique token (NaN equals nothing)."""
    t = type(v)
    if t is str:
        return _STR_TAG + v
    if t is int:
        return str(v)
    if v is None:
        return "null"
    try:
        c = _canon(v)
        if _orjson is not None:
            try:
                return _orjson.dumps(c, option=_orjson.OPT_SORT_KEYS).decode()
            except TypeError:  # e.g. an integer beyond 64 bits
                pass
        return json.dumps(c, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except _Special:
        try:
            return json.dumps(_canon_slow(v), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            return f"<NaN#{next(_nan_ids)}>"


def _loads(text: str) -> Any:
    """A JSON text as Python values with integers exact at any size (orjson would turn integers beyond 64 bits
    into floats, making 10**30 equal 10**30 + 1); the standard library for what msgspec refuses (NaN, Infinity,
    1e400, lone surrogates)."""
    try:
        return _decode_any(text)
    except msgspec.DecodeError:
        return json.loads(text)


def _parse_object(text: str | None) -> dict | None:
    """The JSON object in ``text`` (``{}`` for a missing text); None when the text is not a JSON object."""
    if text is None:
        return {}
    try:
        d = _loads(text)
    except ValueError:
        return None
    return d if isinstance(d, dict) else None


def argument_table(texts: list[str | None]) -> pl.DataFrame:
    """``_ux, key, value``: one row per top-level argument of ``texts[_ux]``, ``value = canonical_value(...)``; a
    text that is not a JSON object gets one row with a null key, a null text (no arguments) none.

    A loop over the (distinct) texts: data preparation, not a loop over simulations."""
    ids: list[int] = []
    keys: list[str | None] = []
    vals: list[str | None] = []
    add_id, add_key, add_val = ids.append, keys.append, vals.append
    for i, text in enumerate(texts):
        if text is None:
            continue
        try:
            d = _decode_any(text)
        except msgspec.DecodeError:
            d = _parse_object(text)
        if type(d) is not dict:  # not a JSON object: one row with a null key marks it
            add_id(i)
            add_key(None)
            add_val(None)
            continue
        for k, v in d.items():
            add_id(i)
            add_key(k)
            t = type(v)  # the two commonest shapes inline (bool is not int here: it goes to canonical_value)
            add_val(_STR_TAG + v if t is str else str(v) if t is int else canonical_value(v))
    return pl.DataFrame(
        {"_ux": ids, "key": keys, "value": vals}, schema={"_ux": pl.UInt32(), "key": pl.String(), "value": pl.String()}
    )


def explode_arguments(frame: pl.DataFrame, id_cols: list[str], col: str = "arguments") -> pl.DataFrame:
    """Long frame ``id_cols + [key, value]``: one row per top-level argument, ``value`` canonical JSON text; a text
    that is not a JSON object gets a single row with a null key.

    Each distinct argument text is parsed once (:func:`argument_table`); the fan-out to rows is a join."""
    schema = {**{c: frame.schema[c] for c in id_cols}, "key": pl.String(), "value": pl.String()}
    if frame.height == 0:
        return pl.DataFrame(schema=schema)
    uniq = frame.get_column(col).unique()
    table = argument_table(uniq.to_list())
    codes = pl.DataFrame({col: uniq}).with_row_index("_ux")
    out = (
        frame.select(*id_cols, col)
        .join(codes, on=col, how="inner", nulls_equal=True)
        .drop(col)
        .join(table, on="_ux", how="inner")
    )
    return out.select(list(schema))


# ----------------------------------------------------------------------------------------------- COMMUNICATE
def communicate_long(
    sims: pl.DataFrame, task_info: pl.DataFrame, messages: pl.DataFrame, first: bool = True
) -> pl.DataFrame:
    """One row per (simulation, communicate string): ``_sid, info_idx, info, met, message_idx`` (unordered).

    sims: ``_sid, _tid, _respond_only, run_id, simulation_id`` for the simulations to check (``_respond_only``:
    τ-bench, only assistant messages without tool calls count).  task_info: ``_tid, communicate_info``.
    messages: ``run_id, simulation_id, message_idx, role, content, n_tool_calls`` (the loader's frame).
    ``message_idx`` is the first assistant message that met the string; with ``first=False`` it is left null
    (scoring needs only ``met``).

    Only assistant messages with text content count (``content.strip() != ""``).  A blank message cannot
    contain a string with a non-blank character (lower-casing maps blanks to themselves and removing commas
    only shortens), so the blank test is evaluated only when some string is itself blank (e.g. ``""``).
    """
    infos = (
        task_info.select("_tid", "communicate_info")
        .filter(pl.col("communicate_info").list.len() > 0)
        .with_columns(info_idx=pl.int_ranges(pl.col("communicate_info").list.len()))
        .explode(["communicate_info", "info_idx"])
        .rename({"communicate_info": "info"})
        .filter(pl.col("info").is_not_null())
        .with_columns(
            pl.col("info_idx").cast(pl.Int64),
            # the strings are few: lower-cased by Python itself, as τ²-bench does
            _needle=pl.col("info").map_elements(str.lower, return_dtype=pl.String),
        )
        .with_columns(_blank=pl.col("_needle").str.contains(BLANK_RE))
    )
    # Polars and Python lower-case alike except on a few code points (lowercase_mismatch_class) and the message
    # text may differ only there; a string holding none of them (nor their lower cases) matches either text alike
    cls = lowercase_mismatch_class() if infos.height else None
    exact_hay = cls is not None and bool(infos.select(pl.any_horizontal(
        pl.col("info").str.contains(cls), pl.col("_needle").str.contains(cls)).any()).item())  # fmt: skip
    # one integer per (simulation, string) check: the key of the hits
    crit = sims.select("_sid", "_tid", "_respond_only").join(infos, on="_tid", how="inner").with_row_index("_cid")
    any_blank = bool(crit.get_column("_blank").any())
    respond = bool(crit.get_column("_respond_only").any())  # τ-bench: messages with tool calls do not count
    n_tc = pl.col("n_tool_calls").fill_null(0) if "n_tool_calls" in messages.columns else pl.lit(0)
    need = sims.lazy().join(crit.lazy().select("_sid").unique(), on="_sid", how="semi").select(
        "run_id", "simulation_id", "_sid"
    )
    # attach the integer _sid to the assistant messages of the simulations that have strings to check (one
    # string-keyed join), lower-case only those, then match on integers; only the columns the match reads
    base = (
        messages.lazy()
        .filter((pl.col("role") == "assistant") & pl.col("content").is_not_null())
        .select(
            "run_id",
            "simulation_id",
            "content",
            *(["message_idx"] if first else []),
            *([(n_tc == 0).alias("_no_calls")] if respond else []),
        )
        .join(need, on=["run_id", "simulation_id"], how="inner")
    )
    keep = ["_sid", *(["message_idx"] if first else []), *(["_no_calls"] if respond else [])]
    text = [(~pl.col("content").str.contains(BLANK_RE)).alias("_text")] if any_blank else []
    if exact_hay:
        base = _lower_as_python(base.select(*keep, *text, "content"), "content", "_hay", cls)
    else:
        base = base.with_columns(_hay=pl.col("content").str.to_lowercase())
    asst = base.select(*keep, *text, _hay=pl.col("_hay").str.replace_all(",", "", literal=True))
    match = pl.col("_hay").str.contains(pl.col("_needle"), literal=True)
    if respond:
        match = match & (~pl.col("_respond_only") | pl.col("_no_calls"))
    if any_blank:
        match = match & (~pl.col("_blank") | pl.col("_text"))
    hits = (
        crit.lazy()
        .select("_cid", "_sid", "_needle", *(["_blank"] if any_blank else []), *(["_respond_only"] if respond else []))
        .join(asst, on="_sid", how="inner")
        .filter(match)
        .select("_cid", *(["message_idx"] if first else []))
    )
    if first:
        hits = hits.group_by("_cid").agg(pl.col("message_idx").min())
    hits = hits.collect()
    return crit.select("_sid", "info_idx", "info").with_columns(
        met=flags_at(crit.height, hits.get_column("_cid")),
        message_idx=_scattered(crit.height, hits, "_cid", "message_idx") if first else pl.lit(None, pl.Int64),
    )


def flags_at(n: int, idx: pl.Series) -> pl.Series:
    """Boolean Series of length ``n``, true at the positions ``idx`` (repeats allowed)."""
    out = np.zeros(n, dtype=bool)
    out[idx.to_numpy()] = True
    return pl.Series(out)


def _scattered(n: int, frame: pl.DataFrame, at: str, value: str) -> pl.Series:
    """Int64 Series of length ``n``: ``frame[value]`` at the positions ``frame[at]`` (unique), null elsewhere."""
    return pl.Series(value, [None] * n, dtype=pl.Int64).scatter(
        frame.get_column(at), frame.get_column(value).cast(pl.Int64)
    )


# ---------------------------------------------------------------------------------------------------- ACTION
def action_long(
    sims: pl.DataFrame, golds: pl.DataFrame, calls: pl.DataFrame, first: bool = True
) -> pl.DataFrame:
    """One row per (simulation, gold action): ``_sid, _gid, matched, call_idx`` (first matching call; with
    ``first=False`` left null, as scoring needs only ``matched``; unordered).

    sims: ``_sid, _tid, run_id, simulation_id``.  golds: ``_gid, _tid, name, arguments, compare_args``.
    calls: ``run_id, simulation_id, call_idx, name, arguments`` (the loader's frame: assistant and user calls
    pooled; ``requestor`` is not looked at).

    Whether a call matches a gold depends only on (the call's argument text, the gold), so the key-by-key checks
    run once per distinct such combination (one integer ``_k``) and are looked up by the (simulation, call,
    gold) candidates.
    """
    sim_golds = (
        sims.select("_sid", "_tid", "run_id", "simulation_id")
        .join(golds.select("_gid", "_tid", "name"), on="_tid", how="inner")
        .with_row_index("_pid")
    )
    pairs = sim_golds.join(
        calls.select("run_id", "simulation_id", "call_idx", "name", "arguments"),
        on=["run_id", "simulation_id", "name"],
        how="inner",
    ).select("_pid", "_gid", "call_idx", "arguments")
    n_gold = int(golds.get_column("_gid").max() or 0) + 1
    # one integer _u per distinct argument text (one hash pass: group, number, explode back)
    by_text = pairs.group_by("arguments").agg("_pid", "_gid", "call_idx").with_row_index("_u")
    # every distinct argument text of a candidate call parsed once, first: in this thread, while COMMUNICATE's
    # Polars work (which :meth:`_Prepared.recomputed` runs alongside) goes on without needing the GIL
    call_kv = argument_table(by_text.get_column("arguments").to_list()).rename({"_ux": "_u", "value": "_cv"})
    pairs = (
        by_text.select("_u", "_pid", "_gid", "call_idx")
        .explode("_pid", "_gid", "call_idx")
        .select("_pid", "call_idx", _k=pl.col("_u").cast(pl.UInt64) * n_gold + pl.col("_gid"))
    )
    cmp_null = golds.sort("_gid").select("_gid", _cmp_null=pl.col("compare_args").is_null())
    combos = (
        pairs.select(pl.col("_k").unique())
        .with_columns(_u=(pl.col("_k") // n_gold).cast(pl.UInt32), _gid=(pl.col("_k") % n_gold).cast(pl.UInt32))
        .join(cmp_null, on="_gid", how="inner")
    )
    gold_kv = explode_arguments(
        golds.join(combos.select("_gid").unique(), on="_gid", how="semi"), ["_gid"]
    ).rename({"value": "_gv"})
    # compare_args null: keys = the call's own keys; the gold must hold each with an equal value.
    bad_own = (
        combos.filter(pl.col("_cmp_null"))
        .select("_k", "_u", "_gid")
        .join(call_kv, on="_u", how="inner")
        .join(gold_kv, on=["_gid", "key"], how="left")
        .filter(pl.col("_gv").is_null() | (pl.col("_gv") != pl.col("_cv")))
        .select("_k")
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
        combos.filter(~pl.col("_cmp_null"))
        .select("_k", "_u", "_gid")
        .join(gold_keys, on="_gid", how="inner")
        .join(call_kv, on=["_u", "key"], how="left")
        .join(gold_kv, on=["_gid", "key"], how="left")
        .filter(~pl.col("_cv").eq_missing(pl.col("_gv")))
        .select("_k")
    )
    # arguments that are not a JSON object match only a gold compared by name alone (compare_args == [])
    bad_invalid = (
        combos.join(call_kv.filter(pl.col("key").is_null()).select("_u").unique(), on="_u", how="semi")
        .join(golds.filter(pl.col("compare_args").list.len().fill_null(1) > 0).select("_gid"), on="_gid", how="semi")
        .select("_k")
    )
    bad = pl.concat([bad_own, bad_listed, bad_invalid]).get_column("_k")
    good = pairs.filter(~pl.col("_k").is_in(bad.implode())).select("_pid", "call_idx")
    if first:
        good = good.group_by("_pid").agg(pl.col("call_idx").min())
    return sim_golds.select("_sid", "_gid").with_columns(
        matched=flags_at(sim_golds.height, good.get_column("_pid")),
        call_idx=_scattered(sim_golds.height, good, "_pid", "call_idx") if first else pl.lit(None, pl.Int64),
    )

"""The matching behind :mod:`tauk.scoring.deviations`: canonical tool calls, multiset matching of calls to gold
actions, pairing of the leftovers into wrong-argument deviations, and the order of the matched ones.

Conventions: every simulation carries an integer ``_sid`` (its row of the trials frame), every call a ``call_idx``
and every gold action an ``action_idx``; ``_cls`` is ``"state"`` (the tool changes state) or ``"read"`` (it does
not). The Python loops here run over *distinct* argument texts (parsing, data preparation) and over the few
simulations whose matched state-changing calls are out of gold order (the longest increasing subsequence); the rest
is joins and Polars expressions.
"""

from __future__ import annotations

import bisect
import json
from typing import Any

import polars as pl

from tauk.scoring._kernel import _loads, argument_table, canonical_value

__all__ = [
    "DISCOVERABLE_WRAPPERS",
    "canonical_calls",
    "exact_matches",
    "pair_leftovers",
    "order_items",
    "argument_equivalence",
]

DISCOVERABLE_WRAPPERS = {
    "call_discoverable_agent_tool": "agent_tool_name",
    "call_discoverable_user_tool": "discoverable_tool_name",
}
"""banking_knowledge's wrappers → the argument naming the discoverable tool they call (its own arguments are the
JSON text in ``arguments``)."""

_SEP_KV, _SEP_ITEM = "\x1e", "\x1f"


def _unwrap(name: str | None, text: str | None) -> tuple[str | None, str | None, str | None]:
    """``(effective name, effective arguments text, wrapper)`` of one call or gold action."""
    field = DISCOVERABLE_WRAPPERS.get(name or "")
    if field is None or text is None:
        return name, text, None
    try:
        outer = _loads(text)
    except ValueError:
        return name, text, None
    if not isinstance(outer, dict) or not isinstance(outer.get(field), str):
        return name, text, None
    inner = outer.get("arguments", "{}")
    if isinstance(inner, str):
        try:
            inner = _loads(inner) if inner.strip() else {}
        except ValueError:
            return outer[field], inner, name  # not JSON: compared as written
    return outer[field], json.dumps(inner, sort_keys=True, ensure_ascii=False), name


def canonical_calls(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """For the distinct ``(name, arguments)`` of ``frame``: ``name, arguments, _ename, _wrapper, _u, _ckey`` (the
    effective tool — banking_knowledge's discoverable wrappers unwrapped —, an integer id of its effective
    arguments and their canonical text: equal iff the arguments are equal as JSON under Python semantics), and the
    long ``_u, key, value`` of those arguments (a text that is not a JSON object: one row with a null key), and
    ``_u, _text`` (the effective argument texts)."""
    distinct = frame.select("name", "arguments").unique(maintain_order=True)
    names, texts = distinct.get_column("name").to_list(), distinct.get_column("arguments").to_list()
    unwrapped = [_unwrap(n, t) for n, t in zip(names, texts)]
    eff_texts = [u[1] for u in unwrapped]
    codes: dict[Any, int] = {}
    u_ids = [codes.setdefault(t, len(codes)) for t in eff_texts]
    uniq = list(codes)
    kv = argument_table(uniq).rename({"_ux": "_u"})
    ckeys = (
        kv.sort("_u", "key", nulls_last=False)
        .group_by("_u", maintain_order=True)
        .agg(_ckey=(pl.col("key").fill_null("") + _SEP_KV + pl.col("value").fill_null("")).str.join(_SEP_ITEM),
             _invalid=pl.col("key").is_null().any())  # fmt: skip
    )
    u_frame = pl.DataFrame({"_u": list(range(len(uniq))), "_text": uniq},
                           schema={"_u": pl.UInt32, "_text": pl.String})  # fmt: skip
    u_frame = u_frame.join(ckeys, on="_u", how="left").select(
        "_u",
        _ckey=pl.when(pl.col("_invalid").fill_null(False))
        .then(pl.lit("\x00") + pl.col("_text").fill_null(""))
        .otherwise(pl.col("_ckey").fill_null("")),
    )
    out = distinct.with_columns(
        _ename=pl.Series([u[0] for u in unwrapped], dtype=pl.String),
        _wrapper=pl.Series([u[2] for u in unwrapped], dtype=pl.String),
        _u=pl.Series(u_ids, dtype=pl.UInt32),
    ).join(u_frame, on="_u", how="left")
    texts = pl.DataFrame({"_u": list(range(len(uniq))), "_text": uniq}, schema={"_u": pl.UInt32, "_text": pl.String})
    return out, kv, texts


def exact_matches(calls: pl.DataFrame, golds: pl.DataFrame) -> pl.DataFrame:
    """``_sid, _cls, call_idx, action_idx`` — the k-th call equal to a gold action (same effective tool, equal
    arguments) matched to the k-th such gold action of its simulation (a multiset intersection)."""
    keys = ["_sid", "_cls", "_ename", "_ckey"]
    c = calls.select(*keys, "call_idx").with_columns(_occ=pl.col("call_idx").rank("ordinal").over(keys))
    g = golds.select(*keys, "action_idx").with_columns(_occ=pl.col("action_idx").rank("ordinal").over(keys))
    return c.join(g, on=[*keys, "_occ"], how="inner").select("_sid", "_cls", "call_idx", "action_idx")


def _diff_keys(pairs: pl.DataFrame, kv: pl.DataFrame) -> pl.DataFrame:
    """For the distinct ``(_cu, _gu)`` argument ids of ``pairs``: ``_cu, _gu, wrong_args`` (the top-level keys
    whose values differ or that only one side has, sorted; ``["<arguments>"]`` when one is not a JSON object)."""
    combos = pairs.select("_cu", "_gu").unique()
    ck = combos.join(kv.rename({"_u": "_cu", "value": "_cv"}), on="_cu", how="inner")
    gk = combos.join(kv.rename({"_u": "_gu", "value": "_gv"}), on="_gu", how="inner")
    both = ck.join(gk, on=["_cu", "_gu", "key"], how="full", coalesce=True, nulls_equal=False)
    diff = (
        both.filter(~pl.col("_cv").eq_missing(pl.col("_gv")) | pl.col("key").is_null())
        .with_columns(key=pl.col("key").fill_null("<arguments>"))
        .group_by("_cu", "_gu")
        .agg(wrong_args=pl.col("key").unique().sort())
    )
    return combos.join(diff, on=["_cu", "_gu"], how="left").with_columns(
        pl.col("wrong_args").fill_null(pl.lit([], pl.List(pl.String)))
    )


def pair_leftovers(calls: pl.DataFrame, golds: pl.DataFrame, kv: pl.DataFrame) -> pl.DataFrame:
    """Pair the unmatched calls and gold actions of one tool in one simulation into wrong-argument deviations.

    ``calls``: ``_sid, _cls, _ename, call_idx, _u``; ``golds``: ``_sid, _cls, _ename, action_idx, _u`` (the
    leftovers of :func:`exact_matches`). Greedy by (number of differing arguments, call order, gold order): the
    pair first in that order is taken, then the next among the rest, … — computed in rounds, each taking every pair
    that is first for both its call and its gold (the same matching as the sequential greedy). Returns ``_sid,
    _cls, call_idx, action_idx, _cu, _gu, wrong_args``."""
    keys = ["_sid", "_cls", "_ename"]
    cand = calls.select(*keys, "call_idx", _cu="_u").join(
        golds.select(*keys, "action_idx", _gu="_u"), on=keys, how="inner"
    )
    schema = {"_sid": pl.UInt32, "_cls": pl.String, "call_idx": pl.Int64, "action_idx": pl.Int64,
              "_cu": pl.UInt32, "_gu": pl.UInt32, "wrong_args": pl.List(pl.String)}  # fmt: skip
    if cand.height == 0:
        return pl.DataFrame(schema=schema)
    diffs = _diff_keys(cand, kv)
    cand = cand.join(diffs, on=["_cu", "_gu"], how="left").with_columns(
        _key=pl.col("wrong_args").list.len().cast(pl.Int64) * 10**12
        + pl.col("call_idx").cast(pl.Int64) * 10**6
        + pl.col("action_idx").cast(pl.Int64)
    )
    taken = []
    while cand.height:
        best = cand.filter(
            (pl.col("_key") == pl.col("_key").min().over("_sid", "_cls", "call_idx"))
            & (pl.col("_key") == pl.col("_key").min().over("_sid", "_cls", "action_idx"))
        )
        taken.append(best)
        cand = cand.join(best.select("_sid", "_cls", "call_idx"), on=["_sid", "_cls", "call_idx"], how="anti").join(
            best.select("_sid", "_cls", "action_idx"), on=["_sid", "_cls", "action_idx"], how="anti"
        )
    return pl.concat(taken).select(list(schema)).cast(schema)  # type: ignore[arg-type]


def _lis_positions(seq: list[int]) -> set[int]:
    """Positions of one longest strictly increasing subsequence of ``seq`` (patience sorting)."""
    tails: list[int] = []
    tails_pos: list[int] = []
    prev = [-1] * len(seq)
    for i, x in enumerate(seq):
        j = bisect.bisect_left(tails, x)
        if j == len(tails):
            tails.append(x)
            tails_pos.append(i)
        else:
            tails[j] = x
            tails_pos[j] = i
        prev[i] = tails_pos[j - 1] if j else -1
    keep, i = set(), tails_pos[-1] if tails_pos else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def order_items(matched: pl.DataFrame) -> pl.DataFrame:
    """The matched state-changing calls out of gold order.

    ``matched``: ``_sid, call_idx, action_idx, _side`` (exact and wrong-argument pairs, state-changing only;
    ``_side`` the side of the environment the tool belongs to). In call order the gold indices should increase; the
    calls outside one longest increasing subsequence are out of order (the fewest calls that, moved, restore the
    gold order). Each is ``cross_side`` when it is inverted with a call of the other side (agent vs user) — τ²-bench
    derives the user's device state from the agent's database at each user action, so order across the sides
    changes the end state; within one side writes to different objects commute. Returns ``_sid, call_idx,
    action_idx, cross_side``."""
    schema = {"_sid": pl.UInt32, "call_idx": pl.Int64, "action_idx": pl.Int64, "cross_side": pl.Boolean}
    # only simulations with an inversion: some gold index below the running maximum before it
    flagged = (
        matched.sort("_sid", "call_idx")
        .with_columns(_prev_max=pl.col("action_idx").cum_max().shift(1).over("_sid"))
        .filter((pl.col("action_idx") < pl.col("_prev_max")).any().over("_sid"))
    )
    if flagged.height == 0:
        return pl.DataFrame(schema=schema)
    rows: list[tuple[int, int, int, bool]] = []
    for (sid,), g in flagged.group_by(["_sid"], maintain_order=True):
        calls, acts, sides = g["call_idx"].to_list(), g["action_idx"].to_list(), g["_side"].to_list()
        keep = _lis_positions(acts)
        for i in range(len(acts)):
            if i in keep:
                continue
            cross = any(
                sides[j] != sides[i] and sides[j] is not None and sides[i] is not None
                and (j < i) == (acts[j] > acts[i])
                for j in range(len(acts)) if j != i
            )  # fmt: skip
            rows.append((sid, calls[i], acts[i], cross))
    return pl.DataFrame(rows, schema=schema, orient="row")


def _as_multiset(v: Any) -> list[str] | None:
    return sorted(canonical_value(x) for x in v) if isinstance(v, list) else None


def _superset(call: Any, gold: Any) -> bool:
    """``call`` holds every field of ``gold`` with an equal value (recursively through lists of the same length and
    objects), and at least one more somewhere."""

    def holds(c: Any, g: Any) -> tuple[bool, bool]:
        if isinstance(g, dict) and isinstance(c, dict):
            more = len(set(c) - set(g)) > 0
            for k, gv in g.items():
                if k not in c:
                    return False, False
                ok, m = holds(c[k], gv)
                if not ok:
                    return False, False
                more = more or m
            return True, more
        if isinstance(g, list) and isinstance(c, list) and len(g) == len(c):
            more = False
            for cv, gv in zip(c, g):
                ok, m = holds(cv, gv)
                if not ok:
                    return False, False
                more = more or m
            return True, more
        return canonical_value(c) == canonical_value(g), False

    ok, more = holds(call, gold)
    return ok and more


def argument_equivalence(pairs: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """Why a wrong-argument pair may leave the state as the gold action does, from the arguments alone:
    ``"list_order"`` (each differing argument holds the same list elements in another order), ``"extra_fields"``
    (each holds the gold's fields and more — tools built on typed models drop unknown fields), both joined by
    ``+``, else null. ``pairs``: ``_cu, _gu, wrong_args``; ``texts``: ``_u, _text``. Returns ``_cu, _gu,
    _equiv``."""
    combos = pairs.select("_cu", "_gu", "wrong_args").unique(subset=["_cu", "_gu"])
    lookup = dict(zip(texts["_u"].to_list(), texts["_text"].to_list()))
    out = []
    for cu, gu, wrong in combos.iter_rows():
        reason = None
        try:
            c, g = _loads(lookup[cu] or "{}"), _loads(lookup[gu] or "{}")
        except (ValueError, KeyError):
            c = g = None
        if isinstance(c, dict) and isinstance(g, dict) and wrong:
            kinds = set()
            for k in wrong:
                if k not in c or k not in g:
                    kinds = None
                    break
                ms_c, ms_g = _as_multiset(c[k]), _as_multiset(g[k])
                if ms_c is not None and ms_c == ms_g:
                    kinds.add("list_order")
                elif _superset(c[k], g[k]):
                    kinds.add("extra_fields")
                else:
                    kinds = None
                    break
            if kinds:
                reason = "+".join(sorted(kinds))
        out.append((cu, gu, reason))
    return pl.DataFrame(out, schema={"_cu": pl.UInt32, "_gu": pl.UInt32, "_equiv": pl.String}, orient="row")

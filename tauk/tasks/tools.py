"""Which tools change state: the per-domain tool table shipped with tauk, and its lookup.

``tool_types.json`` (beside this module, in the wheel) lists every tool of τ²-bench's five standard domains —
airline, retail, telecom, mock, banking_knowledge — on each side (``agent``: the agent's toolkit, ``user``: the
user simulator's), with the tool type its decorator declares (``read``, ``write``, ``think``, ``generic``) and
whether upstream's replay treats it as changing state (``mutates_state``: ``write`` unless the decorator says
otherwise — banking_knowledge's ``give_discoverable_user_tool`` / ``unlock_discoverable_agent_tool`` are ``generic``
but change state, its ``rewrite_context`` is ``write`` but does not). Source: τ²-bench's tool decorators at the
commit named in :data:`TOOL_TABLE_SOURCE`, read by ``benchmarks/derive_tool_types.py`` (``--check`` re-derives
it; ``tests/test_tasks_tools.py`` checks the shipped table equals the derivation whenever the source tree is
present, and ``benchmarks/check_tool_types_runtime.py`` checks it against upstream's own environments).

The lookup (:func:`classify_tools`, one rule for the task-validity audit, re-grade eligibility and action-level
attribution):

1. a tool type the run's **action checks record** for that tool name (v1.0 files; ``expected_actions.tool_type``)
   takes precedence; it changes state when the table lists the same tool with the same type and says so, else
   when the type is ``write``;
2. otherwise the **table** of the row's domain, on the caller's side (``requestor``: ``assistant`` → agent,
   ``user`` → user; no requestor: the tool's one type over both sides, if it has one);
3. otherwise ``"unknown"`` with ``state_changing`` null — never a guess (a tool of another domain, a renamed tool,
   ``think`` in airline where no environment offers it, any domain tauk has no table for).

τ-bench (v1) runs use the τ²-bench table of the same domain name (airline, retail): τ²-bench took over their tool
names; τ-bench's ``think`` is "unknown" there.

Examples
--------
>>> from tauk.tasks import lookup_tool
>>> lookup_tool("cancel_reservation", domain="airline")
ToolInfo(tool_type='write', state_changing=True, source='table')
>>> lookup_tool("think", domain="airline").tool_type
'unknown'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, NamedTuple

import polars as pl

from tauk.errors import TaukError

__all__ = [
    "SIDES",
    "TOOL_TABLE_SOURCE",
    "TOOL_TYPES",
    "ToolInfo",
    "UNKNOWN",
    "classify_tools",
    "lookup_tool",
    "recorded_tool_types",
    "tool_table",
]

TOOL_TYPES = ("read", "write", "think", "generic")
"""The tool types τ²-bench declares (``ToolType``)."""

UNKNOWN = "unknown"
"""The tool type of a tool neither recorded nor in the table."""

SIDES = {"assistant": "agent", "agent": "agent", "user": "user"}
"""``requestor`` (or ``role``) value → side of the table."""

_SCHEMA = {
    "domain": pl.String, "side": pl.String, "name": pl.String, "tool_type": pl.String,
    "mutates_state": pl.Boolean, "discoverable": pl.Boolean, "toolkit": pl.String, "file": pl.String,
}  # fmt: skip


class ToolInfo(NamedTuple):
    """What tauk knows of one tool: its type, whether it changes state (None: unknown), and where that came from
    (``"recorded"``, ``"table"`` or None)."""

    tool_type: str
    state_changing: bool | None
    source: str | None


@cache
def _document() -> dict[str, Any]:
    text = resources.files("tauk.tasks").joinpath("tool_types.json").read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _table() -> pl.DataFrame:
    return pl.DataFrame(_document()["tools"], schema=_SCHEMA)


TOOL_TABLE_SOURCE: Mapping[str, Any] = MappingProxyType(_document()["source"])
"""Where the table comes from: project, version, commit, the deriving script and its rule."""


def tool_table(domain: str | None = None) -> pl.DataFrame:
    """The shipped table: one row per (domain, side, tool) — ``domain, side, name, tool_type, mutates_state,
    discoverable, toolkit, file`` (the toolkit class and source file that declare it).

    Examples
    --------
    >>> t = tool_table("retail")
    >>> t.filter(mutates_state=True).height, sorted(set(t["tool_type"]))
    (7, ['generic', 'read', 'write'])
    """
    t = _table()
    if domain is not None:
        t = t.filter(pl.col("domain") == domain)
    return t.clone()


def _recorded_frame(recorded: Any, frame_columns: list[str]) -> tuple[pl.DataFrame, list[str]] | None:
    """``recorded=`` as a frame ``[run_id,] name, _rec_type`` and its join keys."""
    if recorded is None:
        return None
    if isinstance(recorded, str):  # a column of the frame: the row's own recorded type
        return None
    if isinstance(recorded, Mapping):
        rec = pl.DataFrame({"name": list(recorded), "_rec_type": [str(v).lower() for v in recorded.values()]},
                           schema={"name": pl.String, "_rec_type": pl.String})  # fmt: skip
        return rec, ["name"]
    if isinstance(recorded, pl.DataFrame):
        if not {"name", "tool_type"} <= set(recorded.columns):
            raise TaukError("recorded= takes a frame with columns name, tool_type (and optionally run_id), or a "
                            f"mapping name -> tool type; got columns {recorded.columns}")  # fmt: skip
        keys = ["run_id", "name"] if "run_id" in recorded.columns and "run_id" in frame_columns else ["name"]
        rec = (
            recorded.filter(pl.col("tool_type").is_not_null())
            .select(*keys, _rec_type=pl.col("tool_type").str.to_lowercase())
            .unique(subset=keys, keep="first", maintain_order=True)
        )
        return rec, keys
    raise TaukError(f"recorded= takes a frame or a mapping, not {type(recorded).__name__}")


def classify_tools(
    frame: pl.DataFrame,
    *,
    domain: str | None = None,
    name: str = "name",
    requestor: str | None = "requestor",
    recorded: Any = None,
) -> pl.DataFrame:
    """Add ``tool_type`` (``read``/``write``/``think``/``generic``/``unknown``), ``state_changing`` (bool, null when
    unknown) and ``tool_type_source`` (``"recorded"``, ``"table"``, null) to a frame of tool names.

    Parameters
    ----------
    frame
        Any frame with a tool-name column: ``expected_actions``, ``tool_calls`` (joined to the run's domain), ….
    domain
        The domain of every row; None (default): the frame's ``domain`` column (null → unknown).
    name, requestor
        The columns holding the tool's name and who called it (``assistant``/``user``; None or a missing column:
        either side, when the tool has one type over both).
    recorded
        Tool types recorded by the run (they take precedence): a frame ``[run_id,] name, tool_type`` — e.g.
        :func:`recorded_tool_types` —, a mapping ``name → type``, or the name of a column of ``frame`` holding
        each row's recorded type (e.g. ``expected_actions``' ``tool_type`` renamed).

    Examples
    --------
    >>> import polars as pl
    >>> calls = pl.DataFrame({"name": ["toggle_roaming", "get_customer_by_id", "toggle_roaming", "think"],
    ...                       "requestor": ["user", "assistant", "assistant", "assistant"]})
    >>> classify_tools(calls, domain="telecom").select("tool_type", "state_changing").rows()
    [('write', True), ('read', False), ('unknown', None), ('unknown', None)]
    """
    if name not in frame.columns:
        raise TaukError(f"classify_tools: the frame has no {name!r} column (columns: {frame.columns})")
    if domain is None and "domain" not in frame.columns:
        raise TaukError("classify_tools: give domain= or a frame with a 'domain' column")
    if isinstance(recorded, str) and recorded not in frame.columns:
        raise TaukError(f"classify_tools: recorded={recorded!r} is not a column of the frame")
    table = _table()
    n = frame.height
    work = frame.select(
        _row=pl.int_range(n, dtype=pl.UInt32),
        _dom=pl.lit(domain, pl.String) if domain is not None else pl.col("domain").cast(pl.String),
        _name=pl.col(name).cast(pl.String),
        _side=(
            pl.col(requestor).cast(pl.String).str.to_lowercase().replace_strict(SIDES, default=None)
            if requestor is not None and requestor in frame.columns
            else pl.lit(None, pl.String)
        ),
        **({"run_id": pl.col("run_id")} if "run_id" in frame.columns else {}),
        **({"_own_rec": pl.col(recorded).cast(pl.String).str.to_lowercase()} if isinstance(recorded, str) else {}),
    )
    sided = table.select(_dom="domain", _side="side", _name="name", _t1="tool_type", _m1="mutates_state")
    either = (
        table.group_by("domain", "name")
        .agg(_t2=pl.col("tool_type").unique(), _m2=pl.col("mutates_state").unique())
        .select(
            _dom="domain",
            _name="name",
            _t2=pl.when(pl.col("_t2").list.len() == 1).then(pl.col("_t2").list.first()),
            _m2=pl.when(pl.col("_m2").list.len() == 1).then(pl.col("_m2").list.first()),
        )
    )
    work = work.join(sided, on=["_dom", "_side", "_name"], how="left").join(
        either, on=["_dom", "_name"], how="left"
    )
    side_known = pl.col("_side").is_not_null()
    t_type = pl.when(side_known).then(pl.col("_t1")).otherwise(pl.col("_t2"))
    t_mut = pl.when(side_known).then(pl.col("_m1")).otherwise(pl.col("_m2"))
    rec = _recorded_frame(recorded, work.columns)
    if rec is not None:
        rec_frame, keys = rec
        work = work.join(rec_frame.rename({"name": "_name"}), on=[("_name" if k == "name" else k) for k in keys],
                         how="left")  # fmt: skip
    elif isinstance(recorded, str):
        work = work.rename({"_own_rec": "_rec_type"})
    else:
        work = work.with_columns(_rec_type=pl.lit(None, pl.String))
    rec_type = pl.when(pl.col("_rec_type").is_in(list(TOOL_TYPES))).then(pl.col("_rec_type"))
    work = work.with_columns(_tt=t_type, _tm=t_mut, _rt=rec_type).sort("_row")
    out = work.select(
        tool_type=pl.coalesce("_rt", "_tt", pl.lit(UNKNOWN)),
        state_changing=pl.when(pl.col("_rt").is_not_null())
        .then(pl.when(pl.col("_rt") == pl.col("_tt")).then(pl.col("_tm")).otherwise(pl.col("_rt") == "write"))
        .otherwise(pl.col("_tm")),
        tool_type_source=pl.when(pl.col("_rt").is_not_null())
        .then(pl.lit("recorded"))
        .when(pl.col("_tt").is_not_null())
        .then(pl.lit("table")),
    )
    return frame.drop([c for c in out.columns if c in frame.columns]).hstack(out)


def lookup_tool(name: str, *, domain: str | None, requestor: str | None = None,
                recorded_type: str | None = None) -> ToolInfo:  # fmt: skip
    """One tool's :class:`ToolInfo` under the rule of :func:`classify_tools`.

    Examples
    --------
    >>> lookup_tool("toggle_roaming", domain="telecom", requestor="user")
    ToolInfo(tool_type='write', state_changing=True, source='table')
    >>> lookup_tool("rewrite_context", domain="banking_knowledge")
    ToolInfo(tool_type='write', state_changing=False, source='table')
    >>> lookup_tool("get_flight_status", domain="airline", recorded_type="write")
    ToolInfo(tool_type='write', state_changing=True, source='recorded')
    """
    frame = pl.DataFrame({"name": [name], "requestor": [requestor], "domain": [domain]},
                         schema={"name": pl.String, "requestor": pl.String, "domain": pl.String})  # fmt: skip
    rec = {name: recorded_type} if recorded_type is not None else None
    row = classify_tools(frame, recorded=rec).row(0, named=True)
    return ToolInfo(row["tool_type"], row["state_changing"], row["tool_type_source"])


def recorded_tool_types(results: Any) -> pl.DataFrame:
    """``run_id, name, tool_type`` — the tool types a results set's action checks record (v1.0 files), one row per
    (run, tool), from ``expected_actions.tool_type``; empty when none is recorded.

    Examples
    --------
    >>> import tauk
    >>> recorded_tool_types(tauk.load("data")).height
    0
    """
    actions = results.get("expected_actions") if isinstance(results, Mapping) else getattr(
        results, "expected_actions", results if isinstance(results, pl.DataFrame) else None)  # fmt: skip
    empty = pl.DataFrame(schema={"run_id": pl.String, "name": pl.String, "tool_type": pl.String})
    if not isinstance(actions, pl.DataFrame) or "tool_type" not in actions.columns:
        return empty
    return (
        actions.filter(pl.col("tool_type").is_not_null() & pl.col("run_id").is_not_null())
        .select(pl.col("run_id").cast(pl.String), pl.col("name").cast(pl.String), pl.col("tool_type").cast(pl.String))
        .unique(subset=["run_id", "name"], keep="first", maintain_order=True)
    )

"""Why a trial failed, action by action: each trial's tool calls against its task's gold actions.

The DB check of τ²-bench / τ-bench compares end states and says nothing about *what* went wrong. Following SABER /
τ-Bench Verified (Cuadron et al. 2025), a trial's calls are compared with the gold actions as multisets of
(tool, canonical arguments), separately for tools that change state and tools that do not (which is which: the
shipped per-domain tool table and the run's recorded tool types, :func:`tauk.tasks.classify_tools` — the same
source as the task-validity audit). What is left over becomes one **deviation** each:

``wrong_args``
    a call and a gold action of the same tool with different arguments (paired greedily by the fewest differing
    arguments; ``wrong_args`` names them),
``extra``
    a call no gold action asks for,
``missing``
    a gold action no call made,
``order``
    a matched state-changing call made out of gold order (the calls outside one longest increasing subsequence of
    gold positions).

A deviation of a state-changing tool is **decisive** unless the record shows it may leave the state as the gold
would (``neutral``): ``errored`` (the call returned an error; a failing tool changes nothing), ``toggle_pair`` (an
even number of identical extra calls of a ``toggle_*`` tool), ``list_order`` / ``extra_fields`` (the differing
arguments hold the same list elements in another order / the gold's fields and more), ``same_side_order`` (an
order deviation among writes of one side: τ²-bench derives the user's device state from the agent's database at
each user action, so only order *across* the agent / user sides is taken to matter); with replay evidence
(``evidence=``) also ``no_state_change`` / ``gold_no_change`` (the call / gold action changed nothing on replay) and
``no_net_change`` (replayed without the trial's decisive deviations, the end state is the same). Read-only
deviations are counted apart and never decisive. Tools the table does not know are counted (``n_unknown_calls``) and left out.

Calls are compared whatever their requestor (τ²-bench's ACTION check pools assistant and user calls); the side
classifies the tool (telecom's user-side tools; in solo runs the agent holds both toolkits). banking_knowledge's
``call_discoverable_agent_tool`` / ``call_discoverable_user_tool`` are compared as the discoverable tool they call
(``arguments.agent_tool_name`` / ``discoverable_tool_name``, with its own ``arguments``). Arguments are equal as
JSON under Python semantics (``1 == 1.0``, key order free, list order not).

Two tables (one function each, keyed by ``run_id, simulation_id, task_id``): :func:`deviations` — one row per
deviation; :func:`trial_deviations` — one row per trial with the counts and the **first decisive deviation** (its
kind, tool, arguments, call and message position, and conversational turn). ``n_state_diff`` is the size of the
multiset difference between the state-changing calls and gold actions (SABER's count: a wrong-argument pair counts
twice, once as the call no gold asks for and once as the gold no call made).

Examples
--------
>>> import tauk
>>> res = tauk.load("data/baseline_airline.json")
>>> td = tauk.scoring.trial_deviations(res)
>>> td.select("n_state_diff", "deviation", "success").head(3).rows()
[(2, 'wrong_args', False), (0, None, True), (0, None, True)]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from tauk.conventions import success_expr
from tauk.errors import TaukError
from tauk.scoring._deviation_match import (
    DISCOVERABLE_WRAPPERS,
    argument_equivalence,
    canonical_calls,
    exact_matches,
    order_items,
    pair_leftovers,
)
from tauk.scoring._prepare import CALL_ROLES, Frames, resolve_tasks
from tauk.tasks import SIDES, classify_tools, recorded_tool_types, tool_table

__all__ = ["DEVIATION_KINDS", "NEUTRAL_REASONS", "deviations", "trial_deviations"]

DEVIATION_KINDS = ("wrong_args", "extra", "missing", "order")
"""The kinds of deviation, in the order a trial's label prefers them at the same position."""

NEUTRAL_REASONS = {
    "errored": "the call returned an error (a failing tool leaves the state as it was)",
    "toggle_pair": "an even number of identical extra calls of a toggle tool (they cancel)",
    "list_order": "the differing arguments hold the same list elements in another order",
    "extra_fields": "the differing arguments hold the gold's fields and more (typed tool arguments drop the rest)",
    "no_state_change": "replay evidence: the call left the state as it was",
    "gold_no_change": "replay evidence: the gold action leaves the state as it was (it fails in replay)",
    "no_net_change": "replay evidence: without the trial's decisive deviating calls (the gold without its deviating "
                     "actions) the replay ends in the same state — together they changed nothing (e.g. a reset a "
                     "later reboot undoes)",
    "same_side_order": "writes of one side out of gold order (only order across the agent / user sides is taken "
                       "to change the end state)",
}  # fmt: skip
"""Why a state-changing deviation may leave the end state as the gold actions do (then it is not decisive)."""

_TRIAL_COLUMNS = ("run_id", "simulation_id", "task_id", "trial", "agent", "domain", "setup", "format", "reward",
                  "n_messages")  # fmt: skip

_ITEM_SCHEMA = {
    "run_id": pl.String, "simulation_id": pl.String, "task_id": pl.String, "kind": pl.String,
    "state_changing": pl.Boolean, "decisive": pl.Boolean, "neutral": pl.String, "tool": pl.String,
    "wrong_args": pl.List(pl.String), "call_idx": pl.Int64, "message_idx": pl.Int64, "turn": pl.Int64,
    "requestor": pl.String, "call_arguments": pl.String, "errored": pl.Boolean, "action_idx": pl.Int64,
    "action_id": pl.String, "gold_arguments": pl.String,
}  # fmt: skip


def _get(results: Any, name: str) -> pl.DataFrame | None:
    return results.get(name) if isinstance(results, Mapping) else getattr(results, name, None)


def _side_expr(col: str) -> pl.Expr:
    return pl.col(col).cast(pl.String).str.to_lowercase().replace_strict(SIDES, default=None)


class _Built:
    """Every intermediate of one attribution (built once; the two public tables read it)."""

    def __init__(self, results: Any, tasks: Any, evidence: pl.DataFrame | None = None) -> None:
        self._evidence = _check_evidence(evidence)
        src = Frames(results)
        tr = src.trials
        if tr is None or not isinstance(tr, pl.DataFrame):
            raise TaukError("deviations: give a tauk.Results (or an object / mapping with the trials frame)")
        have = [c for c in _TRIAL_COLUMNS if c in tr.columns]
        self.trials = tr.select(have).with_row_index("_sid")
        if "domain" not in self.trials.columns:
            self.trials = self.trials.with_columns(domain=pl.lit(None, pl.String))
        solo = (
            pl.col("setup").str.split("/").list.get(1, null_on_oob=True) == "solo"
            if "setup" in self.trials.columns else pl.lit(False)
        )  # fmt: skip
        self.trials = self.trials.with_columns(_solo=solo.fill_null(False))
        if tasks is None:
            tdefs, actions, keys = src.tasks, src.expected_actions, ["run_id", "task_id"]
        else:
            (tdefs, actions), keys = resolve_tasks(tasks), ["task_id"]
            if actions is None:
                raise TaukError("deviations: tasks= needs the gold actions (a task file, a (tasks, expected_actions) "
                                "pair or a tauk.Results), not a bare tasks frame")  # fmt: skip
        known = tdefs.select(*keys).with_columns(pl.col("task_id").cast(pl.String)).unique().with_columns(
            _task_known=pl.lit(True))  # fmt: skip
        self.trials = self.trials.join(known, on=keys, how="left").with_columns(
            _task_known=pl.col("_task_known").fill_null(False),
            _has_msgs=pl.col("n_messages").is_not_null() if "n_messages" in self.trials.columns else pl.lit(True),
        )
        self._results, self._src, self._keys = results, src, keys
        self._actions = actions.with_columns(pl.col("task_id").cast(pl.String))

    # -- inputs ---------------------------------------------------------------------------------------------
    def _inputs(self) -> None:
        tr = self.trials.filter(pl.col("_task_known") & pl.col("_has_msgs"))
        a = self._actions
        for c, t in (("requestor", pl.String), ("action_id", pl.String), ("tool_type", pl.String)):
            if c not in a.columns:
                a = a.with_columns(pl.lit(None, t).alias(c))
        a = a.unique(subset=[*self._keys, "action_idx"], keep="first", maintain_order=True)
        golds = tr.select("_sid", *self._keys, "domain", *(["run_id"] if "run_id" not in self._keys else [])).join(
            a.select(*self._keys, "action_idx", "action_id", "name", "arguments", "requestor"), on=self._keys,
            how="inner")  # fmt: skip
        golds = golds.with_columns(_req=_side_expr("requestor"))
        calls = self._src.tool_calls
        for c, t in (("requestor", pl.String), ("role", pl.String), ("result", pl.String), ("is_error", pl.Boolean)):
            if c not in calls.columns:
                calls = calls.with_columns(pl.lit(None, t).alias(c))
        # the calls ACTION pools: those of assistant and user messages (a frame without roles: every call)
        calls = calls.filter(pl.col("role").is_in(CALL_ROLES) | pl.col("role").is_null())
        calls = tr.select("_sid", "run_id", "simulation_id", "domain", "_solo",
                          _fmt=pl.col("format") if "format" in tr.columns else pl.lit(None, pl.String)).join(
            calls.select("run_id", "simulation_id", "call_idx", "message_idx", "name", "arguments", "requestor",
                         "role", "result", "is_error"), on=["run_id", "simulation_id"], how="inner")  # fmt: skip
        calls = calls.with_columns(
            _req=pl.when(pl.col("_solo")).then(pl.lit(None, pl.String)).otherwise(
                pl.coalesce(_side_expr("requestor"), _side_expr("role"))),
            errored=pl.col("is_error").fill_null(False)
            | ((pl.col("_fmt") == "taubench") & pl.col("result").str.starts_with("Error")).fill_null(False),
        )  # fmt: skip
        canon, self.kv, self.texts = canonical_calls(
            pl.concat([calls.select("name", "arguments"), golds.select("name", "arguments")])
        )
        calls = calls.join(canon, on=["name", "arguments"], how="left", nulls_equal=True)
        golds = golds.join(canon, on=["name", "arguments"], how="left", nulls_equal=True)
        self.calls, self.golds = self._classify(calls), self._classify(golds)

    def _classify(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``_cls`` (state / read / null), ``tool_type`` and ``_side`` (the side whose environment has the tool)."""
        recorded = recorded_tool_types(self._results)
        rid = ["run_id"] if "run_id" in frame.columns else []
        distinct = frame.select(*rid, "domain", "_ename", "_wrapper", "_req").unique()
        inner = classify_tools(distinct, name="_ename", requestor="_req", recorded=recorded)
        wrapped = classify_tools(distinct.with_columns(_wname=pl.col("_wrapper")), name="_wname", requestor="_req",
                                 recorded=recorded).select(_wsc="state_changing")  # fmt: skip
        table = tool_table().select(domain="domain", _ename="name", _home="side").unique(["domain", "_ename"])
        wrap_side = pl.col("_wrapper").replace_strict(
            {"call_discoverable_agent_tool": "agent", "call_discoverable_user_tool": "user"}, default=None)
        info = (
            inner.hstack(wrapped)
            .join(table, on=["domain", "_ename"], how="left")
            .with_columns(
                _sc=pl.when(pl.col("_wrapper").is_not_null() & pl.col("state_changing").is_null())
                .then(pl.col("_wsc")).otherwise(pl.col("state_changing")),
                _side=pl.coalesce(wrap_side, "_home", "_req"),
            )
            .select(*rid, "domain", "_ename", "_wrapper", "_req", "tool_type", "_side",
                    _cls=pl.when(pl.col("_sc")).then(pl.lit("state")).when(~pl.col("_sc")).then(pl.lit("read")))
        )  # fmt: skip
        return frame.join(info, on=[*rid, "domain", "_ename", "_wrapper", "_req"], how="left", nulls_equal=True)

    # -- matching -------------------------------------------------------------------------------------------
    def build(self) -> _Built:
        self._inputs()
        calls = self.calls.filter(pl.col("_cls").is_not_null())
        golds = self.golds.filter(pl.col("_cls").is_not_null())
        exact = exact_matches(calls, golds)
        left_c = calls.join(exact.select("_sid", "call_idx"), on=["_sid", "call_idx"], how="anti")
        left_g = golds.join(exact.select("_sid", "action_idx"), on=["_sid", "action_idx"], how="anti")
        # a call that returned an error changed nothing: it is an extra call, and the gold action stays missing
        pairs = pair_leftovers(left_c.filter(~pl.col("errored")), left_g, self.kv)
        extra = left_c.join(pairs.select("_sid", "call_idx"), on=["_sid", "call_idx"], how="anti")
        missing = left_g.join(pairs.select("_sid", "action_idx"), on=["_sid", "action_idx"], how="anti")
        matched = pl.concat([exact.select("_sid", "_cls", "call_idx", "action_idx"),
                             pairs.select("_sid", "_cls", "call_idx", "action_idx")])  # fmt: skip
        state_matched = matched.filter(pl.col("_cls") == "state").join(
            calls.select("_sid", "call_idx", "_side"), on=["_sid", "call_idx"], how="left")
        order = order_items(state_matched)
        self.items = self._items(pairs, extra, missing, order)
        return self

    def _items(self, pairs: pl.DataFrame, extra: pl.DataFrame, missing: pl.DataFrame,
               order: pl.DataFrame) -> pl.DataFrame:  # fmt: skip
        c_cols = self.calls.select("_sid", "call_idx", "message_idx", "_ename", "_ckey", "requestor",
                                   call_arguments="arguments", errored="errored")  # fmt: skip
        g_cols = self.golds.select("_sid", "action_idx", "action_id", _gname="_ename", gold_arguments="arguments")
        equiv = argument_equivalence(pairs, self.texts) if pairs.height else pl.DataFrame(
            schema={"_cu": pl.UInt32, "_gu": pl.UInt32, "_equiv": pl.String})  # fmt: skip
        wrong = (
            pairs.join(equiv, on=["_cu", "_gu"], how="left")
            .select("_sid", "_cls", "call_idx", "action_idx", "wrong_args", "_equiv", kind=pl.lit("wrong_args"))
        )
        ext = extra.select("_sid", "_cls", "call_idx", kind=pl.lit("extra"))
        mis = missing.select("_sid", "_cls", "action_idx", kind=pl.lit("missing"))
        odr = order.select("_sid", "call_idx", "action_idx", "cross_side", _cls=pl.lit("state"),
                           kind=pl.lit("order"))  # fmt: skip
        items = pl.concat([wrong, ext, mis, odr], how="diagonal_relaxed")
        items = items.join(c_cols, on=["_sid", "call_idx"], how="left").join(
            g_cols, on=["_sid", "action_idx"], how="left")
        # an even number of identical extra calls of a toggle tool cancel (the last of an odd number does not)
        toggles = (
            items.filter((pl.col("kind") == "extra") & pl.col("_ename").str.starts_with("toggle_"))
            .with_columns(_n=pl.len().over("_sid", "_ename", "_ckey"),
                          _r=pl.col("call_idx").rank("ordinal").over("_sid", "_ename", "_ckey"))
            .filter(pl.col("_r") <= 2 * (pl.col("_n") // 2))
            .select("_sid", "call_idx", _toggle=pl.lit(True))
        )  # fmt: skip
        items = items.join(toggles, on=["_sid", "call_idx"], how="left")
        items = self._join_evidence(items)
        is_state = pl.col("_cls") == "state"
        neutral = (
            pl.when(~is_state).then(pl.lit(None, pl.String))
            .when(pl.col("kind").is_in(["extra", "wrong_args"]) & pl.col("errored").fill_null(False))
            .then(pl.lit("errored"))
            .when((pl.col("kind") != "missing") & (pl.col("_call_changed") == False))  # noqa: E712
            .then(pl.lit("no_state_change"))
            .when((pl.col("kind") == "missing") & (pl.col("_gold_changed") == False))  # noqa: E712
            .then(pl.lit("gold_no_change"))
            .when(((pl.col("kind") == "extra") & (pl.col("_call_net") == False))  # noqa: E712
                  | ((pl.col("kind") == "missing") & (pl.col("_gold_net") == False))  # noqa: E712
                  | ((pl.col("kind") == "wrong_args") & (pl.col("_call_net") == False)  # noqa: E712
                     & (pl.col("_gold_net") == False)))  # noqa: E712
            .then(pl.lit("no_net_change"))
            .when((pl.col("kind") == "extra") & pl.col("_toggle").fill_null(False)).then(pl.lit("toggle_pair"))
            .when(pl.col("kind") == "wrong_args").then(pl.col("_equiv"))
            .when((pl.col("kind") == "order") & ~pl.col("cross_side").fill_null(False))
            .then(pl.lit("same_side_order"))
        )  # fmt: skip
        turns = self._turns()
        items = (
            items.with_columns(neutral=neutral)
            .join(self.trials.select("_sid", "run_id", "simulation_id", "task_id"), on="_sid", how="left")
            .join(turns, on=["_sid", "message_idx"], how="left")
            .join(self._ends(turns), on="_sid", how="left")
            .with_columns(
                state_changing=is_state,
                decisive=is_state & pl.col("neutral").is_null(),
                tool=pl.coalesce("_ename", "_gname"),
                turn=pl.coalesce("turn", pl.when(pl.col("kind") == "missing").then(pl.col("_end_turn"))),
                wrong_args=pl.col("wrong_args").fill_null(pl.lit([], pl.List(pl.String))),
                _kind_rank=pl.col("kind").replace_strict({k: i for i, k in enumerate(DEVIATION_KINDS)},
                                                         return_dtype=pl.Int8),  # fmt: skip
            )
            .sort("_sid", pl.col("message_idx").fill_null(2**62), pl.col("call_idx").fill_null(2**62),
                  "_kind_rank", pl.col("action_idx").fill_null(-1))  # fmt: skip
        )
        return items

    def _join_evidence(self, items: pl.DataFrame) -> pl.DataFrame:
        """``_call_changed`` / ``_gold_changed``: what replay evidence says the call / gold action did; ``_call_net``
        / ``_gold_net``: whether removing the trial's deviating calls / gold actions changed the replay's end state
        (null: no evidence)."""
        ev = self._evidence
        keys = self.trials.select("_sid", "run_id", "simulation_id")
        if ev is None:
            return items.with_columns(_call_changed=pl.lit(None, pl.Boolean), _gold_changed=pl.lit(None, pl.Boolean),
                                      _call_net=pl.lit(None, pl.Boolean), _gold_net=pl.lit(None, pl.Boolean))
        ev = ev.join(keys, on=["run_id", "simulation_id"], how="inner")

        def side(col: str, prefix: str) -> pl.DataFrame:
            rows = ev.filter(pl.col(col).is_not_null())
            out = None
            for src, name in (("changed_state", f"_{prefix}_changed"), ("net_changed", f"_{prefix}_net")):
                one = rows.filter(pl.col(src).is_not_null()).group_by("_sid", col).agg(pl.col(src).any().alias(name))
                out = one if out is None else out.join(one, on=["_sid", col], how="full", coalesce=True)
            return out

        return items.join(side("call_idx", "call"), on=["_sid", "call_idx"], how="left").join(
            side("action_idx", "gold"), on=["_sid", "action_idx"], how="left")

    def _turns(self) -> pl.DataFrame:
        """``_sid, message_idx, turn``: the 0-based position of each message among the user / assistant messages
        (system and tool messages are not turns)."""
        msgs = self._src.messages
        sims = self.trials.filter(pl.col("_task_known") & pl.col("_has_msgs")).select("_sid", "run_id",
                                                                                          "simulation_id")  # fmt: skip
        return (
            msgs.select("run_id", "simulation_id", "message_idx", "role")
            .join(sims, on=["run_id", "simulation_id"], how="inner")
            .sort("_sid", "message_idx")
            .with_columns(_t=pl.col("role").is_in(["user", "assistant"]).cast(pl.Int64).cum_sum().over("_sid"))
            .select("_sid", "message_idx", turn=pl.max_horizontal(pl.col("_t") - 1, pl.lit(0)))
        )

    @staticmethod
    def _ends(turns: pl.DataFrame) -> pl.DataFrame:
        return turns.group_by("_sid").agg(_end_turn=pl.col("turn").max(), n_turns=pl.col("turn").max() + 1)

    # -- the two tables -------------------------------------------------------------------------------------
    def item_frame(self) -> pl.DataFrame:
        return self.items.select(list(_ITEM_SCHEMA)).cast(_ITEM_SCHEMA)  # type: ignore[arg-type]

    def trial_frame(self) -> pl.DataFrame:
        it = self.items
        st, rd = pl.col("_cls") == "state", pl.col("_cls") == "read"

        def n(kind: str, cls: pl.Expr) -> pl.Expr:
            return ((pl.col("kind") == kind) & cls).sum().cast(pl.Int64)

        counts = it.group_by("_sid").agg(
            n_missing=n("missing", st), n_extra=n("extra", st), n_wrong_args=n("wrong_args", st),
            n_order=n("order", st), n_decisive=pl.col("decisive").sum().cast(pl.Int64),
            n_neutral=(st & pl.col("neutral").is_not_null()).sum().cast(pl.Int64),
            n_read_missing=n("missing", rd), n_read_extra=n("extra", rd), n_read_wrong_args=n("wrong_args", rd),
        )  # fmt: skip
        first = (
            it.filter(pl.col("decisive"))
            .group_by("_sid", maintain_order=True)
            .first()
            .select("_sid", deviation="kind", first_tool="tool", first_wrong_args="wrong_args",
                    first_call_idx="call_idx", first_message_idx="message_idx", first_turn="turn",
                    first_action_idx="action_idx")  # fmt: skip
        )
        calls, golds = self.calls, self.golds
        call_n = calls.group_by("_sid").agg(
            n_calls_state=(pl.col("_cls") == "state").sum().cast(pl.Int64),
            n_unknown_calls=pl.col("_cls").is_null().sum().cast(pl.Int64),
        )
        gold_n = golds.group_by("_sid").agg(
            n_gold_state=(pl.col("_cls") == "state").sum().cast(pl.Int64),
            n_unknown_gold=pl.col("_cls").is_null().sum().cast(pl.Int64),
        )
        ends = self._ends(self._turns()).select("_sid", "n_turns")
        zero = ["n_missing", "n_extra", "n_wrong_args", "n_order", "n_decisive", "n_neutral", "n_read_missing",
                "n_read_extra", "n_read_wrong_args", "n_calls_state", "n_unknown_calls", "n_gold_state",
                "n_unknown_gold"]  # fmt: skip
        tr = self.trials
        out = (
            tr.join(counts, on="_sid", how="left").join(first, on="_sid", how="left")
            .join(call_n, on="_sid", how="left").join(gold_n, on="_sid", how="left").join(ends, on="_sid", how="left")
        )  # fmt: skip
        attributable = pl.col("_task_known") & pl.col("_has_msgs") & (pl.col("n_unknown_gold") == 0)
        out = out.with_columns(pl.col(c).fill_null(0) for c in zero).with_columns(
            attributable=attributable,
            success=success_expr("reward") if "reward" in tr.columns else pl.lit(None, pl.Boolean),
            n_state_diff=pl.col("n_missing") + pl.col("n_extra") + 2 * pl.col("n_wrong_args"),
        )
        null_unless = [c for c in out.columns if c.startswith("n_") and c not in ("n_messages", "n_turns")]
        out = out.with_columns(pl.when(pl.col("_task_known") & pl.col("_has_msgs")).then(pl.col(c)).alias(c)
                               for c in null_unless)  # fmt: skip
        keys = [c for c in _TRIAL_COLUMNS if c in out.columns]
        cols = keys + [
            "success", "attributable", "n_gold_state", "n_calls_state", "n_state_diff", "n_missing", "n_extra",
            "n_wrong_args", "n_order", "n_decisive", "n_neutral", "n_read_missing", "n_read_extra",
            "n_read_wrong_args", "n_unknown_calls", "n_unknown_gold", "deviation", "first_tool", "first_wrong_args",
            "first_call_idx", "first_message_idx", "first_action_idx", "first_turn", "n_turns",
        ]  # fmt: skip
        return out.sort("_sid").select(cols)


def _check_evidence(evidence: Any) -> pl.DataFrame | None:
    if evidence is None:
        return None
    need = {"run_id", "simulation_id"}
    if not isinstance(evidence, pl.DataFrame) or not need <= set(evidence.columns) or not (
            {"call_idx", "action_idx"} & set(evidence.columns)) or not (
            {"changed_state", "net_changed"} & set(evidence.columns)):  # fmt: skip
        raise TaukError("evidence= takes a frame with run_id, simulation_id, call_idx and / or action_idx, and "
                        "changed_state and / or net_changed (what a replay says each call / gold action did to the "
                        "state, alone / together with the trial's other deviations); got "
                        f"{type(evidence).__name__}{' with columns ' + str(evidence.columns) if isinstance(evidence, pl.DataFrame) else ''}")  # fmt: skip
    out = evidence
    for c, t in (("call_idx", pl.Int64), ("action_idx", pl.Int64), ("changed_state", pl.Boolean),
                 ("net_changed", pl.Boolean)):  # fmt: skip
        if c not in out.columns:
            out = out.with_columns(pl.lit(None, t).alias(c))
    return out.select(pl.col("run_id").cast(pl.String), pl.col("simulation_id").cast(pl.String),
                      pl.col("call_idx").cast(pl.Int64), pl.col("action_idx").cast(pl.Int64),
                      pl.col("changed_state").cast(pl.Boolean), pl.col("net_changed").cast(pl.Boolean))  # fmt: skip


def _build(results: Any, tasks: Any, evidence: Any = None) -> _Built:
    return _Built(results, tasks, evidence).build()


def deviations(results: Any, *, tasks: Any = None, evidence: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per deviation of a trial's tool calls from its task's gold actions.

    Parameters
    ----------
    results
        A :class:`tauk.Results` (τ²-bench files of any version, τ-bench lists, a store), or an object / mapping with
        its ``trials``, ``tool_calls``, ``messages``, ``tasks`` and ``expected_actions`` frames.
    tasks
        Other task definitions to compare with (as for :func:`tauk.score`): a task file, a ``(tasks,
        expected_actions)`` pair or a :class:`tauk.Results`; default: the definitions each run embeds.
    evidence
        Optional replay evidence: a frame ``run_id, simulation_id, call_idx`` and / or ``action_idx``,
        ``changed_state`` (did replaying that call / gold action change the state?) and / or ``net_changed`` (did
        the replay's end state change when the trial's decisive deviating calls / gold actions were all left out?).
        A deviating call that changed nothing is neutral (``no_state_change``), so is a missing gold action that
        changes nothing (``gold_no_change``: e.g. a gold write that fails in upstream's own replay); deviations whose
        removal leaves the end state as it was are neutral together (``no_net_change``; a wrong-argument pair needs
        both its call and its gold action so). ``benchmarks/deviation_evidence_upstream.py`` makes both kinds with
        τ²-bench's own environments.

    Returns
    -------
    polars.DataFrame
        ``run_id, simulation_id, task_id, kind`` (``wrong_args``, ``extra``, ``missing``, ``order``),
        ``state_changing``, ``decisive``, ``neutral`` (why a state-changing deviation may be harmless:
        :data:`NEUTRAL_REASONS`), ``tool``, ``wrong_args`` (the differing top-level arguments), ``call_idx``,
        ``message_idx``, ``turn`` (0-based among user / assistant messages; a missing action: the last turn),
        ``requestor``, ``call_arguments``, ``errored``, ``action_idx``, ``action_id``, ``gold_arguments``. Sorted
        by trial, then position in the conversation (missing actions last).

    Examples
    --------
    >>> import tauk
    >>> dv = tauk.scoring.deviations(tauk.load("data/baseline_airline.json"))
    >>> dv.filter(pl.col("decisive")).group_by("kind").len().sort("kind").rows()
    [('extra', 13), ('missing', 15), ('wrong_args', 26)]
    """
    return _build(results, tasks, evidence).item_frame()


def trial_deviations(results: Any, *, tasks: Any = None, evidence: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per trial: its deviations counted and its first decisive deviation.

    Parameters are those of :func:`deviations`.

    Returns
    -------
    polars.DataFrame
        The trial's keys (``run_id, simulation_id, task_id, trial, agent, domain, setup, format, reward,
        n_messages``), ``success``, ``attributable`` (task definition and messages recorded, every gold action's
        tool known), and — null where the trial cannot be compared — ``n_gold_state`` / ``n_calls_state`` (gold
        actions / calls of state-changing tools), ``n_state_diff`` (the multiset difference of the two: ``n_missing
        + n_extra + 2·n_wrong_args``), ``n_missing``, ``n_extra``, ``n_wrong_args``, ``n_order`` (state-changing
        deviations by kind), ``n_decisive``, ``n_neutral``, ``n_read_missing`` / ``n_read_extra`` /
        ``n_read_wrong_args`` (tools that change no state), ``n_unknown_calls`` / ``n_unknown_gold`` (tools the
        table does not know); the first decisive deviation: ``deviation`` (its kind, null if none),
        ``first_tool``, ``first_wrong_args``, ``first_call_idx``, ``first_message_idx``, ``first_action_idx``,
        ``first_turn``; ``n_turns`` (user / assistant messages).

    Examples
    --------
    >>> import tauk
    >>> td = tauk.scoring.trial_deviations(tauk.load("data/baseline_airline.json"))
    >>> td.group_by(pl.col("n_state_diff").clip(0, 2)).agg(pl.len(), pl.col("success").mean().round(3)).sort(
    ...     "n_state_diff").rows()
    [(0, 46, 0.652), (1, 28, 0.0), (2, 26, 0.0)]
    """
    return _build(results, tasks, evidence).trial_frame()


_ = DISCOVERABLE_WRAPPERS  # re-exported for the docs

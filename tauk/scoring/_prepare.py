"""The inputs of scoring: the frames of a Results (fetched lazily), the task definitions to grade against, and the
recomputed COMMUNICATE / ACTION checks (:class:`Prepared`), shared by :func:`tauk.score` and the explanations.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import TaukError
from tauk.scoring._kernel import action_long, communicate_long, flags_at
from tauk.scoring._tasks import read_tasks_file

__all__ = ["Frames", "Prepared", "READ_COLUMNS", "norm_basis", "resolve_tasks"]

# the trials columns scoring reads (ARCHITECTURE.md); absent ones are treated as unknown
READ_COLUMNS = (
    "^(run_id|simulation_id|task_id|format|termination_reason|has_reward_info|reward|reward_basis"
    "|recorded_(db|env_assertion|nl_assertion|communicate|action)|n_messages|n_tool_calls|mode|n_ticks)$"
)

MESSAGE_COLUMNS = ("run_id", "simulation_id", "message_idx", "role", "content", "n_tool_calls")
"""The columns of ``messages`` scoring reads (COMMUNICATE and its explanations)."""

CALL_ROLES = ("assistant", "user")
"""The roles of the messages whose tool calls ACTION pools (τ²-bench: ``AssistantMessage`` and ``UserMessage``)."""


class Frames:
    """Duck-typed access to the frames of a ``tauk.Results`` (or any object / mapping holding them).

    ``messages`` and ``tool_calls`` are fetched only when first needed (the loader builds them on first use)."""

    def __init__(self, results: Any):
        self._r = results

    def _get(self, name: str, required: bool = True) -> pl.DataFrame | None:
        r = self._r
        v = r.get(name) if isinstance(r, Mapping) else getattr(r, name, None)
        if v is None and required:
            raise TaukError(
                f"tauk.score needs a tauk.Results (or an object/mapping with a `{name}` Polars frame); "
                f"got {type(r).__name__} without `{name}`"
            )
        return v

    @cached_property
    def trials(self) -> pl.DataFrame:
        return self._get("trials")

    @cached_property
    def tasks(self) -> pl.DataFrame:
        return self._get("tasks")

    @cached_property
    def expected_actions(self) -> pl.DataFrame:
        return self._get("expected_actions")

    @cached_property
    def messages(self) -> pl.DataFrame:
        """The messages, with only the columns scoring reads when the results can give just those."""
        pick = getattr(self._r, "message_columns", None)
        if callable(pick) and not isinstance(self._r, Mapping):
            return pick(MESSAGE_COLUMNS)
        return self._get("messages")

    @cached_property
    def tool_calls(self) -> pl.DataFrame:
        """The tool calls; where the results decode them together with the messages, through :attr:`messages` (so
        that the file is decoded once, without the columns scoring never reads)."""
        if callable(getattr(self._r, "message_columns", None)) and not isinstance(self._r, Mapping):
            _ = self.messages
        return self._get("tool_calls")

    @property
    def has_ticks(self) -> bool:
        """The results can give the full-duplex frames (``utterances``, ``tick_tool_calls``)."""
        r = self._r
        if isinstance(r, Mapping):
            return r.get("utterances") is not None and r.get("tick_tool_calls") is not None
        return hasattr(type(r), "utterances") and hasattr(type(r), "tick_tool_calls")

    @cached_property
    def utterances(self) -> pl.DataFrame:
        """The agent's merged utterances of the full-duplex simulations, as messages (``MESSAGE_COLUMNS``)."""
        u = self._get("utterances")
        return u.filter(pl.col("role") == "assistant").select(
            "run_id", "simulation_id", pl.col("utterance_idx").alias("message_idx"), "role", "content",
            n_tool_calls=pl.lit(0, pl.Int64),
        )  # fmt: skip

    @cached_property
    def tick_tool_calls(self) -> pl.DataFrame:
        return self._get("tick_tool_calls")


def resolve_tasks(tasks: Any) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """``tasks=`` of :func:`score`: a path, a tasks frame, a ``(tasks, expected_actions)`` pair, or an object
    with ``.tasks`` / ``.expected_actions``."""
    if isinstance(tasks, str | Path):
        return read_tasks_file(tasks)
    if isinstance(tasks, pl.DataFrame):
        return tasks, None
    if isinstance(tasks, tuple | list) and len(tasks) == 2 and all(isinstance(x, pl.DataFrame) for x in tasks):
        return tasks[0], tasks[1]
    t = getattr(tasks, "tasks", None)
    if isinstance(t, pl.DataFrame):
        return t, getattr(tasks, "expected_actions", None)
    raise TaukError(
        "tasks= takes a task file path, a tasks frame, a (tasks, expected_actions) pair or a tauk.Results; "
        f"got {type(tasks).__name__}"
    )


def norm_basis(expr: pl.Expr) -> pl.Expr:
    """Upper-case every component name of a reward-basis list column."""
    return expr.list.eval(pl.element().str.to_uppercase())


@dataclass
class Prepared:
    """Trials with ``_sid``/``_tid``, task definitions with ``_tid``, gold actions with ``_gid``, and the
    recomputed COMMUNICATE/ACTION checks."""

    src: Frames
    trials: pl.DataFrame
    tasks: pl.DataFrame
    golds: pl.DataFrame | None
    regrade: bool
    keys: list[str]
    new_definitions: tuple[pl.DataFrame, pl.DataFrame | None] | None = None  # tasks=: the frames as given

    @classmethod
    def build(cls, results: Any, tasks: Any = None) -> Prepared:
        src = Frames(results)
        # only the columns scoring reads (the result is the caller's frame plus the new columns, stacked)
        trials = src.trials.select(pl.col(READ_COLUMNS)).with_row_index("_sid")
        new = None
        if tasks is None:
            t, a, keys, regrade = src.tasks, src.expected_actions, ["run_id", "task_id"], False
        else:
            (t, a), keys, regrade = resolve_tasks(tasks), ["task_id"], True
            new = (t, a)
        t = t.with_columns(pl.col("task_id").cast(pl.String))
        t = t.unique(subset=keys, keep="first", maintain_order=True).with_row_index("_tid")
        golds = None
        if a is not None:
            golds = (
                a.with_columns(pl.col("task_id").cast(pl.String))
                .join(t.select(*keys, "_tid"), on=keys, how="inner")
                .unique(subset=["_tid", "action_idx"], keep="first", maintain_order=True)
                .sort("_tid", "action_idx")
                .with_row_index("_gid")
            )
        trials = (
            trials.join(
                t.select(
                    *keys,
                    "_tid",
                    _task_criteria=pl.col("has_evaluation_criteria"),
                    _task_basis=norm_basis(pl.col("reward_basis")),
                    _task_n_actions=pl.col("n_actions") if "n_actions" in t.columns else pl.lit(None, pl.Int64),
                    _task_n_nl=pl.col("n_nl_assertions") if "n_nl_assertions" in t.columns else pl.lit(None, pl.Int64),
                ),
                on=keys,
                how="left",
                maintain_order="left",
            )
        )
        return cls(src, trials, t, golds, regrade, keys, new)

    @cached_property
    def _duplex_expr(self) -> pl.Expr:
        """A full-duplex simulation graded from its ticks, where the results can give the tick frames: upstream
        grades from the ticks a simulation whose mode is full-duplex or that records ticks (a trajectory predating
        the ``mode`` field), and only a full-duplex one records ticks."""
        tr = self.trials
        if not ("n_ticks" in tr.columns and self.src.has_ticks):
            return pl.lit(False)
        return pl.col("n_ticks").is_not_null()

    # which simulations can be recomputed (task known and a trajectory recorded), with their keys
    @cached_property
    def _checkable(self) -> pl.DataFrame:
        tr = self.trials
        duplex = self._duplex_expr
        has_msgs = pl.col("n_messages").is_not_null() if "n_messages" in tr.columns else pl.lit(True)
        fmt = pl.col("format") if "format" in tr.columns else pl.lit("tau2")
        # a null tool-call count with messages recorded: some calls could not be read (the loader reported it)
        calls_known = pl.col("n_tool_calls").is_not_null() if "n_tool_calls" in tr.columns else pl.lit(True)
        return tr.lazy().filter(pl.col("_tid").is_not_null() & (has_msgs | duplex)).select(
            "_sid",
            "_tid",
            "run_id",
            "simulation_id",
            _respond_only=(fmt == "taubench").fill_null(False),
            _calls_known=calls_known | duplex,
            _duplex=duplex,
        ).collect()

    @cached_property
    def _any_duplex(self) -> bool:
        return bool(self._checkable.get_column("_duplex").any())

    def _without_duplex(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` (messages or tool calls) without the rows of full-duplex simulations, which are graded from
        their ticks (a file recording both is graded as upstream grades it)."""
        sims = self._checkable.filter(pl.col("_duplex")).select("run_id", "simulation_id")
        return frame.join(sims, on=["run_id", "simulation_id"], how="anti")

    @cached_property
    def _needs_messages(self) -> bool:
        return (
            self._checkable.height > 0
            and self.tasks.get_column("communicate_info").list.len().fill_null(0).sum() > 0
        )

    @cached_property
    def _needs_calls(self) -> bool:
        return self.golds is not None and self.golds.height > 0 and self._checkable.height > 0

    def communicate_long(self, first: bool = True) -> pl.DataFrame:
        if self._needs_messages:
            msgs = self.src.messages
            if self._any_duplex:
                msgs = pl.concat([self._without_duplex(msgs.select(MESSAGE_COLUMNS)), self.src.utterances])
        else:
            msgs = pl.DataFrame(
                schema={"run_id": pl.String, "simulation_id": pl.String, "message_idx": pl.Int64,
                        "role": pl.String, "content": pl.String, "n_tool_calls": pl.Int64}  # fmt: skip
            )
        return communicate_long(
            self._checkable, self.tasks.select("_tid", "communicate_info"), msgs, first=first
        )

    def action_long(self, first: bool = True) -> pl.DataFrame:
        if not self._needs_calls:
            return pl.DataFrame(
                schema={"_sid": pl.UInt32, "_gid": pl.UInt32, "matched": pl.Boolean, "call_idx": pl.Int64}
            )
        calls = self.src.tool_calls
        if "role" in calls.columns:  # upstream pools the calls of assistant and user messages only: a `tool_calls`
            # key on a system or tool message is not part of its models (ignored), so never a match here either
            calls = calls.filter(pl.col("role").is_in(CALL_ROLES))
        if self._any_duplex:
            cols = ["run_id", "simulation_id", "call_idx", "name", "arguments"]
            calls = pl.concat([self._without_duplex(calls.select(cols)), self.src.tick_tool_calls.select(cols)])
        return action_long(self._checkable, self.golds, calls, first=first)

    def recomputed(self) -> pl.DataFrame:
        """``_sid, _communicate, _action`` for every checkable simulation (1.0/0.0; null = not recomputable)."""
        sims = self._checkable.select("_sid", "_tid", "_calls_known")
        if self._needs_calls:  # decoded here, once: never by the two threads below at the same time
            _ = self.src.tool_calls
        # the two checks are independent: COMMUNICATE's Polars work (which releases the GIL) runs in a thread
        # while ACTION parses argument texts in this one
        with ThreadPoolExecutor(max_workers=1) as pool:
            comm_long = pool.submit(self.communicate_long, first=False)
            act_long = self.action_long(first=False)
            comm_long = comm_long.result()
        # _sid is the row number in trials: a simulation passes a check kind unless one of its checks failed
        n = self.trials.height
        out = sims.with_columns(
            _c_all=~pl.lit(flags_at(n, comm_long.filter(~pl.col("met")).get_column("_sid"))).gather(pl.col("_sid")),
            _a_all=~pl.lit(flags_at(n, act_long.filter(~pl.col("matched")).get_column("_sid"))).gather(pl.col("_sid")),
        )
        action_known = pl.col("_calls_known")
        if self.golds is None:  # a bare tasks frame: actions known only where the task has none
            out = out.join(self.trials.select("_sid", "_task_n_actions"), on="_sid", how="left")
            action_known = action_known & (pl.col("_task_n_actions").fill_null(1) == 0)
        return out.select(
            "_sid",
            _communicate=pl.col("_c_all").cast(pl.Float64),
            _action=pl.when(action_known).then(pl.col("_a_all").cast(pl.Float64)),
        )

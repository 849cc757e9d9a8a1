"""``tauk.score``: the τ²-bench reward kernel (SPEC §2) over whole frames, plus per-check explanations.

Per simulation: termination gate -> "no evaluation criteria => 1" -> product over the reward basis of the
components.  DB, ENV_ASSERTION and NL_ASSERTION come from the record (they need the domain environment or an LLM
judge); COMMUNICATE and ACTION are recomputed from the trajectory (see :mod:`tauk.scoring._kernel`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import EvaluationError
from tauk.scoring._kernel import action_long, communicate_long, flags_at
from tauk.scoring._tasks import DEFAULT_BASIS, read_tasks_file

COMPONENTS: tuple[str, ...] = ("DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE")
"""Reward components, in the fixed order used by the ``failure`` column."""

COLUMN: dict[str, str] = {
    "DB": "db",
    "ENV_ASSERTION": "env_assertion",
    "NL_ASSERTION": "nl_assertion",
    "ACTION": "action",
    "COMMUNICATE": "communicate",
}

EVALUATION_TYPES: tuple[str, ...] = (
    "env",
    "communicate",
    "action",
    "nl_assertions",
    "all",
    "all_with_nl_assertions",
    "all_ignore_basis",
    "all_with_nl_assertions_ignore_basis",
)

_ENV = {"DB", "ENV_ASSERTION"}
# Components each evaluation type evaluates ("all" also evaluates NL_ASSERTION when the basis names it, as
# τ²-bench does: it runs the NL judge iff the task needs it).
_EVALUATED: dict[str, set[str]] = {
    "env": set(_ENV),
    "communicate": {"COMMUNICATE"},
    "action": {"ACTION"},
    "nl_assertions": {"NL_ASSERTION"},
    "all": set(COMPONENTS),
    "all_with_nl_assertions": set(COMPONENTS),
    "all_ignore_basis": {"DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"},
    "all_with_nl_assertions_ignore_basis": set(COMPONENTS),
}
_IGNORE_BASIS_ALWAYS: dict[str, tuple[str, ...]] = {
    "all_ignore_basis": ("ACTION", "COMMUNICATE"),
    "all_with_nl_assertions_ignore_basis": ("NL_ASSERTION", "ACTION", "COMMUNICATE"),
}
NORMAL_ENDINGS = ("user_stop", "agent_stop")


# the trials columns scoring reads (ARCHITECTURE.md); absent ones are treated as unknown
_READ_COLUMNS = (
    "^(run_id|simulation_id|task_id|format|termination_reason|has_reward_info|reward|reward_basis"
    "|recorded_(db|env_assertion|nl_assertion|communicate|action)|n_messages|n_tool_calls)$"
)


class RegradeWarning(UserWarning):
    """Re-grading with other task definitions left some simulations without a task definition."""


# ------------------------------------------------------------------------------------------------- inputs
class _Frames:
    """Duck-typed access to the frames of a ``tauk.Results`` (or any object / mapping holding them).

    ``messages`` and ``tool_calls`` are fetched only when first needed (the loader builds them on first use)."""

    def __init__(self, results: Any):
        self._r = results

    def _get(self, name: str, required: bool = True) -> pl.DataFrame | None:
        r = self._r
        v = r.get(name) if isinstance(r, Mapping) else getattr(r, name, None)
        if v is None and required:
            raise TypeError(
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
        return self._get("messages")

    @cached_property
    def tool_calls(self) -> pl.DataFrame:
        return self._get("tool_calls")


def _resolve_tasks(tasks: Any) -> tuple[pl.DataFrame, pl.DataFrame | None]:
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
    raise TypeError(
        "tasks= takes a task file path, a tasks frame, a (tasks, expected_actions) pair or a tauk.Results; "
        f"got {type(tasks).__name__}"
    )


def _norm_basis(expr: pl.Expr) -> pl.Expr:
    return expr.list.eval(pl.element().str.to_uppercase())


# ----------------------------------------------------------------------------------------------- the kernel
@dataclass
class _Prepared:
    """Trials with ``_sid``/``_tid``, task definitions with ``_tid``, gold actions with ``_gid``, and the
    recomputed COMMUNICATE/ACTION checks."""

    src: _Frames
    trials: pl.DataFrame
    tasks: pl.DataFrame
    golds: pl.DataFrame | None
    regrade: bool
    keys: list[str]

    @classmethod
    def build(cls, results: Any, tasks: Any = None) -> _Prepared:
        src = _Frames(results)
        # only the columns scoring reads (the result is the caller's frame plus the new columns, stacked)
        trials = src.trials.select(pl.col(_READ_COLUMNS)).with_row_index("_sid")
        if tasks is None:
            t, a, keys, regrade = src.tasks, src.expected_actions, ["run_id", "task_id"], False
        else:
            (t, a), keys, regrade = _resolve_tasks(tasks), ["task_id"], True
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
                    _task_basis=_norm_basis(pl.col("reward_basis")),
                    _task_n_actions=pl.col("n_actions") if "n_actions" in t.columns else pl.lit(None, pl.Int64),
                ),
                on=keys,
                how="left",
                maintain_order="left",
            )
        )
        return cls(src, trials, t, golds, regrade, keys)

    # which simulations can be recomputed (task known and a message list recorded), with their keys
    @cached_property
    def _checkable(self) -> pl.DataFrame:
        tr = self.trials
        has_msgs = pl.col("n_messages").is_not_null() if "n_messages" in tr.columns else pl.lit(True)
        fmt = pl.col("format") if "format" in tr.columns else pl.lit("tau2")
        # a null tool-call count with messages recorded: some calls could not be read (the loader reported it)
        calls_known = pl.col("n_tool_calls").is_not_null() if "n_tool_calls" in tr.columns else pl.lit(True)
        return tr.lazy().filter(pl.col("_tid").is_not_null() & has_msgs).select(
            "_sid",
            "_tid",
            "run_id",
            "simulation_id",
            _respond_only=(fmt == "taubench").fill_null(False),
            _calls_known=calls_known,
        ).collect()

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
        return action_long(self._checkable, self.golds, self.src.tool_calls, first=first)

    def recomputed(self) -> pl.DataFrame:
        """``_sid, _communicate, _action`` for every checkable simulation (1.0/0.0; null = not recomputable)."""
        sims = self._checkable.select("_sid", "_tid", "_calls_known")
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


def _gate_expr(tr: pl.DataFrame) -> pl.Expr:
    reason = pl.col("termination_reason")
    normal = reason.is_in(list(NORMAL_ENDINGS)).fill_null(False)
    if "format" in tr.columns:  # τ-bench v1 records no termination reason and has no gate
        normal = normal | ((pl.col("format") == "taubench") & reason.is_null()).fill_null(False)
    return pl.when(normal).then(1.0).otherwise(0.0)


def _recorded(tr: pl.DataFrame, name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Float64) if name in tr.columns else pl.lit(None, pl.Float64)


def _check_safety(frame: pl.DataFrame, evaluation: str) -> None:
    """Raise if a simulation that reaches the product has a basis naming a component the type doesn't evaluate."""
    allowed = sorted(_EVALUATED[evaluation])
    bad = (
        frame.lazy()
        .filter((pl.col("gate") == 1.0) & pl.col("has_criteria"))
        .select("task_id", _b=pl.col("score_basis"))
        .explode("_b")
        .filter(pl.col("_b").is_not_null() & ~pl.col("_b").is_in(allowed))
        .unique()
        .sort("_b", "task_id")
        .collect()
    )
    if bad.height == 0:
        return
    parts = []
    for comp, grp in bad.group_by("_b", maintain_order=True):
        ids = grp.get_column("task_id").to_list()
        shown = ", ".join(map(str, ids[:10])) + (f", … ({len(ids)} tasks)" if len(ids) > 10 else "")
        parts.append(f"{comp[0]} (task {shown})")
    known = "" if set(bad.get_column("_b")) <= set(COMPONENTS) else f" Known components: {', '.join(COMPONENTS)}."
    raise EvaluationError(
        f"evaluation={evaluation!r} does not evaluate {'; '.join(parts)}, but the reward basis names it: the "
        f"reward would silently drop that factor. evaluation={evaluation!r} evaluates only "
        f"{', '.join(c for c in COMPONENTS if c in _EVALUATED[evaluation])}. Use an evaluation type that covers "
        f"the basis (e.g. 'all'), or re-score under an explicit basis with reward_basis=[...].{known}"
    )


def score(
    results: Any,
    evaluation: str = "all",
    reward_basis: Sequence[str] | None = None,
    tasks: Any = None,
) -> pl.DataFrame:
    """Score every simulation: the trials frame plus one column per reward component and the reward.

    Args:
        results: a ``tauk.Results`` (or any object/mapping with ``trials``, ``messages``, ``tool_calls``,
            ``tasks`` and ``expected_actions`` frames as in ARCHITECTURE.md).
        evaluation: one of :data:`EVALUATION_TYPES` (SPEC §2.5). ``"all"``: product over the basis;
            ``"all_with_nl_assertions"``: the same (NL is always available from the record);
            ``"all_ignore_basis"``: env × ACTION × COMMUNICATE, where the env part multiplies only the DB /
            ENV_ASSERTION that the basis names; ``"all_with_nl_assertions_ignore_basis"``: the same × NL;
            ``"env"``, ``"communicate"``, ``"action"``, ``"nl_assertions"``: that component alone — these raise
            (safety rule) when a basis names a component outside them; pass ``reward_basis=[...]`` to ask anyway.
        reward_basis: re-score every task under this basis instead of its own (e.g. ``["DB", "COMMUNICATE",
            "ACTION"]``).
        tasks: re-grade with other task definitions (a task file path, a tasks frame, a ``(tasks,
            expected_actions)`` pair or a Results). COMMUNICATE and ACTION are recomputed from the new criteria
            and the new basis applied; DB/ENV/NL are carried over from the record and flagged
            ``db_env_nl_reverifiable = False``; simulations whose task id the new definitions lack get
            ``task_defined = False``, a null reward, ``failure = "task_missing"`` and a :class:`RegradeWarning`.

    Added columns: ``gate``, ``has_criteria``, ``db``, ``env_assertion``, ``nl_assertion``, ``communicate``,
    ``action`` (f64, null = unknown), ``communicate_source`` / ``action_source`` (``"recomputed"``,
    ``"record"`` or null), ``score_basis`` (list[str]), ``score_reward`` (f64, null when it cannot be told),
    ``failure`` (null on success; ``premature:<reason>``; the zero components joined by ``+`` in the order
    DB, ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE; ``no_reward_info``; ``task_missing``),
    ``task_defined`` and ``db_env_nl_reverifiable`` (bool).

    Raises:
        EvaluationError: unknown evaluation type, or a basis naming a component the type does not evaluate.
    """
    if evaluation not in _EVALUATED:
        raise EvaluationError(f"unknown evaluation type {evaluation!r}; expected one of {', '.join(EVALUATION_TYPES)}")
    prep = _Prepared.build(results, tasks)
    return _score_prepared(prep, evaluation, reward_basis)


def _score_prepared(prep: _Prepared, evaluation: str, reward_basis: Sequence[str] | None) -> pl.DataFrame:
    tr = prep.trials
    original = [c for c in prep.src.trials.columns]
    rec = prep.recomputed()
    tr = tr.join(rec, on="_sid", how="left", maintain_order="left")

    is_tb = (pl.col("format") == "taubench").fill_null(False) if "format" in tr.columns else pl.lit(False)
    has_ri = pl.col("has_reward_info").fill_null(False) if "has_reward_info" in tr.columns else pl.lit(True)
    rec_db = _recorded(tr, "recorded_db")
    rec_comm = _recorded(tr, "recorded_communicate")
    rec_reward = _recorded(tr, "reward")
    # τ-bench overwrites r_actions with r_outputs in its info when a task has outputs; with r_outputs = 1 the
    # reward (= r_actions × r_outputs) still tells r_actions.
    tb_db = pl.coalesce(rec_db, pl.when(rec_comm == 1.0).then((rec_reward > 0).cast(pl.Float64)))
    db = pl.when(is_tb).then(tb_db).otherwise(pl.when(has_ri).then(rec_db.fill_null(1.0)))
    env = pl.when(has_ri).then(_recorded(tr, "recorded_env_assertion").fill_null(1.0))
    nl = pl.when(has_ri).then(_recorded(tr, "recorded_nl_assertion").fill_null(1.0))

    fallback = not prep.regrade
    comm_rec = pl.col("_communicate")
    act_rec = pl.col("_action")
    if fallback:
        communicate = pl.coalesce(comm_rec, rec_comm)
        action = pl.coalesce(act_rec, _recorded(tr, "recorded_action"))
        comm_src = pl.when(comm_rec.is_not_null()).then(pl.lit("recomputed")).when(rec_comm.is_not_null()).then(
            pl.lit("record")
        )
        act_src = pl.when(act_rec.is_not_null()).then(pl.lit("recomputed")).when(
            _recorded(tr, "recorded_action").is_not_null()
        ).then(pl.lit("record"))
    else:
        communicate, action = comm_rec, act_rec
        comm_src = pl.when(comm_rec.is_not_null()).then(pl.lit("recomputed"))
        act_src = pl.when(act_rec.is_not_null()).then(pl.lit("recomputed"))

    if reward_basis is not None:
        if isinstance(reward_basis, str):
            reward_basis = [reward_basis]
        basis = pl.lit([str(b).upper() for b in reward_basis], dtype=pl.List(pl.String))
    else:
        basis = pl.col("_task_basis")
        if tr.get_column("_task_basis").null_count():  # the simulation's own basis where the task has none
            own = _norm_basis(pl.col("reward_basis")) if "reward_basis" in tr.columns else pl.lit(None)
            basis = pl.coalesce(basis, own, pl.lit(DEFAULT_BASIS, dtype=pl.List(pl.String)))
        if prep.regrade:  # never guess a basis for a task the new definitions lack
            basis = pl.when(pl.col("_tid").is_not_null()).then(basis)
    has_criteria = pl.col("_task_criteria")
    if fallback:
        has_criteria = has_criteria.fill_null(True)

    tr = tr.lazy().with_columns(
        gate=_gate_expr(tr),
        has_criteria=has_criteria,
        db=db,
        env_assertion=env,
        nl_assertion=nl,
        communicate=communicate,
        action=action,
        communicate_source=comm_src,
        action_source=act_src,
        score_basis=basis,
        task_defined=pl.col("_tid").is_not_null(),
        db_env_nl_reverifiable=pl.lit(not prep.regrade),
    )

    # which components multiply into the reward
    in_basis = {c: pl.col("score_basis").list.contains(c).fill_null(False) for c in COMPONENTS}
    if evaluation in _IGNORE_BASIS_ALWAYS:
        always = _IGNORE_BASIS_ALWAYS[evaluation]
        used = {c: (in_basis[c] if c in _ENV else pl.lit(c in always)) for c in COMPONENTS}
    else:
        used = in_basis
    used_cols = {c: f"_used_{c}" for c in COMPONENTS}
    # safety rule, first as a flag: a simulation reaching the product whose basis names something not evaluated
    named = pl.col("score_basis").list.len().fill_null(0)
    known = pl.sum_horizontal(*[in_basis[c].cast(pl.Int64) for c in COMPONENTS])
    outside = pl.any_horizontal(pl.lit(False), *[in_basis[c] for c in COMPONENTS if c not in _EVALUATED[evaluation]])
    reaching = (pl.col("gate") == 1.0) & pl.col("has_criteria").fill_null(False)
    tr = tr.with_columns(
        **{used_cols[c]: used[c] for c in COMPONENTS}, _unsafe=reaching & (outside | (named > known))
    )
    val = {c: pl.col(COLUMN[c]) for c in COMPONENTS}
    u = {c: pl.col(used_cols[c]) for c in COMPONENTS}
    short = {c: u[c] & (val[c] < 1.0 - 1e-6).fill_null(False) for c in COMPONENTS}
    zero = pl.any_horizontal(*[u[c] & (val[c] == 0.0).fill_null(False) for c in COMPONENTS])
    unknown = pl.any_horizontal(*[u[c] & val[c].is_null() for c in COMPONENTS])
    product = pl.lit(1.0)
    for c in COMPONENTS:
        product = product * pl.when(u[c]).then(val[c]).otherwise(1.0)
    failing = pl.concat_str(
        [pl.when(short[c]).then(pl.lit(c)) for c in COMPONENTS], separator="+", ignore_nulls=True
    )
    premature = pl.col("gate") == 0.0
    no_crit = ~pl.col("has_criteria").fill_null(False) & pl.col("has_criteria").is_not_null()
    missing = ~pl.col("task_defined") if prep.regrade else pl.lit(False)

    tr = tr.with_columns(
        score_reward=pl.when(premature)
        .then(0.0)
        .when(missing)
        .then(None)
        .when(no_crit)
        .then(1.0)
        .when(zero)
        .then(0.0)
        .when(unknown)
        .then(None)
        .otherwise(product),
        failure=pl.when(premature)
        .then(pl.lit("premature:") + pl.col("termination_reason").fill_null("unknown"))
        .when(missing)
        .then(pl.lit("task_missing"))
        .when(no_crit)
        .then(None)
        .when(zero)
        .then(failing)
        .when(unknown)
        .then(pl.lit("no_reward_info"))
        .otherwise(pl.when(failing != "").then(failing)),
    )
    tr = tr.collect()
    if tr.get_column("_unsafe").any():  # duplicated or null names land here too: the check tells them apart
        _check_safety(tr, evaluation)
    if prep.regrade:
        missing_ids = tr.filter(~pl.col("task_defined")).get_column("task_id").unique().sort().to_list()
        if missing_ids:
            shown = ", ".join(map(str, missing_ids[:20])) + (" …" if len(missing_ids) > 20 else "")
            warnings.warn(
                f"re-grading: {len(missing_ids)} task id(s) of the results are not in the new task definitions "
                f"(their simulations get score_reward null, failure 'task_missing'): {shown}",
                RegradeWarning,
                stacklevel=3,
            )
    added = [
        "gate", "has_criteria", "db", "env_assertion", "nl_assertion", "communicate", "action",
        "communicate_source", "action_source", "score_basis", "score_reward", "failure",
        "task_defined", "db_env_nl_reverifiable",
    ]
    kept = prep.src.trials.select([c for c in original if c not in added])
    return kept.hstack([tr.get_column(c) for c in added])


# ------------------------------------------------------------------------------------------- explanations
def communicate_checks(results: Any, tasks: Any = None) -> pl.DataFrame:
    """One row per (simulation, communicate string): ``run_id, simulation_id, task_id, info_idx, info, met,
    message_idx`` (the first assistant message that met it, null if none).

    Simulations without communicate strings have no rows; simulations that cannot be recomputed (task
    definition unknown, no messages recorded) neither."""
    prep = _Prepared.build(results, tasks)
    return (
        prep.communicate_long().join(prep.trials.select("_sid", "run_id", "simulation_id", "task_id"), on="_sid")
        .sort("_sid", "info_idx")
        .select("run_id", "simulation_id", "task_id", "info_idx", "info", "met", "message_idx")
    )


def action_checks(results: Any, tasks: Any = None) -> pl.DataFrame:
    """One row per (simulation, gold action): ``run_id, simulation_id, task_id, action_idx, action_id, name,
    arguments, compare_args, matched, call_idx`` (the first matching tool call, null if none)."""
    prep = _Prepared.build(results, tasks)
    al = prep.action_long()
    golds = prep.golds
    cols = ["action_idx", "action_id", "name", "arguments", "compare_args"]
    if golds is None:
        golds = pl.DataFrame(schema={"_gid": pl.UInt32, **{c: pl.String for c in cols}}).with_columns(
            pl.col("action_idx").cast(pl.Int64), pl.col("compare_args").cast(pl.List(pl.String))
        )
    for c in cols:
        if c not in golds.columns:
            golds = golds.with_columns(pl.lit(None).alias(c))
    return (
        al.join(prep.trials.select("_sid", "run_id", "simulation_id", "task_id"), on="_sid")
        .join(golds.select("_gid", *cols), on="_gid")
        .sort("_sid", "_gid")
        .select("run_id", "simulation_id", "task_id", *cols, "matched", "call_idx")
    )

"""``tauk.score``: the τ²-bench reward kernel (docs/spec.md §2) over whole frames.

Per simulation: termination gate -> "no evaluation criteria => 1" -> product over the reward basis of the
components.  DB, ENV_ASSERTION and NL_ASSERTION come from the record (they need the domain environment or an LLM
judge); COMMUNICATE and ACTION are recomputed from the trajectory (see :mod:`tauk.scoring._kernel`).

The inputs are prepared in :mod:`tauk.scoring._prepare`, the evaluation types are tabled in
:mod:`tauk.scoring._evaluation`, and the per-check explanations live in :mod:`tauk.scoring._explain`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tauk._compat import keyword_options
from tauk.conventions import COMPONENTS, NORMAL_ENDINGS, SUCCESS_TOL
from tauk.errors import EvaluationError, LoadWarning, TaukError
from tauk.scoring._evaluation import (
    COLUMN,
    ENV,
    EVALUATED,
    EVALUATION_TYPES,
    IGNORE_BASIS_ALWAYS,
    SINGLE_ALWAYS,
)
from tauk.scoring._prepare import Prepared, norm_basis, resolve_tasks
from tauk.scoring._tasks import DEFAULT_BASIS
from tauk.tasks import RECOMPUTED_OFFLINE, REGRADED, regrade_eligibility

__all__ = ["COMPONENTS", "EVALUATION_TYPES", "RegradeWarning", "score"]


class RegradeWarning(UserWarning):
    """Re-grading with other task definitions left some simulations without a re-graded reward (a task missing
    from the new definitions, or a (run, task) whose re-grade is not valid offline: ``regrade_class``)."""


def _regrade_classes(prep: Prepared, replayed: pl.DataFrame | None) -> pl.DataFrame:
    """``run_id, task_id, regrade_class, regrade_reason`` of every (run, task) against the new definitions, and with
    a replay ``replayed_class, replayed_reason``: the class where DB and ENV_ASSERTION were recomputed by replay
    (a simulation the replay could not evaluate keeps the offline class)."""
    assert prep.new_definitions is not None
    keys = ["run_id", "task_id"]
    e = regrade_eligibility(prep.src._r, prep.new_definitions, recomputable=RECOMPUTED_OFFLINE)
    e = e.select(*keys, "regrade_class", "regrade_reason")
    if replayed is None:
        return e
    r = regrade_eligibility(prep.src._r, prep.new_definitions,
                            recomputable=(*RECOMPUTED_OFFLINE, "DB", "ENV_ASSERTION"))  # fmt: skip
    r = r.select(*keys, replayed_class="regrade_class", replayed_reason="regrade_reason")
    return e.join(r, on=keys, how="left")


def _mark_not_regraded(tr: pl.DataFrame, classes: pl.DataFrame, keep: bool = False) -> pl.DataFrame:
    """Null ``score_reward`` and ``failure = "not_regraded:<class>"`` wherever the re-grade is not valid (a task the
    new definitions lack keeps ``failure = "task_missing"``); every row gets its class and reason. ``keep``: the
    reward and failure stay as computed (the class still says the re-grade is not valid)."""
    tr = tr.join(classes, on=["run_id", "task_id"], how="left", maintain_order="left")
    if "replayed_class" in classes.columns:  # DB and ENV_ASSERTION of a replayed simulation are recomputed
        both = pl.col("_rdb").is_not_null() & pl.col("_renv").is_not_null()
        tr = tr.with_columns(
            regrade_class=pl.when(both).then(pl.col("replayed_class")).otherwise(pl.col("regrade_class")),
            regrade_reason=pl.when(both).then(pl.col("replayed_reason")).otherwise(pl.col("regrade_reason")),
        ).drop("replayed_class", "replayed_reason")
    valid = pl.col("regrade_class").is_in(list(REGRADED)).fill_null(False)
    if keep:
        return tr
    return tr.with_columns(
        score_reward=pl.when(valid).then(pl.col("score_reward")),
        failure=pl.when(valid | ~pl.col("task_defined")).then(pl.col("failure"))
        .otherwise(pl.lit("not_regraded:") + pl.col("regrade_class").fill_null("unknown")),
    )


def _gate_expr(tr: pl.DataFrame) -> pl.Expr:
    reason = pl.col("termination_reason")
    normal = reason.is_in(list(NORMAL_ENDINGS)).fill_null(False)
    if "format" in tr.columns:  # τ-bench v1 records no termination reason and has no gate
        normal = normal | ((pl.col("format") == "taubench") & reason.is_null()).fill_null(False)
    return pl.when(normal).then(1.0).otherwise(0.0)


def _recorded(tr: pl.DataFrame, name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Float64) if name in tr.columns else pl.lit(None, pl.Float64)


def _unknown_components(frame: pl.DataFrame, evaluation: str, strict: bool, report: Any) -> pl.DataFrame:
    """A reward basis naming a component that does not exist (a typo, a newer release's component) concerns its own
    tasks only: an :class:`EvaluationError` naming them under strict loading, else those simulations get a null
    reward, ``failure = "unknown_component:<NAME>"``, a warning and a load-report entry."""
    names = pl.col("score_basis").list.eval(pl.element().filter(~pl.element().is_in(list(COMPONENTS))))
    flagged = frame.with_columns(_unknown=pl.when(pl.col("_unsafe")).then(names))
    bad = flagged.filter(pl.col("_unknown").list.len().fill_null(0) > 0)
    if bad.height == 0:
        return frame
    pairs = bad.select("task_id", name=pl.col("_unknown").list.first()).unique().sort("name", "task_id")
    parts = []
    for name, grp in pairs.group_by("name", maintain_order=True):
        ids = grp["task_id"].to_list()
        parts.append(f"{name[0]} (task {', '.join(map(str, ids[:10]))}{' …' if len(ids) > 10 else ''})")
    msg = (f"the reward basis names a component that does not exist: {'; '.join(parts)}; evaluation={evaluation!r} "
           f"cannot score it (known components: {', '.join(COMPONENTS)})")  # fmt: skip
    if strict:
        raise EvaluationError(msg + "; load with strict=False to score the other tasks and report these")
    hit = pl.col("_unknown").list.len().fill_null(0) > 0
    frame = flagged.with_columns(
        score_reward=pl.when(hit).then(None).otherwise(pl.col("score_reward")),
        failure=pl.when(hit).then(pl.lit("unknown_component:") + pl.col("_unknown").list.first())
        .otherwise(pl.col("failure")),
        _unsafe=pl.col("_unsafe") & ~hit,
    ).drop("_unknown")
    if report is not None and hasattr(report, "add"):
        report.add("<scoring>", None, "unknown_component", msg + f"; {bad.height} simulation(s) not scored",
                   skipped=bad.height)  # fmt: skip
    warnings.warn(msg + f"; {bad.height} simulation(s) get a null reward", LoadWarning, stacklevel=5)
    return frame


def _check_safety(frame: pl.DataFrame, evaluation: str) -> None:
    """Raise if a simulation that reaches the product has a basis naming a component the type doesn't evaluate."""
    allowed = sorted(EVALUATED[evaluation])
    bad = (
        frame.lazy()
        .filter((pl.col("gate") == 1.0) & pl.col("has_criteria") & pl.col("_unsafe"))
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
        f"{', '.join(c for c in COMPONENTS if c in EVALUATED[evaluation])}. Use an evaluation type that covers "
        f"the basis (e.g. 'all'), or re-score under an explicit basis with reward_basis=[...].{known}"
    )


@keyword_options(("results", "evaluation", "reward_basis", "tasks", "strict"))
def score(
    results: Any,
    *,
    evaluation: str = "all",
    reward_basis: Sequence[str] | None = None,
    tasks: Any = None,
    strict: bool | None = None,
    replay: Any = None,
    invalid_regrades: str = "null",
) -> pl.DataFrame:
    """Score every simulation: the trials frame plus one column per reward component and the reward.

    Parameters
    ----------
    results
        A :class:`tauk.Results` (or any object/mapping with ``trials``, ``messages``, ``tool_calls``, ``tasks``
        and ``expected_actions`` frames as in ARCHITECTURE.md).
    evaluation
        One of :data:`EVALUATION_TYPES` (docs/spec.md §2.5). ``"all"`` (default): product over the basis;
        ``"all_with_nl_assertions"``: the same (NL is always available from the record); ``"all_ignore_basis"``:
        env × ACTION × COMMUNICATE, where the env part multiplies only the DB / ENV_ASSERTION that the basis names;
        ``"all_with_nl_assertions_ignore_basis"``: the same × NL; ``"env"``, ``"communicate"``, ``"action"``,
        ``"nl_assertions"``: that component alone — these raise (safety rule) when a basis names a component
        outside them; pass ``reward_basis=[...]`` to ask anyway.
    reward_basis
        Re-score every task under this basis instead of its own (e.g. ``["DB", "COMMUNICATE", "ACTION"]``).
    tasks
        Re-grade with other task definitions (a task file path, a tasks frame, a ``(tasks, expected_actions)``
        pair or a Results). Every (run, task) is first classified against the definitions the run embeds
        (:func:`tauk.tasks.regrade_eligibility`): ``regrade_class`` is ``unchanged``, ``regradable``,
        ``needs_replay``, ``needs_judge`` or ``not_comparable``, ``regrade_reason`` says why. A re-graded
        ``score_reward`` is reported only for ``unchanged`` and ``regradable`` (COMMUNICATE and ACTION recomputed
        from the new criteria, the new basis applied, DB/ENV/NL carried from the record only where their
        definitions did not change); the other classes get a null ``score_reward``, ``failure =
        "not_regraded:<class>"`` and one :class:`RegradeWarning` with the counts — filter ``regrade_class`` before
        statistics (a null reward counts as a failure in pass^k). Simulations whose task id the new definitions
        lack get ``task_defined = False``, ``failure = "task_missing"``. Runs of another domain than the new
        definitions raise :class:`TaukError`. ``db_env_nl_reverifiable`` is False on every re-graded row.
    replay
        ``True``: compute DB and ENV_ASSERTION by replaying the trajectories through τ²-bench's environments
        (:func:`tauk.replay.replay`, against ``tasks`` when given: a full re-evaluation, so a replayed simulation whose gold actions or ENV assertions changed is ``regradable`` rather than ``needs_replay``); or the frame
        :func:`tauk.replay.replay` returned. Where a simulation was replayed its ``db`` / ``env_assertion`` are the
        replayed verdicts (``db_source`` / ``env_assertion_source`` = ``"replayed"``) and the reward is recomputed
        from them; elsewhere they stay the record's (``"record"``).
    invalid_regrades
        With ``tasks=``: ``"null"`` (default) gives the re-grade classes that are not valid a null ``score_reward``;
        ``"keep"`` keeps the reward computed for them anyway (what ``tau2 evaluate-trajs --fresh-tasks`` reports),
        their ``regrade_class`` still saying why it is not a valid re-grade.

    Returns
    -------
    polars.DataFrame
        The trials frame plus ``gate``, ``has_criteria``, ``db``, ``env_assertion``, ``nl_assertion``,
        ``communicate``, ``action`` (f64, null = unknown), ``communicate_source`` / ``action_source``
        (``"recomputed"``, ``"record"`` or null), ``db_source`` / ``env_assertion_source`` (``"replayed"``,
        ``"record"`` or null), ``score_basis`` (list[str]), ``score_reward`` (f64, null when it
        cannot be told), ``failure`` (null on success; ``premature:<reason>``; the zero components joined by ``+``
        in the order DB, ENV_ASSERTION, NL_ASSERTION, ACTION, COMMUNICATE; ``no_reward_info``; ``task_missing``),
        ``task_defined`` and ``db_env_nl_reverifiable`` (bool), ``regrade_class`` / ``regrade_reason`` (str,
        null unless ``tasks=`` is given). Statistics read its reward with ``reward="score_reward"``.

    Raises
    ------
    EvaluationError
        Unknown evaluation type, or a basis naming a component the type does not evaluate.
    TaukError
        ``results`` or ``tasks`` of an unusable kind; ``tasks`` of another domain than the runs.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> scored = tauk.score(res)
    >>> scored["failure"].value_counts(sort=True).head(2).rows()
    [(None, 322), ('DB', 122)]
    >>> pk = tauk.stats.pass_hat_k(scored, by=("agent", "domain"), k=1, ci=None, reward="score_reward")
    >>> pk.to_frame().filter(domain="airline")["estimate"].to_list()
    [0.74, 0.55, 0.3]
    """
    if evaluation not in EVALUATED:
        raise EvaluationError(f"unknown evaluation type {evaluation!r}; expected one of {', '.join(EVALUATION_TYPES)}")
    if invalid_regrades not in ("null", "keep"):
        raise TaukError(f"invalid_regrades is 'null' or 'keep', not {invalid_regrades!r}")
    replayed = _replayed(results, replay, tasks)
    if callable(getattr(results, "partitions", None)) and not isinstance(results, Mapping):
        return _score_parts(results, evaluation, reward_basis, tasks, strict, replayed, invalid_regrades)
    prep = Prepared.build(results, tasks)
    if strict is None:  # the load's own rule
        strict = bool(getattr(results, "_strict", True))
    return _score_prepared(prep, evaluation, reward_basis, strict, getattr(results, "report", None), replayed,
                           keep_invalid=invalid_regrades == "keep")  # fmt: skip


def _replayed(results: Any, replay: Any, tasks: Any) -> pl.DataFrame | None:
    """``replay=`` of :func:`score`: None, or the replayed verdicts keyed by run and simulation."""
    if replay is None or replay is False:
        return None
    if replay is True:
        from tauk.replay import replay as run_replay

        replay = run_replay(results, tasks=tasks)
    if not isinstance(replay, pl.DataFrame) or not {"run_id", "simulation_id", "replayed_db",
                                                     "replayed_env_assertion"} <= set(replay.columns):  # fmt: skip
        raise TaukError("replay= takes True or the frame tauk.replay.replay() returned")
    return replay.select("run_id", "simulation_id", _rdb="replayed_db", _renv="replayed_env_assertion").unique(
        subset=["run_id", "simulation_id"], keep="first"
    )


def _score_prepared(prep: Prepared, evaluation: str, reward_basis: Sequence[str] | None, strict: bool = True,
                    report: Any = None, replayed: pl.DataFrame | None = None,
                    keep_invalid: bool = False) -> pl.DataFrame:  # fmt: skip
    classes = _regrade_classes(prep, replayed) if prep.regrade else None  # a domain mismatch raises here
    tr = prep.trials
    original = [c for c in prep.src.trials.columns]
    rec = prep.recomputed()
    tr = tr.join(rec, on="_sid", how="left", maintain_order="left")
    if replayed is not None:
        tr = tr.join(replayed, on=["run_id", "simulation_id"], how="left", maintain_order="left")
    else:
        tr = tr.with_columns(_rdb=pl.lit(None, pl.Float64), _renv=pl.lit(None, pl.Float64))

    is_tb = (pl.col("format") == "taubench").fill_null(False) if "format" in tr.columns else pl.lit(False)
    has_ri = pl.col("has_reward_info").fill_null(False) if "has_reward_info" in tr.columns else pl.lit(True)
    rec_db = _recorded(tr, "recorded_db")
    rec_comm = _recorded(tr, "recorded_communicate")
    rec_reward = _recorded(tr, "reward")
    # τ-bench overwrites r_actions with r_outputs in its info when a task has outputs; with r_outputs = 1 the
    # reward (= r_actions × r_outputs) still tells r_actions.
    tb_db = pl.coalesce(rec_db, pl.when(rec_comm == 1.0).then((rec_reward > 0).cast(pl.Float64)))
    db_rec = pl.when(is_tb).then(tb_db).otherwise(pl.when(has_ri).then(rec_db.fill_null(1.0)))
    env_rec = pl.when(has_ri).then(_recorded(tr, "recorded_env_assertion").fill_null(1.0))
    # replayed verdicts (tauk.replay) where there are some, else the record's
    db = pl.coalesce(pl.col("_rdb"), db_rec)
    env = pl.coalesce(pl.col("_renv"), env_rec)
    db_src = pl.when(pl.col("_rdb").is_not_null()).then(pl.lit("replayed")).when(db_rec.is_not_null()).then(
        pl.lit("record")
    )
    env_src = pl.when(pl.col("_renv").is_not_null()).then(pl.lit("replayed")).when(env_rec.is_not_null()).then(
        pl.lit("record")
    )
    # NL_ASSERTION unrecorded (the judge did not run: NL outside the basis under 'all') is 1.0 only where the task
    # is known to have no NL assertion to judge (τ²-bench's evaluator gives 1.0 then); else — NL assertions, or no
    # task definition to tell — unknown, not passed
    nothing_to_judge = pl.col("_task_n_nl") == 0
    nl = pl.when(has_ri).then(
        pl.coalesce(_recorded(tr, "recorded_nl_assertion"), pl.when(nothing_to_judge).then(1.0))
    )

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
            own = norm_basis(pl.col("reward_basis")) if "reward_basis" in tr.columns else pl.lit(None)
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
        db_source=db_src,
        env_assertion_source=env_src,
        score_basis=basis,
        task_defined=pl.col("_tid").is_not_null(),
        db_env_nl_reverifiable=pl.lit(not prep.regrade),
    )

    # which components multiply into the reward
    in_basis = {c: pl.col("score_basis").list.contains(c).fill_null(False) for c in COMPONENTS}
    if evaluation in IGNORE_BASIS_ALWAYS or evaluation in SINGLE_ALWAYS:
        always = IGNORE_BASIS_ALWAYS.get(evaluation, SINGLE_ALWAYS.get(evaluation, ()))
        used = {c: (in_basis[c] if c in ENV else pl.lit(c in always)) for c in COMPONENTS}
    else:
        used = in_basis
    used_cols = {c: f"_used_{c}" for c in COMPONENTS}
    # safety rule, first as a flag: a simulation reaching the product whose basis names something not evaluated
    named = pl.col("score_basis").list.len().fill_null(0)
    known = pl.sum_horizontal(*[in_basis[c].cast(pl.Int64) for c in COMPONENTS])
    outside = pl.any_horizontal(pl.lit(False), *[in_basis[c] for c in COMPONENTS if c not in EVALUATED[evaluation]])
    reaching = (pl.col("gate") == 1.0) & pl.col("has_criteria").fill_null(False)
    tr = tr.with_columns(
        **{used_cols[c]: used[c] for c in COMPONENTS}, _unsafe=reaching & (outside | (named > known))
    )
    val = {c: pl.col(COLUMN[c]) for c in COMPONENTS}
    u = {c: pl.col(used_cols[c]) for c in COMPONENTS}
    short = {c: u[c] & (val[c] < 1.0 - SUCCESS_TOL).fill_null(False) for c in COMPONENTS}
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
        tr = _unknown_components(tr, evaluation, strict, report)
        _check_safety(tr, evaluation)
    if classes is not None:
        tr = _mark_not_regraded(tr, classes, keep_invalid)
    else:
        tr = tr.with_columns(regrade_class=pl.lit(None, pl.String), regrade_reason=pl.lit(None, pl.String))
    if prep.regrade:
        missing_ids = tr.filter(~pl.col("task_defined")).get_column("task_id").unique().sort().to_list()
        if missing_ids and len(missing_ids) == tr.get_column("task_id").n_unique():
            raise EvaluationError(
                f"re-grading: none of the {len(missing_ids)} task id(s) of the results is in the new task "
                "definitions — are they another domain's (or another benchmark's) tasks? "
                f"first ids of the results: {', '.join(map(str, missing_ids[:5]))}"
            )
        if missing_ids:
            shown = ", ".join(map(str, missing_ids[:20])) + (" …" if len(missing_ids) > 20 else "")
            warnings.warn(
                f"re-grading: {len(missing_ids)} task id(s) of the results are not in the new task definitions "
                f"(their simulations get score_reward null, failure 'task_missing'): {shown}",
                RegradeWarning,
                stacklevel=4,
            )
        _warn_not_regraded(tr, keep_invalid)
    added = [
        "gate", "has_criteria", "db", "env_assertion", "nl_assertion", "communicate", "action",
        "communicate_source", "action_source", "db_source", "env_assertion_source", "score_basis", "score_reward",
        "failure", "task_defined", "db_env_nl_reverifiable", "regrade_class", "regrade_reason",
    ]
    kept = prep.src.trials.select([c for c in original if c not in added])
    return kept.hstack([tr.get_column(c) for c in added])


def _warn_not_regraded(tr: pl.DataFrame, keep: bool = False) -> None:
    """One warning with the counts of simulations whose re-grade is not valid (task_missing is warned apart)."""
    bad = tr.filter(~pl.col("regrade_class").is_in(list(REGRADED)).fill_null(True) & pl.col("task_defined"))
    if bad.height == 0:
        return
    counts = bad.group_by("regrade_class").agg(n=pl.len(), t=pl.col("task_id").n_unique()).sort("regrade_class")
    parts = ", ".join(f"{c} {n} ({t} task{'s' if t != 1 else ''})" for c, n, t in counts.rows())
    warnings.warn(
        f"re-grading: {bad.height} of {tr.height} simulation(s) cannot be re-graded offline against the new "
        f"definitions — {parts}; "
        + ("their score_reward is kept as computed (invalid_regrades='keep') though it is not a valid re-grade; "
           if keep else "their score_reward is null and ")
        + "regrade_class / regrade_reason say why. Filter regrade_class in ('unchanged', 'regradable') before "
        "statistics" + ("" if keep else " (a null reward counts as a failure in pass^k)"),
        RegradeWarning,
        stacklevel=5,
    )


def _part_of(replayed: pl.DataFrame | None, part: Any) -> pl.DataFrame | None:
    if replayed is None:
        return None
    keys = part["trials"].select("run_id", "simulation_id")
    return replayed.join(keys, on=["run_id", "simulation_id"], how="semi").rename(
        {"_rdb": "replayed_db", "_renv": "replayed_env_assertion"}
    )


def _score_parts(results: Any, evaluation: str, reward_basis: Sequence[str] | None, tasks: Any,
                 strict: bool | None = None, replayed: pl.DataFrame | None = None,
                 invalid_regrades: str = "null") -> pl.DataFrame:  # fmt: skip
    """Score a store part by part (whole simulations each: one part's messages in memory at a time)."""
    if isinstance(tasks, str | Path):  # a tasks file: read once, not once per part
        tasks = resolve_tasks(tasks)
    parts = results.partitions()
    n = results.n_partitions() if callable(getattr(results, "n_partitions", None)) else None
    if n is not None and n > 8:
        from tqdm.auto import tqdm

        parts = tqdm(parts, total=n, desc="scoring", unit="part")
    out, seen = [], set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for part in parts:
            out.append(score(part, evaluation=evaluation, reward_basis=reward_basis, tasks=tasks,
                             strict=True if strict is None else strict, replay=_part_of(replayed, part),
                             invalid_regrades=invalid_regrades))  # fmt: skip
    for w in caught:  # once each, however many parts raised it
        if (w.category, str(w.message)) not in seen:
            seen.add((w.category, str(w.message)))
            warnings.warn(str(w.message), w.category, stacklevel=3)
    if not out:
        return score({name: results.scan(name).collect() for name in results.FRAMES}, evaluation=evaluation,
                     reward_basis=reward_basis, tasks=tasks, replay=replayed,
                     invalid_regrades=invalid_regrades)  # fmt: skip
    return pl.concat(out, how="vertical_relaxed")

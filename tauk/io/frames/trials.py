"""The ``trials`` frame: one row per simulation, with the recorded reward and components.

Built from the *light* decode (message bodies skipped): tool calls are counted, not decoded. The recorded
components follow :data:`tauk.io.columns.TRIALS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
import polars as pl

from tauk.conventions import DEFAULT_REWARD_BASIS, INFRA_REASON
from tauk.io import structs as S
from tauk.io.columns import TRIALS
from tauk.io.frames._build import (
    canonical_json,
    check_huge_values,
    new_columns,
    taubench_simulation_id,
    to_float,
    to_frame,
    to_int,
)
from tauk.io.frames.runs import run_domain, run_setup
from tauk.io.read import RunData, parse_tool_calls_string

__all__ = ["build_trials"]

_DEFAULT_BASIS = list(DEFAULT_REWARD_BASIS)
_RECORDED = ("reward", "recorded_db", "recorded_env_assertion", "recorded_nl_assertion", "recorded_communicate",
             "recorded_action", "reward_breakdown", "recorded_reward_basis")  # the order of _recorded()'s tuple
_CALLS = S.decoder(list[S.Skipped] | str | None)  # a call that is not an object: the count is unknown


def _task_basis(task: S.Task) -> list[str] | None:
    ec = task.evaluation_criteria
    return list(ec.reward_basis) if ec is not None and ec.reward_basis is not None else None


def _count_calls(messages: Sequence[S.LightMessage] | None, null: msgspec.Raw = S.NULL,
                 decode: Any = _CALLS.decode) -> int | None:  # fmt: skip
    """Tool calls in a light message list; None when messages are null or some calls cannot be read."""
    if messages is None:
        return None
    n = 0
    for raw in [m.tool_calls for m in messages if m.tool_calls != null]:
        try:
            tc = decode(raw)
        except msgspec.DecodeError:  # neither a list nor a string (e.g. a number): reported when messages load
            return None
        if type(tc) is list:
            n += len(tc)
        elif tc is not None:  # a tool-calls list written as a string (nonconformant files)
            try:
                n += len(parse_tool_calls_string(tc) or ())
            except ValueError:  # unreadable (reported at load): the count is unknown
                return None
    return n


def _all_met(checks: Sequence[Any] | None, attr: str) -> float | None:
    if checks is None:
        return None
    if attr == "met":  # the two attributes read directly: no getattr per check
        return 1.0 if all(c.met for c in checks) else 0.0
    return 1.0 if all(c.action_match for c in checks) else 0.0


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _breakdown_json(bd: dict[str, float | None]) -> str:
    try:
        return orjson.dumps(bd, option=_SORTED).decode()
    except TypeError:  # what orjson cannot write (canonical_json's fallback)
        return canonical_json(bd)


def _recorded(ri: S.RewardInfo | None) -> tuple:
    """(reward, db, env, nl, communicate, action, breakdown JSON, recorded basis) of one reward_info."""
    if ri is None:
        return (None,) * 8
    bd = ri.reward_breakdown
    env = None
    if ri.env_assertions is not None:
        env = 1.0
        for e in ri.env_assertions:
            env *= e.reward if e.reward is not None else (1.0 if e.met else 0.0)
    nl = _all_met(ri.nl_assertions, "met") if ri.nl_assertions else None
    if bd is None:
        comm = act = bd_nl = None
    else:
        comm, act, bd_nl = bd.get("COMMUNICATE"), bd.get("ACTION"), bd.get("NL_ASSERTION")
    basis = ri.reward_basis
    return (
        ri.reward,
        ri.db_check.db_reward if ri.db_check is not None else None,
        env,
        nl if nl is not None else bd_nl,
        comm if comm is not None else _all_met(ri.communicate_checks, "met"),
        act if act is not None else _all_met(ri.action_checks, "action_match"),
        _breakdown_json(bd) if bd is not None else None,
        list(basis) if basis is not None else None,
    )


def _num(v: Any, conv) -> Any:
    """``conv(v)`` (``to_int`` or ``to_float``), skipping the call when ``v`` already has the right type."""
    if v is None or type(v) is int or (type(v) is float and conv is to_float):
        return v
    return conv(v)


def build_trials(
    runs: Sequence[RunData], run_ids: Sequence[str], agents: Sequence[str | None], user_models: Sequence[str | None],
    num_trials: Sequence[int | None],
) -> pl.DataFrame:  # fmt: skip
    """The ``trials`` frame.

    Parameters
    ----------
    runs : sequence of RunData
        The decoded sources.
    run_ids, agents, user_models, num_trials : sequence
        Per run: its id, agent label, user model and number of trials (as in the ``runs`` frame).

    Returns
    -------
    polars.DataFrame
        One row per kept simulation, columns of :data:`tauk.io.columns.TRIALS`.

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> trials = build_trials([run], ["r"], ["baseline"], [None], [4])
    >>> trials.height, trials["reward_basis"][0].to_list()
    (100, ['DB', 'COMMUNICATE'])
    """
    trial_cols = new_columns(TRIALS)
    for run, rid, agent, umodel, ntr in zip(runs, run_ids, agents, user_models, num_trials):
        domain = run_domain(run)
        info = run.info
        agent_impl = info.agent_info.implementation if info and info.agent_info else None
        user_impl = info.user_info.implementation if info and info.user_info else None
        n = len(run.tb_records) if run.format == "taubench" else len(run.simulations)
        for col, value in (("agent_implementation", agent_impl), ("user_implementation", user_impl),
                           ("setup", run_setup(run, domain, agent_impl, user_impl, umodel))):  # fmt: skip
            trial_cols[col] += [value] * n
        if run.format == "taubench":
            _taubench_trial_rows(trial_cols, run, rid, agent, domain, ntr)
            continue
        sims = run.simulations
        bases = {str(t.id): _task_basis(t) for t in run.tasks}
        for col, value in (("run_id", rid), ("format", run.format), ("agent", agent), ("domain", domain),
                           ("user_model", umodel), ("num_trials", ntr)):  # fmt: skip
            trial_cols[col] += [value] * n
        tids = [str(s.task_id) for s in sims]
        reasons = [s.termination_reason for s in sims]
        trial_cols["simulation_id"] += [str(s.id) for s in sims]
        trial_cols["task_id"] += tids
        trial_cols["trial"] += [_num(s.trial, to_int) for s in sims]
        trial_cols["termination_reason"] += reasons
        trial_cols["is_infra_error"] += [r == INFRA_REASON for r in reasons]
        trial_cols["has_reward_info"] += [s.reward_info is not None for s in sims]
        recorded = list(zip(*[_recorded(s.reward_info) for s in sims])) or [[]] * 8
        for col, values in zip(_RECORDED, recorded):
            trial_cols[col] += values
        trial_cols["reward_basis"] += [
            rb if rb is not None else (tb if (tb := bases.get(tid)) is not None else _DEFAULT_BASIS)
            for rb, tid in zip(recorded[7], tids)
        ]
        trial_cols["agent_cost"] += [_num(s.agent_cost, to_float) for s in sims]
        trial_cols["user_cost"] += [_num(s.user_cost, to_float) for s in sims]
        trial_cols["duration"] += [_num(s.duration, to_float) for s in sims]
        trial_cols["start_time"] += [s.start_time for s in sims]
        trial_cols["end_time"] += [s.end_time for s in sims]
        trial_cols["seed"] += [_num(s.seed, to_int) for s in sims]
        trial_cols["mode"] += [s.mode for s in sims]
        trial_cols["n_messages"] += [len(s.messages) if s.messages is not None else None for s in sims]
        trial_cols["n_tool_calls"] += [_count_calls(s.messages) for s in sims]
        trial_cols["n_ticks"] += [len(s.ticks) if s.ticks is not None else None for s in sims]
        _head_fields(trial_cols, sims)
    return check_huge_values(to_frame(trial_cols, TRIALS), {r: str(run.path) for run, r in zip(runs, run_ids)}, "trials")


_HEAD = ("db_match", "auth_status", "n_read_actions", "n_read_actions_correct", "n_write_actions",
         "n_write_actions_correct", "had_unresponsive_period", "review", "review_errors")  # fmt: skip


def _head_fields(trial_cols: dict[str, list], sims: Sequence[S.LightSimulation]) -> None:
    """The per-simulation fields upstream HEAD's metrics count (DB match, authentication, read / write action checks,
    responsiveness, LLM review errors); null where a simulation records none (every pre-1.0 file). A column is filled
    only when some simulation of the run records its field."""
    n = len(sims)
    none = [None] * n
    ris = [s.reward_info for s in sims]
    trial_cols["db_match"] += [None if ri is None or (d := ri.db_check) is None else bool(d.db_match) for ri in ris]
    # upstream writes `tool_type` on every action check from v1.0 on (null for an unknown tool), never before: the
    # first check recorded tells
    first = next((cs[0] for ri in ris if ri is not None and (cs := ri.action_checks)), None)
    if first is not None and first.tool_type is not S.ABSENT:
        checks = [ri.action_checks if ri is not None else None for ri in ris]
        for side, raw in (("read", b'"read"'), ("write", b'"write"')):
            typed = [[c for c in cs if bytes(c.tool_type) == raw] if cs else None for cs in checks]
            trial_cols[f"n_{side}_actions"] += [None if t is None else len(t) for t in typed]
            trial_cols[f"n_{side}_actions_correct"] += [None if t is None else sum(1 for c in t if c.action_match)
                                                        for t in typed]  # fmt: skip
    else:  # no check records a tool type (before v1.0): nothing to count, as upstream counts nothing
        for col in ("n_read_actions", "n_read_actions_correct", "n_write_actions", "n_write_actions_correct"):
            trial_cols[col] += none
    if not any(s.auth_classification is not None or s.info is not None or s.review is not None
               or s.user_only_review is not None for s in sims):  # fmt: skip
        for col in ("auth_status", "had_unresponsive_period", "review", "review_errors"):
            trial_cols[col] += none
        return
    trial_cols["auth_status"] += [s.auth_classification.status if s.auth_classification is not None else None
                                  for s in sims]  # fmt: skip
    flags = [s.info.had_unresponsive_period if s.info is not None else S.ABSENT for s in sims]
    trial_cols["had_unresponsive_period"] += [None if f is S.ABSENT or not bytes(f) else _truthy(f) for f in flags]
    for s in sims:
        review, kind = (s.review, "review") if s.review is not None else (s.user_only_review, "user_only_review")
        if review is None:
            trial_cols["review"].append(None)
            trial_cols["review_errors"].append(None)
            continue
        trial_cols["review"].append(kind)
        trial_cols["review_errors"].append(canonical_json([
            {"source": e.source if kind == "review" else "user", "severity": e.severity,
             "error_tags": list(e.error_tags or ()), "turn_idx": _num(e.turn_idx, to_int),
             "tick_start": _num(e.tick_start, to_int)}
            for e in review.errors or ()
        ]))  # fmt: skip


def _truthy(raw: msgspec.Raw) -> bool:
    """Python truthiness of a JSON value (as upstream's ``if sim.info[...]``)."""
    b = bytes(raw).strip()
    if b in (b"true", b"false", b"null"):
        return b == b"true"
    try:
        return bool(msgspec.json.decode(b))
    except msgspec.DecodeError:
        return False


def _taubench_trial_rows(trial_cols: dict[str, list], run: RunData, rid: str, agent: str | None,
                         domain: str | None, ntr: int | None) -> None:  # fmt: skip
    for pos, r in zip(run.sim_sources, run.tb_records):
        info = r.info
        inner = info.reward_info.info if info and info.reward_info else None
        outputs = info.task.outputs if info and info.task else None
        trial_cols["run_id"].append(rid)
        trial_cols["simulation_id"].append(taubench_simulation_id(r.task_id, r.trial, pos))
        trial_cols["task_id"].append(str(r.task_id))
        trial_cols["trial"].append(to_int(r.trial))
        trial_cols["format"].append("taubench")
        trial_cols["agent"].append(agent)
        trial_cols["domain"].append(domain)
        trial_cols["user_model"].append(None)
        trial_cols["num_trials"].append(ntr)
        trial_cols["termination_reason"].append(None)
        trial_cols["is_infra_error"].append(False)
        trial_cols["reward"].append(r.reward)
        trial_cols["has_reward_info"].append(info is not None and info.reward_info is not None)
        trial_cols["recorded_db"].append(inner.r_actions if inner else None)
        trial_cols["recorded_env_assertion"].append(None)
        trial_cols["recorded_nl_assertion"].append(None)
        r_out = inner.r_outputs if inner else None
        if r_out is None and inner is not None and not outputs:
            r_out = 1.0  # τ-bench records r_outputs only when the task has outputs
        trial_cols["recorded_communicate"].append(r_out)
        trial_cols["recorded_action"].append(None)
        trial_cols["recorded_reward_basis"].append(None)
        trial_cols["reward_basis"].append(_DEFAULT_BASIS)
        trial_cols["reward_breakdown"].append(None)
        trial_cols["agent_cost"].append(None)
        trial_cols["user_cost"].append(info.user_cost if info else None)
        for k in ("duration", "start_time", "end_time", "seed", "mode"):
            trial_cols[k].append(None)
        trial_cols["n_messages"].append(len(r.traj) if r.traj is not None else None)
        trial_cols["n_tool_calls"].append(_count_calls(r.traj))
        for col in ("n_ticks", *_HEAD):
            trial_cols[col].append(None)

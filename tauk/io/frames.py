"""Build the tidy Polars frames (see ARCHITECTURE.md) from decoded runs."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import msgspec
import orjson
import polars as pl

from tauk.errors import LoadError, LoadReport
from tauk.io import structs as S
from tauk.io.read import _TB_RAW, DECODE_ERRORS, RunData, error_location, parse_tool_calls_string, read_again

DEFAULT_BASIS = ["DB", "COMMUNICATE"]
PREMATURE_OK = ("user_stop", "agent_stop")
DOMAINS = ("airline", "retail", "telecom", "mock", "banking_knowledge", "banking")

LIST_STR = pl.List(pl.String)

RUNS_SCHEMA = {
    "run_id": pl.String, "source": pl.String, "format": pl.String, "format_version": pl.String,
    "agent": pl.String, "agent_implementation": pl.String, "user_model": pl.String,
    "user_implementation": pl.String, "domain": pl.String, "num_trials": pl.Int64, "max_steps": pl.Int64,
    "max_errors": pl.Int64, "seed": pl.Int64, "git_commit": pl.String, "timestamp": pl.String,
    "n_simulations": pl.Int64, "n_tasks": pl.Int64, "n_infra_errors": pl.Int64,
}  # fmt: skip

TRIALS_SCHEMA = {
    "run_id": pl.String, "simulation_id": pl.String, "task_id": pl.String, "trial": pl.Int64,
    "format": pl.String, "agent": pl.String, "domain": pl.String, "user_model": pl.String,
    "num_trials": pl.Int64, "termination_reason": pl.String, "is_infra_error": pl.Boolean,
    "reward": pl.Float64, "has_reward_info": pl.Boolean, "recorded_db": pl.Float64,
    "recorded_env_assertion": pl.Float64, "recorded_nl_assertion": pl.Float64,
    "recorded_communicate": pl.Float64, "recorded_action": pl.Float64,
    "recorded_reward_basis": LIST_STR, "reward_basis": LIST_STR, "reward_breakdown": pl.String,
    "agent_cost": pl.Float64, "user_cost": pl.Float64, "duration": pl.Float64, "start_time": pl.String,
    "end_time": pl.String, "seed": pl.Int64, "mode": pl.String, "n_messages": pl.Int64, "n_tool_calls": pl.Int64,
}  # fmt: skip

MESSAGES_SCHEMA = {
    "run_id": pl.String, "simulation_id": pl.String, "message_idx": pl.Int64, "role": pl.String,
    "content": pl.String, "turn_idx": pl.Int64, "timestamp": pl.String, "cost": pl.Float64,
    "n_tool_calls": pl.Int64, "tool_call_id": pl.String, "requestor": pl.String, "is_error": pl.Boolean,
    "usage": pl.String, "raw_data": pl.String,
}  # fmt: skip

TOOL_CALLS_SCHEMA = {
    "run_id": pl.String, "simulation_id": pl.String, "message_idx": pl.Int64, "call_idx": pl.Int64,
    "tool_call_id": pl.String, "name": pl.String, "arguments": pl.String, "requestor": pl.String,
    "role": pl.String, "result": pl.String, "is_error": pl.Boolean, "parsed_from_string": pl.Boolean,
}  # fmt: skip

TASKS_SCHEMA = {
    "run_id": pl.String, "task_id": pl.String, "reward_basis": LIST_STR, "reward_basis_defaulted": pl.Boolean,
    "has_evaluation_criteria": pl.Boolean, "communicate_info": LIST_STR, "nl_assertions": LIST_STR,
    "n_actions": pl.Int64, "n_env_assertions": pl.Int64, "n_communicate_info": pl.Int64,
    "n_nl_assertions": pl.Int64, "description": pl.String,
}  # fmt: skip

EXPECTED_ACTIONS_SCHEMA = {
    "run_id": pl.String, "task_id": pl.String, "action_idx": pl.Int64, "action_id": pl.String,
    "name": pl.String, "arguments": pl.String, "compare_args": LIST_STR, "requestor": pl.String,
}  # fmt: skip


_SEP = "\x1f"


def _str_lists(name: str, values: list[list[str] | None]) -> pl.Series:
    """A List(String) column, built via one joined string per row (much faster than nested conversion)."""
    if any(_SEP in x or x == "" for v in values if v for x in v):
        return pl.Series(name, values, dtype=LIST_STR, strict=False)
    joined = pl.Series(name, [None if v is None else _SEP.join(v) for v in values], dtype=pl.String)
    empty = pl.lit([], dtype=LIST_STR)
    return pl.select(pl.when(joined == "").then(empty).otherwise(joined.str.split(_SEP)).alias(name)).to_series()


def _frame(cols: dict[str, list], schema: dict[str, Any]) -> pl.DataFrame:
    series = []
    for k, dtype in schema.items():
        vals = cols.get(k, [])
        if dtype == LIST_STR:
            series.append(_str_lists(k, vals))
        else:
            series.append(pl.Series(k, vals, dtype=dtype, strict=False))
    return pl.DataFrame(series)


def _cols(schema: dict[str, Any]) -> dict[str, list]:
    return {k: [] for k in schema}


def _int(v: Any) -> int | None:
    if v is None or isinstance(v, bool):
        return None if v is None else int(v)
    if isinstance(v, int):
        return v
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _raw_text(raw: msgspec.Raw | None) -> str | None:
    if raw is None:
        return None
    b = bytes(raw)
    return None if b == b"null" else b.decode("utf-8", "replace")


def canonical_json(value: Any) -> str:
    """JSON text with sorted keys (the stored form of tool arguments)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # e.g. an integer beyond 64 bits, which the standard library writes exactly
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _all_met(checks: Sequence[Any] | None, attr: str) -> float | None:
    if checks is None:
        return None
    return 1.0 if all(bool(getattr(c, attr)) for c in checks) else 0.0


# ---- run-level -----------------------------------------------------------------------------------------------


def run_agent(run: RunData, override: str | None) -> str | None:
    if override:
        return override
    if run.format == "taubench":
        return _taubench_name(run)[0]
    if run.format == "tau2-wrapper":
        return run.wrapper.get("model") or run.wrapper.get("agent")
    ai = run.info.agent_info if run.info else None
    return (ai.llm or ai.implementation) if ai else None


def run_domain(run: RunData) -> str | None:
    if run.format == "taubench":
        return _taubench_name(run)[1]
    if run.format == "tau2-wrapper":
        return run.wrapper.get("domain")
    env = run.info.environment_info if run.info else None
    return env.domain_name if env else None


def _taubench_name(run: RunData) -> tuple[str, str | None]:
    stem = run.path.stem
    for d in DOMAINS:
        m = re.search(rf"(^|[_\-.]){d}([_\-.]|$)", stem)
        if m:
            agent = stem[: m.start()].strip("_-.") or stem
            return agent, d
    return stem, None


def _taubench_trials(run: RunData) -> int:
    return len({r.trial for r in run.tb_records})


def build_runs(runs: Sequence[RunData], run_ids: Sequence[str], agents: Sequence[str | None]) -> pl.DataFrame:
    c = _cols(RUNS_SCHEMA)
    for run, rid, agent in zip(runs, run_ids, agents):
        info = run.info
        c["run_id"].append(rid)
        c["source"].append(str(run.path))
        c["format"].append(run.format)
        c["format_version"].append(run.format_version)
        c["agent"].append(agent)
        c["agent_implementation"].append(info.agent_info.implementation if info and info.agent_info else None)
        c["user_model"].append(info.user_info.llm if info and info.user_info else None)
        c["user_implementation"].append(info.user_info.implementation if info and info.user_info else None)
        c["domain"].append(run_domain(run))
        if run.format == "taubench":
            c["num_trials"].append(_taubench_trials(run))
        else:
            c["num_trials"].append(_int(info.num_trials) if info else None)
        c["max_steps"].append(_int(info.max_steps) if info else None)
        c["max_errors"].append(_int(info.max_errors) if info else None)
        c["seed"].append(_int(info.seed) if info else None)
        c["git_commit"].append(info.git_commit if info else None)
        c["timestamp"].append(run.timestamp)
        if run.format == "taubench":
            c["n_simulations"].append(len(run.tb_records))
            c["n_tasks"].append(len({str(r.task_id) for r in run.tb_records}))
            c["n_infra_errors"].append(0)
        else:
            c["n_simulations"].append(len(run.simulations))
            c["n_tasks"].append(len(run.tasks))
            c["n_infra_errors"].append(
                sum(1 for s in run.simulations if s.termination_reason == "infrastructure_error")
            )
    return _frame(c, RUNS_SCHEMA)


# ---- trials --------------------------------------------------------------------------------------------------


def _task_basis(task: S.Task) -> list[str] | None:
    ec = task.evaluation_criteria
    return list(ec.reward_basis) if ec is not None and ec.reward_basis is not None else None


_CALLS = S.decoder(list[msgspec.Raw] | str | None)


def _count_calls(messages: Sequence[S.LightMessage] | None) -> int | None:
    if messages is None:
        return None
    n = 0
    for raw in [m.tool_calls for m in messages if m.tool_calls != S.NULL]:
        try:
            tc = _CALLS.decode(raw)
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


def _recorded(ri: S.RewardInfo | None) -> tuple:
    """(reward, db, env, nl, communicate, action, breakdown JSON, recorded basis) of one reward_info."""
    if ri is None:
        return (None,) * 8
    bd = ri.reward_breakdown or {}
    env = None
    if ri.env_assertions is not None:
        env = 1.0
        for e in ri.env_assertions:
            env *= e.reward if e.reward is not None else (1.0 if e.met else 0.0)
    nl = _all_met(ri.nl_assertions, "met") if ri.nl_assertions else None
    comm, act = bd.get("COMMUNICATE"), bd.get("ACTION")
    return (
        ri.reward,
        ri.db_check.db_reward if ri.db_check is not None else None,
        env,
        nl if nl is not None else bd.get("NL_ASSERTION"),
        comm if comm is not None else _all_met(ri.communicate_checks, "met"),
        act if act is not None else _all_met(ri.action_checks, "action_match"),
        canonical_json(ri.reward_breakdown) if ri.reward_breakdown is not None else None,
        list(ri.reward_basis) if ri.reward_basis is not None else None,
    )


def _num(v: Any, conv) -> Any:
    """``conv(v)`` (``_int`` or ``_float``), skipping the call when ``v`` already has the right type."""
    if v is None or type(v) is int or (type(v) is float and conv is _float):
        return v
    return conv(v)


def build_trials(
    runs: Sequence[RunData], run_ids: Sequence[str], agents: Sequence[str | None], user_models: Sequence[str | None],
    num_trials: Sequence[int | None],
) -> pl.DataFrame:  # fmt: skip
    c = _cols(TRIALS_SCHEMA)
    for run, rid, agent, umodel, ntr in zip(runs, run_ids, agents, user_models, num_trials):
        domain = run_domain(run)
        if run.format == "taubench":
            _taubench_trial_rows(c, run, rid, agent, domain, ntr)
            continue
        sims = run.simulations
        n = len(sims)
        bases = {str(t.id): _task_basis(t) for t in run.tasks}
        for col, value in (("run_id", rid), ("format", run.format), ("agent", agent), ("domain", domain),
                           ("user_model", umodel), ("num_trials", ntr)):  # fmt: skip
            c[col] += [value] * n
        tids = [str(s.task_id) for s in sims]
        reasons = [s.termination_reason for s in sims]
        c["simulation_id"] += [str(s.id) for s in sims]
        c["task_id"] += tids
        c["trial"] += [_num(s.trial, _int) for s in sims]
        c["termination_reason"] += reasons
        c["is_infra_error"] += [r == "infrastructure_error" for r in reasons]
        c["has_reward_info"] += [s.reward_info is not None for s in sims]
        rec = list(zip(*[_recorded(s.reward_info) for s in sims])) or [[]] * 8
        for col, values in zip(("reward", "recorded_db", "recorded_env_assertion", "recorded_nl_assertion",
                                "recorded_communicate", "recorded_action", "reward_breakdown",
                                "recorded_reward_basis"), rec):  # fmt: skip
            c[col] += values
        c["reward_basis"] += [
            rb if rb is not None else (tb if (tb := bases.get(tid)) is not None else DEFAULT_BASIS)
            for rb, tid in zip(rec[7], tids)
        ]
        c["agent_cost"] += [_num(s.agent_cost, _float) for s in sims]
        c["user_cost"] += [_num(s.user_cost, _float) for s in sims]
        c["duration"] += [_num(s.duration, _float) for s in sims]
        c["start_time"] += [s.start_time for s in sims]
        c["end_time"] += [s.end_time for s in sims]
        c["seed"] += [_num(s.seed, _int) for s in sims]
        c["mode"] += [s.mode for s in sims]
        c["n_messages"] += [len(s.messages) if s.messages is not None else None for s in sims]
        c["n_tool_calls"] += [_count_calls(s.messages) for s in sims]
    return _frame(c, TRIALS_SCHEMA)


def taubench_simulation_id(task_id: Any, trial: Any, pos: int) -> str:
    return f"{task_id}-{trial if trial is not None else f'#{pos}'}"


def _taubench_trial_rows(c, run: RunData, rid, agent, domain, ntr) -> None:
    for pos, r in zip(run.sim_sources, run.tb_records):
        info = r.info
        inner = info.reward_info.info if info and info.reward_info else None
        outputs = info.task.outputs if info and info.task else None
        c["run_id"].append(rid)
        c["simulation_id"].append(taubench_simulation_id(r.task_id, r.trial, pos))
        c["task_id"].append(str(r.task_id))
        c["trial"].append(_int(r.trial))
        c["format"].append("taubench")
        c["agent"].append(agent)
        c["domain"].append(domain)
        c["user_model"].append(None)
        c["num_trials"].append(ntr)
        c["termination_reason"].append(None)
        c["is_infra_error"].append(False)
        c["reward"].append(r.reward)
        c["has_reward_info"].append(info is not None and info.reward_info is not None)
        c["recorded_db"].append(inner.r_actions if inner else None)
        c["recorded_env_assertion"].append(None)
        c["recorded_nl_assertion"].append(None)
        r_out = inner.r_outputs if inner else None
        if r_out is None and inner is not None and not outputs:
            r_out = 1.0  # τ-bench records r_outputs only when the task has outputs
        c["recorded_communicate"].append(r_out)
        c["recorded_action"].append(None)
        c["recorded_reward_basis"].append(None)
        c["reward_basis"].append(DEFAULT_BASIS)
        c["reward_breakdown"].append(None)
        c["agent_cost"].append(None)
        c["user_cost"].append(info.user_cost if info else None)
        for k in ("duration", "start_time", "end_time", "seed", "mode"):
            c[k].append(None)
        c["n_messages"].append(len(r.traj) if r.traj is not None else None)
        c["n_tool_calls"].append(_count_calls(r.traj))


# ---- tasks and expected actions ------------------------------------------------------------------------------


def _task_rows(c, e, rid: str | None, tasks: Sequence[S.Task]) -> None:
    for t in tasks:
        ec = t.evaluation_criteria
        tid = str(t.id)
        basis = list(ec.reward_basis) if ec is not None and ec.reward_basis is not None else None
        c["run_id"].append(rid)
        c["task_id"].append(tid)
        c["reward_basis"].append(basis if basis is not None else DEFAULT_BASIS)
        c["reward_basis_defaulted"].append(basis is None)
        c["has_evaluation_criteria"].append(ec is not None)
        c["communicate_info"].append(list(ec.communicate_info) if ec and ec.communicate_info is not None else None)
        c["nl_assertions"].append(list(ec.nl_assertions) if ec and ec.nl_assertions is not None else None)
        c["n_actions"].append(len(ec.actions or ()) if ec else 0)
        c["n_env_assertions"].append(len(ec.env_assertions or ()) if ec else 0)
        c["n_communicate_info"].append(len(ec.communicate_info or ()) if ec else 0)
        c["n_nl_assertions"].append(len(ec.nl_assertions or ()) if ec else 0)
        c["description"].append(_raw_text(t.description))
        for i, a in enumerate((ec.actions or ()) if ec else ()):
            e["run_id"].append(rid)
            e["task_id"].append(tid)
            e["action_idx"].append(i)
            e["action_id"].append(a.action_id)
            e["name"].append(a.name)
            e["arguments"].append(canonical_json(a.arguments or {}))
            e["compare_args"].append(list(a.compare_args) if a.compare_args is not None else None)
            e["requestor"].append(a.requestor)


def taubench_task(task_id: Any, tb: S.TBTask) -> S.Task:
    """A τ-bench (v1) task as a τ²-bench one: ``outputs`` are its communicate strings, ``actions`` its golds."""
    actions = [S.Action(name=a.name, arguments=a.kwargs or {}) for a in tb.actions or ()]
    desc = msgspec.Raw(orjson.dumps({"instruction": tb.instruction, "user_id": tb.user_id}))
    ec = S.EvaluationCriteria(actions=actions, communicate_info=list(tb.outputs or []), reward_basis=None)
    return S.Task(id=str(task_id), description=desc, evaluation_criteria=ec)


def _taubench_tasks(run: RunData) -> list[S.Task]:
    seen: dict[str, S.Task] = {}
    for r in run.tb_records:
        tid = str(r.task_id)
        if tid in seen or r.info is None or r.info.task is None:
            continue
        seen[tid] = taubench_task(tid, r.info.task)
    return list(seen.values())


def build_tasks(runs: Sequence[RunData], run_ids: Sequence[str | None]) -> tuple[pl.DataFrame, pl.DataFrame]:
    c, e = _cols(TASKS_SCHEMA), _cols(EXPECTED_ACTIONS_SCHEMA)
    for run, rid in zip(runs, run_ids):
        _task_rows(c, e, rid, _taubench_tasks(run) if run.format == "taubench" else run.tasks)
    return _frame(c, TASKS_SCHEMA), _frame(e, EXPECTED_ACTIONS_SCHEMA)


def tasks_from_list(tasks: Sequence[S.Task], run_id: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    c, e = _cols(TASKS_SCHEMA), _cols(EXPECTED_ACTIONS_SCHEMA)
    _task_rows(c, e, run_id, tasks)
    return _frame(c, TASKS_SCHEMA), _frame(e, EXPECTED_ACTIONS_SCHEMA)


# ---- messages and tool calls (full decode, on first use) -----------------------------------------------------

_FULL = S.decoder(S.FullResults)
_FULL_RAW = S.decoder(S.FullRawResults)
_FULL_SIM = S.decoder(S.FullSimulation)
_TB_FULL = S.decoder(list[S.TBFullRecord])
_TB_FULL_REC = S.decoder(S.TBFullRecord)


def _unreadable_messages(report: LoadReport, strict: bool, path: object, location: str, exc: Exception,
                         raw: Any = None, base: int | None = None) -> None:  # fmt: skip
    """Messages that cannot be decoded: a LoadError under strict loading, else skipped and reported."""
    where, what = error_location(exc, location, raw, base)
    if strict:
        raise LoadError(str(path), where, f"{what} (load with strict=False to skip such simulations' messages)")
    report.add(str(path), where, "invalid_messages", f"{what}; messages skipped", skipped=1)


def _full_simulations(
    run: RunData, report: LoadReport, strict: bool
) -> list[tuple[str, list[S.Message] | None]]:
    """(simulation_id, messages) for every kept simulation of a τ²-bench run."""
    if run.format == "tau2-dir":
        out = []
        for sim, src in zip(run.simulations, run.sim_sources):
            f = run.path / src
            try:
                full = _FULL_SIM.decode(read_again(run, f))
                out.append((str(sim.id), full.messages))
            except DECODE_ERRORS as exc:
                _unreadable_messages(report, strict, f, "$.messages", exc, read_again(run, f), None)
                out.append((str(sim.id), None))
        return out
    data = read_again(run, run.path)
    kept = list(zip(run.simulations, run.sim_sources))
    try:
        if run.spans is not None:
            raise RecursionError  # known not to decode whole
        full_sims = _FULL.decode(data).simulations or []
        return [(str(sim.id), full_sims[i].messages) for sim, i in kept]
    except DECODE_ERRORS:
        if run.spans is not None:
            raws = [memoryview(data)[a:b] for a, b in run.spans]
        else:
            raws = _FULL_RAW.decode(data).simulations or []
        out = []
        for sim, i in kept:
            try:
                out.append((str(sim.id), _FULL_SIM.decode(raws[i]).messages))
            except DECODE_ERRORS as exc:
                base = run.spans[i][0] if run.spans is not None else None
                _unreadable_messages(report, strict, run.path, f"$.simulations[{i}]", exc, raws[i], base)
                out.append((str(sim.id), None))
        return out


def _args_text(args: Any) -> str:
    if args is None:
        return "{}"
    if isinstance(args, str):
        try:
            args = msgspec.json.decode(args)  # integers of any size (orjson reads those beyond 64 bits as floats)
        except msgspec.DecodeError:
            return args
    return canonical_json(args)


def _tool_call_dicts(tc: Any) -> tuple[list[dict], bool]:
    if tc is None:
        return [], False
    if isinstance(tc, str):
        try:
            return [
                {"id": d.get("id"), "name": d.get("name"), "arguments": d.get("arguments"),
                 "requestor": d.get("requestor")}
                for d in parse_tool_calls_string(tc) or ()
            ], True  # fmt: skip
        except ValueError:  # reported (or raised, when strict) by the loader when it read the file
            return [], True
    return [{"id": t.id, "name": t.name, "arguments": t.arguments, "requestor": t.requestor} for t in tc], False


def build_messages(
    runs: Sequence[RunData], run_ids: Sequence[str], report: LoadReport, progress: bool = False, strict: bool = True
) -> tuple[pl.DataFrame, pl.DataFrame]:
    from tqdm.auto import tqdm

    m, t = _cols(MESSAGES_SCHEMA), _cols(TOOL_CALLS_SCHEMA)
    it = zip(runs, run_ids)
    if progress and len(runs) > 1:
        it = tqdm(list(it), desc="messages", unit="file")
    for run, rid in it:
        if run.format == "taubench":
            _taubench_messages(m, t, run, rid, report, strict)
            continue
        repair_none = run.stringified_tool_calls
        for sid, messages in _full_simulations(run, report, strict):
            if not messages:
                continue
            results: dict[str, tuple[str | None, bool | None]] = {}
            for msg in messages:
                if msg.role == "tool" and msg.id is not None and msg.id not in results:
                    results[msg.id] = (msg.content, _err(msg.error))
            call_idx = 0
            for i, msg in enumerate(messages):
                content = msg.content
                if repair_none and content == "None":
                    content = None
                calls, from_str = _tool_call_dicts(msg.tool_calls)
                m["run_id"].append(rid)
                m["simulation_id"].append(sid)
                m["message_idx"].append(i)
                m["role"].append(msg.role)
                m["content"].append(content)
                m["turn_idx"].append(_int(msg.turn_idx))
                m["timestamp"].append(msg.timestamp)
                m["cost"].append(_float(msg.cost))
                m["n_tool_calls"].append(len(calls))
                m["tool_call_id"].append(msg.id if msg.role == "tool" else None)
                m["requestor"].append(msg.requestor)
                m["is_error"].append(_err(msg.error) if msg.role == "tool" else None)
                m["usage"].append(_raw_text(msg.usage))
                m["raw_data"].append(_raw_text(msg.raw_data))
                for call in calls:
                    res = results.get(call["id"]) if call["id"] is not None else None
                    t["run_id"].append(rid)
                    t["simulation_id"].append(sid)
                    t["message_idx"].append(i)
                    t["call_idx"].append(call_idx)
                    t["tool_call_id"].append(call["id"])
                    t["name"].append(call["name"])
                    t["arguments"].append(_args_text(call["arguments"]))
                    t["requestor"].append(call["requestor"])
                    t["role"].append(msg.role)
                    t["result"].append(res[0] if res else None)
                    t["is_error"].append(res[1] if res else None)
                    t["parsed_from_string"].append(from_str)
                    call_idx += 1
    return _frame(m, MESSAGES_SCHEMA), _frame(t, TOOL_CALLS_SCHEMA)


def _err(v: Any) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1", "yes")


def _taubench_messages(m, t, run: RunData, rid: str, report: LoadReport, strict: bool) -> None:
    data = read_again(run, run.path)
    try:
        if run.spans is not None:
            raise RecursionError  # known not to decode whole
        recs = _TB_FULL.decode(data)
    except DECODE_ERRORS:
        if run.spans is not None:
            recs = [memoryview(data)[a:b] for a, b in run.spans]
        else:
            recs = _TB_RAW.decode(data)
    for pos in run.sim_sources:
        r = recs[pos]
        if not isinstance(r, S.TBFullRecord):
            try:
                r = _TB_FULL_REC.decode(r)
            except DECODE_ERRORS as exc:
                base = run.spans[pos][0] if run.spans is not None else None
                _unreadable_messages(report, strict, run.path, f"$[{pos}]", exc, r, base)
                continue
        sid = taubench_simulation_id(r.task_id, r.trial, pos)
        traj = r.traj or []
        results = {msg.tool_call_id: msg.content for msg in traj if msg.role == "tool" and msg.tool_call_id}
        call_idx = 0
        for i, msg in enumerate(traj):
            calls = msg.tool_calls or []
            m["run_id"].append(rid)
            m["simulation_id"].append(sid)
            m["message_idx"].append(i)
            m["role"].append(msg.role)
            m["content"].append(msg.content)
            m["turn_idx"].append(None)
            m["timestamp"].append(None)
            m["cost"].append(None)
            m["n_tool_calls"].append(len(calls))
            m["tool_call_id"].append(msg.tool_call_id)
            m["requestor"].append(None)
            m["is_error"].append(None)
            m["usage"].append(None)
            m["raw_data"].append(None)
            for call in calls:
                t["run_id"].append(rid)
                t["simulation_id"].append(sid)
                t["message_idx"].append(i)
                t["call_idx"].append(call_idx)
                t["tool_call_id"].append(call.id)
                t["name"].append(call.function.name)
                t["arguments"].append(_args_text(call.function.arguments))
                t["requestor"].append("assistant")
                t["role"].append(msg.role)
                t["result"].append(results.get(call.id))
                t["is_error"].append(None)
                t["parsed_from_string"].append(False)
                call_idx += 1

"""The replay engine of one process: long-lived environments, the gold states, one simulation at a time.

Per simulation it does what τ²-bench's ``EnvironmentEvaluator.calculate_reward`` does with
``strict_replay=False`` — the task's initialization actions, then ``Environment.set_state`` over the recorded
messages (its own tool-call / tool-message pairing check, its own choice of which calls to re-execute), the gold
actions on a second environment, the agent-side and user-side database comparison, the environment assertions on
the replayed side — through τ²-bench's own environment methods, but on environments built once and put back after
each simulation (:mod:`tauk.replay._state`), with each distinct gold state computed once.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from tauk.replay._state import BaseState, Fingerprint, matches
from tauk.replay._upstream import models, quiet, require

__all__ = ["Engine", "Job", "Outcome", "TaskDef", "engine"]


@dataclass(frozen=True)
class TaskDef:
    """A task definition as replay needs it (JSON texts, as recorded)."""

    task_id: str
    domain: str
    has_criteria: bool
    initial_state: str | None
    actions: tuple[tuple[str | None, str, str, str | None], ...] | None  # (action_id, name, arguments, requestor)
    env_assertions: str | None

    @property
    def key(self) -> str:
        return hashlib.sha256(repr((self.domain, self.initial_state, self.actions, self.env_assertions,
                                    self.has_criteria)).encode()).hexdigest()[:24]  # fmt: skip


Message = tuple[str | None, str | None, str | None, tuple[tuple[str | None, str | None, str, str | None], ...]]
"""``(role, content, tool_call_id, calls)``; a call is ``(id, name, arguments JSON, requestor)``."""


@dataclass(frozen=True)
class Job:
    """One simulation to replay: its position in the output, domain, solo mode, task and messages."""

    pos: int
    domain: str
    solo: bool
    task: str  # TaskDef.key
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class Outcome:
    pos: int
    status: str
    reason: str | None = None
    db: float | None = None
    env_assertion: float | None = None
    agent_match: bool | None = None
    user_match: bool | None = None


PAIRING = ("Tool message", "Tool call id mismatch", "User messages are not allowed in solo mode")
"""How τ²-bench's ``Environment.set_state`` words a trajectory whose tool calls and tool messages do not pair up
(or a solo run with user messages)."""


class _Failure(Exception):
    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Parsed:
    """A task definition as τ²-bench's models (validated once per process)."""

    def __init__(self, td: TaskDef) -> None:
        m = models()
        try:
            self.initial_state = (
                m.InitialState.model_validate(json.loads(td.initial_state)) if td.initial_state else None
            )
            self.actions = None
            if td.actions is not None:
                self.actions = []
                for action_id, name, args, requestor in td.actions:
                    d: dict[str, Any] = {"action_id": action_id, "name": name, "arguments": json.loads(args)}
                    if requestor is not None:
                        d["requestor"] = requestor
                    self.actions.append(m.Action.model_validate(d))
            self.assertions = (
                [m.EnvAssertion.model_validate(a) for a in json.loads(td.env_assertions)]
                if td.env_assertions is not None else None
            )  # fmt: skip
            ec = m.EvaluationCriteria.model_construct(actions=self.actions, env_assertions=self.assertions)
            task = m.Task.model_construct(id=td.task_id, evaluation_criteria=ec, initial_state=self.initial_state)
            self.env_kwargs = m.eval_env_kwargs(td.domain, task) or {}
        except Exception as exc:  # noqa: BLE001
            raise _Failure("not_replayable",
                           f"the task definition is not valid for τ²-bench: {_one_line(exc)}") from None
        ist = self.initial_state
        self.init_data = ist.initialization_data if ist is not None else None
        self.init_actions = list(ist.initialization_actions or []) if ist is not None else []
        self.history = list(ist.message_history or []) if ist is not None else []
        self.env_key = json.dumps(self.env_kwargs, sort_keys=True, default=_sorted)
        self.data_key = (
            json.dumps(self.init_data.model_dump(), sort_keys=True, default=str) if self.init_data is not None else ""
        )
        self.gold_key = hashlib.sha256(json.dumps([
            td.domain, self.env_key, self.data_key,
            [a.model_dump(mode="json") for a in self.init_actions],
            [h.model_dump(mode="json") for h in self.history],
            [a.model_dump(mode="json") for a in self.actions or []],
        ], sort_keys=True, default=str).encode()).hexdigest()  # fmt: skip


def _copy(template: Any, **values: Any) -> Any:
    obj = template.__copy__()
    obj.__dict__.update(values)
    return obj


def _sorted(v: Any) -> Any:
    if isinstance(v, set | frozenset):
        return sorted(v, key=str)
    return str(v)


class Engine:
    """Long-lived environments (one per domain, solo mode, environment options and initialization data; at most
    ``max_states`` kept), the parsed task definitions and the gold fingerprints, for one process."""

    def __init__(self, max_states: int = 16, verify: bool = False) -> None:
        self.registry = require()
        self.m = models()
        self.max_states = max_states
        self.verify = verify
        self.states: OrderedDict[tuple, BaseState | _Failure] = OrderedDict()
        self.tasks: dict[str, _Parsed | _Failure] = {}
        self.golds: dict[tuple[str, frozenset], Fingerprint | _Failure] = {}
        self.domains = set(self.registry.get_domains())
        self.n_states_built = 0
        self.n_golds = 0

    # -- environments ---------------------------------------------------------------------------------------
    def state(self, domain: str, solo: bool, parsed: _Parsed) -> BaseState:
        key = (domain, solo, parsed.env_key, parsed.data_key)
        hit = self.states.get(key)
        if hit is None:
            hit = self._build(domain, solo, parsed)
            self.states[key] = hit
            while len(self.states) > self.max_states:
                self.states.popitem(last=False)
        else:
            self.states.move_to_end(key)
        if isinstance(hit, _Failure):
            raise hit
        return hit

    def _build(self, domain: str, solo: bool, parsed: _Parsed) -> BaseState | _Failure:
        if domain not in self.domains:
            return _Failure("not_replayable", f"τ²-bench has no environment for domain {domain!r}")
        try:
            ctor = self.registry.get_env_constructor(domain)
            env = ctor(solo_mode=solo, **parsed.env_kwargs) if solo else ctor(**parsed.env_kwargs)
        except Exception as exc:  # noqa: BLE001
            what = ("banking_knowledge retrieval configuration (τ²-bench's re-grader builds its default one)"
                    if domain == "banking_knowledge" else f"{domain} environment")  # fmt: skip
            return _Failure("not_replayable", f"cannot build the {what}{' in solo mode' if solo else ''} here: "
                            f"{_one_line(exc)}")  # fmt: skip
        data = parsed.init_data
        try:
            if data is not None:  # as Environment.set_state applies initialization_data
                if data.agent_data is not None:
                    env.tools.update_db(data.agent_data)
                    if env.user_tools is not None and env.user_tools.db is not None:
                        env.user_tools.db = env.tools.db
                if data.user_data is not None:
                    env.user_tools.update_db(data.user_data)
                    if env.tools is not None and env.tools.db is not None:
                        env.tools.db = env.user_tools.db
        except Exception as exc:  # noqa: BLE001
            return _Failure("failed", f"initialization_data: {_one_line(exc)}")
        self.n_states_built += 1
        return BaseState(env)

    def parsed(self, td: TaskDef) -> _Parsed:
        hit = self.tasks.get(td.key)
        if hit is None:
            try:
                hit = _Parsed(td)
            except _Failure as f:
                hit = f
            self.tasks[td.key] = hit
        if isinstance(hit, _Failure):
            raise hit
        return hit

    # -- gold ---------------------------------------------------------------------------------------------------
    def gold(self, td: TaskDef, parsed: _Parsed, full: frozenset = frozenset()) -> Fingerprint:
        key = (parsed.gold_key, full)
        hit = self.golds.get(key)
        if hit is None:
            hit = self._gold(td, parsed, full)
            self.golds[key] = hit
        if isinstance(hit, _Failure):
            raise hit
        return hit

    def gold_states(self, exclude: Any = ()) -> dict[tuple[str, frozenset], Fingerprint]:
        """The gold states computed here (not those that failed), but for the keys in ``exclude``: what another
        process replaying the same task definitions would otherwise compute again."""
        return {k: v for k, v in list(self.golds.items()) if isinstance(v, Fingerprint) and k not in exclude}

    def add_gold_states(self, golds: dict[tuple[str, frozenset], Fingerprint]) -> None:
        """Take gold states computed by another process (the same key is the same task definition, initial state
        and environment options, so the same state: τ²-bench's gold replay is deterministic)."""
        for k, v in golds.items():
            self.golds.setdefault(k, v)

    def _gold(self, td: TaskDef, parsed: _Parsed, full: frozenset) -> Fingerprint | _Failure:
        base = self.state(td.domain, False, parsed)
        env = base.env
        try:
            for call in parsed.init_actions:
                env.run_env_function_call(call)
            env.set_state(initialization_data=None, initialization_actions=None,
                          message_history=list(parsed.history), strict=False)  # fmt: skip
            for action in parsed.actions or []:
                try:
                    env.make_tool_call(tool_name=action.name, requestor=action.requestor, **action.arguments)
                except Exception:  # noqa: BLE001 - τ²-bench logs a failing gold action and goes on
                    pass
            fp = base.fingerprint(full)
            self.n_golds += 1
            return fp
        except Exception as exc:  # noqa: BLE001
            return _Failure("failed", f"gold state: {_one_line(exc)}")
        finally:
            base.restore()
            if self.verify:
                base.verify()

    # -- one simulation -------------------------------------------------------------------------------------------
    def _templates(self) -> dict[str, Any]:
        """One message of each kind, built once: a simulation's messages are shallow copies with their values
        set (``model_construct`` runs every default factory of τ²-bench's ~35 message fields each time)."""
        m = self.m
        return {
            "assistant": m.AssistantMessage.model_construct(role="assistant", content=None, tool_calls=None),
            "user": m.UserMessage.model_construct(role="user", content=None, tool_calls=None),
            "tool": m.ToolMessage.model_construct(id="", role="tool", content=None),
            "system": m.SystemMessage.model_construct(role="system", content=None),
            "call": m.ToolCall.model_construct(id="", name="", arguments={}, requestor="assistant"),
        }

    def messages(self, job: Job) -> list[Any]:
        """The recorded messages as τ²-bench's message models (what ``Environment.set_state`` reads: roles, tool
        calls, tool-message ids and contents)."""
        tmpl = self.__dict__.get("_tmpl")
        if tmpl is None:
            tmpl = self._tmpl = self._templates()
        out = []
        for role, content, tool_id, calls in job.messages:
            tcs = None
            if calls:
                tcs = []
                for cid, name, args, requestor in calls:
                    try:
                        arguments = json.loads(args)
                    except (TypeError, ValueError):
                        raise _Failure("not_replayable",
                                       f"tool call {name!r}: arguments are not a JSON object") from None
                    if not isinstance(arguments, dict):
                        raise _Failure("not_replayable", f"tool call {name!r}: arguments are not a JSON object")
                    if requestor not in (None, "assistant", "user"):
                        raise _Failure("not_replayable", f"tool call {name!r}: requestor {requestor!r}")
                    tcs.append(_copy(tmpl["call"], id=cid or "", name=name, arguments=arguments,
                                     requestor=requestor or "assistant"))  # fmt: skip
            if role in ("assistant", "user"):
                out.append(_copy(tmpl[role], content=content, tool_calls=tcs))
            elif role == "tool":
                if tool_id is None:
                    raise _Failure("not_replayable", "a tool message without the id of its call")
                out.append(_copy(tmpl["tool"], id=tool_id, content=content))
            elif role == "system":
                out.append(_copy(tmpl["system"], content=content))
            else:
                raise _Failure("not_replayable", f"a message with role {role!r}")
        return out

    def replay(self, job: Job, td: TaskDef) -> Outcome:
        try:
            return self._replay(job, td)
        except _Failure as f:
            return Outcome(job.pos, f.status, f.reason)

    def _replay(self, job: Job, td: TaskDef) -> Outcome:
        if not td.has_criteria:
            return Outcome(job.pos, "not_evaluated", "the task has no evaluation criteria")
        if td.actions is None and td.env_assertions is None:
            # τ²-bench: no gold actions and no assertions -> the databases match by definition
            return Outcome(job.pos, "replayed", None, 1.0, 1.0, True, True)
        parsed = self.parsed(td)
        messages = self.messages(job)
        gold = self.gold(td, parsed)
        base = self.state(td.domain, job.solo, parsed)
        env = base.env
        full = frozenset(gold.full)
        try:
            for call in parsed.init_actions:
                env.run_env_function_call(call)
            try:
                env.set_state(initialization_data=None, initialization_actions=None, message_history=messages,
                              strict=False)  # fmt: skip
            except (ValueError, AssertionError) as exc:
                if str(exc).startswith(PAIRING):
                    raise _Failure("failed", f"tool-call pairing: {_one_line(exc)}") from None
                raise
            pred = base.fingerprint(full)
            met = [env.run_env_assertion(a, raise_assertion_error=False) for a in parsed.assertions or []]
        except _Failure:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _Failure("failed", f"replay: {_one_line(exc)}") from None
        finally:
            base.restore()
            if self.verify:
                base.verify()
        more = frozenset(pred.full) - full
        if more:  # the replay swapped a database object out: compare the whole databases
            gold = self.gold(td, parsed, full | more)
        match = matches(gold, pred, base)
        db = 1.0 if match["agent"] and match["user"] else 0.0
        env_assertion = 1.0 if all(met) else 0.0
        return Outcome(job.pos, "replayed", None, db, env_assertion, match["agent"], match["user"])

    def run(self, jobs: list[Job], tasks: dict[str, TaskDef]) -> list[Outcome]:
        # one simulation at a time per process: the environments are shared (a Dask worker may run several
        # tasks in threads)
        with _LOCK, quiet():
            return [self.replay(job, tasks[job.task]) for job in jobs]


_ENGINE: Engine | None = None
_LOCK = threading.RLock()


def engine(verify: bool = False) -> Engine:
    """This process's engine (built on first use; kept for the life of the process)."""
    global _ENGINE
    with _LOCK:
        if _ENGINE is None:
            _ENGINE = Engine(verify=verify)
        _ENGINE.verify = verify
        return _ENGINE


def run_chunk(jobs: list[Job], tasks: dict[str, TaskDef], verify: bool = False) -> list[Outcome]:
    """Replay ``jobs`` in this process (the function worker processes and Dask workers run)."""
    return engine(verify).run(jobs, tasks)

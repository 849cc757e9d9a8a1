"""An independent grader of synthetic trials: the τ²-bench reward rules (docs/spec.md §2) transcribed in plain Python.

It is deliberately independent of :mod:`tauk.scoring` (and of :mod:`tauk.conventions`): no shared code, no
Polars, the rules spelled out again from the spec, so that it can serve as a test oracle. The generator uses it to
derive the recorded ``reward_info`` of every synthetic trial from the trajectory it constructed; the tests score
those files with the vectorised kernel (:func:`tauk.score`) and require its rewards and components to equal the
recorded ones (``tests/test_synth.py``): two independent transcriptions of the spec checking each other.

The rules: only ``user_stop`` / ``agent_stop`` trials are graded (an ``infrastructure_error`` has no reward_info,
any other ending scores 0); no evaluation criteria ⇒ reward 1; DB: the write calls made equal the gold writes (as
multisets of name and arguments: the synthetic stand-in for τ²-bench's database comparison); COMMUNICATE: every
``communicate_info`` string occurs, case-insensitively, in a non-empty assistant message whose commas are removed;
ACTION: every gold action is matched by some call (same name; arguments compared on ``compare_args``, on the
call's own keys when it is null, not at all when it is ``[]``); the reward is the product over the task's
``reward_basis``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from tauk.synth.calls import PlannedCall
    from tauk.synth.tasks import SynthTask

__all__ = ["call_matches", "reward_info"]

GRADED_ENDINGS = ("user_stop", "agent_stop")
"""Trials ending otherwise score 0 (the termination gate; spelled out here rather than imported, on purpose)."""


def reward_info(task: SynthTask, termination: str, messages: list[dict[str, Any]],
                calls: list[PlannedCall]) -> dict[str, Any] | None:
    """The ``reward_info`` τ²-bench records for a trial (None for an infrastructure error).

    Parameters
    ----------
    task : SynthTask
        The task (its gold actions, ``communicate_info``, reward basis, and whether it has criteria).
    termination : str
        The trial's termination reason.
    messages : list of dict
        The trajectory as written to the file.
    calls : list of PlannedCall
        The tool calls the agent made (which of them write to the database).

    Returns
    -------
    dict or None
        ``reward``, the per-check lists and ``reward_breakdown``, keys in the upstream order.

    Examples
    --------
    >>> from tauk.synth.tasks import make_task
    >>> task = make_task("retail", 0, seed=0)
    >>> reward_info(task, "infrastructure_error", [], []) is None
    True
    >>> reward_info(task, "max_steps", [], [])["reward"]
    0.0
    """
    if termination == "infrastructure_error":
        return None
    if termination not in GRADED_ENDINGS:
        return {"reward": 0.0, "db_check": None, "env_assertions": None, "action_checks": None,
                "nl_assertions": None, "communicate_checks": None,
                "reward_basis": list(task.reward_basis) if task.has_criteria else None,
                "reward_breakdown": None,
                "info": {"note": f"Simulation terminated prematurely. Termination reason: {termination}"}}
    return _graded(task, messages, calls)


def call_matches(args: dict[str, Any], name: str, gold: dict[str, Any]) -> bool:
    """Whether a call (``name``, ``args``) matches a gold action dict (docs/spec.md §2.3, ACTION).

    Examples
    --------
    >>> gold = {"name": "cancel", "arguments": {"id": "A1", "reason": "x"}, "compare_args": ["id"]}
    >>> call_matches({"id": "A1", "reason": "y"}, "cancel", gold), call_matches({"id": "B2"}, "cancel", gold)
    (True, False)
    """
    if name != gold["name"]:
        return False
    keys = args.keys() if gold["compare_args"] is None else gold["compare_args"]
    if not keys:
        return True
    return ({k: v for k, v in args.items() if k in keys}
            == {k: v for k, v in gold["arguments"].items() if k in keys})


def _canon(name: str, args: dict[str, Any]) -> bytes:
    return orjson.dumps([name, args], option=orjson.OPT_SORT_KEYS)


def _graded(task: SynthTask, msgs: list[dict[str, Any]], calls: list[PlannedCall]) -> dict[str, Any]:
    """Recorded reward_info for a trial that ended normally (user_stop / agent_stop)."""
    if not task.has_criteria:
        return {"reward": 1.0, "db_check": None, "env_assertions": None, "action_checks": None,
                "nl_assertions": None, "communicate_checks": None, "reward_basis": None, "reward_breakdown": None,
                "info": {"note": "No evaluation criteria"}}
    gold_writes = sorted(_canon(g.action["name"], g.action["arguments"]) for g in task.golds if g.is_write)
    made_writes = sorted(_canon(c.name, c.args) for c in calls if c.is_write)
    db = 1.0 if gold_writes == made_writes else 0.0
    texts = [m["content"] for m in msgs if m["role"] == "assistant" and m["content"] and m["content"].strip()]
    comm_checks = None
    comm = 1.0
    if task.communicate_info:
        comm_checks = []
        for s in task.communicate_info:
            hit = next((t for t in texts if s.lower() in t.lower().replace(",", "")), None)
            comm_checks.append({"info": s, "met": hit is not None, "justification":
                                f"Information '{s}' communicated in the message:\n '{hit}'" if hit is not None
                                else f"Information '{s}' not communicated."})
        comm = 1.0 if all(c["met"] for c in comm_checks) else 0.0
    made = [(tc["name"], tc["arguments"]) for m in msgs for tc in (m.get("tool_calls") or [])]
    action_checks = None
    act = 1.0
    if task.golds:
        action_checks = []
        for g in task.golds:
            ok = any(call_matches(args, name, g.action) for name, args in made)
            action_checks.append({"action": g.action, "action_match": ok, "action_reward": 1.0 if ok else 0.0})
        act = 1.0 if all(c["action_match"] for c in action_checks) else 0.0
    values = {"DB": db, "COMMUNICATE": comm, "ACTION": act}
    breakdown = {k: values[k] for k in task.reward_basis}
    reward = 1.0
    for v in breakdown.values():
        reward *= v
    return {"reward": reward, "db_check": {"db_match": db == 1.0, "db_reward": db}, "env_assertions": None,
            "action_checks": action_checks, "nl_assertions": None, "communicate_checks": comm_checks,
            "reward_basis": list(task.reward_basis), "reward_breakdown": breakdown, "info": None}


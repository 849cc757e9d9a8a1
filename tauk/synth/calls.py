"""The tool calls a synthetic agent makes: the gold ones, or broken, omitted and unwanted ones for a failure."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from tauk.synth.tasks import SynthTask
from tauk.synth.templates import Gold

__all__ = ["PlannedCall", "mutate", "plan_calls"]


@dataclass
class PlannedCall:
    """A tool call the agent makes, with the tool's answer and whether it writes to the database."""

    name: str
    args: dict[str, Any]
    result: str
    error: bool
    is_write: bool
    confirm: str | None = None
    lead: str | None = None


def mutate(v: Any, rng: random.Random) -> Any:
    """A value that differs from ``v`` under JSON equality."""
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v + rng.choice([1, 2, -1])
    if isinstance(v, float):
        return round(v + 1.5, 2)
    if isinstance(v, str):
        if v and v[-1].isdigit():
            return v[:-1] + str((int(v[-1]) + rng.randint(1, 9)) % 10)
        alt = [c for c in ("economy", "business", "basic_economy", "no longer needed", "ordered by mistake")
               if c != v]
        return rng.choice(alt) if v in ("economy", "business", "basic_economy", "no longer needed",
                                        "ordered by mistake") else v + " (updated)"
    if isinstance(v, list):
        if len(v) >= 2 and v[0] != v[-1]:
            return list(reversed(v))  # list order matters
        return [mutate(v[0], rng), *v[1:]] if v else ["unknown"]
    if isinstance(v, dict):
        if not v:
            return {"unknown": True}
        k = sorted(v)[0]
        return {**v, k: mutate(v[k], rng)}
    return "unknown"


def _break_gold(g: Gold, rng: random.Random) -> PlannedCall | None:
    """A call for gold ``g`` that does not match it (None = the call is omitted)."""
    a = g.action
    ca = a["compare_args"]
    if ca == [] or rng.random() < 0.25:
        return None
    keys = [k for k in (ca if ca is not None else sorted(a["arguments"])) if k in a["arguments"]]
    args = dict(a["arguments"])
    if keys and (ca is not None or rng.random() < 0.75):
        k = rng.choice(keys)
        args[k] = mutate(args[k], rng)
    else:  # compare_args None: an extra argument fails the match
        args["note"] = "requested by customer"
    if g.is_write:
        return PlannedCall(a["name"], args, g.result, False, True, g.confirm, g.lead)
    error = f"Error: {a['name'].replace('_', ' ')} found nothing for these arguments"
    return PlannedCall(a["name"], args, error, True, False, None, g.lead)


def plan_calls(task: SynthTask, action_fail: bool, db_fail: bool, diag: bool, extra_write: bool,
               rng: random.Random) -> list[PlannedCall]:
    """The calls of a trial that ends normally: the gold calls, with the planned failures.

    ``action_fail`` breaks or omits one gold call; ``db_fail`` changes or omits a gold write (or, without one, adds
    ``extra_write``: an unwanted write); ``diag`` breaks a read (an ACTION failure outside the basis).
    """
    calls: list[PlannedCall | None] = [PlannedCall(g.action["name"], dict(g.action["arguments"]), g.result, False,
                                                   g.is_write, g.confirm, g.lead) for g in task.golds]
    if action_fail and task.golds:
        i = rng.randrange(len(task.golds))
        calls[i] = _break_gold(task.golds[i], rng)
    if db_fail:
        writes = [i for i, g in enumerate(task.golds) if g.is_write]
        if writes and not extra_write:
            i = rng.choice(writes)
            g = task.golds[i]
            if rng.random() < 0.3:
                calls[i] = None  # the agent never made the change
            else:
                args = dict(g.action["arguments"])
                k = rng.choice(sorted(args))
                args[k] = mutate(args[k], rng)
                calls[i] = PlannedCall(g.action["name"], args, g.result, False, True, g.confirm, g.lead)
        else:
            extra_write = True
    if diag:
        reads = [i for i, g in enumerate(task.golds) if not g.is_write]
        if reads:
            i = rng.choice(reads)
            calls[i] = _break_gold(task.golds[i], rng)
    out = [c for c in calls if c is not None]
    if extra_write:
        name, args, result = task.extra_write
        out.append(PlannedCall(name, args, result, False, True,
                               "I can take care of that right away. Shall I proceed (yes)?", None))
    return out


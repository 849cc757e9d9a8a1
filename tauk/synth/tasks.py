"""Synthetic task definitions: difficulty, gold actions, evaluation criteria and the τ²-bench task object.

Special tasks (present when the domain has enough tasks): airline task ``"7"`` asks for a ``communicate_info``
string containing a comma, which can never match (commas are stripped from the messages only), so its true success
probability is 0; retail task ``"5"`` has ``evaluation_criteria: null`` (reward 1 unless the trial ends early).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tauk.synth.templates import Gold, airline_task, retail_task

__all__ = ["COMMA_TASK", "DIFFICULTY_SD", "NULL_CRITERIA_TASK", "SUPPORTED_DOMAINS", "SynthTask", "check_domains",
           "make_task", "make_tasks"]

SUPPORTED_DOMAINS = ("airline", "retail")
COMMA_TASK = ("airline", 7)  # communicate_info with a comma: always fails COMMUNICATE (true p = 0)
NULL_CRITERIA_TASK = ("retail", 5)  # evaluation_criteria null: reward 1 unless premature ending
DIFFICULTY_SD = 1.3


@dataclass
class SynthTask:
    """One synthetic task: what the generator needs to build its trials, and its τ²-bench definition."""

    id: str
    domain: str
    template: str
    difficulty: float
    golds: list[Gold]
    communicate_info: list[str]
    reward_basis: list[str]
    has_criteria: bool
    impossible: bool
    opening: str
    ask_identity: str
    identity_reply: str
    summary_ok: str
    summary_fail: str
    extra_write: tuple[str, dict[str, Any], str]  # an unwanted write: (name, arguments, result)
    extra_summary: str  # what the agent says after the unwanted write
    definition: dict[str, Any] = field(default_factory=dict)
    transfer: bool = False


def make_task(domain: str, idx: int, seed: int) -> SynthTask:
    """Task ``idx`` of ``domain``: the same for every agent, and for every ``n_tasks`` above ``idx``.

    Parameters
    ----------
    domain : {"airline", "retail"}
    idx : int
        Position of the task; its id is ``str(idx)``.
    seed : int
        The generator's seed.

    Returns
    -------
    SynthTask

    Examples
    --------
    >>> t = make_task("airline", 7, seed=0)
    >>> t.id, t.impossible, t.definition["evaluation_criteria"]["reward_basis"][:2]
    ('7', True, ['DB', 'COMMUNICATE'])
    """
    rng = random.Random(f"tauk-synth/task/{seed}/{domain}/{idx}")
    difficulty = rng.gauss(0.0, DIFFICULTY_SD)
    task_id = str(idx)
    comma = (domain, idx) == COMMA_TASK
    null_criteria = (domain, idx) == NULL_CRITERIA_TASK
    if domain == "airline":
        t = airline_task(task_id, rng, comma)
    elif domain == "retail":
        t = retail_task(task_id, rng)
    else:
        raise ValueError(f"unsupported domain {domain!r}; choose from {SUPPORTED_DOMAINS}")
    golds: list[Gold] = t["builder"].golds
    basis = ["DB", "COMMUNICATE", "ACTION"] if (golds and rng.random() < 0.2) else ["DB", "COMMUNICATE"]
    criteria = None if null_criteria else {
        "actions": [g.action for g in golds],
        "env_assertions": None,
        "communicate_info": list(t["info"]),
        "nl_assertions": None,
        "reward_basis": basis,
    }
    definition = {
        "id": task_id,
        "description": {"purpose": t["purpose"], "relevant_policies": None, "notes": "synthetic (tauk synth)"},
        "user_scenario": {"persona": None, "instructions": {
            "domain": domain, "reason_for_call": t["reason"], "known_info": t["known"], "unknown_info": None,
            "task_instructions": "Be polite and concise. Confirm actions when asked."}},
        "ticket": None,
        "initial_state": None,
        "evaluation_criteria": criteria,
    }
    return SynthTask(id=task_id, domain=domain, template=t["template"], difficulty=difficulty, golds=golds,
                     communicate_info=list(t["info"]) if criteria else [], reward_basis=basis,
                     has_criteria=criteria is not None, impossible=comma, opening=t["opening"],
                     ask_identity=t["ask"], identity_reply=t["reply"], summary_ok=t["ok"], summary_fail=t["fail"],
                     extra_write=t["extra"], extra_summary=t["extra_summary"], definition=definition,
                     transfer=t["transfer"])


def make_tasks(domain: str, n_tasks: int, seed: int) -> list[SynthTask]:
    """Tasks ``0 .. n_tasks - 1`` of ``domain`` (see :func:`make_task`)."""
    return [make_task(domain, i, seed) for i in range(n_tasks)]


def check_domains(domains: Sequence[str] | str) -> list[str]:
    """The domains as a list; ValueError for an unsupported or repeated one."""
    ds = [domains] if isinstance(domains, str) else list(domains)
    for d in ds:
        if d not in SUPPORTED_DOMAINS:
            raise ValueError(f"unsupported domain {d!r}; choose from {SUPPORTED_DOMAINS}")
    if len(set(ds)) != len(ds):
        raise ValueError(f"duplicate domains in {ds}")
    return ds

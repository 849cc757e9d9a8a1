"""Agents of the synthetic generator and the true success probability of each (agent, task).

Every agent has a level ``q`` (its success probability on a task of difficulty 0), i.e. a skill
``s = logit(q)``; every task has a difficulty ``d ~ Normal(0, 1.3)``; ``p(agent, task) = sigmoid(s - d)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import polars as pl

from tauk.synth.sample import SAMPLE_AGENTS, SAMPLE_DOMAINS
from tauk.synth.tasks import SynthTask, check_domains, make_tasks

__all__ = ["agent_levels", "success_probability", "true_success_probabilities"]

def agent_levels(agents: Mapping[str, float] | Sequence[str] | str) -> dict[str, float]:
    """Agent name → level; a sequence of names gets levels spread evenly from 0.8 down to 0.3.

    Examples
    --------
    >>> agent_levels(["a", "b", "c"])
    {'a': 0.8, 'b': 0.55, 'c': 0.3}
    """
    if isinstance(agents, str):
        agents = [agents]
    if isinstance(agents, Mapping):
        levels = {str(k): float(v) for k, v in agents.items()}
    else:
        names = [str(a) for a in agents]
        n = len(names)
        levels = {a: (round(0.8 - 0.5 * i / (n - 1), 6) if n > 1 else 0.65) for i, a in enumerate(names)}
    if not levels:
        raise ValueError("at least one agent is needed")
    for a, q in levels.items():
        if not 0.0 < q < 1.0:
            raise ValueError(f"agent {a!r}: level must be a probability strictly between 0 and 1, got {q}")
        if not a or "/" in a or "\\" in a:
            raise ValueError(f"agent name {a!r} cannot be used in a file name")
    return levels


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def success_probability(level: float, task: SynthTask) -> float:
    """``sigmoid(logit(level) - difficulty)``; 0 for the impossible (comma) task."""
    if task.impossible:
        return 0.0
    return _sigmoid(math.log(level / (1.0 - level)) - task.difficulty)


def true_success_probabilities(agents: Mapping[str, float] | Sequence[str] = SAMPLE_AGENTS,
                               domains: Sequence[str] = SAMPLE_DOMAINS, n_tasks: int = 50,
                               seed: int = 0) -> pl.DataFrame:
    """The true per-(agent, task) success probability used by :func:`~tauk.synth.synthesize` with the same arguments.

    ``p = sigmoid(logit(level) - difficulty)``; the always-failing comma task has ``p = 0``. ``p`` is the probability
    of reward 1 for a trial that is not an infrastructure error.

    Parameters
    ----------
    agents, domains, n_tasks, seed
        As for :func:`~tauk.synth.synthesize`.

    Returns
    -------
    polars.DataFrame
        Columns agent, domain, task_id, level, skill, difficulty, p: one row per agent × domain × task.

    Examples
    --------
    >>> df = true_success_probabilities({"a": 0.7}, ["airline"], n_tasks=8, seed=0)
    >>> df.columns, df.height
    (['agent', 'domain', 'task_id', 'level', 'skill', 'difficulty', 'p'], 8)
    >>> df.filter(pl.col("task_id") == "7")["p"].item()  # the comma task
    0.0
    """
    levels = agent_levels(agents)
    rows: dict[str, list] = {k: [] for k in ("agent", "domain", "task_id", "level", "skill", "difficulty", "p")}
    for domain in check_domains(domains):
        tasks = make_tasks(domain, n_tasks, seed)
        for agent, level in levels.items():
            for t in tasks:
                rows["agent"].append(agent)
                rows["domain"].append(domain)
                rows["task_id"].append(t.id)
                rows["level"].append(level)
                rows["skill"].append(math.log(level / (1 - level)))
                rows["difficulty"].append(t.difficulty)
                rows["p"].append(success_probability(level, t))
    return pl.DataFrame(rows, schema={"agent": pl.String, "domain": pl.String, "task_id": pl.String,
                                      "level": pl.Float64, "skill": pl.Float64, "difficulty": pl.Float64,
                                      "p": pl.Float64})


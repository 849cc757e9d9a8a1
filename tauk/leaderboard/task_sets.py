"""How many tasks each standard domain's task sets hold: the T a leaderboard row's percentages are over.

A leaderboard submission publishes percentages per domain, not the number of tasks. τ²-bench runs the whole
``base`` set of a domain for the leaderboard; the other sets (the ``test`` / ``train`` splits, telecom's ``small``)
are the plausible alternatives when a row's figures do not fit the base set. Counted from the task and split files
of τ²-bench v0.1.0, v1.0.0 and head (they agree on these sizes).

>>> TASK_SETS["airline"]["base"], TASK_SETS["retail"]["base"], TASK_SETS["banking_knowledge"]["base"]
(50, 114, 97)
>>> default_tasks("telecom"), alternative_tasks("telecom")
(114, {'small': 20, 'test': 40, 'train': 74})
"""

from __future__ import annotations

from tauk.errors import TaukError

__all__ = ["TASK_SETS", "default_tasks", "alternative_tasks"]

TASK_SETS: dict[str, dict[str, int]] = {
    "airline": {"base": 50, "test": 20, "train": 30},
    "retail": {"base": 114, "test": 40, "train": 74},
    "telecom": {"base": 114, "small": 20, "test": 40, "train": 74},
    "banking_knowledge": {"base": 97},
    "mock": {"base": 10},
}
"""Tasks per named set of each standard domain (``base``: the whole domain, what the leaderboard runs). telecom's
``full`` set (2,285 generated tasks) is left out: percentages over it fit almost any histogram by chance."""


def default_tasks(domain: str) -> int:
    """T of the domain's ``base`` set (what a leaderboard row is over unless it says otherwise)."""
    try:
        return TASK_SETS[domain]["base"]
    except KeyError:
        raise TaukError(f"no known task count for domain {domain!r}: give tasks= explicitly "
                        f"(known: {', '.join(TASK_SETS)})") from None  # fmt: skip


def alternative_tasks(domain: str) -> dict[str, int]:
    """The domain's other named task sets (name → T), the plausible alternatives to ``base``."""
    return {k: v for k, v in TASK_SETS.get(domain, {}).items() if k != "base"}

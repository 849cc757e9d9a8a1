"""The evaluation types of τ²-bench (docs/spec.md §2.5) and which reward components each evaluates.

Examples
--------
>>> from tauk.scoring import EVALUATION_TYPES, COMPONENTS
>>> EVALUATION_TYPES[:4], COMPONENTS[0]
(('env', 'communicate', 'action', 'nl_assertions'), 'DB')
"""

from __future__ import annotations

from tauk.conventions import COMPONENTS

__all__ = ["COMPONENTS", "COLUMN", "ENV", "EVALUATED", "EVALUATION_TYPES", "IGNORE_BASIS_ALWAYS", "SINGLE_ALWAYS"]

# COMPONENTS (the reward components, in the order of the ``failure`` column) comes from tauk.conventions.

COLUMN: dict[str, str] = {
    "DB": "db",
    "ENV_ASSERTION": "env_assertion",
    "NL_ASSERTION": "nl_assertion",
    "ACTION": "action",
    "COMMUNICATE": "communicate",
}
"""The column of the scored frame holding each component."""

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
"""The ``evaluation=`` values of :func:`tauk.score`, as τ²-bench names them."""

ENV = {"DB", "ENV_ASSERTION"}
"""The components checked against the domain environment."""

# Components each evaluation type evaluates ("all" also evaluates NL_ASSERTION when the basis names it, as
# τ²-bench does: it runs the NL judge iff the task needs it).
EVALUATED: dict[str, set[str]] = {
    "env": set(ENV),
    "communicate": {"COMMUNICATE"},
    "action": {"ACTION"},
    "nl_assertions": {"NL_ASSERTION"},
    "all": set(COMPONENTS),
    "all_with_nl_assertions": set(COMPONENTS),
    "all_ignore_basis": {"DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"},
    "all_with_nl_assertions_ignore_basis": set(COMPONENTS),
}
IGNORE_BASIS_ALWAYS: dict[str, tuple[str, ...]] = {
    "all_ignore_basis": ("ACTION", "COMMUNICATE"),
    "all_with_nl_assertions_ignore_basis": ("NL_ASSERTION", "ACTION", "COMMUNICATE"),
}
"""The ``*_ignore_basis`` types: the components they multiply whatever the basis (DB / ENV_ASSERTION only when
the basis names them)."""

SINGLE_ALWAYS: dict[str, tuple[str, ...]] = {
    "env": (),
    "communicate": ("COMMUNICATE",),
    "action": ("ACTION",),
    "nl_assertions": ("NL_ASSERTION",),
}
"""The one-component types: the reward is that component whatever the basis (τ²-bench returns the evaluator's
reward as it is), except ``env``, whose DB / ENV_ASSERTION multiply only where the basis names them. A basis naming
a component outside the type still raises (the safety rule)."""

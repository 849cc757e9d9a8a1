"""Pairing two agents on the tasks both ran (docs/spec.md §4): a task is (domain, task_id), and only tasks both
agents ran with at least k trials enter a comparison (the others are counted).

Used by :mod:`tauk.stats.comparisons.pairwise` (comparisons) and :mod:`tauk.stats.power` (pilots).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tauk.errors import TaukError

from ..tasks import GroupTasks, as_trials, prepare_trials, resolve_by, task_groups

__all__ = ["PairedTasks", "groups_by_label", "pair_tasks", "task_index"]


def task_index(g: GroupTasks) -> dict[tuple, int]:
    """(domain, task_id) -> row of the group's per-task arrays."""
    return {(dom, tid): i for i, (dom, tid) in enumerate(zip(g.domain, g.task_id))}


@dataclass(frozen=True)
class PairedTasks:
    """Two agents' per-task counts aligned on the tasks both ran with n_t ≥ k (tasks sorted by (domain, task_id)).

    ``n_*``: denominators, ``c_*``: successes, ``n_trials_*``: kept trials present; ``only_a`` / ``only_b``: tasks
    run by one agent only; ``excluded``: shared tasks left out because n_t < k for one of them.
    """

    tasks: list[tuple]
    n_a: np.ndarray
    c_a: np.ndarray
    n_trials_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray
    n_trials_b: np.ndarray
    only_a: int
    only_b: int
    excluded: int


def pair_tasks(ga: GroupTasks | None, gb: GroupTasks | None, k: int) -> PairedTasks:
    """Aligned arrays on tasks both agents ran with n_t ≥ k, plus the counts of tasks left out."""
    ia = task_index(ga) if ga is not None else {}
    ib = task_index(gb) if gb is not None else {}
    shared = sorted(set(ia) & set(ib), key=lambda t: (t[0] is None, t[0] or "", t[1]))
    only_a = len(set(ia) - set(ib))
    only_b = len(set(ib) - set(ia))
    sa = np.array([ia[t] for t in shared], dtype=np.int64)
    sb = np.array([ib[t] for t in shared], dtype=np.int64)
    if shared:
        na, ca, nta = ga.n[sa], ga.c[sa], ga.n_trials[sa]
        nb, cb, ntb = gb.n[sb], gb.c[sb], gb.n_trials[sb]
    else:
        na = ca = nta = nb = cb = ntb = np.empty(0, dtype=np.int64)
    keep = (na >= k) & (nb >= k)
    excluded = int((~keep).sum())
    sel = np.flatnonzero(keep)
    tasks = [shared[i] for i in sel]
    return PairedTasks(tasks, na[sel], ca[sel], nta[sel], nb[sel], cb[sel], ntb[sel], only_a, only_b, excluded)


def groups_by_label(trials, by, label, infra, labels=None, reward="reward", pool_setups=False, extra=()):
    """The prepared trials, their per-task groups ``{by key: {label value: GroupTasks}}`` and the grouping used
    (``by``, plus ``setup`` when a ``by`` group of the compared agents spans several setups — one agent's trials, or
    two agents each in its own setup — and ``pool_setups`` is false: agents are compared within a setup, never paired
    on task ids across setups). ``extra``: more trials columns to read (a cluster column)."""
    if label in by:
        raise TaukError(f"label column {label!r} cannot also be a `by` column")
    df = prepare_trials(as_trials(trials, [*by, label, reward, *extra]), infra, reward)
    if label not in df.columns:
        raise TaukError(f"label column {label!r} is not in the trials frame")
    if labels is not None:
        present = set(df[label].drop_nulls().unique().to_list())
        missing = [x for x in labels if x not in present]
        if missing:
            raise TaukError(f"{label} value(s) {missing} not found; have {sorted(present)}")
        df = df.filter(pl.col(label).is_in(list(labels)))
    # over the agents compared, not per agent; compared by setup (label="setup"), each side is one setup already
    by = resolve_by(df, tuple(by), pool_setups or label == "setup")
    groups = task_groups(df, (*by, label))
    table: dict[tuple, dict[Any, GroupTasks]] = {}
    for g in groups:
        table.setdefault(g.key[:-1], {})[g.key[-1]] = g
    return df, table, by

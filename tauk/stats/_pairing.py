"""Pairing two agents on the tasks both ran, and the paired statistics of one comparison (docs/spec.md §4).

Used by :mod:`tauk.stats.compare` (comparisons) and :mod:`tauk.stats.power` (pilots). A task is (domain, task_id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from tauk.conventions import CI_LEVEL
from tauk.errors import TaukError

from ._bootstrap import column_stats, interval
from ._core import GroupTasks, as_trials, prepare_trials, resolve_by, task_groups, u_hat
from .pvalues import sign_flip_pvalue

__all__ = [
    "NUM_FIELDS",
    "ROW_SCHEMA",
    "TESTS",
    "Paired",
    "PairedTasks",
    "groups_by_label",
    "interval_label",
    "nn",
    "pair_tasks",
    "paired",
    "rows_frame",
    "task_index",
]


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


@dataclass(frozen=True)
class Paired:
    """One paired comparison: its row of the comparison frame and its per-task table."""

    row: dict[str, Any]
    tasks: pl.DataFrame


TESTS = ("t", "signflip", "signflip-mid")
"""The paired tests of :func:`tauk.stats.compare` (``test=``); see :func:`tauk.stats.paired.paired_test`."""

TEST_NAMES = {"t": "paired t", "signflip": "sign-flip inversion", "signflip-mid": "mid-p sign-flip inversion"}


def interval_label(method: str, test: str) -> str:
    """What made a comparison's ``ci_low`` / ``ci_high``: the test's own interval (``method="model"``, the
    default) or the paired task bootstrap / t interval of ``method``."""
    if method == "model":
        return TEST_NAMES[test]
    return "t interval" if method == "t" else f"{method} paired task bootstrap"


def paired(ga, gb, a, b, k, ci, method, resamples, seed, permutations, progress, test="t") -> Paired:
    """Compare label values ``a`` and ``b`` (their groups ``ga``, ``gb``) on shared tasks at one k.

    The headline ``p_value`` (and, with ``method="model"``, ``ci_low`` / ``ci_high``) come from the paired test
    ``test`` (:func:`tauk.stats.paired.paired_test`); another ``method`` gives the paired task-bootstrap interval.
    """
    from .paired import paired_test

    pair = pair_tasks(ga, gb, k)
    tasks, only_a, only_b, excluded = pair.tasks, pair.only_a, pair.only_b, pair.excluded
    na, ca, nta, nb, cb, ntb = pair.n_a, pair.c_a, pair.n_trials_a, pair.n_b, pair.c_b, pair.n_trials_b
    ua = u_hat(na, ca, k)
    ub = u_hat(nb, cb, k)
    d = ua - ub
    T = d.size
    row: dict[str, Any] = {
        "a": a,
        "b": b,
        "k": k,
        "n_tasks": T,
        "n_tasks_only_a": only_a,
        "n_tasks_only_b": only_b,
        "n_tasks_excluded": excluded,
        "test": test,
        "interval_method": interval_label(method, test),
    }
    level = ci if ci is not None else CI_LEVEL
    if T == 0:
        row.update(dict.fromkeys(NUM_FIELDS))
        row["signflip_method"] = row["perm_method"] = None
    else:
        mean, se, _ = column_stats(d)
        se0 = float(se[0]) if T > 1 else float("nan")
        tt = paired_test(d, level=level, method="t")
        head = tt if test == "t" else paired_test(d, level=level, method=test, permutations=permutations, seed=seed)
        if method == "model":
            lo, hi = head.lo, head.hi
        elif T > 1:
            # the paired bootstrap: resampling tasks resamples (Û_A, Û_B) together, i.e. d_t
            bl, bh = interval(method, d, level, resamples, seed, progress)
            lo, hi = bl[0], bh[0]
        else:
            lo = hi = float("nan")
        p_sf, sf_method = sign_flip_pvalue(d, permutations=permutations, seed=seed)
        nz = d[d != 0]
        if nz.size == 0:
            p_w = 1.0
        else:
            p_w = float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
        one_trial = bool(k == 1 and np.all(nta == 1) and np.all(ntb == 1) and np.all(na == 1) and np.all(nb == 1))
        if one_trial:
            n10 = int(np.sum((ca == 1) & (cb == 0)))
            n01 = int(np.sum((ca == 0) & (cb == 1)))
            p_mc = float(stats.binomtest(n10, n10 + n01, 0.5).pvalue) if n10 + n01 else 1.0
        else:
            n10 = n01 = p_mc = None
        row.update(
            {
                "estimate_a": float(np.mean(ua)),
                "estimate_b": float(np.mean(ub)),
                "diff": float(mean[0]),
                "se": nn(se0),
                "t_low": nn(tt.lo),
                "t_high": nn(tt.hi),
                "ci_low": nn(lo),
                "ci_high": nn(hi),
                "p_value": nn(head.p_value),
                "p_t": nn(tt.p_value),
                "p_signflip": float(p_sf),
                "p_wilcoxon": p_w,
                "mcnemar_a_only": n10,
                "mcnemar_b_only": n01,
                "p_mcnemar": p_mc,
                "p_perm": float(p_sf),
            }
        )
        row["signflip_method"] = row["perm_method"] = sf_method
    tframe = pl.DataFrame(
        {
            "domain": [t[0] for t in tasks],
            "task_id": [t[1] for t in tasks],
            "n_a": na,
            "c_a": ca,
            "n_b": nb,
            "c_b": cb,
            "u_a": ua,
            "u_b": ub,
            "d": d,
        },
        schema={"domain": pl.String, "task_id": pl.String, "n_a": pl.Int64, "c_a": pl.Int64, "n_b": pl.Int64,
                "c_b": pl.Int64, "u_a": pl.Float64, "u_b": pl.Float64, "d": pl.Float64},
    )
    return Paired(row, tframe)


def nn(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


NUM_FIELDS = (
    "estimate_a", "estimate_b", "diff", "se", "t_low", "t_high", "ci_low", "ci_high", "p_value", "p_t", "p_signflip",
    "p_wilcoxon", "mcnemar_a_only", "mcnemar_b_only", "p_mcnemar", "p_perm",
)
ROW_SCHEMA = {
    "a": pl.String, "b": pl.String, "k": pl.Int64, "n_tasks": pl.Int64, "n_tasks_only_a": pl.Int64,
    "n_tasks_only_b": pl.Int64, "n_tasks_excluded": pl.Int64, "estimate_a": pl.Float64, "estimate_b": pl.Float64,
    "diff": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "interval_method": pl.String,
    "test": pl.String, "p_value": pl.Float64, "se": pl.Float64, "t_low": pl.Float64, "t_high": pl.Float64,
    "p_t": pl.Float64, "p_signflip": pl.Float64, "signflip_method": pl.String, "p_wilcoxon": pl.Float64,
    "mcnemar_a_only": pl.Int64, "mcnemar_b_only": pl.Int64, "p_mcnemar": pl.Float64,
    # deprecated aliases (one release): p_perm = p_signflip, perm_method = signflip_method
    "p_perm": pl.Float64, "perm_method": pl.String,
}


def groups_by_label(trials, by, label, infra, labels=None, reward="reward", pool_setups=False):
    """The prepared trials, their per-task groups ``{by key: {label value: GroupTasks}}`` and the grouping used
    (``by``, plus ``setup`` when an agent's trials span several setups and ``pool_setups`` is false: agents are
    compared within a setup)."""
    if label in by:
        raise TaukError(f"label column {label!r} cannot also be a `by` column")
    df = prepare_trials(as_trials(trials, [*by, label, reward]), infra, reward)
    if label not in df.columns:
        raise TaukError(f"label column {label!r} is not in the trials frame")
    if labels is not None:
        present = set(df[label].drop_nulls().unique().to_list())
        missing = [x for x in labels if x not in present]
        if missing:
            raise TaukError(f"{label} value(s) {missing} not found; have {sorted(present)}")
        df = df.filter(pl.col(label).is_in(list(labels)))
    by = resolve_by(df, tuple(by), pool_setups, also=(label,))
    groups = task_groups(df, (*by, label))
    table: dict[tuple, dict[Any, GroupTasks]] = {}
    for g in groups:
        table.setdefault(g.key[:-1], {})[g.key[-1]] = g
    return df, table, by


def rows_frame(by, schema, keyed_rows, extra_schema=None):
    """The comparison frame: group keys and the :data:`ROW_SCHEMA` columns, one row per comparison."""
    sch = {c: schema[c] for c in by}
    sch.update(ROW_SCHEMA)
    if extra_schema:
        sch.update(extra_schema)
    data = {c: [] for c in sch}
    for key, row in keyed_rows:
        for i, c in enumerate(by):
            data[c].append(key[i])
        for c in sch:
            if c not in by:
                data[c].append(row.get(c))
    return pl.DataFrame(data, schema=sch)

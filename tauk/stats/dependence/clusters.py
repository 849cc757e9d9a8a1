"""Task families: tasks that are not independent draws, and cluster-robust intervals for them.

τ²-bench's tasks come in families. Telecom's ids encode theirs: ``[issue_type]fault|fault[PERSONA:persona]`` —
every issue type (``mms_issue``, ``mobile_data_issue``, ``service_issue``) is played by every persona (``None``,
``Easy``, ``Hard``), 9 families at v0.1.0 (114 tasks, 9–17 each). Retail's tasks share users (60 users for
114 tasks at v0.1.0 by the user each task's known_info names, 31 of them with 2–5 tasks), airline's a few — but
their ids are bare numbers, so a family there has to come from the task definitions: pass it as a column (``cluster="user"``).
``cluster="family"`` takes the family from the id where the id encodes one (telecom) and leaves every other task
its own cluster.

With a cluster column the estimate is the same; its variance is the **CR2** (Bell–McCaffrey) cluster-robust
variance of a mean of per-task values x_t over G clusters:

    V = Σ_g (Σ_{t ∈ g} (x_t − x̄))² / (1 − m_g/T) / T²,   m_g tasks in cluster g,

with t_{G−1} quantiles. A summary's population interval is the hull of the task-level (model) interval and
θ̂ ± t_{G−1}·√V (so a family structure can only widen it); a comparison's t test uses V of the per-task
differences with G − 1 degrees of freedom, its interval the same t. Clusters of one task are their own tasks (with
only such clusters V is the task-level variance, up to the CR2 factor); fewer than 2 clusters cannot give a
variance: the task-level interval stays and a :class:`~tauk.errors.StatsWarning` says so.

Examples
--------
>>> task_family("telecom", "[mms_issue]bad_network_preference|bad_wifi_calling[PERSONA:Easy]")
'mms_issue · Easy'
>>> task_family("retail", "12")
'12'
>>> import numpy as np
>>> x = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0])
>>> v_iid = x.var(ddof=1) / x.size
>>> v_cr, G = cluster_variance(x, ["a", "a", "b", "b", "c", "c"])
>>> G, bool(v_cr > v_iid)
(3, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from tauk.conventions import CLUSTER_FAMILY
from tauk.errors import TaukError

__all__ = ["FAMILY", "ClusterInfo", "cluster_keys", "cluster_variance", "task_family"]

FAMILY = CLUSTER_FAMILY
"""``cluster=FAMILY``: the per-domain default families (from the task ids where they encode one)."""

_TELECOM = re.compile(r"^\[(?P<issue>[^\]]+)\].*\[PERSONA:(?P<persona>[^\]]*)\]\s*$")


def task_family(domain: str | None, task_id: str) -> str:
    """The family a task id encodes: telecom's ``issue type · persona``; any other id is its own family."""
    m = _TELECOM.match(str(task_id))
    if m:
        return f"{m['issue']} · {m['persona']}"
    return str(task_id)


class ClusterInfo(NamedTuple):
    """What a cluster-robust figure used: ``source`` (the column, or ``"family"``), ``n_clusters`` (G),
    ``n_single`` (clusters of one task) and ``sizes`` (tasks per cluster, largest first)."""

    source: str
    n_clusters: int
    n_single: int
    sizes: tuple[int, ...]


def cluster_keys(df: pl.DataFrame, by: Sequence[str], cluster: str) -> dict[tuple, dict[tuple, Any]]:
    """Per group of ``by``: {(domain, task_id): cluster label}. ``cluster`` is a column of the trials (constant
    within a task) or :data:`FAMILY`. Raises :class:`~tauk.errors.TaukError` naming the column and a task when a
    task has two labels, or when the column is missing."""
    keys = list(by)
    dom = pl.col("domain").cast(pl.String) if "domain" in df.columns else pl.lit(None, dtype=pl.String)
    if cluster == FAMILY:
        lab = pl.lit(None, dtype=pl.String)
    elif cluster in df.columns:
        lab = pl.col(cluster).cast(pl.String)
    else:
        raise TaukError(f"cluster column {cluster!r} is not in the trials frame (or use cluster={FAMILY!r}: "
                        "the families the task ids encode)")  # fmt: skip
    sel = df.select(*[pl.col(c) for c in keys], dom.alias("_d"), pl.col("task_id").cast(pl.String).alias("_t"),
                    lab.alias("_c")).unique()  # fmt: skip
    if cluster != FAMILY:
        twice = sel.group_by([*keys, "_d", "_t"]).agg(pl.col("_c").n_unique().alias("n")).filter(pl.col("n") > 1)
        if twice.height:
            r = twice.row(0, named=True)
            raise TaukError(f"cluster column {cluster!r} has {r['n']} values for task ({r['_d']}, {r['_t']}); a "
                            "task belongs to one cluster")  # fmt: skip
    out: dict[tuple, dict[tuple, Any]] = {}
    for r in sel.iter_rows(named=True):
        key = tuple(r[c] for c in keys)
        lbl = task_family(r["_d"], r["_t"]) if cluster == FAMILY else r["_c"]
        if lbl is None:  # a task without a label is its own cluster
            lbl = f"\x00{r['_d']}\x00{r['_t']}"
        out.setdefault(key, {})[(r["_d"], r["_t"])] = (r["_d"], lbl) if cluster == FAMILY else lbl
    return out


def cluster_variance(x: np.ndarray, labels: Sequence[Any]) -> tuple[float, int]:
    """CR2 cluster-robust variance of mean(x) and the number of clusters G (NaN entries of x are left out).

    V = Σ_g (Σ_{t∈g} (x_t − x̄))² / (1 − m_g/T) / T² (a cluster holding every task contributes nothing)."""
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x)
    x = x[ok]
    lab = [repr(labels[i]) for i in np.flatnonzero(ok)]
    T = x.size
    if T == 0:
        return float("nan"), 0
    _, inv = np.unique(np.array(lab, dtype=str), return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    G = int(inv.max()) + 1
    e = x - x.mean()
    sums = np.bincount(inv, weights=e, minlength=G)
    m = np.bincount(inv, minlength=G).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(m < T, sums**2 / (1.0 - m / T), 0.0)
    var = float(terms.sum() / T**2)
    # equal cluster means leave residual sums of rounding noise only (|Σ e| ≲ T·ε·max|x|): that V is 0, not a
    # variance (d_t = 2/3 − 1/3 on 10 tasks in 3 clusters gave 5e-33, a zero-width CR2 interval with no word)
    noise = (T * np.finfo(np.float64).eps * max(1.0, float(np.abs(x).max()))) ** 2
    return (0.0 if var <= noise else var), G


def cluster_info(source: str, labels: Sequence[Any]) -> ClusterInfo:
    """G, clusters of one task and the sizes of the clusters of ``labels`` (one per task)."""
    _, counts = np.unique(np.array([repr(v) for v in labels], dtype=str), return_counts=True)
    sizes = tuple(sorted((int(c) for c in counts), reverse=True))
    return ClusterInfo(source, len(sizes), sum(1 for s in sizes if s == 1), sizes)

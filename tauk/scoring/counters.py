"""The counters upstream τ²-bench's ``compute_metrics`` reports beside pass^k (its HEAD): DB checks, authentication,
endings, read / write action accuracy, responsiveness and the LLM review's error tallies — as tables over a trials
frame, one function per table, each keyed by ``by`` (the grouping of a summary) and each carrying its denominator.

Every count follows upstream's rules (``tau2.metrics.agent_metrics.compute_metrics``), over the *evaluated*
simulations — infrastructure errors left out, as upstream does — except ``termination_infrastructure_error``, which
counts them:

* DB: a recorded ``db_check`` with ``db_match`` true is a match, any other recorded check a mismatch; no reward info
  or no ``db_check``: not checked (``db_match`` null on trials).
* authentication: ``auth_classification.status`` ``succeeded`` / ``failed``; any other status counts as not needed;
  none recorded: not checked.
* endings: ``user_stop``, ``agent_stop``, ``max_steps``; ``too_many_errors`` + ``agent_error`` + ``user_error`` as
  ``error``; ``termination_other`` (not an upstream counter) holds the rest (``timeout``,
  ``context_window_exceeded``, ``unexpected_error``, unknown), so that the endings add up to ``n_simulations``.
* actions: gold-action checks whose ``tool_type`` is ``read`` / ``write``, and how many matched; a simulation with
  no action check adds nothing. Accuracy = correct / total (null at 0 total).
* responsiveness: simulations whose ``info`` records ``had_unresponsive_period``, and how many had one.
* reviews: a simulation with a ``review`` tallies its agent and user errors by severity (no severity: ``unknown``),
  its most severe error per side (``critical`` > ``minor`` > the first other; ``none`` without errors) and the side
  of its first critical error (by tick, else turn); one with only a ``user_only_review`` counts ``none`` for the
  agent side. Tags are tallied per severity.

pass^k under both infrastructure conventions (``infra="drop"``: τ²-bench ≥ 1.0; ``"fail"``: the leaderboard's) is in
every :func:`tauk.stats.summarize` row (``estimate`` and ``estimate_infra_fail`` / ``estimate_infra_drop``), with
these counters (``Summary.counters``).

Examples
--------
>>> import tauk
>>> from tauk.scoring import counters
>>> trials = tauk.load("data/baseline_airline.json").trials
>>> counters.db_checks(trials, by="agent").row(0)
('baseline', 100, 46, 44, 10)
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec
import polars as pl

from tauk.conventions import INFRA_REASON
from tauk.errors import TaukError, check_columns

__all__ = [
    "COUNTER_COLUMNS",
    "ERROR_ENDINGS",
    "action_accuracy",
    "authentication",
    "db_checks",
    "first_critical",
    "head_counters",
    "responsiveness",
    "review_severities",
    "review_tags",
    "terminations",
]

COUNTER_COLUMNS: tuple[str, ...] = (
    "termination_reason", "is_infra_error", "db_match", "auth_status", "n_read_actions", "n_read_actions_correct",
    "n_write_actions", "n_write_actions_correct", "had_unresponsive_period", "review", "review_errors",
)  # fmt: skip
"""The trials columns the counters read (a store reads only these besides the grouping)."""

ERROR_ENDINGS: tuple[str, ...] = ("too_many_errors", "agent_error", "user_error")
"""The endings upstream counts as ``termination_error``."""

_BY_DEFAULT = ("agent", "domain")


def _by(trials: pl.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    keys = [by] if isinstance(by, str) else list(by or ())
    check_columns(keys, trials.columns)
    return keys


def _frame(data: Any) -> pl.DataFrame:
    trials = data if isinstance(data, pl.DataFrame) else getattr(data, "trials", None)
    if isinstance(data, pl.LazyFrame):
        trials = data.collect()
    if not isinstance(trials, pl.DataFrame):
        raise TaukError(f"expected a trials frame or Results, got {type(data).__name__}")
    return trials


def _col(trials: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    """A column of trials, or nulls where the frame predates it."""
    return pl.col(name) if name in trials.columns else pl.lit(None, dtype)


def _infra(trials: pl.DataFrame) -> pl.Expr:
    if "termination_reason" in trials.columns:
        return (pl.col("termination_reason") == INFRA_REASON).fill_null(False)
    return _col(trials, "is_infra_error", pl.Boolean).fill_null(False)


def _agg(data: Any, by: Any, **aggs: pl.Expr) -> pl.DataFrame:
    """``aggs`` over the evaluated simulations (infrastructure errors left out) of each group of ``by``, with
    ``n_simulations`` first."""
    trials = _frame(data)
    keys = _by(trials, by)
    frame = trials.lazy().filter(~_infra(trials))  # one query: only the columns the aggregates read
    named = {"n_simulations": pl.len().cast(pl.Int64), **aggs}
    if keys:
        return frame.group_by(keys, maintain_order=True).agg(**named).sort(keys, nulls_last=True).collect()
    return frame.select(**named).collect()


def _count(cond: pl.Expr) -> pl.Expr:
    return cond.fill_null(False).sum().cast(pl.Int64)


def db_checks(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """``by…, n_simulations, db_match, db_mismatch, db_not_checked`` (upstream's DB match counters).

    Examples
    --------
    >>> import tauk
    >>> db_checks(tauk.load("data/baseline_retail.json").trials, by=None).row(0)
    (100, 53, 37, 10)
    """
    t = _frame(trials)
    return _agg(t, by, **_db_aggs(t))


def _db_aggs(t: pl.DataFrame) -> dict[str, pl.Expr]:
    m = _col(t, "db_match", pl.Boolean)
    return {"db_match": _count(m), "db_mismatch": _count(~m), "db_not_checked": _count(m.is_null())}


def authentication(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """``by…, n_simulations, auth_succeeded, auth_failed, auth_not_needed, auth_not_checked``.

    Examples
    --------
    >>> import tauk
    >>> authentication(tauk.load("data/baseline_retail.json").trials, by=None).row(0)
    (100, 0, 0, 0, 100)
    """
    t = _frame(trials)
    return _agg(t, by, **_auth_aggs(t))


def _auth_aggs(t: pl.DataFrame) -> dict[str, pl.Expr]:
    s = _col(t, "auth_status", pl.String)
    return {
        "auth_succeeded": _count(s == "succeeded"),
        "auth_failed": _count(s == "failed"),
        "auth_not_needed": _count(s.is_not_null() & ~s.is_in(["succeeded", "failed"])),
        "auth_not_checked": _count(s.is_null()),
    }


def terminations(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """``by…, n_simulations, termination_user_stop, termination_agent_stop, termination_max_steps,
    termination_error, termination_other`` over the evaluated simulations, and
    ``termination_infrastructure_error`` (the infrastructure errors left out of ``n_simulations``).

    Examples
    --------
    >>> import tauk
    >>> terminations(tauk.load("data/baseline_retail.json").trials, by=None).columns[:3]
    ['n_simulations', 'termination_user_stop', 'termination_agent_stop']
    """
    t = _frame(trials)
    keys = _by(t, by)
    out = _agg(t, keys, **_termination_aggs(t))
    infra = (t.group_by(keys).agg(termination_infrastructure_error=_count(_infra(t))) if keys
             else t.select(termination_infrastructure_error=_count(_infra(t))))  # fmt: skip
    if not keys:
        return out.hstack(infra)
    # a group of infrastructure errors only has no evaluated simulation: it still gets its row
    return (
        infra.join(out, on=keys, how="left", nulls_equal=True)
        .with_columns(pl.exclude(keys).fill_null(0))
        .select(*out.columns, "termination_infrastructure_error")
        .sort(keys, nulls_last=True)
    )


def _termination_aggs(t: pl.DataFrame) -> dict[str, pl.Expr]:
    r = _col(t, "termination_reason", pl.String)
    known = ["user_stop", "agent_stop", "max_steps", *ERROR_ENDINGS]
    return {
        "termination_user_stop": _count(r == "user_stop"),
        "termination_agent_stop": _count(r == "agent_stop"),
        "termination_max_steps": _count(r == "max_steps"),
        "termination_error": _count(r.is_in(list(ERROR_ENDINGS))),
        "termination_other": _count(~r.is_in(known) | r.is_null()),
    }


def action_accuracy(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """``by…, n_simulations, read_actions, read_actions_correct, read_accuracy, write_actions,
    write_actions_correct, write_accuracy`` (from each recorded action check's ``tool_type``).

    Examples
    --------
    >>> import tauk
    >>> action_accuracy(tauk.load("data/baseline_retail.json").trials, by=None).row(0)
    (100, 0, 0, None, 0, 0, None)
    """
    t = _frame(trials)
    out = _agg(t, by, **_action_aggs(t))
    keys = _by(t, by)
    return out.with_columns(**_ACCURACY).select(*keys, "n_simulations", *_ACTION_COLUMNS)


def _action_aggs(t: pl.DataFrame) -> dict[str, pl.Expr]:
    def total(name: str) -> pl.Expr:
        return _col(t, name, pl.Int64).fill_null(0).sum().cast(pl.Int64)

    return {
        "read_actions": total("n_read_actions"),
        "read_actions_correct": total("n_read_actions_correct"),
        "write_actions": total("n_write_actions"),
        "write_actions_correct": total("n_write_actions_correct"),
    }


_ACCURACY = {f"{side}_accuracy": pl.when(pl.col(f"{side}_actions") > 0)
             .then(pl.col(f"{side}_actions_correct") / pl.col(f"{side}_actions")) for side in ("read", "write")}  # fmt: skip
_ACTION_COLUMNS = ("read_actions", "read_actions_correct", "read_accuracy", "write_actions", "write_actions_correct",
                   "write_accuracy")  # fmt: skip


def responsiveness(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """``by…, n_simulations, sims_with_responsiveness_info, sims_with_unresponsive_period`` (full-duplex runs).

    Examples
    --------
    >>> import tauk
    >>> responsiveness(tauk.load("data/baseline_retail.json").trials, by=None).row(0)
    (100, 0, 0)
    """
    t = _frame(trials)
    return _agg(t, by, **_responsiveness_aggs(t))


def _responsiveness_aggs(t: pl.DataFrame) -> dict[str, pl.Expr]:
    u = _col(t, "had_unresponsive_period", pl.Boolean)
    return {"sims_with_responsiveness_info": _count(u.is_not_null()), "sims_with_unresponsive_period": _count(u)}


# ---- LLM reviews ---------------------------------------------------------------------------------------------

_ERRORS = msgspec.json.Decoder(list[dict[str, Any]])
_USER_CRITICAL = ("critical_helped", "critical_hindered")


def _max_severity(severities: list[str], critical: tuple[str, ...]) -> str:
    """Upstream's running maximum: a critical severity wins (the last one seen), then ``minor``, then the first
    other severity; ``none`` without errors."""
    top = "none"
    for sev in severities:
        if sev in critical:
            top = sev
        elif sev == "minor" and top not in critical:
            top = "minor"
        elif top == "none":
            top = sev
    return top


def _position(e: dict[str, Any]) -> float:
    if e.get("tick_start") is not None:
        return e["tick_start"]
    if e.get("turn_idx") is not None:
        return e["turn_idx"]
    return math.inf


def _reviewed(data: Any, by: Any) -> tuple[list[str], list[tuple[tuple, str, list[dict[str, Any]]]]]:
    """``(keys, [(group key, review kind, errors)])`` of the evaluated simulations carrying a review."""
    t = _frame(data)
    keys = _by(t, by)
    if "review" not in t.columns:
        return keys, []
    rows = t.lazy().filter(~_infra(t) & pl.col("review").is_not_null()).select(*keys, "review", "review_errors") \
        .collect().rows()  # fmt: skip
    n = len(keys)
    return keys, [(r[:n], r[n], _ERRORS.decode(r[n + 1]) if r[n + 1] else []) for r in rows]


def _sides(kind: str, errors: list[dict[str, Any]]) -> dict[str, tuple[list[dict[str, Any]], tuple[str, ...]]]:
    """The errors of each side that upstream tallies, with that side's critical severities."""
    if kind == "review":
        return {"agent": ([e for e in errors if e.get("source") == "agent"], ("critical",)),
                "user": ([e for e in errors if e.get("source") == "user"], _USER_CRITICAL)}  # fmt: skip
    return {"user": (errors, _USER_CRITICAL)}


def review_severities(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """One row per (group, side, severity): ``by…, source`` (``agent`` / ``user``), ``severity``, ``errors`` (errors of
    that side and severity: upstream's ``*_errors_by_severity``), ``simulations_at_max`` (reviewed simulations whose
    most severe error of that side is it, ``none`` for none: ``sims_by_max_*_severity``) and ``n_reviewed`` (the
    denominator: evaluated simulations with a review).

    Examples
    --------
    >>> import tauk
    >>> review_severities(tauk.load("data/baseline_retail.json").trials, by=None).height
    0
    """
    keys, reviewed = _reviewed(trials, by)
    errors: dict[tuple, int] = defaultdict(int)
    at_max: dict[tuple, int] = defaultdict(int)
    n_reviewed: dict[tuple, int] = defaultdict(int)
    for key, kind, errs in reviewed:
        n_reviewed[key] += 1
        if kind != "review":
            at_max[(key, "agent", "none")] += 1  # upstream: no agent review for a user-only one
        for side, (side_errors, critical) in _sides(kind, errs).items():
            sevs = [e.get("severity") or "unknown" for e in side_errors]
            for sev in sevs:
                errors[(key, side, sev)] += 1
            at_max[(key, side, _max_severity(sevs, critical))] += 1
    cells = sorted(set(errors) | set(at_max), key=lambda c: (tuple(map(str, c[0])), c[1], c[2]))
    schema = {k: _frame(trials).schema[k] for k in keys}
    return pl.DataFrame(
        [[*c[0], c[1], c[2], errors.get(c, 0), at_max.get(c, 0), n_reviewed[c[0]]] for c in cells],
        schema={**schema, "source": pl.String, "severity": pl.String, "errors": pl.Int64,
                "simulations_at_max": pl.Int64, "n_reviewed": pl.Int64},  # fmt: skip
        orient="row",
    )


def review_tags(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """One row per (group, side, tag, severity): ``by…, source, tag, severity, errors`` (upstream's
    ``*_error_tags_by_severity``), with ``n_reviewed``.

    Examples
    --------
    >>> import tauk
    >>> review_tags(tauk.load("data/baseline_retail.json").trials, by=None).columns
    ['source', 'tag', 'severity', 'errors', 'n_reviewed']
    """
    keys, reviewed = _reviewed(trials, by)
    tags: dict[tuple, int] = defaultdict(int)
    n_reviewed: dict[tuple, int] = defaultdict(int)
    for key, kind, errs in reviewed:
        n_reviewed[key] += 1
        for side, (side_errors, _) in _sides(kind, errs).items():
            for e in side_errors:
                for tag in e.get("error_tags") or ():
                    tags[(key, side, tag, e.get("severity") or "unknown")] += 1
    schema = {k: _frame(trials).schema[k] for k in keys}
    cells = sorted(tags, key=lambda c: (tuple(map(str, c[0])), *c[1:]))
    return pl.DataFrame(
        [[*c[0], c[1], c[2], c[3], tags[c], n_reviewed[c[0]]] for c in cells],
        schema={**schema, "source": pl.String, "tag": pl.String, "severity": pl.String, "errors": pl.Int64,
                "n_reviewed": pl.Int64},  # fmt: skip
        orient="row",
    )


def first_critical(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """``by…, n_reviewed, first_critical_agent, first_critical_user, first_critical_none``: which side made the first
    critical error of each reviewed simulation (upstream's ``sims_by_first_critical_source``).

    Examples
    --------
    >>> import tauk
    >>> first_critical(tauk.load("data/baseline_retail.json").trials, by=None).height
    0
    """
    keys, reviewed = _reviewed(trials, by)
    counts: dict[tuple, dict[str, int]] = {}
    for key, kind, errs in reviewed:
        c = counts.setdefault(key, {"n_reviewed": 0, "agent": 0, "user": 0, "none": 0})
        c["n_reviewed"] += 1
        if kind == "review":
            crit = [e for e in errs if (e.get("source") == "agent" and e.get("severity") == "critical")
                    or (e.get("source") == "user" and e.get("severity") in _USER_CRITICAL)]  # fmt: skip
            c[min(crit, key=_position)["source"] if crit else "none"] += 1
        else:
            c["user" if any(e.get("severity") in _USER_CRITICAL for e in errs) else "none"] += 1
    schema = {k: _frame(trials).schema[k] for k in keys}
    return pl.DataFrame(
        [[*key, c["n_reviewed"], c["agent"], c["user"], c["none"]] for key, c in counts.items()],
        schema={**schema, "n_reviewed": pl.Int64, "first_critical_agent": pl.Int64, "first_critical_user": pl.Int64,
                "first_critical_none": pl.Int64},  # fmt: skip
        orient="row",
    ).sort(keys or "n_reviewed", nulls_last=True)


def head_counters(trials: Any, *, by: str | Sequence[str] | None = _BY_DEFAULT) -> pl.DataFrame:
    """Every scalar counter in one row per group (:func:`db_checks`, :func:`authentication`, :func:`terminations`,
    :func:`action_accuracy`, :func:`responsiveness`, :func:`first_critical`, and the review totals
    ``n_reviewed``, ``agent_errors``, ``user_errors``), with ``n_simulations`` (evaluated) as their denominator —
    the counters a summary row carries.

    Examples
    --------
    >>> import tauk
    >>> row = head_counters(tauk.load("data"), by="agent").row(0, named=True)
    >>> row["agent"], row["n_simulations"], row["db_match"] + row["db_mismatch"] + row["db_not_checked"]
    ('atlas-large', 200, 200)
    """
    t = _frame(trials)
    keys = _by(t, by)
    if keys:
        return _grouped_head_counters(t, keys)
    out = _grouped_head_counters(t.with_columns(_all=pl.lit(0)), ["_all"]).drop("_all")
    if out.height:
        return out
    # no simulation at all: one row, every count 0 (the accuracies stay null)
    return out.clear(1).with_columns([pl.col(c).fill_null(0) for c in out.columns if c not in _ACCURACY])


def _grouped_head_counters(t: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """:func:`head_counters` with group keys: every aggregate of the evaluated simulations in one query (the same
    expressions as the separate counters), joined to the infrastructure-error counts of all simulations (a group of
    infrastructure errors only still gets its row) and the review tallies."""
    db, auth, actions, resp, term = (_db_aggs(t), _auth_aggs(t), _action_aggs(t), _responsiveness_aggs(t),
                                     _termination_aggs(t))  # fmt: skip
    evaluated = {"n_simulations": pl.len().cast(pl.Int64), **db, **auth, **actions, **resp, **term}
    lazy = t.lazy()
    counted = lazy.filter(~_infra(t)).group_by(keys, maintain_order=True).agg(**evaluated)
    infra = lazy.group_by(keys).agg(termination_infrastructure_error=_count(_infra(t)))
    sev = review_severities(t, by=keys)
    tot = sev.group_by(keys).agg(
        agent_errors=pl.col("errors").filter(pl.col("source") == "agent").sum().cast(pl.Int64),
        user_errors=pl.col("errors").filter(pl.col("source") == "user").sum().cast(pl.Int64),
    )
    crit = first_critical(t, by=keys)
    columns = [*keys, "n_simulations", *db, *auth, *_ACTION_COLUMNS, *resp, *term, "termination_infrastructure_error",
               *crit.columns[len(keys):], "agent_errors", "user_errors"]  # fmt: skip
    counts = [c for c in columns[len(keys):] if c not in _ACCURACY]
    return (
        infra.join(counted, on=keys, how="left", nulls_equal=True)
        .join(crit.lazy(), on=keys, how="left", nulls_equal=True)
        .join(tot.lazy(), on=keys, how="left", nulls_equal=True)
        .with_columns(**_ACCURACY)
        .with_columns([pl.col(c).fill_null(0).cast(pl.Int64) for c in counts])
        .select(columns)
        .sort(keys, nulls_last=True)
        .collect()
    )

"""Which simulations to look at: the outcome / task / termination filter of the trials frame.

One filter for every entry point that narrows the simulations before showing them (the HTML viewer of
:mod:`tauk.html`, ``tauk summary --failed / --task / --termination``), with the words that name it in a header.

``failed``: ``True`` keeps the failed simulations, ``False`` the passed ones, ``None`` both. A simulation fails when
its recorded reward is not 1 (within :data:`tauk.conventions.SUCCESS_TOL`); a null reward is a failure, so
infrastructure errors count as failed here whatever the ``infra=`` convention of the statistics.

Examples
--------
>>> import tauk
>>> from tauk.io.frames.select import select_trials, selection_label
>>> trials = tauk.load("data/baseline_airline.json").trials
>>> select_trials(trials, failed=True, termination="max_steps").height
6
>>> selection_label(failed=True, termination="max_steps")
'failed simulations only; termination max_steps'
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tauk.conventions import TERMINATION_REASONS, success_expr
from tauk.errors import TaukError

__all__ = ["select_trials", "selection_label", "TERMINATION_CHOICES"]

TERMINATION_CHOICES: tuple[str, ...] = TERMINATION_REASONS
"""The termination reasons a filter offers (every reason τ²-bench has written; a file's other values are accepted
too when present)."""


def _values(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [str(value)] if isinstance(value, str | int) else [str(v) for v in value]


def _shown(values: Sequence[str], limit: int = 20) -> str:
    return ", ".join(values[:limit]) + (f", … ({len(values)} in all)" if len(values) > limit else "")


def select_trials(
    trials: pl.DataFrame,
    *,
    failed: bool | None = None,
    task: str | Sequence[str] | None = None,
    termination: str | Sequence[str] | None = None,
) -> pl.DataFrame:
    """The rows of ``trials`` (a trials frame) kept by the filter (see the module docs).

    ``task``: task id(s), compared as text; an id no simulation has is a :class:`tauk.TaukError` naming the ids
    there are. ``termination``: termination reason(s); a reason that is neither a known one
    (:data:`TERMINATION_CHOICES`) nor recorded is an error too (a known reason no simulation ended with keeps
    nothing).

    >>> import polars as pl
    >>> t = pl.DataFrame({"task_id": ["1", "2"], "reward": [1.0, 0.0], "termination_reason": ["user_stop"] * 2})
    >>> select_trials(t, failed=True)["task_id"].to_list(), select_trials(t, task="1", failed=False).height
    (['2'], 1)
    """
    if failed is not None and not isinstance(failed, bool):
        raise TaukError(f"failed must be True, False or None, got {failed!r}")
    keep = pl.lit(True)
    if failed is not None:
        if "reward" not in trials.columns:
            raise TaukError("failed= needs the reward column of the trials")
        ok = success_expr("reward")
        keep = keep & (~ok if failed else ok)
    tasks = _values(task)
    if tasks is not None:
        present = sorted(set(trials["task_id"].cast(pl.String).drop_nulls().to_list()),
                         key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s))  # fmt: skip
        missing = [t for t in tasks if t not in set(present)]
        if missing:
            raise TaukError(f"task {_shown(missing)} not found; the simulations' task ids are: {_shown(present)}")
        keep = keep & pl.col("task_id").cast(pl.String).is_in(tasks)
    reasons = _values(termination)
    if reasons is not None:
        col = "termination_reason"
        present = set(trials[col].drop_nulls().to_list()) if col in trials.columns else set()
        unknown = [r for r in reasons if r not in present and r not in TERMINATION_CHOICES]
        if unknown:
            have = sorted(present | set(TERMINATION_CHOICES))
            raise TaukError(f"termination {_shown(unknown)} is not a termination reason; choose from {_shown(have)}")
        keep = keep & (pl.col(col).is_in(reasons).fill_null(False) if col in trials.columns else pl.lit(False))
    return trials.filter(keep)


def selection_label(
    *,
    failed: bool | None = None,
    task: str | Sequence[str] | None = None,
    termination: str | Sequence[str] | None = None,
) -> str | None:
    """The filter in words, for a header or a note (None when it keeps everything).

    >>> selection_label(task=["3", "7"]), selection_label()
    ('tasks 3, 7', None)
    """
    parts = []
    if failed is not None:
        parts.append("failed simulations only" if failed else "passed simulations only")
    tasks = _values(task)
    if tasks:
        parts.append(("task " if len(tasks) == 1 else "tasks ") + _shown(tasks))
    reasons = _values(termination)
    if reasons:
        parts.append("termination " + " or ".join(reasons))
    return "; ".join(parts) or None

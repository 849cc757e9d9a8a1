"""The ``runs`` frame: one row per results file or directory (contract: :data:`tauk.io.columns.RUNS`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import polars as pl

from tauk.conventions import COMPONENTS, DEFAULT_REWARD_BASIS, DOMAIN_ORDER, INFRA_REASON
from tauk.errors import TaukError
from tauk.io.columns import RUNS
from tauk.io.frames._build import new_columns, to_frame, to_int
from tauk.io.read import RunData

__all__ = ["build_runs", "run_agent", "run_domain", "run_setup", "runs_where"]


def run_agent(run: RunData, override: str | None) -> str | None:
    """The agent label of a run: ``override``, else ``agent_info.llm``, else ``agent_info.implementation``.

    Wrappers use their ``model`` (else ``agent``); τ-bench files the part of the file name before the domain.

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> run_agent(run, None), run_agent(run, "mine")
    ('baseline', 'mine')
    """
    if override:
        return override
    if run.format == "taubench":
        return _taubench_name(run)[0]
    if run.format == "tau2-wrapper":
        return run.wrapper.get("model") or run.wrapper.get("agent")
    ai = run.info.agent_info if run.info else None
    return (ai.llm or ai.implementation) if ai else None


def run_domain(run: RunData) -> str | None:
    """The domain of a run: ``environment_info.domain_name`` (wrapper: ``domain``; τ-bench: from the file name).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run_domain(read_source(Path("data/baseline_retail.json"), True, LoadReport()))
    'retail'
    """
    if run.format == "taubench":
        return _taubench_name(run)[1]
    if run.format == "tau2-wrapper":
        return run.wrapper.get("domain")
    env = run.info.environment_info if run.info else None
    return env.domain_name if env else None


def _taubench_name(run: RunData) -> tuple[str, str | None]:
    """(agent, domain) from a τ-bench file name: the first known domain it names, and what precedes it."""
    stem = run.path.stem
    for d in DOMAIN_ORDER:
        m = re.search(rf"(^|[_\-.]){d}([_\-.]|$)", stem)
        if m:
            agent = stem[: m.start()].strip("_-.") or stem
            return agent, d
    return stem, None


def run_setup(run: RunData, domain: str | None, agent_impl: str | None, user_impl: str | None,
              user_model: str | None) -> str:
    """The setup of a run: ``domain/mode/user model/reward bases`` — what must be equal for runs to be repeated
    trials of one experiment (the agent is what is compared). ``mode`` is ``solo`` for a solo agent or a dummy
    user, else the simulations' own ``mode`` (voice runs), else ``normal``; the reward bases are those of the run's
    task definitions (τ-bench: DB×COMMUNICATE).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> run_setup(run, "retail", "llm_agent", "user_simulator", "gpt-4.1")
    'retail/normal/gpt-4.1/DB×ACTION×COMMUNICATE, DB×COMMUNICATE'
    """
    if "solo" in (agent_impl or "") or user_impl == "dummy_user":
        mode = "solo"
    else:
        modes = {s.mode for s in run.simulations} if run.format != "taubench" else {None}
        mode = modes.pop() if len(modes) == 1 and None not in modes else "normal"
    if run.format == "taubench" or not run.tasks:
        recorded = {tuple(s.reward_info.reward_basis) for s in run.simulations
                    if s.reward_info is not None and s.reward_info.reward_basis}  # fmt: skip
        bases = recorded or {DEFAULT_REWARD_BASIS}
    else:
        bases = {tuple(_basis(t)) for t in run.tasks}
    order = {c: i for i, c in enumerate(COMPONENTS)}
    text = ", ".join(sorted("×".join(sorted(b, key=lambda c: order.get(c, 99))) for b in bases))
    return f"{domain or '?'}/{mode}/{user_model or '?'}/{text}"


def _basis(task) -> tuple[str, ...]:
    ec = task.evaluation_criteria
    return tuple(ec.reward_basis) if ec is not None and ec.reward_basis is not None else DEFAULT_REWARD_BASIS


def _taubench_trials(run: RunData) -> int:
    return len({r.trial for r in run.tb_records})


def build_runs(runs: Sequence[RunData], run_ids: Sequence[str], agents: Sequence[str | None]) -> pl.DataFrame:
    """The ``runs`` frame.

    Parameters
    ----------
    runs : sequence of RunData
        The decoded sources.
    run_ids : sequence of str
        Their run ids.
    agents : sequence of str or None
        Their agent labels (see :func:`run_agent`).

    Returns
    -------
    polars.DataFrame
        One row per run, columns of :data:`tauk.io.columns.RUNS`.

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> build_runs([run], ["r"], ["baseline"]).select("run_id", "agent", "domain", "n_simulations").row(0)
    ('r', 'baseline', 'retail', 100)
    """
    run_cols = new_columns(RUNS)
    for run, rid, agent in zip(runs, run_ids, agents):
        info = run.info
        run_cols["run_id"].append(rid)
        run_cols["source"].append(str(run.path))
        run_cols["format"].append(run.format)
        run_cols["format_version"].append(run.format_version)
        run_cols["agent"].append(agent)
        run_cols["agent_implementation"].append(info.agent_info.implementation if info and info.agent_info else None)
        run_cols["user_model"].append(info.user_info.llm if info and info.user_info else None)
        run_cols["user_implementation"].append(info.user_info.implementation if info and info.user_info else None)
        domain = run_domain(run)
        run_cols["domain"].append(domain)
        run_cols["setup"].append(run_setup(run, domain, run_cols["agent_implementation"][-1],
                                           run_cols["user_implementation"][-1], run_cols["user_model"][-1]))
        if run.format == "taubench":
            run_cols["num_trials"].append(_taubench_trials(run))
        else:
            run_cols["num_trials"].append(to_int(info.num_trials) if info else None)
        run_cols["max_steps"].append(to_int(info.max_steps) if info else None)
        run_cols["max_errors"].append(to_int(info.max_errors) if info else None)
        run_cols["seed"].append(to_int(info.seed) if info else None)
        run_cols["git_commit"].append(info.git_commit if info else None)
        run_cols["timestamp"].append(run.timestamp)
        if run.format == "taubench":
            run_cols["n_simulations"].append(len(run.tb_records))
            run_cols["n_tasks"].append(len({str(r.task_id) for r in run.tb_records}))
            run_cols["n_infra_errors"].append(0)
        else:
            run_cols["n_simulations"].append(len(run.simulations))
            run_cols["n_tasks"].append(len(run.tasks))
            run_cols["n_infra_errors"].append(sum(1 for s in run.simulations if s.termination_reason == INFRA_REASON))
    return to_frame(run_cols, RUNS)


def runs_where(runs: pl.DataFrame, columns: dict[str, Any], *, require_present: bool) -> pl.Expr:
    """The condition keeping the runs whose ``columns`` (run-level columns → a value or values; None: any) match,
    compared as text. ``require_present``: a value no run has is a :class:`tauk.TaukError` (naming what there is).

    Examples
    --------
    >>> runs = pl.DataFrame({"agent": ["a", "b"], "domain": ["x", "x"]})
    >>> runs.filter(runs_where(runs, {"agent": ["a"], "domain": None}, require_present=True))["agent"].to_list()
    ['a']
    """
    keep = pl.lit(True)
    for col, value in columns.items():
        if value is None:
            continue
        if col not in runs.columns:
            raise TaukError(f"cannot filter on {col!r}: not a column of runs ({', '.join(runs.columns)})")
        values = [value] if isinstance(value, str) else list(value)
        if require_present:
            present = set(runs[col].drop_nulls().cast(pl.String).to_list())
            missing = [v for v in values if str(v) not in present]
            if missing:
                raise TaukError(f"{col} {missing} not found; have {sorted(present)}")
        keep = keep & pl.col(col).cast(pl.String).is_in([str(v) for v in values])
    return keep

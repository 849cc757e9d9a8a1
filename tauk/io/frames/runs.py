"""The ``runs`` frame: one row per results file or directory (contract: :data:`tauk.io.columns.RUNS`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import msgspec
import polars as pl

from tauk.conventions import COMPONENTS, DEFAULT_REWARD_BASIS, DOMAIN_ORDER, INFRA_REASON
from tauk.errors import TaukError
from tauk.io.columns import RUNS
from tauk.io.frames._build import canonical_json, new_columns, to_frame, to_int
from tauk.io.read import RunData

__all__ = ["SETUP_FIELDS", "build_runs", "pooling_note", "run_agent", "run_domain", "run_setup", "runs_where",
           "setup_differences", "setup_identity", "setup_legend"]

SETUP_FIELDS: tuple[str, ...] = (
    "domain", "mode", "user_model", "user_implementation", "reward_bases", "evaluator_version", "retrieval_config",
    "retrieval_config_kwargs", "speech_complexity", "audio_settings", "text_streaming_config", "user_persona",
)  # fmt: skip
"""The columns of ``runs`` whose values make runs distinct experiments (the ``setup``): runs are repeated trials
of one experiment only when every one of them is equal. The first five are spelled out in the label, the rest
(every one null on τ-bench files) are summed up by its ``#key``."""

_LABELLED = ("domain", "mode", "user_model", "reward_bases")
_KEYED = tuple(f for f in SETUP_FIELDS if f not in _LABELLED)

# audio_native_config keys that name the agent itself (what is compared), not the experiment's conditions
_AGENT_AUDIO_KEYS = frozenset({"provider", "model", "reasoning_effort", "cascaded_config_name"})
# upstream's Info.text_streaming_config default: a run that records it equals one that predates the field
_DEFAULT_STREAMING = {"chunk_by": "words", "chunk_size": 1}
_ANY = msgspec.json.Decoder()


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
    if run.format in ("taubench", "tau2-list"):
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
    if run.format in ("taubench", "tau2-list"):
        return _taubench_name(run)[1]
    if run.format == "tau2-wrapper":
        return run.wrapper.get("domain")
    env = run.info.environment_info if run.info else None
    return env.domain_name if env else None


def _taubench_name(run: RunData) -> tuple[str, str | None]:
    """(agent, domain) from a τ-bench file's (or a bare simulation list's) name: the first known domain it names, and
    what precedes it."""
    stem = run.path.stem
    for d in DOMAIN_ORDER:
        m = re.search(rf"(^|[_\-.]){d}([_\-.]|$)", stem)
        if m:
            agent = stem[: m.start()].strip("_-.") or stem
            return agent, d
    return stem, None


def _json_value(raw: Any) -> Any:
    """A value kept undecoded (``msgspec.Raw``) as Python (None when absent, null or unreadable)."""
    if raw is None:
        return None
    b = bytes(raw)
    if not b or b == b"null":
        return None
    try:
        return _ANY.decode(b)
    except msgspec.DecodeError:
        return None


def _text(value: Any) -> str | None:
    """A setting as text: a string as is, anything else as canonical JSON (None stays None)."""
    if value is None:
        return None
    return value if isinstance(value, str) else canonical_json(value)


def run_mode(run: RunData, agent_impl: str | None, user_impl: str | None) -> str:
    """The run's mode, spelled one way: ``solo`` (a solo agent or a dummy user), ``full_duplex`` (voice),
    ``normal`` (turn-based text: ``half_duplex`` or no ``mode``, which upstream reads as ``half_duplex``); other
    recorded modes as written, several joined by ``+``."""
    if "solo" in (agent_impl or "") or user_impl == "dummy_user":
        return "solo"
    if run.format == "taubench":
        return "normal"
    modes = {"normal" if m in (None, "half_duplex") else str(m) for m in {s.mode for s in run.simulations}}
    return "+".join(sorted(modes)) if modes else "normal"


def _reward_bases(run: RunData) -> str:
    if run.format == "taubench" or not run.tasks:
        recorded = {tuple(s.reward_info.reward_basis) for s in run.simulations
                    if s.reward_info is not None and s.reward_info.reward_basis}  # fmt: skip
        bases = recorded or {DEFAULT_REWARD_BASIS}
    else:
        bases = {tuple(_basis(t)) for t in run.tasks}
    order = {c: i for i, c in enumerate(COMPONENTS)}
    return ", ".join(sorted("×".join(sorted(b, key=lambda c: order.get(c, 99))) for b in bases))


def setup_identity(run: RunData, domain: str | None, agent_impl: str | None, user_impl: str | None,
                   user_model: str | None) -> dict[str, str | None]:  # fmt: skip
    """The values of :data:`SETUP_FIELDS` for one run, each spelled one way:

    * ``mode``: see :func:`run_mode` (``half_duplex`` = no mode = ``normal``);
    * ``reward_bases``: the bases of the run's task definitions (without: the recorded ones; τ-bench DB×COMMUNICATE);
    * ``evaluator_version``: ``info.git_commit`` — the τ²-bench code that ran and graded (a results file records no
      release number); another commit may change the user simulator, the tools, the tasks or the grader;
    * ``retrieval_config`` / ``retrieval_config_kwargs``: ``info.retrieval_config`` and its arguments (canonical
      JSON; banking_knowledge results are published per retrieval config);
    * ``speech_complexity``: ``info.speech_complexity`` (voice runs);
    * ``audio_settings``: ``info.audio_native_config`` as canonical JSON without the keys naming the agent itself
      (``provider``, ``model``, ``reasoning_effort``, ``cascaded_config_name``: that is what is compared);
    * ``text_streaming_config``: canonical JSON, null when absent or equal to upstream's default
      ``{"chunk_by": "words", "chunk_size": 1}``;
    * ``user_implementation`` (null for the usual ``user_simulator``, and for a solo run, whose mode says it) and
      ``user_persona`` (``info.user_info.persona_config``).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> ident = setup_identity(run, "retail", "llm_agent", "user_simulator", "gpt-4.1")
    >>> ident["mode"], ident["evaluator_version"], ident["retrieval_config"]
    ('normal', '2264ec3d5ae01798e8aee10ee5a63bd708a89e79', None)
    """
    info = run.info if run.format != "taubench" else None
    mode = run_mode(run, agent_impl, user_impl)
    audio = _json_value(info.audio_native_config) if info is not None else None
    if isinstance(audio, dict):
        audio = {k: v for k, v in audio.items() if k not in _AGENT_AUDIO_KEYS} or None
    streaming = _json_value(info.text_streaming_config) if info is not None else None
    if streaming == _DEFAULT_STREAMING:
        streaming = None
    persona = _json_value(info.user_info.persona_config) if info is not None and info.user_info else None
    user_impl_key = None if user_impl in (None, "user_simulator") or mode == "solo" else user_impl
    return {
        "domain": domain,
        "mode": mode,
        "user_model": user_model,
        "user_implementation": user_impl_key,
        "reward_bases": _reward_bases(run),
        "evaluator_version": (info.git_commit or None) if info is not None else None,
        "retrieval_config": _text(_json_value(info.retrieval_config)) if info is not None else None,
        "retrieval_config_kwargs": _text(_json_value(info.retrieval_config_kwargs)) if info is not None else None,
        "speech_complexity": _text(_json_value(info.speech_complexity)) if info is not None else None,
        "audio_settings": _text(audio),
        "text_streaming_config": _text(streaming),
        "user_persona": _text(persona),
    }


def setup_label(identity: dict[str, str | None]) -> str:
    """The ``setup`` label of an identity: ``domain/mode/user model/reward bases``, then ``#`` and six hex digits
    summing up the other fields (evaluator version, retrieval, speech, audio, streaming, user simulator) when any is
    recorded — the same fields always give the same key; :func:`setup_legend` spells it out.

    Examples
    --------
    >>> ident = dict.fromkeys(SETUP_FIELDS)
    >>> ident.update(domain="airline", mode="normal", user_model="gpt-4.1", reward_bases="DB×COMMUNICATE")
    >>> setup_label(ident)
    'airline/normal/gpt-4.1/DB×COMMUNICATE'
    >>> setup_label({**ident, "evaluator_version": "abc"}) != setup_label({**ident, "evaluator_version": "abd"})
    True
    """
    base = (f"{identity['domain'] or '?'}/{identity['mode']}/{identity['user_model'] or '?'}/"
            f"{identity['reward_bases']}")  # fmt: skip
    extras = {f: identity[f] for f in _KEYED if identity.get(f) is not None}
    if not extras:
        return base
    return f"{base} #{hashlib.sha1(canonical_json(extras).encode()).hexdigest()[:6]}"


def run_setup(run: RunData, domain: str | None, agent_impl: str | None, user_impl: str | None,
              user_model: str | None) -> str:
    """The setup of a run: what must be equal for runs to be repeated trials of one experiment (the agent is what
    is compared) — every field of :func:`setup_identity`, as the label of :func:`setup_label`
    (``domain/mode/user model/reward bases #key``).

    Examples
    --------
    >>> from pathlib import Path
    >>> from tauk.errors import LoadReport
    >>> from tauk.io.read import read_source
    >>> run = read_source(Path("data/baseline_retail.json"), True, LoadReport())
    >>> run_setup(run, "retail", "llm_agent", "user_simulator", "gpt-4.1")
    'retail/normal/gpt-4.1/DB×ACTION×COMMUNICATE, DB×COMMUNICATE #055b13'
    """
    return setup_label(setup_identity(run, domain, agent_impl, user_impl, user_model))


def setup_legend(runs: pl.DataFrame) -> pl.DataFrame:
    """One row per setup of a ``runs`` frame: ``setup`` and the value of every field of :data:`SETUP_FIELDS` (what its
    ``#key`` stands for), with ``n_runs``.

    Examples
    --------
    >>> import tauk
    >>> legend = setup_legend(tauk.load("data").runs)
    >>> legend.height, legend.select("domain", "mode", "evaluator_version", "n_runs").row(0)
    (2, ('airline', 'normal', '2264ec3d5ae01798e8aee10ee5a63bd708a89e79', 3))
    """
    fields = [f for f in SETUP_FIELDS if f in runs.columns]
    return (
        runs.group_by("setup", maintain_order=True)
        .agg(*[pl.col(f).first() for f in fields], n_runs=pl.len().cast(pl.Int64))
        .sort("setup")
    )


def setup_differences(frame: pl.DataFrame, setups: Sequence[str] | None = None) -> dict[str, list[str | None]]:
    """Which fields of :data:`SETUP_FIELDS` differ between ``setups`` (default: every setup of ``frame``), with
    their distinct values (sorted, null last). ``frame``: a ``runs`` frame, or any frame with ``setup`` and the
    identity columns (e.g. trials joined to runs on ``run_id``).

    Examples
    --------
    >>> runs = pl.DataFrame({"setup": ["a", "b", "b"], "domain": ["x", "x", "x"],
    ...                      "retrieval_config": ["bm25", None, None]})
    >>> setup_differences(runs)
    {'retrieval_config': ['bm25', None]}
    """
    if setups is not None:
        frame = frame.filter(pl.col("setup").is_in(list(setups)))
    out: dict[str, list[str | None]] = {}
    for f in SETUP_FIELDS:
        if f not in frame.columns:
            continue
        values = frame.get_column(f).cast(pl.String).unique().to_list()
        if len(values) > 1:
            out[f] = sorted(values, key=lambda v: (v is None, v or ""))
    return out


def pooling_note(frame: pl.DataFrame, setups: Sequence[str] | None = None, *, width: int = 40) -> str | None:
    """The sentence a result pooled over several setups (``pool_setups=True``) carries: which fields it pooled over
    and their values (each value cut to ``width`` characters); None when it pooled one setup. ``frame``: a ``runs``
    frame (or any frame with ``setup`` and the identity columns); a frame with ``setup`` alone (a trials frame) gets
    the setup labels listed instead.

    Examples
    --------
    >>> runs = pl.DataFrame({"setup": ["a", "b"], "evaluator_version": ["1a2b3c4d", "5e6f7a8b"],
    ...                      "speech_complexity": ["regular", "control"]})
    >>> print(pooling_note(runs))
    pooled over 2 setups that differ in evaluator_version (1a2b3c4d | 5e6f7a8b), speech_complexity (control | regular)
    >>> print(pooling_note(runs.select("setup")))
    pooled over 2 setups: a | b
    """
    rows = frame.filter(pl.col("setup").is_in(list(setups))) if setups is not None else frame
    labels = sorted(rows.get_column("setup").cast(pl.String).drop_nulls().unique().to_list())
    if len(labels) < 2:
        return None
    if not any(f in frame.columns for f in SETUP_FIELDS):
        return f"pooled over {len(labels)} setups: {' | '.join(labels)}"
    parts = []
    for f, values in setup_differences(rows).items():
        shown = [("null" if v is None else (v if len(v) <= width else v[: width - 1] + "…")) for v in values]
        parts.append(f"{f} ({' | '.join(shown)})")
    return f"pooled over {len(labels)} setups that differ in {', '.join(parts)}"


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
        ident = setup_identity(run, domain, run_cols["agent_implementation"][-1], run_cols["user_implementation"][-1],
                               run_cols["user_model"][-1])  # fmt: skip
        run_cols["domain"].append(domain)
        run_cols["setup"].append(setup_label(ident))
        for f in SETUP_FIELDS:
            if f not in ("domain", "user_model", "user_implementation"):
                run_cols[f].append(ident[f])
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

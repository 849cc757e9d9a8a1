"""Checks on a decoded run: numbers written as text, duplicate simulation ids, tool calls written as a string."""

from __future__ import annotations

import ast
import itertools
import json
import math
import unicodedata
import warnings
from typing import Any

import msgspec

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io import structs as S
from tauk.io.rundata import RunData

__all__ = ["check_ids", "check_numbers", "check_duplicates", "check_rewards", "check_stringified", "check_taubench_tasks",
           "check_tasks", "check_termination_reasons", "check_trial_numbers", "parse_tool_calls_string"]


def parse_tool_calls_string(text: str) -> list[dict] | None:
    """Parse a tool-calls list written as a Python repr (``"[{'id': ..., 'arguments': {...}}]"``) or JSON.

    Only literals are accepted (``ast.literal_eval``, never ``eval``); returns None for ``"None"``/empty and raises
    ValueError for anything that is not a list of dicts.
    """
    s = text.strip()
    if s in ("", "None", "null", "[]"):
        return None if s != "[]" else []
    try:
        value = msgspec.json.decode(s)
    except msgspec.DecodeError:
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
            raise ValueError(f"tool_calls string is neither JSON nor a Python literal: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"tool_calls string does not hold a list of objects (got {type(value).__name__})")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:  # a set, bytes, complex, a non-string key ...
        raise ValueError(f"tool_calls string holds a value JSON cannot represent: {exc}") from None
    return value


_FLOATS = ("agent_cost", "user_cost", "duration")
_INTS = ("trial", "seed")


def _where(run: RunData, src: Any, name: str) -> str:
    return f"{run.sims_path}[{src}].{name}" if isinstance(src, int) else f"{src}: $.{name}"


_INT64 = (-(1 << 63), (1 << 63) - 1)
_INFO_INTS = ("num_trials", "max_steps", "max_errors", "seed")


def _coerce(value: Any, integer: bool) -> tuple[Any, str | None]:
    """(the number a value stands for, or None; what is wrong with it, or None): a string is read as the number it
    writes; an integer field takes a whole float (``1.0``, as τ²-bench's models do) and refuses a fraction; an
    integer outside 64 bits (which no frame column holds) is ``"big"``, a non-finite float ``"nan"``."""
    if type(value) is str:
        text = value.strip()
        try:
            number: Any = float(text)
        except ValueError:
            return None, f"{value!r} is not a number"
        if integer:
            try:
                number = int(text)  # exact for long digit strings, where float() would round
            except ValueError:
                pass
    else:
        number = value
    if integer:
        if type(number) is float:
            if not math.isfinite(number) or number != int(number):
                return None, f"{value!r} is not an integer"
            number = int(number)
        if not _INT64[0] <= number <= _INT64[1]:
            return None, "big"
        return number, None
    if not math.isfinite(number):
        return None, "nan"
    return number, None


def check_numbers(run: RunData, strict: bool, report: LoadReport) -> None:
    """Numbers written as strings (``"0.05"``, ``"1"``) are read as numbers (a reward too: :func:`_text_rewards`),
    and whole floats where an integer belongs (a trial ``1.0``, as τ²-bench's models accept them) as integers; one that is not a number (``"abc"``,
    ``"$0.05"``) or not an integer where one belongs (a trial ``"1.9"`` or ``1.5``) raises a :class:`LoadError`
    naming its place under strict loading, else becomes null with a report entry. ``"nan"``/``"inf"`` costs and
    durations become null (left out of the means), and so do integers beyond 64 bits (a seed of 2**70: valid
    upstream, but no integer column holds it); both are counted in the report."""
    if run.format != "taubench":
        _text_rewards(run, strict, report)
    items = run.tb_records if run.format == "taubench" else run.simulations
    fields = (("trial", True),) if run.format == "taubench" else (*((f, False) for f in _FLOATS),
                                                                      *((f, True) for f in _INTS))  # fmt: skip
    places: Any = ((item, name, integer, src) for item, src in zip(items, run.sim_sources)
                   for name, integer in fields)  # fmt: skip
    if run.info is not None:
        head = "results.json: $.info" if run.format == "tau2-dir" else "$.info"
        places = itertools.chain(places, ((run.info, name, True, f"{head}.{name}") for name in _INFO_INTS))
    non_finite: list[str] = []
    big: list[str] = []
    for item, name, integer, src in places:
        value = getattr(item, name)
        if value is None or (type(value) is int and _INT64[0] <= value <= _INT64[1]) or (
                type(value) is float and not integer and math.isfinite(value)):  # fmt: skip
            continue
        where = src if item is run.info else _where(run, src, name)
        number, problem = _coerce(value, integer)
        setattr(item, name, number)
        if problem == "nan":
            non_finite.append(where)
        elif problem == "big":
            big.append(where)
        elif problem is not None:
            if strict:
                raise LoadError(str(run.path), where, problem)
            report.add(str(run.path), where, "invalid_number", f"{problem}; read as null")
            warnings.warn(f"{run.path} at {where}: {problem}; read as null", LoadWarning, stacklevel=5)
    if non_finite:
        msg = f"{len(non_finite)} value(s) written as NaN or infinity read as null (left out of the means)"
        report.add(str(run.path), non_finite[0], "non_finite_number", msg)
        warnings.warn(f"{run.path}: {msg}, first at {non_finite[0]}", LoadWarning, stacklevel=5)
    if big:
        msg = f"{len(big)} integer(s) beyond 64 bits read as null (no integer column holds them)"
        report.add(str(run.path), big[0], "integer_out_of_range", msg)
        warnings.warn(f"{run.path}: {msg}, first at {big[0]}", LoadWarning, stacklevel=5)


def _text_rewards(run: RunData, strict: bool, report: LoadReport) -> None:
    """A reward written as text (``"1.0"``, which τ²-bench's models read as the number) is read as the number; one
    that is not a finite number (``"high"``, ``"nan"``) is a :class:`LoadError` naming its place under strict
    loading, else its simulation is skipped and counted (``invalid_simulation``), as a reward of the wrong type is."""
    keep, keep_src = [], []
    for sim, src in zip(run.simulations, run.sim_sources):
        ri = sim.reward_info
        if ri is not None and type(ri.reward) is str:
            number, problem = _coerce(ri.reward, False)
            if problem is not None:
                where = _where(run, src, "reward_info.reward")
                problem = f"{ri.reward!r} is not a finite number" if problem == "nan" else problem
                if strict:
                    raise LoadError(str(run.path), where, f"reward {problem}")
                report.add(str(run.path), where, "invalid_simulation", f"reward {problem}; simulation skipped",
                           skipped=1)  # fmt: skip
                continue
            ri.reward = number
        keep.append(sim)
        keep_src.append(src)
    if len(keep) != len(run.simulations):
        run.simulations, run.sim_sources = keep, keep_src


def check_duplicates(run: RunData, strict: bool, report: LoadReport) -> None:
    seen: dict[str, Any] = {}
    keep_sims, keep_src = [], []
    for i, sim in enumerate(run.simulations):
        sid = str(sim.id)
        src = run.sim_sources[i]
        if sid in seen:
            where = _where(run, src, "id")
            msg = f"duplicate simulation id {sid!r} (first at {_where(run, seen[sid], 'id')})"
            if strict:
                raise LoadError(str(run.path), where, msg)
            report.add(str(run.path), where, "duplicate_simulation_id", msg + "; later copy skipped", skipped=1)
            continue
        seen[sid] = src
        keep_sims.append(sim)
        keep_src.append(src)
    run.simulations, run.sim_sources = keep_sims, keep_src
    _report_repeated_trials(run, report)


def _report_repeated_trials(run: RunData, report: LoadReport) -> None:
    """One trial index of one task recorded by several simulations (different ids): each is counted as a trial, as
    τ²-bench's own metrics count them, and the load report says so, since a re-run appended to a results file or a
    numbering slip both look like this."""
    first: dict[tuple[str, Any], Any] = {}
    for sim, src in zip(run.simulations, run.sim_sources):
        trial = getattr(sim, "trial", None)
        if trial is None or isinstance(trial, bool) or not isinstance(trial, int):
            continue
        key = (str(sim.task_id), trial)
        if key not in first:
            first[key] = src
            continue
        where = _where(run, src, "trial")
        msg = (f"task {key[0]!r} trial {trial} is also recorded at {_where(run, first[key], 'trial')} under another "
               "simulation id; both are counted as trials, as τ²-bench counts them")  # fmt: skip
        report.add(str(run.path), where, "repeated_trial", msg)
        warnings.warn(f"{run.path} at {where}: {msg}", LoadWarning, stacklevel=5)


def check_stringified(run: RunData, strict: bool, report: LoadReport) -> None:
    """Tool calls written as a string (a Python repr): count them, and check that each parses as a literal."""
    null = S.NULL
    n = 0
    for sim, src in zip(run.simulations, run.sim_sources):
        for j, tc in enumerate([m.tool_calls for m in sim.messages or ()]):
            if tc == null or not len(tc) or memoryview(tc)[0] != 0x22:  # '"': a string where a list belongs
                continue
            n += 1
            try:
                parse_tool_calls_string(msgspec.json.decode(tc, type=str))
            except ValueError as exc:
                where = _where(run, src, f"messages[{j}].tool_calls")
                if strict:
                    raise LoadError(str(run.path), where, str(exc)) from None
                report.add(str(run.path), where, "unparsable_tool_calls", f"{exc}; these tool calls are skipped")
                warnings.warn(f"{run.path} at {where}: {exc}; these tool calls are skipped", LoadWarning,
                              stacklevel=5)  # fmt: skip
    if n:
        run.stringified_tool_calls = True
        msg = (
            f"{n} message(s) carry tool_calls as a string (Python repr); parsed as literals, never evaluated; "
            "string 'None' contents read as null"
        )
        report.add(str(run.path), f"{run.sims_path}[*].messages[*].tool_calls", "stringified_tool_calls", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)


def check_trial_numbers(run: RunData, strict: bool, report: LoadReport) -> None:
    """τ-bench trial numbers, which pass^k counts a run's trials by (N = the distinct indices of the file).

    A record without one (missing, null, or not a number) is refused by name under strict loading — numbering it is a
    guess, and counting its success against an N it is not part of would give a task more successes than trials.
    Lenient loading numbers it by its position among its task's records: the smallest index its task's numbered
    records leave free, in file order, with one report line. Either way every record then has a number, so each
    task's successes are counted over records N counts. Tasks with fewer records than N (a missing trial counts as a
    failure, τ-bench's rule) and indices that are not 0 … N−1 (renumbered records) are reported, not silent.
    """
    recs, srcs = run.tb_records, run.sim_sources
    bare = [i for i, r in enumerate(recs) if r.trial is None]
    if bare:
        where = f"$[{srcs[bare[0]]}].trial"
        if strict:
            raise LoadError(str(run.path), where, f"no trial number ({len(bare)} of {len(recs)} records have none): "
                            "pass^k counts a run's trials by these numbers; load leniently (--lenient) to number "
                            "them by their position among their task's records")  # fmt: skip
        used: dict[str, set[int]] = {}
        for r in recs:
            if r.trial is not None:
                used.setdefault(str(r.task_id), set()).add(int(r.trial))
        for i in bare:
            taken = used.setdefault(str(recs[i].task_id), set())
            free = 0
            while free in taken:
                free += 1
            recs[i].trial = free
            taken.add(free)
        msg = (f"{len(bare)} record(s) without a trial number, numbered by their position among their task's records "
               "(the smallest index the task's numbered records leave free)")  # fmt: skip
        report.add(str(run.path), where, "trial_numbered", msg)
        warnings.warn(f"{run.path}: {msg}, first at {where}", LoadWarning, stacklevel=5)
    if not recs:
        return
    per_task: dict[str, int] = {}
    for r in recs:
        per_task[str(r.task_id)] = per_task.get(str(r.task_id), 0) + 1
    indices = sorted({int(r.trial) for r in recs})
    n = len(indices)
    short = {t: c for t, c in per_task.items() if c < n}
    if short:
        missing = sum(n - c for c in short.values())
        msg = (f"{len(short)} of {len(per_task)} task(s) have fewer records than the file's N = {n} trial indices "
               f"({missing} trial(s) missing, e.g. task {next(iter(short))!r}): τ-bench's pass^k counts a missing "
               "trial as a failure")  # fmt: skip
        report.add(str(run.path), None, "missing_trials", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)
    if indices != list(range(n)):
        shown = ", ".join(map(str, indices[:8])) + (", …" if n > 8 else "")
        msg = (f"trial indices are not 0 … N−1 ({shown}): N = {n} distinct indices, each counted as a trial of every "
               "task (renumbered records?)")  # fmt: skip
        report.add(str(run.path), None, "trial_indices", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)


_REWARD_TOL = 1e-6


def _rewardless(run: RunData, report: LoadReport) -> None:
    """``reward_info`` objects without a ``reward`` (τ²-bench's models require one). One that records nothing at all
    (``{}``, or every field null or empty) is read as a null ``reward_info`` — not graded, a failure in pass^k —
    since re-scoring would otherwise take its absent checks for passed ones (DB absent ⇒ 1) and invent a success;
    one that records checks is kept as recorded. Each kind is one report line and a warning, in both modes."""
    empty: list[str] = []
    bare: list[str] = []
    for sim, src in zip(run.simulations, run.sim_sources):
        ri = sim.reward_info
        if ri is None or ri.reward is not None:
            continue
        if all(getattr(ri, f) in (None, [], {}) for f in ri.__struct_fields__):
            sim.reward_info = None
            empty.append(_where(run, src, "reward_info"))
        else:
            bare.append(_where(run, src, "reward_info.reward"))
    if empty:
        msg = (f"{len(empty)} reward_info object(s) recording nothing (no reward, no check), e.g. at {empty[0]}: read "
               "as null (not graded: a failure in pass^k, left out of the average reward)")  # fmt: skip
        report.add(str(run.path), empty[0], "empty_reward_info", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=6)
    if bare:
        msg = (f"{len(bare)} reward_info object(s) without a reward (τ²-bench requires one), e.g. at {bare[0]}: kept "
               "as recorded, no recorded reward; re-scoring reads their checks")  # fmt: skip
        report.add(str(run.path), bare[0], "reward_info_without_reward", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=6)


def check_rewards(run: RunData, strict: bool, report: LoadReport) -> None:
    """Rewards outside [0, 1] (beyond the success tolerance): kept as recorded — SPEC.md defines success as a
    reward within 1e-6 of 1 and says nothing else of them — so they count in the average reward and are failures in
    pass^k; one report line and a warning say how many and where, in both modes."""
    if run.format == "taubench":
        pairs = ((r.reward, f"$[{src}].reward") for r, src in zip(run.tb_records, run.sim_sources))
        missing = [f"$[{src}].reward" for r, src in zip(run.tb_records, run.sim_sources) if r.reward is None]
        if missing:  # τ-bench writes a reward on every record
            msg = (f"{len(missing)} record(s) without a reward (e.g. at {missing[0]}): no recorded reward (a failure "
                   "in pass^k, left out of the average reward)")  # fmt: skip
            report.add(str(run.path), missing[0], "missing_reward", msg)
            warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)
    else:
        _rewardless(run, report)
        pairs = ((s.reward_info.reward if s.reward_info is not None else None, _where(run, src, "reward_info.reward"))
                 for s, src in zip(run.simulations, run.sim_sources))  # fmt: skip
    out = [(v, w) for v, w in pairs if v is not None and not -_REWARD_TOL <= v <= 1 + _REWARD_TOL]
    if out:
        v, where = out[0]
        msg = (f"{len(out)} reward(s) outside [0, 1] (e.g. {v!r} at {where}): kept as recorded — they count in the "
               "average reward and are failures in pass^k (success is a reward within 1e-6 of 1)")  # fmt: skip
        report.add(str(run.path), where, "reward_out_of_range", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)


_INFRA_ALIASES = {"infra_error", "infra", "infrastructure", "infrastructure_failure", "infra_failure"}


def _known_reason(value: str) -> str | None:
    """The upstream spelling of a termination reason written another way (``TerminationReason.USER_STOP``,
    ``USER_STOP``, ``user-stop``, ``infra_error``), or None."""
    from tauk.conventions import INFRA_REASON, TERMINATION_REASONS

    text = value.strip()
    if "." in text:
        text = text.rsplit(".", 1)[1]  # an enum's repr
    text = text.lower().replace("-", "_").replace(" ", "_")
    if text in TERMINATION_REASONS:
        return text
    return INFRA_REASON if text in _INFRA_ALIASES else None


def check_termination_reasons(run: RunData, strict: bool, report: LoadReport) -> None:
    """Termination reasons that are not upstream's spellings: an obvious respelling of a known reason (an enum's
    repr, upper case, ``infra_error`` …) is read as that reason — so an infrastructure error is one, dropped or
    failed by the ``infra=`` rule — and counted in a report line; an unknown reason is kept as written (it fails the
    termination gate when re-scored) and reported; so is a missing (null) reason, which τ²-bench's loader refuses and
    the gate fails. A warning either way, in both modes."""
    from tauk.conventions import TERMINATION_REASONS

    mapped: dict[tuple[str, str], int] = {}
    unknown: dict[str, int] = {}
    first: dict[str, str] = {}
    missing: list[str] = []
    for sim, src in zip(run.simulations, run.sim_sources):
        value = sim.termination_reason
        if value is None:
            missing.append(_where(run, src, "termination_reason"))
            continue
        if value in TERMINATION_REASONS:
            continue
        known = _known_reason(value)
        if known is not None:
            sim.termination_reason = known
            mapped[(value, known)] = mapped.get((value, known), 0) + 1
        else:
            unknown[value] = unknown.get(value, 0) + 1
        first.setdefault(value, _where(run, src, "termination_reason"))
    if mapped:
        shown = "; ".join(f"{old!r} → {new!r} ({n})" for (old, new), n in mapped.items())
        msg = f"termination reasons not spelled as τ²-bench writes them, read as its own: {shown}"
        report.add(str(run.path), first[next(iter(mapped))[0]], "termination_reason_respelled", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)
    if unknown:
        shown = "; ".join(f"{v!r} ({n})" for v, n in unknown.items())
        msg = (f"unknown termination reasons kept as written: {shown} — not infrastructure errors, and they fail the "
               "termination gate when re-scored")  # fmt: skip
        report.add(str(run.path), first[next(iter(unknown))], "unknown_termination_reason", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)
    if missing:  # τ²-bench's SimulationRun requires one (its loader refuses the file)
        msg = (f"{len(missing)} simulation(s) record no termination_reason (τ²-bench's model requires one): they fail "
               "the termination gate when re-scored (reward 0, failure 'premature:unknown')")  # fmt: skip
        report.add(str(run.path), missing[0], "missing_termination_reason", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)


def _definition(task: S.Task) -> Any:
    """A task definition as plain values (its undecoded parts decoded), to tell copies from different definitions
    whatever the spacing or key order of the JSON they were written in."""
    def plain(raw: Any) -> Any:
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:
            return bytes(raw)

    return (plain(task.description), plain(task.user_scenario), plain(task.initial_state),
            plain(msgspec.json.encode(task.evaluation_criteria)))  # fmt: skip


def definitions_by_id(tasks: list[S.Task]) -> tuple[dict[str, int], list[S.Task], list[int], list[tuple[int, int, str]]]:
    """Task definitions grouped by id: the position of each id's first definition, those first definitions (in
    order), the positions of word-for-word repeats, and (position, first position, id) of each definition that
    reuses an id with a different definition."""
    first: dict[str, int] = {}
    keep: list[S.Task] = []
    copies: list[int] = []
    differing: list[tuple[int, int, str]] = []
    for i, task in enumerate(tasks):
        tid = str(task.id)
        if tid not in first:
            first[tid] = i
            keep.append(task)
        elif _definition(task) == _definition(tasks[first[tid]]):
            copies.append(i)
        else:
            differing.append((i, first[tid], tid))
    return first, keep, copies, differing


def _check_criteria(run: RunData, tasks_file: str, report: LoadReport) -> None:
    """Evaluation criteria spelled in ways τ²-bench's task model refuses but tauk reads: a gold action without
    ``arguments`` (or null: read as ``{}``) and reward-basis names not in upper case (read upper-cased). Each is a
    report line and a warning, in both modes: the reward is tauk's reading, upstream would not grade the file."""
    from tauk.conventions import COMPONENTS

    no_args: list[str] = []
    respelled: dict[str, str] = {}
    where_basis: list[str] = []
    null_basis: list[str] = []
    for i, task in enumerate(run.tasks):
        ec = task.evaluation_criteria
        if ec is None:
            continue
        if getattr(ec, "reward_basis_null", False):
            null_basis.append(f"$.tasks[{i}].evaluation_criteria.reward_basis")
        no_args += [f"$.tasks[{i}].evaluation_criteria.actions[{j}].arguments"
                    for j, a in enumerate(ec.actions or ()) if a.arguments is None]  # fmt: skip
        for name in ec.reward_basis or ():
            if name not in COMPONENTS and name.upper() in COMPONENTS:
                respelled.setdefault(name, name.upper())
                where_basis.append(f"$.tasks[{i}].evaluation_criteria.reward_basis")
    if no_args:
        msg = (f"{len(no_args)} gold action(s) have no arguments (missing or null; τ²-bench's Action model requires "
               "an object): read as {} — a call matches them only with no arguments, or by the names compare_args "
               "lists")  # fmt: skip
        report.add(tasks_file, no_args[0], "gold_action_without_arguments", msg)
        warnings.warn(f"{tasks_file}: {msg}", LoadWarning, stacklevel=6)
    if null_basis:
        msg = (f"{len(null_basis)} task(s) have \"reward_basis\": null (τ²-bench's model refuses it: a list is "
               "required), read as the default basis DB × COMMUNICATE")  # fmt: skip
        report.add(tasks_file, null_basis[0], "reward_basis_null", msg)
        warnings.warn(f"{tasks_file}: {msg}", LoadWarning, stacklevel=6)
    if respelled:
        shown = "; ".join(f"{a!r} → {b!r}" for a, b in respelled.items())
        msg = (f"reward-basis names not spelled as τ²-bench writes them (its model refuses them), read as its own: "
               f"{shown} ({len(where_basis)} task(s))")  # fmt: skip
        report.add(tasks_file, where_basis[0], "reward_basis_respelled", msg)
        warnings.warn(f"{tasks_file}: {msg}", LoadWarning, stacklevel=6)


def check_tasks(run: RunData, strict: bool, report: LoadReport) -> None:
    """Task definitions sharing an id: a second copy of the same definition is dropped, with a report line; two
    different definitions under one id are refused by name under strict loading — which of them graded the
    simulations is not known, and the ``tasks`` frame would hold two rows for one (run, task) key, doubling every
    trial joined to it — else the first is kept, with a report line and a warning. Simulations naming a task that
    is defined only under another Unicode normal form of its id (NFC vs NFD: the same text to a reader, different
    ids to τ²-bench) are reported, their ids kept as written."""
    if not run.tasks:
        if run.format in ("tau2", "tau2-dir") and not run.wrapper and run.simulations:
            where = "results.json: $.tasks" if run.format == "tau2-dir" else "$.tasks"
            msg = (f"the run lists no tasks: its {len(run.simulations)} simulation(s) have no task definition "
                   "(counted in the metrics by their recorded reward; τ²-bench's compute_metrics stops on them)")
            report.add(str(run.path), where, "simulation_without_task", msg)
        return
    tasks_file = str(run.path / "results.json" if run.format == "tau2-dir" else run.path)
    first, keep, copies, differing = definitions_by_id(run.tasks)
    if differing:
        i, j, tid = differing[0]
        msg = (f"{len(differing)} task definition(s) reuse the id of a different definition (e.g. {tid!r} at "
               f"$.tasks[{j}] and $.tasks[{i}])")  # fmt: skip
        if strict:
            raise LoadError(tasks_file, f"$.tasks[{i}].id", msg + ": which one graded its simulations is not "
                            "known (load leniently to keep the first of each)")  # fmt: skip
        msg += "; the first of each kept, the others skipped"
        report.add(tasks_file, f"$.tasks[{i}].id", "conflicting_task_definitions", msg, skipped=len(differing))
        warnings.warn(f"{tasks_file}: {msg}", LoadWarning, stacklevel=5)
    if copies:
        msg = (f"{len(copies)} task definition(s) repeated word for word under the same id (first at "
               f"$.tasks[{copies[0]}]); one copy of each kept")  # fmt: skip
        report.add(tasks_file, f"$.tasks[{copies[0]}].id", "duplicate_task_definition", msg, skipped=len(copies))
    run.tasks = keep
    _check_criteria(run, tasks_file, report)
    normal = {unicodedata.normalize("NFC", tid): tid for tid in first}
    odd: dict[str, str] = {}
    for sim in run.simulations:
        tid = str(sim.task_id)
        if tid not in first and tid not in odd:
            other = normal.get(unicodedata.normalize("NFC", tid))
            if other is not None:
                odd[tid] = other
    if odd:
        tid, other = next(iter(odd.items()))
        msg = (f"{len(odd)} simulation task id(s) match a defined task only under another Unicode normal form (e.g. "
               f"{ascii(tid)} vs the definition's {ascii(other)}): kept as written, as τ²-bench compares them, so "
               "those simulations have no task definition")  # fmt: skip
        report.add(str(run.path), None, "task_id_unicode_form", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)
    _report_orphans(run, [(sim, src) for sim, src in zip(run.simulations, run.sim_sources)
                          if str(sim.task_id) not in first and str(sim.task_id) not in odd], report)  # fmt: skip


def _report_orphans(run: RunData, orphans: list[tuple[Any, Any]], report: LoadReport) -> None:
    """Simulations whose task id is not among the run's tasks (τ²-bench's ``compute_metrics`` stops on them): one
    report line and a warning, in both modes; they are counted by their recorded reward."""
    if not orphans:
        return
    ids = sorted({str(sim.task_id) for sim, _ in orphans})
    where = _where(run, orphans[0][1], "task_id")
    msg = (f"{len(orphans)} simulation(s) of {len(ids)} task id(s) not among the file's tasks (e.g. {ids[0]!r} at "
           f"{where}): counted in the metrics by their recorded reward, with no task definition (τ²-bench's "
           "metrics stop on them)")  # fmt: skip
    report.add(str(run.path), where, "simulation_without_task", msg)
    warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=6)


def check_ids(run: RunData, strict: bool, report: LoadReport) -> None:
    """τ²-bench ids written as JSON integers (a simulation's ``id`` or ``task_id``, a task's ``id``), which its models
    refuse (they are strings): read as the string of the number (``7`` is task ``"7"``), one report line and a
    warning, in both modes. A run's ``info.num_trials`` absent or null (required upstream): k then runs to the
    fewest trials of a task; reported the same way."""
    places = [_where(run, src, name) for sim, src in zip(run.simulations, run.sim_sources)
              for name in ("id", "task_id") if type(getattr(sim, name)) is int]  # fmt: skip
    head = "results.json: $" if run.format == "tau2-dir" else "$"
    places += [f"{head}.tasks[{i}].id" for i, t in enumerate(run.tasks) if type(t.id) is int]
    if places:
        msg = (f"{len(places)} id(s) written as JSON integers (τ²-bench's models require strings), e.g. at "
               f"{places[0]}: read as the string of the number")  # fmt: skip
        report.add(str(run.path), places[0], "integer_id", msg)
        warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)
    where = f"{head}.info.num_trials"
    already = any(i.path == str(run.path) and i.kind == "invalid_number" and (i.location or "").endswith("info.num_trials")
                  for i in report.issues)  # a fraction or a text there is reported (read as null) already
    if run.info is not None and run.info.num_trials is None and not already:
        msg = ("info.num_trials is absent or null (τ²-bench's model requires it): pass^k's k runs to the fewest "
               "trials of a task")  # fmt: skip
        report.add(str(run.path), where, "num_trials_missing", msg)
        warnings.warn(f"{run.path} at {where}: {msg}", LoadWarning, stacklevel=5)


def check_taubench_tasks(run: RunData, strict: bool, report: LoadReport) -> None:
    """τ-bench records carry their task; the records of one task id carrying different tasks (runs of two task-set
    versions put in one list) are refused by name under strict loading — the tasks frame keeps one definition per
    id —, else the first is kept, with a report line and a warning."""
    first: dict[str, int] = {}
    differing: list[tuple[int, int, str]] = []
    for i, r in enumerate(run.tb_records):
        task = r.info.task if r.info is not None else None
        if task is None:
            continue
        tid = str(r.task_id)
        if tid not in first:
            first[tid] = i
        elif task != run.tb_records[first[tid]].info.task:
            differing.append((i, first[tid], tid))
    if not differing:
        return
    i, j, tid = differing[0]
    src = run.sim_sources
    where = f"$[{src[i]}].info.task"
    msg = (f"{len(differing)} record(s) carry a task other than the first record of their task id does (e.g. task "
           f"{tid!r} at $[{src[j]}] and $[{src[i]}])")  # fmt: skip
    if strict:
        raise LoadError(str(run.path), where, msg + ": which definition graded them is not known (load leniently to "
                        "keep the first of each)")  # fmt: skip
    msg += "; the first of each kept as the task's definition"
    report.add(str(run.path), where, "conflicting_task_definitions", msg)
    warnings.warn(f"{run.path}: {msg}", LoadWarning, stacklevel=5)

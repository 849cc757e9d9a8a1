"""The trajectory viewer of a report page: the chosen simulations (by default the failed ones), each a collapsible
block with its task, termination, reward, why it failed and its conversation.

Why a simulation failed comes from what tauk already computes: the recorded reward breakdown (the components of its
reward basis below 1), :func:`tauk.score`'s ``failure`` column, the communicate strings never said and the gold
actions never matched (:func:`tauk.scoring.communicate_checks`, :func:`tauk.scoring.action_checks`) and the first
decisive deviation of :func:`tauk.scoring.deviations`; the conversation is drawn by
:func:`tauk.widgets.render_trajectory` (the widget's renderer). Any of these that cannot be computed for the
results (no task definitions, …) is left out and said so in a note.

Every piece of text from the results file is escaped. To keep the page small enough to send, at most
``max_simulations`` simulations are shown, each with at most ``max_messages`` messages (the first and the last
halves, with a line saying how many were left out between them) and texts cut at ``max_chars``; the page says what
it left out.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Sequence
from typing import Any

import polars as pl

from tauk.conventions import COMPONENTS, NORMAL_ENDINGS, is_success
from tauk.errors import TaukError
from tauk.io.frames.select import select_trials, selection_label

from .page import esc, table_html

__all__ = ["viewer_html", "MAX_SIMULATIONS", "MAX_MESSAGES", "MAX_CHARS", "KEY"]

MAX_SIMULATIONS = 200
"""Default cap on the simulations a page shows (the rest are counted in a note)."""

MAX_MESSAGES = 40
"""Default cap on the messages shown per simulation: the first and the last halves."""

MAX_CHARS = 2000
"""Default cut of one message's text, a tool call's arguments or its result."""

KEY = ("run_id", "simulation_id")

_RECORDED = {c: f"recorded_{c.lower()}" for c in COMPONENTS}


def _task_key(t: Any) -> tuple:
    s = "" if t is None else str(t)
    return (0, int(s), s) if s.isdigit() else (1, 0, s)


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _check_int(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise TaukError(f"{name} must be a whole number ≥ 1 or None, got {value!r}")


def _by_key(frame: pl.DataFrame | None, keys: pl.DataFrame) -> dict[tuple, pl.DataFrame]:
    """``frame``'s rows of the simulations in ``keys``, split per simulation."""
    if frame is None or frame.height == 0:
        return {}
    sub = frame.join(keys, on=list(KEY), how="semi")
    if sub.height == 0:
        return {}
    return {tuple(k): part for k, part in sub.partition_by(list(KEY), as_dict=True, maintain_order=True).items()}


def _try(what: str, fn: Any, notes: list[str]) -> Any:
    """``fn()``, or None and a note saying which part of "why it failed" is missing and why."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the statistics' warnings belong to the statistics, not to the viewer
            return fn()
    except TaukError as exc:
        notes.append(f"{what} left out: {exc}")
        return None


def _breakdown(trial: dict[str, Any]) -> tuple[str, list[str]]:
    """The reward components as text (the recorded ones, else :func:`tauk.score`'s recomputed ones), and those of
    the reward basis below 1."""
    recorded = {c: trial.get(_RECORDED[c]) for c in COMPONENTS if trial.get(_RECORDED[c]) is not None}
    if recorded:
        values, source, basis_of = recorded, "recorded", trial.get("reward_basis")
    else:
        values = {c: trial.get(f"_score_{c.lower()}") for c in COMPONENTS
                  if trial.get(f"_score_{c.lower()}") is not None}  # fmt: skip
        source, basis_of = "recomputed by tauk.score", trial.get("score_basis") or trial.get("reward_basis")
    basis = [str(b).upper() for b in (basis_of or [])]
    parts, zero = [], []
    for comp, v in values.items():
        inside = comp in basis
        parts.append(f"{comp} {_num(v)}" + ("" if inside or not basis else " (outside the basis)"))
        if inside and v < 1 - 1e-6:
            zero.append(comp)
    text = f"reward breakdown ({source}): " + (" · ".join(parts) if parts else "no component") if values else \
        "no reward component recorded or recomputed"  # fmt: skip
    if basis:
        text += f" — reward basis {'×'.join(basis)}"
    return text, zero


def _why_short(trial: dict[str, Any], first: dict[str, Any] | None, zero: list[str]) -> str:
    """One line: why it failed (for the block's summary)."""
    reason = trial.get("termination_reason")
    bits = []
    if trial.get("is_infra_error"):
        bits.append("infrastructure error")
    elif reason is not None and reason not in NORMAL_ENDINGS:
        bits.append(f"ended by {reason}")
    failure = trial.get("failure")
    if failure and not str(failure).startswith("premature:"):
        bits.append(f"failed {failure}")
    elif zero:
        bits.append("failed " + "+".join(zero))
    if first is not None:
        bits.append(f"first decisive deviation: {str(first.get('kind')).replace('_', ' ')} {first.get('tool')}")
    if trial.get("reward") is None and not trial.get("is_infra_error"):
        bits.append("no reward recorded (counted as failed)")
    if not bits:
        bits.append("passed" if is_success(trial.get("reward")) else "reward below 1")
    return "; ".join(bits)


def _task_block(task: dict[str, Any] | None, max_chars: int | None) -> str:
    """A collapsed block with the task's purpose and user scenario (from the definition embedded in the file)."""
    if not task:
        return ""
    lines = []
    for col, keys in (("description", ("purpose",)), ("user_scenario", ("instructions",))):
        raw = task.get(col)
        if not raw:
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        for key in keys:
            if isinstance(value, dict) and value.get(key) is not None:
                v = value[key]
                text = json.dumps(v, indent=2, ensure_ascii=False) if not isinstance(v, str) else v
                lines.append(f"{key}: {text}")
    if task.get("communicate_info"):
        lines.append("communicate: " + "; ".join(str(c) for c in task["communicate_info"]))
    if task.get("n_actions") is not None:
        lines.append(f"gold actions: {task['n_actions']}")
    if not lines:
        return ""
    text = "\n".join(lines)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + f"\n… ({len(text) - max_chars} more characters)"
    return (f"<details class='tauk-task'><summary>the task (its definition in the file)</summary>"
            f"<pre class='tauk-task-text'>{esc(text)}</pre></details>")  # fmt: skip


def _cap_messages(msgs: pl.DataFrame | None, calls: pl.DataFrame | None, max_messages: int | None,
                  focus: Any = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:  # fmt: skip
    """The messages shown and their tool calls, and how many were left out: all of them, or the first and the last
    ones and (when ``focus``, the message of the first decisive deviation, would be left out) a few around it, with
    a note row in each gap."""
    rows = msgs.sort("message_idx").to_dicts() if msgs is not None else []
    call_rows = calls.to_dicts() if calls is not None else []
    n = len(rows)
    if max_messages is None or n <= max_messages:
        return rows, call_rows, 0
    at = next((i for i, r in enumerate(rows) if focus is not None and r.get("message_idx") == focus), None)
    window = min(6, max_messages // 3)
    rest = max_messages - (window if at is not None else 0)
    head, tail = rest - rest // 2, rest // 2
    keep = set(range(head)) | set(range(n - tail, n))
    around = ""
    if at is not None and at not in keep:
        lo = max(head, min(at - window // 2, n - tail - window))
        keep |= set(range(lo, lo + window))
        around = f", {window} around the first decisive deviation"
    else:  # the deviation is shown anyway (or there is none): the budget goes to the first and last messages
        head, tail = max_messages - max_messages // 2, max_messages // 2
        keep = set(range(head)) | set(range(n - tail, n))
    out: list[dict[str, Any]] = []
    gap: list[dict[str, Any]] = []
    for i, r in enumerate(rows + [None]):
        if r is not None and i not in keep:
            gap.append(r)
            continue
        if gap:
            lo_i, hi_i = gap[0].get("message_idx"), gap[-1].get("message_idx")
            out.append({"message_idx": lo_i, "role": "omitted",
                        "content": f"… {len(gap)} message(s), #{lo_i}–#{hi_i}, not shown (max_messages={max_messages}: "
                                   f"the first {head}, the last {tail}{around} are shown)"})  # fmt: skip
            gap = []
        if r is not None:
            out.append(r)
    shown_idx = {rows[i].get("message_idx") for i in keep}
    calls_kept = [c for c in call_rows if c.get("message_idx") in shown_idx]
    return out, calls_kept, n - len(keep)


def viewer_html(
    results: Any,
    *,
    failed: bool | None = True,
    task: str | Sequence[str] | None = None,
    termination: str | Sequence[str] | None = None,
    scored: pl.DataFrame | None = None,
    max_simulations: int | None = MAX_SIMULATIONS,
    max_messages: int | None = MAX_MESSAGES,
    max_chars: int | None = MAX_CHARS,
    deviations: bool = True,
) -> str:
    """The viewer's markup (a fragment for :class:`tauk.html.Page`; its text all escaped).

    Parameters
    ----------
    results
        A :class:`tauk.Results` (``tauk.load(...)`` or a store): the viewer reads its trials and messages.
    failed, task, termination
        Which simulations (:func:`tauk.html.select_trials`): by default every failed one; ``failed=None`` for all.
    scored
        :func:`tauk.score` of the results (for the ``failure`` column); computed when omitted.
    max_simulations, max_messages, max_chars
        Caps keeping the page small (None: no cap); what is left out is said on the page.
    deviations
        Name the first decisive deviation of each simulation (:func:`tauk.scoring.deviations`).

    Examples
    --------
    >>> import tauk
    >>> from tauk.html import viewer_html
    >>> markup = viewer_html(tauk.load("data/baseline_airline.json"), termination="max_steps", max_simulations=2)
    >>> markup.count("<details class='tauk-sim'"), "6 simulations match" in markup
    (2, True)
    """
    from tauk.scoring import action_checks, communicate_checks, score
    from tauk.scoring import deviations as deviations_of
    from tauk.widgets import render_trajectory

    for name, value in (("max_simulations", max_simulations), ("max_messages", max_messages),
                        ("max_chars", max_chars)):  # fmt: skip
        _check_int(name, value)
    if not all(hasattr(results, a) for a in ("runs", "trials", "messages", "tool_calls")):
        raise TaukError("the trajectory viewer takes a tauk.Results (tauk.load(...)): it reads the messages, which a "
                        f"{type(results).__name__} does not carry")  # fmt: skip
    trials = results.trials
    label = selection_label(failed=failed, task=task, termination=termination) or "every simulation"
    sel = select_trials(trials, failed=failed, task=task, termination=termination)
    order = {r: i for i, r in enumerate(results.runs["run_id"].to_list())}
    sel = sel.with_columns(
        pl.col("run_id").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_run_order"),
        pl.col("task_id").map_elements(lambda t: _task_key(t)[1], return_dtype=pl.Int64).alias("_task_num"),
        pl.col("task_id").map_elements(lambda t: _task_key(t)[0], return_dtype=pl.Int64).alias("_task_str"),
    ).sort("_run_order", "_task_str", "_task_num", "task_id", pl.col("trial").fill_null(-1), "simulation_id")
    shown = sel if max_simulations is None else sel.head(max_simulations)

    notes: list[str] = []
    parts: list[str] = []
    style = re.match(r"\s*<style>.*?</style>", render_trajectory([], style=True), re.S)
    parts.append(style.group(0) if style else "")
    intro = (f"{sel.height} simulations match ({label}) of {trials.height} loaded"
             + (f"; the first {shown.height} are shown (max_simulations={max_simulations})"
                if shown.height < sel.height else "") + ".")  # fmt: skip
    parts.append(f"<p>{esc(intro)}</p>")
    if sel.height:
        per_run = (sel.group_by("run_id", maintain_order=True)
                   .agg(pl.len().alias("selected"),
                        pl.col("termination_reason").fill_null("—").value_counts(sort=True).alias("_t")))  # fmt: skip
        counts = trials.group_by("run_id").agg(pl.len().alias("simulations"))
        rows = []
        for r in per_run.join(counts, on="run_id", how="left").iter_rows(named=True):
            ends = ", ".join(f"{d['termination_reason']} {d['count']}" for d in r["_t"])
            rows.append({"run": r["run_id"], "simulations": r["simulations"], "selected": r["selected"],
                         "termination of the selected": ends})  # fmt: skip
        parts.append(table_html(pl.DataFrame(rows)))
    if shown.height == 0:
        parts.append("<p><i>no simulation to show for this selection</i></p>")
        return "<div class='tauk-viewer'>" + "".join(parts) + "</div>"

    keys = shown.select(list(KEY))
    runs_shown = shown["run_id"].unique(maintain_order=True).to_list()
    if len(runs_shown) < results.runs.height and callable(getattr(results, "filter", None)):
        results = results.filter(run_id=runs_shown)  # score and decode only the runs the page shows
    if scored is None:
        scored = _try("tauk.score's failure attribution", lambda: score(results), notes)
    if scored is not None:
        keep = [pl.col(c) for c in ("failure", "score_reward", "score_basis") if c in scored.columns]
        keep += [pl.col(c.lower()).alias(f"_score_{c.lower()}") for c in COMPONENTS if c.lower() in scored.columns]
        shown = shown.join(scored.select(*KEY, *keep), on=list(KEY), how="left")
    comm = _by_key(_try("communicate checks", lambda: communicate_checks(results), notes), keys)
    acts = _by_key(_try("action checks", lambda: action_checks(results), notes), keys)
    devs = _by_key(_try("deviations", lambda: deviations_of(results), notes), keys) if deviations else {}
    task_rows: dict[tuple, dict[str, Any]] = {}
    tasks = _try("task definitions", lambda: results.tasks, notes)
    if tasks is not None and tasks.height and "run_id" in tasks.columns:
        wanted = shown.select("run_id", "task_id").unique()
        for r in tasks.join(wanted, on=["run_id", "task_id"], how="semi").iter_rows(named=True):
            task_rows.setdefault((r["run_id"], r["task_id"]), r)
    msgs = _by_key(results.messages, keys)
    calls = _by_key(results.tool_calls, keys)

    parts.append("<div class='tauk-controls'><button type='button' id='tauk-expand'>expand all</button>"
                 "<button type='button' id='tauk-collapse'>collapse all</button>"
                 "<input type='search' id='tauk-filter' placeholder='filter by run, task, reason…' "
                 "aria-label='filter the simulations'></div>")  # fmt: skip
    cut_sims = 0
    current_run = None
    for trial in shown.iter_rows(named=True):
        k = (trial["run_id"], trial["simulation_id"])
        if trial["run_id"] != current_run:
            current_run = trial["run_id"]
            who = ", ".join(str(trial[c]) for c in ("agent", "domain") if trial.get(c))
            parts.append(f"<h3>{esc(current_run)}" + (f" <span class='tauk-meta'>({esc(who)})</span>" if who else "")
                         + "</h3>")  # fmt: skip
        sim_devs = devs.get(k)
        dev_rows = sim_devs.to_dicts() if sim_devs is not None else []
        first = next((d for d in dev_rows if d.get("decisive")), None)
        breakdown, zero = _breakdown(trial)
        m_rows, c_rows, dropped = _cap_messages(msgs.get(k), calls.get(k), max_messages,
                                                first.get("message_idx") if first else None)
        cut_sims += dropped > 0
        trial_view = {c: v for c, v in trial.items() if not c.startswith("_")}
        body = render_trajectory(m_rows, c_rows, trial=trial_view, communicate=comm.get(k), actions=acts.get(k),
                                 deviations=dev_rows, max_chars=max_chars, style=False)  # fmt: skip
        n_msgs = trial.get("n_messages")
        head = (f"task {trial['task_id']} · trial {_num(trial.get('trial'))} · reward {_num(trial.get('reward'))} · "
                f"{trial.get('termination_reason') or 'no termination recorded'} · "
                f"{_why_short(trial, first, zero)}")  # fmt: skip
        meta = (f"simulation {trial['simulation_id']} · {_num(n_msgs)} messages · {breakdown}")  # fmt: skip
        breakdown_json = trial.get("reward_breakdown")
        raw = ""
        if breakdown_json:
            try:
                raw = json.dumps(json.loads(breakdown_json), sort_keys=True)
            except ValueError:
                raw = str(breakdown_json)
            raw = f" · reward_breakdown {raw}"
        parts.append(f"<details class='tauk-sim'><summary>{esc(head)}</summary>"
                     f"<div class='tauk-meta'>{esc(meta + raw)}</div>"
                     f"{_task_block(task_rows.get((trial['run_id'], trial['task_id'])), max_chars)}{body}</details>")  # fmt: skip
    if cut_sims:
        notes.append(f"{cut_sims} simulation(s) have more than {max_messages} messages: the first and the last ones "
                     "are shown (and a few around the first decisive deviation when it falls between), with a line "
                     "saying how many were left out")  # fmt: skip
    if max_chars is not None:
        notes.append(f"texts longer than {max_chars} characters are cut (each says how much was left out)")
    parts.append("<ul class='tauk-notes'>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "<div class='tauk-viewer'>" + "".join(parts) + "</div>"

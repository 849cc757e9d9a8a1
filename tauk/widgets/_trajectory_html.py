"""The HTML of one simulation for :mod:`tauk.widgets.trajectory`: its conversation, tool calls and why it failed.

:func:`render_trajectory` is a pure function (frames or dicts in, an HTML string out) so it is testable without a
kernel. Every piece of text that comes from a results file — message content, tool names, arguments, results,
check strings, ids — is HTML-escaped: model output is untrusted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from tauk.conventions import NORMAL_ENDINGS, is_success

from ._common import esc

__all__ = ["render_trajectory", "failure_reasons", "deviation_item", "MAX_CHARS"]

MAX_CHARS = 4000

_STYLE = """<style>
.tauk-trajectory{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.4;max-width:980px}
.tauk-trajectory pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font-size:12px}
.tauk-head{padding:6px 8px;background:#f3f4f6;border-radius:4px;margin-bottom:6px}
.tauk-why{border:2px solid #c62828;background:#fdecea;border-radius:4px;padding:6px 10px;margin:6px 0}
.tauk-why.tauk-ok{border-color:#2e7d32;background:#e8f5e9}
.tauk-why ul{margin:4px 0 0 0;padding-left:18px}
.tauk-outside{color:#555;font-size:12px;margin-top:4px}
.tauk-msg{border-left:4px solid #9e9e9e;padding:4px 8px;margin:6px 0;background:#fafafa}
.tauk-role-assistant{border-left-color:#1565c0;background:#f1f6fd}
.tauk-role-user{border-left-color:#6a1b9a;background:#f8f1fb}
.tauk-role-tool{border-left-color:#616161}
.tauk-role-system{border-left-color:#ef6c00}
.tauk-label{font-weight:600;font-size:11px;text-transform:uppercase;color:#424242}
.tauk-call{border:1px solid #cfd8dc;border-radius:4px;padding:4px 6px;margin:4px 0 2px 12px;background:#fff}
.tauk-call-name{font-family:monospace;font-weight:600}
.tauk-result{border-top:1px dashed #cfd8dc;margin-top:4px;padding-top:2px;color:#37474f}
.tauk-result pre{max-height:12em;overflow:auto}
.tauk-result.tauk-error{color:#b71c1c}
.tauk-badge{display:inline-block;border-radius:3px;padding:0 5px;margin:0 3px;font-size:11px;font-weight:600}
.tauk-badge-ok{background:#c8e6c9;color:#1b5e20}
.tauk-badge-bad{background:#ffcdd2;color:#b71c1c}
.tauk-end{padding:4px 8px;margin-top:6px;border-radius:4px;background:#eceff1}
.tauk-end.tauk-premature{background:#ffcdd2;color:#b71c1c;font-weight:600}
.tauk-call.tauk-decisive{border:2px solid #c62828;background:#fff5f5}
.tauk-badge-dev{background:#c62828;color:#fff}
.tauk-badge-warn{background:#ffe0b2;color:#e65100}
</style>"""


# ------------------------------------------------------------------------------------------------ helpers
def _rows(data: Any) -> list[dict[str, Any]]:
    if data is None:
        return []
    if isinstance(data, pl.DataFrame):
        return data.to_dicts()
    if isinstance(data, Mapping):
        return [dict(data)]
    return [dict(r) for r in data]


def _clip(text: str, max_chars: int | None) -> str:
    if max_chars is not None and len(text) > max_chars:
        return text[:max_chars] + f"\n… ({len(text) - max_chars} more characters)"
    return text


def _pretty_json(text: Any) -> str:
    if text is None:
        return ""
    s = str(text)
    try:
        return json.dumps(json.loads(s), indent=2, ensure_ascii=False, sort_keys=True)
    except (ValueError, TypeError):
        return s


def _call_sig(name: Any, arguments: Any) -> str:
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else (arguments or {})
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    except (ValueError, TypeError, AttributeError):
        inner = "" if arguments is None else str(arguments)
    return f"{name}({inner})"


def _num(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _success(trial: Mapping[str, Any]) -> bool | None:
    r = trial.get("score_reward", trial.get("reward"))
    if r is None:
        return None if "score_reward" not in trial and "reward" not in trial else False
    return is_success(r)


def _basis(trial: Mapping[str, Any]) -> set[str] | None:
    b = trial.get("score_basis")
    if b is None:
        b = trial.get("reward_basis")
    return None if b is None else {str(x).upper() for x in b}


def _reasons(
    trial: Mapping[str, Any], communicate: Any, actions: Any, max_chars: int | None
) -> tuple[list[str], list[str]]:
    """(reasons that sink the reward, checks that failed outside the reward basis) as escaped ``<li>`` items."""
    blocking: list[str] = []
    outside: list[str] = []
    basis = _basis(trial)
    reason = trial.get("termination_reason")
    if reason is not None and reason not in NORMAL_ENDINGS:
        blocking.append(f"<li><b>premature ending</b>: the conversation ended with <code>{esc(reason)}</code> "
                        f"(only {' / '.join(NORMAL_ENDINGS)} reach the reward)</li>")
    comm_items = [
        f"<li><b>communicate string never said</b>: <code>{esc(_clip(str(c.get('info')), max_chars))}</code></li>"
        for c in _rows(communicate) if c.get("met") is False
    ]
    act_items = []
    for a in _rows(actions):
        if a.get("matched") is False:
            label = f"#{a.get('action_idx')}" + (f" ({a['action_id']})" if a.get("action_id") else "")
            cmp = a.get("compare_args")
            cmp_note = "" if cmp is None else (" comparing name only" if len(cmp) == 0 else f" comparing {', '.join(cmp)}")
            act_items.append(
                f"<li><b>gold action {esc(label)} never matched</b>{esc(cmp_note)}: "
                f"<code>{esc(_clip(_call_sig(a.get('name'), a.get('arguments')), max_chars))}</code></li>"
            )
    explained = set()
    for comp, items in (("COMMUNICATE", comm_items), ("ACTION", act_items)):
        if basis is not None and comp not in basis:
            outside += items
        else:
            blocking += items
            if items:
                explained.add(comp)
    failure = trial.get("failure")
    if failure and not str(failure).startswith("premature:"):
        rest = [c for c in str(failure).split("+") if c not in explained]
        if rest:
            blocking.append(f"<li><b>failed component(s)</b>: {esc(' × '.join(rest))}</li>")
    return blocking, outside


def failure_reasons(
    trial: Mapping[str, Any] | None = None,
    communicate: Any = None,
    actions: Any = None,
    max_chars: int | None = MAX_CHARS,
) -> list[str]:
    """HTML list items (already escaped) naming why a simulation failed: a premature ending, each communicate
    string never said, each gold action never matched, and the zero components of the ``failure`` column.

    Checks of a component outside the simulation's reward basis (``score_basis``, else ``reward_basis``) do not
    sink the reward; they are left out here (the rendered trajectory lists them apart)."""
    return _reasons(dict(trial or {}), communicate, actions, max_chars)[0]


# ------------------------------------------------------------------------------------------------ render
def render_trajectory(
    messages: Any,
    tool_calls: Any = None,
    *,
    trial: Mapping[str, Any] | None = None,
    communicate: Any = None,
    actions: Any = None,
    deviations: Any = None,
    max_chars: int | None = MAX_CHARS,
    style: bool = True,
) -> str:
    """HTML of one simulation: a header, why it failed, then every message with its tool calls and results.

    ``messages`` / ``tool_calls``: that simulation's rows of ``Results.messages`` / ``Results.tool_calls`` (Polars
    frames or lists of dicts). ``trial``: its row of the trials frame or of :func:`tauk.score` (for reward,
    termination reason and ``failure``). ``communicate`` / ``actions``: its rows of
    :func:`tauk.scoring.communicate_checks` / :func:`tauk.scoring.action_checks`. ``deviations``: its rows of
    :func:`tauk.scoring.deviations` — the first decisive deviation is named in the "why" box and its call outlined,
    other deviating calls badged. Long texts are cut at ``max_chars``. All text is HTML-escaped.
    """
    msgs = sorted(_rows(messages), key=lambda m: (m.get("message_idx") is None, m.get("message_idx") or 0))
    calls = sorted(_rows(tool_calls), key=lambda c: (c.get("call_idx") is None, c.get("call_idx") or 0))
    comm = _rows(communicate)
    acts = _rows(actions)
    trial = dict(trial or {})

    calls_by_msg: dict[Any, list[dict]] = {}
    for c in calls:
        calls_by_msg.setdefault(c.get("message_idx"), []).append(c)
    answered = {c.get("tool_call_id") for c in calls if c.get("tool_call_id") is not None and c.get("result") is not None}
    gold_by_call: dict[Any, list[dict]] = {}
    for a in acts:
        if a.get("matched") and a.get("call_idx") is not None:
            gold_by_call.setdefault(a["call_idx"], []).append(a)
    said_by_msg: dict[Any, list[dict]] = {}
    for c in comm:
        if c.get("met") and c.get("message_idx") is not None:
            said_by_msg.setdefault(c["message_idx"], []).append(c)

    out: list[str] = [_STYLE] if style else []
    out.append("<div class='tauk-trajectory'>")
    out.append(_header(trial))
    devs = _rows(deviations)
    first = next((d for d in devs if d.get("decisive")), None)
    dev_by_call: dict[Any, list[dict]] = {}
    for d in devs:
        if d.get("call_idx") is not None and d.get("state_changing"):
            dev_by_call.setdefault(d["call_idx"], []).append(d)
    out.append(_why(trial, comm if communicate is not None else None, acts if actions is not None else None, max_chars,
                    first))

    seen_msg = set()
    for m in msgs:
        idx = m.get("message_idx")
        seen_msg.add(idx)
        role = str(m.get("role") or "unknown")
        if role == "tool" and m.get("tool_call_id") in answered:
            continue  # shown under the call it answers
        out.append(_message(m, calls_by_msg.get(idx, []), gold_by_call, said_by_msg.get(idx, []), max_chars,
                            dev_by_call, first))
    for idx, cs in calls_by_msg.items():  # calls whose carrying message is missing from ``messages``
        if idx not in seen_msg:
            out.append(_message({"message_idx": idx, "role": cs[0].get("role") or "assistant"}, cs, gold_by_call, [],
                                max_chars, dev_by_call, first))
    if not msgs and not calls:
        out.append("<div class='tauk-end'>no messages recorded for this simulation</div>")
    out.append(_ending(trial))
    out.append("</div>")
    return "".join(out)


def _header(trial: Mapping[str, Any]) -> str:
    if not trial:
        return ""
    parts = []
    for key, label in (("run_id", "run"), ("agent", "agent"), ("domain", "domain"), ("task_id", "task"),
                       ("trial", "trial"), ("simulation_id", "simulation")):
        if trial.get(key) is not None:
            parts.append(f"{label} <b>{esc(trial[key])}</b>")
    for key, label in (("reward", "recorded reward"), ("score_reward", "recomputed reward")):
        if key in trial:
            parts.append(f"{label} <b>{esc(_num(trial[key]))}</b>")
    if trial.get("termination_reason") is not None:
        parts.append(f"ended by <b>{esc(trial['termination_reason'])}</b>")
    if trial.get("is_infra_error"):
        parts.append("<span class='tauk-badge tauk-badge-bad'>infra error</span>")
    return "<div class='tauk-head'>" + " · ".join(parts) + "</div>"


def deviation_item(d: Mapping[str, Any], max_chars: int | None = MAX_CHARS) -> str:
    """An escaped ``<li>`` naming a deviation of :func:`tauk.scoring.deviations` (kind, tool, where)."""
    kind = str(d.get("kind"))
    tool = esc(d.get("tool"))
    where = (f"tool call #{esc(d.get('call_idx'))}, turn {esc(d.get('turn'))}" if d.get("call_idx") is not None
             else f"never made (the conversation ended at turn {esc(d.get('turn'))})")  # fmt: skip
    if kind == "wrong_args":
        what = f"wrong arguments to <code>{tool}</code> ({esc(', '.join(d.get('wrong_args') or []))})"
        gold = d.get("gold_arguments")
        if gold is not None:
            what += f"; gold: <code>{esc(_clip(_call_sig(d.get('tool'), gold), max_chars))}</code>"
    elif kind == "extra":
        what = f"a write no gold action asks for: <code>{tool}</code>"
    elif kind == "missing":
        what = (f"gold action #{esc(d.get('action_idx'))} missing: "
                f"<code>{esc(_clip(_call_sig(d.get('tool'), d.get('gold_arguments')), max_chars))}</code>")  # fmt: skip
    else:
        what = f"<code>{tool}</code> out of gold order (gold action #{esc(d.get('action_idx'))})"
    return f"<li><b>first decisive deviation</b>: {what} — {where}</li>"


def _why(trial: Mapping[str, Any], comm: Any, acts: Any, max_chars: int | None,
         first: Mapping[str, Any] | None = None) -> str:  # fmt: skip
    ok = _success(trial) if trial else None
    items, outside = _reasons(trial, comm, acts, max_chars)
    if first is not None:
        items = [deviation_item(first, max_chars), *items]
    extra = ""
    if outside:
        extra = ("<div class='tauk-outside'>checks outside the reward basis (they do not change the reward):<ul>"
                 + "".join(outside) + "</ul></div>")
    if ok and not items:
        return f"<div class='tauk-why tauk-ok'><b>passed</b>: reward 1{extra}</div>"
    if not items and ok is None:
        return f"<div class='tauk-why tauk-ok'>{extra}</div>" if extra else ""
    if not items:
        items = ["<li>no single reason recorded (see the reward breakdown)</li>"]
    return "<div class='tauk-why'><b>why it failed</b><ul>" + "".join(items) + f"</ul>{extra}</div>"


def _message(m: Mapping[str, Any], calls: Sequence[Mapping[str, Any]], gold_by_call: Mapping[Any, list],
             said: Sequence[Mapping[str, Any]], max_chars: int | None, dev_by_call: Mapping[Any, list] | None = None,
             first: Mapping[str, Any] | None = None) -> str:  # fmt: skip
    role = str(m.get("role") or "unknown")
    css = re.sub(r"[^a-z0-9_-]", "", role.lower()) or "unknown"
    label = f"{role} #{m.get('message_idx')}" if m.get("message_idx") is not None else role
    badges = "".join(
        f"<span class='tauk-badge tauk-badge-ok'>said communicate #{esc(c.get('info_idx'))}: "
        f"{esc(_clip(str(c.get('info')), 200))}</span>"
        for c in said
    )
    if role == "tool" and m.get("is_error"):
        badges += "<span class='tauk-badge tauk-badge-bad'>tool error</span>"
    parts = [f"<div class='tauk-msg tauk-role-{css}'><span class='tauk-label'>{esc(label)}</span>{badges}"]
    content = m.get("content")
    if content is not None and str(content) != "":
        parts.append(f"<pre class='tauk-content'>{esc(_clip(str(content), max_chars))}</pre>")
    for c in calls:
        devs = (dev_by_call or {}).get(c.get("call_idx"), [])
        parts.append(_call(c, gold_by_call.get(c.get("call_idx"), []), max_chars, devs,
                           first is not None and first.get("call_idx") == c.get("call_idx")))
    parts.append("</div>")
    return "".join(parts)


def _call(c: Mapping[str, Any], golds: Iterable[Mapping[str, Any]], max_chars: int | None,
          devs: Sequence[Mapping[str, Any]] = (), is_first: bool = False) -> str:  # fmt: skip
    badges = "".join(
        f"<span class='tauk-badge tauk-badge-ok'>matches gold action #{esc(g.get('action_idx'))}</span>" for g in golds
    )
    for d in devs:
        label = str(d.get("kind")).replace("_", " ")
        if d.get("wrong_args"):
            label += ": " + ", ".join(str(a) for a in d["wrong_args"])
        if d.get("decisive"):
            cls = "tauk-badge-dev"
        else:
            cls = "tauk-badge-warn"
            label += f" (neutral: {d.get('neutral')})"
        badges += f"<span class='tauk-badge {cls}'>{esc(label)}</span>"
    if is_first:
        badges += "<span class='tauk-badge tauk-badge-dev'>first decisive deviation</span>"
    who = f" <span class='tauk-label'>by {esc(c['requestor'])}</span>" if c.get("requestor") not in (None, "assistant") else ""
    out = [
        f"<div class='tauk-call{' tauk-decisive' if is_first else ''}'><span class='tauk-label'>tool call "
        f"#{esc(c.get('call_idx'))}</span> "
        f"<span class='tauk-call-name'>{esc(c.get('name'))}</span>{who}{badges}",
        f"<pre class='tauk-args'>{esc(_clip(_pretty_json(c.get('arguments')), max_chars))}</pre>",
    ]
    if c.get("result") is not None:
        err = bool(c.get("is_error"))
        cls = "tauk-result tauk-error" if err else "tauk-result"
        tag = "<span class='tauk-badge tauk-badge-bad'>error</span>" if err else ""
        out.append(f"<div class='{cls}'><span class='tauk-label'>result</span>{tag}"
                   f"<pre>{esc(_clip(str(c['result']), max_chars))}</pre></div>")
    out.append("</div>")
    return "".join(out)


def _ending(trial: Mapping[str, Any]) -> str:
    reason = trial.get("termination_reason") if trial else None
    if reason is None:
        return ""
    if reason in NORMAL_ENDINGS:
        return f"<div class='tauk-end'>ended normally: <code>{esc(reason)}</code></div>"
    return f"<div class='tauk-end tauk-premature'>premature ending: <code>{esc(reason)}</code></div>"

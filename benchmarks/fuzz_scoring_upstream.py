"""Differential fuzzing of tauk's scoring kernel against upstream τ²-bench's own evaluator (the judge).

    python benchmarks/fuzz_scoring_upstream.py --n 2000 --seed 0 [--keep DIR] [--out FILE]

Each case is one real simulation of a shared τ²-bench results file (../shared/data/tau2, every version and domain)
with its task definition, mutated by one to three seeded, realistic mutations (communicate strings with unicode,
commas, case and white space; assistant message text; tool-call and gold argument values of every JSON type;
``compare_args``; duplicated / moved / reordered calls, calls of the user; termination reasons; reward bases;
evaluation criteria; argument spellings upstream's models refuse) and written as its own results file. Each case
gets a random evaluation type.

Upstream (``/work/venv312``, ``tau2``) loads each file with ``Results.load`` and grades it with its unmodified
``evaluate_simulation`` (termination gate, "no criteria ⇒ 1", product over the basis, safety raise) and its
``CommunicateEvaluator`` / ``ActionEvaluator``. Only the parts that need the domain environment or an LLM are
stood in for: DB and ENV_ASSERTION are the record's (as tauk takes them offline: db_check.db_reward, else 1.0;
the product of env_assertions[].reward), NL_ASSERTION the record's where the task has assertions (upstream's own
"no assertions ⇒ 1.0" otherwise), and the tool-type lookup (metadata only) is skipped.

tauk loads the same files (``strict=False``) and scores them with ``tauk.score(evaluation=...)``. Per case the
gate, COMMUNICATE, ACTION and the reward are compared. Outcomes:

* ``agree`` — equal numbers (or both raise the safety error);
* ``documented_refusal`` — tauk raises :class:`tauk.EvaluationError` (safety rule, docs/spec.md §2.5) where
  upstream's single-component / ignore-basis types drop a factor the basis names;
* ``upstream_refuses_flagged`` — upstream's models refuse the file; tauk names the problem (a load-report entry or
  warning for that file, the simulation skipped, a null reward or an error);
* ``tauk_refuses_named`` — tauk refuses a file upstream grades, naming why (NaN / Infinity / 1e400 anywhere: the
  file is ``unreadable_file``);
* ``not_comparable`` — the reward needs a verdict neither side has (NL_ASSERTION unjudged, a record judging NL
  assertions the mutated task no longer has);
* ``upstream_refuses_silent`` / ``mismatch`` / ``tauk_null`` / ``tauk_refuses`` — disagreements: printed with the
  case.

Known open disagreements (see the summary's "by reason" table): an explicit ``"reward_basis": null`` (upstream
refuses it; tauk reads the default basis, no report), and spellings upstream refuses inside messages that scoring
never decodes (no check needs them: no gold action and no communicate string, or the gate failed) — there the
reward does not depend on the messages.

The summary prints the mutations tried per kind and the disagreements per component.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("TAUK_SHARED_DATA", ROOT.parent / "shared" / "data"))
UPSTREAM_PYTHON = Path(os.environ.get("TAUK_UPSTREAM_PYTHON", "/work/venv312/bin/python"))
TAU2_DATA_DIR = os.environ.get("TAU2_DATA_DIR", "/tmp/t2/data")

EVALUATION_TYPES = ("env", "communicate", "action", "nl_assertions", "all", "all_with_nl_assertions",
                    "all_ignore_basis", "all_with_nl_assertions_ignore_basis")  # fmt: skip
REASONS = ("user_stop", "agent_stop", "max_steps", "too_many_errors", "agent_error", "user_error", "timeout",
           "infrastructure_error", "context_window_exceeded", "unexpected_error")  # fmt: skip
KINDS = ("comm_needle", "comm_unicode", "comm_message", "args_value", "compare_args", "calls_layout",
         "calls_role_probe", "termination", "basis", "criteria", "raw_spelling")  # fmt: skip

# characters whose case mapping is special somewhere (final sigma, dotted I, sharp s, Kelvin / Ångström / Ohm
# signs, ligatures, Cherokee, Georgian Mtavruli, Deseret, titlecase digraphs, letters added in Unicode 14-16)
SPECIAL = ["İ", "I", "ı", "i̇", "Σ", "σ", "ς", "ẞ", "ß", "SS", "\u212a", "k", "\u212b", "å", "\u2126", "ω", "ﬁ", "FI",
           "ǅ", "ǆ", "Ǆ", "ΐ", "\u13a0", "\uab70", "\u1c90", "\u10d0", "\U00010400", "\U00010428", "\ua7cb", "\u0264",
           "\ua7cc", "\ua7cd", "\ua7da", "\ua7db", "\ua7dc", "\u019b", "\u1c89", "\u1c8a", "\U00010d50", "\U00010d70",
           "\U00010570", "\U00010597", "É", "é", "e\u0301", "Ä", "ä", "\u0345", "\u1f88", "\u1f80"]  # fmt: skip
BLANKS = [" ", "\t", "\n", "\u00a0", "\u3000", "\u2028", "\x1c", "\x1f", "\u0085", "\u200b", "\ufeff", "\u180e",
          "\u2007", "\u202f"]  # fmt: skip


# ------------------------------------------------------------------------------------------------------ pool
def pool(data: Path) -> list[dict]:
    """Every simulation with messages of every shared τ²-bench file, with its task (raw_data / usage dropped)."""
    out = []
    for f in sorted((data / "tau2").glob("*.json")):
        d = json.loads(f.read_text())
        tasks = {str(t["id"]): t for t in d.get("tasks") or []}
        for s in d.get("simulations") or []:
            if not s.get("messages") or str(s["task_id"]) not in tasks:
                continue
            for m in s["messages"]:
                m.pop("raw_data", None)
                m.pop("usage", None)
            out.append({"file": f.name, "top": {k: v for k, v in d.items() if k not in ("tasks", "simulations")},
                        "task": tasks[str(s["task_id"])], "sim": s})  # fmt: skip
    return out


# ------------------------------------------------------------------------------------------------- mutations
NOTES: list[str] = []  # what the mutations of the case being built did (kind:option), for the summary


def _note(label: str) -> None:
    NOTES.append(label)


def _calls(sim: dict) -> list[tuple[dict, dict]]:
    return [(m, c) for m in sim["messages"] if isinstance(m.get("tool_calls"), list) for c in m["tool_calls"]]


def _assistant(sim: dict) -> list[dict]:
    return [m for m in sim["messages"] if m.get("role") == "assistant" and isinstance(m.get("content"), str)]


def _ec(task: dict) -> dict:
    if not isinstance(task.get("evaluation_criteria"), dict):
        task["evaluation_criteria"] = {"actions": [], "communicate_info": [], "nl_assertions": None,
                                       "env_assertions": None, "reward_basis": ["DB", "COMMUNICATE"]}  # fmt: skip
    return task["evaluation_criteria"]


def _substring(rng: random.Random, text: str) -> str:
    if not text:
        return ""
    words = text.split()
    if words and rng.random() < 0.6:
        i = rng.randrange(len(words))
        return " ".join(words[i:i + rng.randint(1, 3)])
    a = rng.randrange(len(text))
    return text[a:a + rng.randint(1, 24)]


def _transform(rng: random.Random, s: Any) -> Any:
    if not isinstance(s, str):
        return s
    t = rng.choice(["same", "same", "upper", "lower", "swapcase", "title", "pad", "comma", "blank_in", "special",
                    "drop_char", "strip"])  # fmt: skip
    if t == "upper":
        return s.upper()
    if t == "lower":
        return s.lower()
    if t == "swapcase":
        return s.swapcase()
    if t == "title":
        return s.title()
    if t == "pad":
        return rng.choice(BLANKS) + s + rng.choice(["", " ", "."])
    if t == "comma" and s:
        i = rng.randrange(len(s) + 1)
        return s[:i] + "," + s[i:]
    if t == "blank_in" and " " in s:
        return s.replace(" ", rng.choice(BLANKS), 1)
    if t == "special":
        i = rng.randrange(len(s) + 1)
        return s[:i] + rng.choice(SPECIAL) + s[i:]
    if t == "drop_char" and len(s) > 1:
        i = rng.randrange(len(s))
        return s[:i] + s[i + 1:]
    if t == "strip":
        return s.strip()
    return s


def m_comm_needle(rng, task, sim):
    ec = _ec(task)
    asst = _assistant(sim)
    others = [m for m in sim["messages"] if m.get("role") != "assistant" and isinstance(m.get("content"), str)]
    needles = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.55 and asst:
            s = _substring(rng, rng.choice(asst)["content"])
        elif r < 0.7 and others:
            s = _substring(rng, rng.choice(others)["content"])
        elif r < 0.8:
            s = rng.choice(["", " ", "\x1c", "\u00a0", ",", "1,000", "$1000", "\u3000"])
        else:
            s = "".join(rng.choice(SPECIAL + ["a", "b", " ", "1"]) for _ in range(rng.randint(1, 4)))
        needles.append(_transform(rng, s))
    if rng.random() < 0.3 and ec.get("communicate_info"):
        needles = list(ec["communicate_info"]) + needles
    ec["communicate_info"] = needles


def m_comm_unicode(rng, task, sim):
    """A special character in an assistant message and the communicate string holding it (or its case pair)."""
    asst = _assistant(sim) or [m for m in sim["messages"] if m.get("role") == "assistant"]
    if not asst:
        return
    m = rng.choice(asst)
    text = m.get("content") or ""
    x, y = rng.choice(SPECIAL), rng.choice(SPECIAL)
    i = rng.randrange(len(text) + 1)
    m["content"] = text[:i] + x + rng.choice(["", "", " ", "s", "Σ "]) + text[i:]
    window = m["content"][max(0, i - rng.randint(0, 6)):i] + rng.choice([x, y, x.upper(), x.lower(), y.lower()])
    _ec(task)["communicate_info"] = [_transform(rng, window) if rng.random() < 0.3 else window]


def m_comm_message(rng, task, sim):
    msgs = [m for m in sim["messages"] if m.get("role") in ("assistant", "user")]
    if not msgs:
        return
    m = rng.choice(msgs)
    t = rng.choice(["none", "empty", "blank", "digits_commas", "upper", "role_swap", "append_needle", "special"])
    _note(f"comm_message:{t}")
    ci = _ec(task).get("communicate_info") or []
    if t == "none":
        m["content"] = None
    elif t == "empty":
        m["content"] = ""
    elif t == "blank":
        m["content"] = "".join(rng.choice(BLANKS) for _ in range(rng.randint(1, 3)))
    elif t == "digits_commas":
        m["content"] = (m.get("content") or "") + rng.choice([" 1,234.50", " $1,000", " 12,3", " a,b"])
    elif t == "upper":
        m["content"] = (m.get("content") or "").upper()
    elif t == "role_swap":
        m["role"] = "user" if m["role"] == "assistant" else "assistant"
    elif t == "append_needle" and ci:
        m["content"] = (m.get("content") or "") + " " + _transform(rng, rng.choice(ci) or "x")
    elif t == "special":
        m["content"] = (m.get("content") or "") + rng.choice(SPECIAL) + rng.choice(BLANKS)


def _mutate_value(rng: random.Random, v: Any) -> Any:
    t = type(v)
    opts = ["null", "string", "list", "dict", "big", "float_special"]
    if t is bool:
        opts += ["bool_int", "bool_int", "bool_flip"]
    elif t is int:
        opts += ["int_float", "int_float", "int_bool", "int_str", "neg_zero", "int_big"]
    elif t is float:
        opts += ["float_int", "float_str", "float_round", "neg_zero"]
    elif t is str:
        opts += ["str_case", "str_pad", "str_num", "str_num", "str_unicode", "str_empty"]
    elif t is list:
        opts += ["list_rev", "list_drop", "list_dup", "list_inner"]
    elif t is dict:
        opts += ["dict_reorder", "dict_drop", "dict_inner", "dict_extra"]
    o = rng.choice(opts)
    _note(f"value:{o}")
    if o == "null":
        return None
    if o == "string":
        return json.dumps(v) if rng.random() < 0.5 else str(v)
    if o == "list":
        return [v]
    if o == "dict":
        return {"value": v}
    if o == "big":
        return rng.choice([2**63, 2**64 + 1, 10**20, 1e20, 10**30, 1e30, -(2**63) - 1])
    if o == "float_special":
        return rng.choice([float("nan"), float("inf"), -0.0, 5e-324, 1e308, 0.1 + 0.2, 0.3])
    if o == "bool_int":
        return int(v)
    if o == "bool_flip":
        return not v
    if o == "int_float":
        return float(v)
    if o == "int_bool":
        return bool(v) if v in (0, 1) else v == 1
    if o == "int_str":
        return str(v)
    if o == "neg_zero":
        return -0.0 if not v else -v
    if o == "int_big":
        return v + 2**64
    if o == "float_int":
        if v != v or v in (float("inf"), float("-inf")):
            return v
        return int(v) if v == int(v) else round(v)
    if o == "float_str":
        return repr(v)
    if o == "float_round":
        return v + 1e-12 if rng.random() < 0.5 else float(f"{v:.15g}")
    if o == "str_case":
        return v.upper() if v != v.upper() else v.lower()
    if o == "str_pad":
        return v + rng.choice(BLANKS)
    if o == "str_num":
        try:
            return int(v)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return rng.choice([1, 1.0, True, 0])
    if o == "str_unicode":
        i = rng.randrange(len(v) + 1)
        return v[:i] + rng.choice(SPECIAL) + v[i:]
    if o == "str_empty":
        return ""
    if o == "list_rev":
        return v[::-1] if len(v) > 1 else v + [None]
    if o == "list_drop":
        return v[:-1]
    if o == "list_dup":
        return v + v[-1:]
    if o == "list_inner" and v:
        i = rng.randrange(len(v))
        return v[:i] + [_mutate_value(rng, v[i])] + v[i + 1:]
    if o == "dict_reorder":
        return dict(reversed(list(v.items())))
    if o == "dict_drop" and v:
        k = rng.choice(list(v))
        return {a: b for a, b in v.items() if a != k}
    if o == "dict_inner" and v:
        k = rng.choice(list(v))
        return {**v, k: _mutate_value(rng, v[k])}
    if o == "dict_extra":
        return {**v, "extra": rng.choice([None, 1, "x"])}
    return v


def _gold_call(rng: random.Random, task: dict, sim: dict, make: bool = True) -> tuple[dict | None, dict | None]:
    """A (gold, call) pair with the same name: an existing one, or the gold copied as a call into the trajectory."""
    golds = [a for a in _ec(task).get("actions") or [] if isinstance(a, dict)]
    calls = _calls(sim)
    pairs = [(g, c) for g in golds for _, c in calls if c.get("name") == g.get("name")]
    if pairs and rng.random() < 0.7:
        return rng.choice(pairs)
    if golds and make:
        g = rng.choice(golds)
        c = {"id": f"fz_{rng.randrange(10**6)}", "name": g["name"], "arguments": copy.deepcopy(g.get("arguments")),
             "requestor": g.get("requestor") or "assistant"}  # fmt: skip
        role = "user" if c["requestor"] == "user" else "assistant"
        sim["messages"].insert(rng.randint(0, len(sim["messages"])), {"role": role, "content": None, "tool_calls": [c]})
        return g, c
    if calls:
        return None, rng.choice(calls)[1]
    return None, None


def m_args_value(rng, task, sim):
    g, c = _gold_call(rng, task, sim)
    for _ in range(rng.randint(1, 2)):
        target = g if (g is not None and (c is None or rng.random() < 0.4)) else c
        if target is None or not isinstance(target.get("arguments"), dict):
            return
        args = target["arguments"]
        r = rng.random()
        if args and r < 0.75:
            k = rng.choice(list(args))
            args[k] = _mutate_value(rng, args[k])
        elif args and r < 0.85:
            del args[rng.choice(list(args))]
        else:
            args[rng.choice(["extra", "note", "x"])] = rng.choice([None, 0, 1.0, "", [], {}])


def m_compare_args(rng, task, sim):
    golds = [a for a in _ec(task).get("actions") or [] if isinstance(a, dict)]
    if not golds:
        g, _ = _gold_call(rng, task, sim, make=False)
        if g is None:
            return
        golds = [g]
    g = rng.choice(golds)
    keys = list((g.get("arguments") or {}).keys())
    calls = [c for _, c in _calls(sim) if c.get("name") == g.get("name")]
    ckeys = list((calls[0].get("arguments") or {}).keys()) if calls and isinstance(calls[0].get("arguments"), dict) else []
    o = rng.choice(["none", "empty", "subset", "subset", "plus_missing", "dup", "call_keys", "absent"])
    _note(f"compare_args:{o}")
    if o == "none":
        g["compare_args"] = None
    elif o == "empty":
        g["compare_args"] = []
    elif o == "subset":
        g["compare_args"] = rng.sample(keys, rng.randint(0, len(keys))) if keys else []
    elif o == "plus_missing":
        g["compare_args"] = keys + ["not_an_argument"]
    elif o == "dup":
        g["compare_args"] = keys + keys[:1]
    elif o == "call_keys":
        g["compare_args"] = ckeys + ["extra"]
    elif o == "absent":
        g.pop("compare_args", None)
    if rng.random() < 0.5:
        m_args_value(rng, task, sim)


def m_calls_layout(rng, task, sim):
    msgs = sim["messages"]
    with_calls = [m for m in msgs if isinstance(m.get("tool_calls"), list) and m["tool_calls"]]
    o = rng.choice(["dup_call", "move_to_user", "reverse", "content_and_calls", "empty_list", "drop_all",
                    "name_case", "split"])  # fmt: skip
    _note(f"calls_layout:{o}")
    if o == "reverse":
        sim["messages"] = msgs[::-1]
    elif o == "drop_all":
        for m in msgs:
            if m.get("tool_calls"):
                m["tool_calls"] = None
    elif o == "empty_list":
        for m in msgs:
            if m.get("role") in ("assistant", "user") and not m.get("tool_calls") and rng.random() < 0.5:
                m["tool_calls"] = []
    elif not with_calls:
        _gold_call(rng, task, sim)
    elif o == "dup_call":
        m = rng.choice(with_calls)
        m["tool_calls"].append(copy.deepcopy(rng.choice(m["tool_calls"])))
    elif o == "move_to_user":
        m = rng.choice(with_calls)
        c = m["tool_calls"].pop(rng.randrange(len(m["tool_calls"])))
        c["requestor"] = "user"
        if not m["tool_calls"]:
            m["tool_calls"] = None
        msgs.insert(rng.randint(0, len(msgs)), {"role": "user", "content": "ok", "tool_calls": [c]})
    elif o == "content_and_calls":
        m = rng.choice(with_calls)
        ci = _ec(task).get("communicate_info") or []
        m["content"] = (rng.choice(ci) if ci else "Your booking is done") + rng.choice(["", ", thanks"])
        if m.get("role") != "assistant":
            m["role"] = "assistant"
    elif o == "name_case":
        m = rng.choice(with_calls)
        c = rng.choice(m["tool_calls"])
        c["name"] = c["name"].upper() if rng.random() < 0.5 else c["name"] + " "
    elif o == "split":
        m = rng.choice(with_calls)
        if len(m["tool_calls"]) > 1:
            c = m["tool_calls"].pop()
            msgs.insert(msgs.index(m) + 1, {"role": m.get("role"), "content": None, "tool_calls": [c]})


def m_calls_role_probe(rng, task, sim):
    """A gold's call recorded on a message role whose model has no tool calls (system / tool)."""
    golds = [a for a in _ec(task).get("actions") or [] if isinstance(a, dict)]
    if not golds:
        return
    g = rng.choice(golds)
    c = {"id": "fz_probe", "name": g["name"], "arguments": copy.deepcopy(g.get("arguments")), "requestor": "assistant"}
    for m in sim["messages"]:  # remove the real ones so the probe decides
        if isinstance(m.get("tool_calls"), list):
            m["tool_calls"] = [x for x in m["tool_calls"] if x.get("name") != g["name"]] or None
    role = rng.choice(["system", "tool"])
    _note(f"calls_role_probe:{role}")
    msg = {"role": role, "content": "probe", "tool_calls": [c]}
    if role == "tool":
        msg.update(id="fz_probe", requestor="assistant", error=False)
    sim["messages"].insert(rng.randint(0, len(sim["messages"])), msg)


def m_termination(rng, task, sim):
    sim["termination_reason"] = rng.choice([*REASONS, *REASONS[:2], "USER_STOP", "TerminationReason.AGENT_STOP",
                                            "something_else", None])  # fmt: skip
    _note(f"termination:{sim['termination_reason']}")


def m_basis(rng, task, sim):
    ec = _ec(task)
    comps = ["DB", "ENV_ASSERTION", "COMMUNICATE", "ACTION", "NL_ASSERTION"]
    o = rng.random()
    _note("basis:" + ("known" if o < 0.55 else "empty" if o < 0.65 else "duplicate" if o < 0.72 else "lower_case"
                      if o < 0.8 else "unknown_name" if o < 0.86 else "absent" if o < 0.93 else "null"))
    if o < 0.55:
        ec["reward_basis"] = rng.sample(comps, rng.randint(1, 3))
    elif o < 0.65:
        ec["reward_basis"] = []
    elif o < 0.72:
        ec["reward_basis"] = ["DB", "DB", "COMMUNICATE"]
    elif o < 0.8:
        ec["reward_basis"] = [rng.choice(["db", "Communicate", "action"])]
    elif o < 0.86:
        ec["reward_basis"] = ["DB", rng.choice(["FOO", "REWARD", "POLICY"])]
    elif o < 0.93:
        ec.pop("reward_basis", None)
    else:
        ec["reward_basis"] = None


def m_criteria(rng, task, sim):
    # (nl_assertions are left alone: NL_ASSERTION is the record's verdict on both sides)
    o = rng.choice(["ec_none", "actions_none", "actions_empty", "comm_none", "comm_empty"])
    _note(f"criteria:{o}")
    if o == "ec_none":
        task["evaluation_criteria"] = None
        return
    ec = _ec(task)
    if o == "actions_none":
        ec["actions"] = None
    elif o == "actions_empty":
        ec["actions"] = []
    elif o == "comm_none":
        ec["communicate_info"] = None
    elif o == "comm_empty":
        ec["communicate_info"] = []


def m_raw_spelling(rng, task, sim):
    """Spellings upstream's pydantic models refuse (or coerce): tauk must name them, not grade them in silence."""
    g, c = _gold_call(rng, task, sim)
    o = rng.choice(["call_args_string", "call_args_null", "call_args_missing", "call_args_list", "gold_args_null",
                    "gold_args_missing", "comm_non_string", "compare_args_non_string", "content_non_string",
                    "call_name_null", "role_case"])  # fmt: skip
    _note(f"raw_spelling:{o}")
    ec = _ec(task)
    if o.startswith("call_") and c is not None:
        if o == "call_args_string":
            c["arguments"] = json.dumps(c.get("arguments"))
        elif o == "call_args_null":
            c["arguments"] = None
        elif o == "call_args_missing":
            c.pop("arguments", None)
        elif o == "call_args_list":
            c["arguments"] = list((c.get("arguments") or {}).items())
        elif o == "call_name_null":
            c["name"] = None
    elif o.startswith("gold_") and g is not None:
        if o == "gold_args_null":
            g["arguments"] = None
        else:
            g.pop("arguments", None)
    elif o == "comm_non_string":
        ec["communicate_info"] = list(ec.get("communicate_info") or []) + [rng.choice([1000, 1.5, None, True])]
    elif o == "compare_args_non_string" and g is not None:
        g["compare_args"] = list((g.get("arguments") or {}).keys())[:1] + [rng.choice([1, None])]
    elif o == "content_non_string":
        asst = [m for m in sim["messages"] if m.get("role") == "assistant"]
        if asst:
            rng.choice(asst)["content"] = rng.choice([42, ["a"], {"text": "a"}])
    elif o == "role_case":
        asst = [m for m in sim["messages"] if m.get("role") == "assistant"]
        if asst:
            rng.choice(asst)["role"] = "Assistant"


MUTATIONS = {k: globals()[f"m_{k}"] for k in KINDS}


def make_case(base: dict, i: int, seed: int, only: tuple[str, ...] = ()) -> dict:
    rng = random.Random(seed * 1_000_003 + i)
    task, sim = copy.deepcopy(base["task"]), copy.deepcopy(base["sim"])
    kinds = rng.sample(only or KINDS, min(len(only or KINDS), rng.choice([1, 1, 2, 2, 3])))
    NOTES.clear()
    for k in kinds:
        try:
            MUTATIONS[k](rng, task, sim)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError):  # an earlier mutation left odd data
            pass
    cid = f"fz{i:05d}"
    task["id"] = cid
    sim["id"], sim["task_id"] = cid, cid
    doc = {**base["top"], "tasks": [task], "simulations": [sim]}
    # NL_ASSERTION is the record's verdict on both sides: a record judging assertions the mutated task no longer has
    # (criteria removed, then recreated empty) says nothing about the kernel
    ec = task.get("evaluation_criteria") if isinstance(task.get("evaluation_criteria"), dict) else None
    ri = sim.get("reward_info") if isinstance(sim.get("reward_info"), dict) else {}
    judged = bool(ri.get("nl_assertions")) or "NL_ASSERTION" in (ri.get("reward_breakdown") or {})
    stale_nl = judged and not (ec and ec.get("nl_assertions"))
    return {"case": cid, "kinds": kinds, "notes": sorted(set(NOTES)), "stale_nl": stale_nl, "evaluation": rng.choice(EVALUATION_TYPES), "base": base["file"],
            "base_sim": base["sim"]["id"], "doc": doc}  # fmt: skip


# -------------------------------------------------------------------------------------------------- upstream
UPSTREAM = r'''
import json, sys, traceback
from tau2.data_model.simulation import Results, RewardInfo, DBCheck, TerminationReason
from tau2.data_model.tasks import RewardType
import tau2.evaluator.evaluator as ev
from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
from tau2.evaluator.evaluator_action import ActionEvaluator
from tau2.evaluator.evaluator_nl_assertions import NLAssertionsEvaluator

class Unknown(Exception):
    pass

CUR = {}

class RecordedEnv:  # the record's DB / ENV_ASSERTION, combined over the basis as EnvironmentEvaluator does
    @classmethod
    def calculate_reward(cls, environment_constructor, task, full_trajectory, solo_mode=False, env_kwargs=None,
                         strict_replay=True):
        if task.evaluation_criteria is None:
            return RewardInfo(reward=1.0)
        basis = task.evaluation_criteria.reward_basis
        reward, bd = 1.0, {}
        for comp, key in ((RewardType.DB, "db"), (RewardType.ENV_ASSERTION, "env")):
            if comp in basis:
                if CUR[key] is None:
                    raise Unknown(key)
                bd[comp] = CUR[key]
                reward *= CUR[key]
        return RewardInfo(reward=reward, db_check=None, reward_basis=basis, reward_breakdown=bd)

class RecordedNL:  # upstream's own "no assertions => 1.0", else the record's verdict
    @classmethod
    def calculate_reward(cls, task, full_trajectory):
        if task.evaluation_criteria is None or not task.evaluation_criteria.nl_assertions:
            return NLAssertionsEvaluator.calculate_reward(task=task, full_trajectory=full_trajectory)
        if CUR["nl"] is None:
            raise Unknown("nl")
        return RewardInfo(reward=CUR["nl"], reward_breakdown={RewardType.NL_ASSERTION: CUR["nl"]})

class NoEnvRegistry:  # tool types are metadata: the environment is not built
    @staticmethod
    def get_env_constructor(domain):
        def build(*a, **k):
            raise RuntimeError("no environment in the fuzz harness")
        return build

ev.EnvironmentEvaluator = RecordedEnv
ev.NLAssertionsEvaluator = RecordedNL
ev.registry = NoEnvRegistry

def recorded(sim):
    ri = sim.reward_info
    if ri is None:
        return None, None, None
    db = ri.db_check.db_reward if ri.db_check is not None else 1.0
    env = 1.0
    for a in ri.env_assertions or []:
        env *= a.reward
    nl = None
    if ri.nl_assertions:
        nl = float(all(c.met for c in ri.nl_assertions))
    elif ri.reward_breakdown and RewardType.NL_ASSERTION in ri.reward_breakdown:
        nl = ri.reward_breakdown[RewardType.NL_ASSERTION]
    return db, env, nl

cases = [json.loads(l) for l in open(sys.argv[1])]
out = open(sys.argv[2], "w")
for c in cases:
    r = {"case": c["case"]}
    try:
        res = Results.load(c["path"])
        sim, task = res.simulations[0], res.tasks[0]
    except Exception as exc:
        r["load_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        out.write(json.dumps(r) + "\n")
        continue
    r["gate"] = float(sim.termination_reason in {TerminationReason.AGENT_STOP, TerminationReason.USER_STOP})
    for name, fn in (("communicate", lambda: CommunicateEvaluator.calculate_reward(task=task, full_trajectory=sim.messages)),
                     ("action", lambda: ActionEvaluator.calculate_reward(task=task, full_trajectory=sim.messages))):
        try:
            r[name] = fn().reward
        except Exception as exc:
            r[name + "_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    CUR["db"], CUR["env"], CUR["nl"] = recorded(sim)
    try:
        info = ev.evaluate_simulation(sim, task, ev.EvaluationType(c["evaluation"]), solo_mode=False,
                                      domain=res.info.environment_info.domain_name)
        r["reward"] = info.reward
    except Unknown as exc:
        r["reward_unknown"] = str(exc)
    except ValueError as exc:
        r["reward_error"] = f"ValueError: {str(exc)[:300]}"
    except Exception as exc:
        r["reward_crash"] = f"{type(exc).__name__}: {str(exc)[:300]}"
    out.write(json.dumps(r) + "\n")
out.close()
print(json.dumps({"n": len(cases)}))
'''


def run_upstream(cases: list[dict], work: Path) -> dict[str, dict]:
    src = work / "upstream_cases.jsonl"
    dst = work / "upstream_out.jsonl"
    with src.open("w") as f:
        for c in cases:
            f.write(json.dumps({"case": c["case"], "path": str(c["path"]), "evaluation": c["evaluation"]}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["TAU2_DATA_DIR"] = TAU2_DATA_DIR
    out = subprocess.run([str(UPSTREAM_PYTHON), "-c", UPSTREAM, str(src), str(dst)], env=env, capture_output=True,
                         text=True, timeout=3600)  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"upstream failed:\n{out.stderr[-4000:]}")
    return {r["case"]: r for r in map(json.loads, dst.read_text().splitlines())}


# ------------------------------------------------------------------------------------------------------ tauk
def run_tauk(cases: list[dict]) -> dict[str, dict]:
    import tauk

    out: dict[str, dict] = {}
    by_type: dict[str, list[dict]] = defaultdict(list)
    for c in cases:
        by_type[c["evaluation"]].append(c)

    def one_group(group: list[dict], evaluation: str) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                res = tauk.load({c["case"]: c["path"] for c in group}, strict=False, progress=False)
            except tauk.TaukError as exc:
                if len(group) > 1:
                    for c in group:
                        one_group([c], evaluation)
                    return
                out[group[0]["case"]] = {"error": f"{type(exc).__name__}: {exc}"[:300], "flags": []}
                return
            try:
                s = tauk.score(res, evaluation=evaluation)
            except tauk.EvaluationError as exc:
                if len(group) > 1:
                    for c in group:
                        one_group([c], evaluation)
                    return
                s, err = None, f"EvaluationError: {exc}"[:300]
            except tauk.TaukError as exc:
                if len(group) > 1:
                    for c in group:
                        one_group([c], evaluation)
                    return
                s, err = None, f"{type(exc).__name__}: {exc}"[:300]
            # the components do not depend on the evaluation type: read them under a basis every type evaluates, so
            # that they are compared where the chosen type refuses the task's basis too
            try:
                comps = {r["run_id"]: r for r in tauk.score(res, evaluation="all", reward_basis=["DB"]).select(
                    "run_id", "gate", "communicate", "action").to_dicts()}  # fmt: skip
            except tauk.TaukError:
                comps = {}
        messages = [str(w.message) for w in caught]
        rows = {} if s is None else {r["run_id"]: r for r in s.select(
            "run_id", "score_reward", "failure").to_dicts()}  # fmt: skip
        for c in group:
            p = str(c["path"])
            flags = [f"{i.kind}: {i.message}"[:200] for i in res.report.issues if i.path == p]
            flags += [m[:200] for m in messages if p in m or c["case"] in m]
            if c["case"] not in comps and (s is None or c["case"] not in rows):
                out[c["case"]] = {"skipped": True, "flags": flags} if s is not None else {"error": err, "flags": flags}
            elif s is None:
                out[c["case"]] = {**comps[c["case"]], "error": err, "flags": flags}
            else:
                out[c["case"]] = {**comps.get(c["case"], {}), **rows[c["case"]], "flags": flags}

    for evaluation, group in by_type.items():
        for k in range(0, len(group), 400):
            one_group(group[k:k + 400], evaluation)
    return out


# ------------------------------------------------------------------------------------------------- compare
SINGLE = {"env", "communicate", "action", "nl_assertions"}


def _num_eq(a: Any, b: Any) -> bool:
    return a is not None and b is not None and abs(float(a) - float(b)) < 1e-9


def compare(case: dict, up: dict, tk: dict) -> list[tuple[str, str]]:
    """``[(component, outcome)]`` for one case."""
    flagged = bool(tk.get("flags")) or tk.get("skipped") or "error" in tk or tk.get("score_reward") is None
    if "load_error" in up:
        return [("load", "upstream_refuses_flagged" if flagged else "upstream_refuses_silent")]
    res = []
    if ("error" in tk and not tk["error"].startswith("EvaluationError")) or tk.get("skipped") or "gate" not in tk:
        # tauk refuses a file upstream grades: acceptable only when it names why
        return [("load", "tauk_refuses_named" if tk.get("flags") or "error" in tk else "tauk_drops_silently")]
    if "gate" in tk:
        res.append(("gate", "agree" if _num_eq(up["gate"], tk["gate"]) else "mismatch"))
        for comp in ("communicate", "action"):
            if comp + "_error" in up:
                res.append((comp, "upstream_crash_flagged" if flagged else "upstream_crash_silent"))
            elif tk[comp] is None:
                res.append((comp, "tauk_null"))
            else:
                res.append((comp, "agree" if _num_eq(up[comp], tk[comp]) else "mismatch"))
    # the reward
    if "reward_unknown" in up or case.get("stale_nl"):
        res.append(("reward", "not_comparable"))
    elif "reward_crash" in up:
        res.append(("reward", "upstream_crash_flagged" if flagged else "upstream_crash_silent"))
    elif "reward_error" in up:
        res.append(("reward", "agree" if "error" in tk else "upstream_raises_tauk_number"))
    elif "error" in tk:
        doc = case["evaluation"] in SINGLE or case["evaluation"] == "all_ignore_basis"
        res.append(("reward", "documented_refusal" if doc else "tauk_refuses"))
    elif tk["score_reward"] is None:
        res.append(("reward", "tauk_null_flagged" if tk.get("flags") else "tauk_null"))
    else:
        res.append(("reward", "agree" if _num_eq(up["reward"], tk["score_reward"]) else "mismatch"))
    return res


def refusal_reason(load_error: str) -> str:
    """The place and kind of upstream's validation error, indices removed (messages: the variant its role names)."""
    import re

    errs = re.findall(r"\n((?:simulations|tasks|info)[^\n]*)\n\s+[^\n]*\[type=(\w+)", load_error)
    if not errs:
        return load_error.split("\n")[0][:80]
    norm = [(re.sub(r"\.\d+", ".*", loc), t) for loc, t in errs]
    specific = [x for x in norm if not (x[0].endswith(".role") and x[1] == "literal_error")]
    if norm and not specific:
        return "simulations.*.messages.*.role: literal_error"
    loc, t = (specific or norm)[0]
    loc = re.sub(r"\.(SystemMessage|AssistantMessage|UserMessage|ToolMessage|MultiToolMessage)\.", ".<message>.", loc)
    return f"{loc}: {t}"


GOOD = {"agree", "documented_refusal", "tauk_refuses_named", "upstream_refuses_flagged", "upstream_crash_flagged", "not_comparable",
        "tauk_null_flagged"}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="cases (mutated simulations)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--keep", type=Path, default=None, help="keep the case files (and disagreements) here")
    ap.add_argument("--out", type=Path, default=None, help="also write the summary to this file")
    ap.add_argument("--chunk", type=int, default=2000, help="cases written and judged at a time")
    ap.add_argument("--kinds", default="", help="comma-separated mutation kinds to draw from (default: all)")
    ap.add_argument("--show", type=int, default=3, help="disagreeing cases printed per (component, outcome)")
    a = ap.parse_args(argv)
    t0 = time.time()
    base = pool(a.data)
    work = Path(tempfile.mkdtemp(prefix="fuzz_score_")) if a.keep is None else a.keep
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)
    only = tuple(k for k in a.kinds.split(",") if k)
    if set(only) - set(KINDS):
        ap.error(f"unknown kinds {sorted(set(only) - set(KINDS))}; known: {', '.join(KINDS)}")
    cases: list[dict] = []
    up: dict[str, dict] = {}
    tk: dict[str, dict] = {}
    t_build = t_up = t_tk = 0.0
    for start in range(0, a.n, a.chunk):  # written, judged and scored a chunk at a time (bounded disk)
        t = time.time()
        chunk = []
        for i in range(start, min(a.n, start + a.chunk)):
            c = make_case(base[rng.randrange(len(base))], i, a.seed, only)
            c["path"] = work / f"{c['case']}.json"
            c["path"].write_text(json.dumps(c.pop("doc"), ensure_ascii=rng.random() < 0.5))
            chunk.append(c)
        t_build += time.time() - t
        t = time.time()
        up.update(run_upstream(chunk, work))
        t_up += time.time() - t
        t = time.time()
        tk.update(run_tauk(chunk))
        t_tk += time.time() - t
        if a.keep is None:
            for c in chunk:
                c["path"].unlink()
        cases += chunk
        print(f"  {len(cases)} cases ({time.time() - t0:.0f} s)", file=sys.stderr)
    t1, t2, t3 = t0 + t_build, t0 + t_build + t_up, t0 + t_build + t_up + t_tk

    tried = Counter(k for c in cases for k in c["kinds"])
    outcome: Counter = Counter()
    per_kind: dict[str, Counter] = defaultdict(Counter)
    bad: dict[tuple[str, str], list[dict]] = defaultdict(list)
    per_note: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        for comp, o in compare(c, up[c["case"]], tk[c["case"]]):
            outcome[(comp, o)] += 1
            if o not in GOOD:
                for k in c["kinds"]:
                    per_kind[k][comp] += 1
                for k in c["notes"] or ["-"]:
                    per_note[k][f"{comp}/{o}"] += 1
                bad[(comp, o)].append(c)
    lines = [
        f"fuzz_scoring_upstream: n={a.n} seed={a.seed} base simulations={len(base)} "
        f"(files: {len({b['file'] for b in base})})",
        f"time: build {t1 - t0:.1f} s, upstream {t2 - t1:.1f} s, tauk {t3 - t2:.1f} s",
        "",
        "mutations tried per kind (a case applies 1-3):",
        *[f"  {k:<18} {tried[k]:>6}" for k in KINDS],
        "evaluation types: " + ", ".join(f"{e}={sum(c['evaluation'] == e for c in cases)}" for e in EVALUATION_TYPES),
        "",
        "outcomes per component:",
        *[f"  {comp:<12} {o:<28} {n:>6}{'' if o in GOOD else '   <-- disagreement'}"
          for (comp, o), n in sorted(outcome.items())],
        "",
        f"disagreements: {sum(n for (c, o), n in outcome.items() if o not in GOOD)} "
        f"(cases: {len({x['case'] for v in bad.values() for x in v})})",
        "disagreements per component by mutation kind:",
        *[f"  {k:<18} " + ", ".join(f"{comp}={n}" for comp, n in sorted(v.items())) for k, v in sorted(per_kind.items())],
        "disagreements by mutation option (a case counts once per option it applied):",
        *[f"  {k:<40} " + ", ".join(f"{x}={n}" for x, n in sorted(v.items())) for k, v in sorted(per_note.items())],
    ]  # fmt: skip
    refusals: dict[str, Counter] = defaultdict(Counter)
    for c in cases:
        u = up[c["case"]]
        if "load_error" in u:
            o = compare(c, u, tk[c["case"]])[0][1]
            refusals[refusal_reason(u["load_error"])][o] += 1
    named = Counter(tk[c["case"]]["flags"][0].split(":")[0] if tk[c["case"]].get("flags") else
                    tk[c["case"]].get("error", "?").split(":")[0] for c in cases
                    if compare(c, up[c["case"]], tk[c["case"]])[0][1] == "tauk_refuses_named")  # fmt: skip
    lines += ["", "tauk refuses, naming why, a file upstream grades: " +
              (", ".join(f"{k}={n}" for k, n in named.most_common()) or "none")]  # fmt: skip
    lines += ["", "upstream refuses the file (its pydantic models), by reason: tauk's outcome",
              *[f"  {r:<72} " + ", ".join(f"{o}={n}" for o, n in sorted(v.items())) for r, v in sorted(refusals.items())]]
    for (comp, o), cs in sorted(bad.items()):
        lines.append(f"\nexamples of {comp} / {o} ({len(cs)}):")
        for c in cs[: a.show]:
            lines.append(f"  {c['case']} notes={c['notes']} evaluation={c['evaluation']} base={c['base']}:{c['base_sim']}")
            lines += example_lines(up[c["case"]], tk[c["case"]], 400)
    return finish(lines, a, work)


def example_lines(upstream: Any, tauk_side: Any, width: int) -> list[str]:
    """The two sides of a disagreeing case, as the summary prints them."""
    return [f"    upstream: {json.dumps(upstream, ensure_ascii=False)[:width]}",
            f"    tauk:     {json.dumps(tauk_side, ensure_ascii=False, default=str)[:width]}"]


def finish(lines: list[str], a: argparse.Namespace, work: Path) -> int:
    """Print the summary, write it to ``--out`` when given, remove the case files unless ``--keep``."""
    text = "\n".join(lines)
    print(text)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(text + "\n")
    if a.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

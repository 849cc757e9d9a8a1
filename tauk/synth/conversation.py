"""The messages of a synthetic trial: turns, timestamps, costs, token usage and provider ``raw_data``."""

from __future__ import annotations

import base64
import hashlib
import random
from datetime import datetime, timedelta
from typing import Any

import orjson

from tauk.synth.calls import PlannedCall, mutate
from tauk.synth.tasks import SynthTask
from tauk.synth.templates import to_json

__all__ = ["GREETING", "RAW_ROLES", "Conversation", "Padding", "normal_messages", "premature_messages"]

GREETING = "Hi! How can I help you today?"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
RAW_ROLES = {"all": ("user", "assistant"), "user": ("user",), "none": ()}
"""Which messages carry a provider ``raw_data`` dict, per ``raw_data=`` option."""


class Conversation:
    """Builds the message list: turn_idx, timestamps, costs, usage and raw_data."""

    def __init__(self, rng: random.Random, start_us: int, base: datetime, prices: tuple[float, float],
                 payload_bytes: int, pad: Padding, raw_data: str = "all"):
        self.rng, self.t, self.base, self.prices = rng, start_us, base, prices
        self.payload, self.pad, self.raw_roles = payload_bytes, pad, RAW_ROLES[raw_data]
        self.msgs: list[dict[str, Any]] = []
        self.agent_cost = 0.0
        self.user_cost = 0.0

    def stamp(self, dt_s: float) -> str:
        """Advance the clock by ``dt_s`` seconds and return the timestamp."""
        self.t += int(dt_s * 1e6)
        return (self.base + timedelta(microseconds=self.t)).strftime("%Y-%m-%dT%H:%M:%S.%f")

    def _raw(self, content: str | None, tool_calls: list[dict] | None, finish: str) -> dict[str, Any]:
        tc = None if not tool_calls else [
            {"function": {"arguments": to_json(c["arguments"]), "name": c["name"]}, "id": c["id"], "type": "function"}
            for c in tool_calls]
        raw: dict[str, Any] = {"finish_reason": finish, "index": 0,
                               "message": {"content": content, "role": "assistant", "tool_calls": tc,
                                           "function_call": None, "provider_specific_fields": {"refusal": None},
                                           "annotations": []},
                               "provider_specific_fields": {}}
        if self.payload > 0:
            n = self.payload - len(orjson.dumps(raw)) - len(',"reasoning_content":"","logprobs":{"content":[]}')
            if n > 0:  # what makes real raw_data large: reasoning text and per-token logprobs (the mix gives
                # about the parse cost per byte of real results files: orjson ~15 ms/MB)
                lp = self.pad.logprobs(n // 5)
                raw["logprobs"] = {"content": lp}
                raw["message"]["reasoning_content"] = self.pad.pool[: max(0, n - len(orjson.dumps(lp)))]
        return raw

    def greeting(self) -> None:
        self.msgs.append({"role": "assistant", "content": GREETING, "tool_calls": None, "turn_idx": 0,
                          "timestamp": self.stamp(0.05), "cost": 0.0, "usage": None, "raw_data": None})

    def _llm(self, role: str, content: str | None, tool_calls: list[dict] | None) -> None:
        i = len(self.msgs)
        if role == "assistant":
            prompt = 3000 + 85 * i + self.rng.randint(0, 60)
            pin, pout = self.prices
        else:
            prompt = 400 + 45 * i + self.rng.randint(0, 30)
            pin, pout = 0.4e-6, 1.6e-6
        completion = (len(content) // 4 if content else 0) + 12 * len(tool_calls or []) + self.rng.randint(3, 12)
        cost = prompt * pin + completion * pout
        if role == "assistant":
            self.agent_cost += cost
        else:
            self.user_cost += cost
        self.msgs.append({"role": role, "content": content, "tool_calls": tool_calls, "turn_idx": i,
                          "timestamp": self.stamp(self.rng.uniform(0.6, 3.5)), "cost": cost,
                          "usage": {"completion_tokens": completion, "prompt_tokens": prompt},
                          "raw_data": self._raw(content, tool_calls, "tool_calls" if tool_calls else "stop")
                          if role in self.raw_roles else None})

    def user(self, content: str) -> None:
        self._llm("user", content, None)

    def assistant(self, content: str | None, tool_calls: list[dict] | None = None) -> None:
        self._llm("assistant", content, tool_calls)

    def call(self, name: str, args: dict[str, Any], lead: str | None = None) -> str:
        cid = "call_" + "".join(self.rng.choices(_ALNUM, k=24))
        self.assistant(lead, [{"id": cid, "name": name, "arguments": args, "requestor": "assistant"}])
        return cid

    def tool(self, cid: str, content: str, error: bool) -> None:
        self.msgs.append({"id": cid, "role": "tool", "content": content, "requestor": "assistant", "error": error,
                          "turn_idx": len(self.msgs), "timestamp": self.stamp(self.rng.uniform(0.0002, 0.002))})


class Padding:
    """Deterministic filler text for raw_data (payload_bytes)."""

    def __init__(self, seed: int):
        self.pool = base64.b64encode(hashlib.shake_256(f"tauk-synth/pad/{seed}".encode()).digest(3 << 16)).decode()
        self.pos = 0

    def logprobs(self, n: int) -> list[dict[str, Any]]:
        """About ``n`` bytes of OpenAI-style ``logprobs.content`` entries (token, logprob, bytes, top_logprobs)."""
        if not hasattr(self, "_entries"):
            words = self.pool[:1 << 16]
            self._entries, self._sizes = [], []
            for i in range(0, len(words) - 8, 5):
                tok = words[i:i + 1 + i % 7]
                top = [{"token": words[i + j:i + j + 3], "logprob": -round(0.37 * j + (i % 97) / 97, 6),
                        "bytes": list(words[i + j:i + j + 3].encode())} for j in range(1, 3)]
                e = {"token": tok, "logprob": -round((i % 997) / 331, 6), "bytes": list(tok.encode()),
                     "top_logprobs": top}
                self._entries.append(e)
                self._sizes.append(len(orjson.dumps(e)) + 1)
        out, size, k = [], 0, self.pos % len(self._entries)
        while size + self._sizes[k] <= n:
            out.append(self._entries[k])
            size += self._sizes[k]
            k = (k + 1) % len(self._entries)
        self.pos = (self.pos + len(out) * 7 + 1) % (1 << 30)
        return out


_CLOSINGS = ["Thank you, that's all I needed. ###STOP###", "Great, thanks for your help! ###STOP###",
             "Perfect, that's everything. Have a nice day! ###STOP###"]
_CONFIRMS = ["Yes, please go ahead.", "Yes, that's correct. Please proceed.", "Yes."]


def normal_messages(conv: Conversation, task: SynthTask, calls: list[PlannedCall], communicate_ok: bool,
                    agent_stop: bool) -> None:
    """A conversation that ends normally: identification, the planned calls (confirming writes), the summary.

    The summary states the ``communicate_info`` strings only when ``communicate_ok``; the user closes with
    ``###STOP###`` (``###TRANSFER###`` after a transfer) unless the agent stops.
    """
    rng = conv.rng
    conv.greeting()
    conv.user(task.opening)
    conv.assistant(task.ask_identity)
    conv.user(task.identity_reply)
    for c in calls:
        if c.is_write and c.confirm:
            conv.assistant(c.confirm)
            conv.user(rng.choice(_CONFIRMS))
        cid = conv.call(c.name, c.args, c.lead if rng.random() < 0.5 else None)
        conv.tool(cid, c.result, c.error)
        if c.error:
            conv.assistant("I could not find anything with those details; let me try to continue with what I have.")
    summary = task.summary_ok if communicate_ok else task.summary_fail
    if calls and calls[-1].name == task.extra_write[0] and calls[-1].args == task.extra_write[1] \
            and not any(g.action["name"] == task.extra_write[0] for g in task.golds):
        # the agent made an unwanted change: it says so (a refusal task's refusal no longer applies)
        summary = task.extra_summary if task.template == "refuse" else f"{summary} {task.extra_summary}"
    conv.assistant(summary)
    if task.transfer:
        conv.user("###TRANSFER###")
    elif not agent_stop:
        conv.user(rng.choice(_CLOSINGS))


def premature_messages(conv: Conversation, task: SynthTask, reason: str, max_steps: int, max_errors: int) -> None:
    """A conversation cut short: ``max_errors`` failing calls (``too_many_errors``) or ``max_steps`` messages."""
    rng = conv.rng
    conv.greeting()
    conv.user(task.opening)
    conv.assistant(task.ask_identity)
    conv.user(task.identity_reply)
    gold = task.golds[0].action if task.golds else {"name": "get_user_details", "arguments": {"user_id": "unknown"}}
    if reason == "too_many_errors":
        for _ in range(max_errors):
            args = {k: mutate(v, rng) for k, v in gold["arguments"].items()}
            cid = conv.call(gold["name"], args)
            conv.tool(cid, f"Error: invalid arguments for {gold['name']}", True)
        return
    # max_steps: the agent and the user go round in circles until the step budget is spent
    while len(conv.msgs) < max_steps:
        if len(conv.msgs) % 4 == 0:
            cid = conv.call(gold["name"], dict(gold["arguments"]))
            conv.tool(cid, task.golds[0].result if task.golds else "{}", False)
        else:
            conv.assistant("Could you please confirm those details once more?")
            conv.user("I already gave you my details. " + task.identity_reply)
    del conv.msgs[max_steps:]


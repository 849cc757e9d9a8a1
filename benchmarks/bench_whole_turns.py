"""The turn_idx pass of the messages frame (tauk.io.frames.messages._whole_turns), on the shared telecom-test run's
simulations copied 20× (800 simulations, 44,760 messages, every turn_idx an integer as τ²-bench writes it): the
pass as merged (a place string per message and per tool message, built before the value is looked at) against the
current one (places spelled only for a value that is not an integer). Best of 7, printed and written to
benchmarks/results/bench_whole_turns.txt.

    PYTHONPATH=$PWD python benchmarks/bench_whole_turns.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import msgspec

from tauk.io.frames import messages as M

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT.parent / "shared" / "data" / "tau2" / "v0.1_gpt-4.1_telecom-test_1trial.json"


def merged(messages):  # the loop as merged (its checks on integer values: nothing to convert in these files)
    for j, msg in enumerate(messages or ()):
        for _where, m in ((f"$.messages[{j}]", msg),
                          *((f"$.messages[{j}].tool_messages[{k}]", t) for k, t in enumerate(msg.tool_messages or ()))):
            v = m.turn_idx
            if v is None or type(v) is int:
                continue
    return messages


def main() -> None:
    sims = json.loads(SRC.read_bytes())["simulations"]
    msgs = [M._FULL_SIM.decode(msgspec.json.encode(s)).messages for _ in range(20) for s in sims]
    n = sum(len(m or ()) for m in msgs)
    lines = [f"{len(msgs)} simulations, {n} messages (shared telecom-test run × 20); best of 7"]
    for name, f in (("merged (eager place strings)", merged), ("current (places only when needed)", M._whole_turns)):
        best = float("inf")
        for _ in range(7):
            t = time.perf_counter()
            for m in msgs:
                f(m)
            best = min(best, time.perf_counter() - t)
        lines.append(f"{name}: {best * 1000:.1f} ms")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    (ROOT / "benchmarks" / "results" / "bench_whole_turns.txt").write_text(text)


if __name__ == "__main__":
    main()

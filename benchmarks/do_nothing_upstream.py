"""What τ²-bench itself gives an agent that does nothing: the judge of tauk's inaction-passable flag.

For every task of the given task files, build a two-message conversation — the agent greets, the user ends it
(``user_stop``), no tool call on either side — after the task's initial message history if it has one (part of
every recorded trajectory), and grade it with upstream's own ``evaluate_simulation(...,
EvaluationType.ALL, strict_replay=False)`` on the domain's own environment (DB by replaying the gold actions,
ENV assertions on the replayed state, COMMUNICATE, ACTION). Tasks whose basis needs an LLM judge (NL_ASSERTION
with assertions) are not graded (no network): they are written as ``null`` with the reason.

Run with a Python that has τ²-bench installed and ``TAU2_DATA_DIR`` set (see ../shared/upstream/README.md):

    TAU2_DATA_DIR=../shared/upstream/tau2-bench/data /path/to/py312/bin/python benchmarks/do_nothing_upstream.py \\
        ../shared/data/tasks/*_tasks*.json --out benchmarks/results/do_nothing_upstream.json

The output maps task set (file stem) → task id → ``{"reward": r, "db": d, "env": e}`` or ``{"reward": null,
"why": ...}``; ``tests/test_tasks_validity.py`` checks tauk's flag against it task by task.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

# banking_knowledge's default retrieval variant needs optional packages; the retrieval tools change no state, so
# the variant without retrieval grades the same DB / ENV_ASSERTION / ACTION / COMMUNICATE
ENV_KWARGS = {"banking_knowledge": {"retrieval_variant": "no_knowledge"}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from tau2.data_model.message import AssistantMessage, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    out: dict[str, dict] = {}
    for path in args.files:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            continue  # a split file
        domain = next((d for d in ("banking_knowledge", "airline", "retail", "telecom", "mock") if d in path.stem), None)
        if domain is None:
            print(f"{path}: no domain in the file name, skipped", file=sys.stderr)
            continue
        start, rows = time.process_time(), {}
        for raw in data:
            task = Task.model_validate(raw)
            ec = task.evaluation_criteria
            basis = [str(getattr(b, "value", b)) for b in (ec.reward_basis if ec else [])]
            if ec is not None and "NL_ASSERTION" in basis and ec.nl_assertions:
                rows[str(task.id)] = {"reward": None, "why": "NL_ASSERTION with assertions needs an LLM judge"}
                continue
            history = list(task.initial_state.message_history or []) if task.initial_state is not None else []
            turn = len(history)
            sim = SimulationRun(
                id=f"do-nothing-{task.id}", task_id=str(task.id), timestamp="", start_time="", end_time="",
                duration=0.0, termination_reason=TerminationReason.USER_STOP,
                messages=[*history,
                          AssistantMessage(role="assistant", content="Hello! How can I help you today?", turn_idx=turn),
                          UserMessage(role="user", content="Thank you, goodbye. ###STOP###", turn_idx=turn + 1)],
            )  # fmt: skip
            try:
                info = evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain=domain,
                                           env_kwargs=ENV_KWARGS.get(domain), strict_replay=False)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 — reported per task, never guessed
                rows[str(task.id)] = {"reward": None, "why": f"upstream raised {type(exc).__name__}: {exc}"[:300]}
                continue
            env = info.env_assertions
            rows[str(task.id)] = {
                "reward": info.reward,
                "db": info.db_check.db_reward if info.db_check is not None else None,
                "env": None if env is None else all(bool(e.met) for e in env),
            }
        out[path.stem] = rows
        graded = [r for r in rows.values() if r["reward"] is not None]
        print(f"{path.stem}: {len(rows)} tasks, {len(graded)} graded, {sum(r['reward'] == 1.0 for r in graded)} "
              f"reward 1, {time.process_time() - start:.1f} s CPU")  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Upstream's own full re-evaluation of results files against other task definitions: the judge of tauk's re-grades.

For each results file and task file, every simulation is re-evaluated the way ``tau2 evaluate-trajs
--fresh-tasks`` does it — ``evaluate_simulation(..., EvaluationType.ALL, strict_replay=False)`` on the domain's
own environment, with the task replaced by the new definition of the same id (DB and ENV_ASSERTION by replay,
COMMUNICATE, ACTION) — except where the new basis holds NL_ASSERTION with assertions (that needs an LLM judge: no
network here) or the new file lacks the task: those are written as null with the reason.

    TAU2_DATA_DIR=../shared/upstream/tau2-bench/data /path/to/py312/bin/python benchmarks/regrade_upstream.py \\
        RESULTS=TASKS ... --out benchmarks/results/regrade_upstream.json

The output maps ``"<results file name> @ <tasks file name>"`` → simulation id → ``{"reward": r}`` or
``{"reward": null, "why": ...}``; ``tests/test_tasks_regrade.py`` checks that every reward tauk re-grades
(classes ``unchanged`` and ``regradable``) equals upstream's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pairs", nargs="+", metavar="RESULTS=TASKS")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from tau2.data_model.simulation import Results
    from tau2.data_model.tasks import Task
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.scripts.evaluate_trajectories import (
        _build_eval_env_kwargs,
        get_communication_mode,
        is_solo_mode,
    )

    out: dict[str, dict] = {}
    for pair in args.pairs:
        res_path, _, task_path = pair.partition("=")
        results = Results.load(Path(res_path))
        new = {str(t["id"]): Task.model_validate(t) for t in json.loads(Path(task_path).read_text(encoding="utf-8"))}
        domain = results.info.environment_info.domain_name
        solo = is_solo_mode(results)
        rows, start = {}, time.process_time()
        for sim in results.simulations:
            task = new.get(str(sim.task_id))
            if task is None:
                rows[sim.id] = {"reward": None, "why": "task not in the new definitions"}
                continue
            ec = task.evaluation_criteria
            basis = [str(getattr(b, "value", b)) for b in (ec.reward_basis if ec else [])]
            if ec is not None and "NL_ASSERTION" in basis and ec.nl_assertions:
                rows[sim.id] = {"reward": None, "why": "NL_ASSERTION with assertions needs an LLM judge"}
                continue
            try:
                info = evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=solo, domain=domain,
                                           mode=get_communication_mode(results, sim),
                                           env_kwargs=_build_eval_env_kwargs(domain, task), strict_replay=False)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 — reported per simulation
                rows[sim.id] = {"reward": None, "why": f"upstream raised {type(exc).__name__}: {exc}"[:300]}
                continue
            rows[sim.id] = {"reward": info.reward}
        key = f"{Path(res_path).name} @ {Path(task_path).name}"
        out[key] = rows
        done = [r["reward"] for r in rows.values() if r["reward"] is not None]
        print(f"{key}: {len(rows)} simulations, {len(done)} re-evaluated, mean reward "
              f"{sum(done) / max(len(done), 1):.3f}, {time.process_time() - start:.1f} s CPU", file=sys.stderr)  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Speed of the task-validity audit over every shared task file (target: ≤ 1 s for all of them).

Times, in one run (median of ``--repeat`` runs, wall clock, one process):

* ``json.load`` of every task file — the floor any audit pays to read the files (the baseline of the ratios);
* a plain-Python audit (the rules transcribed as loops over the decoded JSON, as in tests/test_tasks_validity.py);
* ``tauk.load_tasks`` of every task file;
* ``tauk.tasks.validity(folder)`` end to end (read, classify every gold tool, flags, bounds per set and split);
* ``tauk.tasks.task_changes`` v0.1.0 → head for airline and retail, and ``tauk.tasks.regrade_eligibility`` of the
  v0.1 airline and retail runs against head.

Run: ``python benchmarks/bench_validity.py [--data ../shared/data] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def plain_audit(files: list[Path], writes: dict) -> int:
    """The rules as plain loops (inaction-passable only); returns the number inaction-passable."""
    n = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            continue
        domain = next(d for d in ("banking_knowledge", "airline", "retail", "telecom", "mock") if d in path.stem)
        for task in data:
            ec = task.get("evaluation_criteria")
            if ec is None:
                n += 1
                continue
            basis = ec.get("reward_basis") or ["DB", "COMMUNICATE"]
            acts = ec.get("actions") or []
            kinds = [writes.get((domain, "user" if a.get("requestor") == "user" else "agent", a["name"])) for a in acts]
            ok = {"DB": not any(kinds) and None not in kinds, "COMMUNICATE": not ec.get("communicate_info"),
                  "NL_ASSERTION": not ec.get("nl_assertions"), "ACTION": not acts,
                  "ENV_ASSERTION": not ec.get("env_assertions")}  # fmt: skip
            n += all(ok.get(c, False) for c in basis)
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    import tauk

    folder = args.data / "tasks"
    files = sorted(folder.glob("*.json"))
    task_files = [f for f in files if isinstance(json.loads(f.read_text()), list)]
    size = sum(f.stat().st_size for f in files) / 1e6
    doc = json.loads((ROOT / "tauk" / "tasks" / "tool_types.json").read_text())
    writes = {(r["domain"], r["side"], r["name"]): r["mutates_state"] for r in doc["tools"]}
    tauk.tasks.validity(folder)  # warm the imports and the tool table

    base = _time(lambda: [json.loads(f.read_text(encoding="utf-8")) for f in files], args.repeat)
    rows = [("json.load of every task file (baseline)", base)]
    rows.append(("plain-Python audit (loops over the JSON)", _time(lambda: plain_audit(files, writes), args.repeat)))
    rows.append(("tauk.load_tasks of every task file", _time(lambda: [tauk.load_tasks(f) for f in task_files], args.repeat)))
    v = None

    def audit():
        nonlocal v
        v = tauk.tasks.validity(folder)

    rows.append(("tauk.tasks.validity(folder), end to end", _time(audit, args.repeat)))
    t = args.data / "tasks"
    rows.append(("task_changes v0.1.0 → head, airline + retail", _time(lambda: [
        tauk.tasks.task_changes(t / f"v0.1.0_{d}_tasks.json", t / f"head_{d}_tasks.json") for d in ("airline", "retail")],
        args.repeat)))  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [(tauk.load(args.data / "tau2" / f"v0.1_gpt-4.1_{d}-test_1trial.json"), t / f"head_{d}_tasks.json")
                for d in ("airline", "retail")]  # fmt: skip
    rows.append(("regrade_eligibility, v0.1 airline + retail runs vs head", _time(lambda: [
        tauk.tasks.regrade_eligibility(r, tasks) for r, tasks in runs], args.repeat)))  # fmt: skip

    n_tasks = v.tasks.height
    print(f"task-validity audit: {len(files)} shared task files ({len(task_files)} task lists, {size:.1f} MB), "
          f"{n_tasks} tasks, {v.bounds.height} bound rows; median of {args.repeat} runs, wall clock; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"{'what':58s} {'seconds':>9s} {'÷ baseline':>11s}")
    for name, sec in rows:
        print(f"{name:58s} {sec:9.3f} {sec / base:11.2f}")
    end_to_end = rows[3][1]
    print(f"target ≤ 1 s for the audit of all shared task files: {'met' if end_to_end <= 1.0 else 'NOT met'} "
          f"({end_to_end:.3f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Speed of the reliability profile on a store of 10⁶ simulations (target ≤ 10 s), against a baseline measured in
the same run: reading the same trial columns from the store and computing pass^1 per (agent, task) with Polars.

    python benchmarks/bench_reliability.py [--store DIR] [--simulations 1000000] [--shards 20] [--repeat 3]

Without an existing store at ``--store`` one is made the way users make one: ``tauk.synth.write_results``
(``--shards`` agents on airline, 8 trials a task) shard by shard, each shard ingested with ``tauk.ingest`` and its
JSON deleted. Then ``tauk.stats.reliability(tauk.open(store))`` (outcome, resource and trajectory consistency:
the trials' columns and the tool names of the successful trials are read) is timed, best of ``--repeat``, wall
clock, one process.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(store: Path, n_sims: int, shards: int) -> None:
    import tauk
    from tauk.synth import write_results

    trials = 8
    per = n_sims // shards
    tasks = per // trials
    for i in range(shards):
        tmp = Path(tempfile.mkdtemp(prefix="tauk-bench-rel-"))
        try:
            t = time.perf_counter()
            write_results(tmp, {f"agent-{i:02d}": 0.3 + 0.4 * i / max(shards - 1, 1)}, ["airline"], tasks, trials,
                          seed=1000 + i)  # fmt: skip
            tauk.ingest(tmp, store, progress=False)
            print(f"shard {i + 1}/{shards}: {tasks * trials} simulations, {time.perf_counter() - t:.1f} s",
                  flush=True)  # fmt: skip
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "tauk-bench-reliability-store")
    ap.add_argument("--simulations", type=int, default=1_000_000)
    ap.add_argument("--shards", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args(argv)
    if not (args.store / "manifest.json").exists():
        build(args.store, args.simulations, args.shards)
    if args.build_only:
        return 0
    import polars as pl

    import tauk
    from tauk.stats import reliability

    res = tauk.open(args.store)
    n = res.scan("trials").select(pl.len()).collect().item()
    base, full = [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        tr = tauk.open(args.store).trials_columns(["agent", "task_id", "reward"])
        tr.group_by("agent", "task_id").agg(pl.col("reward").eq(1.0).mean())
        base.append(time.perf_counter() - t)
        t = time.perf_counter()
        prof = reliability(tauk.open(args.store))
        full.append(time.perf_counter() - t)
    b, f = min(base), min(full)
    g = prof.to_frame()
    print(f"store: {n:,} simulations, {g.height} groups, {int(g['n_tasks'].sum()):,} tasks")
    print(f"baseline (trial columns + pass^1 per task): {b:.2f} s")
    print(f"reliability profile (outcome + resources + trajectories): {f:.2f} s  (x{f / b:.1f} the baseline; "
          f"target <= 10 s: {'met' if f <= 10 else 'MISSED'})")
    return 0 if f <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())

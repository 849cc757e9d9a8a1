"""Speed of the reliability profile on a store of 10⁶ simulations (target ≤ 10 s), against a baseline measured in
the same run: reading the same trial columns from the store and computing pass^1 per (agent, task) with Polars.

    python benchmarks/bench_reliability.py [--store DIR] [--simulations 1000000] [--shards 20] [--repeat 3]
        [--replicate] [--delete]

Without an existing store at ``--store`` one is made the way users make one: ``tauk.synth.write_results``
(``--shards`` agents on airline, 8 trials a task) shard by shard, each shard ingested with ``tauk.ingest`` and its
JSON deleted (~3 minutes a 50,000-simulation shard on this machine). With ``--replicate`` only the first shard is
synthesised and ingested; the other ``--shards − 1`` are copies of its Parquet parts with the run id, the agent and
the simulation ids renamed, each committed with its own entry (the store's layout: ``tauk.store._layout``) — the
same rows, sizes and types a shard of its own would have, so the same work for the reliability profile (whose cost
does not depend on the values). The ``messages`` parts, which the profile does not read, are hard links to the first
shard's (their ids are the first shard's: such a store is for this benchmark only). ``--delete`` removes the store afterwards. Then ``tauk.stats.reliability(tauk.open(store))`` (outcome, resource and trajectory consistency:
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


def replicate(store: Path, shards: int) -> None:
    """Copies 2 … ``shards`` of the store's one run: every frame's parts with ``run_id``, ``agent`` (runs, trials)
    and ``simulation_id`` renamed, written under the copy's run key with its own entry."""
    import json
    import os

    import polars as pl

    from tauk.store._layout import new_token, read_entries, run_key, write_entry

    _, entries = read_entries(store)
    base = [e for e in entries if "#copy" not in e["run_id"]]
    if len(base) != 1:
        raise SystemExit(f"{store}: --replicate needs a store of one synthesised run (it has {len(base)})")
    base = base[0]
    done = {e["run_id"] for e in entries}
    for i in range(1, shards):
        t = time.perf_counter()
        rid, token = f"{base['run_id']}#copy{i:02d}", new_token()
        if rid in done:
            continue
        key = run_key(rid)
        files, sizes = {}, {}
        for frame, rels in base["files"].items():
            files[frame] = []
            for rel in rels:
                name = rel.rsplit("/", 1)[1].rsplit("-", 1)[0] + f"-{token}.parquet"
                new = f"{frame}/run={key}/{name}"
                (store / new).parent.mkdir(parents=True, exist_ok=True)
                if frame == "messages":  # not read by the profile: the first shard's parts, linked
                    os.link(store / rel, store / new)
                    files[frame].append(new)
                    sizes[new] = (store / new).stat().st_size
                    continue
                df = pl.read_parquet(store / rel).with_columns(run_id=pl.lit(rid, pl.String))
                if "agent" in df.columns:
                    df = df.with_columns(pl.col("agent") + f"-copy{i:02d}")
                if "simulation_id" in df.columns:
                    df = df.with_columns((pl.lit(f"copy{i:02d}-") + pl.col("simulation_id")).alias("simulation_id"))
                df.write_parquet(store / new, statistics=True)
                files[frame].append(new)
                sizes[new] = (store / new).stat().st_size
        entry = json.loads(json.dumps(base))
        entry.update(run_id=rid, run_key=key, token=token, files=files, sizes=sizes,
                     source=f"{base['source']}#copy{i:02d}", hash=f"{base['hash']}#copy{i:02d}")  # fmt: skip
        write_entry(store, entry)
        print(f"copy {i}/{shards - 1}: {time.perf_counter() - t:.1f} s", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "tauk-bench-reliability-store")
    ap.add_argument("--simulations", type=int, default=1_000_000)
    ap.add_argument("--shards", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--replicate", action="store_true", help="synthesise one shard, copy it for the others")
    ap.add_argument("--delete", action="store_true", help="remove the store at the end")
    args = ap.parse_args(argv)
    if not (args.store / "manifest.json").exists():
        build(args.store, args.simulations // args.shards if args.replicate else args.simulations,
              1 if args.replicate else args.shards)  # fmt: skip
    if args.replicate:
        from tauk.store._layout import read_entries

        if len(read_entries(args.store)[1]) < args.shards:
            replicate(args.store, args.shards)
    if args.build_only:
        return 0
    try:
        return _time(args)
    finally:
        if args.delete:
            shutil.rmtree(args.store, ignore_errors=True)


def _time(args) -> int:
    import polars as pl

    import tauk
    from tauk.stats import reliability

    res = tauk.open(args.store)
    n = res.scan("trials").select(pl.len()).collect().item()
    base, full, cpu = [], [], []
    for _ in range(args.repeat):
        t = time.perf_counter()
        tr = tauk.open(args.store).trials_columns(["agent", "task_id", "reward"])
        tr.group_by("agent", "task_id").agg(pl.col("reward").eq(1.0).mean())
        base.append(time.perf_counter() - t)
        t, c = time.perf_counter(), time.process_time()
        prof = reliability(tauk.open(args.store))
        full.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    b, f = min(base), min(full)
    g = prof.to_frame()
    import os

    size = sum(f.stat().st_size for f in args.store.rglob("*.parquet"))
    print(f"store: {n:,} simulations, {g.height} groups, {int(g['n_tasks'].sum()):,} tasks, "
          f"{size / 2**20:,.0f} MiB of Parquet{' (1 synthesised shard + copies)' if args.replicate else ''}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; best of {args.repeat}")
    print(f"baseline (trial columns + pass^1 per task): {b:.2f} s")
    print(f"reliability profile (outcome + resources + trajectories): {f:.2f} s  (x{f / b:.1f} the baseline; "
          f"target <= 10 s: {'met' if f <= 10 else 'MISSED'})")
    print(f"CPU time of the profile (all threads of this process): {min(cpu):.2f} s; every run: "
          f"wall {', '.join(f'{x:.2f}' for x in full)} s, CPU {', '.join(f'{x:.2f}' for x in cpu)} s")
    return 0 if f <= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())

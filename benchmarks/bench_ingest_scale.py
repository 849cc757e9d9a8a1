"""Ingest cost against the size of the store: is it linear in the number of sources?

    python benchmarks/bench_ingest_scale.py [--files 2000] [--batch 100] [--dir DIR]

Writes ``--files`` one-simulation results files (cut from the sample ``data/baseline_airline.json``, each simulation
with its own id and only its task), then measures, in this process:

* **one call**: ``tauk.ingest`` of all the files into an empty store, against ``tauk.ingest`` of the first
  ``--batch`` of them into an empty store (the median of three) — the cost per file of the whole against that of
  the first batch;
* **in batches**: the files ingested ``--batch`` at a time into one store (the last batch goes into a store of
  ``files - batch`` runs) — each batch's cost per file against the first batch's;
* **nothing new**: an ingest of all of them again (every source unchanged).

Target: every per-file ratio ≤ 1.3 (the cost does not grow with the store). Exits 1 when missed. The ratios are
measured in the same run; no wall time is asserted anywhere.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "data" / "baseline_airline.json"


def write_files(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    doc = json.loads(SAMPLE.read_text())
    tasks = {str(t["id"]): t for t in doc["tasks"]}
    sims = doc["simulations"]
    paths = []
    for i in range(n):
        sim = dict(sims[i % len(sims)], id=f"bench-sim-{i:06d}")
        one = dict(doc, simulations=[sim], tasks=[tasks[str(sim["task_id"])]])
        path = folder / f"run-{i:05d}.json"
        path.write_text(json.dumps(one))
        paths.append(path)
    return paths


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, all its threads) of ``fn()``: the machine is shared, so the
    ratios are judged on CPU time, which other users' load does not inflate; both are printed."""
    gc.collect()
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args(argv)
    os.environ["TQDM_DISABLE"] = "1"
    import tauk

    work = args.dir or Path(tempfile.mkdtemp(prefix="tauk-ingest-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        files = write_files(work / "json", args.files)
        b = args.batch
        ingest = lambda paths, store: tauk.ingest([str(p) for p in paths], store, progress=False)  # noqa: E731
        ingest(files[:10], work / "warm")  # imports and first-call costs out of the way
        n_first, n_all = b, len(files)
        runs = sorted((timed(lambda j=j: ingest(files[:b], work / f"first-{j}")) for j in range(3)), key=lambda x: x[1])
        first = [x / n_first for x in runs[1]]  # the median of three: one small measurement is noisy
        whole = [x / n_all for x in timed(lambda: ingest(files, work / "whole"))]
        print(f"{n_all:,} one-simulation files; per file (wall / CPU): first {b} into an empty store "
              f"{first[0] * 1e3:.1f} / {first[1] * 1e3:.1f} ms, all {n_all:,} in one call {whole[0] * 1e3:.1f} / "
              f"{whole[1] * 1e3:.1f} ms = {whole[0] / first[0]:.2f}x / {whole[1] / first[1]:.2f}x")  # fmt: skip
        store = work / "batches"
        per = []
        for i in range(0, n_all, b):
            chunk = files[i : i + b]
            per.append([x / len(chunk) for x in timed(lambda chunk=chunk: ingest(chunk, store))])
        worst = max(p[1] for p in per) / per[0][1]
        print(f"in batches of {b} into one store, per file (wall / CPU): first batch {per[0][0] * 1e3:.1f} / "
              f"{per[0][1] * 1e3:.1f} ms, last (into {n_all - b:,} runs) {per[-1][0] * 1e3:.1f} / "
              f"{per[-1][1] * 1e3:.1f} ms = {per[-1][0] / per[0][0]:.2f}x / {per[-1][1] / per[0][1]:.2f}x; worst "
              f"batch (CPU) {worst:.2f}x")  # fmt: skip
        print("  CPU ms per file, batch by batch: " + " ".join(f"{p[1] * 1e3:.0f}" for p in per))
        again = timed(lambda: ingest(files, store))
        print(f"all {n_all:,} again, nothing changed: {again[0] / n_all * 1e3:.2f} / {again[1] / n_all * 1e3:.2f} ms "
              "per file")  # fmt: skip
        n = len(tauk.open(store).runs)
        ok = whole[1] / first[1] <= 1.3 and per[-1][1] / per[0][1] <= 1.3 and n == n_all
        print(f"{n:,} runs in the store; target (CPU per file ≤ 1.3x the first batch's, in one call and for the last "
              f"batch): {'met' if ok else 'MISSED'}")  # fmt: skip
        return 0 if ok else 1
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""Corpus scale: ingest once into a store, then query it, against reading the JSON again (figures and ratios
measured in the same run).

    python benchmarks/bench_corpus.py [--simulations 1000000] [--files 100] [--dir DIR] [--quick]

A synthetic corpus in the shape of the real logs (``tauk.synth.write_corpus``: about 15 kB of JSON a simulation,
messages carrying provider payloads like real files) is written as ``--files`` shards of five agents × two domains,
then:

* ingest a quarter of the shards, then all of them: peak RSS against the largest single source file (target ≤ 2×,
  and the same whatever the number of files);
* ``tauk summary STORE`` with BCa intervals: time and peak RSS (targets ≤ 5 s, ≤ 1 GB);
* ``tauk audit STORE``: peak RSS (target ≤ 4 GB), and its time against ``load`` + audit of the same simulations
  from the JSON on a subset that fits in memory (target ≥ 3×);
* a new summary from the store against loading the JSON again (target ≥ 20×);
* the store's parts scored on a local Dask cluster of two worker processes: the same numbers, both times printed.

Every command runs in a fresh process whose peak resident set (VmHWM) is read at its end. Exits 1 when a target
is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

AGENTS = {"atlas-large": 0.75, "atlas-small": 0.55, "baseline": 0.4, "nova": 0.65, "orbit": 0.5}
DOMAINS = ("airline", "retail")

PEAK = """
import json, sys, time
import polars, scipy.stats, tauk, tauk.stats, tauk.scoring, tauk.store  # the interpreter's own footprint first
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
base = hwm()
t = time.perf_counter()
code = sys.argv[1]
exec(code, {"__name__": "__bench__", "ARGS": sys.argv[2:]})
print(json.dumps({"seconds": time.perf_counter() - t, "peak": hwm(), "data": hwm() - base}))
"""


def measure(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; its wall time (from the start of ``code``) and peak RSS."""
    out = subprocess.run([sys.executable, "-c", PEAK, code, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_corpus(folder: Path, n_sims: int, n_files: int, payload: int) -> list[Path]:
    from tauk.synth import write_corpus as one

    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "corpus.json"
    want = {"simulations": n_sims, "files": n_files, "payload": payload}
    if marker.exists() and json.loads(marker.read_text()) == want:
        return sorted(folder.glob("shard-*.json"))
    for f in folder.glob("shard-*.json"):
        f.unlink()
    per = -(-n_sims // n_files)
    combos = [(a, d) for a in AGENTS for d in DOMAINS]
    paths = []
    for i in range(n_files):
        agent, domain = combos[i % len(combos)]
        path = folder / f"shard-{i:04d}_{agent}_{domain}.json"
        one(path, n_simulations=per, payload_bytes=payload, seed=i, agent=agent, level=AGENTS[agent],
            domain=domain, n_tasks=250)  # fmt: skip
        paths.append(path)
        if i % 10 == 9:
            print(f"  wrote {i + 1}/{n_files} shards", file=sys.stderr)
    marker.write_text(json.dumps(want))
    return paths


def measure_cli(*argv: str) -> dict:
    """Run ``python -m tauk ARGV`` (the command line a user runs) under GNU time: wall time and peak RSS, and the
    peak of an interpreter that only imports tauk and Polars (subtracted to give what the data cost)."""
    def run(cmd: list[str]) -> tuple[float, int]:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], capture_output=True, text=True, check=True)
        seconds, kb = p.stderr.strip().splitlines()[-1].split()
        return float(seconds), int(kb) * 1024

    seconds, peak = run([sys.executable, "-m", "tauk", *argv])
    _, base = run([sys.executable, "-c", "import polars, tauk, tauk.store, tauk.cli"])
    return {"seconds": seconds, "peak": peak, "data": peak - base}


SUMMARY = ("import tauk; s = tauk.stats.summarize(tauk.load(ARGS[0]), by=('agent', 'domain'), k=[1, 2, 4], "
           "method='bca', resamples=1999); print(s.pass_hat_k.height)")  # fmt: skip
SUMMARY_JSON = ("import tauk; s = tauk.stats.summarize(tauk.load(ARGS), by=('agent', 'domain'), k=[1, 2, 4], "
                "method='bca', resamples=1999)")  # fmt: skip
AUDIT_STORE = "import tauk; a = tauk.audit(tauk.open(ARGS[0], run_id=ARGS[1:] or None)); print(a.totals())"
AUDIT_JSON = "import tauk; a = tauk.audit(tauk.load(ARGS)); print(a.totals())"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--payload-bytes", type=int, default=1000)
    ap.add_argument("--dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "tauk-corpus")
    ap.add_argument("--subset", type=int, default=4, help="files in the subset loaded from JSON for the audit")
    ap.add_argument("--quick", action="store_true", help="100,000 simulations in 20 files")
    args = ap.parse_args(argv)
    if args.quick:
        args.simulations, args.files = 100_000, 20
    t0 = time.perf_counter()
    shards = write_corpus(args.dir / "json", args.simulations, args.files, args.payload_bytes)
    size = sum(p.stat().st_size for p in shards)
    largest = max(p.stat().st_size for p in shards)
    print(f"corpus: {args.simulations:,} simulations in {len(shards)} files, {size / 1e9:.2f} GB "
          f"(largest {largest / 1e6:.0f} MB; written in {time.perf_counter() - t0:.0f} s)")  # fmt: skip
    missed = []

    def check(ok: bool, what: str) -> str:
        if not ok:
            missed.append(what)
        return "ok" if ok else "MISSED"

    store = args.dir / "store"
    import shutil

    shutil.rmtree(store, ignore_errors=True)
    quarter = shards[: max(1, len(shards) // 4)]
    q = measure_cli("ingest", *map(str, quarter), "--store", str(store), "--quiet")
    f = measure_cli("ingest", *map(str, shards), "--store", str(store), "--quiet")
    print(f"ingest {len(quarter)} files: {q['seconds']:.0f} s, peak {q['peak'] / 1e9:.2f} GB, of which "
          f"{q['data'] / 1e6:.0f} MB above the interpreter's = {q['data'] / largest:.2f}x the largest file")
    print(f"ingest all {len(shards)} (the other {len(shards) - len(quarter)} new): {f['seconds']:.0f} s, peak "
          f"{f['peak'] / 1e9:.2f} GB, of which {f['data'] / 1e6:.0f} MB above the interpreter's = "
          f"{f['data'] / largest:.2f}x the largest file "
          f"[{check(max(q['data'], f['data']) <= 2 * largest, 'ingest peak ≤ 2x largest file')}]")  # fmt: skip

    s = measure(SUMMARY, str(store))
    print(f"summary from the store (BCa, 1,999 resamples, k = 1, 2, 4): {s['seconds']:.1f} s, peak "
          f"{s['peak'] / 1e9:.2f} GB [{check(s['seconds'] <= 5 and s['peak'] <= 1e9, 'summary ≤ 5 s, ≤ 1 GB')}]")
    j = measure(SUMMARY_JSON, *map(str, shards))
    ratio = j["seconds"] / s["seconds"]
    print(f"the same summary loading the JSON again: {j['seconds']:.1f} s, peak {j['peak'] / 1e9:.2f} GB: store "
          f"{ratio:.1f}x faster [{check(ratio >= 20, 'store summary ≥ 20x faster than JSON')}]")  # fmt: skip

    a = measure(AUDIT_STORE, str(store))
    print(f"audit of the whole store: {a['seconds']:.0f} s, peak {a['peak'] / 1e9:.2f} GB "
          f"[{check(a['peak'] <= 4e9, 'audit ≤ 4 GB')}]")  # fmt: skip
    subset = shards[: args.subset]
    import tauk
    from tauk.store import read_manifest

    ids = [e["run_id"] for e in read_manifest(store)["sources"]
           if Path(e["source"]).name in {p.name for p in subset}]  # fmt: skip
    a_s = measure(AUDIT_STORE, str(store), *ids)
    a_j = measure(AUDIT_JSON, *map(str, subset))
    ratio = a_j["seconds"] / a_s["seconds"]
    print(f"audit of {len(subset)} files: store {a_s['seconds']:.1f} s (peak {a_s['peak'] / 1e9:.2f} GB), load + "
          f"audit of the JSON {a_j['seconds']:.1f} s (peak {a_j['peak'] / 1e9:.2f} GB): {ratio:.1f}x "
          f"[{check(ratio >= 3, 'store audit ≥ 3x faster')}]")  # fmt: skip

    from distributed import Client, LocalCluster

    from tauk.distributed import score_distributed, task_counts_distributed

    os.environ["TQDM_DISABLE"] = "1"  # no progress bars in the printed figures

    t = time.perf_counter()
    one = tauk.score(tauk.open(store))
    t_one = time.perf_counter() - t
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:  # fmt: skip
        t = time.perf_counter()
        many = score_distributed(store, client=client)
        t_many = time.perf_counter() - t
        t = time.perf_counter()
        counts = task_counts_distributed(store, client=client, by=("agent", "domain"))
        s_many = tauk.stats.summarize(counts, by=("agent", "domain"), k=[1, 2, 4], method="bca", resamples=1999)
        t_counts = time.perf_counter() - t
    t = time.perf_counter()
    s_one = tauk.stats.summarize(tauk.open(store), by=("agent", "domain"), k=[1, 2, 4], method="bca",
                                 resamples=1999)  # fmt: skip
    t_sone = time.perf_counter() - t
    same_s = s_many.pass_hat_k.equals(s_one.pass_hat_k)
    print(f"summary through per-task counts on two Dask workers: {t_counts:.1f} s, one process from the store "
          f"{t_sone:.1f} s; pass^k identical: {same_s} [{check(same_s, 'counts path identical')}]")  # fmt: skip
    same = many.sort("run_id", "simulation_id").equals(one.sort("run_id", "simulation_id"))
    print(f"scoring the store: one process {t_one:.0f} s, two Dask workers {t_many:.0f} s; identical: {same} "
          f"[{check(same, 'distributed numbers identical')}]")  # fmt: skip
    print("all targets met" if not missed else f"missed: {'; '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

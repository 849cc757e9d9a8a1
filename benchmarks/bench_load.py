"""Loader speed and memory, as ratios against baselines measured in the same run.

    python benchmarks/bench_load.py [--simulations 12500] [--payload-bytes 1000] [--repeat 3] [--file F]

On a synthetic τ²-bench file of ~200 MB whose raw_data payloads have the size (~1 kB a message) and the parse
cost per byte (orjson ~15 ms/MB) of real results files (``--file`` measures any other file):
  * trials frame vs ``json.load`` + pydantic validation of the whole file (the upstream's way): target ≥ 10×
  * trials frame vs ``orjson.loads`` of the same bytes: target ≥ 2×
  * every frame (messages and tool calls too) ≤ 3× the ``orjson.loads`` time
  * peak memory above the interpreter (each in a fresh process, as a multiple of the file size): the trials frame
    and a summary with intervals ≤ 1.5×, the messages frame and ``tauk.audit`` ≤ 2×
Each timing is the best of ``--repeat`` runs. Prints figures and ratios; exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        del out
    return min(times)


PEAK_SNIPPET = """
import sys, tauk, tauk.stats, tauk.scoring
def hwm():  # peak resident set of this process (VmHWM is reset by exec, unlike ru_maxrss)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
base = hwm()
res = tauk.load(sys.argv[1])
what = sys.argv[2]
if what == "trials":
    n = res.trials.height
elif what == "summary":
    n = tauk.stats.summarize(res.trials, k=(1, 2, 4)).pass_hat_k.height
elif what == "messages":
    n = res.messages.height
else:
    n = tauk.audit(res).totals()["n_checked"]
print(base, hwm(), n)
"""

PEAKS = (("trials", 1.5), ("summary", 1.5), ("messages", 2.0), ("audit", 2.0))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--simulations", type=int, default=12500)
    ap.add_argument("--payload-bytes", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--file", type=Path, default=None, help="use this results file instead of generating one")
    args = ap.parse_args()

    import tauk
    from tauk.schema import ResultsModel
    from tauk.synth import write_corpus

    tmp = None
    if args.file is None:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "corpus.json"
        t = time.perf_counter()
        write_corpus(path, n_simulations=args.simulations, payload_bytes=args.payload_bytes, seed=0)
        print(f"generated {path.name} in {time.perf_counter() - t:.1f} s")
    else:
        path = args.file
    size = path.stat().st_size
    data = path.read_bytes()
    print(f"file: {size / 1e6:.1f} MB")

    def upstream():
        with open(path, "rb") as f:
            return ResultsModel.model_validate(json.load(f))

    def orjson_loads():
        return orjson.loads(path.read_bytes())

    def trials():
        return tauk.load(path).trials

    def every_frame():
        res = tauk.load(path)
        return (res.runs, res.trials, res.tasks, res.expected_actions, res.messages, res.tool_calls)

    del data
    t_up = best(upstream, max(1, args.repeat - 1))
    t_or = best(orjson_loads, args.repeat)
    t_tr = best(trials, args.repeat)
    t_all = best(every_frame, args.repeat)
    frames = every_frame()
    print(f"json.load + pydantic : {t_up:8.3f} s")
    print(f"orjson.loads         : {t_or:8.3f} s")
    print(f"tauk trials frame    : {t_tr:8.3f} s   ({frames[1].height} simulations)")
    print(f"tauk every frame     : {t_all:8.3f} s   ({frames[4].height} messages, {frames[5].height} tool calls)")

    peaks = {}
    for what, _ in PEAKS:
        out = subprocess.run([sys.executable, "-c", PEAK_SNIPPET, str(path), what], capture_output=True, text=True,
                             check=True)  # fmt: skip
        base, peak, _n = (int(x) for x in out.stdout.split())
        peaks[what] = peak - base
        print(f"peak RSS, {what:9s}: {peak / 1e6:8.1f} MB ({(peak - base) / 1e6:.1f} MB above the interpreter's "
              f"{base / 1e6:.1f} MB)")

    checks = [
        ("trials vs json.load+pydantic (>= 10x)", t_up / t_tr, 10.0, True),
        ("trials vs orjson.loads (>= 2x)", t_or / t_tr, 2.0, True),
        ("every frame / orjson.loads (<= 3x)", t_all / t_or, 3.0, False),
        *((f"{what} peak memory above interpreter / file size (<= {limit}x)", peaks[what] / size, limit, False)
          for what, limit in PEAKS),
    ]
    ok = True
    print()
    for name, value, target, higher in checks:
        met = value >= target if higher else value <= target
        ok &= met
        print(f"{'OK ' if met else 'MISS'} {name}: {value:.2f}")
    if tmp is not None:
        tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

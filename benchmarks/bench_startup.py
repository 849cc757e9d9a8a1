"""Startup of the command line, as a ratio against ``python -c "import polars"`` measured in the same run.

    python benchmarks/bench_startup.py [--repeat 5] [--data data]

Times (best of ``--repeat``, each in a fresh process, alternating so that machine load hits both alike):
  * baseline: ``python -c "import polars"``
  * ``tauk summary DATA`` (the default intervals: the beta-binomial model) and ``tauk summary DATA --ci 0``
Target: ``tauk summary DATA`` ≤ 2× the baseline. Prints the times, the ratios and which SciPy modules the command
imports; exits 1 if the target is missed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 2.0


def run(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - t0


def scipy_modules(argv: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True, text=True, env=env, cwd=ROOT)
    mods = {ln.rsplit("|", 1)[-1].strip() for ln in p.stderr.splitlines() if "| " in ln}
    return sorted(m for m in mods if m.count(".") == 1 and m.startswith("scipy."))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default="data")
    a = ap.parse_args()
    cmds = {
        "python -c 'import polars'": [sys.executable, "-c", "import polars"],
        f"tauk summary {a.data}": [sys.executable, "-m", "tauk", "summary", a.data, "--quiet"],
        f"tauk summary {a.data} --ci 0": [sys.executable, "-m", "tauk", "summary", a.data, "--quiet", "--ci", "0"],
    }
    for argv in cmds.values():  # warm the file cache
        run(argv)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(a.repeat):
        for name, argv in cmds.items():
            times[name].append(run(argv))
    base = min(times["python -c 'import polars'"])
    print(f"best of {a.repeat} (seconds); ratio against the baseline")
    for name, ts in times.items():
        print(f"  {name:<40} {min(ts):7.3f} s   {min(ts) / base:5.2f}×")
    summary = list(cmds)[1]
    ratio = min(times[summary]) / base
    print(f"SciPy modules `{summary}` imports: {', '.join(scipy_modules(cmds[summary][1:])) or 'none'}")
    ok = ratio <= TARGET
    print(f"target: {summary} ≤ {TARGET}× the baseline: {'met' if ok else 'MISSED'} ({ratio:.2f}×)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

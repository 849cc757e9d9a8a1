"""Startup of the command line, as a ratio against ``python -c "import polars"`` measured in the same run.

    python benchmarks/bench_startup.py [--repeat 5] [--data data]

Wall times of whole commands (median and best of ``--repeat``, each in a fresh process, alternating so that machine
load hits all alike):
  * baseline: ``python -c "import polars"``
  * ``tauk summary DATA`` (the default intervals: the beta-binomial model) and ``tauk summary DATA --ci 0``, run as
    the installed ``tauk`` command (the console script beside this Python; its one line ``from tauk.cli import
    run; run()`` when tauk is not installed)
  * for where the time goes: ``python -c "import polars, numpy"`` (the floor of any summary) and ``tauk --help``
    (every module of the command line imported, nothing loaded)
Python runs as installed: bytecode cached (pip compiles a package when it installs it). The bytecode goes to a
temporary ``PYTHONPYCACHEPREFIX``, and ``PYTHONDONTWRITEBYTECODE`` (set on some CI machines and shells, where every
run compiles tauk's modules from source again) is dropped; ``--no-bytecode`` measures that case instead.
Target: ``tauk summary DATA`` ≤ 2× the baseline, on the medians. Prints the times, the ratios and which SciPy
modules the command imports; exits 1 if the target is missed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 2.0
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPATH": str(ROOT)}


def run(argv: list[str]) -> float:
    env = ENV
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    return time.perf_counter() - t0


ENTRY = "from tauk.cli import run; run()"  # what the installed `tauk` script runs


def tauk(*args: str) -> list[str]:
    """The ``tauk`` command as a user runs it: the console script installed beside this Python (no ``python -m``,
    whose runpy costs ~4 ms), or its one line when tauk is not installed."""
    script = Path(sys.executable).parent / "tauk"
    return [str(script), *args] if script.is_file() else [sys.executable, "-c", ENTRY, *args]


def scipy_modules(args: list[str]) -> list[str]:
    env = ENV
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", ENTRY, *args], capture_output=True, text=True,
                       env=env, cwd=ROOT)  # fmt: skip
    mods = {ln.rsplit("|", 1)[-1].strip() for ln in p.stderr.splitlines() if "| " in ln}
    return sorted(m for m in mods if m.count(".") == 1 and m.startswith("scipy."))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default="data")
    ap.add_argument("--no-bytecode", action="store_true", help="measure with PYTHONDONTWRITEBYTECODE=1")
    a = ap.parse_args()
    if a.no_bytecode:
        ENV["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="tauk-bench-pyc-")
    cmds = {
        "python -c 'import polars'": [sys.executable, "-c", "import polars"],
        f"tauk summary {a.data}": tauk("summary", a.data, "--quiet"),
        f"tauk summary {a.data} --ci 0": tauk("summary", a.data, "--quiet", "--ci", "0"),
        # where the time goes: the two libraries every summary needs, and tauk's whole command line imported
        "python -c 'import polars, numpy'": [sys.executable, "-c", "import polars, numpy"],
        "tauk --help": tauk("--help"),
    }
    for argv in cmds.values():  # warm the file cache
        run(argv)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(a.repeat):
        for name, argv in cmds.items():
            times[name].append(run(argv))
    med = {k: statistics.median(ts) for k, ts in times.items()}
    best = {k: min(ts) for k, ts in times.items()}
    base = "python -c 'import polars'"
    print(f"{a.repeat} runs each ({'no bytecode cache' if a.no_bytecode else 'bytecode cached, as installed'});"
          " seconds; ratio against the baseline")
    print(f"  {'':<40} {'median':>8} {'ratio':>7}   {'best':>7} {'ratio':>7}")
    for name in times:
        print(f"  {name:<40} {med[name]:8.3f} {med[name] / med[base]:6.2f}×   {best[name]:7.3f} "
              f"{best[name] / best[base]:6.2f}×")
    summary = list(cmds)[1]
    ratio = med[summary] / med[base]
    print(f"SciPy modules `{summary}` imports: {', '.join(scipy_modules(['summary', a.data, '--quiet'])) or 'none'}")
    ok = ratio <= TARGET
    print(f"target: {summary} ≤ {TARGET}× the baseline (medians): {'met' if ok else 'MISSED'} ({ratio:.2f}×)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

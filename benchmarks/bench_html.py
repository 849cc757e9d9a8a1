"""Size and time of the self-contained HTML page (``tauk html``) on the bundled sample and on real files.

    PYTHONPATH=. python benchmarks/bench_html.py [--out benchmarks/results/bench_html.txt]

For each input: the page ``tauk html`` writes with its defaults (summary by agent × domain, the pass^k figure, the
viewer of the failed simulations: at most 200 simulations, 40 messages each, 2000 characters a text), then the same
with no cap on simulations; the size in KiB, the simulations shown of those failed, the wall time. Real files are
read from ``../shared/data`` when it is there (skipped otherwise). Times are of this machine and this run only
(after one untimed page, so imports are not counted); they include the summary's intervals.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import tauk
from tauk.html import select_trials, write_report

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "tau2"
INPUTS = {
    "sample data/ (6 files, 600 simulations)": ROOT / "data",
    "shared gpt-4.1 telecom test (1 file)": SHARED / "v0.1_gpt-4.1_telecom-test_1trial.json",
    "shared ft-gpt-4.1 telecom test (1 file)": SHARED / "v0.1_ft-gpt-4.1_telecom-test_1trial.json",
    "shared qwen2.5-7b airline (premature endings)": SHARED / "v0.1_qwen2.5-7b_airline_1trial_premature-endings.json",
}


def page(res, path: Path, max_simulations):
    t = time.perf_counter()
    s = tauk.stats.summarize(res, by=("agent", "domain"))
    fig = tauk.plot.pass_k_curve(s)
    write_report(path, res, summary=s, figures=[("pass^k", fig)], max_simulations=max_simulations)
    return path.stat().st_size / 1024, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = ["tauk html page size (KiB) and time (s): defaults (max_simulations=200) | no simulation cap",
             f"{'input':48} {'failed':>6} {'shown':>5} {'KiB':>7} {'s':>5} | {'KiB':>7} {'s':>5}"]
    with tempfile.TemporaryDirectory() as tmp:
        page(tauk.load(SHARED / "v0.2_gpt-4.1-mini_airline_1sim.json" if SHARED.exists() else ROOT / "data"),
             Path(tmp) / "warm.html", 1)  # imports and first-use caches out of the timings
        for name, src in INPUTS.items():
            if not src.exists():
                lines.append(f"{name:48} skipped: {src} not found")
                continue
            res = tauk.load(src, strict=False)
            n_failed = select_trials(res.trials, failed=True).height
            kib, sec = page(res, Path(tmp) / "a.html", 200)
            shown = (Path(tmp) / "a.html").read_text().count("<details class='tauk-sim'")
            kib_all, sec_all = page(res, Path(tmp) / "b.html", None)
            lines.append(f"{name:48} {n_failed:6d} {shown:5d} {kib:7.0f} {sec:5.1f} | {kib_all:7.0f} "
                         f"{sec_all:5.1f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()

"""Round trip and speed of the leaderboard recovery (:mod:`tauk.leaderboard.recovery`).

    nice python benchmarks/leaderboard_recovery.py [--draws 1000] [--seed 0] [--board ../shared/data/leaderboard]

1. **Round trip.** Synthetic runs: T tasks × n = 4 trials, per-task success p_t drawn from four families (the
   τ-bench gpt-4o fit Beta(0.63, 0.87), U-shaped Beta(0.3, 0.3), moderate Beta(2, 2), and a mixture of near-certain
   and coin-flip tasks); c_t ~ Binomial(4, p_t); pass^1 … pass^4 published rounded to one decimal; recovered with
   the rounding known (``decimals=1``, the publisher's rule) and with the rounding read from the figures (the
   default: a row whose four figures end in .0 is read as integers and may come out ambiguous). Exact = the one
   histogram found equals the truth. T = 50 and 114 (the leaderboard's), and 200 / 400 where one decimal stops
   determining the histogram.
2. **False fits.** Figures that no histogram made (pass^1 uniform on 20–95, each next pass^k a random 60–100 % /
   80–100 % of the previous, rounded to one or two decimals): how often some histogram of a layout reproduces them
   anyway, against the false-fit chance the library reports for that layout (its upper bound).
3. **Speed.** Reading every file of the shared leaderboard and recovering every row (median of 7), the whole
   ``analyze`` (recovery, default intervals of every row, rankings, voice metrics; median of 3), against a
   baseline measured in the same run: brute-force enumeration of all C(T + 4, 4) histograms of one 50-task row.
"""

from __future__ import annotations

import argparse
import time
from math import comb
from pathlib import Path

import numpy as np

from tauk.io.leaderboard import load_interaction_metrics, load_leaderboard
from tauk.leaderboard import Layout, analyze, fit_histogram, recover, recover_row
from tauk.leaderboard.recovery import rounding_tolerance

FAMILIES = ("taubench", "u-shaped", "moderate", "mixture")


def draw_p(family: str, T: int, rng: np.random.Generator) -> np.ndarray:
    if family == "taubench":
        return rng.beta(0.63, 0.87, T)
    if family == "u-shaped":
        return rng.beta(0.3, 0.3, T)
    if family == "moderate":
        return rng.beta(2.0, 2.0, T)
    easy = rng.random(T) < 0.5
    return np.where(easy, rng.choice([0.02, 0.98], T), rng.uniform(0.3, 0.7, T))


def published(h: tuple[int, ...], n: int = 4) -> dict[int, float]:
    T = sum(h)
    return {k: round(100.0 * sum(h[c] * comb(c, k) / comb(n, k) for c in range(n + 1)) / T, 1) for k in range(1, n + 1)}


def round_trip(T: int, draws: int, rng: np.random.Generator) -> dict[str, float]:
    out = {"known": 0, "read": 0, "ambiguous_read": 0, "wrong": 0}
    for i in range(draws):
        p = draw_p(FAMILIES[i % len(FAMILIES)], T, rng)
        c = rng.binomial(4, p)
        h = tuple(int((c == j).sum()) for j in range(5))
        pub = published(h)
        known = recover_row(pub, tasks=T, trials=4, decimals=1, alternatives=False)
        read = recover_row(pub, tasks=T, trials=4, alternatives=False)
        out["known"] += known.status == "recovered" and known.histogram == h
        out["read"] += read.status == "recovered" and read.histogram == h
        out["ambiguous_read"] += read.status == "ambiguous"
        out["wrong"] += (known.status == "recovered" and known.histogram != h) + (
            read.status == "recovered" and read.histogram != h)  # fmt: skip
    return {k: v / draws for k, v in out.items()} | {"wrong_n": out["wrong"]}


def false_fits(draws: int, rng: np.random.Generator) -> None:
    print(f"# False fits: random figures ({draws} per cell) against the reported false-fit chance\n")
    print("| layout | decimals | share that fit | reported chance (bound) |")
    print("|---|---:|---:|---:|")
    for layout, d in [(Layout(50, 4), 1), (Layout(114, 4), 1), (Layout(97, 4), 1), (Layout(114, 4), 2),
                      (Layout(114, 4, 1), 1), (Layout(114, 4, 3), 1), (Layout(47, 4, 0, "base − 3 lost"), 1)]:  # fmt: skip
        tol, fits, chance = rounding_tolerance(d), 0, 0.0
        for _ in range(draws):
            p1 = rng.uniform(20, 95)
            p2 = rng.uniform(0.6 * p1, p1)
            p3 = rng.uniform(0.8 * p2, p2)
            p4 = rng.uniform(0.8 * p3, p3)
            f = fit_histogram({k: round(v, d) for k, v in enumerate((p1, p2, p3, p4), 1)}, layout, tol, nearest=False)
            fits += f.fits
            chance = f.false_fit_chance
        print(f"| {layout.describe()} | {d} | {100 * fits / draws:.2f} % | {100 * chance:.2g} % |")
    print()


def brute_force_row(pub: dict[int, float], T: int, tol: float) -> int:
    """Every histogram of T tasks checked against the figures: the baseline (C(T+4, 4) candidates)."""
    hits = 0
    for h4 in range(T + 1):
        for h3 in range(T + 1 - h4):
            h2, h1 = np.meshgrid(np.arange(T + 1 - h4 - h3), np.arange(T + 1 - h4 - h3), indexing="ij")
            ok = h2 + h1 <= T - h4 - h3
            S = (h1 + 2 * h2 + 3 * h3 + 4 * h4, h2 + 3 * h3 + 6 * h4, h3 + 4 * h4, np.full_like(h1, h4))
            fit = ok.copy()
            for k in range(1, 5):
                fit &= np.abs(100.0 * S[k - 1] / (T * comb(4, k)) - pub[k]) <= tol
            hits += int(fit.sum())
    return hits


def timed(fn, repeat: int) -> float:
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--board", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "leaderboard"))
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"# Round trip: n = 4, published to one decimal, {args.draws} draws per T (families cycled: "
          f"{', '.join(FAMILIES)}), seed {args.seed}\n")
    print("| T | exact, rounding known | exact, rounding read | ambiguous (read) | wrong histograms |")
    print("|---:|---:|---:|---:|---:|")
    for T in (50, 114, 200, 400):
        r = round_trip(T, args.draws if T <= 114 else max(100, args.draws // 5), rng)
        print(f"| {T} | {100 * r['known']:.1f} % | {100 * r['read']:.1f} % | {100 * r['ambiguous_read']:.1f} % | "
              f"{r['wrong_n']} |")
    print("\n(T = 200 and 400 with a fifth of the draws. One decimal determines the histogram while every S_k window "
          "is narrower than one integer: T·C(4,2)·0.1/100 < 1, i.e. T < 167.)\n")

    false_fits(max(1000, args.draws * 3), rng)
    board = Path(args.board)
    if not board.is_dir():
        print(f"no leaderboard folder at {board}: speed part skipped")
        return
    frame = load_leaderboard(board)
    metrics = load_interaction_metrics(board)
    n_files = frame["submission_id"].n_unique()
    t_read = timed(lambda: (load_leaderboard(board), load_interaction_metrics(board)), 7)
    t_rec = timed(lambda: recover(load_leaderboard(board), metrics=load_interaction_metrics(board)), 7)
    t_all = timed(lambda: analyze(board), 3)
    rec = recover(frame, metrics=metrics).to_frame()
    row = rec.filter((rec["domain"] == "airline") & (rec["status"] == "recovered") & (rec["trials"] == 4)).row(
        0, named=True)  # fmt: skip
    pub = dict(recover(frame).row(row["submission_id"], "airline").published)
    t = time.perf_counter()
    hits = brute_force_row(pub, 50, row["tolerance"])
    t_brute = time.perf_counter() - t
    t_one = timed(lambda: recover_row(pub, tasks=50, trials=4), 20)
    print(f"# Speed: {n_files} submission files, {rec.height} rows ({int((rec['status'] == 'recovered').sum())} "
          "recovered), median wall time\n")
    print(f"read every file (submissions + interaction metrics): {t_read * 1000:8.1f} ms")
    print(f"read + recover every row                            : {t_rec * 1000:8.1f} ms   (target ≤ 1 s)")
    print(f"analyze: recovery, default intervals, rankings, voice: {t_all * 1000:8.1f} ms")
    print(f"one 50-task row: tauk {t_one * 1000:.2f} ms, brute force over all {comb(54, 4):,} histograms "
          f"{t_brute * 1000:.0f} ms ({hits} fit) — {t_brute / t_one:.0f}× faster")


if __name__ == "__main__":
    main()

"""Fuzz the loaders with seeded mutations of the shared real results files and classify every outcome.

    python tests/fuzz_inputs.py --seed 0 --count 3000 [--jobs 2] [--timeout 10] [--data ../shared/data]

Each mutant (truncation, key deletion, type swaps at random JSON paths, duplicated records with respelled keys,
huge strings, deep nesting, NaN / Infinity / 1e400 / 100-digit integers, lone surrogates, a byte-order mark, NUL,
invalid UTF-8, special files in place of a file or in a scanned folder) is run four ways in a worker process with
a time limit: a strict and a lenient load touching every frame and ``tauk.score``, and the command lines
``tauk summary`` and ``tauk audit``. Every outcome is one of

* ``loaded`` — and then the simulation count and the average reward must equal an independent read of the JSON
  (Python's ``json`` module and plain arithmetic) unless the load report says what was skipped or repaired;
* ``reported`` — loaded, with load-report entries (lenient) or warnings;
* ``named_error`` — a :class:`tauk.TaukError` (API) or one ``tauk: error:`` line and exit status 2 (CLI);
* ``traceback`` — any other exception: a failure; ``hang`` — over the time limit: a failure;
* ``wrong`` — loaded without a report entry but the count or average reward differs: a failure.

The script prints the counts per mutation kind, mode and class, and exits 1 on any failure.
``tests/test_fuzz.py`` runs a small seeded batch of it in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = Path(os.environ.get("TAUK_SHARED_DATA", HERE.parents[0].parent / "shared" / "data"))
MODES = ("strict", "lenient", "summary", "audit")
FAILURES = ("traceback", "hang", "wrong")
KINDS = (
    "truncate", "delete_key", "swap_type", "duplicate_record", "huge_string", "deep_nesting", "special_number",
    "lone_surrogate", "bom", "nul", "invalid_utf8", "special_file",
)  # fmt: skip


# ---------------------------------------------------------------------------------------------------- sources
def sources(data: Path, small_only: bool = False) -> list[Path]:
    """The real results files to mutate (the directory-format run as its folder)."""
    files = sorted((data / "tau2").glob("*.json")) + sorted((data / "taubench").glob("*.json"))
    files += sorted((data / "nonconformant").glob("*.json"))
    if small_only:
        files = [f for f in files if f.stat().st_size < 600_000]
    return files + [data / "tau2-dir-voice"]


# ---------------------------------------------------------------------------------------------------- mutations
def _paths(value: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    """Every JSON path of ``value`` (to depth 6), as tuples of keys / indices."""
    out = [prefix]
    if depth >= 6:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value[:8]):
            out += _paths(v, (*prefix, i), depth + 1)
    return out


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _records(doc: Any) -> list | None:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("simulations"), list):
        return doc["simulations"]
    return None


MARK = "@@tauk-fuzz@@"


def _other_value(rng: random.Random, old: Any) -> Any:
    choices = [None, True, 0, -1, 1.5, "", "abc", "1.9", "$0.05", "nan", [], {}, [1, "a"], {"x": 1}, 10**30]
    choices = [c for c in choices if type(c) is not type(old) or c != old]
    return rng.choice(choices)


def mutate_document(doc: Any, rng: random.Random, kind: str) -> tuple[Any, str | None]:
    """Apply a structural mutation to a parsed document; returns it and (for text-level values) a replacement
    that :func:`render` substitutes for the marker string."""
    paths = [p for p in _paths(doc) if p]
    recs = _records(doc)
    if kind == "delete_key":
        keyed = [p for p in paths if isinstance(p[-1], str)]
        if keyed:
            p = rng.choice(keyed)
            del _get(doc, p[:-1])[p[-1]]
        return doc, None
    if kind == "swap_type":
        p = rng.choice(paths)
        _get(doc, p[:-1])[p[-1]] = _other_value(rng, _get(doc, p))
        return doc, None
    if kind == "duplicate_record" and recs:
        i = rng.randrange(len(recs))
        copy = json.loads(json.dumps(recs[i]))
        if isinstance(copy, dict):
            for key in ("trial", "id", "task_id"):  # the same values, spelled differently
                if key in copy and rng.random() < 0.6:
                    v = copy[key]
                    copy[key] = str(v) if isinstance(v, int) and not isinstance(v, bool) else (
                        int(v) if isinstance(v, str) and v.isdigit() else v)
            copy = dict(sorted(copy.items(), key=lambda _: rng.random()))
        recs.insert(rng.randrange(len(recs) + 1), copy)
        return doc, None
    p = rng.choice(paths)
    if kind == "huge_string":
        _get(doc, p[:-1])[p[-1]] = "x" * rng.choice([1 << 20, 4 << 20])
        return doc, None
    if kind == "deep_nesting":
        n = rng.choice([600, 1000, 3000, 20000])
        _get(doc, p[:-1])[p[-1]] = MARK
        return doc, "[" * n + "]" * n
    if kind == "special_number":
        _get(doc, p[:-1])[p[-1]] = MARK
        return doc, rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" * 100, "-" + "9" * 100])
    if kind == "lone_surrogate":
        _get(doc, p[:-1])[p[-1]] = MARK
        return doc, json.dumps(rng.choice(["\\ud800", "a\\udfff b", "\\udc00\\ud800"]))[1:-1].join('""')
    return doc, None


def render(doc: Any, replacement: str | None) -> bytes:
    text = json.dumps(doc, ensure_ascii=False)
    if replacement is not None:
        text = text.replace(json.dumps(MARK), replacement, 1)
    return text.encode("utf-8", "surrogatepass")


def make_mutant(src: Path, rng: random.Random, kind: str, out: Path) -> Path:
    """Write one mutant of ``src`` into the folder ``out`` and return the path to load."""
    out.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        target = out / src.name
        shutil.copytree(src, target)
        files = sorted((target / "simulations").glob("*.json")) + [target / "results.json"]
        victim = rng.choice(files)
        if kind == "special_file":
            if rng.random() < 0.5:
                victim.unlink()
                os.mkfifo(victim)
            else:
                os.mkfifo(target / "simulations" / "extra.json")
        else:
            victim.write_bytes(_mutate_bytes(victim.read_bytes(), rng, kind))
        return target
    target = out / src.name
    if kind == "special_file":
        folder = out / "scan"
        folder.mkdir()
        shutil.copy(src, folder / src.name)
        os.mkfifo(folder / ("a_" + src.name))
        return folder if rng.random() < 0.7 else folder / ("a_" + src.name)
    target.write_bytes(_mutate_bytes(src.read_bytes(), rng, kind))
    return target


def _mutate_bytes(data: bytes, rng: random.Random, kind: str) -> bytes:
    if kind == "truncate":
        return data[: rng.randrange(max(1, len(data)))]
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind in ("nul", "invalid_utf8"):
        at = rng.randrange(len(data) + 1)
        return data[:at] + (b"\x00" if kind == "nul" else rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + data[at:]
    doc = json.loads(data.decode("utf-8-sig"))
    doc, replacement = mutate_document(doc, rng, kind)
    return render(doc, replacement)


# ------------------------------------------------------------------------------------------ independent read
def independent(path: Path) -> tuple[int, float | None] | None:
    """(simulations, average reward over non-infrastructure simulations with a reward) by Python's json module
    and plain arithmetic; None when the input is not a readable results file for that reading."""

    def read(p: Path) -> Any:
        return json.loads(p.read_bytes().decode("utf-8-sig"))

    try:
        if path.is_dir():
            if (path / "results.json").exists():
                if not all(f.is_file() for f in [path / "results.json", *(path / "simulations").glob("*")]):
                    return None
                sims = [read(f) for f in sorted((path / "simulations").glob("*.json"))]
            else:
                return None
        else:
            if not path.is_file():
                return None
            doc = read(path)
            sims = doc if isinstance(doc, list) else doc.get("simulations")
    except (ValueError, OSError, RecursionError, AttributeError):
        return None
    if not isinstance(sims, list) or not all(isinstance(s, dict) for s in sims):
        return None
    rewards = []
    taubench = isinstance(sims, list) and path.is_file() and isinstance(_safe_doc(path), list)
    distinct, seen = [], set()
    for s in sims:  # the same simulation twice (however its keys are spelled) counts once
        key = (str(s.get("task_id")), _int(s.get("trial"))) if taubench else str(s.get("id"))
        if taubench and key[1] is None:
            key = ("#", len(distinct))
        if key not in seen:
            seen.add(key)
            distinct.append(s)
    sims = distinct
    for s in sims:
        if taubench:
            r = s.get("reward")
        else:
            if s.get("termination_reason") == "infrastructure_error":
                continue
            ri = s.get("reward_info")
            r = ri.get("reward") if isinstance(ri, dict) else None
        if r is not None:
            if not isinstance(r, int | float) or isinstance(r, bool) or not math.isfinite(r):
                return None
            rewards.append(float(r))
    return len(sims), (sum(rewards) / len(rewards) if rewards else None)


def _int(v: Any) -> int | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return int(f) if math.isfinite(f) and f == int(f) else None


def _safe_doc(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return None


# ------------------------------------------------------------------------------------------------ the modes
def run_mode(path: str, mode: str) -> tuple[str, str]:
    """Run one mode on one input in this (worker) process; returns (class, detail)."""
    import warnings

    import tauk
    from tauk.cli import main

    p = Path(path)
    try:
        if mode in ("strict", "lenient"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res = tauk.load(p, strict=mode == "strict", progress=False)
                frames = [res.runs, res.trials, res.tasks, res.expected_actions, res.messages, res.tool_calls]
                _ = [f.height for f in frames]
                tauk.score(res)
            warned = [w for w in caught if issubclass(w.category, tauk.LoadWarning | tauk.scoring.RegradeWarning)]
            if not res.report.ok or warned:
                return "reported", f"{res.report.counts()}"
            want = independent(p)
            t = res.trials
            kept = t.filter(~t["is_infra_error"]) if t.height else t
            n = t.height
            avg = kept["reward"].drop_nulls().mean() if kept.height else None
            if want is None:
                return "loaded", "no independent reading"
            if n != want[0] or not _close(avg, want[1]):
                return "wrong", f"tauk {n} simulations, avg_reward {avg}; independent {want}"
            return "loaded", ""
        args = ["summary", path, "--format", "json"] if mode == "summary" else ["audit", path, "--format", "json"]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = main(args)
        if code == 0:
            json.loads(out.getvalue())
            return ("reported" if "warning" in err.getvalue() else "loaded"), ""
        lines = err.getvalue().strip().splitlines()
        if code == 2 and lines and lines[-1].startswith("tauk: error:"):
            return "named_error", lines[-1][:200]
        return "traceback", f"exit {code}: {err.getvalue()[-300:]}"
    except tauk.TaukError as exc:
        return "named_error", str(exc)[:200]
    except SystemExit as exc:
        return "traceback", f"SystemExit {exc.code}"
    except BaseException:  # noqa: BLE001 - the point: anything else is a failure to report
        return "traceback", traceback.format_exc()[-1500:]


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def _worker_init() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    import tauk  # noqa: F401  (import once per worker)


# ------------------------------------------------------------------------------------------------ driver
def plan(seed: int, count: int, data: Path, small_only: bool = False) -> list[tuple[int, str, Path]]:
    """(mutant number, kind, source) for ``count`` mutants, deterministic for ``seed``."""
    rng = random.Random(seed)
    srcs = sources(data, small_only)
    return [(i, KINDS[i % len(KINDS)], rng.choice(srcs)) for i in range(count)]


def fuzz(seed: int = 0, count: int = 100, data: Path = DEFAULT_DATA, jobs: int = 2, timeout: float = 10.0,
         small_only: bool = False, progress: bool = True) -> tuple[Counter, list[tuple]]:  # fmt: skip
    """Run ``count`` mutants through every mode; returns the counts per (kind, mode, class) and the failures."""
    counts: Counter = Counter()
    failures: list[tuple] = []
    ctx = mp.get_context("spawn")
    work = tempfile.mkdtemp(prefix="tauk-fuzz-")
    pool = ctx.Pool(jobs, initializer=_worker_init, maxtasksperchild=200)
    try:
        pending = []
        for i, kind, src in plan(seed, count, data, small_only):
            rng = random.Random(f"{seed}/{i}")
            path = make_mutant(src, rng, kind, Path(work) / f"m{i:05d}")
            for mode in MODES:
                pending.append((i, kind, src.name, mode, path, pool.apply_async(run_mode, (str(path), mode))))
        t0 = time.perf_counter()
        for n, (i, kind, name, mode, _path, job) in enumerate(pending):
            try:
                cls, detail = job.get(timeout=timeout)
            except mp.TimeoutError:
                cls, detail = "hang", f"over {timeout} s"
                pool.terminate()
                pool = ctx.Pool(jobs, initializer=_worker_init, maxtasksperchild=200)
                for k, rest in enumerate(pending[n + 1 :], start=n + 1):  # resubmit what the old pool held
                    pending[k] = (*rest[:5], pool.apply_async(run_mode, (str(rest[4]), rest[3])))
            counts[(kind, mode, cls)] += 1
            if cls in FAILURES:
                failures.append((i, kind, name, mode, cls, detail))
            if progress and n % 200 == 199:
                print(f"  {n + 1}/{len(pending)} runs, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    finally:
        pool.terminate()
        shutil.rmtree(work, ignore_errors=True)
    return counts, failures


def table(counts: Counter) -> str:
    classes = ("loaded", "reported", "named_error", *FAILURES)
    lines = [f"{'mode':<8} " + " ".join(f"{c:>11}" for c in classes)]
    for mode in MODES:
        row = [sum(v for (_, m, c), v in counts.items() if m == mode and c == cls) for cls in classes]
        lines.append(f"{mode:<8} " + " ".join(f"{x:>11}" for x in row))
    lines.append("")
    lines.append(f"{'kind':<17} " + " ".join(f"{c:>11}" for c in classes))
    for kind in KINDS:
        row = [sum(v for (k, _, c), v in counts.items() if k == kind and c == cls) for cls in classes]
        if any(row):
            lines.append(f"{kind:<17} " + " ".join(f"{x:>11}" for x in row))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=300, help="number of mutants (each run four ways)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--small", action="store_true", help="mutate only the smaller files (faster)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    counts, failures = fuzz(args.seed, args.count, args.data, args.jobs, args.timeout, args.small)
    print(f"{args.count} mutants x {len(MODES)} modes, seed {args.seed}, {time.perf_counter() - t0:.0f} s")
    print(table(counts))
    for f in failures[:30]:
        print("FAILURE", f[:5], "\n   ", f[5].replace("\n", "\n    "))
    print(f"failures: {len(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

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
import subprocess
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


# ------------------------------------------------------------------------------------------------ the store
# A re-ingest killed at seeded write points, readers during re-ingests, mutated entries and links out of the store.
# Every outcome: the store opens with each run's old or new content (numbers identical to a clean ingest once the
# ingest is run again), or a named error; never a traceback, a wrong number or a file touched outside the store.

SAMPLE = HERE.parent / "data"
STORE_SOURCES = ("atlas-large_airline.json", "baseline_airline.json", "baseline_retail.json")

KILLER = r"""
import os, pathlib, signal, sys, json
import polars as pl
at, mode = int(sys.argv[1]), sys.argv[2]
points = [0]

def point(name, after=False):
    points[0] += 1
    if points[0] == at:
        os.kill(os.getpid(), signal.SIGKILL)

def wrap(owner, name):
    real = getattr(owner, name)
    def patched(*args, **kwargs):
        point(name)
        out = real(*args, **kwargs)
        point(name, after=True)
        return out
    setattr(owner, name, patched)

for n in ("replace", "rename", "unlink", "rmdir", "mkdir", "ftruncate", "pwrite"):
    wrap(os, n)
wrap(pathlib.Path, "write_text")
wrap(pathlib.Path, "write_bytes")
real_parquet = pl.DataFrame.write_parquet

def torn_parquet(self, file, *args, **kwargs):
    point("write_parquet")
    real_parquet(self, file, *args, **kwargs)
    points[0] += 1
    if points[0] == at:  # a torn write: half the file, then the kill
        data = pathlib.Path(file).read_bytes()
        pathlib.Path(file).write_bytes(data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)
    point("write_parquet", after=True)

pl.DataFrame.write_parquet = torn_parquet
import tauk
tauk.ingest(json.loads(sys.argv[3]), sys.argv[4], progress=False, strict=mode == "strict")
print(json.dumps({"points": points[0]}))
"""


def _variant(path: Path, out: Path, keep: int, flip: int) -> Path:
    """A changed copy of a sample file: its first ``keep`` simulations, the first ``flip`` rewards flipped."""
    doc = json.loads(path.read_text())
    doc["simulations"] = doc["simulations"][:keep]
    for sim in doc["simulations"][:flip]:
        ri = sim.get("reward_info") or {}
        ri["reward"] = 1.0 - float(ri.get("reward") or 0.0)
    out.write_text(json.dumps(doc))
    return out


def _state(store: Path) -> dict[str, tuple]:
    """Per run: (simulations, sum of rewards, sorted ids) as read from the store."""
    import tauk

    t = tauk.open(store).trials
    out = {}
    for (rid,), part in t.group_by(["run_id"], maintain_order=True):
        out[rid] = (part.height, round(float(part["reward"].fill_null(0).sum()), 9),
                    tuple(sorted(part["simulation_id"].to_list())))  # fmt: skip
    return out


def _sentinel(folder: Path) -> dict[str, tuple]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def store_scenario(work: Path) -> dict[str, Any]:
    """The sources of a re-ingest: three sample files ingested (the old state), then one of them changed, one more
    added (the new state); expected states from clean ingests into fresh stores."""
    import tauk

    src = work / "src"
    src.mkdir(parents=True)
    for name in STORE_SOURCES:
        shutil.copy(SAMPLE / name, src / name)
    old = [str(src / n) for n in STORE_SOURCES]
    tauk.ingest(old, work / "clean-old", progress=False)
    before = _state(work / "clean-old")
    new_src = work / "src-new"
    shutil.copytree(src, new_src)
    _variant(SAMPLE / "baseline_airline.json", new_src / "baseline_airline.json", keep=70, flip=9)
    shutil.copy(SAMPLE / "atlas-small_retail.json", new_src / "atlas-small_retail.json")
    new = [str(new_src / n) for n in (*STORE_SOURCES, "atlas-small_retail.json")]
    outside = work / "outside"
    outside.mkdir()
    (outside / "victim.parquet").write_bytes(b"not yours")
    return {"old": old, "new": new, "src": src, "new_src": new_src, "before": before, "outside": outside}


def _reingest_into(sc: dict[str, Any], store: Path) -> None:
    """The store the re-ingest starts from: the old sources ingested under the same paths the re-ingest reads."""
    import tauk

    shutil.copytree(sc["src"], sc["new_src"], dirs_exist_ok=True)  # the re-ingest's paths, holding the old files
    tauk.ingest([str(sc["new_src"] / n) for n in STORE_SOURCES], store, progress=False)


def kill_points(work: Path, count: int = 20, seed: int = 0, mode: str = "strict") -> tuple[Counter, list[tuple]]:
    """Kill a re-ingest at ``count`` seeded write points (all of them when there are fewer): after each kill the
    store must open with every run's old or new content, the next ingest must take the stale lock over, finish,
    and give numbers identical to a clean ingest; nothing outside the store may change."""
    import tauk

    work.mkdir(parents=True, exist_ok=True)
    sc = store_scenario(work / "scenario")
    variants = work / "variants"
    variants.mkdir()
    # the re-ingest's sources in their new state, kept apart so that every kill starts from the same files
    for n in (*STORE_SOURCES, "atlas-small_retail.json"):
        shutil.copy(sc["new_src"] / n, variants / n)
    tauk.ingest([str(variants / n) for n in (*STORE_SOURCES, "atlas-small_retail.json")], work / "clean-new",
                progress=False)  # fmt: skip
    after_clean = {Path(k).name if "/" in k else k: v for k, v in _state(work / "clean-new").items()}

    def fresh(tag: str) -> Path:
        store = work / f"store-{tag}"
        shutil.rmtree(store, ignore_errors=True)
        for n in STORE_SOURCES:  # the old content under the re-ingest's paths
            shutil.copy(SAMPLE / n, sc["new_src"] / n)
        (sc["new_src"] / "atlas-small_retail.json").unlink(missing_ok=True)
        tauk.ingest([str(sc["new_src"] / n) for n in STORE_SOURCES], store, progress=False)
        for n in (*STORE_SOURCES, "atlas-small_retail.json"):  # now the new content
            shutil.copy(variants / n, sc["new_src"] / n)
        return store

    args = json.dumps([str(sc["new_src"] / n) for n in (*STORE_SOURCES, "atlas-small_retail.json")])
    dry = fresh("dry")
    out = subprocess.run([sys.executable, "-c", KILLER, "0", mode, args, str(dry)], capture_output=True, text=True,
                         env={**os.environ, "TQDM_DISABLE": "1"}, timeout=600)  # fmt: skip
    total = json.loads(out.stdout.strip().splitlines()[-1])["points"]
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(1, total + 1), min(count, total)))
    counts: Counter = Counter()
    failures: list[tuple] = []
    old_state = {Path(k).name: v for k, v in sc["before"].items()}
    for at in chosen:
        store = fresh(str(at))
        link = store / "trials" / "run=ffffffffffffffff"
        link.symlink_to(sc["outside"], target_is_directory=True)  # a link out of the store, left by someone
        guard = _sentinel(sc["outside"])
        p = subprocess.run([sys.executable, "-c", KILLER, str(at), mode, args, str(store)], capture_output=True,
                           text=True, env={**os.environ, "TQDM_DISABLE": "1"}, timeout=600)  # fmt: skip
        killed = p.returncode == -9
        try:
            got = {Path(k).name: v for k, v in _state(store).items()}
            bad = [r for r, v in got.items() if v not in (old_state.get(r), after_clean.get(r))]
            if bad:
                failures.append((at, "wrong", f"runs neither old nor new: {bad}"))
                counts["wrong"] += 1
                continue
            with __import__("warnings").catch_warnings(record=True) as caught:
                __import__("warnings").simplefilter("always")
                rep = tauk.ingest(json.loads(args), store, progress=False)
            stale = any("stale lock" in str(w.message) for w in caught)
            if killed and not stale and (store / ".lock").exists():
                failures.append((at, "lock", "a lock left by the killed ingest was not taken over"))
            final = {Path(k).name: v for k, v in _state(store).items()}
            if final != after_clean:
                failures.append((at, "wrong", f"after the resumed ingest: {sorted(final)} != {sorted(after_clean)}"))
                counts["wrong"] += 1
                continue
            named = {f for e in tauk.store.read_manifest(store)["sources"] for fs in e["files"].values() for f in fs}
            stray = [str(f.relative_to(store)) for f in store.glob("*/run=*/*")
                     if f.is_file() and not f.is_symlink() and not any(x.is_symlink() for x in f.parents)
                     and str(f.relative_to(store)) not in named]  # fmt: skip
            if stray:
                failures.append((at, "stray", f"files no entry names: {stray[:3]}"))
            if _sentinel(sc["outside"]) != guard:
                failures.append((at, "outside", "a file outside the store changed"))
            counts["old_or_new" if killed else "completed"] += 1
            del rep
        except tauk.TaukError as exc:
            failures.append((at, "named_error", str(exc)[:200]))
            counts["named_error"] += 1
        except Exception:  # noqa: BLE001 - the point: anything else is a failure to report
            failures.append((at, "traceback", traceback.format_exc()[-800:]))
            counts["traceback"] += 1
    counts["points"] = total
    counts["chosen"] = len(chosen)
    return counts, failures


READER = r"""
import json, sys, time, tauk
store, stop, states = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
ok = fail = 0
errors = []
import os
while not os.path.exists(stop):
    try:
        t = tauk.open(store).trials
        for (rid,), part in t.group_by(["run_id"]):
            got = [part.height, round(float(part["reward"].fill_null(0).sum()), 9)]
            if got not in states[rid.rsplit("/", 1)[-1]]:
                raise AssertionError(f"{rid}: {got} is neither state")
        ok += 1
    except BaseException as exc:
        fail += 1
        errors.append(f"{type(exc).__name__}: {exc}"[:300])
print(json.dumps({"ok": ok, "fail": fail, "errors": errors[:5]}))
"""


def readers_during_reingests(work: Path, rounds: int = 6, readers: int = 1) -> dict[str, Any]:
    """Readers (processes) open the store and read every run again and again while ``rounds`` re-ingests replace
    one source with one of two versions in turn; every read must succeed with each run in one of its states."""
    import tauk

    work.mkdir(parents=True, exist_ok=True)
    src = work / "src"
    src.mkdir()
    for name in STORE_SOURCES:
        shutil.copy(SAMPLE / name, src / name)
    a = _variant(SAMPLE / "baseline_airline.json", work / "a.json", keep=100, flip=0)
    b = _variant(SAMPLE / "baseline_airline.json", work / "b.json", keep=60, flip=7)
    store = work / "store"
    tauk.ingest(src, store, progress=False)
    states: dict[str, list] = {}
    for version in (a, b):
        shutil.copy(version, src / "baseline_airline.json")
        st = work / f"clean-{version.stem}"
        tauk.ingest(src, st, progress=False)
        for rid, v in _state(st).items():
            states.setdefault(rid.rsplit("/", 1)[-1], [])
            if list(v[:2]) not in states[rid.rsplit("/", 1)[-1]]:
                states[rid.rsplit("/", 1)[-1]].append(list(v[:2]))
    stop = work / "stop"
    procs = [subprocess.Popen([sys.executable, "-c", READER, str(store), str(stop), json.dumps(states)],
                              stdout=subprocess.PIPE, text=True) for _ in range(readers)]  # fmt: skip
    time.sleep(3)  # the readers are reading
    t0 = time.perf_counter()
    for i in range(rounds):
        shutil.copy(b if i % 2 == 0 else a, src / "baseline_airline.json")
        rep = tauk.ingest(src, store, progress=False)
        assert len(rep.replaced) == 1, rep
        time.sleep(0.3)
    took = time.perf_counter() - t0
    stop.write_text("")
    outs = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    return {"rounds": rounds, "seconds": took, "reads": sum(o["ok"] for o in outs),
            "failures": sum(o["fail"] for o in outs), "errors": [e for o in outs for e in o["errors"]]}


ENTRY_MUTATIONS = ("delete_key", "swap_type", "path_escape", "absolute_path", "other_run_path", "size", "counts",
                   "truncate", "rename", "duplicate_source", "symlink_part", "symlink_dir")  # fmt: skip


def mutate_store(work: Path, seed: int = 0, count: int = 24) -> tuple[Counter, list[tuple]]:
    """Mutated entries and links: opening the store and ingesting into it give a named error, or the very numbers
    of the intact store (a harmless change); never a traceback, another number, or a file read or deleted outside
    the store."""
    import tauk

    work.mkdir(parents=True, exist_ok=True)
    base = work / "base"
    tauk.ingest([str(SAMPLE / n) for n in STORE_SOURCES], base, progress=False)
    want = _state(base)
    outside = work / "outside"
    outside.mkdir()
    (outside / "part-00000.parquet").write_bytes((base / tauk.store.read_manifest(base)["sources"][0]["files"]
                                                  ["trials"][0]).read_bytes())  # a real part, outside  # fmt: skip
    guard = _sentinel(outside)
    rng = random.Random(seed)
    counts: Counter = Counter()
    failures: list[tuple] = []
    for i in range(count):
        kind = ENTRY_MUTATIONS[i % len(ENTRY_MUTATIONS)]
        store = work / f"m{i:03d}"
        shutil.copytree(base, store, symlinks=True)
        entries = sorted((store / "sources").glob("*.json"))
        victim = rng.choice(entries)
        e = json.loads(victim.read_text())
        files = [f for fs in e["files"].values() for f in fs]
        if kind == "delete_key":
            del e[rng.choice(["source", "run_id", "run_key", "files", "sizes", "counts"])]
        elif kind == "swap_type":
            k = rng.choice(["source", "run_id", "files", "sizes", "counts", "label", "issues"])
            e[k] = _other_value(rng, e[k])
        elif kind in ("path_escape", "absolute_path", "other_run_path"):
            frame = rng.choice(list(e["files"]))
            other = json.loads(next(x for x in entries if x != victim).read_text())
            bad = {"path_escape": "../../outside/part-00000.parquet",
                   "absolute_path": str(outside / "part-00000.parquet"),
                   "other_run_path": other["files"][frame][0]}[kind]  # fmt: skip
            e["sizes"][bad] = e["sizes"].get(bad, 100)
            e["files"][frame][0] = bad
        elif kind == "size":
            f = rng.choice(files)
            e["sizes"][f] += 1
        elif kind == "counts":
            e["counts"]["trials"] += 1
        elif kind == "truncate":
            victim.write_text(json.dumps(e)[: rng.randrange(1, 200)])
            e = None
        elif kind == "rename":
            victim.rename(victim.with_name("0123456789abcdef.json"))
            e = None
        elif kind == "duplicate_source":  # the same source twice, under a second run whose files are copies
            from tauk.store._layout import run_key

            rid = e["run_id"] + "-copy"
            key = run_key(rid)
            dup = json.loads(json.dumps(e).replace(e["run_key"], key))
            dup.update(run_id=rid, run_key=key)
            for f in files:
                g = store / f.replace(e["run_key"], key)
                g.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(store / f, g)
            (store / "sources" / f"{key}.json").write_text(json.dumps(dup))
        elif kind == "symlink_part":
            f = store / rng.choice(files)
            f.unlink()
            f.symlink_to(outside / "part-00000.parquet")
        elif kind == "symlink_dir":
            f = store / rng.choice(files)
            shutil.rmtree(f.parent)
            f.parent.symlink_to(outside, target_is_directory=True)
        if e is not None:
            victim.write_text(json.dumps(e))
        for op in ("open", "ingest"):
            try:
                if op == "open":
                    got = _state(store)
                    cls = "loaded" if got == want else "wrong"
                    detail = "" if cls == "loaded" else f"{sorted(got)} != {sorted(want)}"
                else:
                    tauk.ingest([str(SAMPLE / n) for n in STORE_SOURCES], store, progress=False)
                    got = _state(store)
                    cls = "loaded" if got == want else "wrong"
                    detail = "" if cls == "loaded" else "after an ingest"
            except tauk.TaukError as exc:
                cls, detail = "named_error", str(exc)[:200]
            except Exception:  # noqa: BLE001
                cls, detail = "traceback", traceback.format_exc()[-800:]
            counts[(kind, op, cls)] += 1
            if cls in ("wrong", "traceback"):
                failures.append((i, kind, op, cls, detail))
        if _sentinel(outside) != guard:
            failures.append((i, kind, "-", "outside", "a file outside the store changed"))
    return counts, failures


def store_main(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="tauk-store-fuzz-"))
    failures = 0
    try:
        t0 = time.perf_counter()
        counts, fails = kill_points(work / "kills", count=args.points, seed=args.seed)
        print(f"re-ingest killed at {counts['chosen']} of its {counts['points']} write points (seed {args.seed}, "
              f"{time.perf_counter() - t0:.0f} s): {counts['old_or_new']} opened with each run old or new and then "
              f"resumed to the clean numbers, {counts['completed']} finished before the kill; "
              f"failures: {len(fails)}")  # fmt: skip
        for f in fails[:10]:
            print("FAILURE", f)
        failures += len(fails)
        t0 = time.perf_counter()
        r = readers_during_reingests(work / "readers", rounds=6, readers=2)
        print(f"2 reader processes during {r['rounds']} re-ingests ({r['seconds']:.1f} s): {r['reads']} reads, "
              f"{r['failures']} failures {r['errors'][:3]}")  # fmt: skip
        failures += r["failures"]
        counts, fails = mutate_store(work / "mutants", seed=args.seed, count=args.mutants)
        classes = Counter()
        for (_, op, cls), v in counts.items():
            classes[(op, cls)] += v
        print(f"{args.mutants} mutated stores (entries, paths, links), open and ingest: "
              + ", ".join(f"{op} {cls} {v}" for (op, cls), v in sorted(classes.items())) + f"; failures: {len(fails)}")
        for f in fails[:10]:
            print("FAILURE", f)
        failures += len(fails)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"store failures: {failures}")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=300, help="number of mutants (each run four ways)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--small", action="store_true", help="mutate only the smaller files (faster)")
    ap.add_argument("--store", action="store_true", help="the store instead: kills, readers, mutated entries")
    ap.add_argument("--points", type=int, default=24, help="write points of a re-ingest to kill at (--store)")
    ap.add_argument("--mutants", type=int, default=48, help="mutated stores (--store)")
    args = ap.parse_args(argv)
    if args.store:
        return store_main(args)
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

"""``tauk.ingest``: read results files once, one at a time, into a columnar store (see :mod:`tauk.store`)."""

from __future__ import annotations

import os
import shutil
import uuid
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io.load import Inputs, find_sources
from tauk.io.read import fingerprint, read_bytes
from tauk.results import load

from ._layout import FRAMES, lock, read_manifest, run_key, write_manifest
from ._results import frame_schema

__all__ = ["ingest", "IngestReport", "SIMULATIONS_PER_PART"]

SIMULATIONS_PER_PART = 5000
"""Whole simulations per Parquet part of ``trials`` / ``messages`` / ``tool_calls``: streaming work (scoring, the
audit) never holds more than one part's messages."""


class IngestReport(LoadReport):
    """What an ingest did: sources ingested, skipped as unchanged, re-ingested, missing; and what their loads
    skipped or repaired (the load reports, merged)."""

    def __init__(self) -> None:
        super().__init__()
        self.ingested: list[str] = []
        self.unchanged: list[str] = []
        self.replaced: list[str] = []
        self.missing: list[str] = []

    def __str__(self) -> str:
        head = (f"ingest: {len(self.ingested)} source(s) ingested ({len(self.replaced)} of them changed), "
                f"{len(self.unchanged)} unchanged, {len(self.missing)} listed in the store but not found")  # fmt: skip
        rest = super().__str__().split("\n", 1)
        return head + ("\n" + rest[1] if len(rest) > 1 else "")


def _identity(path: Path) -> dict[str, Any]:
    """Size, modification time and content hash of a source (a directory: of its results.json and simulations)."""
    files = [path] if path.is_file() else sorted([path / "results.json", *(path / "simulations").glob("*.json")])
    size = mtime = 0
    digests = []
    for f in files:
        info = os.stat(f)
        size += info.st_size
        mtime = max(mtime, info.st_mtime_ns)
        digests.append(fingerprint(read_bytes(f, decode=False)))
    return {"size": size, "mtime_ns": mtime, "hash": digests[0] if len(digests) == 1 else fingerprint("".join(digests).encode())}


def _run_ids(sources: list[tuple[str | None, Path]], inputs: Inputs) -> list[str]:
    """Stable run ids: the label when given, else the path relative to the input it was found under."""
    roots: list[Path] = []
    if isinstance(inputs, str | os.PathLike):
        roots = [Path(inputs)]
    elif not isinstance(inputs, Mapping):
        roots = [Path(p) for p in inputs]
    out = []
    for label, path in sources:
        if label is not None:
            out.append(label)
            continue
        rel = path.name
        for root in roots:
            if root.is_dir() and root.resolve() in (path.resolve(), *path.resolve().parents):
                rel = str(path.resolve().relative_to(root.resolve())) if path.resolve() != root.resolve() else root.name
                break
        out.append(rel)
    return out


def _sim_keys(trials: pl.DataFrame) -> pl.Series:
    """One key per simulation, as the loader's overlap check uses (τ-bench: agent, domain, task, trial)."""
    tb = trials["format"] == "taubench"
    key = pl.when(tb).then(
        pl.concat_str([pl.col("agent"), pl.col("domain"), pl.col("task_id"), pl.col("trial").cast(pl.String)],
                      separator="\x1f", ignore_nulls=False)  # fmt: skip
    ).otherwise(pl.col("simulation_id"))
    return trials.select(key.fill_null(pl.col("simulation_id")).alias("key"))["key"] if tb.len() else pl.Series("key", [])


def _write(frame: pl.DataFrame, folder: Path, name: str, staged: list[tuple[Path, Path]]) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / name
    tmp = folder / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    frame.write_parquet(tmp, statistics=True)
    staged.append((tmp, final))
    return str(final.relative_to(folder.parents[1]))


def ingest(
    sources: Inputs,
    store: str | os.PathLike,
    *,
    strict: bool = True,
    progress: bool | None = None,
    wait: float = 0.0,
    simulations_per_part: int = SIMULATIONS_PER_PART,
) -> IngestReport:
    """Read results files / directories of every supported shape, one at a time, into the columnar store ``store``.

    Incremental and idempotent: a source already in the store with the same size, modification time and content
    hash is skipped; a changed one is re-ingested (its old partitions replaced). Simulations already in the store
    under another source (a checkpoint and its final file) are refused under ``strict`` loading and kept once,
    with a report entry, otherwise — exactly as :func:`tauk.load` does. A second ingest into the same store waits
    ``wait`` seconds for the lock, then is refused. The manifest is written last (the commit point): an
    interrupted ingest leaves the store as it was.

    Examples
    --------
    >>> import tauk, tempfile
    >>> store = tempfile.mkdtemp()
    >>> report = tauk.ingest("data", store, progress=False)
    >>> len(report.ingested), len(tauk.ingest("data", store, progress=False).unchanged)
    (6, 6)
    """
    root = Path(store)
    root.mkdir(parents=True, exist_ok=True)
    report = IngestReport()
    with lock(root, wait=wait):
        manifest = read_manifest(root)
        found = find_sources(sources, report)
        ids = _run_ids(found, sources)
        seen_ids: dict[str, int] = {}
        for i, rid in enumerate(ids):  # the same name from two inputs: keep both, numbered
            if rid in seen_ids:
                ids[i] = f"{rid}#{seen_ids[rid] + 1}"
            seen_ids[rid] = seen_ids.get(rid, 0) + 1
        by_source = {e["source"]: e for e in manifest["sources"]}
        todo = []
        for (label, path), rid in zip(found, ids):
            src = str(path.resolve())
            ident = _identity(path)
            old = by_source.get(src)
            if old is not None and all(old[k] == ident[k] for k in ("size", "mtime_ns", "hash")):
                report.unchanged.append(src)
                continue
            todo.append((label, path, src, rid if old is None else old["run_id"], ident, old))
        listed = {str(p.resolve()) for _, p in found}
        report.missing = [e["source"] for e in manifest["sources"] if e["source"] not in listed
                          and not Path(e["source"]).exists()]  # fmt: skip
        for m in report.missing:
            report.add(m, None, "missing_source", "source no longer exists; its runs stay in the store as ingested")
        show = progress if progress is not None else len(todo) > 1
        it: Iterable = todo
        if show:
            from tqdm.auto import tqdm

            it = tqdm(todo, desc="ingesting", unit="file")
        entries = by_source  # updated source by source below, the manifest's new list
        existing = _existing_keys(root, manifest["sources"])
        for label, path, src, rid, ident, old in it:
            staged: list[tuple[Path, Path]] = []
            try:
                entry = _ingest_one(root, path, src, rid, label, ident, strict, report, existing,
                                    simulations_per_part, staged)  # fmt: skip
            except BaseException:
                for tmp, _ in staged:
                    tmp.unlink(missing_ok=True)
                raise
            key = run_key(rid)
            for name in FRAMES:  # the old partitions of a changed source go, the new ones take their place
                folder = root / name / f"run={key}"
                for f in folder.glob("*.parquet") if folder.exists() else ():
                    f.unlink()
            for tmp, final in staged:
                os.replace(tmp, final)
            _trim()
            entries[src] = entry
            report.ingested.append(src)
            if old is not None:
                report.replaced.append(src)
            manifest["sources"] = sorted(entries.values(), key=lambda e: e["run_id"])
            write_manifest(root, manifest)  # commit this source
        _sweep(root, manifest)
    return report


class _Keys:
    """The simulations already in the store: a 64-bit hash of each simulation key and its run (compact: a million
    simulations take about 16 MB, so an ingest's memory does not grow with the store)."""

    def __init__(self) -> None:
        self._parts: list[pl.DataFrame] = []

    def add(self, keys: pl.Series, run_id: str) -> None:
        self._parts.append(pl.DataFrame({"h": keys.hash(seed=0), "run": pl.Series([run_id] * len(keys),
                                                                                   dtype=pl.Categorical)}))  # fmt: skip
        if len(self._parts) > 64:
            self._parts = [pl.concat(self._parts, rechunk=True)]

    def drop_run(self, run_id: str) -> None:
        self._parts = [p.filter(pl.col("run") != run_id) for p in self._parts]

    def owners(self, keys: pl.Series, run_id: str) -> pl.DataFrame:
        """``key, run`` of the keys already held by another run."""
        if not self._parts:
            return pl.DataFrame(schema={"key": pl.String, "run": pl.String})
        have = pl.concat(self._parts)
        asked = pl.DataFrame({"key": keys, "h": keys.hash(seed=0)})
        hit = asked.join(have, on="h", how="inner").filter(pl.col("run").cast(pl.String) != run_id)
        return hit.select("key", run=pl.col("run").cast(pl.String))


def _existing_keys(root: Path, entries: list[dict[str, Any]]) -> _Keys:
    """The keys of every simulation already in the store."""
    out = _Keys()
    for e in entries:
        files = [root / f for f in e["files"].get("trials", [])]
        if files:
            t = pl.read_parquet(files, columns=["simulation_id", "format", "agent", "domain", "task_id", "trial"])
            out.add(_sim_keys(t), e["run_id"])
    return out


def _ingest_one(root: Path, path: Path, src: str, rid: str, label: str | None, ident: dict[str, Any],
                strict: bool, report: IngestReport, existing: _Keys, per_part: int,
                staged: list[tuple[Path, Path]]) -> dict[str, Any]:  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        res = load({label: path} if label is not None else path, strict=strict, progress=False)
    for w in caught:
        warnings.warn(str(w.message), w.category, stacklevel=4)
    report.issues += res.report.issues
    report.files_loaded += res.report.files_loaded
    lit = pl.lit(rid, dtype=pl.String)
    frames = {name: getattr(res, name).with_columns(run_id=lit) for name in ("runs", "trials", "tasks",
                                                                           "expected_actions")}  # fmt: skip
    trials = frames["trials"]
    keys = _sim_keys(trials)
    owners = existing.owners(keys, rid)
    dup = list(owners.iter_rows())
    drop: set[str] = set()
    if dup:
        others = sorted({r for _, r in dup})
        msg = (f"{len(dup)} of its {trials.height} simulations are already in the store under {', '.join(others)} "
               "(a checkpoint and its final file?); they would count twice")  # fmt: skip
        if strict:
            raise LoadError(src, None, msg + " (ingest one of them, or give different labels)")
        report.add(src, None, "overlapping_runs", msg + "; kept once", skipped=len(dup))
        warnings.warn(f"{src}: {msg}; kept once", LoadWarning, stacklevel=4)
        drop = set(trials.filter(keys.is_in([k for k, _ in dup]))["simulation_id"].to_list())
    key = run_key(rid)
    files: dict[str, list[str]] = {name: [] for name in FRAMES}
    for name in ("runs", "tasks", "expected_actions"):
        files[name] = [_write(frames[name], root / name / f"run={key}", "part-00000.parquet", staged)]
    counts = {name: frames[name].height for name in ("runs", "tasks", "expected_actions")}
    counts.update(trials=0, messages=0, tool_calls=0)
    # one part per ``per_part`` whole simulations, in file order (the trials frame's order); message bodies are
    # decoded a smaller batch at a time (their Python objects are the costly part) and framed at once
    for part, (messages, calls) in enumerate(_parts(res, trials.height, per_part)):
        chunk = trials.slice(part * per_part, per_part)
        if drop:
            kept = ~pl.col("simulation_id").is_in(list(drop))
            chunk, messages, calls = chunk.filter(kept), messages.filter(kept), calls.filter(kept)
        for name, frame in (("trials", chunk), ("messages", messages.with_columns(run_id=lit)),
                            ("tool_calls", calls.with_columns(run_id=lit))):  # fmt: skip
            files[name].append(_write(frame, root / name / f"run={key}", f"part-{part:05d}.parquet", staged))
            counts[name] += frame.height
    if not files["trials"]:
        empty = trials.head(0)
        files["trials"].append(_write(empty, root / "trials" / f"run={key}", "part-00000.parquet", staged))
        for name in ("messages", "tool_calls"):  # the contracts' schemas: nothing to decode
            frame = pl.DataFrame(schema=frame_schema(name))
            files[name].append(_write(frame, root / name / f"run={key}", "part-00000.parquet", staged))
    existing.drop_run(rid)  # a changed source replaces its own keys
    existing.add(_sim_keys(trials.filter(~pl.col("simulation_id").is_in(list(drop))) if drop else trials), rid)
    return {
        "source": src,
        **ident,
        "run_id": rid,
        "run_key": key,
        "label": label,
        "format": res.runs["format"][0] if res.runs.height else None,
        "counts": counts,
        "report": [str(i) for i in res.report.issues],
        "files": files,
        "sizes": {str(final.relative_to(root)): tmp.stat().st_size for tmp, final in staged},
    }


DECODE_BATCH = 1000
"""Simulations whose message bodies are decoded at a time during an ingest (bounds the Python objects alive)."""


def _parts(res: Any, n_sims: int, per_part: int) -> Any:
    """``(messages, tool_calls)`` frames of ``per_part`` whole simulations at a time (the last part may be shorter)."""
    if n_sims == 0:
        return
    batch = min(DECODE_BATCH, per_part)
    while per_part % batch:  # parts must hold exactly per_part simulations (they line up with the trials slices)
        batch -= 1
    per = max(1, per_part // batch)
    msgs: list[pl.DataFrame] = []
    calls: list[pl.DataFrame] = []
    for _, m, c in res.message_batches(batch):
        msgs.append(m)
        calls.append(c)
        if len(msgs) == per:
            yield pl.concat(msgs), pl.concat(calls)
            msgs, calls = [], []
    if msgs:
        yield pl.concat(msgs), pl.concat(calls)


def _sweep(root: Path, manifest: dict[str, Any]) -> None:
    """Remove Parquet files (and temporary files) the manifest does not name: leftovers of interrupted ingests."""
    named = {f for e in manifest["sources"] for fs in e["files"].values() for f in fs}
    for name in FRAMES:
        folder = root / name
        if not folder.exists():
            continue
        for f in folder.rglob("*"):
            if f.is_file() and str(f.relative_to(root)) not in named:
                f.unlink()
        for d in sorted(folder.glob("run=*")):
            if d.is_dir() and not any(d.iterdir()):
                shutil.rmtree(d, ignore_errors=True)


def _trim() -> None:
    """Give the memory freed by the last source back to the system (the C allocator keeps freed pages otherwise,
    and a long ingest would look as if it grew with the number of files)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass

"""``tauk.ingest``: read results files once, one at a time, into a columnar store (see :mod:`tauk.store`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadError, LoadReport, LoadWarning
from tauk.io.files import record_shortfall
from tauk.io.load import Inputs, find_sources
from tauk.results import load

from ._layout import (
    ENTRIES,
    FORMAT,
    FRAMES,
    KEYS_FILE,
    StoreError,
    is_store,
    lock,
    new_token,
    part_path,
    read_entries,
    remove_part,
    run_dir,
    run_key,
    write_entry,
    write_header,
)
from ._results import frame_schema
from ._sources import content_hash, current_columns, parts_intact, source_identity

__all__ = ["ingest", "IngestReport", "SIMULATIONS_PER_PART", "RACY_NS", "source_identity", "content_hash"]

SIMULATIONS_PER_PART = 5000
"""Whole simulations per Parquet part of ``trials`` / ``messages`` / ``tool_calls``: streaming work (scoring, the
audit) never holds more than one part's messages."""

RACY_NS = 2_000_000_000
"""A source whose change time is within this many nanoseconds of the moment its identity was taken cannot be proven
unchanged by its metadata (file systems stamp times from a coarse clock, some to the second): it is hashed again."""


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


def _proven_unchanged(old: dict[str, Any], now: dict[str, Any]) -> bool:
    return old.get("stat") == now["stat"] and old.get("stat_ns", 0) - old.get("ctime_ns", 1 << 62) > RACY_NS


# ---- run ids ------------------------------------------------------------------------------------------------
def _run_ids(sources: list[tuple[str | None, Path]], inputs: Inputs) -> list[str]:
    """Stable run ids: the label when given, else the path relative to the input it was found under."""
    roots: list[Path] = []
    if isinstance(inputs, str | os.PathLike):
        roots = [Path(inputs)]
    elif not isinstance(inputs, Mapping):
        roots = [Path(p) for p in inputs]
    order: dict[Path, int] = {}  # the folders given, resolved once (their first position wins)
    for i, root in enumerate(roots):
        if root.is_dir():
            order.setdefault(root.resolve(), i)
    out = []
    for label, path in sources:
        if label is not None:
            out.append(label)
            continue
        rel = path.name
        rp = path.resolve()
        hits = [a for a in (rp, *rp.parents) if a in order]
        if hits:
            top = min(hits, key=order.__getitem__)
            rel = str(rp.relative_to(top)) if rp != top else roots[order[top]].name
        out.append(rel)
    return out


def _free_id(rid: str, taken: set[str]) -> str:
    base, n = rid, 1
    while rid in taken:
        n += 1
        rid = f"{base}#{n}"
    return rid


# ---- the simulations already in the store -------------------------------------------------------------------
def _sim_keys(trials: pl.DataFrame, label: str | None = None) -> pl.Series:
    """One key per simulation, as the loader's overlap check uses (τ-bench: agent, domain, task, trial), under the
    source's label: the same simulations under two labels are deliberate (a run compared with itself) and kept."""
    tb = trials["format"] == "taubench"
    key = pl.when(tb).then(
        pl.concat_str([pl.col("agent"), pl.col("domain"), pl.col("task_id"), pl.col("trial").cast(pl.String)],
                      separator="\x1f", ignore_nulls=False)  # fmt: skip
    ).otherwise(pl.col("simulation_id"))
    key = key.fill_null(pl.col("simulation_id"))
    if label is not None:
        key = pl.lit("\x1e".join(("label", label, ""))) + key
    return trials.select(key.alias("key"))["key"] if tb.len() else pl.Series("key", [])


_KEY_COLUMNS = ["simulation_id", "format", "agent", "domain", "task_id", "trial"]
_PROBE = "tauk-key-index-probe-2"  # 2: keys under the source's label (an index of plain keys is rebuilt)


def _hash(keys: pl.Series) -> pl.Series:
    return keys.cast(pl.String).hash(seed=0)


class _KeyIndex:
    """The simulations of every run in the store as 64-bit hashes of their keys (a million take about 16 MB), kept
    in ``keys.parquet`` so that an ingest reads one file, not every stored run. It is a cache: the runs whose
    commit token it does not hold are read again from their parts, and it is rebuilt when unreadable or made by a
    hash function that no longer gives the same values (another Polars version)."""

    SCHEMA = {"run_key": pl.String, "token": pl.String, "h": pl.UInt64}

    def __init__(self, root: Path, frame: pl.DataFrame, dirty: bool) -> None:
        self.root = root
        self._parts = [frame]
        self.dirty = dirty

    @classmethod
    def load(cls, root: Path, entries: list[dict[str, Any]]) -> _KeyIndex:
        path = root / KEYS_FILE
        frame = pl.DataFrame(schema=cls.SCHEMA)
        probe = int(_hash(pl.Series([_PROBE]))[0])
        try:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                got = pl.read_parquet(path)
                if got.schema == pl.Schema(cls.SCHEMA) and got.filter(pl.col("run_key") == "")["h"].to_list() == [probe]:
                    frame = got.filter(pl.col("run_key") != "")
        except (OSError, pl.exceptions.PolarsError):
            pass  # no index, or an unusable one: rebuilt below from the parts
        want = {(e["run_key"], e.get("token") or "") for e in entries}
        have = set(frame.select("run_key", "token").unique().iter_rows()) if frame.height else set()
        pairs = pl.DataFrame(list(want), schema={"run_key": pl.String, "token": pl.String}, orient="row")
        keep = frame.join(pairs, on=["run_key", "token"], how="semi") if have - want else frame
        index = cls(root, keep, dirty=bool(have - want))
        for e in entries:
            if (e["run_key"], e.get("token") or "") not in have:
                files = [part_path(root, f) for f in e["files"]["trials"]]
                t = pl.read_parquet(files, columns=_KEY_COLUMNS)
                index.replace(e["run_key"], e.get("token") or "", _sim_keys(t, e.get("label")))
        return index

    def owners(self, keys: pl.Series, key: str) -> pl.DataFrame:
        """``key, run_key`` of the simulation keys already held by another run."""
        have = self._all().filter(pl.col("run_key") != key)
        asked = pl.DataFrame({"key": keys, "h": _hash(keys)})
        return asked.join(have.select("h", "run_key"), on="h", how="inner").select("key", "run_key").unique("key")

    def replace(self, key: str, token: str, keys: pl.Series) -> None:
        self._parts = [p.filter(pl.col("run_key") != key) for p in self._parts]
        self._parts.append(pl.DataFrame({"run_key": [key] * len(keys) or [key], "token": [token] * (len(keys) or 1),
                                         "h": _hash(keys) if len(keys) else pl.Series([None], dtype=pl.UInt64)},
                                        schema=self.SCHEMA))  # fmt: skip
        self.dirty = True

    def held(self, key: str) -> set[int]:
        """The key hashes the run ``key`` holds."""
        return set(self._all().filter(pl.col("run_key") == key)["h"].drop_nulls().to_list())

    def _all(self) -> pl.DataFrame:
        if len(self._parts) > 1:
            self._parts = [pl.concat(self._parts, rechunk=True)]
        return self._parts[0]

    def save(self) -> None:
        if not self.dirty:
            return
        probe = pl.DataFrame({"run_key": [""], "token": [""], "h": _hash(pl.Series([_PROBE]))}, schema=self.SCHEMA)
        tmp = self.root / f".{KEYS_FILE}.{os.getpid()}.tmp"
        pl.concat([probe, self._all()]).write_parquet(tmp)
        os.replace(tmp, self.root / KEYS_FILE)
        self.dirty = False


# ---- the ingest ---------------------------------------------------------------------------------------------
OPEN_MARK = ".ingest-unfinished"
"""Present while an ingest writes: one that is killed or fails leaves it, and the next ingest sweeps the store for
what no entry names (a sweep lists every run's folders, so it is not done after an ingest that finished)."""

_STORE_NAMES = {*FRAMES, ".lock", "manifest.json", ENTRIES, KEYS_FILE}


def _prepare(root: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{root}: cannot create the store folder ({exc.strerror})") from None
    if not root.is_dir():
        raise StoreError(f"{root}: not a folder")
    if not is_store(root):
        other = sorted(p for p in os.listdir(root) if p not in _STORE_NAMES and not p.startswith("."))
        if other:
            raise StoreError(f"{root}: not a tauk store (no manifest.json, and it holds other files: "
                             f"{', '.join(other[:3])})")  # fmt: skip


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

    Incremental and idempotent: a source already in the store whose files are unchanged is skipped — proven by their
    metadata (the change time moves with every write), else by hashing their content again — and a changed one is
    re-ingested. Simulations already in the store under another source (a checkpoint and its final file) are refused
    under ``strict`` loading and kept once, with a report entry, otherwise — exactly as :func:`tauk.load` does.

    Every run is committed on its own, by replacing its entry atomically after its new parts are written under new
    names; its old parts are removed after the commit. A kill at any point leaves each run as it was or as it is
    after; readers never see a half-written run. A second ingest waits ``wait`` seconds for the lock, then is
    refused; a lock left by a process that is gone is taken over with a warning. The cost of an ingest grows with
    the sources it reads, not with the store: it reads one key index, not the stored runs.

    Examples
    --------
    >>> import tauk, tempfile
    >>> store = tempfile.mkdtemp()
    >>> report = tauk.ingest("data", store, progress=False)
    >>> len(report.ingested), len(tauk.ingest("data", store, progress=False).unchanged)
    (6, 6)
    """
    root = Path(store)
    created = not os.path.lexists(root)
    _prepare(root)
    report = IngestReport()
    try:
        try:
            with lock(root, wait=wait, report=report):
                _ingest_locked(root, sources, strict, progress, simulations_per_part, report)
        except BaseException:
            if created and not report.ingested:  # this call made the folder and stored nothing: no empty store left
                shutil.rmtree(root, ignore_errors=True)
            raise
    except OSError as exc:  # a folder made read-only meanwhile, a full disk …
        what = f" {exc.filename}" if exc.filename else ""
        raise StoreError(f"{root}: cannot write{what} ({exc.strerror or exc})") from None
    except pl.exceptions.PolarsError as exc:
        raise StoreError(f"{root}: a stored part cannot be read ({str(exc).splitlines()[0]}); open the store for "
                         "the part at fault") from None  # fmt: skip
    return report


def _ingest_locked(root: Path, sources: Inputs, strict: bool, progress: bool | None, per_part: int,
                   report: IngestReport) -> None:  # fmt: skip
    version, entries = read_entries(root)
    if version != FORMAT:  # a layout-1 store: its entries as files, then the header that makes them count
        for e in entries:
            write_entry(root, e)
    if version != FORMAT or not is_store(root):
        write_header(root)
    marker = root / OPEN_MARK
    if version != FORMAT or marker.exists() or report.counts().get("stale_lock"):
        _sweep(root, entries)  # the last ingest did not finish: what it left is not named by any entry
    marker.touch()
    found = find_sources(sources, report)
    ids = _run_ids(found, sources)
    by_source = {e["source"]: e for e in entries}
    taken = {e["run_id"] for e in entries}
    todo = []
    for (label, path), rid in zip(found, ids):
        src = str(path.resolve())
        old = by_source.get(src)
        now = source_identity(path)
        if old is not None:
            intact = parts_intact(root, old)
            current = intact and current_columns(root, old)
            if old.get("label") != label:  # the label is the agent of every simulation: not the run asked for
                report.add(src, None, "relabelled", f"ingested again under the label {label!r} (stored as "
                           f"{old.get('label')!r}); its run id {old['run_id']!r} is kept")  # fmt: skip
            elif old.get("recheck"):
                _note_recheck(report, src)
            elif current and _proven_unchanged(old, now):
                report.unchanged.append(src)
                continue
            elif current and content_hash(path) == old.get("hash"):  # touched, not changed: the new metadata
                write_entry(root, {**old, **now})
                report.unchanged.append(src)
                continue
            elif not intact:
                report.add(src, None, "repaired", f"its stored parts ({old['run_id']}) were missing or not of their "
                           "recorded size; ingested again")  # fmt: skip
            elif not current:
                report.add(src, None, "refreshed", f"its stored parts ({old['run_id']}) have the columns of another "
                           "version of tauk; ingested again")  # fmt: skip
            rid = old["run_id"]
        else:
            rid = _free_id(rid, taken)  # never another source's run
            taken.add(rid)
        todo.append((label, path, src, rid, now, old))
    listed = {str(p.resolve()) for _, p in found}
    for e in entries:  # runs that a killed ingest marked to be checked again (see below), asked for or not
        if e.get("recheck") and e["source"] not in listed and Path(e["source"]).exists():
            _note_recheck(report, e["source"])
            todo.append(_again(e))
    report.missing = [e["source"] for e in entries if e["source"] not in listed and not Path(e["source"]).exists()]
    for m in report.missing:
        report.add(m, None, "missing_source", "source no longer exists; its runs stay in the store as ingested")
    show = progress if progress is not None else len(todo) > 1
    it: Iterable = todo
    if show:
        from tqdm.auto import tqdm

        it = tqdm(todo, desc="ingesting", unit="file")
    keys = _KeyIndex.load(root, entries) if todo else None
    since_trim = 0
    # a source whose simulations were dropped as already stored under another run holds them again once that run no
    # longer does (it shrank, or was relabelled): such sources are ingested again after it, as tauk.load would count
    # them from the files (their entries record the runs they overlapped: ``overlaps``)
    stored = {e["source"]: e for e in entries}
    order = {str(p.resolve()): i for i, (_, p) in enumerate(found)}
    pending = {t[2] for t in todo}
    it = iter(it)
    again: list[tuple] = []
    rounds: Counter[str] = Counter()

    def _next():
        if again:
            return again.pop(0)
        return next(it, None)

    def requeue(e: dict[str, Any], kind: str, message: str) -> None:
        """Ingest ``e``'s source again after this one (once per round, at most as many rounds as runs)."""
        if e["source"] in pending or rounds[e["source"]] > len(stored):
            return
        rounds[e["source"]] += 1
        report.add(e["source"], None, kind, message)
        pending.add(e["source"])
        again.append(_again(e))

    while (item := _next()) is not None:
        label, path, src, rid, now, old = item
        pending.discard(src)
        key = run_key(rid)
        held = keys.held(key)
        # the runs that dropped simulations this one held are marked before it changes (a kill before they are
        # ingested again leaves the mark, and the next ingest takes them), unmarked after when it freed none
        marked = []
        if old is not None:
            for e in list(stored.values()):
                if (key in e.get("overlaps", ()) and e["source"] != src and not e.get("recheck")
                        and Path(e["source"]).exists()):  # fmt: skip
                    stored[e["source"]] = {**e, "recheck": True}
                    write_entry(root, stored[e["source"]])
                    marked.append(e["source"])
        token = new_token()
        written: list[Path] = []
        try:
            later = frozenset(e["run_key"] for s2, e in stored.items()
                              if not strict and src in order and s2 in order and order[s2] > order[src])  # fmt: skip
            entry, sim_keys, taken = _ingest_one(root, path, src, rid, label, now, strict, report, keys, per_part,
                                                 token, written, later)  # fmt: skip
            for s2, e in list(stored.items()):  # marked before this commit: a kill leaves them to the next ingest
                if e["run_key"] in taken and not e.get("recheck"):
                    stored[s2] = {**e, "recheck": True}
                    write_entry(root, stored[s2])
            write_entry(root, entry)  # the commit point of this run
        except BaseException as exc:
            for f in written:  # never committed: nothing names them
                with contextlib.suppress(OSError):
                    f.unlink()
            if isinstance(exc, LoadError) and report.ingested:
                # each source is committed on its own: say what this ingest stored before the one at fault
                raise LoadError(exc.path, exc.location, f"{exc.message} — not stored; the {len(report.ingested)} "
                                "source(s) before it in this ingest were stored and stay (each source is committed "
                                "on its own; ingest again once it is fixed: unchanged sources are skipped)") from None
            raise
        if old is not None:  # after the commit: the old parts no entry names any more
            for rel in (f for fs in old["files"].values() for f in fs):
                if rel not in entry["sizes"]:
                    remove_part(root, rel)
        keys.replace(key, token, sim_keys)
        stored[src] = entry
        if src not in report.ingested:
            report.ingested.append(src)
        if old is not None and src not in report.replaced:
            report.replaced.append(src)
        freed = held.difference(keys.held(key))
        gave = [e for e in stored.values() if e["run_key"] in taken]
        for e in gave:  # they held simulations this run keeps: ingested again, they drop them
            requeue(e, "overlap_taken", f"some of its simulations are kept under {rid!r}, which comes first among "
                    "the sources (as tauk.load keeps them); ingested again")  # fmt: skip
        if not freed:
            for s_ in marked:
                if stored[s_]["run_key"] in taken:
                    continue
                stored[s_] = {k: v for k, v in stored[s_].items() if k != "recheck"}
                write_entry(root, stored[s_])
        else:
            for e in list(stored.values()):
                if key in e.get("overlaps", ()) and e["source"] != src and Path(e["source"]).exists():
                    requeue(e, "overlap_freed", f"some of its simulations were kept once under {rid!r}, which "
                            "changed; ingested again")  # fmt: skip
        since_trim += now["size"]
        if since_trim >= TRIM_BYTES:
            _trim()
            since_trim = 0
    if keys is not None:
        keys.save()
    marker.unlink()  # finished: nothing left behind to sweep


def _ingest_one(root: Path, path: Path, src: str, rid: str, label: str | None, now: dict[str, Any],
                strict: bool, report: IngestReport, existing: _KeyIndex, per_part: int, token: str,
                written: list[Path], before: frozenset[str] = frozenset()) -> tuple[dict[str, Any], pl.Series, set[str]]:  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LoadWarning)
        res = load({label: path} if label is not None else path, strict=strict, progress=False)
    for w in caught:
        warnings.warn(str(w.message), w.category, stacklevel=5)
    report.issues += res.report.issues
    report.files_loaded += res.report.files_loaded
    known = {k: v for run in res._runs for k, v in run.identities().items()}
    digest = content_hash(path, known)  # the bytes just decoded were hashed as they were read
    lit = pl.lit(rid, dtype=pl.String)
    frames = {name: getattr(res, name).with_columns(run_id=lit) for name in ("runs", "trials", "tasks",
                                                                           "expected_actions")}  # fmt: skip
    trials = frames["trials"]
    key = run_key(rid)
    keys = _sim_keys(trials, label)
    dup = list(existing.owners(keys, key).iter_rows())
    # simulations held by a run that comes after this one in this ingest's sources are this one's, as tauk.load keeps
    # a simulation in the first file that has it; that run is ingested again after this one and drops them
    taken = {r for _, r in dup if r in before}
    dup = [(k, r) for k, r in dup if r not in before]
    drop: set[str] = set()
    overlap_issue = None
    if dup:
        names = existing_names(root, {r for _, r in dup})
        msg = (f"{len(dup)} of its {trials.height} simulations are already in the store under "
               f"{', '.join(names)} (a checkpoint and its final file?); they would count twice")  # fmt: skip
        if strict:
            raise LoadError(src, None, msg + " (ingest one of them, or give different labels)")
        drop = set(trials.filter(keys.is_in([k for k, _ in dup]))["simulation_id"].to_list())
        if len(dup) == trials.height:  # the whole file is a copy: left out as tauk.load leaves it (no run, no tasks)
            msg = f"the same results are already in the store under {', '.join(names)}; every trial would count twice"
            overlap_issue = report.add(src, None, "duplicate_run", msg + "; this copy skipped", skipped=1)
            warnings.warn(f"{src}: {msg}; this copy skipped", LoadWarning, stacklevel=5)
            for name in ("runs", "tasks", "expected_actions"):
                frames[name] = frames[name].head(0)
        else:
            overlap_issue = report.add(src, None, "overlapping_runs", msg + "; kept once", skipped=len(dup))
            warnings.warn(f"{src}: {msg}; kept once", LoadWarning, stacklevel=5)
            kept_res = _without(res, trials, drop)
            if kept_res is not None:  # the frames of the simulations kept, as tauk.load builds them (runs'
                res = kept_res        # n_simulations, the tasks' graded_as_embedded …)
                frames = {name: getattr(res, name).with_columns(run_id=lit) for name in ("runs", "trials", "tasks",
                                                                                       "expected_actions")}  # fmt: skip
                trials = frames["trials"]
    files: dict[str, list[str]] = {name: [] for name in FRAMES}
    sizes: dict[str, int] = {}
    staged: list[tuple[Path, Path, str]] = []

    def write(frame: pl.DataFrame, name: str, part: int) -> None:
        _fits_writing(frame, name, src)
        folder = run_dir(root, name, key, create=True)
        final = folder / f"part-{part:05d}-{token}.parquet"
        tmp = folder / f".{final.name}.tmp"
        written.append(tmp)
        frame.write_parquet(tmp, statistics=True)
        rel = f"{name}/run={key}/{final.name}"
        files[name].append(rel)
        sizes[rel] = tmp.stat().st_size
        staged.append((tmp, final, rel))

    for name in ("runs", "tasks", "expected_actions"):
        write(frames[name], name, 0)
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
            write(frame, name, part)
            counts[name] += frame.height
    if not files["trials"]:
        write(trials.head(0), "trials", 0)
        for name in ("messages", "tool_calls"):  # the contracts' schemas: nothing to decode
            write(pl.DataFrame(schema=frame_schema(name)), name, 0)
    for tmp, final, _ in staged:  # new names: the parts readers are reading are never replaced
        os.replace(tmp, final)
        written.append(final)
    kept_keys = _sim_keys(trials.filter(~pl.col("simulation_id").is_in(list(drop))), label) if drop else keys
    entry = {
        "source": src,
        **now,
        "hash": digest,
        "run_id": rid,
        "run_key": key,
        "token": token,
        "label": label,
        "format": res.runs["format"][0] if res.runs.height else None,
        "counts": counts,
        # what tauk.load reports for this source, by kind and count (the store's Results.report gives them back;
        # entries written before them have their lines only, "report")
        "issues": [{"location": i.location, "kind": i.kind, "message": i.message, "skipped": i.skipped}
                   for i in [*res.report.issues, *([overlap_issue] if overlap_issue else [])]],
        "overlaps": sorted({r for _, r in dup}),  # the runs holding the simulations dropped here
        "files": files,
        "sizes": sizes,
    }
    return entry, kept_keys, taken


def _again(e: dict[str, Any]) -> tuple:
    """The work item that ingests a stored entry's source again (its label, run id and entry kept)."""
    return (e.get("label"), Path(e["source"]), e["source"], e["run_id"], source_identity(Path(e["source"])), e)


def _note_recheck(report: IngestReport, src: str) -> None:
    report.add(src, None, "overlap_freed", "some of its simulations were kept once under another run, which "
               "changed; ingested again")  # fmt: skip


def _without(res: Any, trials: pl.DataFrame, drop: set[str]) -> Any:
    """``res`` without the simulations ``drop`` (as tauk.load drops a checkpoint's overlap before it builds any
    frame), or None when its one run's simulations do not line up with the trials frame."""
    if len(res._runs) != 1:
        return None
    run = res._runs[0]
    records = run.tb_records if run.format == "taubench" else run.simulations
    if len(records) != trials.height or len(run.sim_sources) not in (0, len(records)):
        return None
    keep = (~trials["simulation_id"].is_in(list(drop))).to_list()
    kept = [r for r, k in zip(records, keep) if k]
    if run.format == "taubench":
        run.tb_records = kept
    else:
        run.simulations = kept
    if run.sim_sources:
        run.sim_sources = [r for r, k in zip(run.sim_sources, keep) if k]
    return type(res)(res._runs, res._run_ids, res._agents, res.report, strict=res._strict, progress=False)


def _fits_writing(frame: pl.DataFrame, name: str, src: str) -> None:
    """Refuse, before it starts, a Parquet write that cannot fit in the address space or memory left: writing a
    frame that holds one huge value reserves many times that value (measured: a 60 MB string took 1,000 MB of
    address space, 16.7x), and past the limit Polars aborts the process."""
    text = [c for c, t in frame.schema.items() if t == pl.String]
    if not text or not frame.height:
        return
    big = frame.select(pl.max_horizontal(pl.col(text).str.len_bytes().max())).item() or 0
    short = record_shortfall(int(big))
    if short is not None:
        kind, needed, left = short
        raise LoadError(src, None, f"a value of {big / 1e6:,.0f} MB in its {name}: writing it needs about "
                        f"{needed / 1e6:,.0f} MB of {kind}, {max(left, 0) / 1e6:,.0f} MB left; free memory or raise "
                        "the limit")  # fmt: skip


def existing_names(root: Path, keys: set[str]) -> list[str]:
    """The run ids of the runs with these keys (for messages)."""
    folder = root / ENTRIES
    out = []
    for k in sorted(keys):
        try:
            out.append(json.loads((folder / f"{k}.json").read_bytes())["run_id"])
        except (OSError, ValueError, KeyError, TypeError):
            out.append(f"run={k}")
    return out


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


def _sweep(root: Path, entries: list[dict[str, Any]]) -> None:
    """Remove what no entry names — parts and temporary files of interrupted ingests — never following a link
    (a link itself is left alone: nothing is read or deleted through it) and never leaving the store."""
    named = {f for e in entries for fs in e["files"].values() for f in fs}
    for name in FRAMES:
        folder = root / name
        if folder.is_symlink() or not folder.is_dir():
            continue
        with os.scandir(folder) as runs:
            for d in runs:
                if not d.is_dir(follow_symlinks=False) or not d.name.startswith("run="):
                    continue
                with os.scandir(d.path) as parts:
                    for f in parts:
                        if (f.is_file(follow_symlinks=False) or f.is_symlink()) and \
                                f"{name}/{d.name}/{f.name}" not in named:  # a link: itself removed, never its target
                            os.unlink(f.path)
                with contextlib.suppress(OSError):
                    os.rmdir(d.path)  # only when empty
    for folder in (root, root / ENTRIES):
        if folder.is_symlink() or not folder.is_dir():
            continue
        with os.scandir(folder) as items:
            for f in items:
                if f.name.startswith(".") and f.name.endswith(".tmp") and f.is_file(follow_symlinks=False):
                    os.unlink(f.path)


TRIM_BYTES = 32 << 20
"""Source bytes ingested between two returns of freed memory to the system (a full garbage collection costs
tens of milliseconds: once per small file it was most of an ingest's time; once per 32 MB it is noise)."""


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

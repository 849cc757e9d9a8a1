"""The layout of a store on disk: the entries (one commit point per run), the Parquet partitions and the lock.

::

    STORE/
      manifest.json                             marks the store and its layout version ({"tauk_store": 2})
      sources/<key>.json                        one entry per ingested run: its source, identity and files
      runs/run=<key>/part-00000-<token>.parquet one folder per run (key: a hash of its run id) …
      trials/run=<key>/part-00000-<token>.parquet … one Parquet file per chunk of whole simulations
      tasks/…  expected_actions/…  messages/…  tool_calls/…
      keys.parquet                              the simulation keys of every run (a cache for the overlap check)
      .lock                                     held (flock) while an ingest writes

**The promises.** A run's entry is its commit point: an ingest writes a run's new parts under new names (a token
per commit), then replaces the entry atomically, then removes the old parts. A kill at any point therefore leaves
every run as it was before or as it is after; files no entry names are leftovers, swept by the next ingest. Readers
read only the files the entries name, check each exists with its recorded size, and follow a run to its new entry
when a re-ingest replaces it while they read. The store never follows a symbolic link inside itself, and never
reads, writes or deletes a path outside its folder: every path an entry names is checked against the one pattern
tauk writes (``<frame>/run=<key>/part-NNNNN[-<token>].parquet``) and its folders against links.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import socket
import stat
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from tauk.errors import LoadReport, LoadWarning, TaukError
from tauk.io.columns import FRAMES  # re-exported for the store's modules

__all__ = ["FORMAT", "FRAMES", "StoreError", "manifest_path", "read_manifest", "read_entries", "write_entry",
           "lock", "run_key", "part_path", "run_dir", "remove_part", "new_token", "is_store"]  # fmt: skip

FORMAT = 2
"""The version of the store layout written; version 1 (one ``manifest.json`` listing every source) is read, and
converted by the next ingest. Any other version is refused by name."""

READABLE = (1, 2)
ENTRIES = "sources"
KEYS_FILE = "keys.parquet"
_ENTRY_NAME = re.compile(r"^[0-9a-f]{16}\.json$")
_PART = re.compile(r"^(?P<frame>[a-z_]+)/run=(?P<key>[0-9a-f]{16})/part-\d{5}(?:-[0-9a-f]{12})?\.parquet$")
_REQUIRED = {"source": str, "run_id": str, "run_key": str, "files": dict, "sizes": dict, "counts": dict}


class StoreError(TaukError):
    """A store that cannot be used as it is (another version, an entry or a part that does not match, a lock, a
    read-only folder): one line naming the store and the part at fault."""


def manifest_path(root: Path) -> Path:
    return Path(root) / "manifest.json"


def is_store(root: Path) -> bool:
    return manifest_path(root).is_file()


def run_key(run_id: str) -> str:
    """The partition folder name of a run (``run=<16 hex digits>``): safe on every file system."""
    return hashlib.blake2b(run_id.encode("utf-8"), digest_size=8).hexdigest()


def new_token() -> str:
    """A fresh name part for one commit's files (12 hex digits): new parts never overwrite the ones readers read."""
    return uuid.uuid4().hex[:12]


# ---- reading the entries ------------------------------------------------------------------------------------
def _header(root: Path) -> dict[str, Any] | None:
    path = manifest_path(root)
    if not path.exists():
        return None
    if path.is_symlink() or not path.is_file():
        raise StoreError(f"{path}: not a regular file (the store never follows links)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: unreadable manifest ({exc})") from None
    version = doc.get("tauk_store") if isinstance(doc, dict) else None
    if version not in READABLE:
        raise StoreError(f"{path}: a store of layout version {version!r}, this tauk reads versions "
                         f"{', '.join(map(str, READABLE))}; ingest the sources again into a new store")  # fmt: skip
    if version == 1 and not isinstance(doc.get("sources"), list):
        raise StoreError(f"{path}: manifest without a list of sources")
    return doc


def check_entry(root: Path, e: Any, where: str, stem: str | None = None) -> dict[str, Any]:
    """``e`` if it is a well-formed entry (required keys and types, a run key that is its run id's, every path
    inside the store by the one pattern tauk writes, a recorded size per file), else a :class:`StoreError` naming
    ``where``."""

    def bad(what: str) -> StoreError:
        return StoreError(f"{root}: {where}: {what}; restore it, or delete it and ingest its source again")

    if not isinstance(e, dict):
        raise bad(f"an entry must be an object, found {type(e).__name__}")
    for key, kind in _REQUIRED.items():
        if not isinstance(e.get(key), kind):
            raise bad(f"{'missing' if key not in e else 'malformed'} {key!r}")
    if not e["run_id"] or "\x00" in e["run_id"]:
        raise bad("empty run_id")
    if e["run_key"] != run_key(e["run_id"]) or (stem is not None and stem != e["run_key"]):
        raise bad("run_key is not the hash of its run_id (or of the entry's name)")
    files, sizes = e["files"], e["sizes"]
    if set(files) != set(FRAMES):
        raise bad(f"files must list the frames {', '.join(FRAMES)}")
    for frame, paths in files.items():
        if not isinstance(paths, list) or not paths:
            raise bad(f"files[{frame!r}] must be a non-empty list")
        for rel in paths:
            m = _PART.match(rel) if isinstance(rel, str) else None
            if m is None or m["frame"] != frame or m["key"] != e["run_key"]:
                raise bad(f"files[{frame!r}] names {rel!r}, not a part of this run inside the store")
            if not isinstance(sizes.get(rel), int) or isinstance(sizes.get(rel), bool) or sizes[rel] < 0:
                raise bad(f"no recorded size for {rel}")
    if not len(files["trials"]) == len(files["messages"]) == len(files["tool_calls"]):
        raise bad("trials, messages and tool_calls must have as many parts")
    if not isinstance(e["counts"].get("trials", 0), int):
        raise bad("malformed counts")
    if not isinstance(e.get("report", []), list) or not isinstance(e.get("label"), str | None):
        raise bad("malformed report or label")
    issues = e.get("issues", [])
    if not isinstance(issues, list) or not all(
            isinstance(i, dict) and isinstance(i.get("kind"), str) and isinstance(i.get("message"), str)
            and isinstance(i.get("location"), str | None) and type(i.get("skipped")) is int and i["skipped"] >= 0
            for i in issues):  # fmt: skip
        raise bad("malformed issues")
    return e


def read_entries(root: Path) -> tuple[int, list[dict[str, Any]]]:
    """``(layout version, entries sorted by run id)`` of the store at ``root`` (``(FORMAT, [])`` for a new one),
    each entry checked (:func:`check_entry`), no source or run listed twice."""
    root = Path(root)
    doc = _header(root)
    if doc is None:
        return FORMAT, []
    out: list[dict[str, Any]] = []
    if doc["tauk_store"] == 1:
        for i, e in enumerate(doc["sources"]):
            out.append(check_entry(root, e, f"manifest.json sources[{i}]"))
    else:
        folder = root / ENTRIES
        if folder.is_symlink():
            raise StoreError(f"{root}: {ENTRIES}/ is a symbolic link (the store never follows links)")
        names = sorted(os.listdir(folder)) if folder.is_dir() else []
        for name in names:
            if name.startswith("."):  # an entry being written (a temporary file)
                continue
            where = f"{ENTRIES}/{name}"
            if not _ENTRY_NAME.match(name):
                raise StoreError(f"{root}: {where}: not a store entry (entries are <16 hex digits>.json)")
            path = folder / name
            try:
                info = os.lstat(path)
                if not stat.S_ISREG(info.st_mode):
                    raise StoreError(f"{root}: {where}: not a regular file (the store never follows links)")
                e = msgspec.json.decode(path.read_bytes())
            except FileNotFoundError:  # removed since the listing
                continue
            except (OSError, ValueError, msgspec.DecodeError) as exc:
                raise StoreError(f"{root}: {where}: unreadable entry ({exc})") from None
            out.append(check_entry(root, e, where, stem=name[:-5]))
    seen_src: dict[str, str] = {}
    seen_run: set[str] = set()
    for e in out:
        if e["source"] in seen_src:
            raise StoreError(f"{root}: the source {e['source']} is listed twice (runs {seen_src[e['source']]!r} and "
                             f"{e['run_id']!r}); delete one entry and ingest it again")  # fmt: skip
        if e["run_id"] in seen_run:
            raise StoreError(f"{root}: the run {e['run_id']!r} is listed twice; delete one entry and ingest again")
        seen_src[e["source"]] = e["run_id"]
        seen_run.add(e["run_id"])
    return doc["tauk_store"], sorted(out, key=lambda e: e["run_id"])


def read_manifest(root: Path) -> dict[str, Any]:
    """The store's content as one document: ``{"tauk_store": version, "sources": [entries]}``."""
    version, entries = read_entries(root)
    return {"tauk_store": version, "sources": entries}


def snapshot(entries: list[dict[str, Any]]) -> tuple:
    """What identifies the committed state of ``entries`` (a run's token changes with every commit)."""
    return tuple((e["run_key"], e.get("token")) for e in entries)


# ---- paths inside the store ---------------------------------------------------------------------------------
def _real_dir(path: Path, root: Path, create: bool) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise
        path.mkdir(exist_ok=True)
        info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise StoreError(f"{root}: {path.relative_to(root)} is {'a symbolic link' if stat.S_ISLNK(info.st_mode) else 'not a folder'}"
                         "; the store never follows links out of itself (remove it and ingest again)")  # fmt: skip


def run_dir(root: Path, frame: str, key: str, create: bool = False) -> Path:
    """``root/frame/run=key``, checked to be real folders (no symbolic link), created when asked."""
    _real_dir(root / frame, root, create)
    _real_dir(root / frame / f"run={key}", root, create)
    return root / frame / f"run={key}"


def part_path(root: Path, rel: str) -> Path:
    """The path of a part an entry names, checked: tauk's pattern, real folders, a regular file (not a link)."""
    m = _PART.match(rel)
    if m is None:
        raise StoreError(f"{root}: {rel!r} is not a part of the store")
    folder = run_dir(root, m["frame"], m["key"])
    path = folder / rel.rsplit("/", 1)[1]
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise StoreError(f"{root}: {rel} is not a regular file (a link?); the store never follows links")
    return path


def remove_part(root: Path, rel: str) -> None:
    """Delete a part an entry named — a link in its place is removed itself, never what it points to — when its
    folders are real folders inside the store; anything else (gone already, a linked folder) is left alone."""
    m = _PART.match(rel)
    if m is None:
        return
    with contextlib.suppress(FileNotFoundError, StoreError):
        folder = run_dir(root, m["frame"], m["key"])
        os.unlink(folder / rel.rsplit("/", 1)[1])


# ---- writing an entry (the commit point of a run) -----------------------------------------------------------
def write_entry(root: Path, entry: dict[str, Any]) -> None:
    """Replace the entry of ``entry``'s run atomically: the commit point of that run."""
    folder = root / ENTRIES
    _real_dir(folder, root, create=True)
    path = folder / f"{entry['run_key']}.json"
    tmp = folder / f".{entry['run_key']}.{os.getpid()}.{uuid.uuid4().hex[:6]}.tmp"
    tmp.write_text(json.dumps(entry, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def write_header(root: Path) -> None:
    """Write ``manifest.json`` of the current layout (a new store, or the last step of converting a version-1 one)."""
    path = manifest_path(root)
    tmp = root / f".manifest.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"tauk_store": FORMAT}, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


# ---- the lock -----------------------------------------------------------------------------------------------
STALE_AFTER = 120.0
"""Seconds without a heartbeat after which a lock is stale on a file system without ``flock`` (a holder refreshes
its lock file every :data:`HEARTBEAT` seconds). With ``flock`` (local file systems, NFS through its lock manager)
a lock dies with its process and no timeout is needed."""

HEARTBEAT = 10.0


def _holder(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
        return doc if isinstance(doc, dict) else {}
    except ValueError:
        m = re.match(r"pid (\d+)", text)  # the layout-1 lock: "pid N since TIME"
        return {"pid": int(m.group(1))} if m else {}


def _describe(h: dict[str, Any]) -> str:
    if not h:
        return "lock file present"
    return f"pid {h.get('pid', '?')} on {h.get('host', '?')} since {h.get('since', '?')}"


def _alive(pid: Any) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, TypeError, OverflowError):
        return True
    return True


def _stale_without_flock(path: Path, h: dict[str, Any]) -> bool:
    if h.get("host") == socket.gethostname() and "pid" in h:
        return not _alive(h["pid"])
    try:
        return time.time() - os.stat(path).st_mtime > STALE_AFTER
    except OSError:
        return True


def _open_lock(root: Path) -> int:
    try:
        return os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise StoreError(f"{root}: the store is read-only ({exc.strerror}): it can be opened and read, not "
                             "ingested into") from None  # fmt: skip
        raise StoreError(f"{root}: cannot create its lock file ({exc.strerror})") from None


@contextlib.contextmanager
def lock(root: Path, wait: float = 0.0, report: LoadReport | None = None) -> Iterator[None]:
    """Hold the store's lock while writing. A live holder makes a second writer wait up to ``wait`` seconds, then
    refuses it by name. A lock left by a process that is gone (``flock`` released by the kernel; without ``flock``:
    a dead pid on this host, or no heartbeat for :data:`STALE_AFTER` seconds) is taken over with a warning and a
    report line. A read-only store is refused by name."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the pid / heartbeat rule alone
        fcntl = None  # type: ignore[assignment]

    root = Path(root)
    path = root / ".lock"
    deadline = time.monotonic() + wait
    while True:
        fd = _open_lock(root)
        held: bool | None = False
        try:
            if fcntl is None:
                raise OSError(errno.ENOSYS, "no flock")
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held = True
        except OSError as exc:  # no flock on this file system: the pid / heartbeat rule
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                os.close(fd)
                raise StoreError(f"{root}: cannot lock the store ({exc.strerror})") from None
            held = None
        text = ""
        with contextlib.suppress(OSError):
            text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        h = _holder(text)
        if held is None:
            held = bool(text) and not _stale_without_flock(path, h)
        same = False
        if not held:
            with contextlib.suppress(OSError):
                same = os.fstat(fd).st_ino == os.stat(path).st_ino  # not a lock file unlinked meanwhile
        if not held and same:
            break
        os.close(fd)
        if held and time.monotonic() >= deadline:
            raise StoreError(f"{root}: another ingest holds the store ({_describe(h)}); wait for it (--wait "
                             "SECONDS)")  # fmt: skip
        time.sleep(0.05 if not held else 0.2)
    if text:  # a lock file nobody holds: left by a process that is gone
        msg = f"took over a stale lock ({_describe(h)}: that ingest is no longer running)"
        if report is not None:
            report.add(str(root), ".lock", "stale_lock", msg)
        warnings.warn(f"{root}: {msg}", LoadWarning, stacklevel=3)
    me = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(me).encode(), 0)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT):
            with contextlib.suppress(OSError):
                os.utime(fd)

    beater = threading.Thread(target=beat, name="tauk-store-heartbeat", daemon=True)
    beater.start()
    try:
        yield
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            path.unlink()  # while still held: a waiting writer then finds a new file, not this one
        os.close(fd)

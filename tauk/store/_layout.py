"""The layout of a store on disk: the manifest (the commit point), the Parquet partitions and the lock.

::

    STORE/
      manifest.json                         what the store holds (the commit point, see below)
      runs/run=<key>/part-00000.parquet     one folder per ingested run (key: a hash of its run id) …
      trials/run=<key>/part-00000.parquet   … one Parquet file per chunk of whole simulations
      tasks/…  expected_actions/…  messages/…  tool_calls/…
      .lock                                 held while an ingest writes

Every Parquet file is written under a temporary name and renamed into place; the manifest is then replaced
atomically. A file the manifest does not name is not part of the store (an interrupted ingest leaves such files;
the next ingest removes them), so readers always see a consistent store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tauk.errors import TaukError
from tauk.io.columns import FRAMES  # re-exported for the store's modules

__all__ = ["FORMAT", "FRAMES", "StoreError", "manifest_path", "read_manifest", "write_manifest", "lock", "run_key"]

FORMAT = 1
"""The version of the store layout; a store written under another version is refused by name."""


class StoreError(TaukError):
    """A store that cannot be used as it is (another version, a manifest that does not match its files, a lock)."""


def manifest_path(root: Path) -> Path:
    return Path(root) / "manifest.json"


def run_key(run_id: str) -> str:
    """The partition folder name of a run (``run=<16 hex digits>``): safe on every file system."""
    return hashlib.blake2b(run_id.encode("utf-8"), digest_size=8).hexdigest()


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of the store at ``root`` (an empty one for a new store), checked for its version."""
    path = manifest_path(root)
    if not path.exists():
        if Path(root).exists() and any(Path(root).iterdir()) and not (Path(root) / ".lock").exists():
            entries = {p.name for p in Path(root).iterdir()}
            if not entries <= {*FRAMES, ".lock", "manifest.json"}:
                raise StoreError(f"{root}: not a tauk store (no manifest.json, and it holds other files)")
        return {"tauk_store": FORMAT, "sources": []}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"{path}: unreadable manifest ({exc})") from None
    version = doc.get("tauk_store") if isinstance(doc, dict) else None
    if version != FORMAT:
        raise StoreError(f"{path}: a store of layout version {version!r}, this tauk reads version {FORMAT}; "
                         "ingest the sources again into a new store")  # fmt: skip
    if not isinstance(doc.get("sources"), list):
        raise StoreError(f"{path}: manifest without a list of sources")
    return doc


def write_manifest(root: Path, doc: dict[str, Any]) -> None:
    """Replace the manifest atomically (the commit point of an ingest)."""
    path = manifest_path(root)
    tmp = path.with_name(f".manifest.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


@contextlib.contextmanager
def lock(root: Path, wait: float = 0.0) -> Iterator[None]:
    """Hold the store's lock file while writing; a second writer waits up to ``wait`` seconds, then is refused."""
    path = Path(root) / ".lock"
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            if time.monotonic() >= deadline:
                holder = ""
                with contextlib.suppress(OSError):
                    holder = path.read_text().strip()
                raise StoreError(f"{root}: another ingest holds the store ({holder or 'lock file present'}); "
                                 f"wait for it, or remove {path} if no ingest is running") from None  # fmt: skip
            time.sleep(0.2)
    try:
        os.write(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode())
        os.close(fd)
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()

"""The identity of an ingest's source and whether a stored run is still current (:mod:`tauk.store`): the metadata
and content hash of a source's files, and the checks that a stored run's parts are whole and of this version's
columns."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadError
from tauk.io.files import file_kind, fingerprint, read_bytes

from ._layout import part_path
from ._results import check_files, frame_schema

__all__ = ["source_identity", "content_hash", "parts_intact", "current_columns"]


# ---- the identity of a source -------------------------------------------------------------------------------
def _source_files(path: Path) -> list[Path]:
    """The files a source is read from: the file, or a directory run's results.json and simulations/*.json."""
    if not path.is_dir():
        return [path]
    sims = path / "simulations"
    return [path / "results.json", *sorted(sims.glob("*.json"))] if sims.is_dir() else [path / "results.json"]


def source_identity(path: Path) -> dict[str, Any]:
    """The metadata of a source's files, taken without reading them: ``stat`` (a digest of each file's device,
    inode, size, modification and change times), ``size``, ``mtime_ns``, ``ctime_ns`` (the latest) and ``stat_ns``
    (when taken). Equal metadata proves equal content — a write always moves the change time, which no tool can
    set back — unless the change time is within :data:`RACY_NS` of ``stat_ns``."""
    h = hashlib.sha256()
    size = mtime = ctime = 0
    now = time.time_ns()
    for f in _source_files(path):
        rel = str(f.relative_to(path)) if f != path else f.name
        try:
            info = os.stat(f)
        except OSError as exc:
            h.update(f"{rel}\0{exc.errno}\n".encode())
            continue
        h.update(f"{rel}\0{info.st_dev}\0{info.st_ino}\0{info.st_mode}\0{info.st_size}\0{info.st_mtime_ns}\0"
                 f"{info.st_ctime_ns}\n".encode())  # fmt: skip
        size += info.st_size
        mtime, ctime = max(mtime, info.st_mtime_ns), max(ctime, info.st_ctime_ns)
    return {"stat": h.hexdigest()[:32], "size": size, "mtime_ns": mtime, "ctime_ns": ctime, "stat_ns": now}


def content_hash(path: Path, known: Mapping[str, tuple[int, int, str]] | None = None) -> str:
    """A hash of everything a source holds (SHA-256 of each file's bytes, a byte-order mark skipped, combined with
    the file names). ``known``: fingerprints of files the load just read and decoded (``RunData.identities()``), used
    when the file still has the recorded size and modification time — so a new source is read once, not twice."""
    lines = []
    for f in _source_files(path):
        rel = str(f.relative_to(path)) if f != path else ""
        try:
            info = os.stat(f)
        except OSError as exc:
            lines.append(f"{rel}\0missing {exc.errno}")
            continue
        kind = file_kind(info.st_mode)
        if kind is not None:
            lines.append(f"{rel}\0{kind}")
            continue
        have = (known or {}).get(str(f))
        if have is not None and have[:2] == (info.st_size, info.st_mtime_ns):
            lines.append(f"{rel}\0{have[2]}")
        else:
            try:
                lines.append(f"{rel}\0{fingerprint(read_bytes(f, decode=False))}")
            except LoadError as exc:
                lines.append(f"{rel}\0unreadable {exc.message}")
    if len(lines) == 1 and not path.is_dir():
        return "sha256:" + lines[0].split("\0", 1)[1]
    return "sha256:" + hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def parts_intact(root: Path, entry: dict[str, Any]) -> bool:
    """Every part of ``entry`` is there with its recorded size (a look at the metadata, nothing read)."""
    try:
        check_files(root, [entry])
    except Exception:  # noqa: BLE001 - missing, resized, or a link: the run is written again (or refused then)
        return False
    return True


def current_columns(root: Path, entry: dict[str, Any]) -> bool:
    """The parts of ``entry`` have this version's columns (their Parquet footers read, not their data): a run
    stored by another version of tauk, whose frames had other columns, is ingested again even when its source did
    not change — else the store mixes two column sets that no read can join."""
    for frame, files in entry["files"].items():
        if files:
            try:
                if dict(pl.read_parquet_schema(part_path(root, files[0]))) != dict(frame_schema(frame)):
                    return False
            except (OSError, pl.exceptions.PolarsError, AttributeError):
                return True  # unreadable: the read names the damaged part
    return True

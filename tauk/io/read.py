"""Read one results file or directory into a :class:`RunData` (decoded, not yet framed).

Errors name the file, the place in it and what was wrong (:class:`tauk.LoadError`). In non-strict mode a problem
confined to one simulation skips that simulation and is counted in the :class:`tauk.LoadReport`.

The shape is detected here; the reader of each format is in :mod:`tauk.io.formats`, :class:`RunData` (and the
identity of the bytes read, :func:`read_again`) in :mod:`tauk.io.rundata`. Both are importable from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from tauk.errors import LoadError, LoadReport

# ``X as X``: names this module held or imported before tauk.io.formats / tauk.io.rundata were split off
from tauk.io.checks import check_duplicates as check_duplicates
from tauk.io.checks import check_numbers, parse_tool_calls_string
from tauk.io.checks import check_stringified as check_stringified
from tauk.io.files import (
    BOM,
    DECODE_ERRORS,
    bounded_nesting,
    error_location,
    file_kind,
    fingerprint,
    first_invalid_utf8,
    is_regular,
    memory_message,
    read_bytes,
    release,
)
from tauk.io.files import _raise as _raise
from tauk.io.formats import _KEYS, _PEEK, _first_keys, list_kind, read_list, read_tau2_dir, read_tau2_file
from tauk.io.formats import _TB_RAW as _TB_RAW
from tauk.io.formats import TASKS_FILE_HINT as TASKS_FILE_HINT
from tauk.io.formats import decode_each as decode_each
from tauk.io.rundata import RunData, read_again, remember
from tauk.io.scan import array_elements as array_elements

__all__ = [  # the file-level helpers are re-exported for the modules that read them from here
    "BOM",
    "DECODE_ERRORS",
    "RunData",
    "bounded_nesting",
    "check_numbers",
    "error_location",
    "file_kind",
    "fingerprint",
    "first_invalid_utf8",
    "is_regular",
    "looks_like_results",
    "memory_message",
    "parse_tool_calls_string",
    "read_again",
    "read_scanned",
    "read_bytes",
    "read_source",
    "release",
    "remember",
]


def first_char(data: bytes) -> str:
    """The first character that is not JSON whitespace (space, tab, CR, LF: ``str.isspace`` would pass over the
    bytes 0x1c–0x1f, 0x85 and 0xa0 too, and name a later byte in the error); "" when there is none."""
    for b in bytes(data[:4096]):
        if b not in b" \t\r\n":
            return chr(b)
    return ""


# what a file that is not UTF-8 JSON text starts with, for an error saying what it is
_NOT_JSON_TEXT = ((b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip)"),
                  (b"\xff\xfe\x00\x00", "UTF-32 text (a UTF-32 byte-order mark): save it as UTF-8"),
                  (b"\x00\x00\xfe\xff", "UTF-32 text (a UTF-32 byte-order mark): save it as UTF-8"),
                  (b"\xff\xfe", "UTF-16 text (a UTF-16 byte-order mark): save it as UTF-8"),
                  (b"\xfe\xff", "UTF-16 text (a UTF-16 byte-order mark): save it as UTF-8"),
                  (b"PK\x03\x04", "a zip archive: extract it first"),
                  (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first"),
                  (b"BZh", "bzip2-compressed: decompress it first"),
                  (b"\xfd7zXZ\x00", "xz-compressed: decompress it first"))  # fmt: skip


def not_json_text(data: Any) -> str | None:
    """What the file is when its first bytes say it is not UTF-8 JSON text (compressed, an archive, UTF-16/32)."""
    head = bytes(data[:8])
    return next((what for magic, what in _NOT_JSON_TEXT if head.startswith(magic)), None)


def read_source(path: Path, strict: bool, report: LoadReport) -> RunData:
    """Read a results file or directory, detecting its shape."""
    with bounded_nesting():
        return _read_source(path, strict, report)


def _read_source(path: Path, strict: bool, report: LoadReport) -> RunData:
    if path.is_dir():
        if (path / "results.json").exists():
            return read_tau2_dir(path, strict, report)
        raise LoadError(str(path), None, "a directory without results.json is not a directory-format run")
    if is_dir_metadata(path):  # a directory-format run given as its results.json, as the upstream accepts it
        return read_tau2_dir(path.parent, strict, report)
    return _decode(path, read_bytes(path), strict, report)  # type: ignore[return-value]


def _decode(path: Path, data: Any, strict: bool, report: LoadReport, scanned: bool = False) -> RunData | None:
    """The run in the bytes read from ``path`` (released after). ``scanned`` (a file a folder scan met): None where
    it is not a results file — an object is decoded straight away and peeked at only where that fails, so that "not
    a results file" (None) is told from a results file with an error (raised)."""
    try:
        if scanned and first_char(data) != "{" and not _holds_results(data):
            return None
        try:
            return _read_file(path, data, strict, report)
        except LoadError:
            if scanned and not _holds_results(data):
                return None
            raise
    except MemoryError:
        raise LoadError(str(path), None, memory_message(path)) from None
    finally:
        release(data)


def is_dir_metadata(path: Path) -> bool:
    """``path`` is the ``results.json`` of a directory-format run (a ``simulations/`` folder beside it and no
    ``simulations`` array inside it)."""
    if path.name != "results.json" or not (path.parent / "simulations").is_dir() or not is_regular(path):
        return False
    try:
        peek = _PEEK.decode(read_bytes(path))
    except (LoadError, *DECODE_ERRORS):
        return False  # the monolithic reader explains what is wrong
    return len(bytes(peek.simulations)) == 0 and len(bytes(peek.info)) > 0


JSONL_HINT = ("; this looks like JSON Lines (one JSON value a line), which tauk does not read: give a τ²-bench "
              "results file, a directory-format run (pass the folder), or a JSON array of simulations (join the "
              "lines into [...])")


def _looks_like_jsonl(data: Any) -> bool:
    """The first line is one whole JSON object or array and the next non-blank line starts another."""
    view = bytes(data[: 1 << 20])
    lines = [ln for ln in view.split(b"\n", 2)[:2]]
    if len(lines) < 2:
        return False
    try:
        msgspec.json.decode(lines[0])
    except DECODE_ERRORS:
        return False
    return lines[1].lstrip()[:1] in (b"{", b"[")


def _read_file(path: Path, data: Any, strict: bool, report: LoadReport) -> RunData:
    c = first_char(data)
    try:
        if c == "{":
            return read_tau2_file(path, data, strict, report)
        if c == "[":
            return read_list(path, data, strict, report)
    except LoadError as exc:
        if "trailing characters" in exc.message and _looks_like_jsonl(data):
            raise LoadError(exc.path, exc.location, exc.message + JSONL_HINT) from None
        raise
    if c == "":
        raise LoadError(str(path), "byte 0", "empty file")
    what = not_json_text(data)
    if what is not None:
        raise LoadError(str(path), "byte 0", f"not a JSON text file: {what}")
    raise LoadError(
        str(path), "byte 0", f"top level must be a JSON object (τ²-bench) or array (τ-bench), found {c!r}"
    )


def looks_like_results(path: Path) -> bool:
    """Cheap check used when scanning folders: is this JSON file a results file at all?"""
    if not is_regular(path):
        return False
    try:
        data = read_bytes(path)
    except LoadError:
        return False
    return _holds_results(data)


def _holds_results(data: Any) -> bool:
    """:func:`looks_like_results` on the bytes: an object with a top-level ``simulations``, or an array whose first
    element looks like a simulation or a τ-bench record; True where the bytes do not decode (the reader explains)."""
    c = first_char(data)
    if c == "{":
        try:
            p = _PEEK.decode(data)
        except DECODE_ERRORS:
            return True  # let the real reader explain what is wrong
        return len(bytes(p.simulations)) > 0 or _run_info(p.info)
    if c == "[":
        raws, keys = _first_keys(data)
        if raws is None:
            return True  # let the real reader explain what is wrong
        return bool(keys) and ("traj" in keys or "simulations" in keys or list_kind(keys) == "simulations")
    return False


def _run_info(raw: Any) -> bool:
    """``info`` is a τ²-bench run's (it names the agent or the environment): the object is a results file even without
    ``simulations`` (a key renamed, or a directory run's metadata without its folder), which the reader then names,
    never a JSON file passed over in silence."""
    if not len(bytes(raw)):
        return False
    try:
        keys = _KEYS.decode(raw)
    except DECODE_ERRORS:
        return False
    return isinstance(keys, dict) and bool(keys.keys() & {"agent_info", "environment_info"})


def read_scanned(path: Path, strict: bool, report: LoadReport) -> RunData | None:
    """A JSON file met by a folder scan: its run, or None where :func:`looks_like_results` would pass it over (not a
    regular file, unreadable, or not a results file), reading the file once (:func:`_decode`)."""
    if not is_regular(path):
        return None
    try:
        data = read_bytes(path)
    except LoadError:
        return None
    with bounded_nesting():
        return _decode(path, data, strict, report, scanned=True)

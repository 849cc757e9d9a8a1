"""Reading files safely: only regular files, a byte-order mark skipped, large files memory-mapped; decoding with a
bounded nesting depth; errors located (byte offsets, invalid UTF-8, nesting too deep) and content fingerprints."""

from __future__ import annotations

import codecs
import contextlib
import errno
import hashlib
import mmap
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from tauk.errors import LoadError
from tauk.io.scan import MAX_DEPTH, first_deeper_than

__all__ = [
    "release",
    "BOM",
    "DECODE_ERRORS",
    "bounded_nesting",
    "error_location",
    "file_kind",
    "fingerprint",
    "first_invalid_utf8",
    "is_regular",
    "ADDRESS_FACTOR",
    "DECODE_FACTOR",
    "memory_shortfall",
    "memory_message",
    "RECORD_FACTOR",
    "record_message",
    "record_shortfall",
    "read_bytes",
]

_LOC = re.compile(r"^(.*?)(?: - at `(\$[^`]*)`)?$", re.S)
_BYTE = re.compile(r"\(byte (\d+)\)")


def _at_byte(prefix: str, offset: int, base: int | None) -> str:
    """A location naming a byte: absolute when the item's start in the file is known (or the item is the file)."""
    if prefix == "$" or base is not None:
        where = f"byte {(base or 0) + offset}"
        return where if prefix == "$" else f"{prefix} ({where})"
    return f"{prefix}, byte {offset} of it"


def error_location(exc: Exception, prefix: str = "$", data: Any = None, base: int | None = None
                  ) -> tuple[str | None, str]:  # fmt: skip
    """Split a decoding error into (location, message). ``data``: the bytes that failed to decode (the file, or
    one item of it starting at byte ``base`` of the file when known), to locate what the decoder does not."""
    text = str(exc)
    if isinstance(exc, RecursionError):
        hit = first_deeper_than(data, MAX_DEPTH) if data is not None else None
        where = _at_byte(prefix, hit[0], base) if hit else prefix
        return where, f"nested deeper than {MAX_DEPTH} levels (the decoder cannot follow it)"
    if not isinstance(exc, msgspec.ValidationError):  # malformed or truncated JSON: a byte offset
        m = _BYTE.search(text)
        if m:
            return _at_byte(prefix, int(m.group(1)), base), text
        if "UTF-8" in text and data is not None:
            bad = first_invalid_utf8(data)
            if bad is not None:
                return _at_byte(prefix, bad, base), "invalid UTF-8 (not a UTF-8 text file, or a corrupted byte)"
        return ("end of file" if prefix == "$" else prefix), text
    m2 = _LOC.match(text)
    msg, loc = (m2.group(1), m2.group(2)) if m2 else (text, None)
    if loc is not None and prefix != "$":
        loc = prefix + loc[1:]
    return loc or (prefix if prefix != "$" else None), msg


def _raise(path: Path, exc: Exception, prefix: str = "$", data: Any = None, base: int | None = None) -> LoadError:
    loc, msg = error_location(exc, prefix, data, base)
    return LoadError(str(path), loc, msg)


@contextlib.contextmanager
def bounded_nesting(levels: int = MAX_DEPTH + 64) -> Iterator[None]:
    """Decode with at most about ``levels`` levels of nesting whatever the interpreter's recursion limit (the
    decoder recurses once per level; a raised limit would let a deeply nested file overflow the C stack)."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(min(old, depth + levels))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, RecursionError)
"""What decoding one item can raise on bad input (a value nested too deep raises RecursionError)."""


def first_invalid_utf8(data: Any) -> int | None:
    """Byte offset of the first byte that is not valid UTF-8 (None when the text is valid), read in chunks."""
    dec = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    step = 1 << 22
    for start in range(0, len(view), step):
        pending = len(dec.getstate()[0])  # bytes of an unfinished character carried from the chunk before
        try:
            dec.decode(view[start : start + step], final=start + step >= len(view))
        except UnicodeDecodeError as exc:
            return start - pending + exc.start
    return None


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))  # fmt: skip


def file_kind(mode: int) -> str | None:
    """What a non-regular file is (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def is_regular(path: Path) -> bool:
    """True for a regular file (following symlinks); never opens the file."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


BOM = b"\xef\xbb\xbf"


def read_bytes(path: Path, *, decode: bool = True) -> bytes | memoryview:
    """The bytes of a regular file (a UTF-8 byte-order mark skipped); large files are memory-mapped (no copy, pages
    shared with the OS cache). FIFOs, devices and sockets are refused with a :class:`LoadError`, never opened.
    ``decode``: the bytes are about to be decoded, so a large file that cannot fit is refused first
    (:func:`memory_shortfall`); False for reads that only hash or compare them."""
    try:
        info = os.stat(path)
        kind = file_kind(info.st_mode)
        if kind is not None:
            raise LoadError(str(path), None, f"{kind}, not a regular file: only regular files are read")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if file_kind(info.st_mode) is not None:  # replaced between the two looks
                raise LoadError(str(path), None, "not a regular file: only regular files are read")
            if info.st_size < (1 << 20):
                data: Any = f.read()
            else:
                short = memory_shortfall(info.st_size) if decode else None
                if short is not None:
                    raise LoadError(str(path), None, memory_message(path, short))
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except MemoryError:
        raise LoadError(str(path), None, memory_message(path)) from None
    except OSError as exc:
        if exc.errno == errno.ENOMEM:  # mmap (or read) refused for want of memory or address space
            raise LoadError(str(path), None, memory_message(path)) from None
        raise LoadError(str(path), None, f"cannot read file: {exc.strerror or exc}") from None
    if len(data) >= 3 and data[:3] == BOM:
        return memoryview(data)[3:]
    return data


def release(data: Any) -> None:
    """Let the OS drop the resident pages of a memory-mapped file (they are read again, from the page cache, when
    touched): decoding a large file touches all of it once, and nothing needs it resident afterwards. A no-op for
    bytes."""
    target = data.obj if isinstance(data, memoryview) else data
    if isinstance(target, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError, ValueError):
            target.madvise(mmap.MADV_DONTNEED)


DECODE_FACTOR = 1.5
"""Memory a decode needs above what is in use, as a multiple of the file's size (measured by
``benchmarks/bench_load.py``: 1.35× for the trials, 1.41–1.55× for the audit and the messages)."""

ADDRESS_FACTOR = 2.0
"""Address space a decode reserves above what is in use, as a multiple of the file's size: more than it touches
(thread stacks, allocator arenas; measured 2.4× for a 1.5 GB file, whose decode needs a 4.1 GB address space)."""


RECORD_FACTOR = 8.0
"""Memory decoding the message bodies of one simulation may take above what is in use, as a multiple of its bytes in
the file — for a simulation of a megabyte or more (a huge string: one 30 M-character value in a 61 MB file).
Measured: building its messages and tool calls peaked 1.6–3× its bytes resident for a text string, 6.2× for one
holding a character beyond U+FFFF (Python then keeps 4 bytes per character) inside a tool call's arguments
(re-encoded as JSON). Past the limit the native encoder crashed the process (SIGSEGV / SIGABRT)."""

RECORD_ADDRESS_FACTOR = 20.0
"""Address space the same decode reserves, as a multiple of the simulation's bytes (measured: the peak address
space grew 16.8× — 1,027 MB for the 61 MB simulation above — as buffers are grown by doubling)."""

RECORD_MIN = 1 << 20
"""Simulations smaller than this are decoded without a look at the memory left (it cannot matter)."""


def record_shortfall(nbytes: int) -> tuple[str, int, int] | None:
    """:func:`memory_shortfall` for decoding one simulation's message bodies (``nbytes``: its bytes in the file,
    :data:`RECORD_FACTOR` of them needed); None below :data:`RECORD_MIN` bytes."""
    return None if nbytes < RECORD_MIN else memory_shortfall(nbytes, RECORD_ADDRESS_FACTOR, RECORD_FACTOR)


def record_message(nbytes: int, short: tuple[str, int, int]) -> str:
    kind, needed, left = short
    return (f"one simulation of {nbytes / 1e6:,.0f} MB (a huge value in it): decoding it needs about "
            f"{needed / 1e6:,.0f} MB of {kind}, {max(left, 0) / 1e6:,.0f} MB left; free memory or raise the limit")


def memory_shortfall(size: int, address_factor: float = ADDRESS_FACTOR,
                     memory_factor: float = DECODE_FACTOR) -> tuple[str, int, int] | None:  # fmt: skip
    """``(what, needed, left)`` in bytes when decoding a file of ``size`` bytes cannot fit under a hard limit this
    process knows of — the address-space limit (``RLIMIT_AS``, against the address space in use) or the memory the
    system has left (``MemAvailable`` + ``SwapFree``) — else None (also when ``TAUK_MEMORY_CHECK=0``).

    Past such a limit the native decoders abort the process (no Python error can be raised), so a decode that
    cannot fit is refused before it starts, with :func:`memory_message`. ``address_factor``, ``memory_factor``:
    the multiples of ``size`` needed under each limit.
    """
    if os.environ.get("TAUK_MEMORY_CHECK", "1").strip() == "0":
        return None
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            left = soft - _proc_kb("/proc/self/status", "VmSize") * 1024
            need = address_factor * size
            if left < need:
                return "address space", int(need), left
    except (ImportError, OSError, ValueError, TypeError):
        pass
    try:
        left = (_proc_kb("/proc/meminfo", "MemAvailable") + _proc_kb("/proc/meminfo", "SwapFree")) * 1024
        need = memory_factor * size
        if left < need:
            return "memory", int(need), left
    except (OSError, ValueError, TypeError):
        pass
    return None


def _proc_kb(path: str, key: str) -> int:
    with open(path, encoding="ascii") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise ValueError(f"{key} not in {path}")


def memory_message(path: Path, short: tuple[str, int, int] | None = None) -> str:
    try:
        what = f"{os.stat(path).st_size / 1e6:,.0f} MB"
    except OSError:
        what = "size unknown"
    if short is not None:
        kind, needed, left = short
        what += f"; about {needed / 1e6:,.0f} MB of {kind} needed, {max(left, 0) / 1e6:,.0f} MB left"
    return (f"not enough memory to decode this file ({what}); free memory, or ingest it once into a columnar "
            "store (tauk ingest) and open that")  # fmt: skip


def fingerprint(data: Any) -> str:
    """The content hash of what was read: SHA-256 of every byte (32 hex digits), so that no edit of any size goes
    unseen (1.8 GB/s here with the CPU's SHA extensions: a fraction of what decoding the same bytes costs). The load
    computes it on the bytes it decodes, so a store's ingest learns a new source's hash without reading it twice.

    >>> fingerprint(b"{}") == fingerprint(memoryview(b"{}")), len(fingerprint(b""))
    (True, 32)
    """
    return hashlib.sha256(memoryview(data)).hexdigest()[:32]

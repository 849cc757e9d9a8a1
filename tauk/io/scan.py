"""A structural scan of JSON bytes, for what the decoder cannot do: locate nesting too deep to decode and split an
array into its elements without decoding them.

The decoder (msgspec) recurses once per nesting level and stops at Python's recursion limit. A file nested
deeper than that anywhere cannot be decoded at all, so the readers fall back on this scan: it finds where the
nesting goes too deep (for the error message) and the byte span of every element of the array of simulations (or
of a τ-bench list), so that the other elements can still be decoded one by one.

The scan is vectorised (numpy) over chunks of a few MB, carrying the state (inside a string, a pending escape,
the depth) from chunk to chunk. It runs only on the rare failure path.

Examples
--------
>>> data = b'{"a": 1, "simulations": [{"id": 1}, {"id": [2, [3]]}, "x"]}'
>>> [data[s:e] for s, e in array_elements(data, key="simulations")]
[b'{"id": 1}', b'{"id": [2, [3]]}', b'"x"']
>>> first_deeper_than(b'[[[["]]]]"]]]]', 3)
(3, 4)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

__all__ = ["MAX_DEPTH", "first_deeper_than", "array_elements", "max_depth"]

MAX_DEPTH = 512
"""Nesting depth reported as the limit when a value is too deeply nested to decode (the decoder itself stops at
about Python's recursion limit, 1,000 by default; files of real runs nest fewer than 20 levels)."""

_CHUNK = 1 << 22


class _State:
    """Where the scan stands between chunks (mutable; a plain class: nothing to generate at import)."""

    __slots__ = ("in_string", "backslashes", "depth")

    def __init__(self, in_string: bool = False, backslashes: int = 0, depth: int = 0) -> None:
        self.in_string = in_string
        self.backslashes = backslashes  # run of backslashes ending the previous chunk
        self.depth = depth


def _chunks(data) -> Iterator[tuple[int, np.ndarray]]:
    view = memoryview(data)
    for start in range(0, len(view), _CHUNK):
        yield start, np.frombuffer(view[start : start + _CHUNK], dtype=np.uint8)


def _events(a: np.ndarray, st: _State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The structural brackets and commas of one chunk (outside strings): positions, bytes and the depth after
    each; updates ``st`` for the next chunk. Work is proportional to the quotes and brackets, not the bytes."""
    quotes = np.flatnonzero(a == 0x22)
    if quotes.size:
        # a quote preceded by an odd run of backslashes is escaped (rare: looked at one by one)
        maybe = quotes[(quotes > 0) & (a[np.maximum(quotes - 1, 0)] == 0x5C)]
        escaped = []
        for q in maybe.tolist():
            i = q - 1
            while i >= 0 and a[i] == 0x5C:
                i -= 1
            run = q - 1 - i + (st.backslashes if i < 0 else 0)
            if run % 2:
                escaped.append(q)
        if quotes[0] == 0 and st.backslashes % 2:
            escaped.append(0)
        if escaped:
            quotes = np.setdiff1d(quotes, np.array(escaped, dtype=quotes.dtype), assume_unique=True)
    marks = np.flatnonzero((a == 0x5B) | (a == 0x7B) | (a == 0x5D) | (a == 0x7D) | (a == 0x2C))
    inside = (np.searchsorted(quotes, marks) + int(st.in_string)) % 2 == 1
    pos = marks[~inside]
    byte = a[pos]
    step = np.where((byte == 0x5B) | (byte == 0x7B), 1, np.where(byte == 0x2C, 0, -1)).astype(np.int64)
    depth = st.depth + np.cumsum(step)
    st.in_string = (quotes.size + int(st.in_string)) % 2 == 1
    tail = a.size - 1
    while tail >= 0 and a[tail] == 0x5C:
        tail -= 1
    st.backslashes = (a.size - 1 - tail) + (st.backslashes if tail < 0 else 0)
    if depth.size:
        st.depth = int(depth[-1])
    return pos, byte, depth


def first_deeper_than(data, limit: int = MAX_DEPTH) -> tuple[int, int] | None:
    """(byte offset, depth) of the first bracket that opens a level deeper than ``limit``, or None."""
    st = _State()
    for start, a in _chunks(data):
        pos, _, depth = _events(a, st)
        hit = np.flatnonzero(depth > limit)
        if hit.size:
            return start + int(pos[hit[0]]), int(depth[hit[0]])
    return None


def max_depth(data) -> int:
    """The deepest nesting level of the JSON text (strings are not looked into)."""
    st, deepest = _State(), 0
    for _, a in _chunks(data):
        _, _, depth = _events(a, st)
        if depth.size:
            deepest = max(deepest, int(depth.max()))
    return deepest


_KEY_BEFORE = re.compile(rb'"([^"\\]*)"\s*:\s*$')


def array_elements(data, key: str | None = None) -> list[tuple[int, int]]:
    """Byte spans ``(start, end)`` of the elements of the top-level array (``key=None``) or of the array held by
    the top-level object's ``key``; whitespace around each element is excluded. Empty when there is no such
    array (or it is not closed)."""
    level = 1 if key is None else 2
    st = _State()
    begin: int | None = None
    seps: list[int] = []
    for start, a in _chunks(data):
        prior = st.depth
        pos, byte, depth = _events(a, st)
        before = np.concatenate([[prior], depth[:-1]]) if depth.size else depth
        pos = pos + start
        if begin is None:
            opened = pos[(depth == level) & (before == level - 1) & (byte != 0x2C)]
            for p in opened.tolist():
                if key is None or _key_at(data, p) == key:
                    begin = p
                    break
            if begin is None:
                continue
        after = pos > begin
        seps += pos[after & (byte == 0x2C) & (depth == level)].tolist()
        ends = pos[after & (depth == level - 1) & (before == level)]
        if ends.size:
            return _spans(data, begin, seps, int(ends[0]))
    return []


def _key_at(data, pos: int) -> str | None:
    m = _KEY_BEFORE.search(bytes(memoryview(data)[max(0, pos - 200) : pos]))
    return m.group(1).decode("utf-8", "replace") if m else None


def _spans(data, begin: int, seps: list[int], end: int) -> list[tuple[int, int]]:
    view = memoryview(data)
    bounds = [begin, *seps, end]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        s, e = lo + 1, hi
        while s < e and view[s] in b" \t\r\n":
            s += 1
        while e > s and view[e - 1] in b" \t\r\n":
            e -= 1
        if e > s:
            out.append((s, e))
    return out

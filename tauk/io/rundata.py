"""The decoded content of one results source (:class:`RunData`) and the identity of the bytes it was read from.

Message bodies are decoded after the load, from the file again: :func:`remember` records what was read (size,
modification time, fingerprint) and :func:`read_again` refuses a file that has changed since.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tauk.errors import LoadError
from tauk.io import structs as S
from tauk.io.files import fingerprint, read_bytes

__all__ = ["RunData", "read_again", "remember"]


@dataclass
class RunData:
    """Decoded content of one results source (monolithic file, directory, wrapper or τ-bench list)."""

    path: Path
    format: str  # tau2 | tau2-dir | tau2-wrapper | tau2-list | taubench
    format_version: str | None
    timestamp: str | None = None
    info: S.Info | None = None
    tasks: list[S.Task] = field(default_factory=list)
    simulations: list[S.LightSimulation] = field(default_factory=list)
    # positions in the source of each kept simulation (index in list, or file path for the directory format)
    sim_sources: list[Any] = field(default_factory=list)
    tb_records: list[S.TBLightRecord] = field(default_factory=list)
    wrapper: dict[str, Any] = field(default_factory=dict)
    stringified_tool_calls: bool = False
    # what was read, file by file: (size, mtime_ns, fingerprint) — message bodies decoded later must come from
    # the same bytes (see :func:`read_again`); read it through :meth:`identities`
    identity: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    # files whose bytes are held as an immutable copy: (size, mtime_ns, bytes), hashed when first asked for
    unhashed: dict[str, tuple[int, int, Any]] = field(default_factory=dict, repr=False)
    # the bytes the light structs point into (their undecoded fields are views of it): released after use
    buffer: Any = field(default=None, repr=False)
    # byte spans of the simulations (or τ-bench records) when the file could not be decoded whole
    spans: list[tuple[int, int]] | None = None

    def identities(self) -> dict[str, tuple[int, int, str]]:
        """``identity``, every file's fingerprint computed (those of bytes held as a copy are computed here, on
        first use: a summary that never reads a file again never hashes it)."""
        for name, (size, mtime, data) in self.unhashed.items():
            self.identity[name] = (size, mtime, fingerprint(data))
        self.unhashed.clear()
        return self.identity

    @property
    def sims_path(self) -> str:
        """The JSON path of the array of simulations (records) in the file: ``$`` for a bare list."""
        return "$" if self.format in ("taubench", "tau2-list") else "$.simulations"


def remember(run: RunData, path: Path, data: Any, *, as_buffer: bool = False) -> None:
    """Record the identity of the bytes just read from ``path`` (see :func:`read_again`). ``as_buffer``: ``data`` is
    the run's whole file, kept as its ``buffer`` (set here); bytes read into memory (an immutable copy the run holds
    anyway) are then hashed when first needed. Anything else — a memory-mapped file, which shows whatever the file
    holds now, or bytes the run does not keep — is hashed at once."""
    if as_buffer:
        run.buffer = data
    try:
        info = os.stat(path)
    except OSError:
        return
    target = data.obj if isinstance(data, memoryview) else data
    if as_buffer and type(target) is bytes:
        run.unhashed[str(path)] = (info.st_size, info.st_mtime_ns, data)
    else:
        run.identity[str(path)] = (info.st_size, info.st_mtime_ns, fingerprint(data))


def read_again(run: RunData, path: Path) -> bytes | memoryview:
    """The bytes of ``path`` for decoding message bodies after the load, refused with a :class:`LoadError` when the
    file is no longer what was loaded (never another run's rows under the old ids)."""
    want = run.identities().get(str(path))
    data = read_bytes(path)
    if want is not None:
        try:
            info = os.stat(path)
            now = (info.st_size, info.st_mtime_ns, fingerprint(data))
        except OSError:
            now = None
        if now != want:
            raise LoadError(str(path), None, "file changed since it was loaded (size, time or content differ); "
                                             "load it again to read its messages")  # fmt: skip
    return data


"""``tauk.open``: a store read lazily, with the same API as :class:`tauk.Results`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadReport, TaukError
from tauk.io.frames.runs import runs_where

from ._layout import FRAMES, StoreError, read_manifest

__all__ = ["StoreResults", "open_store"]


def frame_schema(frame: str) -> dict[str, Any]:
    """The column contract of a frame (the schema of an empty store)."""
    from tauk.io import columns

    return getattr(columns, f"{frame.upper()}_SCHEMA")


class StoreResults:
    """A store opened lazily: ``runs``, ``trials``, ``messages``, ``tool_calls``, ``tasks``, ``expected_actions`` as
    in :class:`tauk.Results` (collected on first use), :meth:`scan` for a Polars ``LazyFrame`` of any frame (filters
    and column selections push down into the Parquet scan), and :meth:`partitions` for work that streams over
    whole simulations (``tauk.score`` and ``tauk.audit`` use it: one part's messages at a time).

    Examples
    --------
    >>> import tauk, tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = tauk.ingest("data", store, progress=False)
    >>> res = tauk.open(store, agent="baseline")
    >>> res.trials.height, res.scan("messages").select("role").collect().height > 0
    (200, True)
    """

    def __init__(self, root: Path, entries: list[dict[str, Any]], report: LoadReport,
                 filters: dict[str, list[str]] | None = None) -> None:  # fmt: skip
        self.root = Path(root)
        self._entries = entries
        self.report = report
        self._filters = filters or {}

    # -- files ----------------------------------------------------------------------------------------------
    def _files(self, frame: str) -> list[Path]:
        return [self.root / f for e in self._entries for f in e["files"].get(frame, [])]

    def scan(self, frame: str) -> pl.LazyFrame:
        """A ``LazyFrame`` over the Parquet files of ``frame`` for the selected runs (pushdown of filters and
        column selections). Empty (with the frame's columns) when no run is selected."""
        if frame not in FRAMES:
            raise TaukError(f"unknown frame {frame!r}; choose from {', '.join(FRAMES)}")
        files = self._files(frame)
        if not files:
            return pl.LazyFrame(schema=frame_schema(frame))
        return pl.scan_parquet([str(f) for f in files])

    # -- the frames of tauk.Results -------------------------------------------------------------------------
    @cached_property
    def runs(self) -> pl.DataFrame:
        """One row per ingested run."""
        return self.scan("runs").collect()

    @cached_property
    def trials(self) -> pl.DataFrame:
        """One row per simulation."""
        return self.scan("trials").collect()

    @cached_property
    def tasks(self) -> pl.DataFrame:
        return self.scan("tasks").collect()

    @cached_property
    def expected_actions(self) -> pl.DataFrame:
        return self.scan("expected_actions").collect()

    @cached_property
    def messages(self) -> pl.DataFrame:
        """Every message of the selected runs (all in memory: prefer :meth:`scan` or :meth:`partitions`)."""
        return self.scan("messages").collect()

    @cached_property
    def tool_calls(self) -> pl.DataFrame:
        return self.scan("tool_calls").collect()

    @property
    def run_ids(self) -> list[str]:
        return [e["run_id"] for e in self._entries]

    FRAMES = FRAMES

    def trials_columns(self, columns: Sequence[str]) -> pl.DataFrame:
        """The trials frame with only ``columns`` (those present): what statistics need, read from the store."""
        have = self.scan("trials").collect_schema().names()
        return self.scan("trials").select([c for c in columns if c in have]).collect()

    # -- streaming ------------------------------------------------------------------------------------------
    def partitions(self) -> Iterator[dict[str, pl.DataFrame]]:
        """One mapping of frames per part of whole simulations: its ``trials``, ``messages`` and ``tool_calls``
        and its run's ``tasks``, ``expected_actions`` and ``runs`` row — what ``tauk.score`` needs, one part at a
        time."""
        for e in self._entries:
            shared = {name: pl.read_parquet([self.root / f for f in e["files"][name]])
                      for name in ("runs", "tasks", "expected_actions")}  # fmt: skip
            for t, m, c in zip(e["files"]["trials"], e["files"]["messages"], e["files"]["tool_calls"]):
                yield {**shared, "trials": pl.read_parquet(self.root / t), "messages": pl.read_parquet(self.root / m),
                       "tool_calls": pl.read_parquet(self.root / c)}  # fmt: skip

    def n_partitions(self) -> int:
        return sum(len(e["files"]["trials"]) for e in self._entries)

    # -- selection ------------------------------------------------------------------------------------------
    def filter(self, **columns: str | Sequence[str] | None) -> StoreResults:
        """The runs whose run-level columns (``agent``, ``domain``, ``setup``, … — any column of ``runs``) take
        the given value(s); only their partitions are read afterwards."""
        runs = self.runs
        keep = runs_where(runs, columns, require_present=False)
        ids = set(runs.filter(keep)["run_id"].to_list())
        entries = [e for e in self._entries if e["run_id"] in ids]
        return StoreResults(self.root, entries, self.report, {**self._filters, **{k: v for k, v in columns.items()
                                                                                   if v is not None}})  # fmt: skip

    def write_parquet(self, folder: str | os.PathLike, frames: Sequence[str] = FRAMES) -> list[Path]:
        """Write frames as single Parquet files (see :meth:`tauk.Results.write_parquet`)."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in frames:
            p = out / f"{name}.parquet"
            self.scan(name).sink_parquet(p)
            paths.append(p)
        return paths

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        sims = sum(e["counts"]["trials"] for e in self._entries)
        return f"StoreResults({self.root}: {len(self._entries)} run(s), {sims} simulation(s))"


def open_store(store: str | os.PathLike, *, agent: Any = None, domain: Any = None, setup: Any = None,
               **columns: Any) -> StoreResults:  # fmt: skip
    """Open a store written by :func:`tauk.ingest` lazily: the same API as :class:`tauk.Results`, backed by Parquet
    scans. ``agent=``, ``domain=``, ``setup=`` (and any other column of ``runs``) select runs before anything
    else is read. The manifest is checked against the files: a missing or changed Parquet file is a
    :class:`tauk.store.StoreError`, never a silently smaller result.

    Examples
    --------
    >>> import tauk, tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = tauk.ingest("data", store, progress=False)
    >>> tauk.stats.summarize(tauk.open(store, domain="airline"), by="agent", k=1, ci=None).groups["avg_reward"].to_list()
    [0.74, 0.55, 0.3]
    """
    root = Path(store)
    if not (root / "manifest.json").exists():
        raise StoreError(f"{root}: no store here (no manifest.json); write one with tauk ingest")
    manifest = read_manifest(root)
    report = LoadReport()
    for e in manifest["sources"]:
        for frame, files in e["files"].items():
            for f in files:
                size = e.get("sizes", {}).get(f)
                if not (root / f).is_file():
                    raise StoreError(f"{root}: the manifest names {f} ({frame} of {e['run_id']}), which is missing; "
                                     "ingest the source again")  # fmt: skip
                if size is not None and (root / f).stat().st_size != size:
                    raise StoreError(f"{root}: {f} ({frame} of {e['run_id']}) is not the file the manifest recorded "
                                     f"({(root / f).stat().st_size} bytes, {size} recorded): partially written or "
                                     "changed; ingest the source again")  # fmt: skip
        for issue in e.get("report", []):
            report.add(e["source"], None, "ingest", issue)
        report.files_loaded += 1
    res = StoreResults(root, list(manifest["sources"]), report)
    wanted = {"agent": agent, "domain": domain, "setup": setup, **columns}
    if any(v is not None for v in wanted.values()):
        res = res.filter(**wanted)
    return res

"""``tauk.open``: a store read lazily, with the same API as :class:`tauk.Results`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tauk.errors import LoadReport, TaukError
from tauk.io.frames.runs import runs_where

from ._layout import FRAMES, StoreError, is_store, part_path, read_entries, snapshot

__all__ = ["StoreResults", "open_store"]

FOLLOW = 8
"""How many times a reader follows its runs to their new entries when re-ingests replace them while it reads."""


def frame_schema(frame: str) -> dict[str, Any]:
    """The column contract of a frame (the schema of an empty store)."""
    from tauk.io import columns

    return getattr(columns, f"{frame.upper()}_SCHEMA")


class _Moved(Exception):
    """A part an entry named is gone: a re-ingest replaced the run (or the part is missing)."""

    def __init__(self, rel: str, entry: dict[str, Any]) -> None:
        self.rel, self.entry = rel, entry


def check_files(root: Path, entries: list[dict[str, Any]]) -> None:
    """Every part the entries name exists inside the store, as a regular file of its recorded size."""
    for e in entries:
        for frame, files in e["files"].items():
            for f in files:
                try:
                    size = part_path(root, f).stat().st_size
                except FileNotFoundError:
                    raise _Moved(f, e) from None
                except OSError as exc:
                    raise StoreError(f"{root}: {f} ({frame} of {e['run_id']}) cannot be reached "
                                     f"({exc.strerror or exc})") from None  # fmt: skip
                if size != e["sizes"][f]:
                    raise StoreError(f"{root}: {f} ({frame} of {e['run_id']}) is not the file the store recorded "
                                     f"({size} bytes, {e['sizes'][f]} recorded): partially written or changed; "
                                     "ingest the source again")  # fmt: skip


def _entries_checked(root: Path) -> list[dict[str, Any]]:
    """The entries of the store with every part checked; a part that vanished because a re-ingest replaced its run
    meanwhile sends it to the run's new entry."""
    for attempt in range(FOLLOW):
        _, entries = read_entries(root)
        try:
            check_files(root, entries)
            return entries
        except _Moved as moved:
            _, again = read_entries(root)
            if snapshot(again) == snapshot(entries):
                e = moved.entry
                raise StoreError(f"{root}: the store names {moved.rel} ({e['run_id']}), which is missing; ingest the "
                                 "source again") from None  # fmt: skip
            time.sleep(0.01 * attempt)
    raise StoreError(f"{root}: the store kept changing while it was opened; open it again")


def _column_change(got: dict[str, Any], current: dict[str, Any]) -> str:
    """How a part's columns differ from this version's frame contract, briefly."""
    lacks = [c for c in current if c not in got]
    extra = [c for c in got if c not in current]
    typed = [c for c in current if c in got and got[c] != current[c]]
    parts = [f"{what} {', '.join(cols[:3])}{' …' if len(cols) > 3 else ''}"
             for what, cols in (("without", lacks), ("with", extra), ("other types of", typed)) if cols]  # fmt: skip
    return "; ".join(parts) or "another column order"


class StoreResults:
    """A store opened lazily: ``runs``, ``trials``, ``messages``, ``tool_calls``, ``tasks``, ``expected_actions`` as
    in :class:`tauk.Results` (collected on first use), :meth:`scan` for a Polars ``LazyFrame`` of any frame (filters
    and column selections push down into the Parquet scan), and :meth:`partitions` for work that streams over
    whole simulations (``tauk.score`` and ``tauk.audit`` use it: one part's messages at a time).

    A re-ingest may replace a run while it is being read: reading a frame then follows the run to its new entry
    (every frame read afterwards comes from the new state; frames already returned stay as they were). A stream of
    :meth:`partitions` cannot change state halfway and stops with a :class:`StoreError` instead.

    Examples
    --------
    >>> import tauk, tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = tauk.ingest("data", store, progress=False)
    >>> res = tauk.open(store, agent="baseline")
    >>> res.trials.height, res.scan("messages").select("role").collect().height > 0
    (200, True)
    """

    FRAMES = FRAMES

    def __init__(self, root: Path, entries: list[dict[str, Any]], report: LoadReport,
                 filters: dict[str, list[str]] | None = None) -> None:  # fmt: skip
        self.root = Path(root)
        self._entries = entries
        self.report = report
        self._filters = filters or {}
        self._cache: dict[str, pl.DataFrame] = {}

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

    def _read(self, frame: str, how: Callable[[], Any]) -> Any:
        """``how()``, a read of ``frame``'s parts; a part gone because a re-ingest replaced its run sends the
        read to the run's new entry, any other failure is a :class:`StoreError` naming the part."""
        for attempt in range(FOLLOW):
            try:
                return how()
            except (OSError, pl.exceptions.PolarsError) as exc:
                if not self._follow():
                    raise self._unreadable(frame, exc) from None
                time.sleep(0.01 * attempt)
        raise StoreError(f"{self.root}: the store kept changing while {frame} was read; open it again")

    def _follow(self) -> bool:
        """Move to the current entries of the selected runs when a re-ingest replaced any (True), else False."""
        _, entries = read_entries(self.root)
        mine = {e["run_key"] for e in self._entries}
        now = [e for e in entries if e["run_key"] in mine]
        if snapshot(now) == snapshot(self._entries):
            return False
        try:
            check_files(self.root, now)
        except _Moved:
            return True  # replaced once more meanwhile: the next attempt reads the entries again
        self._entries = now
        self._cache.clear()
        return True

    def _unreadable(self, frame: str, exc: BaseException) -> StoreError:
        """A :class:`StoreError` naming the first part of ``frame`` that cannot be read (or whose columns are not
        the frame's), from the error a read of all of them raised."""
        schemas = []
        for e in self._entries:
            for f in e["files"].get(frame, []):
                try:
                    schemas.append((e, f, dict(pl.read_parquet_schema(part_path(self.root, f)))))
                except (OSError, pl.exceptions.PolarsError) as err:
                    return StoreError(f"{self.root}: {f} ({frame} of {e['run_id']}) cannot be read "
                                      f"({_first_line(err)}): a damaged part; delete sources/{e['run_key']}.json "
                                      "and ingest its source again")  # fmt: skip
        current = dict(frame_schema(frame))
        ours = [(e, f, got) for e, f, got in schemas if "run_id" in got]
        if any(got == current for _, _, got in ours):  # runs stored by this version beside runs stored by another
            for e, f, got in ours:
                if got != current:
                    return StoreError(f"{self.root}: {f} ({frame} of {e['run_id']}) has the columns of another "
                                      f"version of tauk ({_column_change(got, current)}), other runs this "
                                      f"version's: ingest its source ({e.get('source')}) into the store again to "
                                      "rewrite it")  # fmt: skip
        want = None  # the columns of the frame's first readable part (a store of an older tauk has its own)
        for e, f, got in schemas:
            want = got if want is None and "run_id" in got else want
            if got != want:
                return StoreError(f"{self.root}: {f} ({frame} of {e['run_id']}) does not have the columns of "
                                  f"{frame}: a damaged or foreign part; delete sources/{e['run_key']}.json and "
                                  "ingest its source again")  # fmt: skip
        for e in self._entries:  # readable metadata, damaged data: read each part to find it
            for f in e["files"].get(frame, []):
                try:
                    pl.read_parquet(part_path(self.root, f))
                except (OSError, pl.exceptions.PolarsError) as err:
                    return StoreError(f"{self.root}: {f} ({frame} of {e['run_id']}) cannot be read "
                                      f"({_first_line(err)}): a damaged part; delete sources/{e['run_key']}.json "
                                      "and ingest its source again")  # fmt: skip
        return StoreError(f"{self.root}: {frame} cannot be read ({_first_line(exc)})")

    def _frame(self, frame: str) -> pl.DataFrame:
        if frame not in self._cache:
            df = self._read(frame, lambda: self.scan(frame).collect())
            if "run_id" not in df.columns:  # a part that is not a frame of tauk's
                raise self._unreadable(frame, StoreError(f"columns {df.columns[:5]}"))
            self._cache[frame] = self._check_rows(frame, df)
        return self._cache[frame]

    def _check_rows(self, frame: str, df: pl.DataFrame) -> pl.DataFrame:
        """The rows read are the rows the entries recorded (a part dropped from an entry, or swapped for another
        run's, is an error, never a smaller result)."""
        counts = [e["counts"].get(frame) for e in self._entries]
        want = sum(counts) if all(type(c) is int for c in counts) else None
        if want is not None and df.height != want:
            have = dict(df.group_by("run_id").len().iter_rows()) if "run_id" in df.columns else {}
            e = next((e for e in self._entries if have.get(e["run_id"], 0) != e["counts"][frame]), self._entries[0])
            raise StoreError(f"{self.root}: {frame} of {e['run_id']} has {have.get(e['run_id'], 0)} rows where its "
                             f"entry recorded {e['counts'][frame]}: the entry and its parts disagree; delete "
                             f"sources/{e['run_key']}.json and ingest its source again")  # fmt: skip
        return df

    # -- the frames of tauk.Results -------------------------------------------------------------------------
    @property
    def runs(self) -> pl.DataFrame:
        """One row per ingested run."""
        return self._frame("runs")

    @property
    def trials(self) -> pl.DataFrame:
        """One row per simulation."""
        return self._frame("trials")

    @property
    def tasks(self) -> pl.DataFrame:
        return self._frame("tasks")

    @property
    def expected_actions(self) -> pl.DataFrame:
        return self._frame("expected_actions")

    @property
    def messages(self) -> pl.DataFrame:
        """Every message of the selected runs (all in memory: prefer :meth:`scan` or :meth:`partitions`)."""
        return self._frame("messages")

    @property
    def tool_calls(self) -> pl.DataFrame:
        return self._frame("tool_calls")

    @property
    def run_ids(self) -> list[str]:
        return [e["run_id"] for e in self._entries]

    def trials_columns(self, columns: Sequence[str]) -> pl.DataFrame:
        """The trials frame with only ``columns`` (those present): what statistics need, read from the store."""

        def how() -> pl.DataFrame:
            have = self.scan("trials").collect_schema().names()
            return self.scan("trials").select([c for c in columns if c in have]).collect()

        return self._check_rows("trials", self._read("trials", how))

    # -- streaming ------------------------------------------------------------------------------------------
    def partitions(self) -> Iterator[dict[str, pl.DataFrame]]:
        """One mapping of frames per part of whole simulations: its ``trials``, ``messages`` and ``tool_calls``
        and its run's ``tasks``, ``expected_actions`` and ``runs`` row — what ``tauk.score`` needs, one part at a
        time."""
        for e in list(self._entries):
            shared = {name: self._part(e, name, e["files"][name]) for name in ("runs", "tasks", "expected_actions")}
            for t, m, c in zip(e["files"]["trials"], e["files"]["messages"], e["files"]["tool_calls"]):
                yield {**shared, "trials": self._part(e, "trials", [t]), "messages": self._part(e, "messages", [m]),
                       "tool_calls": self._part(e, "tool_calls", [c])}  # fmt: skip

    def _part(self, e: dict[str, Any], frame: str, files: list[str]) -> pl.DataFrame:
        try:
            return pl.read_parquet([self.root / f for f in files])
        except (OSError, pl.exceptions.PolarsError) as exc:
            _, entries = read_entries(self.root)
            now = [x for x in entries if x["run_key"] == e["run_key"]]
            if snapshot(now) != snapshot([e]):
                raise StoreError(f"{self.root}: {e['run_id']} was ingested again while it was streamed; open the "
                                 "store again") from None  # fmt: skip
            raise StoreResults(self.root, [e], self.report)._unreadable(frame, exc) from None

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
            self._read(name, lambda name=name, p=p: self.scan(name).sink_parquet(p))
            paths.append(p)
        return paths

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        sims = sum(e["counts"].get("trials", 0) for e in self._entries)
        return f"StoreResults({self.root}: {len(self._entries)} run(s), {sims} simulation(s))"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def open_store(store: str | os.PathLike, *, agent: Any = None, domain: Any = None, setup: Any = None,
               **columns: Any) -> StoreResults:  # fmt: skip
    """Open a store written by :func:`tauk.ingest` lazily: the same API as :class:`tauk.Results`, backed by Parquet
    scans. ``agent=``, ``domain=``, ``setup=`` (and any other column of ``runs``) select runs before anything
    else is read. Every entry is checked and every part it names must exist inside the store with its recorded
    size: a problem is one :class:`tauk.store.StoreError` line naming the part, never a silently smaller result.
    Nothing is written: a read-only store opens as any other.

    Examples
    --------
    >>> import tauk, tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = tauk.ingest("data", store, progress=False)
    >>> tauk.stats.summarize(tauk.open(store, domain="airline"), by="agent", k=1, ci=None).groups["avg_reward"].to_list()
    [0.74, 0.55, 0.3]
    """
    root = Path(store)
    if not is_store(root):
        raise StoreError(f"{root}: no store here (no manifest.json); write one with tauk ingest")
    entries = _entries_checked(root)
    report = LoadReport()
    for e in entries:
        if "issues" in e:  # by kind and count, as tauk.load reported them
            for i in e["issues"]:
                report.add(e["source"], i["location"], i["kind"], i["message"], skipped=i["skipped"])
        else:  # an entry written before they were recorded: its lines only
            for issue in e.get("report", []):
                report.add(e["source"], None, "ingest", str(issue))
        report.files_loaded += 1
    res = StoreResults(root, entries, report)
    wanted = {"agent": agent, "domain": domain, "setup": setup, **columns}
    if any(v is not None for v in wanted.values()):
        res = res.filter(**wanted)
    return res

"""``tauk.load`` and ``Results``: the frames of a load, built lazily and cached."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path

import polars as pl

from tauk.errors import LoadReport, LoadWarning, TaukError
from tauk.io.columns import FRAMES, MESSAGES_SCHEMA, TOOL_CALLS_SCHEMA
from tauk.io.frames import build_runs, build_tasks, build_ticks, build_trials, run_agent
from tauk.io.frames.messages import iter_messages
from tauk.io.frames.runs import runs_where
from tauk.io.load import Inputs, read_inputs
from tauk.io.read import RunData, bounded_nesting, release

__all__ = ["Results", "load"]


def load(
    inputs: Inputs,
    *,
    agent: str | Mapping[str, str] | None = None,
    strict: bool = True,
    progress: bool | None = None,
    _stacklevel: int = 2,
) -> Results:
    """Load results files into a :class:`Results` (what :func:`tauk.load` does for everything but a store, which it
    opens with :func:`tauk.open`; the parameters are :func:`tauk.load`'s).

    Examples
    --------
    >>> from tauk.results import load
    >>> load("data").trials.height
    600
    """
    loaded = read_inputs(inputs, agent=agent, strict=strict, progress=progress, _stacklevel=_stacklevel + 1)
    return Results(loaded.runs, loaded.run_ids, loaded.agents, loaded.report, strict=loaded.strict, progress=progress)


class Results:
    """Loaded trial logs as tidy Polars frames, all joinable on their keys.

    Frames: ``runs`` (one row per file), ``trials`` (per simulation), ``messages``, ``tool_calls``, ``tasks``,
    ``expected_actions``. ``runs`` and ``trials`` never materialise message bodies; ``messages`` and
    ``tool_calls`` are decoded on first access. ``report`` counts what a non-strict load skipped.

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data/")
    >>> res.trials.join(res.runs.select("run_id", "source"), on="run_id").select("source", "reward").height
    600
    >>> res.messages.group_by("role").len().sort("role")["role"].to_list()
    ['assistant', 'tool', 'user']
    """

    def __init__(self, runs: Sequence[RunData], run_ids: Sequence[str], agents: Sequence[str | None],
                 report: LoadReport, strict: bool = True, progress: bool | None = None):  # fmt: skip
        self._runs = list(runs)
        self._run_ids = list(run_ids)
        self._agents = [run_agent(r, a) for r, a in zip(self._runs, agents)]
        self.report = report
        self._strict = strict
        self._progress = progress  # the load's progress setting, kept for the messages decoded later

    # -- frames ---------------------------------------------------------------------------------------------
    @cached_property
    def runs(self) -> pl.DataFrame:
        """One row per results file: run_id, source, format, agent, domain, num_trials, counts, ..."""
        return build_runs(self._runs, self._run_ids, self._agents)

    @cached_property
    def trials(self) -> pl.DataFrame:
        """One row per simulation, with the recorded reward and components."""
        runs = self.runs
        trials = build_trials(
            self._runs, self._run_ids, self._agents, runs["user_model"].to_list(), runs["num_trials"].to_list()
        )
        for run in self._runs:  # counting the tool calls touched the file again: its pages need not stay resident
            release(run.buffer)
        return trials

    @cached_property
    def _tasks_pair(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        return build_tasks(self._runs, self._run_ids)

    @property
    def tasks(self) -> pl.DataFrame:
        """One row per (run, task definition embedded in the file)."""
        return self._tasks_pair[0]

    @property
    def expected_actions(self) -> pl.DataFrame:
        """One row per gold action of each task."""
        return self._tasks_pair[1]

    def _decode_messages(self, columns: Sequence[str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
        # message bodies are decoded only now, under the load's strictness, a batch of simulations at a time; what
        # a non-strict load skips here is reported and warned about as at load time
        seen = len(self.report.issues)
        messages, calls = [], []
        with bounded_nesting():
            for _, m, c in iter_messages(self._runs, self._run_ids, self.report, strict=self._strict,
                                         progress=len(self._runs) > 8 if self._progress is None else self._progress,
                                         columns=columns):  # fmt: skip
                messages.append(m)
                calls.append(c)
        # a second decode (another selection of columns) finds the same problems: each is reported once
        found = [i for i in self.report.issues[seen:] if i not in self.report.issues[:seen]]
        del self.report.issues[seen:]
        self.report.issues.extend(found)
        if found:
            warnings.warn(
                f"messages skipped: {len(found)} simulation(s), first {found[0]} (see Results.report)",
                LoadWarning,
                stacklevel=4,
            )
        if not messages:
            schema = MESSAGES_SCHEMA if columns is None else {c: MESSAGES_SCHEMA[c] for c in columns}
            return pl.DataFrame(schema=schema), pl.DataFrame(schema=TOOL_CALLS_SCHEMA)
        return pl.concat(messages, rechunk=False), pl.concat(calls, rechunk=False)

    @cached_property
    def _messages_pair(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        pair = self._decode_messages()
        self.__dict__["_calls"] = pair[1]
        return pair

    @property
    def messages(self) -> pl.DataFrame:
        """One row per message (decoded from the files on first use)."""
        return self._messages_pair[0]

    @property
    def tool_calls(self) -> pl.DataFrame:
        """One row per tool call, with its result and error flag."""
        if "_calls" in self.__dict__:
            return self.__dict__["_calls"]
        return self._messages_pair[1]

    @cached_property
    def _ticks_triple(self) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        seen = len(self.report.issues)
        with bounded_nesting():
            out = build_ticks(self._runs, self._run_ids, self.report, strict=self._strict)
        if len(self.report.issues) > seen:
            warnings.warn(f"ticks skipped: {len(self.report.issues) - seen} simulation(s), first "
                          f"{self.report.issues[seen]} (see Results.report)", LoadWarning, stacklevel=4)  # fmt: skip
        return out

    @property
    def ticks(self) -> pl.DataFrame:
        """One row per tick of the full-duplex simulations (decoded from the files on first use)."""
        return self._ticks_triple[0]

    @property
    def utterances(self) -> pl.DataFrame:
        """Each side's streamed chunks of the full-duplex simulations merged into messages (as upstream grades
        COMMUNICATE from them)."""
        return self._ticks_triple[1]

    @property
    def tick_tool_calls(self) -> pl.DataFrame:
        """One row per tool call made in a tick of a full-duplex simulation (what upstream's ACTION reads)."""
        return self._ticks_triple[2]

    def message_batches(self, batch: int) -> Iterator[tuple[str, pl.DataFrame, pl.DataFrame]]:
        """``(run_id, messages, tool_calls)`` for ``batch`` whole simulations at a time, run by run, in the order of
        ``trials`` (for work that never needs every message at once, e.g. :func:`tauk.ingest`)."""
        with bounded_nesting():
            yield from iter_messages(self._runs, self._run_ids, self.report, strict=self._strict, batch=batch)

    def message_columns(self, columns: Sequence[str]) -> pl.DataFrame:
        """The ``messages`` frame with only ``columns``: without decoding it whole first when it is not built yet
        (scoring reads a few columns of every message; the provider's ``raw_data`` is most of a file's bytes and
        never needed there). Each selection is decoded once and kept, as are the tool calls decoded on the way
        (for :attr:`tool_calls`)."""
        if "_messages_pair" in self.__dict__:
            return self.messages.select(columns)
        kept = self.__dict__.setdefault("_message_selections", {})
        key = tuple(columns)
        if key not in kept:
            kept[key], calls = self._decode_messages(list(columns))
            self.__dict__.setdefault("_calls", calls)
        return kept[key]

    # -- conveniences ---------------------------------------------------------------------------------------
    @property
    def run_ids(self) -> list[str]:
        """The run ids, in load order."""
        return list(self._run_ids)

    FRAMES = FRAMES

    def filter(self, **columns: str | Sequence[str] | None) -> Results:
        """The runs whose run-level columns (``agent``, ``domain``, ``format``, … — any column of ``runs``) take the
        given value(s); ``None`` keeps every value. Frames are built for the kept runs only.

        Examples
        --------
        >>> import tauk
        >>> res = tauk.load("data")
        >>> res.filter(agent=["atlas-large", "baseline"], domain="airline").runs["run_id"].to_list()
        ['atlas-large_airline.json', 'baseline_airline.json']
        """
        runs = self.runs
        keep = runs_where(runs, columns, require_present=True)
        idx = runs.with_row_index("_i").filter(keep)["_i"].to_list()
        out = Results([self._runs[i] for i in idx], [self._run_ids[i] for i in idx],
                      [self._agents[i] for i in idx], self.report, strict=self._strict,
                      progress=self._progress)  # fmt: skip
        return out

    def write_parquet(self, folder: str | Path, frames: Sequence[str] = FRAMES) -> list[Path]:
        """Write frames as Parquet files ``<folder>/<frame>.parquet`` (readable without tauk) and return the paths.

        Examples
        --------
        >>> import tauk, tempfile
        >>> paths = tauk.load("data/baseline_airline.json").write_parquet(tempfile.mkdtemp(), ["runs", "trials"])
        >>> [p.name for p in paths]
        ['runs.parquet', 'trials.parquet']
        """
        unknown = [f for f in frames if f not in self.FRAMES]
        if unknown:
            raise TaukError(f"unknown frame(s) {unknown}; choose from {', '.join(self.FRAMES)}")
        out = Path(folder)
        if out.exists() and not out.is_dir():
            raise TaukError(f"{out} is a file; give a folder to write the frames into")
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in frames:
            path = out / f"{name}.parquet"
            getattr(self, name).write_parquet(path)
            paths.append(path)
        return paths

    def __len__(self) -> int:
        return len(self._runs)

    def __repr__(self) -> str:
        n_sims = sum(len(r.simulations) or len(r.tb_records) for r in self._runs)
        agents = sorted({a for a in self._agents if a})
        s = f"Results({len(self._runs)} run(s), {n_sims} simulation(s), agents={agents})"
        if not self.report.ok:
            s += f"\n{self.report}"
        return s

    def _repr_html_(self) -> str:
        import html  # loaded when a notebook renders one (not at every start)

        return "<pre>" + html.escape(repr(self)) + "</pre>" + self.runs._repr_html_()

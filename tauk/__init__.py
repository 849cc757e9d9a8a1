"""tauk: analyse τ²-bench / τ-bench trial logs in Polars.

The statistics (scipy), scoring, plotting (matplotlib) and widget layers are imported on first use, so
``import tauk`` and the command line's ``--help`` stay quick.

Examples
--------
>>> import tauk
>>> res = tauk.load("data")
>>> s = tauk.stats.summarize(res, by=("agent", "domain"), k=1, ci=None)
>>> s.groups.filter(domain="airline").select("agent", "n_tasks").rows()
[('atlas-large', 25), ('atlas-small', 25), ('baseline', 25)]
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tauk.errors import EvaluationError, LoadError, LoadReport, LoadWarning, StatsWarning, TaukError

if TYPE_CHECKING:  # pragma: no cover
    from tauk import leaderboard, plot, replay, scoring, stats, tasks, widgets
    from tauk.io import load_tasks
    from tauk.io.leaderboard import load_leaderboard
    from tauk.io.load import Inputs  # noqa: F401 (tauk.Inputs in load()'s annotations, for type checkers)
    from tauk.results import Results
    from tauk.scoring import audit, score
    from tauk.store import ingest
    from tauk.store import open_store as open

__version__ = "0.1.0"

# load()'s annotations name tauk.Inputs / tauk.Results: typing.get_type_hints(tauk.load) resolves them through the
# lazy attributes below (a bare ``Inputs`` would need the heavy modules in this namespace at ``import tauk``)
tauk = sys.modules[__name__]


def load(
    inputs: tauk.Inputs,
    *,
    agent: str | Mapping[str, str] | None = None,
    strict: bool = True,
    progress: bool | None = None,
) -> tauk.Results:
    """Load results files into a :class:`Results` holding tidy, joinable Polars frames.

    Parameters
    ----------
    inputs
        A file, a directory (a directory-format run, or a folder scanned recursively for results files), a glob,
        a list of any of these, or a mapping ``label -> path`` (the label becomes the run id and the agent label).
        A store written by :func:`tauk.ingest` is opened lazily (:func:`tauk.open`).
    agent
        Overrides the agent label: one string for every run, or a mapping run_id/path -> label.
    strict
        ``True`` (default) raises :class:`tauk.LoadError` naming the file, the place in it and what was wrong;
        ``False`` skips what cannot be used (bad simulations, duplicate ids, unreadable files), warns with
        :class:`tauk.LoadWarning` and counts it in ``Results.report``.
    progress
        Show a progress bar (default: when more than 8 files are read).

    Returns
    -------
    Results

    Examples
    --------
    >>> import tauk
    >>> res = tauk.load("data")
    >>> res.runs.height, res.trials.height
    (6, 600)
    >>> sorted(res.trials["agent"].unique())
    ['atlas-large', 'atlas-small', 'baseline']
    """
    if isinstance(inputs, str | os.PathLike) and (Path(inputs) / "manifest.json").is_file():
        if agent is not None:  # a store written by tauk.ingest: opened lazily, same API
            raise TaukError("agent= relabels files as they are read; a store's labels were fixed at ingest")
        from tauk.store import open_store  # loaded when a store is opened (not at every start)

        return open_store(inputs)
    from tauk import results as _results

    return _results.load(inputs, agent=agent, strict=strict, progress=progress, _stacklevel=3)

# imported on first use: ``import tauk`` (and so the command line, before its process is set up) loads no Polars
_LAZY = {
    "Results": ("tauk.results", "Results"),
    "load_tasks": ("tauk.io", "load_tasks"),
    "Inputs": ("tauk.io.load", "Inputs"),  # the type of load()'s inputs (tauk.Inputs before it was lazy)
    "scoring": ("tauk.scoring", None),
    "replay": ("tauk.replay", None),
    "stats": ("tauk.stats", None),
    "tasks": ("tauk.tasks", None),
    "leaderboard": ("tauk.leaderboard", None),
    "plot": ("tauk.plot", None),
    "widgets": ("tauk.widgets", None),
    "html": ("tauk.html", None),
    "score": ("tauk.scoring", "score"),
    "audit": ("tauk.scoring", "audit"),
    "load_leaderboard": ("tauk.io.leaderboard", "load_leaderboard"),
    "store": ("tauk.store", None),
    "ingest": ("tauk.store", "ingest"),
    "open": ("tauk.store", "open_store"),
}


def __getattr__(name: str) -> Any:
    """Import the frames, statistics and scoring layers on first use (PEP 562)."""
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = importlib.import_module(module)
        if attr is not None:
            value = getattr(value, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tauk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted((set(globals()) | set(_LAZY)) - {"tauk"})


__all__ = [
    "EvaluationError",
    "LoadError",
    "LoadReport",
    "LoadWarning",
    "Results",
    "StatsWarning",
    "TaukError",
    "__version__",
    "audit",
    "html",
    "load",
    "leaderboard",
    "load_leaderboard",
    "load_tasks",
    "ingest",
    "open",
    "plot",
    "replay",
    "score",
    "scoring",
    "stats",
    "tasks",
    "widgets",
]

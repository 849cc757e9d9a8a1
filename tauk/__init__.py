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
from typing import TYPE_CHECKING, Any

from tauk.errors import EvaluationError, LoadError, LoadReport, LoadWarning, StatsWarning, TaukError
from tauk.io import load_tasks
from tauk.results import Results, load

if TYPE_CHECKING:  # pragma: no cover
    from tauk import plot, replay, scoring, stats, widgets
    from tauk.io.leaderboard import load_leaderboard
    from tauk.scoring import audit, score
    from tauk.store import ingest
    from tauk.store import open_store as open

__version__ = "0.1.0"

_LAZY = {
    "scoring": ("tauk.scoring", None),
    "replay": ("tauk.replay", None),
    "stats": ("tauk.stats", None),
    "plot": ("tauk.plot", None),
    "widgets": ("tauk.widgets", None),
    "score": ("tauk.scoring", "score"),
    "audit": ("tauk.scoring", "audit"),
    "load_leaderboard": ("tauk.io.leaderboard", "load_leaderboard"),
    "store": ("tauk.store", None),
    "ingest": ("tauk.store", "ingest"),
    "open": ("tauk.store", "open_store"),
}


def __getattr__(name: str) -> Any:
    """Import the statistics and scoring layers on first use (PEP 562)."""
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = importlib.import_module(module)
        if attr is not None:
            value = getattr(value, attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tauk' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
    "load",
    "load_leaderboard",
    "load_tasks",
    "ingest",
    "open",
    "plot",
    "replay",
    "score",
    "scoring",
    "stats",
    "widgets",
]

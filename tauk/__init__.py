"""tauk: analyse τ²-bench / τ-bench trial logs in Polars.

>>> import tauk
>>> res = tauk.load("data/")                                  # doctest: +SKIP
>>> tauk.stats.summarize(res, by="agent", ci=0.95).summary()   # doctest: +SKIP
"""

from tauk import scoring, stats
from tauk.errors import EvaluationError, LoadError, LoadReport, LoadWarning, StatsWarning, TaukError
from tauk.io import load_tasks
from tauk.io.leaderboard import load_leaderboard
from tauk.results import Results, load
from tauk.scoring import audit, score

__version__ = "0.1.0"

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
    "score",
    "scoring",
    "stats",
]

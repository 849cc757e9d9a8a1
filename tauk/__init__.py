"""tauk: analyse τ²-bench / τ-bench trial logs in Polars."""

from tauk.errors import EvaluationError, LoadError, LoadReport, LoadWarning, TaukError
from tauk.io import load, load_tasks
from tauk.results import Results

__version__ = "0.1.0"

__all__ = [
    "EvaluationError",
    "LoadError",
    "LoadReport",
    "LoadWarning",
    "Results",
    "TaukError",
    "__version__",
    "load",
    "load_tasks",
]

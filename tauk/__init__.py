"""tauk: analyse τ²-bench / τ-bench trial logs in Polars."""

from tauk.errors import EvaluationError, LoadError, LoadReport, LoadWarning, TaukError

__version__ = "0.1.0"

__all__ = ["EvaluationError", "LoadError", "LoadReport", "LoadWarning", "TaukError", "__version__"]

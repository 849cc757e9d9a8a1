"""Reading results files of every shape (decoding, then frame building); ``tauk.load`` wraps it."""

from tauk.io.load import LoadedRuns, load_tasks, read_inputs

__all__ = ["LoadedRuns", "load_tasks", "read_inputs"]

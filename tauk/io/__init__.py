"""Reading results files of every shape into tidy frames."""

from tauk.io.load import load, load_tasks

__all__ = ["load", "load_tasks"]

"""The ``tauk`` command line: the same numbers as the Python API, outside Jupyter.

The outermost layer: each subcommand is a module here calling the public functions a user would; no library
module imports this package.

    tauk summary PATH... [--by FIELDS] [--infra drop|fail] [--format table|json|csv|markdown] [--ci LEVEL ...]
                 [--failed|--passed] [--task IDS] [--termination REASONS]
    tauk audit PATH... [--format table|json] [--tasks TASKS_FILE] [--replay [--workers N]]
    tauk score PATH... [--replay [--workers N]] [--tasks TASKS_FILE] [--evaluation TYPE] [--out FILE]
    tauk compare PATH... --a LABEL --b LABEL [--k K] [--by domain] [--format table|json|csv|markdown]
    tauk synth OUT_DIR ... | tauk synth --sample
    tauk report PATH... --out DIR
    tauk html PATH... --out FILE [--failed|--passed|--all] [--task IDS] [--termination REASONS]
    tauk ingest SRC... --store DIR        (then any PATH may be the store)
    tauk export PATH... --out DIR [--frames runs,trials,...]
    tauk consistency PATH... [--by FIELDS] [--infra drop|fail] [--alpha A] [--format table|json|csv|markdown]
    tauk reliability PATH... [--by FIELDS] [--metrics NAMES] [--deviations] [--format table|json|csv|markdown]
    tauk validity TASKS_OR_RESULTS... [--per-task] [--evidence RESULTS] [--format table|json|csv|markdown]
    tauk leaderboard PATH [--domain NAMES] [--table ranking|rows|recovery|pairs|voice|all] [--format …]
    tauk leaderboard --verify SUBMISSION_DIR
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from tauk.errors import TaukError

__all__ = ["COMMANDS", "COMPARE_KEYS", "ENDS_AT_ONCE", "build_parser", "main", "run"]

COMMANDS = ("summary", "compare", "audit", "score", "consistency", "reliability", "validity", "leaderboard", "report",
            "html", "ingest", "export", "synth")  # fmt: skip
"""The subcommands, in ``tauk --help`` order; each is the module ``tauk.cli.<name>`` with an ``add_parser``."""


def __getattr__(name: str) -> Any:
    if name == "COMPARE_KEYS":  # the compare module's, loaded when asked (not at every start)
        from tauk.cli.compare import COMPARE_KEYS

        return COMPARE_KEYS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The subcommand ``argv`` names (its first non-option word), if it is one; the top-level options take no
    value, so that word is the command."""
    word = next((a for a in argv or () if not a.startswith("-")), None)
    return word if word in COMMANDS else None


class _DefaultsFormatter(argparse.HelpFormatter):
    """Append "(default: X)" to an option's help, unless the default is None/False or the help states it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        quiet = action.default is None or action.default is False or action.default == argparse.SUPPRESS
        if not quiet and "default" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    """Every subcommand's ``--help`` shows the option defaults."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _DefaultsFormatter)
        super().__init__(*args, **kwargs)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of every subcommand — or, when ``argv`` names one, of that one alone (only its module
    is imported: a command starts faster; ``tauk --help`` and a mistyped command still see them all)."""
    from tauk import __version__

    parser = argparse.ArgumentParser(prog="tauk", description="Analyse τ²-bench / τ-bench trial logs.")
    parser.add_argument("--version", action="version", version=f"tauk {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    named = _command_of(argv)
    for name in (named,) if named else COMMANDS:
        importlib.import_module(f"tauk.cli.{name}").add_parser(sub)
    return parser


_SHOWN: set[str] = set()


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    """``tauk: warning: …`` on one line (no file path or source line), each distinct text once per process."""
    from tauk.table import terminal_safe

    text = " ".join(str(message).split())
    if text in _SHOWN:
        return
    _SHOWN.add(text)
    (file or sys.stderr).write(f"tauk: warning: {terminal_safe(text)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit status; every :class:`tauk.TaukError` becomes one line on stderr
    and status 2. ``argv=None``: ``sys.argv`` in a command's own process (see :func:`run`)."""
    if argv is None:  # a command's process (not a call from Python): a short run allocates few cycles, so collect
        # rarely (as mypy does; ~20 ms of a summary's start) — set before Polars and NumPy are imported (``import
        # tauk.cli`` loads neither), whose imports otherwise ran ~9 ms of collections; what the command's module
        # loaded lives as long as the process, so full collections need not walk it
        gc.set_threshold(100_000, 50, 50)
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    if argv is None:
        gc.freeze()
    args = parser.parse_args(argv)
    args.from_command_line = argv is None
    if hasattr(args, "paths") and not args.paths and not getattr(args, "label", None):
        parser.parse_args([args.command, "--help"])
    return _run(args)


def run() -> None:
    """The ``tauk`` command (its console script and ``python -m tauk``): :func:`main` on ``sys.argv``, then the exit
    — for a command of :data:`ENDS_AT_ONCE`, at once (:func:`_end_process`) unless something still watches the
    process (``python -i``, a tracer, a profiler)."""
    rc = main()
    if _command_of(sys.argv[1:]) in ENDS_AT_ONCE and not _watched():
        _end_process(rc)
    sys.exit(rc)


def _watched() -> bool:
    """Whether something outside the command still has work once it has run: ``python -i`` (the prompt),
    a tracer or debugger (``sys.settrace``) or a profiler (``python -m cProfile -m tauk …`` prints its statistics
    after the command) — then the process ends as usual."""
    if sys.flags.interactive or sys.gettrace() is not None or sys.getprofile() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: cProfile and coverage register a tool here
    return monitoring is not None and any(monitoring.get_tool(i) is not None for i in range(6))


def _run(args: argparse.Namespace) -> int:
    try:
        with warnings.catch_warnings():  # every warning (stats, regrade, matplotlib …) as one line, once
            warnings.simplefilter("default")
            warnings.showwarning = _one_line_warning
            return int(args.func(args) or 0)
    except TaukError as exc:  # it may quote the logs (labels, reasons): control characters made visible
        from tauk.cli._common import safe_lines

        sys.stderr.write(f"tauk: error: {safe_lines(exc)}\n")
        return 2
    except MemoryError:
        sys.stderr.write("tauk: error: not enough memory; free memory, load fewer files at once, or ingest them "
                         "into a columnar store (tauk ingest) and open that\n")  # fmt: skip
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


ENDS_AT_ONCE = frozenset({"summary", "compare", "consistency", "reliability", "validity", "leaderboard"})
"""The commands whose only output is stdout / stderr: their process ends as soon as that is flushed and the exit
handlers have run, without freeing what it built one object at a time (as mypy ends: ~12 ms of a summary's 0.28 s)."""


def _end_process(rc: int) -> None:
    """End a command's process now: run the exit handlers (:mod:`atexit`: temporary files, logging, executors),
    flush stdout and stderr (a closed pipe is no error; any other failed write is reported and ends with status 120
    as Python's own exit does), then exit with ``rc`` — skipping only the teardown that frees every object and
    module, which has nothing left to write."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is not None:  # first, as at a normal exit: what they write is flushed below
        run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away (``| head``): no error
            pass
        except (OSError, ValueError) as exc:  # e.g. a full disk: the output is incomplete — as Python's own exit
            # (status 120), never a silent success
            if isinstance(exc, OSError) and stream is sys.stdout:
                with contextlib.suppress(OSError, ValueError):
                    sys.stderr.write(f"tauk: error: cannot write the output: {exc.strerror or exc}\n")
                    sys.stderr.flush()
                rc = rc or 120
    os._exit(rc)

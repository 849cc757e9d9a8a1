"""Exceptions, warnings and the load report.

Every problem with an input names the file, the place in it (a JSON path such as
``$.simulations[3].reward_info`` or a byte offset) and what was wrong.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tauk._text import terminal_safe


class TaukError(ValueError):
    """Base class of every error tauk raises on purpose (a ``ValueError``: bad input or a bad argument).

    The command line turns every one of them into one line on stderr and exit status 2.
    """


def check_columns(asked, columns, what: str = "group by") -> None:
    """Raise a one-line :class:`TaukError` naming the first of ``asked`` that is not in ``columns`` and the choices
    (columns starting with ``_`` are internal and not offered); call it before any grouping.

    >>> check_columns(["agent"], ["agent", "domain"])
    >>> check_columns(["agnet"], ["agent", "domain", "_kept"])
    Traceback (most recent call last):
    ...
    tauk.errors.TaukError: cannot group by 'agnet': not a column (did you mean 'agent'?); choose from agent, domain
    """
    cols = list(columns)
    for col in asked:
        if col not in cols:
            import difflib  # only for the message (not at every check: a command's start)

            choices = [c for c in cols if not str(c).startswith("_")]
            close = difflib.get_close_matches(str(col), choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise TaukError(f"cannot {what} {col!r}: not a column{hint}; choose from {', '.join(choices)}")


class LoadError(TaukError):
    """A results file (or directory) could not be read as τ²-bench / τ-bench results.

    >>> str(LoadError("runs/a.json", "$.simulations[2].task_id", "missing required field"))
    'runs/a.json: at $.simulations[2].task_id: missing required field'
    """

    def __init__(self, path: str, location: str | None, message: str):
        self.path = str(path)
        self.location = location
        self.message = message
        # the path and the place are shown with their control characters made visible (a file name is untrusted
        # text too); ``path`` and ``location`` keep them as they are
        shown = terminal_safe(self.path)
        where = f" at {terminal_safe(location)}" if location else ""
        super().__init__(f"{shown}:{where}: {message}" if where else f"{shown}: {message}")


class EvaluationError(TaukError):
    """A scoring request that cannot be honoured (e.g. the reward basis names a component the
    chosen evaluation type does not evaluate)."""


class LoadWarning(UserWarning):
    """Something in an input was skipped or repaired; see ``Results.report``."""


class StatsWarning(UserWarning):
    """A statistic was computed on less than was asked for (e.g. a k above some tasks' trials left them out)."""


@dataclass
class LoadIssue:
    path: str
    location: str | None
    kind: str
    message: str
    skipped: int = 0

    def __str__(self) -> str:
        where = f" at {terminal_safe(self.location)}" if self.location else ""
        return f"{terminal_safe(self.path)}{where}: [{self.kind}] {self.message}"


@dataclass
class LoadReport:
    """What a load skipped or repaired, counted by kind.

    >>> r = LoadReport()
    >>> _ = r.add("a.json", "$.simulations[0]", "duplicate_id", "dup", skipped=1)
    >>> r.counts()
    {'duplicate_id': 1}
    """

    issues: list[LoadIssue] = field(default_factory=list)
    files_loaded: int = 0
    files_skipped: int = 0

    def add(self, path: str, location: str | None, kind: str, message: str, skipped: int = 0) -> LoadIssue:
        issue = LoadIssue(str(path), location, kind, message, skipped)
        self.issues.append(issue)
        return issue

    def counts(self) -> dict[str, int]:
        c: Counter[str] = Counter()
        for i in self.issues:
            c[i.kind] += max(i.skipped, 1)
        return dict(c)

    @property
    def ok(self) -> bool:
        return not self.issues

    def __str__(self) -> str:
        head = f"LoadReport: {self.files_loaded} file(s) loaded, {self.files_skipped} skipped"
        if not self.issues:
            return head + ", no issues"
        lines = [head + f", {len(self.issues)} issue(s):"]
        lines += [f"  - {i}" for i in self.issues[:50]]
        if len(self.issues) > 50:
            lines.append(f"  ... and {len(self.issues) - 50} more")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        return "<pre>" + html.escape(str(self)) + "</pre>"

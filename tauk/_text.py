"""Terminal text: control characters made visible. The one escaping every layer needs (an error message names a
file, and a file name is untrusted text), so it lives below them all; :mod:`tauk.table` re-exports it beside the
escaping of the other targets."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["CONTROL", "terminal_safe"]

#: C0 / C1 controls, the line and paragraph separators and the bidi embeddings, overrides and isolates
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: Any) -> str:
    """Text safe to print on a terminal: control characters (ANSI escapes, CR, bidi overrides …) made visible.

    >>> terminal_safe("red\\x1b[31m\\nline")
    'red\\\\x1b[31m\\\\nline'
    """
    return CONTROL.sub(lambda m: repr(m.group(0))[1:-1] if m.group(0) != "\x7f" else "\\x7f", str(text))

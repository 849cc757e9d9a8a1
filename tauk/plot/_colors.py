"""Colour-blind-safe palettes and one stable colour per agent.

* Palette: Okabe–Ito (without black; its pale yellow kept for last) for agents, then Paul Tol's *muted* scheme once those run out.
* :func:`agent_color` gives every agent (or run) label ONE colour for the whole session: its preferred slot is a
  hash of the name (BLAKE2b, so the same across processes and Python versions, unlike ``hash``), taken among the
  Okabe–Ito colours first; a slot already held by another name moves on to the next free one. :func:`register_agents`
  assigns a whole set at once in sorted order, so the result does not depend on the order agents are met in —
  every plot function registers the labels it draws before drawing, and ``tauk report`` registers every agent of
  the data up front.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "OKABE_ITO",
    "TOL_MUTED",
    "AGENT_PALETTE",
    "CATEGORY_PALETTE",
    "agent_color",
    "agent_colors",
    "register_agents",
    "reset_agent_colors",
]

OKABE_ITO: dict[str, str] = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
TOL_MUTED: dict[str, str] = {
    "indigo": "#332288",
    "cyan": "#88CCEE",
    "teal": "#44AA99",
    "green": "#117733",
    "olive": "#999933",
    "sand": "#DDCC77",
    "rose": "#CC6677",
    "wine": "#882255",
    "purple": "#AA4499",
}

_PRIMARY: tuple[str, ...] = tuple(OKABE_ITO[n] for n in ("orange", "sky blue", "bluish green", "blue", "vermillion",
                                                         "reddish purple"))  # fmt: skip
_SECONDARY: tuple[str, ...] = tuple(c for n, c in TOL_MUTED.items() if n != "sand") + (OKABE_ITO["yellow"], TOL_MUTED["sand"])
AGENT_PALETTE: tuple[str, ...] = _PRIMARY + _SECONDARY
"""Agent colours: Okabe–Ito (no black; the pale yellow last), then Tol muted."""

CATEGORY_PALETTE: tuple[str, ...] = (
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499",
    "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442",
)  # fmt: skip
"""Colours for categories (failure components, termination reasons): Tol muted, then Okabe–Ito."""

NEUTRAL = "#4D4D4D"
LIGHT = "#BBBBBB"


# ---------------------------------------------------------------------------------------------- agent colours
_registry: dict[str, int] = {}


def _preferred(name: str, size: int) -> int:
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % size


def _assign(name: str) -> int:
    taken = set(_registry.values())
    np_, ns = len(_PRIMARY), len(_SECONDARY)
    start = _preferred(name, np_)
    for i in range(np_):  # Okabe–Ito first
        slot = (start + i) % np_
        if slot not in taken:
            return slot
    start = _preferred(name, ns)
    for i in range(ns):  # then Tol muted
        slot = np_ + (start + i) % ns
        if slot not in taken:
            return slot
    return _preferred(name, len(AGENT_PALETTE))  # palette exhausted: colours repeat from here on


def register_agents(names: Iterable[Any]) -> dict[str, str]:
    """Give every not-yet-seen name a colour, in sorted order (so the result does not depend on the order given).
    Names already registered keep theirs. Returns ``{name: colour}`` for the names given.

    Examples
    --------
    >>> from tauk.plot import register_agents, reset_agent_colors
    >>> reset_agent_colors()
    >>> register_agents(["b", "a"]) == register_agents(["a", "b"])
    True
    >>> sorted(register_agents(["a", "b"]))
    ['a', 'b']
    """
    labels = sorted({str(n) for n in names if n is not None})
    for n in labels:
        if n not in _registry:
            _registry[n] = _assign(n)
    return {n: AGENT_PALETTE[_registry[n]] for n in labels}


def agent_color(name: Any) -> str:
    """The session-wide colour (hex) of an agent or run label; the same in every figure.

    Examples
    --------
    >>> from tauk.plot import agent_color
    >>> agent_color("gpt-4.1") == agent_color("gpt-4.1"), agent_color("gpt-4.1").startswith("#")
    (True, True)
    """
    label = str(name)
    if label not in _registry:
        _registry[label] = _assign(label)
    return AGENT_PALETTE[_registry[label]]


def agent_colors(names: Iterable[Any]) -> dict[str, str]:
    """``{name: colour}`` for several names, registering new ones together (sorted).

    Examples
    --------
    >>> from tauk.plot import agent_color, agent_colors
    >>> c = agent_colors(["atlas-large", "baseline"])
    >>> c["baseline"] == agent_color("baseline"), c["baseline"].startswith("#")
    (True, True)
    """
    return register_agents(names)


def reset_agent_colors() -> None:
    """Forget every assignment (tests, or a fresh notebook section).

    Examples
    --------
    >>> from tauk.plot import agent_color, reset_agent_colors
    >>> reset_agent_colors()
    >>> first = agent_color("solo")
    >>> _ = agent_color("other")
    >>> reset_agent_colors()  # forgets "other"; "solo" gets its preferred colour again
    >>> agent_color("solo") == first
    True
    """
    _registry.clear()

"""Containers that remember which of their records a simulation reached.

A domain database of τ²-bench is a pydantic model whose fields are mostly ``dict``\\ s of records (airline:
``flights``, ``users``, ``reservations``) or ``list``\\ s (telecom). A tool reaches a record only through its
container, so a container that notes every key handed out (or written, or deleted) tells, after a simulation,
which records may have changed: those are the only ones to compare with the gold state and to restore. Anything
that hands out every record at once (``values()``, ``items()``, ``copy()``, …) marks the whole container.

Serialisation (``model_dump``) and ``copy.deepcopy`` read the containers through the C API and mark nothing;
a deep copy or a pickle is a plain ``dict`` / ``list``.

Examples
--------
>>> d = TrackedDict({"a": 1, "b": 2})
>>> d["a"], "b" in d, sorted(d.touched), d.all
(1, True, ['a'], False)
>>> _ = list(d.values()); d.all
True
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["TrackedDict", "TrackedList"]


class TrackedDict(dict):
    """A ``dict`` noting the keys whose values were handed out, written or deleted (``touched``), or that every
    value was (``all``)."""

    __slots__ = ("touched", "all")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.touched: set = set()
        self.all = False

    def reset(self) -> None:
        self.touched = set()
        self.all = False

    # one record
    def __getitem__(self, key: Any) -> Any:
        self.touched.add(key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self.touched.add(key)
        return dict.get(self, key, default)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.touched.add(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self.touched.add(key)
        dict.__delitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        self.touched.add(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self.touched.add(key)
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        new = dict(*args, **kwargs)
        self.touched.update(new)
        dict.update(self, new)

    def __ior__(self, other: Any) -> TrackedDict:
        self.update(other)
        return self

    # every record
    def _every(self) -> None:
        self.all = True

    def values(self):  # type: ignore[override]
        self.all = True
        return dict.values(self)

    def items(self):  # type: ignore[override]
        self.all = True
        return dict.items(self)

    def popitem(self) -> Any:
        self.all = True
        return dict.popitem(self)

    def clear(self) -> None:
        self.all = True
        dict.clear(self)

    def copy(self) -> dict:
        self.all = True
        return dict(dict.items(self))

    def __copy__(self) -> dict:
        return self.copy()

    def __or__(self, other: Any) -> dict:
        self.all = True
        return dict.__or__(dict(dict.items(self)), other)

    def __ror__(self, other: Any) -> dict:
        self.all = True
        return dict.__or__(dict(other), dict(dict.items(self)))

    # copies and pickles are plain dicts (the values are copied, never handed out)
    def __deepcopy__(self, memo: dict) -> dict:
        return copy.deepcopy(dict(dict.items(self)), memo)

    def __reduce__(self) -> Any:
        return (dict, (dict(dict.items(self)),))


class TrackedList(list):
    """A ``list`` noting (``all``) that any element was handed out or the list changed; lists are compared and
    restored whole (an insertion shifts every index after it)."""

    __slots__ = ("all",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.all = False

    touched: frozenset = frozenset()

    def reset(self) -> None:
        self.all = False

    def __deepcopy__(self, memo: dict) -> list:
        return copy.deepcopy(list(list.__iter__(self)), memo)

    def __reduce__(self) -> Any:
        return (list, (list(list.__iter__(self)),))


def _marking(name: str) -> Any:
    base = getattr(list, name)

    def method(self: TrackedList, *args: Any, **kwargs: Any) -> Any:
        self.all = True
        return base(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in ("__getitem__", "__setitem__", "__delitem__", "__iter__", "__reversed__", "__iadd__", "__imul__",
              "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "copy", "__copy__",
              "index", "count", "__contains__", "__add__", "__mul__", "__rmul__"):  # fmt: skip
    if hasattr(list, _name):
        setattr(TrackedList, _name, _marking(_name))
del _name

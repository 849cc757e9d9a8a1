"""Modules imported on first use: ``stats = lazy("scipy.stats")`` costs nothing until ``stats.norm`` is read, so the
command line starts without SciPy's statistics (about a second) when a command does not need them.

>>> m = lazy("json")
>>> m.dumps([1])
'[1]'
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["lazy"]


class _Lazy:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(object.__getattribute__(self, "_name")), attr)

    def __repr__(self) -> str:
        return f"<lazy module {object.__getattribute__(self, '_name')}>"


def lazy(name: str) -> Any:
    """A stand-in for module ``name`` that imports it when an attribute is first read."""
    return _Lazy(name)


def lazy_exports(module: str, names: dict[str, str]) -> None:
    """Make each of ``names`` (public name → submodule, relative to ``module``) an attribute of package ``module``
    imported on first read. A name that is also a subpackage's (``tauk.stats.power``) keeps the function: the
    import system's binding of the subpackage is ignored, as the old eager ``from .power import power`` did."""
    import sys
    import types

    mod = sys.modules[module]
    cache: dict[str, Any] = {}

    def prop(attr: str, sub: str) -> property:
        def get(self: Any) -> Any:
            if attr not in cache:
                cache[attr] = getattr(importlib.import_module(sub, module), attr)
            return cache[attr]

        def set_(self: Any, value: Any) -> None:
            if not isinstance(value, types.ModuleType):
                cache[attr] = value

        return property(get, set_)

    mod.__class__ = type("LazyPackage", (types.ModuleType,), {a: prop(a, s) for a, s in names.items()})

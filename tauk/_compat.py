"""One release of grace for calls written against the old signatures (see ``CHANGELOG.md``).

The statistics and scoring functions take their data first and every option by keyword. :func:`keyword_options`
keeps the old calls working for one release: extra positional arguments are mapped onto the old parameter order,
renamed keywords onto their new names, and each such call emits a :class:`DeprecationWarning` naming the keyword
to use. The wrapped function keeps its own signature (``inspect.signature`` follows ``__wrapped__``).

Examples
--------
>>> import warnings
>>> @keyword_options(("x", "scale", "shift"), renamed={"shift": "offset"})
... def f(x, *, scale=1, offset=0):
...     return x * scale + offset
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     f(2, 3, 1)
7
>>> w[0].category.__name__, str(w[0].message).split("(): ")[1]  # doctest: +NORMALIZE_WHITESPACE
('DeprecationWarning', 'passing scale, shift by position is deprecated and will stop working in the next
release; use keywords: scale=..., offset=...')
>>> f(2, scale=3)
6
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from tauk.errors import TaukError

__all__ = ["keyword_options", "deprecated_keyword"]

F = TypeVar("F", bound=Callable[..., Any])

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _public_name(func: Callable[..., Any]) -> str:
    """``tauk.stats.pass_hat_k`` for a function of ``tauk.stats.passk`` (the package it is exported from), else the
    function's own module (``tauk.stats.comparisons.paired_tests.paired_test``)."""
    parts = func.__module__.split(".")
    pkg = ".".join(parts[:2]) if parts[0] == "tauk" and len(parts) > 2 else func.__module__
    if pkg != func.__module__ and func.__qualname__ not in getattr(sys.modules.get(pkg), "__all__", ()):
        pkg = func.__module__
    return func.__qualname__ if pkg in ("", "__main__") else f"{pkg}.{func.__qualname__}"


def deprecated_keyword(name: str, old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that keyword ``old`` of ``name`` is now called ``new``."""
    warnings.warn(
        f"{name}(): {old}= is deprecated and will stop working in the next release; use {new}=",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def keyword_options(old_order: Sequence[str], *, renamed: Mapping[str, str] | None = None) -> Callable[[F], F]:
    """Decorate a function whose options became keyword-only (and possibly renamed).

    Parameters
    ----------
    old_order
        The parameter names of the *old* signature, in order; its first names are the positional parameters the
        new signature keeps.
    renamed
        Old keyword name -> new keyword name (applies to positional arguments mapped by ``old_order`` too).

    Returns
    -------
    callable
        A decorator. The decorated function accepts the old positional calls and old keywords with a
        :class:`DeprecationWarning`; too many positional arguments, or one value given twice, raise
        :class:`tauk.TaukError`.
    """
    renames = dict(renamed or {})

    def decorate(func: F) -> F:
        params = inspect.signature(func).parameters.values()
        n_pos = sum(1 for p in params if p.kind in _POSITIONAL)
        name = _public_name(func)
        if tuple(old_order[:n_pos]) != tuple(p.name for p in params if p.kind in _POSITIONAL):
            raise AssertionError(f"{name}: old_order must start with the positional parameters")

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            name = _public_name(func)  # at the call: the package's exports are known by then
            if len(args) > n_pos:
                moved = old_order[n_pos : len(args)]
                if len(args) > len(old_order):
                    raise TaukError(f"{name}() takes at most {len(old_order)} positional arguments ({len(args)} given)")
                new_names = [renames.get(m, m) for m in moved]
                for old, new, value in zip(moved, new_names, args[n_pos:]):
                    if new in kwargs or old in kwargs:
                        raise TaukError(f"{name}() got multiple values for argument {new!r}")
                    kwargs[new] = value
                warnings.warn(
                    f"{name}(): passing {', '.join(moved)} by position is deprecated and will stop working in the "
                    f"next release; use keywords: {', '.join(f'{n}=...' for n in new_names)}",
                    DeprecationWarning,
                    stacklevel=2,
                )
                args = args[:n_pos]
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TaukError(f"{name}() got both {old}= (deprecated) and {new}=")
                    deprecated_keyword(name, old, new)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate

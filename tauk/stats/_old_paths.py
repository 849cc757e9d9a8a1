"""The import paths of the statistics before they were arranged by question, kept for one release.

``import tauk.stats.model`` (and every other old module path in :data:`MOVED`) still works and warns with a
:class:`DeprecationWarning` naming the new module; the old module is an alias whose names are looked up in the new
modules (``RENAMED`` maps the few names that changed). Names a module re-exported before
(``tauk.stats.passk.as_trials``, …) resolve the same way through :func:`moved_names`. Nothing here is imported
by tauk's own code paths except :mod:`tauk.stats` (which installs the finder) and :mod:`tauk.stats.passk`.

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from tauk.stats.sample_size import power_t
>>> power_t.__module__, caught[0].category.__name__
('tauk.stats.power.planning', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["MOVED", "RENAMED", "moved_names", "install"]

MOVED: dict[str, tuple[str, ...]] = {
    "tauk.stats._core": ("tauk.stats.tasks", "tauk.stats.options"),
    "tauk.stats.counts": ("tauk.stats.tasks",),
    "tauk.stats._bootstrap": ("tauk.stats.intervals.bootstrap",),
    "tauk.stats._intervals": ("tauk.stats.intervals.group", "tauk.stats.intervals.nonparametric",
                              "tauk.stats.intervals.model", "tauk.stats.intervals.model_check"),
    "tauk.stats._estimate": ("tauk.stats.estimate", "tauk.stats.intervals.group",
                             "tauk.stats.intervals.nonparametric"),
    "tauk.stats._posterior": ("tauk.stats.intervals.posterior",),
    "tauk.stats._model_parts": ("tauk.stats.intervals.model_check", "tauk.stats.intervals.posterior",
                                "tauk.stats.intervals.nonparametric", "tauk.stats.intervals.model",
                                "tauk.stats.tasks"),
    "tauk.stats.model": ("tauk.stats.intervals.model", "tauk.stats.intervals.posterior",
                         "tauk.stats.intervals.model_check"),
    "tauk.stats._rerun_floor": ("tauk.stats.intervals.rerun_floor",),
    "tauk.stats._minorant_table": ("tauk.stats.intervals.minorants",),
    "tauk.stats.overall": ("tauk.stats.summary",),
    "tauk.stats.compare": ("tauk.stats.comparisons", "tauk.stats.options"),
    "tauk.stats._comparison": ("tauk.stats.comparisons.results",),
    "tauk.stats._pairing": ("tauk.stats.comparisons.pairing", "tauk.stats.comparisons.results",
                            "tauk.stats.comparisons.pairwise", "tauk.stats.options"),
    "tauk.stats.paired": ("tauk.stats.comparisons.paired_tests",),
    "tauk.stats.pvalues": ("tauk.stats.comparisons.pvalues",),
    "tauk.stats.ranks": ("tauk.stats.comparisons.ranks",),
    "tauk.stats.sample_size": ("tauk.stats.power.planning", "tauk.stats.power.variance"),
    "tauk.stats.consistency": ("tauk.stats.noise",),
    "tauk.stats._reliability": ("tauk.stats.noise.noise_floor", "tauk.stats.noise.agreement"),
    "tauk.stats._reliability_groups": ("tauk.stats.noise.groups", "tauk.stats.noise.ranking",
                                       "tauk.stats.options"),
}
"""Old module path → the modules its names now live in (searched in this order)."""

RENAMED: dict[str, dict[str, str]] = {
    "tauk.stats._core": {"INTERVAL_METHODS": "CI_METHODS"},
    "tauk.stats._bootstrap": {"CI_METHODS": "BOOTSTRAP_METHODS"},
    "tauk.stats._intervals": {"_unanimous": "unanimous_columns", "_nn": "finite_or_none"},
    "tauk.stats._estimate": {"_f": "finite_or_none"},
    "tauk.stats._posterior": {"_resample": "resample", "_wquantile": "weighted_quantiles",
                              "_pair_counts": "pair_counts"},
    "tauk.stats._model_parts": {"_fixed_draws": "fixed_draws", "_unbiased": "unbiased_means",
                                "_clopper_pearson": "clopper_pearson", "_nonparametric": "task_intervals_by_group",
                                "_resample": "resample", "_pair_counts": "pair_counts"},
    "tauk.stats._pairing": {"TESTS": "PAIRED_TESTS", "nn": "finite_or_none"},
    "tauk.stats.paired": {"METHODS": "PAIRED_TESTS"},
    "tauk.stats.compare": {"TESTS": "PAIRED_TESTS"},
    "tauk.stats._reliability_groups": {"_f": "finite_or_none", "_group_stats": "group_stats",
                                       "_outcomes": "trial_outcomes", "_ranking": "rank_agents"},
}
"""Old module path → {old name: new name} for the names that changed on the way."""


def _new_path(old: str) -> str:
    return " / ".join(MOVED[old])


def _lookup(targets: tuple[str, ...], name: str) -> Any:
    for target in targets:
        module = importlib.import_module(target)
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(name)


class _OldModule(types.ModuleType):
    """An old module path: its names are looked up, on first use, in the modules that hold them now."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)
        old = self.__name__
        if name == "__all__":
            names: list[str] = []
            for target in MOVED[old]:
                names += [n for n in getattr(importlib.import_module(target), "__all__", []) if n not in names]
            return names
        try:
            return _lookup(MOVED[old], RENAMED.get(old, {}).get(name, name))
        except AttributeError:
            raise AttributeError(f"module {old!r} (deprecated: now {_new_path(old)}) has no attribute "
                                 f"{name!r}") from None  # fmt: skip


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside the import machinery and this module (where the import was)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (frame.f_code.co_filename == __file__ or "importlib" in frame.f_code.co_filename
                                 or frame.f_code.co_filename.startswith("<frozen")):  # fmt: skip
        frame, level = frame.f_back, level + 1
    return level


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old module paths of :data:`MOVED` (and only those)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: Any) -> types.ModuleType:
        return _OldModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__doc__ = f"Deprecated: {module.__name__} is now {_new_path(module.__name__)}."
        warnings.warn(f"{module.__name__} is deprecated and will be removed in the next release; import from "
                      f"{_new_path(module.__name__)} (or tauk.stats)", DeprecationWarning,
                      stacklevel=_caller_stacklevel())  # fmt: skip


_FINDER = _Finder()


def install() -> None:
    """Put the finder of the old paths on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)


def moved_names(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` resolving the names ``module`` re-exported before (name → the module holding it
    now), each with a :class:`DeprecationWarning`."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is deprecated and will be removed in the next release; import it from "
                      f"{names[name]} (or tauk.stats)", DeprecationWarning, stacklevel=2)  # fmt: skip
        return getattr(importlib.import_module(names[name]), name)

    return __getattr__

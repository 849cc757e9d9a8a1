"""The import paths of the statistics before they were arranged by question, kept for one release.

``import tauk.stats.model`` (and every other old module path in :data:`MOVED`) still works and warns with a
:class:`DeprecationWarning` naming the new module; the old module is an alias whose names are looked up in the new
modules (``RENAMED`` maps the few names that changed). Names a module re-exported before
(``tauk.stats.passk.as_trials``, …) resolve the same way through :func:`moved_names`. Nothing here is imported
by tauk's own code paths except :mod:`tauk.stats` (which installs the finder) and :mod:`tauk.stats.passk`.

Examples
--------
>>> import sys, warnings
>>> _ = sys.modules.pop("tauk.stats.sample_size", None)  # as on a first import
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

__all__ = ["MOVED", "RENAMED", "SHADOWED", "moved_names", "install"]

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
    "tauk.stats.overall": ("tauk.stats.setup_mean",),
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

SHADOWED = ("tauk.stats.compare", "tauk.stats.consistency", "tauk.stats.overall")
"""Old module paths whose attribute of :mod:`tauk.stats` is a function of the same name: their alias is put in
``sys.modules`` at once (importing it must not replace the function), and warns when a name is taken from it."""


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

    _warn_on_use = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)
        old = self.__name__
        if self._warn_on_use:
            warnings.warn(_message(old), DeprecationWarning, stacklevel=2)
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


def _internal(filename: str) -> bool:
    """A frame :func:`warnings.warn` skips when it counts the stack level (the import system's bootstrap)."""
    return "importlib" in filename and "_bootstrap" in filename


def _caller_stacklevel() -> int:
    """The ``stacklevel`` of the import statement that asked for an old path, as :func:`warnings.warn` counts it
    from ``exec_module`` (skipping the import system's bootstrap frames, and ``importlib.import_module``)."""
    frame, level = sys._getframe(2), 1  # exec_module's caller
    while frame is not None and (_internal(frame.f_code.co_filename) or frame.f_code.co_filename == __file__
                                 or frame.f_code.co_filename == importlib.__file__):  # fmt: skip
        if not _internal(frame.f_code.co_filename):
            level += 1
        frame = frame.f_back
    return level + 1


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
        warnings.warn(_message(module.__name__), DeprecationWarning, stacklevel=_caller_stacklevel())


def _message(old: str) -> str:
    return f"{old} is deprecated and will be removed in the next release; import from {_new_path(old)} (or tauk.stats)"


_FINDER = _Finder()


def install() -> None:
    """Put the finder of the old paths on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)
    for old in SHADOWED:
        if old not in sys.modules:
            module = _OldModule(old, f"Deprecated: {old} is now {_new_path(old)}.")
            module._warn_on_use = True
            module.__spec__ = importlib.util.spec_from_loader(old, _FINDER)
            sys.modules[old] = module


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

"""The options every statistic shares: one :class:`IntervalOptions`, one list of each choice, one check of each.

An interval is asked for with four options — the level ``ci``, the ``method``, the bootstrap ``resamples`` and the
``seed`` — and they travel together as one frozen :class:`IntervalOptions` from the public functions (which take
them as keywords, or as ``options=``) down to the code that makes the interval. The lists of choices are the ones
of :mod:`tauk.conventions` (the command line and the widgets read them there, without loading the statistics):

* :data:`CI_METHODS` — every ``method=``: ``"model"`` (the default) and the task bootstrap / t methods;
* :data:`PAIRED_TESTS` — every ``test=`` of a comparison; :data:`ADJUSTMENTS` — every ``adjust=``;
* :data:`INFRA_RULES` — every ``infra=``.

Examples
--------
>>> from tauk.stats.options import IntervalOptions
>>> IntervalOptions()
IntervalOptions(ci=0.95, method='model', resamples=9999, seed=0)
>>> IntervalOptions(ci=0.9, method="BCa", resamples=999).method
'bca'
>>> IntervalOptions(ci=None).level  # no interval asked for; where one is always given, it is at CI_LEVEL
0.95
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields, replace
from typing import Any

from tauk.conventions import (
    ADJUST,
    ADJUSTMENTS,
    CI_LEVEL,
    CI_METHOD,
    CI_METHODS,
    INFRA_RULES,
    MAX_RESAMPLES,
    PAIRED_TEST,
    PAIRED_TESTS,
    RESAMPLES,
    SEED,
)
from tauk.errors import TaukError

__all__ = [
    "IntervalOptions",
    "CI_METHODS",
    "PAIRED_TESTS",
    "PAIRED_TEST",
    "ADJUSTMENTS",
    "ADJUST",
    "INFRA_RULES",
    "check_level",
    "check_infra",
    "check_test",
    "check_adjust",
    "finite_or_none",
    "interval_options",
]


@dataclass(frozen=True)
class IntervalOptions:
    """How an interval is made: ``ci`` (the level; ``None`` for no interval), ``method`` (one of
    :data:`CI_METHODS`), ``resamples`` (task-bootstrap resamples) and ``seed`` (of every resampling and Monte-Carlo
    draw). Defaults from :mod:`tauk.conventions`; checked on construction (a :class:`~tauk.TaukError` if one is
    off); ``method`` is kept in lower case.
    """

    ci: float | None = CI_LEVEL
    method: str = CI_METHOD
    resamples: int = RESAMPLES
    seed: Any = SEED

    def __post_init__(self) -> None:
        ci, method, resamples = self.ci, self.method, self.resamples
        if ci is not None:
            check_level(ci)
        if not isinstance(method, str) or method.lower() not in CI_METHODS:
            raise TaukError(f"method must be one of {CI_METHODS}, got {method!r}")
        if isinstance(resamples, bool) or not isinstance(resamples, numbers.Integral):
            raise TaukError(f"resamples must be an integer, got {resamples!r}")
        if resamples < 1:
            raise TaukError("resamples must be ≥ 1")
        if resamples > MAX_RESAMPLES:
            raise TaukError(
                f"resamples must be ≤ {MAX_RESAMPLES:,} (got {resamples:,}): a bootstrap keeps one float per "
                f"resample and statistic, {resamples * 8 / 1e9:.1f} GB each here"
            )
        seed = self.seed
        if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed < 0:
            raise TaukError(f"seed must be an integer ≥ 0 (NumPy's seeds are non-negative), got {seed}")
        object.__setattr__(self, "method", method.lower())
        if self.method in _RESAMPLING and ci is not None and resamples < min_resamples(ci):
            raise TaukError(
                f"resamples={resamples} is too few for a {ci:.0%} {self.method} interval: its ends are the "
                f"{(1 - ci) / 2:.3g} and {(1 + ci) / 2:.3g} quantiles of the resamples, which need at least "
                f"{min_resamples(ci)} of them (thousands for a stable interval; the default is {RESAMPLES:,})"
            )

    @property
    def level(self) -> float:
        """The level of an interval that is always given (a comparison's, a rank interval's): ``ci``, or
        :data:`~tauk.conventions.CI_LEVEL` when ``ci`` is None."""
        return CI_LEVEL if self.ci is None else self.ci

    @property
    def tail(self) -> float:
        """The probability left in each tail, (1 − level) / 2."""
        return (1.0 - self.level) / 2.0

    def replace(self, **changes: Any) -> IntervalOptions:
        """A copy with ``changes`` (checked again)."""
        return replace(self, **changes)


_DEFAULTS = {f.name: f.default for f in fields(IntervalOptions)}
_RESAMPLING = ("bca", "percentile", "bootstrap-t")


def min_resamples(level: float) -> int:
    """The fewest resamples whose (1 ± level)/2 quantiles are distinct order statistics: (B + 1)·(1 − level)/2 ≥ 1,
    i.e. B ≥ 2/(1 − level) − 1 (39 at 95 %). Fewer give an interval made of the extreme resamples, or of one.

    >>> min_resamples(0.95), min_resamples(0.9), min_resamples(0.99)
    (39, 19, 199)
    """
    return max(1, math.ceil(2.0 / (1.0 - level) - 1.0 - 1e-9))


def interval_options(options: IntervalOptions | None = None, **loose: Any) -> IntervalOptions:
    """The :class:`IntervalOptions` of a public call: ``options=`` when given, else the loose keywords (``ci``,
    ``method``, ``resamples``, ``seed``). Both at once is an error unless every loose keyword is at its default.

    >>> interval_options(ci=0.9, method="t") == IntervalOptions(0.9, "t")
    True
    >>> interval_options(IntervalOptions(ci=0.8), ci=0.95).ci  # a loose keyword at its default defers
    0.8
    """
    if options is None:
        return IntervalOptions(**loose)
    if not isinstance(options, IntervalOptions):
        raise TaukError(f"options must be a tauk.stats.IntervalOptions, got {type(options).__name__}")
    given = [k for k, v in loose.items() if k in _DEFAULTS and v != _DEFAULTS[k]]
    if given:
        raise TaukError(f"give the interval options once: options= or {', '.join(f'{k}=' for k in given)}, "
                        "not both")  # fmt: skip
    return options


def check_level(ci: Any) -> float:
    """``ci`` checked to be a level in (0, 1) (not None: where an interval is always given)."""
    if ci is None or isinstance(ci, bool) or not isinstance(ci, numbers.Real) or not (0.0 < ci < 1.0):
        raise TaukError(f"ci must be a level in (0, 1), e.g. {CI_LEVEL}; got {ci!r}")
    return ci


def check_infra(infra: Any) -> str:
    """``infra`` checked against :data:`INFRA_RULES`."""
    if infra not in INFRA_RULES:
        raise TaukError(f"infra must be 'drop' or 'fail', got {infra!r}")
    return infra


def check_test(test: Any) -> str:
    """``test`` checked against :data:`PAIRED_TESTS` (lower case)."""
    if not isinstance(test, str) or test.lower() not in PAIRED_TESTS:
        raise TaukError(f"test must be one of {PAIRED_TESTS}, got {test!r}")
    return test.lower()


_ADJUST_ALIASES = {"fdr_bh": "bh", "benjamini-hochberg": "bh", "": "none"}


def check_adjust(adjust: Any) -> str:
    """``adjust`` checked against :data:`ADJUSTMENTS` (lower case; ``"fdr_bh"``, ``"benjamini-hochberg"`` → ``"bh"``,
    ``""`` → ``"none"``)."""
    if isinstance(adjust, str):
        name = _ADJUST_ALIASES.get(adjust.lower(), adjust.lower())
        if name in ADJUSTMENTS:
            return name
    raise TaukError(f"adjust must be 'holm', 'bh' or 'none', got {adjust!r}")


def finite_or_none(x: Any) -> float | None:
    """``x`` as a float, or None when it is None, NaN or infinite (the JSON-ready value of a number).

    >>> finite_or_none(0.5), finite_or_none(float("nan")), finite_or_none(None)
    (0.5, None, None)
    """
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None

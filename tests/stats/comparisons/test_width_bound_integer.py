"""The 0/1 width floor of ``benchmarks/compare_width_bound_integer.py`` on tiny instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from .test_paired_tests import _benchmark_module


@pytest.fixture(scope="module")
def mods():
    return _benchmark_module("compare_width_bound_integer"), _benchmark_module("compare_width_bound")


def test_the_integer_programme_finds_the_least_acceptance_region(mods):
    integer, bound = mods
    T, step, nq, pp0, pm0 = 3, 0.25, 6, 0.1, 0.05
    g = integer.g_values(T, pp0, pm0, step, nq, True)
    a, b = bound.outcomes(T)
    p0 = bound.trinomial(T, a, b, [pp0], [pm0])[0]
    for dp, got in zip(np.arange(-1 + step, 1 - step / 2, step), g, strict=True):
        q = abs(dp) + (1 - abs(dp)) * np.linspace(0, 1, nq)
        P = bound.trinomial(T, a, b, (q + dp) / 2, (q - dp) / 2)
        best = min(p0 @ z for z in map(np.array, itertools.product((0, 1), repeat=a.size))
                   if np.all(P @ z >= bound.LEVEL - 1e-12))  # fmt: skip
        assert got == pytest.approx(best, abs=1e-7)


def test_non_randomised_regions_need_at_least_the_randomised_mass(mods):
    integer, _ = mods
    frac = integer.g_values(6, 0.06, 0.06, 0.05, 8, False)
    whole = integer.g_values(6, 0.06, 0.06, 0.05, 8, True)
    assert np.all(whole >= frac - 1e-9)
    assert whole.sum() > frac.sum() + 0.1  # the atoms of a 6-task benchmark make 0/1 regions costly

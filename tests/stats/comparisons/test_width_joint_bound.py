"""The joint width LP of ``benchmarks/compare_width_joint_bound.py`` on a tiny instance (T = 6, coarse grids)."""

from __future__ import annotations

import numpy as np
import pytest

from .test_paired_tests import _benchmark_module

T, STEP, NQ = 6, 0.05, 8


@pytest.fixture(scope="module")
def mods():
    return _benchmark_module("compare_width_joint_bound"), _benchmark_module("compare_width_bound")


def _cell(bound, pp, pm, delta):
    tw, _, _, tc = bound.widths(T, pp, pm, delta)
    return dict(k=1, pop="test", delta=delta, pp=pp, pm=pm, t_width=tw, t_cov=tc, target=True)


def test_joint_bound_is_feasible_and_above_every_single_cell_bound(mods):
    joint, bound = mods
    cells = [_cell(bound, 0.06, 0.06, 0.0), _cell(bound, 0.25, 0.25, 0.0), _cell(bound, 0.3, 0.1, 0.2)]
    res = joint.joint_lp(T, cells, STEP, NQ)
    single = [bound.lp_bound(T, c["pp"], c["pm"], STEP, NQ) / c["t_width"] for c in cells]
    # one procedure for all cells can do no better than the best procedure for the hardest cell alone
    assert res["z"] >= max(single) - 1e-6
    # the optimum is a procedure: coverage ≥ 94 % on the grid (exact sums) and every cell's width ≤ z* × t
    assert joint.coverage_of(T, res["acc"], res["grid"], NQ) >= 0.94 - 1e-6
    assert np.all(res["acc"] >= -1e-9) and np.all(res["acc"] <= 1 + 1e-9)
    widths = np.array([c["t_width"] for c in cells])
    assert np.all(res["cell_width"] <= res["z"] * widths + 1e-6)
    assert np.isclose(res["cell_width"] / widths, res["z"], atol=1e-6).any()  # some cell binds


def test_one_cell_joint_bound_is_the_single_cell_bound(mods):
    joint, bound = mods
    c = _cell(bound, 0.2, 0.1, 0.1)
    res = joint.joint_lp(T, [c], STEP, NQ)
    assert res["z"] * c["t_width"] == pytest.approx(bound.lp_bound(T, c["pp"], c["pm"], STEP, NQ), abs=1e-6)


def test_weak_form_over_intervals(mods):
    joint, bound = mods
    # one δ only: the point interval {δ} covers always, at length 0
    same = [_cell(bound, 0.1, 0.1, 0.0), _cell(bound, 0.3, 0.3, 0.0)]
    assert joint.weak_lp(T, same)["z"] == pytest.approx(0.0, abs=1e-9)
    # δ ∈ {−0.1, 0, 0.1} cannot be told apart from 6 tasks: intervals must span some of the gap, z* > 0
    spread = [_cell(bound, 0.2, 0.2, 0.0), _cell(bound, 0.25, 0.15, 0.1), _cell(bound, 0.15, 0.25, -0.1)]
    z = joint.weak_lp(T, spread)["z"]
    assert z > 0.0
    # and no more than the t's own ratio bound: widths over runs are ≤ the 0.2 span, so z* ≤ 0.2 / min t width
    assert z <= 0.2 / min(c["t_width"] for c in spread) + 1e-9


def test_interval_restriction_only_raises_the_bound_and_yields_interval_mixtures(mods):
    joint, bound = mods
    cells = [_cell(bound, 0.06, 0.06, 0.0), _cell(bound, 0.3, 0.1, 0.2)]
    free = joint.joint_lp(T, cells, STEP, NQ)
    res = joint.joint_lp(T, cells, STEP, NQ, intervals=True)
    assert res["z"] >= free["z"] - 1e-7
    assert joint.coverage_of(T, res["acc"], res["grid"], NQ) >= 0.94 - 1e-6
    # a mixture of intervals: per outcome the upward jumps of a[·, o] sum to ≤ 1
    ups = np.clip(np.diff(np.vstack([np.zeros(res["acc"].shape[1]), res["acc"]]), axis=0), 0, None).sum(axis=0)
    assert np.all(ups <= 1 + 1e-6)

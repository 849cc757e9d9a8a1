"""The machinery of ``benchmarks/width_target_bound.py`` (issue 23, 5(b)): the level a cell needs for 94 % coverage
(L_min), the largest level whose width stays ≤ 1.05× the exactly-95 % one (L_max), their Monte-Carlo bounds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats


def _bench():
    path = Path(__file__).resolve().parents[3] / "benchmarks" / "width_target_bound.py"
    spec = importlib.util.spec_from_file_location("_bench_width_target_bound", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


B = _bench()


def test_order_statistics_and_the_exact_quantile_bound():
    rng = np.random.default_rng(0)
    d = rng.random(1000)
    ones = np.ones((1, d.size))
    srt = np.sort(d)
    assert B.order_stat(srt, ones, 0.94)[0] == srt[939]  # the ⌈0.94 R⌉-th smallest: coverage ≥ 94 % from there
    assert np.mean(d <= srt[939]) >= 0.94 > np.mean(d < srt[939])
    # the distribution-free bound: P(d_(r) ≤ ξ) = P(Bin(R, q) ≥ r) ≥ conf, and r is the largest such order
    lo = B.exact_quantile_lower(d, 0.94, 0.975)
    r = int(np.searchsorted(srt, lo)) + 1
    assert stats.binom.sf(r - 1, d.size, 0.94) >= 0.975 > stats.binom.sf(r, d.size, 0.94)
    # its coverage, by simulation: the bound is below the true 94 % quantile (0.94 for uniform d) ≥ 97.5 % of the time
    hits = [B.exact_quantile_lower(rng.random(400), 0.94, 0.975) <= 0.94 for _ in range(400)]
    assert np.mean(hits) >= 0.95


def test_levels_from_widths_that_grow_like_a_normal_quantile():
    """Widths ∝ Φ⁻¹((1 + L)/2): L_max solves z(L_max) = 1.05 z(L*), and the ratio at 95 % is z(0.95)/z(L*)."""
    z = lambda L: special.ndtri((1 + np.asarray(L)) / 2)  # noqa: E731
    R = 2000
    rng = np.random.default_rng(1)
    d = np.abs(rng.standard_normal(R)) / 2.2  # P(d ≤ L) < Φ-level: an over-wide posterior would cover more
    d = np.minimum(d, 0.999)
    w = np.tile(z(B.LEVELS), (R, 1)) * rng.uniform(0.5, 1.5, (R, 1))
    s = B.cell_stats(d, w, np.ones((1, R)))
    lstar = s["lstar"][0]
    assert np.mean(d <= lstar) >= 0.95 and np.mean(d <= s["lmin"][0]) >= 0.94
    assert s["lmin"][0] <= lstar <= s["lmax"][0]
    assert s["ratio"][0] == pytest.approx(z(0.95) / z(lstar), rel=2e-3)
    assert z(s["lmax"][0]) == pytest.approx(1.05 * z(lstar), rel=2e-3)


def test_a_real_cell_is_consistent():
    """A small real cell: coverage at L* is 95 %, the width ratio at L* itself is 1, L_min ≤ L* ≤ L_max, and the
    bootstrap rounds spread around the sample's values."""
    pop = next(p for p in B.C.POPULATIONS if p.name == "B(2,2)")
    data = B.cell_data(pop, 10, 4, 300, seed=3)
    rng = np.random.default_rng(2)
    for d, w in data.values():
        s = B.cell_stats(d, w, B.boot_counts(rng, d.size, 50))
        assert np.mean(d <= s["lstar"][0]) >= 0.95 > np.mean(d < s["lstar"][0])
        assert s["lmin"][0] <= s["lstar"][0] <= s["lmax"][0]
        assert np.all(np.diff(w, axis=1) >= -1e-12)  # widths grow with the level
        assert 0.0 < np.std(s["ratio"][1:]) < 0.2

"""The re-measurement of the width misses (``benchmarks/compare_width_cells_check.py``): its verdicts and cells."""

from __future__ import annotations

import pytest

from .test_paired_tests import _benchmark_module


@pytest.fixture(scope="module")
def check():
    return _benchmark_module("compare_width_cells_check")


@pytest.mark.parametrize(
    ("t_cov", "t_se", "ratio", "r_se", "expected"),
    [
        (95.0, 0.15, 1.20, 0.003, "target, missed"),
        (95.0, 0.15, 1.05, 0.003, "target, met"),
        (93.5, 0.15, 1.20, 0.003, "no target"),  # the t covers under 94 % by more than 2 SE: no width target
        (93.8, 0.15, 1.20, 0.003, "undecided"),  # within 2 SE of 94 %
        (95.0, 0.15, 1.104, 0.003, "undecided"),  # within 2 SE of 1.10
        (93.8, 0.15, 1.05, 0.003, "target, met"),  # met whether or not the target applies
    ],
)
def test_verdicts(check, t_cov, t_se, ratio, r_se, expected):
    assert check.verdict(t_cov, t_se, ratio, r_se) == expected


def test_cells_are_the_non_ternary_misses_and_near_misses(check, tmp_path):
    row = "{:3d} {:2d} {:2d} {:11} {:+.2f}   4.6  1000 |      96.8  {:.3f}   4.4 |   {:.1f}  {:.3f}   0.2   4.8 |    1.09  0.00/ 0.00"
    lines = [
        row.format(10, 4, 1, "u-shaped", 0.0, 0.380, 97.6, 0.288),  # a miss: 1.32 where the t covers 97.6 %
        row.format(10, 4, 1, "taubench", 0.0, 0.370, 95.5, 0.367),  # ratio 1.008: far from every threshold
        row.format(10, 4, 1, "sparse", 0.07, 0.522, 93.5, 0.479),  # ratio 1.090 and the t 0.5 under 94 %: near
        row.format(10, 4, 4, "u-shaped", 0.0, 0.567, 99.7, 0.420),  # ternary: exact already, never re-measured
        row.format(20, 8, 4, "taubench", 0.07, 0.260, 92.0, 0.230),  # the t 2 points under 94 %: no target
    ]
    path = tmp_path / "results.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = [c[:5] for c in check.cells_to_check(path)]
    assert got == [(10, 4, 1, "u-shaped", 0.0), (10, 4, 1, "sparse", 0.07)]


def test_one_cell_is_measured_with_both_intervals(check):
    cell = (10, 4, 1, "taubench", 0.0, 95.5, 1.10)
    key, cov, w = check.measure((cell, 30, 7))
    assert key == cell and w.shape == (30, 2) and (w > 0).all()
    assert 0 < cov[0] <= 1 and 0 < cov[1] <= 1

"""tauk.stats._special (the summary's special functions without SciPy) against SciPy, to 1e-12 relative where
SciPy itself is accurate, and against mpmath where it is not (Student's t with 4 df near the median)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tauk.stats import _special as S

special = pytest.importorskip("scipy.special")
stats = pytest.importorskip("scipy.stats")
RTOL = 1e-12


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


@pytest.mark.parametrize("nu", [1, 2, 3, 4, 5, 7, 10, 29, 100, 200])
def test_t_ppf_matches_scipy(nu):
    rng = np.random.default_rng(nu)
    p = np.concatenate([rng.uniform(0, 1, 1500), [1e-15, 1e-10, 1e-6, 1e-3, 0.025, 0.975, 1 - 1e-12, 1 - 5e-16]])
    p = p[np.abs(p - 0.5) > 0.01]  # near the median SciPy's closed forms (df 2, 4) lose digits: below
    assert _rel(S.t_ppf(p, nu), special.stdtrit(nu, p)) < RTOL
    assert _rel(S.t_ppf(p, nu), stats.t.ppf(p, nu)) < RTOL


def test_t_ppf_near_the_median_against_mpmath():
    import mpmath as mp  # in the dev extra: a reference where SciPy itself loses digits
    mp.mp.dps = 40
    for nu in (1, 3, 4):
        for p in (0.49900931, 0.50002213, 0.5 + 1e-9):
            def cdf(t, nu=nu):
                x = mp.mpf(nu) / (nu + t * t)
                tail = mp.betainc(mp.mpf(nu) / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2
                return 1 - tail if t > 0 else tail
            exact = float(mp.findroot(lambda t, p=p: cdf(t) - mp.mpf(p), mp.mpf(float(special.stdtrit(nu, p)))))
            assert abs(float(S.t_ppf(p, nu)) - exact) <= RTOL * abs(exact)


def test_t_ppf_edges_and_fallbacks():
    assert S.t_ppf(np.array([0.0, 0.5, 1.0]), 4).tolist() == [-math.inf, 0.0, math.inf]
    assert math.isnan(S.t_ppf(1.5, 4))
    assert S.t_ppf(0.975, math.inf) == pytest.approx(1.959963984540054, rel=1e-15)
    for nu in (0.5, 500.0, 3.7):  # SciPy's below 1 and above T_DF_MAX; fractional df ours
        assert _rel(S.t_ppf(np.array([0.01, 0.8, 0.999]), nu), special.stdtrit(nu, [0.01, 0.8, 0.999])) < RTOL


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 20, 101])
def test_chi2_sf_matches_scipy(df):
    x = np.concatenate([np.random.default_rng(df).exponential(2 * df, 300), [1e-8, 1e-3, 50.0, 200.0, 700.0]])
    ours = np.array([S.chi2_sf(v, df) for v in x])
    assert _rel(ours, stats.chi2.sf(x, df)) < RTOL
    assert S.chi2_sf(0.0, df) == 1.0 and S.chi2_sf(math.inf, df) == 0.0
    assert S.chi2_sf(3.0, 2.5) == pytest.approx(float(stats.chi2.sf(3.0, 2.5)), rel=1e-15)  # SciPy's


def test_gammaln_betaln_expit_ndtri_comb():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.01, 3000, 5000), rng.uniform(0.01, 3000, 5000)
    # lgamma is accurate to its last digits of |lgamma(x)|: compare on that scale (both are near 0 at 1 and 2)
    scale = np.maximum(1.0, np.abs(special.gammaln(a)))
    assert np.max(np.abs(S.gammaln(a) - special.gammaln(a)) / scale) < RTOL
    scale = np.maximum(1.0, np.abs(special.gammaln(a + b)))
    assert np.max(np.abs(S.betaln(a, b) - special.betaln(a, b)) / scale) < RTOL
    assert S.gammaln(0.0) == math.inf and S.gammaln(-2.0) == math.inf
    u = rng.normal(0, 20, 5000)
    assert _rel(S.expit(u), special.expit(u)) < RTOL
    p = np.concatenate([rng.uniform(0, 1, 2000), [1e-300, 1e-15, 1 - 1e-16]])
    assert _rel(S.ndtri(p), special.ndtri(p)) < RTOL
    assert S.ndtri(0.0) == -math.inf and S.ndtri(1.0) == math.inf
    n = rng.integers(-2, 60, 500)
    for k in range(12):  # exact (SciPy's product formula is off by an ulp here and there)
        assert np.array_equal(S.comb(n, k), [float(math.comb(int(v), k)) if v >= 0 else 0.0 for v in n])
        assert _rel(S.comb(n, k), special.comb(n, k)) < 1e-15
    assert float(S.comb(5, 2)) == 10.0


def test_beta_binomial_pmf_against_the_betaln_form():
    from tauk.stats.intervals.model_check import _beta_binomial_logpmf

    rng = np.random.default_rng(1)
    a, b = np.exp(rng.uniform(-3, 5, (2, 50))), np.exp(rng.uniform(-3, 5, (2, 50)))
    for nv in (1, 3, 4, 10, 30):
        cs = np.arange(nv + 1)
        ref = (special.gammaln(nv + 1) - special.gammaln(cs + 1) - special.gammaln(nv - cs + 1)
               + special.betaln(a[..., None] + cs, b[..., None] + nv - cs) - special.betaln(a, b)[..., None])
        assert np.max(np.abs(np.exp(_beta_binomial_logpmf(nv, a, b)) - np.exp(ref))) < 1e-11
        assert np.allclose(np.exp(_beta_binomial_logpmf(nv, a, b)).sum(-1), 1.0, rtol=1e-13)


def test_summary_imports_no_scipy():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("import sys, tauk; from tauk.stats import summarize; summarize(tauk.load('data')); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         env={**__import__('os').environ, "PYTHONPATH": str(root)}, check=True)
    assert out.stdout.strip() == "[]", out.stdout

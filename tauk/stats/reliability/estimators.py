"""Array kernels of the reliability profile: per-task estimators whose expectation does not depend on the number
of trials K, and the task-level interval.

* :func:`outcome_u` — the unbiased U-statistic of (2p − 1)²: 1 − 4c(K − c)/(K(K − 1)) (E = (2p − 1)² exactly for
  c ~ Binomial(K, p), K ≥ 2); :func:`outcome_plugin` — HAL's plug-in (2ĉ/K − 1)², whose expectation is
  (2p − 1)² + 4p(1 − p)/K.
* :func:`cv_unbiased_sd` — a task's coefficient of variation s·/c4(K) / mean (the SD corrected by c4(K), unbiased
  for σ under normal variation).
* :func:`pairwise_jsd` — Jensen–Shannon divergence (base 2, in [0, 1]) between two trials' tool-name distributions;
  :func:`edit_similarity` — 1 − Levenshtein(a, b) / max(|a|, |b|) of two tool-call sequences, vectorised over pairs.
  Averaged over the *pairs* of a task's trials (a U-statistic), neither depends on how many trials there are.
* :func:`t_interval` — mean ± t(T − 1)·sd/√T over the tasks' values (tasks are the sampling unit);
  :func:`skew_t_interval` — the same shifted by Johnson's (1978) skewness correction m₃/(6s²T) (outcome consistency:
  the per-task U values are skewed, and the plain t interval covered 93.5 % at T = 20, K = 8);
  :func:`wilson_outcome_interval` — outcome consistency with 2 trials a task (U_t = ±1).
* :func:`subsample_prediction_interval` — where the estimate from a random k of each task's n trials falls, given
  the n-trial data (E[U_k | c] = U_n exactly; the variance from the hypergeometric draw).
"""

from __future__ import annotations

import numpy as np

from tauk._lazy import lazy

special = lazy("scipy.special")
sstats = lazy("scipy.stats")


__all__ = ["outcome_u", "outcome_plugin", "cv_unbiased_sd", "c4", "edit_similarity", "edit_similarity_padded",
           "skew_t_interval", "subsample_prediction_interval", "t_interval", "wilson_outcome_interval"]


def outcome_u(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Unbiased estimate of (2p − 1)² from c successes in n ≥ 2 trials (NaN where n < 2).

    >>> outcome_u(np.array([4, 4, 2, 1]), np.array([4, 2, 1, 1])).round(4).tolist()
    [1.0, -0.3333, -1.0, nan]
    """
    n = np.asarray(n, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n >= 2, 1.0 - 4.0 * c * (n - c) / (n * (n - 1.0)), np.nan)


def outcome_plugin(n: np.ndarray, c: np.ndarray) -> np.ndarray:
    """HAL's plug-in (2c/n − 1)² (biased upwards by 4p(1 − p)/n).

    >>> outcome_plugin(np.array([4, 2]), np.array([2, 2])).tolist()
    [0.0, 1.0]
    """
    n = np.asarray(n, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n >= 1, (2.0 * c / n - 1.0) ** 2, np.nan)


def c4(n: np.ndarray) -> np.ndarray:
    """E[s]/σ for n normal draws: √(2/(n − 1))·Γ(n/2)/Γ((n − 1)/2) (NaN where n < 2).

    >>> c4(np.array([2, 4, 8])).round(4).tolist()
    [0.7979, 0.9213, 0.965]
    """
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= 2, np.sqrt(2.0 / (n - 1.0)) * np.exp(special.gammaln(n / 2) - special.gammaln((n - 1) / 2)),
                        np.nan)  # fmt: skip


def cv_unbiased_sd(n: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """A task's coefficient of variation (s/c4(n))/mean from its trials' count, mean and sample SD (ddof 1); NaN
    where n < 2 or the mean is not positive.

    >>> cv_unbiased_sd(np.array([2, 8]), np.array([1.0, 1.0]), np.array([0.1, 0.1])).round(4).tolist()
    [0.1253, 0.1036]
    """
    n = np.asarray(n, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n >= 2) & (mean > 0), sd / c4(n) / mean, np.nan)


def edit_similarity(a: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
    """1 − Levenshtein(a_i, b_i)/max(|a_i|, |b_i|) for each pair of integer sequences (1 where both are empty).

    >>> edit_similarity([np.array([1, 2, 3]), np.array([], dtype=int)], [np.array([1, 3]), np.array([], dtype=int)])
    array([0.66666667, 1.        ])
    """
    la = np.fromiter((len(x) for x in a), dtype=np.int64, count=len(a))
    lb = np.fromiter((len(x) for x in b), dtype=np.int64, count=len(b))
    width = int(max(la.max(initial=0), lb.max(initial=0), 1))
    pa = np.full((len(a), width), -1, dtype=np.int64)
    pb = np.full((len(b), width), -2, dtype=np.int64)
    for r, x in enumerate(a):
        pa[r, : len(x)] = x
    for r, x in enumerate(b):
        pb[r, : len(x)] = x
    return edit_similarity_padded(pa, la, pb, lb)


def edit_similarity_padded(pa: np.ndarray, la: np.ndarray, pb: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """:func:`edit_similarity` of sequences given as rows of two padded integer matrices and their lengths (the
    padding of ``pa`` and ``pb`` must differ from each other and from every symbol).

    Dynamic programming vectorised over the pairs: pairs are sorted by length and done in chunks, each cut to its
    own longest sequences (O(L_a·L_b) array operations a chunk, each over the chunk's pairs)."""
    m = la.size
    out = np.ones(m, dtype=np.float64)
    if m == 0:
        return out
    order = np.lexsort((lb, la))
    chunk = 1 << 16
    for start in range(0, m, chunk):
        idx = order[start:start + chunk]
        na, nb = la[idx], lb[idx]
        A, B = int(na.max()), int(nb.max())
        if A == 0 or B == 0:
            d = np.maximum(na, nb).astype(np.float64)
        else:
            xa, xb = pa[idx, :A], pb[idx, :B]
            prev = np.broadcast_to(np.arange(B + 1, dtype=np.int32), (idx.size, B + 1)).copy()
            dist = np.where(na == 0, nb, 0).astype(np.int64)
            for i in range(1, A + 1):
                cur = np.empty_like(prev)
                cur[:, 0] = i
                cost = (xa[:, i - 1 : i] != xb).astype(np.int32)
                diag = prev[:, :-1] + cost
                up = prev[:, 1:] + 1
                best = np.minimum(diag, up)
                for j in range(1, B + 1):
                    cur[:, j] = np.minimum(best[:, j - 1], cur[:, j - 1] + 1)
                done = na == i
                if done.any():
                    dist[done] = cur[done, nb[done]]
                prev = cur
            d = dist.astype(np.float64)
        denom = np.maximum(na, nb).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[idx] = np.where(denom > 0, 1.0 - d / denom, 1.0)
    return out


def t_interval(values: np.ndarray, level: float) -> tuple[float, float, float, float, int]:
    """``(mean, se, low, high, T)`` of the finite ``values`` (one per task): mean ± t_{T−1}·sd/√T; the interval is
    NaN with fewer than 2 values, and the point when every value is equal.

    >>> [round(x, 4) for x in t_interval(np.array([0.0, 1.0, 1.0, 1.0]), 0.95)[:4]]
    [0.75, 0.25, -0.0456, 1.5456]
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    T = v.size
    if T == 0:
        return (np.nan, np.nan, np.nan, np.nan, 0)
    mean = float(v.mean())
    if T < 2:
        return (mean, np.nan, np.nan, np.nan, T)
    se = float(v.std(ddof=1) / np.sqrt(T))
    q = float(sstats.t.ppf(0.5 + level / 2, T - 1))
    return (mean, se, mean - q * se, mean + q * se, T)


def skew_t_interval(values: np.ndarray, level: float) -> tuple[float, float, float, float, int]:
    """``(mean, se, low, high, T)``: :func:`t_interval` shifted by Johnson's (1978) correction for skewness,
    m₃/(6·s²·T) (m₃ the third central sample moment, s² the sample variance), which removes the first-order effect of
    skewed task values on the coverage; the same as :func:`t_interval` for symmetric values.

    >>> [round(x, 4) for x in skew_t_interval(np.array([0.0, 0.0, 0.0, 1.0]), 0.95)]
    [0.25, 0.25, -0.53, 1.0612, 4]
    """
    mean, se, lo, hi, T = t_interval(values, level)
    if T < 2 or not se > 0:
        return (mean, se, lo, hi, T)
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    d = v - mean
    shift = float(np.mean(d**3) / (6.0 * np.var(v, ddof=1) * T))
    return (mean, se, lo + shift, hi + shift, T)


def subsample_prediction_interval(n: np.ndarray, c: np.ndarray, k: int, level: float
                                  ) -> tuple[float, float, float, float]:  # fmt: skip
    """``(centre, sd, low, high)``: where the outcome consistency of a random ``k`` of each task's trials would
    fall, given the data (task t: c_t successes in n_t ≥ k trials; tasks with n_t < 2 dropped).

    A subsample's count is hypergeometric, c′ ~ H(n_t, c_t, k), and the U-statistic of the k-subset averages the
    same pair kernel over fewer pairs, so E[U_k | c_t] = U_n(c_t) exactly: the centre is the n-trial estimate, the
    spread the sum over tasks of Var(U_k | c_t) (for k = 2, 1 − U_n(c_t)²), and the interval centre ± z·sd (a sum
    of independent bounded terms). This — not the n-trial *confidence* interval, which is about the population
    value — is what "a K = 2 run's estimate agrees with the K = 8 run's" can be checked against.

    >>> [round(x, 4) for x in subsample_prediction_interval(np.array([8, 8, 8]), np.array([8, 4, 1]), 2, 0.95)]
    [0.4524, 0.4384, -0.4068, 1.3116]
    """
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    keep = n >= max(k, 2)
    n, c = n[keep], c[keep]
    T = n.size
    if T == 0 or k < 2:
        return (np.nan, np.nan, np.nan, np.nan)
    cs = np.arange(k + 1)
    pmf = sstats.hypergeom.pmf(cs[None, :], n[:, None], c[:, None], k)
    uk = 1.0 - 4.0 * cs * (k - cs) / (k * (k - 1.0))
    mean_t = pmf @ uk
    var_t = np.maximum(pmf @ uk**2 - mean_t**2, 0.0)
    centre = float(mean_t.mean())
    sd = float(np.sqrt(var_t.sum()) / T)
    z = float(sstats.norm.ppf(0.5 + level / 2))
    return (centre, sd, centre - z * sd, centre + z * sd)


def wilson_outcome_interval(u: np.ndarray, level: float) -> tuple[float, float, float, float, int]:
    """``(mean, se, low, high, T)`` of outcome consistency when every task has exactly 2 trials: then U_t is −1 (the
    two trials disagree) or 1, so the mean is 1 − 2d/T with d ~ Binomial(T, P(disagree)) over a draw of tasks, and
    the Wilson interval of d/T is mapped through it (the t interval covered 88–93 % at T = 20 there).

    >>> [round(x, 4) for x in wilson_outcome_interval(np.array([1.0, 1.0, -1.0, 1.0]), 0.95)]
    [0.5, 0.5, -0.3987, 0.9088, 4]
    """
    v = np.asarray(u, dtype=np.float64)
    v = v[np.isfinite(v)]
    T = v.size
    if T == 0:
        return (np.nan, np.nan, np.nan, np.nan, 0)
    d = float(np.sum(v < 0))
    q = d / T
    z = float(sstats.norm.ppf(0.5 + level / 2))
    centre = (q + z * z / (2 * T)) / (1 + z * z / T)
    half = z * np.sqrt(q * (1 - q) / T + z * z / (4 * T * T)) / (1 + z * z / T)
    lo_q = 0.0 if d <= 0 else max(0.0, centre - half)  # the ends at d = 0 / d = T exactly (not 1e-17 off)
    hi_q = 1.0 if d >= T else min(1.0, centre + half)
    se = float(v.std(ddof=1) / np.sqrt(T)) if T > 1 else np.nan
    return (1 - 2 * q, se, float(1 - 2 * hi_q), float(1 - 2 * lo_q), T)

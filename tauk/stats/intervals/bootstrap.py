"""The task bootstrap (BCa, percentile, bootstrap-t) and the t interval: one seeded matrix of resampled task counts
serves every statistic.

The resampling unit is the task (docs/spec.md §4). The matrix is drawn over the distinct per-task rows when they are few
(an exact reformulation, see :func:`bootstrap_means`), else over tasks. Resampling *trials* within tasks is deliberately not offered: it centres
pass^k on (c/n)^k instead of the unbiased Û_k (biased upward for k > 1), and a two-stage (tasks, then trials)
bootstrap counts the trial noise twice.

Memory: the (B × T) matrix of counts is never held whole. Rows are drawn in chunks whose size depends on T only
(so a seed gives the same numbers whatever the machine), as int32 counts, and multiplied straight into the
(T × K) matrix of per-task statistics.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np

from tauk._lazy import lazy
from tauk.errors import TaukError

from ..options import CI_METHODS, IntervalOptions

special = lazy("scipy.special")
stats = lazy("scipy.stats")

__all__ = [
    "BOOTSTRAP_METHODS",
    "chunk_rows",
    "iter_counts",
    "bootstrap_means",
    "bca_interval",
    "percentile_interval",
    "t_interval",
    "interval",
    "bootstrap_t_interval",
    "column_stats",
]

BOOTSTRAP_METHODS: tuple[str, ...] = tuple(m for m in CI_METHODS if m != "model")
"""The task-bootstrap and t methods (every ``method=`` but the model): ``bca``, ``percentile``, ``t``,
``bootstrap-t``."""
_CHUNK_ELEMENTS = 1 << 22  # ~4M cells per chunk: 16 MB of int32 counts, 32 MB of int64 indices


def chunk_rows(T: int, B: int) -> int:
    return max(1, min(B, _CHUNK_ELEMENTS // max(T, 1)))


def iter_counts(T: int, B: int, seed: int | np.random.Generator | None, progress: bool | None = None) -> Iterator[np.ndarray]:
    """Yield int32 count matrices (rows = bootstrap replicates, columns = tasks) totalling B rows.

    Row b of the full matrix is the multiplicity of each task in replicate b (T draws with replacement).
    Deterministic for a given (seed, T, B).
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    step = chunk_rows(T, B)
    starts = range(0, B, step)
    if progress is None:
        progress = B * T > 50_000_000
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, total=-(-B // step), desc="bootstrap", unit="chunk", leave=False)
    for start in starts:
        b = min(step, B - start)
        idx = rng.integers(0, T, size=(b, T), dtype=np.int32)
        idx += (np.arange(b, dtype=np.int32) * T)[:, None]  # b·T ≤ 2^22: fits int32
        yield np.bincount(idx.ravel(), minlength=b * T).astype(np.int32, copy=False).reshape(b, T)


def canonical_rows(U: np.ndarray) -> np.ndarray:
    """The rows of U (T × K) in one canonical order (sorted, NaN last): tasks are exchangeable, so a seeded
    bootstrap drawn over these rows — and every statistic computed beside it — does not depend on their ids."""
    return U[np.lexsort(np.where(np.isnan(U), np.inf, U).T[::-1])]


def _categories(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of U (NaN-aware) and how many tasks share each."""
    key = np.where(np.isnan(U), np.inf, U)  # U never holds ±inf, so inf marks "undefined"
    uniq, counts = np.unique(key, axis=0, return_counts=True)
    uniq[np.isinf(uniq)] = np.nan
    return uniq, counts


def iter_category_counts(
    counts: np.ndarray, B: int, seed: int | np.random.Generator | None
) -> Iterator[np.ndarray]:
    """Yield (rows × categories) counts: each row is Multinomial(T, m_c / T), m_c tasks in category c."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    T = int(counts.sum())
    pvals = counts / T
    step = chunk_rows(counts.size, B)
    for start in range(0, B, step):
        b = min(step, B - start)
        yield rng.multinomial(T, pvals, size=b)


def bootstrap_means(
    U: np.ndarray,
    B: int,
    seed: int | np.random.Generator | None = 0,
    progress: bool | None = None,
    extra: list | None = None,
    collapse: bool | None = None,
) -> np.ndarray:
    """Bootstrap replicates of the column means of U (T × K) → (B × K), from one resample matrix.

    Resampling T tasks with replacement only matters through how many copies of each *distinct* row of U are drawn,
    and those multiplicities are Multinomial(T, m_c/T) over the C distinct rows. When C ≤ T/2 (``collapse=None``)
    the matrix is drawn at that level — (B × C) counts, exactly the same bootstrap distribution, far cheaper (pass^k
    with n trials has at most n+1 distinct per-task rows). Otherwise (or ``collapse=False``) a (B × T) matrix of
    task counts is drawn in int32 chunks.

    NaN entries (a task that cannot enter a statistic, e.g. n < k) are left out by weighting: the replicate mean of
    column j is Σ_t w_bt U_tj / Σ_t w_bt over the tasks where U_tj is defined, so one matrix still serves all columns.
    ``extra``: a list of callables fn(w, U0, M) (w: counts chunk, U0: the rows with NaN as 0, M: definedness as
    0/1) evaluated on every chunk; on return the list holds their concatenated results.
    """
    U = np.asarray(U, dtype=np.float64)
    if U.ndim == 1:
        U = U[:, None]
    T, K = U.shape
    if collapse is None or collapse:
        cats, mult = _categories(U)
        use_cats = bool(collapse) or cats.shape[0] <= T // 2
    else:
        use_cats = False
    # tasks are exchangeable: the seeded draw must not depend on their order (their ids), so the task-level matrix
    # is drawn over the rows in one canonical (sorted) order, as the categories are
    rows = cats if use_cats else canonical_rows(U)
    mask = np.isfinite(rows)
    full = bool(mask.all())
    U0 = np.where(mask, rows, 0.0)
    M = mask.astype(np.float64)
    out = np.empty((B, K), dtype=np.float64)
    pos = 0
    fns = list(extra) if extra else []
    results: list = [[] for _ in fns]
    chunks = iter_category_counts(mult, B, seed) if use_cats else iter_counts(T, B, seed, progress)
    for counts in chunks:
        w = counts.astype(np.float64)
        s = w @ U0
        if full:
            s /= T
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                s /= w @ M
        out[pos : pos + s.shape[0]] = s
        pos += s.shape[0]
        for i, fn in enumerate(fns):
            results[i].append(fn(w, U0, M))
    if extra is not None:
        extra.clear()
        extra.extend(np.concatenate(r, axis=0) for r in results)
    return out


def _percentile_of_score(boot: np.ndarray, theta: np.ndarray) -> np.ndarray:
    # mid-rank, exactly as scipy.stats.bootstrap does for z0
    B = np.sum(np.isfinite(boot), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((boot < theta).sum(axis=0) + (boot <= theta).sum(axis=0)) / (2 * B)


def _nanpercentile_cols(boot: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Column-wise percentile (linear interpolation) at a per-column probability q (in [0, 1])."""
    out = np.full(boot.shape[1], np.nan)
    for j in range(boot.shape[1]):
        col = boot[:, j]
        col = col[np.isfinite(col)]
        if col.size and np.isfinite(q[j]):
            out[j] = np.percentile(col, 100.0 * q[j])
    return out


def bca_interval(
    theta: np.ndarray, boot: np.ndarray, U: np.ndarray, ci: float
) -> tuple[np.ndarray, np.ndarray]:
    """BCa endpoints per column. The acceleration is the jackknife one for a mean, in closed form:
    a = Σ(U_t − Ū)³ / (6 [Σ(U_t − Ū)²]^{3/2}) over the tasks where the column is defined."""
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    U = np.asarray(U, dtype=np.float64)
    if U.ndim == 1:
        U = U[:, None]
    tail = (1.0 - ci) / 2.0
    K = theta.size
    a = np.zeros(K)
    for j in range(K):
        u = U[:, j][np.isfinite(U[:, j])]
        dev = u - u.mean() if u.size else u
        s2 = np.sum(dev**2)
        a[j] = np.sum(dev**3) / (6.0 * s2**1.5) if s2 > 0 else 0.0
    z0 = special.ndtri(_percentile_of_score(boot, theta))
    za = special.ndtri(np.array([tail, 1.0 - tail]))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        q = special.ndtr(z0 + (z0 + za) / (1.0 - a * (z0 + za)))
    lo = _nanpercentile_cols(boot, q[0])
    hi = _nanpercentile_cols(boot, q[1])
    return _degenerate(theta, boot, lo, hi)


def _degenerate(theta, boot, lo, hi):
    # a constant bootstrap distribution (every task the same) gives the point as its own interval
    finite = np.where(np.isfinite(boot), boot, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        const = np.nanmax(finite, axis=0) == np.nanmin(finite, axis=0) if boot.size else np.zeros(theta.size, bool)
    lo = np.where(const & np.isfinite(theta), theta, lo)
    hi = np.where(const & np.isfinite(theta), theta, hi)
    return lo, hi


def percentile_interval(theta: np.ndarray, boot: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    tail = (1.0 - ci) / 2.0
    K = theta.size
    lo = _nanpercentile_cols(boot, np.full(K, tail))
    hi = _nanpercentile_cols(boot, np.full(K, 1.0 - tail))
    return _degenerate(theta, boot, lo, hi)


def t_interval(theta: np.ndarray, se: np.ndarray, T: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """θ̂ ± t_{T−1, 1−α/2} · se (the small-T alternative of docs/spec.md §4)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    se = np.atleast_1d(np.asarray(se, dtype=np.float64))
    T = np.atleast_1d(np.asarray(T, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        q = np.where(T > 1, stats.t.ppf(0.5 + ci / 2.0, np.maximum(T - 1, 1)), np.nan)
    return theta - q * se, theta + q * se


def column_stats(U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: mean, task-clustered SE sd_t/√T (ddof 1), and T (tasks where defined)."""
    U = np.asarray(U, dtype=np.float64)
    if U.ndim == 1:
        U = U[:, None]
    mask = np.isfinite(U)
    T = mask.sum(axis=0)
    U0 = np.where(mask, U, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = U0.sum(axis=0) / T
        dev = np.where(mask, U - mean, 0.0)
        var = (dev**2).sum(axis=0) / (T - 1)
        se = np.sqrt(var / T)
    mean = np.where(T > 0, mean, np.nan)
    se = np.where(T > 1, se, np.nan)
    return mean, se, T


def interval(
    U: np.ndarray,
    options: IntervalOptions,
    progress: bool | None = None,
    boot: np.ndarray | None = None,
    collapse: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval for every column mean of U at ``options.ci`` by ``options.method`` (one of
    :data:`BOOTSTRAP_METHODS`; one resample matrix of ``options.resamples``, seeded by ``options.seed``, for all
    columns)."""
    method = options.method
    if method not in BOOTSTRAP_METHODS:
        raise TaukError(f"method must be one of {BOOTSTRAP_METHODS}, got {method!r}")
    U = np.asarray(U, dtype=np.float64)
    U = canonical_rows(U[:, None] if U.ndim == 1 else U)  # the same sums (ties with θ̂ in BCa's z0) in any order
    theta, se, T = column_stats(U)
    if method == "t":
        return t_interval(theta, se, T, options.ci)
    if method == "bootstrap-t":
        return bootstrap_t_interval(U, options, progress, collapse)
    if boot is None:
        boot = bootstrap_means(U, options.resamples, options.seed, progress, collapse=collapse)
    if method == "percentile":
        lo, hi = percentile_interval(theta, boot, options.ci)
    else:
        lo, hi = bca_interval(theta, boot, U, options.ci)
    small = T < 2
    return np.where(small, np.nan, lo), np.where(small, np.nan, hi)


def bootstrap_t_interval(U: np.ndarray, options: IntervalOptions, progress=None, collapse=None):
    """Studentised (bootstrap-t) interval: θ̂ − q_{1−α/2}·se, θ̂ − q_{α/2}·se with q the quantiles of
    (θ* − θ̂)/se*, se* the replicate's own task-clustered SE; same resample matrix as the other methods."""
    U = np.asarray(U, dtype=np.float64)
    if U.ndim == 1:
        U = U[:, None]
    theta, se, T = column_stats(U)

    def second_moment(w, U0, M):
        return np.stack([w @ (U0 * U0), w @ M], axis=1)

    extra: list = [second_moment]
    boot = bootstrap_means(U, options.resamples, options.seed, progress, extra=extra, collapse=collapse)
    sq, cnt = extra[0][:, 0, :], extra[0][:, 1, :]
    return _bootstrap_t_from(theta, se, boot, sq, cnt, options.ci)


def _bootstrap_t_from(theta, se, boot, sq, cnt, ci):
    with np.errstate(invalid="ignore", divide="ignore"):
        var_star = (sq / cnt - boot**2) * cnt / (cnt - 1)
        se_star = np.sqrt(np.maximum(var_star, 0.0) / cnt)
        tstar = (boot - theta) / se_star
    tail = (1.0 - ci) / 2.0
    lo = np.full(theta.size, np.nan)
    hi = np.full(theta.size, np.nan)
    for j in range(theta.size):
        col = tstar[:, j]
        # a replicate whose tasks all agree has se* = 0: its t* is ±∞, kept (as ±1e12) not dropped
        col = np.nan_to_num(col[~np.isnan(col)], posinf=1e12, neginf=-1e12)
        if col.size and np.isfinite(se[j]):
            q_lo, q_hi = np.percentile(col, [100 * tail, 100 * (1 - tail)])
            lo[j] = theta[j] - q_hi * se[j]
            hi[j] = theta[j] - q_lo * se[j]
    lo = np.where(se == 0, theta, lo)
    hi = np.where(se == 0, theta, hi)
    return lo, hi

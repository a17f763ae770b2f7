"""Confidence intervals of the mean per-query delta, from a paired bootstrap over queries.

Each resample draws ``n`` queries with replacement (the same queries for baseline and
candidate, which is what "paired" means here: the per-query deltas are resampled) and takes
the mean delta. The interval is read from the ``n_resamples`` resampled means:

- ``"percentile"`` (default): their ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
  quantiles (linear interpolation, numpy's default), as ``scipy.stats.bootstrap(...,
  method="percentile")``.
- ``"bca"``: bias-corrected and accelerated (Efron & Tibshirani 1993, 14.3), as
  ``scipy.stats.bootstrap(..., method="BCa")``. For the mean the jackknife is closed-form:
  the acceleration is ``sum(u**3) / (6 * sum(u**2) ** 1.5)`` with ``u = d - mean(d)``.

Resamples are drawn in blocks and turned into per-query counts, so one matrix product gives
the resampled means of every measure at once; all columns of a delta matrix share the same
resampled queries, and each column's interval equals the one computed for it alone.

From `LARGE_N` queries on, when the rows take few distinct values (at most a quarter as many
as there are queries; lattice measures such as P@10, RR@10 and R@k), a resample is drawn as
multinomial counts of the distinct rows (probability: each row's share of the queries), which
is the same bootstrap distribution at a cost per resample of the distinct rows, not of the
queries: 1M queries x 3 such measures x 10,000 resamples take seconds instead of minutes.
That path uses another random stream than the per-query draws (same seed, other numbers),
and a column alone has other distinct rows than the matrix, so there its interval is the
same bootstrap but not the same numbers as in the matrix.

From `LARGE_N` queries on, other rows (many distinct values: AP, nDCG, float scores) take
the block path: still one draw per query per resample, but cheap ones, blocks in parallel.
The queries are cut into blocks of ``2**BLOCK_BITS`` (8,192; the last may be shorter). A
resample first splits its ``n`` draws among the blocks as multinomial counts (each block's
share of the queries), then draws that many queries uniformly within each block: ``n``
independent uniform draws over all queries, the same bootstrap distribution. Each block has
its own generator, spawned from a `SeedSequence` whose entropy comes from the bootstrap's
stream of the seed; a query index is the low `BLOCK_BITS` of 16 random bits (a power-of-two
range: no rejection), a shorter last block uses ``Generator.integers``. Per resample one
``np.bincount`` gives the counts (numpy releases the GIL in it), single-thread matrix products
give the sums, and `THREADS` threads work on different blocks; the blocks' sums are added in
block order, so the numbers depend on the data and the seed, never on the thread count. The
resampled queries do not depend on the other columns either: a column alone gets the same
resamples as in the matrix (equal up to the rounding of a product of another shape).
1M queries x 3 measures x 10,000 resamples: about 30 s of CPU instead of about 100 (see
docs/statistics.md; two threads gain about 20% on an idle machine).

Below `LARGE_N` queries nothing changed: per-query draws from the bootstrap's stream, the
same numbers for a seed as before.

>>> lo, hi = bootstrap_ci([0.1, 0.0, 0.2, 0.1, -0.1, 0.3, 0.1, 0.0, 0.2, 0.1])
>>> lo <= 0.1 <= hi
True
>>> bootstrap_ci([0.25, 0.25, 0.25])  # no spread: the interval is the mean itself
(0.25, 0.25)
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from rankgate.cpus import worker_threads
from rankgate.stats._common import (
    STREAM_BOOTSTRAP,
    FloatArray,
    Seed,
    as_scores,
    check_choice,
    check_fraction,
    check_resamples,
    make_rng,
    row_dot,
    rows_per_block,
    small_matmul,
)

CI_METHODS: tuple[str, ...] = ("percentile", "bca")
# From this many queries, rows with few distinct values are resampled as multinomial counts of them.
LARGE_N = 1 << 16
# From LARGE_N queries on, other rows are resampled block by block: queries in blocks of
# 2**BLOCK_BITS (the last may be shorter); resamples in rounds of ROUND_RESAMPLES (which
# bounds the memory of the blocks' draw counts), each block's in chunks of CHUNK_RESAMPLES.
BLOCK_BITS = 13
ROUND_RESAMPLES = 4096
CHUNK_RESAMPLES = 16
# Threads that resample blocks at once (rankgate's one rule: the CPUs this process may use, or
# RANKGATE_THREADS); the numbers do not depend on it.
THREADS = worker_threads()


def bootstrap_ci(
    deltas: Any,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    method: str = "percentile",
    seed: Seed = 0,
) -> tuple[float, float]:
    """Paired-bootstrap confidence interval of the mean of ``deltas``.

    Args:
        deltas: per-query deltas (candidate - baseline) of one measure; 1-D, at least 1 query.
        n_resamples: bootstrap resamples.
        confidence: coverage of the two-sided interval, strictly between 0 and 1.
        method: ``"percentile"`` or ``"bca"``.
        seed: an int (reproducible), a numpy ``SeedSequence`` or ``Generator``, or None.

    Returns:
        ``(low, high)``. When all deltas are equal (one query, or no spread) both are the mean.

    Raises:
        InputError: no query, or non-finite values.
        ConfigError: a bad option value.
    """
    d = as_scores(deltas, "deltas", "bootstrap_ci", ndim=1, min_rows=1)
    low, high = _interval(d[:, None], n_resamples, confidence, method, seed, "bootstrap_ci")
    return float(low[0]), float(high[0])


def bootstrap_ci_columns(
    deltas: Any,
    *,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    method: str = "percentile",
    seed: Seed = 0,
) -> tuple[FloatArray, FloatArray]:
    """`bootstrap_ci` of every column of ``deltas`` (queries x measures), sharing the resamples.

    Args:
        deltas: per-query deltas, one row per query (at least 1) and one column per measure.
        n_resamples: bootstrap resamples.
        confidence: coverage of the two-sided interval.
        method: ``"percentile"`` or ``"bca"``.
        seed: as for `bootstrap_ci`.

    Returns:
        ``(low, high)``: two float64 arrays with one value per column.
    """
    d = as_scores(deltas, "deltas", "bootstrap_ci_columns", ndim=2, min_rows=1)
    return _interval(d, n_resamples, confidence, method, seed, "bootstrap_ci_columns")


def bootstrap_means(deltas: Any, *, n_resamples: int = 10_000, seed: Seed = 0) -> FloatArray:
    """The bootstrap distribution: resampled mean of each column of ``deltas``.

    Args:
        deltas: per-query deltas, one row per query and one column per measure.
        n_resamples: bootstrap resamples.
        seed: as for `bootstrap_ci`.

    Returns:
        A float64 matrix of ``n_resamples`` rows and one column per measure.
    """
    d = as_scores(deltas, "deltas", "bootstrap_means", ndim=2, min_rows=1)
    resamples = check_resamples(n_resamples, "bootstrap_means")
    return _resampled_means(d, resamples, make_rng(seed, STREAM_BOOTSTRAP, "bootstrap_means"))


def _interval(
    d: FloatArray, n_resamples: Any, confidence: Any, method: Any, seed: Seed, func: str
) -> tuple[FloatArray, FloatArray]:
    resamples = check_resamples(n_resamples, func)
    level = check_fraction(confidence, "confidence", func)
    how = check_choice(method, "method", func, CI_METHODS)
    rng = make_rng(seed, STREAM_BOOTSTRAP, func)
    mean = d.mean(axis=0)
    flat = (d == d[0]).all(axis=0)
    mean[flat] = d[0, flat]  # exactly the common value, without rounding
    if flat.all():
        return mean.copy(), mean.copy()
    theta = _resampled_means(d, resamples, rng)
    theta.sort(axis=0)
    alpha = (1.0 - level) / 2.0
    if how == "bca":
        q_low, q_high = _bca_levels(d, theta, mean, alpha)
    else:
        q_low = np.full(d.shape[1], alpha)
        q_high = np.full(d.shape[1], 1.0 - alpha)
    low = _quantiles(theta, q_low)
    high = _quantiles(theta, q_high)
    low[flat] = mean[flat]
    high[flat] = mean[flat]
    return low, high


def _resampled_means(d: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Means of ``n_resamples`` bootstrap resamples of the rows of ``d``, one column per measure."""
    n, m = d.shape
    if n >= LARGE_N:
        # A column with many distinct values is enough to skip the sort of the rows.
        if all(np.unique(d[:, j]).shape[0] * 4 <= n for j in range(m)):
            values, counts = np.unique(d, axis=0, return_counts=True)
            if values.shape[0] * 4 <= n:
                return _resampled_means_of_distinct(values, counts, n_resamples, rng)
        return _resampled_means_by_block(d, n_resamples, rng)
    d_t = np.ascontiguousarray(d.T)
    out = np.empty((n_resamples, m), dtype=np.float64)
    rows = rows_per_block(n)
    offsets = (np.arange(rows, dtype=np.int64) * n)[:, None]
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        picks = rng.integers(0, n, size=(size, n), dtype=np.int64)
        picks += offsets[:size]
        counts = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        out[start : start + size] = row_dot(counts.astype(np.float64), d_t)
    out /= n
    return out


def _resampled_means_of_distinct(
    values: FloatArray, counts: Any, n_resamples: int, rng: np.random.Generator
) -> FloatArray:
    """`_resampled_means` drawn as multinomial counts of the distinct rows ``values`` (``counts`` queries each)."""
    n = int(counts.sum())
    k, m = values.shape
    shares = counts / n
    values_t = np.ascontiguousarray(values.T)
    out = np.empty((n_resamples, m), dtype=np.float64)
    rows = rows_per_block(k)
    for start in range(0, n_resamples, rows):
        size = min(rows, n_resamples - start)
        drawn = rng.multinomial(n, shares, size=size)
        out[start : start + size] = row_dot(drawn.astype(np.float64), values_t)
    out /= n
    return out


def _resampled_means_by_block(d: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """`_resampled_means` drawn query block by query block, on `THREADS` threads.

    A resample first splits its ``n`` draws among the blocks (multinomial, each block's share
    of the queries), then draws each block's queries uniformly within the block, from the
    block's own generator; the blocks' sums are added in block order. Only the blocks run in
    parallel, so the numbers depend on the data and the seed, not on the thread count.
    """
    n, m = d.shape
    size = 1 << BLOCK_BITS
    starts = list(range(0, n, size))
    sizes = np.array([min(size, n - s) for s in starts], dtype=np.int64)
    columns_t = [np.ascontiguousarray(d[s : s + size].T) for s in starts]
    roots = np.random.SeedSequence(rng.integers(0, 1 << 63, size=4, dtype=np.int64).tolist())
    bits = [np.random.PCG64(seed) for seed in roots.spawn(len(starts))]
    out = np.zeros((n_resamples, m), dtype=np.float64)
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        for r0 in range(0, n_resamples, ROUND_RESAMPLES):
            r1 = min(n_resamples, r0 + ROUND_RESAMPLES)
            drawn = rng.multinomial(n, sizes / n, size=r1 - r0)  # resamples x blocks
            jobs = ((columns_t[g], drawn[:, g], bits[g]) for g in range(len(starts)))
            for sums in pool.map(lambda job: _block_sums(*job), jobs):
                out[r0:r1] += sums
    out /= n
    return out


def _block_sums(columns_t: FloatArray, drawn: Any, bits: np.random.PCG64) -> FloatArray:
    """Sums over ``drawn[b]`` uniform draws of the queries of one block (``columns_t``: measures x queries).

    A block of ``2**BLOCK_BITS`` queries takes each query index from 16 random bits (four per
    64-bit word, little-endian), keeping the low `BLOCK_BITS`; a shorter (last) block uses
    ``Generator.integers``. Each chunk of `CHUNK_RESAMPLES` resamples starts on a new word.
    """
    m, s = columns_t.shape
    full = s == 1 << BLOCK_BITS
    gen = np.random.Generator(bits)
    out = np.empty((drawn.shape[0], m), dtype=np.float64)
    counts = np.empty((CHUNK_RESAMPLES, s), dtype=np.float64)
    picks = np.empty(CHUNK_RESAMPLES * s * 2, dtype=np.intp)  # grown when a chunk draws more
    for b0 in range(0, drawn.shape[0], CHUNK_RESAMPLES):
        per = drawn[b0 : b0 + CHUNK_RESAMPLES]
        rows, total = per.shape[0], int(per.sum())
        if total > picks.shape[0]:
            picks = np.empty(total, dtype=np.intp)
        if full:
            words = np.asarray(bits.random_raw((total + 3) // 4), dtype="<u8")
            np.bitwise_and(words.view("<u2")[:total], s - 1, out=picks[:total], casting="unsafe")
        else:
            picks[:total] = gen.integers(0, s, size=total, dtype=np.int64)
        # One bincount per resample: numpy releases the GIL in it (not in np.add.at or np.repeat).
        end = 0
        for r in range(rows):
            start, end = end, end + int(per[r])
            counts[r] = np.bincount(picks[start:end], minlength=s)
        out[b0 : b0 + rows] = small_matmul(counts[:rows], columns_t)
    return out


def _quantiles(sorted_values: FloatArray, levels: FloatArray) -> FloatArray:
    """Per-column quantile at per-column ``levels`` of column-sorted values (numpy's "linear")."""
    b = sorted_values.shape[0]
    h = (b - 1) * np.clip(levels, 0.0, 1.0)
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, b - 1)
    cols = np.arange(sorted_values.shape[1])
    below = sorted_values[lo, cols]
    above = sorted_values[hi, cols]
    out: FloatArray = below + (h - lo) * (above - below)
    return out


def _bca_levels(d: FloatArray, theta: FloatArray, mean: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """The BCa quantile levels of the low and high ends, per column."""
    from scipy.special import ndtr, ndtri

    b = theta.shape[0]
    below = np.count_nonzero(theta < mean, axis=0) + np.count_nonzero(theta <= mean, axis=0)
    # A median-bias of 0 or 1 (every resample on one side) would give infinite z0; keep it finite.
    share = np.clip(below / (2.0 * b), 0.5 / b, 1.0 - 0.5 / b)
    z0 = ndtri(share)
    u = d - mean
    s2 = (u**2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        accel = np.where(s2 > 0, (u**3).sum(axis=0) / (6.0 * s2**1.5), 0.0)
    z_alpha = float(ndtri(alpha))
    ends = []
    for z, plain in ((z_alpha, alpha), (-z_alpha, 1.0 - alpha)):
        shifted = z0 + z
        denominator = 1.0 - accel * shifted
        with np.errstate(divide="ignore", invalid="ignore"):
            level = ndtr(z0 + shifted / denominator)
        # BCa is undefined when the denominator is not positive (extreme skew): use the percentile level.
        ends.append(np.where(denominator > 0, level, plain))
    return ends[0], ends[1]

"""All-pairs comparison of three or more systems: the randomized Tukey HSD test.

Queries are blocks: under the null hypothesis that the systems are equivalent, the ``k``
scores of a query are exchangeable among the systems. Each resample shuffles every query's
row of scores independently and records the range (largest minus smallest) of the
resulting system means; the p-value of a pair ``(i, j)`` is the share of resamples whose
range reaches the observed ``|mean_i - mean_j|``, with the +1 correction:
``p = (count + 1) / (n_resamples + 1)``. Comparing every pair with the distribution of the
*largest* difference controls the family-wise error rate over all ``k (k - 1) / 2`` pairs,
so these p-values need no further adjustment (Carterette 2012, "Multiple testing in
statistical analysis of systems-based information retrieval experiments", ACM TOIS 30(1);
randomization tests in IR: Smucker, Allan & Carterette 2007, CIKM). With ``k = 2`` it is
the paired randomization test of the mean delta.

>>> scores = [[0.2, 0.3, 0.9], [0.1, 0.2, 0.8], [0.4, 0.4, 0.9], [0.3, 0.5, 1.0], [0.2, 0.2, 0.7]]
>>> res = randomized_tukey_hsd(scores, n_resamples=2000, seed=1)
>>> res.means.round(2).tolist()
[0.24, 0.32, 0.86]
>>> [(i, j, round(p, 3)) for i, j, _, p in res.pairs()]
[(0, 1, 0.98), (0, 2, 0.004), (1, 2, 0.014)]

(Enumerating all 6 ** 5 shuffles gives 0.975, 0.003 and 0.012.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.errors import InputError
from rankgate.stats._common import (
    STREAM_TUKEY,
    FloatArray,
    Seed,
    as_scores,
    check_resamples,
    make_rng,
    round_off,
    rows_per_block,
)


@dataclass(frozen=True, eq=False)
class TukeyResult:
    """The outcome of `randomized_tukey_hsd` for ``k`` systems.

    Attributes:
        means: mean score of each system (``k`` values, in the input's column order).
        diff: ``diff[i, j] = means[j] - means[i]`` (``k x k``).
        p_value: family-wise p-value of each pair (``k x k``, symmetric, 1.0 on the diagonal).
        n_resamples: resamples drawn.
    """

    means: FloatArray
    diff: FloatArray
    p_value: FloatArray
    n_resamples: int

    def pairs(self) -> list[tuple[int, int, float, float]]:
        """Every pair ``i < j`` as ``(i, j, means[j] - means[i], p_value)``."""
        k = self.means.shape[0]
        return [(i, j, float(self.diff[i, j]), float(self.p_value[i, j])) for i in range(k) for j in range(i + 1, k)]


def randomized_tukey_hsd(scores: Any, *, n_resamples: int = 10_000, seed: Seed = 0) -> TukeyResult:
    """Randomized Tukey HSD test of every pair of systems, with queries as blocks.

    Args:
        scores: per-query scores of one measure, one row per query and one column per system
            (at least 1 query and 2 systems).
        n_resamples: random within-query shuffles to draw.
        seed: an int (reproducible), a numpy ``SeedSequence`` or ``Generator``, or None.

    Returns:
        A `TukeyResult`.

    Raises:
        InputError: fewer than 2 systems, no query, or non-finite values.
        ConfigError: a bad ``n_resamples`` or ``seed``.
    """
    func = "randomized_tukey_hsd"
    x = as_scores(scores, "scores", func, ndim=2, min_rows=1)
    n, k = x.shape
    if k < 2:
        raise InputError(
            f"The 'scores' parameter of {func} must have one column per system, at least 2. "
            f"Got an array of shape {x.shape} instead."
        )
    resamples = check_resamples(n_resamples, func)
    rng = make_rng(seed, STREAM_TUKEY, func)
    sums = x.sum(axis=0)
    observed = np.abs(sums[None, :] - sums[:, None])
    slack = 2.0 * round_off(float(np.abs(x).max(axis=1).sum()), n)

    ranges = np.empty(resamples, dtype=np.float64)
    rows = min(rows_per_block(n), resamples)
    shuffler = RowShuffler(x, rows)
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        system_sums = shuffler.sums(size, rng)
        ranges[start : start + size] = system_sums.max(axis=1) - system_sums.min(axis=1)
    ranges.sort()
    at_least = resamples - np.searchsorted(ranges, observed - slack, side="left")
    p = (at_least + 1) / (resamples + 1)
    np.fill_diagonal(p, 1.0)
    means = sums / n
    return TukeyResult(means=means, diff=means[None, :] - means[:, None], p_value=p, n_resamples=resamples)


class RowShuffler:
    """Column sums of copies of ``x`` whose rows are each shuffled at random, block by block.

    Row ``q`` of each copy gets a uniform random permutation, drawn without replacement one
    column at a time: column ``t`` takes the ``c``-th still unused value of the row, ``c``
    uniform in ``[0, k - t)``. The used positions are kept sorted with element-wise min/max,
    so everything is a whole-array operation (several times faster than
    ``Generator.permuted`` on the ``(copies, n, k)`` cube). All work arrays are allocated
    once and reused: fresh multi-megabyte temporaries in every block cost page faults that
    can triple the run time.

    Args:
        x: ``(n, k)`` scores, one row per query.
        rows: the most copies one call of `sums` draws.
    """

    def __init__(self, x: FloatArray, rows: int) -> None:
        n, k = x.shape
        self.k = k
        self.flat = np.ascontiguousarray(x).ravel()
        self.row_start = np.arange(n, dtype=np.int64) * k
        self.draw_dtype = np.uint16 if k <= np.iinfo(np.uint16).max else np.int64
        self.values = np.empty((rows, n), dtype=np.float64)
        self.col = np.empty((rows, n), dtype=np.int64)
        self.index = np.empty((rows, n), dtype=np.int64)
        self.low = np.empty((rows, n), dtype=np.int64)
        self.hit = np.empty((rows, n), dtype=np.bool_)
        self.used = [np.empty((rows, n), dtype=np.int64) for _ in range(max(k - 1, 0))]

    def sums(self, size: int, rng: np.random.Generator) -> FloatArray:
        """``(size, k)`` sums over queries of each column of ``size`` shuffled copies."""
        k = self.k
        out = np.empty((size, k), dtype=np.float64)
        values, col, index = self.values[:size], self.col[:size], self.index[:size]
        low, hit = self.low[:size], self.hit[:size]
        used = [buf[:size] for buf in self.used]
        for t in range(k):
            if t < k - 1:
                # small draws: a 16-bit array faults in a quarter of the pages of an int64 one
                np.copyto(col, rng.integers(0, k - t, size=col.shape, dtype=self.draw_dtype))
                for taken in used[:t]:  # skip over the used columns, in ascending order
                    np.greater_equal(col, taken, out=hit)
                    np.add(col, hit, out=col)
            else:  # the one column left
                col.fill(k * (k - 1) // 2)
                for taken in used[:t]:
                    np.subtract(col, taken, out=col)
            np.add(col, self.row_start, out=index)
            np.take(self.flat, index, out=values)
            out[:, t] = values.sum(axis=1)
            if t < k - 1:  # insert col into the sorted used[:t]
                for taken in used[:t]:
                    np.minimum(taken, col, out=low)
                    np.maximum(taken, col, out=col)
                    np.copyto(taken, low)
                np.copyto(used[t], col)
        return out

"""All-pairs comparison of three or more systems: the randomized Tukey HSD test.

Queries are blocks: under the null hypothesis that the systems are equivalent, the ``k``
scores of a query are exchangeable among the systems. Each resample shuffles every query's
row of scores independently and records the range (largest minus smallest) of the
resulting system means; the p-value of a pair ``(i, j)`` is the share of resamples whose
range reaches the observed ``|mean_i - mean_j|``, with the +1 correction:
``p = (count + 1) / (n_resamples + 1)``. Comparing every pair with the distribution of the
*largest* difference controls the family-wise error rate over all ``k (k - 1) / 2`` pairs,
so these p-values need no further adjustment (Carterette 2012, "Multiple testing in
statistical analysis of systems-based information retrieval experiments", TOIS 30(1);
Sakai 2014). With ``k = 2`` it is the paired randomization test of the mean delta.

>>> scores = [[0.2, 0.3, 0.9], [0.1, 0.2, 0.8], [0.4, 0.4, 0.9], [0.3, 0.5, 1.0], [0.2, 0.2, 0.7]]
>>> res = randomized_tukey_hsd(scores, n_resamples=2000, seed=1)
>>> res.means.round(2).tolist()
[0.24, 0.32, 0.86]
>>> [(i, j, round(p, 3)) for i, j, _, p in res.pairs()]
[(0, 1, 0.976), (0, 2, 0.005), (1, 2, 0.011)]
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
    check_int,
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
        return [
            (i, j, float(self.diff[i, j]), float(self.p_value[i, j])) for i in range(k) for j in range(i + 1, k)
        ]


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
    resamples = check_int(n_resamples, "n_resamples", func, minimum=1)
    rng = make_rng(seed, STREAM_TUKEY, func)
    sums = x.sum(axis=0)
    observed = np.abs(sums[None, :] - sums[:, None])
    slack = 2.0 * round_off(float(np.abs(x).max(axis=1).sum()), n)

    ranges = np.empty(resamples, dtype=np.float64)
    rows = rows_per_block(n * k, elements=1 << 20)
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        shuffled = rng.permuted(np.broadcast_to(x, (size, n, k)), axis=2)
        system_sums = shuffled.sum(axis=1)
        ranges[start : start + size] = system_sums.max(axis=1) - system_sums.min(axis=1)
    ranges.sort()
    at_least = resamples - np.searchsorted(ranges, observed - slack, side="left")
    p = (at_least + 1) / (resamples + 1)
    np.fill_diagonal(p, 1.0)
    means = sums / n
    return TukeyResult(means=means, diff=means[None, :] - means[:, None], p_value=p, n_resamples=resamples)

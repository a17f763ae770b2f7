"""Paired significance tests over queries: Student's t-test and the randomization test.

Both test the null hypothesis "the mean per-query difference is 0" against a two-sided
alternative. The difference is ``b - a`` (candidate minus baseline), per query.

`paired_t_test` and `randomization_test` take two 1-D arrays of per-query scores (one
measure); the ``*_columns`` forms take a matrix of per-query deltas with one column per
measure and test every column at once (the randomization test then uses the same random
sign flips for every column, which is what makes it fast).

>>> a = [0.2, 0.5, 0.1, 0.4, 0.3, 0.6, 0.2, 0.5]
>>> b = [0.3, 0.6, 0.1, 0.6, 0.4, 0.6, 0.4, 0.7]
>>> res = paired_t_test(a, b)
>>> round(res.statistic, 4), round(res.p_value, 4), res.df
(3.8129, 0.0066, 7)

Six deltas are nonzero and only flipping none or all of them reaches |sum| = 0.9, so the
exact p-value (2 ** 8 sign vectors <= 10,000 resamples: enumerated) is 2 / 2 ** 6:

>>> randomization_test(a, b).p_value
0.03125
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.stats._common import (
    STREAM_RANDOMIZATION,
    FloatArray,
    Seed,
    as_pair,
    as_scores,
    check_resamples,
    make_rng,
    round_off,
    row_dot,
    rows_per_block,
)


@dataclass(frozen=True)
class TestResult:
    """The outcome of one two-sided paired test.

    Attributes:
        statistic: t for the t-test; the observed mean delta for the randomization test.
        p_value: the two-sided p-value.
        test: ``"t"`` or ``"randomization"``.
        df: degrees of freedom of the t-test (queries - 1); None for the randomization test.
        n_resamples: sign vectors drawn (or enumerated) by the randomization test; None for the t-test.
        exact: True when the randomization test enumerated every sign vector.
    """

    __test__ = False  # not a pytest test class

    statistic: float
    p_value: float
    test: str
    df: int | None = None
    n_resamples: int | None = None
    exact: bool = False


@dataclass(frozen=True, eq=False)
class ColumnTestResult:
    """The outcome of one paired test per column of a delta matrix (arrays of one value per column).

    Attributes are those of `TestResult`; ``statistic`` and ``p_value`` are float64 arrays.
    """

    statistic: FloatArray
    p_value: FloatArray
    test: str
    df: int | None = None
    n_resamples: int | None = None
    exact: bool = False

    def column(self, j: int) -> TestResult:
        """The result of column ``j`` as a `TestResult`."""
        return TestResult(
            statistic=float(self.statistic[j]),
            p_value=float(self.p_value[j]),
            test=self.test,
            df=self.df,
            n_resamples=self.n_resamples,
            exact=self.exact,
        )


def paired_t_test(a: Any, b: Any) -> TestResult:
    """Two-sided paired Student's t-test of the per-query deltas ``b - a``.

    Same numbers as ``scipy.stats.ttest_rel(b, a)``: ``t = mean(d) / (sd(d) / sqrt(n))`` with
    the sample SD (ddof=1) and ``n - 1`` degrees of freedom.

    When every delta is the same (SD = 0), t is undefined; rankgate then reports
    ``t = 0, p = 1`` if the deltas are all 0 (the systems are identical on this measure), and
    ``t = +-inf, p = 0`` if they are all the same nonzero value (a difference without noise).
    scipy returns NaN for the first case.

    Args:
        a: baseline per-query scores (1-D, at least 2 queries).
        b: candidate per-query scores, same queries in the same order.

    Returns:
        A `TestResult` with ``statistic`` t, ``p_value`` and ``df``.

    Raises:
        InputError: fewer than 2 queries, different lengths, or non-finite values.

    >>> paired_t_test([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    TestResult(statistic=0.0, p_value=1.0, test='t', df=2, n_resamples=None, exact=False)
    """
    a_arr, b_arr = as_pair(a, b, "paired_t_test", min_rows=2)
    return _t_test((b_arr - a_arr)[:, None]).column(0)


def paired_t_test_columns(deltas: Any) -> ColumnTestResult:
    """`paired_t_test` of every column of ``deltas`` (queries x measures, candidate - baseline).

    Args:
        deltas: per-query deltas, one row per query (at least 2) and one column per measure.

    Returns:
        A `ColumnTestResult` with one t and one p-value per column.
    """
    return _t_test(as_scores(deltas, "deltas", "paired_t_test_columns", ndim=2, min_rows=2))


def _t_test(d: FloatArray) -> ColumnTestResult:
    from scipy.special import stdtr

    n = d.shape[0]
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1)
    flat = sd == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    t[flat] = np.where(mean[flat] == 0, 0.0, np.copysign(np.inf, mean[flat]))
    p = np.minimum(2.0 * stdtr(n - 1, -np.abs(t)), 1.0)
    p[flat] = np.where(mean[flat] == 0, 1.0, 0.0)
    return ColumnTestResult(statistic=t, p_value=p, test="t", df=n - 1)


def randomization_test(a: Any, b: Any, *, n_resamples: int = 10_000, seed: Seed = 0) -> TestResult:
    """Two-sided paired randomization (sign-flip) test of the mean delta ``b - a``.

    Under the null hypothesis each query's pair of scores is exchangeable, so the sign of
    each delta is a coin flip. The test draws ``n_resamples`` random sign vectors ``s`` and
    counts those whose ``|sum(s * d)|`` is at least the observed ``|sum(d)|``:
    ``p = (count + 1) / (n_resamples + 1)``, which is never 0 and keeps the test valid
    (Phipson & Smyth 2010). Values that tie with the observed one up to float rounding count
    as "at least". When ``2 ** n <= n_resamples`` the ``2 ** n`` sign vectors are enumerated
    instead and ``p = count / 2 ** n`` is exact.

    Args:
        a: baseline per-query scores (1-D, at least 1 query).
        b: candidate per-query scores, same queries in the same order.
        n_resamples: random sign vectors to draw.
        seed: an int (reproducible: same result on every run), a numpy ``SeedSequence`` or
            ``Generator``, or None (fresh OS entropy).

    Returns:
        A `TestResult`; ``statistic`` is the observed mean delta.

    Raises:
        InputError: no query, different lengths, or non-finite values.
        ConfigError: a bad ``n_resamples`` or ``seed``.

    >>> randomization_test([0.5, 0.5], [0.5, 0.5]).p_value  # no difference at all
    1.0
    """
    a_arr, b_arr = as_pair(a, b, "randomization_test", min_rows=1)
    return _randomization((b_arr - a_arr)[:, None], n_resamples, seed, "randomization_test").column(0)


def randomization_test_columns(deltas: Any, *, n_resamples: int = 10_000, seed: Seed = 0) -> ColumnTestResult:
    """`randomization_test` of every column of ``deltas`` (queries x measures), with shared sign flips.

    Every column sees the same sign vectors, so column ``j`` gets exactly the p-value that
    `randomization_test` gives for it alone with the same seed.

    Args:
        deltas: per-query deltas, one row per query and one column per measure.
        n_resamples: random sign vectors to draw.
        seed: as for `randomization_test`.

    Returns:
        A `ColumnTestResult` with the observed mean delta and p-value of each column.
    """
    d = as_scores(deltas, "deltas", "randomization_test_columns", ndim=2, min_rows=1)
    return _randomization(d, n_resamples, seed, "randomization_test_columns")


def _randomization(d: FloatArray, n_resamples: Any, seed: Seed, func: str) -> ColumnTestResult:
    n, m = d.shape
    resamples = check_resamples(n_resamples, func)
    rng = make_rng(seed, STREAM_RANDOMIZATION, func)
    d_t = np.ascontiguousarray(d.T)
    observed = d.sum(axis=0)
    # |2 * (bits @ d) - observed| >= |observed|, with the rounding of both sums as slack.
    threshold = np.abs(observed) - round_off(np.abs(d).sum(axis=0), n)
    exact = n < 63 and 2**n <= resamples
    total = 2**n if exact else resamples
    count = np.zeros(m, dtype=np.int64)
    rows = rows_per_block(n)
    n_bytes = (n + 7) // 8
    shifts = np.arange(n, dtype=np.int64)
    for start in range(0, total, rows):
        size = min(rows, total - start)
        if exact:
            codes = np.arange(start, start + size, dtype=np.int64)
            bits = ((codes[:, None] >> shifts) & 1).astype(np.float64)
        else:
            raw = np.frombuffer(rng.bytes(size * n_bytes), dtype=np.uint8).reshape(size, n_bytes)
            bits = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        flipped = 2.0 * row_dot(bits, d_t) - observed
        count += np.count_nonzero(np.abs(flipped) >= threshold, axis=0)
    p = count / total if exact else (count + 1) / (total + 1)
    return ColumnTestResult(
        statistic=observed / n, p_value=p.astype(np.float64), test="randomization", n_resamples=total, exact=exact
    )

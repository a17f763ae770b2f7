"""The bootstrap's block path (continuous rows from `LARGE_N` queries on, issue 23 item 12).

`LARGE_N` and `BLOCK_BITS` are patched down so that the block path runs on a few thousand
queries, with several full blocks and a shorter last one. The block path draws other random
numbers than the per-query draws, so it is checked against them as a distribution: a
two-sample Kolmogorov-Smirnov test and the quantiles that make the interval, with bounds
from the Monte Carlo error, plus the exact mean and variance of the bootstrap of a mean.
Each check is shown to reject a distribution 10% wider, so none passes vacuously.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import rankgate.stats.bootstrap as bootstrap
from rankgate.stats import bootstrap_ci, bootstrap_ci_columns, bootstrap_means

N_QUERIES = 3000  # 11 blocks of 256 and a last one of 184
RESAMPLES = 20_000


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(bootstrap, "LARGE_N", 1000)
    monkeypatch.setattr(bootstrap, "BLOCK_BITS", 8)


@pytest.fixture(scope="module")
def skewed() -> np.ndarray:
    """Continuous, skewed per-query values (every row distinct), far from 0 so a bootstrap
    without a fixed total (Poisson) would have 40x the variance; the first column sorted, so
    the blocks' means differ and a wrong split of the draws among the blocks shows."""
    rng = np.random.default_rng(8)
    d = 1.0 + rng.exponential(0.2, size=(N_QUERIES, 2))
    d[:, 0].sort()
    return d


def exact_means(d: np.ndarray, seed: int) -> np.ndarray:
    """The per-query draws (the path below `LARGE_N`): the reference bootstrap distribution."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bootstrap, "LARGE_N", 10**9)
        return bootstrap_means(d, n_resamples=RESAMPLES, seed=seed)


def quantile_gap(sample: np.ndarray, reference: np.ndarray, q: float) -> tuple[float, float]:
    """How far the share of ``sample`` below ``reference``'s ``q`` quantile is from ``q``, and
    4.5 Monte Carlo standard errors of that gap (distribution-free: both shares are binomial)."""
    share = float(np.mean(sample <= np.quantile(reference, q)))
    se = math.sqrt(q * (1.0 - q) * (1.0 / sample.size + 1.0 / reference.size))
    return abs(share - q), 4.5 * se + 1.0 / reference.size


def same_distribution(sample: np.ndarray, reference: np.ndarray) -> bool:
    if sps.ks_2samp(sample, reference).pvalue < 1e-3:
        return False
    for q in (0.025, 0.16, 0.5, 0.84, 0.975):
        gap, bound = quantile_gap(sample, reference, q)
        if gap > bound:
            return False
    return True


def test_block_path_has_the_bootstrap_distribution_of_per_query_draws(small_blocks, skewed):
    fast = bootstrap_means(skewed, n_resamples=RESAMPLES, seed=1)
    ref = exact_means(skewed, seed=2)
    assert not np.array_equal(fast, exact_means(skewed, seed=1))  # another random stream...
    for j in range(skewed.shape[1]):
        assert same_distribution(fast[:, j], ref[:, j])  # ...the same distribution
        center = skewed[:, j].mean()
        wider = center + 1.1 * (ref[:, j] - center)
        assert not same_distribution(fast[:, j], wider)  # the check can fail


def test_block_path_has_the_exact_mean_and_variance_of_the_bootstrap(small_blocks, skewed):
    # A resample mean of n queries drawn with replacement has mean mean(d) and variance
    # mean((d - mean(d))**2) / n exactly; the tolerances are 4.5 standard errors of the
    # sample mean and of the sample variance (from the resamples' own kurtosis).
    fast = bootstrap_means(skewed, n_resamples=RESAMPLES, seed=3)
    for j in range(skewed.shape[1]):
        d, theta = skewed[:, j], fast[:, j]
        variance = float(np.mean((d - d.mean()) ** 2)) / d.size
        assert abs(theta.mean() - d.mean()) < 4.5 * math.sqrt(variance / RESAMPLES)
        kurtosis = float(sps.kurtosis(theta, fisher=False))
        ratio_se = math.sqrt((kurtosis - (RESAMPLES - 3) / (RESAMPLES - 1)) / RESAMPLES)
        assert abs(theta.var(ddof=1) / variance - 1.0) < 4.5 * ratio_se
        assert abs(1.1**2 - 1.0) > 4.5 * ratio_se  # a 10% wider distribution would fail


def test_block_path_is_reproducible_and_independent_of_the_thread_count(small_blocks, skewed, monkeypatch):
    monkeypatch.setattr(bootstrap, "ROUND_RESAMPLES", 200)  # 3 rounds, the last one short
    monkeypatch.setattr(bootstrap, "THREADS", 1)
    one = bootstrap_means(skewed, n_resamples=500, seed=4)
    monkeypatch.setattr(bootstrap, "THREADS", 3)
    np.testing.assert_array_equal(bootstrap_means(skewed, n_resamples=500, seed=4), one)
    np.testing.assert_array_equal(bootstrap_means(skewed, n_resamples=500, seed=np.random.SeedSequence(4)), one)
    assert not np.array_equal(bootstrap_means(skewed, n_resamples=500, seed=5), one)
    # The resamples do not depend on the other columns: a column alone gets its own numbers
    # (up to the rounding of a matrix product of another shape).
    np.testing.assert_allclose(bootstrap_means(skewed[:, 1:], n_resamples=500, seed=4)[:, 0], one[:, 1], rtol=1e-13)


def test_block_path_interval_matches_per_query_draws(small_blocks, skewed):
    low, high = bootstrap_ci_columns(skewed, n_resamples=RESAMPLES, seed=6)
    ref = np.sort(exact_means(skewed, seed=6), axis=0)
    se_of_mean = skewed.std(axis=0) / math.sqrt(N_QUERIES)
    # The ends' Monte Carlo error is about 0.03 standard errors of the mean at 20,000 resamples.
    np.testing.assert_array_less(np.abs(low - np.quantile(ref, 0.025, axis=0)), 0.15 * se_of_mean)
    np.testing.assert_array_less(np.abs(high - np.quantile(ref, 0.975, axis=0)), 0.15 * se_of_mean)
    lo1, hi1 = bootstrap_ci(skewed[:, 0], n_resamples=RESAMPLES, seed=6, method="bca")
    assert lo1 < skewed[:, 0].mean() < hi1


def test_block_path_ci_covers_the_true_mean_95_percent_of_the_time(monkeypatch):
    # 2,000 simulated query sets of 300 skewed values with a known mean, as the columns of one
    # matrix (they share the resampled queries; each is still a bootstrap of its own data).
    # 300 queries in blocks of 64: 4 full blocks and a last one of 44.
    monkeypatch.setattr(bootstrap, "LARGE_N", 256)
    monkeypatch.setattr(bootstrap, "BLOCK_BITS", 6)
    rng = np.random.default_rng(2025)
    n, trials = 300, 2000
    d = rng.gamma(4.0, 0.05, size=(n, trials))  # mean 0.2
    low, high = bootstrap_ci_columns(d, n_resamples=2000, seed=7)
    coverage = float(np.mean((low <= 0.2) & (high >= 0.2)))
    # Percentile intervals of a skewed mean under-cover a little; 4 binomial SEs is 0.02.
    assert 0.92 <= coverage <= 0.97, coverage


def test_numbers_below_large_n_are_unchanged():
    # Pinned from the code before the block path (per-query draws; same seed, same numbers). The
    # means are BLAS dot products, whose summation order depends on the CPU (the last bit differs
    # between machines); any other draw of the queries moves them by far more than 1e-14.
    d = np.column_stack([np.arange(12.0) ** 2 / 7, np.sin(np.arange(12.0))])
    pinned = [
        [3.4880952380952377, -0.1758003148114761],
        [2.1547619047619047, -0.01183924696726299],
        [7.642857142857142, -0.005288334667087243],
    ]
    np.testing.assert_allclose(bootstrap_means(d, n_resamples=3, seed=7), pinned, rtol=1e-14, atol=0)
    big = np.random.default_rng(11).random((bootstrap.LARGE_N - 1, 2))
    pinned_big = [
        [0.5044962003318512, 0.4991638718285747],
        [0.5021583095624087, 0.4971157748797491],
    ]
    np.testing.assert_allclose(bootstrap_means(big, n_resamples=2, seed=3), pinned_big, rtol=1e-14, atol=0)

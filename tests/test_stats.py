"""Tests of `rankgate.stats`: agreement with scipy, hand-worked values, simulations, errors.

Monte Carlo comparisons use tolerances of about 4 standard errors of the difference, with
fixed seeds, so they neither flake nor pass vacuously.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from rankgate.errors import ConfigError, InputError, RankgateError
from rankgate.stats import (
    __all__ as stats_all,
)
from rankgate.stats import (
    adjust_p,
    bootstrap_ci,
    bootstrap_ci_columns,
    bootstrap_means,
    effect_size,
    effect_size_columns,
    minimum_detectable_effect,
    paired_summary,
    paired_t_power,
    paired_t_test,
    paired_t_test_columns,
    queries_needed,
    randomization_test,
    randomization_test_columns,
    randomized_tukey_hsd,
    win_tie_loss,
    win_tie_loss_columns,
)
from rankgate.stats.effect import WinTieLoss


def ir_scores(rng: np.random.Generator, n: int, true_delta: float = 0.0, noise: float = 0.15):
    """Synthetic per-query scores of a baseline and a candidate whose true mean delta is ``true_delta``.

    Query difficulty varies a lot (Beta(2, 5)); each system adds its own noise, so the
    pairing matters. Not clipped to [0, 1], so the expected delta is exactly ``true_delta``.
    """
    difficulty = rng.beta(2.0, 5.0, size=n)
    a = difficulty + rng.normal(0.0, noise, size=n)
    b = difficulty + true_delta + rng.normal(0.0, noise, size=n)
    return a, b


def mc_tolerance(p: float, n_resamples: int, k: float = 4.0) -> float:
    """About k standard errors of the difference of two independent Monte Carlo p-values."""
    p = min(max(p, 1.0 / n_resamples), 1.0 - 1.0 / n_resamples)
    return k * math.sqrt(2.0 * p * (1.0 - p) / n_resamples) + 2.0 / n_resamples


# --------------------------------------------------------------------------- public surface


def test_all_is_sorted_and_exported():
    import rankgate.stats as mod

    assert list(stats_all) == sorted(stats_all)
    for name in stats_all:
        assert hasattr(mod, name), name


def test_import_is_light():
    code = "import sys, rankgate.stats; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- paired t-test


@pytest.mark.parametrize(("seed", "n", "true_delta"), [(0, 2, 0.0), (1, 5, 0.1), (2, 50, 0.02), (3, 7000, 0.005)])
def test_t_test_equals_scipy_ttest_rel(seed, n, true_delta):
    a, b = ir_scores(np.random.default_rng(seed), n, true_delta)
    ours = paired_t_test(a, b)
    ref = sps.ttest_rel(b, a)
    assert ours.statistic == pytest.approx(float(ref.statistic), rel=1e-12, abs=1e-12)
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-12)
    assert ours.df == n - 1 and ours.test == "t"


def test_t_test_columns_equal_scipy_per_column():
    rng = np.random.default_rng(5)
    deltas = rng.normal(0.01, 0.2, size=(300, 6))
    res = paired_t_test_columns(deltas)
    ref = sps.ttest_1samp(deltas, 0.0, axis=0)
    np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-12)
    np.testing.assert_allclose(res.p_value, ref.pvalue, rtol=1e-12)
    assert res.column(2).p_value == res.p_value[2]


def test_t_test_without_spread_has_documented_values_and_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = paired_t_test([0.1, 0.5, 0.3], [0.1, 0.5, 0.3])
        up = paired_t_test([0.0, 0.0, 0.0], [0.25, 0.25, 0.25])
        down = paired_t_test([0.5, 0.5], [0.25, 0.25])
    assert (same.statistic, same.p_value) == (0.0, 1.0)
    assert (up.statistic, up.p_value) == (math.inf, 0.0)
    assert (down.statistic, down.p_value) == (-math.inf, 0.0)


# --------------------------------------------------------------------------- randomization test


def _scipy_two_sided_abs(d: np.ndarray, n_resamples: int, seed: int) -> float:
    """scipy's paired sign-flip p-value of |mean delta| (our definition of two-sided)."""
    return sps.permutation_test(
        (d,),
        lambda x, axis: np.abs(np.mean(x, axis=axis)),
        permutation_type="samples",
        alternative="greater",
        n_resamples=n_resamples,
        vectorized=True,
        rng=seed,
    ).pvalue


@pytest.mark.parametrize(("seed", "n", "true_delta"), [(0, 40, 0.03), (1, 120, 0.02), (2, 300, 0.0), (3, 60, 0.06)])
def test_randomization_agrees_with_scipy_permutation_test(seed, n, true_delta):
    a, b = ir_scores(np.random.default_rng(seed), n, true_delta)
    d = b - a
    ours = randomization_test(a, b, n_resamples=20_000, seed=seed)
    ref_abs = _scipy_two_sided_abs(d, 20_000, seed)
    ref_default = sps.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=20_000, vectorized=True, rng=seed
    ).pvalue  # two-sided as twice the smaller tail: the same for a symmetric null
    assert not ours.exact and ours.n_resamples == 20_000
    assert ours.statistic == pytest.approx(d.mean(), rel=1e-12)
    assert abs(ours.p_value - ref_abs) <= mc_tolerance(ref_abs, 20_000)
    assert abs(ours.p_value - ref_default) <= mc_tolerance(ref_default, 20_000)


def test_randomization_enumerates_small_samples_exactly_like_scipy():
    rng = np.random.default_rng(11)
    d = rng.normal(0.1, 0.3, size=12)  # 4096 sign vectors <= 10,000
    ours = randomization_test(np.zeros(12), d)
    ref = _scipy_two_sided_abs(d, 10_000, 0)  # scipy also enumerates here
    assert ours.exact and ours.n_resamples == 4096
    assert ours.p_value == pytest.approx(ref, abs=1e-12)


def test_randomization_counts_lattice_ties_like_exact_integer_arithmetic():
    # P@10-like deltas: multiples of 0.1, where float sums of equal exact value differ by rounding.
    ints = np.array([1, 2, 3, -1, 1, -2, 1, 1, 3, -1, 2, 1, 1])
    d = ints / 10.0
    signs = np.array(list(itertools.product((1, -1), repeat=len(ints))))
    expected = np.mean(np.abs(signs @ ints) >= abs(ints.sum()))
    assert randomization_test(np.zeros_like(d), d, n_resamples=2**13).p_value == pytest.approx(expected, abs=1e-15)
    # Random sign vectors: integer deltas sum exactly; scaled by 1/10 or 1/3 they do not, yet
    # the same seed must give the same p-value. About 12% of the sign vectors tie exactly here.
    ints = np.random.default_rng(5).integers(-2, 3, size=60)
    p_exact = randomization_test(np.zeros(60), ints.astype(np.float64), seed=2).p_value
    for scale in (10.0, 3.0):
        assert randomization_test(np.zeros(60), ints / scale, seed=2).p_value == p_exact
    flips = np.random.default_rng(0).choice([-1, 1], size=(20_000, 60)) @ ints
    assert np.mean(np.abs(flips) == abs(ints.sum())) > 0.05  # ties are common: the check has teeth


def test_randomization_p_is_never_zero_and_one_without_difference():
    d = np.full(50, 0.3)
    p = randomization_test(np.zeros(50), d, n_resamples=999).p_value
    assert p == pytest.approx(1 / 1000)  # the +1 correction: only the observed signs reach it
    assert randomization_test([0.2] * 30, [0.2] * 30).p_value == 1.0


def test_randomization_is_reproducible_and_columns_match_single_measure():
    rng = np.random.default_rng(21)
    deltas = rng.normal(0.02, 0.2, size=(500, 4))
    first = randomization_test_columns(deltas, n_resamples=3000, seed=7)
    again = randomization_test_columns(deltas, n_resamples=3000, seed=7)
    other = randomization_test_columns(deltas, n_resamples=3000, seed=8)
    np.testing.assert_array_equal(first.p_value, again.p_value)
    assert not np.array_equal(first.p_value, other.p_value)
    for j in range(4):
        alone = randomization_test(np.zeros(500), deltas[:, j], n_resamples=3000, seed=7)
        assert alone.p_value == first.p_value[j]
    gen = randomization_test_columns(deltas, n_resamples=3000, seed=np.random.default_rng(1))
    assert gen.p_value.shape == (4,)


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstrap_agrees_with_scipy_bootstrap(method, scipy_method):
    rng = np.random.default_rng(4)
    deltas = rng.exponential(0.2, size=(80, 3)) - 0.15  # skewed, so BCa differs from percentile
    low, high = bootstrap_ci_columns(deltas, n_resamples=20_000, method=method, seed=1)
    ref = sps.bootstrap((deltas.T,), np.mean, axis=-1, n_resamples=20_000, method=scipy_method, rng=1)
    se = deltas.std(axis=0, ddof=1) / math.sqrt(80)
    np.testing.assert_array_less(np.abs(low - ref.confidence_interval.low), 0.1 * se)
    np.testing.assert_array_less(np.abs(high - ref.confidence_interval.high), 0.1 * se)


def test_bca_shifts_toward_the_skew():
    rng = np.random.default_rng(9)
    d = rng.exponential(1.0, size=60)
    lo_p, hi_p = bootstrap_ci(d, method="percentile", seed=2)
    lo_b, hi_b = bootstrap_ci(d, method="bca", seed=2)
    assert lo_b > lo_p and hi_b > hi_p


def test_bootstrap_is_reproducible_and_columns_match_single_measure():
    rng = np.random.default_rng(6)
    deltas = rng.normal(0.0, 0.1, size=(200, 3))
    low, high = bootstrap_ci_columns(deltas, n_resamples=2000, seed=5)
    for j in range(3):
        assert bootstrap_ci(deltas[:, j], n_resamples=2000, seed=5) == (low[j], high[j])
    again = bootstrap_ci_columns(deltas, n_resamples=2000, seed=5)
    np.testing.assert_array_equal(again[0], low)
    assert bootstrap_ci(deltas[:, 0], n_resamples=2000, seed=6) != (low[0], high[0])
    means = bootstrap_means(deltas, n_resamples=2000, seed=5)
    assert means.shape == (2000, 3)
    np.testing.assert_allclose(np.quantile(means, 0.025, axis=0), low, rtol=1e-12)


def test_bootstrap_degenerate_inputs_give_the_mean():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bootstrap_ci([0.3]) == (0.3, 0.3)
        assert bootstrap_ci([0.1, 0.1, 0.1], method="bca") == (0.1, 0.1)
        low, high = bootstrap_ci_columns(np.array([[0.0, 0.1], [0.0, 0.3], [0.0, 0.2]]), method="bca")
    assert (low[0], high[0]) == (0.0, 0.0)
    assert 0.1 <= low[1] <= high[1] <= 0.3


@pytest.mark.slow
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_ci_covers_the_true_delta_95_percent_of_the_time(method):
    # 2,000 simulated query sets of 200 queries with a known true delta of 0.02; the trials
    # are the columns of one matrix, so they share the resampled query indices (each trial
    # is still a valid bootstrap of its own data).
    rng = np.random.default_rng(2024)
    n, trials, true_delta = 200, 2000, 0.02
    difficulty = rng.beta(2.0, 5.0, size=(n, trials))
    a = difficulty + rng.normal(0.0, 0.15, size=(n, trials))
    b = difficulty + true_delta + rng.normal(0.0, 0.15, size=(n, trials))
    low, high = bootstrap_ci_columns(b - a, n_resamples=2000, method=method, seed=3)
    coverage = np.mean((low <= true_delta) & (true_delta <= high))
    assert 0.93 <= coverage <= 0.97, coverage


# --------------------------------------------------------------------------- error rates by simulation


@pytest.mark.slow
def test_t_test_false_positive_rate_is_alpha_under_no_difference():
    rng = np.random.default_rng(77)
    n, trials = 40, 2000
    difficulty = rng.beta(2.0, 5.0, size=(n, trials))
    a = difficulty + rng.normal(0.0, 0.15, size=(n, trials))
    b = difficulty + rng.normal(0.0, 0.15, size=(n, trials))
    p = paired_t_test_columns(b - a).p_value
    assert 0.035 <= np.mean(p <= 0.05) <= 0.065


@pytest.mark.slow
def test_randomization_false_positive_rate_is_alpha_under_no_difference():
    rng = np.random.default_rng(78)
    d = rng.laplace(0.0, 0.1, size=(40, 1000))  # symmetric, heavy-tailed deltas
    p = randomization_test_columns(d, n_resamples=1000, seed=1).p_value
    assert 0.03 <= np.mean(p <= 0.05) <= 0.07


@pytest.mark.slow
def test_t_test_power_matches_the_noncentral_t_prediction():
    # d_z = 0.5 with 34 queries: power 0.8078 by the noncentral t (G*Power gives the same).
    rng = np.random.default_rng(79)
    trials = 4000
    d = rng.normal(0.5, 1.0, size=(34, trials))
    rate = np.mean(paired_t_test_columns(d).p_value <= 0.05)
    assert abs(rate - paired_t_power(0.5, 1.0, 34)) <= 0.025


# --------------------------------------------------------------------------- corrections


@pytest.mark.parametrize(
    ("p", "method", "expected"),
    [
        ([0.01, 0.02, 0.03, 0.04, 0.05], "holm", [0.05, 0.08, 0.09, 0.09, 0.09]),
        ([0.01, 0.02, 0.03, 0.04, 0.05], "bonferroni", [0.05, 0.10, 0.15, 0.20, 0.25]),
        ([0.01, 0.02, 0.03, 0.04, 0.05], "bh", [0.05, 0.05, 0.05, 0.05, 0.05]),
        ([0.5, 0.001, 0.3, 0.02], "holm", [0.6, 0.004, 0.6, 0.06]),
        ([0.5, 0.001, 0.3, 0.02], "bonferroni", [1.0, 0.004, 1.0, 0.08]),
        ([0.5, 0.001, 0.3, 0.02], "bh", [0.5, 0.004, 0.4, 0.04]),
        ([0.5, 0.001, 0.3, 0.02], "none", [0.5, 0.001, 0.3, 0.02]),
        ([0.04, 0.04, 0.9], "holm", [0.12, 0.12, 0.9]),  # ties
        ([0.04, 0.04, 0.9], "bh", [0.06, 0.06, 0.9]),
        ([0.3], "holm", [0.3]),
        ([], "holm", []),
    ],
)
def test_adjust_p_hand_worked(p, method, expected):
    np.testing.assert_allclose(adjust_p(p, method=method), expected, rtol=1e-12, atol=1e-15)


def test_adjust_p_keeps_shape_and_order_and_bounds():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=(3, 5)) ** 3
    for method in ("holm", "bonferroni", "bh", "none"):
        adj = adjust_p(p, method=method)
        assert adj.shape == (3, 5)
        assert np.all(adj >= p) and np.all(adj <= 1.0)
        order = np.argsort(p, axis=None)
        assert np.all(np.diff(adj.ravel()[order]) >= 0)  # monotone in the raw p-values
    holm, bonf, bh = (adjust_p(p, method=m) for m in ("holm", "bonferroni", "bh"))
    assert np.all(bh <= holm) and np.all(holm <= bonf)


# --------------------------------------------------------------------------- effect size, wins


def test_effect_size_and_win_tie_loss_hand_worked():
    assert effect_size([0.1, 0.2, 0.3]) == pytest.approx(2.0)
    assert effect_size([-0.1, 0.1, -0.3, 0.3]) == 0.0
    assert effect_size([0.2, 0.2]) == math.inf and effect_size([0.0, 0.0]) == 0.0
    d = np.array([[0.1, 0.0], [0.2, 0.0], [0.3, 0.5]])
    np.testing.assert_allclose(effect_size_columns(d), [2.0, (0.5 / 3) / math.sqrt(1 / 12)], rtol=1e-12)
    assert win_tie_loss([0.5, 0.2, 0.3, 0.4], [0.6, 0.2, 0.1, 0.4]) == WinTieLoss(1, 2, 1)
    assert win_tie_loss([0.5, 0.2, 0.3], [0.505, 0.1, 0.3], eps=0.01) == WinTieLoss(0, 2, 1)
    assert win_tie_loss([], []) == WinTieLoss(0, 0, 0)
    wins, ties, losses = win_tie_loss_columns(np.array([[0.1, -0.1], [0.0, -0.2], [-0.3, 0.0]]))
    assert wins.tolist() == [1, 0] and ties.tolist() == [1, 1] and losses.tolist() == [1, 2]


# --------------------------------------------------------------------------- power


@pytest.mark.parametrize(("dz", "power", "expected"), [(0.5, 0.8, 34), (0.2, 0.8, 199), (0.8, 0.8, 15), (0.5, 0.9, 44)])
def test_queries_needed_matches_gpower(dz, power, expected):
    # G*Power 3.1, t tests, "Means: difference between two dependent means (matched pairs)",
    # two tails, alpha 0.05.
    assert queries_needed(dz * 0.1, 0.1, power=power) == expected
    assert paired_t_power(dz, 1.0, expected) >= power > paired_t_power(dz, 1.0, expected - 1)


def test_normal_approximation_would_undercount():
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert math.ceil((z / 0.5) ** 2) == 32 < queries_needed(0.5, 1.0)


@pytest.mark.parametrize("n", [2, 3, 10, 34, 200, 7000])
def test_minimum_detectable_effect_inverts_queries_needed(n):
    sd = 0.17
    mde = minimum_detectable_effect(sd, n)
    assert paired_t_power(mde, sd, n) == pytest.approx(0.8, abs=1e-9)
    assert queries_needed(mde, sd) == n
    assert queries_needed(mde * 0.99, sd) > n
    if n > 2:
        assert minimum_detectable_effect(sd, n - 1) > mde


def test_minimum_detectable_effect_scales_and_approaches_normal():
    assert minimum_detectable_effect(0.4, 50) == pytest.approx(2 * minimum_detectable_effect(0.2, 50), rel=1e-9)
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert minimum_detectable_effect(0.2, 100_000) == pytest.approx(z * 0.2 / math.sqrt(100_000), rel=1e-3)
    assert minimum_detectable_effect(0.0, 50) == 0.0
    assert queries_needed(0.01, 0.0) == 2


# --------------------------------------------------------------------------- randomized Tukey HSD


def test_tukey_finds_a_strong_difference_and_not_a_null_one():
    rng = np.random.default_rng(31)
    base = rng.beta(2.0, 5.0, size=(60, 1))
    scores = base + rng.normal(0.0, 0.1, size=(60, 4))
    scores[:, 3] += 0.15
    res = randomized_tukey_hsd(scores, n_resamples=2000, seed=1)
    assert res.p_value.shape == (4, 4) and np.allclose(res.p_value, res.p_value.T)
    assert np.all(np.diag(res.p_value) == 1.0)
    np.testing.assert_allclose(res.means, scores.mean(axis=0), rtol=1e-12)
    for i, j, diff, p in res.pairs():
        assert diff == pytest.approx(scores[:, j].mean() - scores[:, i].mean())
        assert (p < 0.01) if j == 3 else (p > 0.05)


def test_tukey_agrees_with_full_enumeration():
    scores = np.array([[0.2, 0.3, 0.9], [0.1, 0.2, 0.8], [0.4, 0.4, 0.9], [0.3, 0.5, 1.0], [0.2, 0.2, 0.7]])
    perms = [list(p) for p in itertools.permutations(range(3))]
    ranges = []
    for choice in itertools.product(range(6), repeat=5):  # all 7,776 within-query shuffles
        sums = sum(scores[q, perms[c]] for q, c in enumerate(choice))
        ranges.append(sums.max() - sums.min())
    ranges = np.array(ranges)
    res = randomized_tukey_hsd(scores, n_resamples=20_000, seed=2)
    for i, j, diff, p in res.pairs():
        exact = np.mean(ranges >= abs(diff) * 5 - 1e-12)
        assert abs(p - exact) <= mc_tolerance(exact, 20_000) / math.sqrt(2), (i, j, p, exact)


def test_tukey_shuffles_are_uniform_permutations():
    from rankgate.stats.tukey import RowShuffler

    row = np.array([[1.0, 10.0, 100.0, 1000.0]])  # n = 1: the sums are the shuffled row itself
    drawn = RowShuffler(row, 48_000).sums(48_000, np.random.default_rng(3))
    patterns, counts = np.unique(drawn, axis=0, return_counts=True)
    assert len(patterns) == 24 and all(sorted(p) == sorted(row[0]) for p in patterns.tolist())
    assert sps.chisquare(counts).pvalue > 0.001


def test_tukey_with_two_systems_is_the_randomization_test():
    rng = np.random.default_rng(32)
    a, b = ir_scores(rng, 50, 0.03)
    p_tukey = randomized_tukey_hsd(np.column_stack([a, b]), n_resamples=20_000).p_value[0, 1]
    p_rand = randomization_test(a, b, n_resamples=20_000).p_value
    assert abs(p_tukey - p_rand) <= mc_tolerance(p_rand, 20_000)


def test_tukey_is_reproducible_and_p_grows_as_the_difference_shrinks():
    rng = np.random.default_rng(33)
    scores = rng.normal(size=(30, 5)) + np.array([0.0, 0.1, 0.2, 0.4, 0.8])
    one = randomized_tukey_hsd(scores, n_resamples=1000, seed=4)
    two = randomized_tukey_hsd(scores, n_resamples=1000, seed=4)
    np.testing.assert_array_equal(one.p_value, two.p_value)
    pairs = sorted(one.pairs(), key=lambda t: abs(t[2]))
    assert all(p1 >= p2 for (*_, p1), (*_, p2) in itertools.pairwise(pairs))


@pytest.mark.slow
def test_tukey_family_wise_error_rate_under_no_difference():
    rng = np.random.default_rng(34)
    trials, rejected = 300, 0
    for t in range(trials):
        scores = rng.beta(2.0, 5.0, size=(25, 1)) + rng.normal(0.0, 0.1, size=(25, 4))
        res = randomized_tukey_hsd(scores, n_resamples=500, seed=t)
        rejected += bool((res.p_value <= 0.05).any())
    assert rejected / trials <= 0.09  # expected <= 0.05; 0.09 is ~3 standard errors above


# --------------------------------------------------------------------------- paired_summary


def test_paired_summary_agrees_with_the_parts():
    rng = np.random.default_rng(41)
    base = rng.uniform(size=(120, 3))
    cand = np.clip(base + rng.normal(0.02, 0.1, size=(120, 3)), 0, 1)
    cand[:, 2] = base[:, 2]  # no change on the last measure
    s = paired_summary(base, cand, randomization=True, n_resamples=2000, n_permutations=2000, seed=9, names="ABC")
    d = cand - base
    np.testing.assert_allclose(s.delta, d.mean(axis=0), atol=1e-15)
    np.testing.assert_allclose(s.relative_delta, s.delta / base.mean(axis=0), rtol=1e-12)
    low, high = bootstrap_ci_columns(d, n_resamples=2000, seed=9)
    np.testing.assert_array_equal(s.ci_low, low)
    np.testing.assert_array_equal(s.ci_high, high)
    np.testing.assert_array_equal(s.t_p_value, paired_t_test_columns(d).p_value)
    np.testing.assert_array_equal(s.p_value, s.t_p_value)
    assert s.randomization_p_value is not None
    np.testing.assert_array_equal(
        s.randomization_p_value, randomization_test_columns(d, n_resamples=2000, seed=9).p_value
    )
    assert s.wins[2] == 0 and s.ties[2] == 120 and s.p_value[2] == 1.0
    assert s.mde[0] == pytest.approx(minimum_detectable_effect(d[:, 0].std(ddof=1), 120))
    assert s.notes == ("C: the candidate scores as the baseline on every query (p = 1).",)
    assert s.settings["seed"] == 9 and s.settings["n_permutations"] == 2000


def test_paired_summary_randomization_choice_and_one_measure():
    a, b = ir_scores(np.random.default_rng(42), 30, 0.05)
    s = paired_summary(a, b, test="randomization", n_permutations=999)
    assert s.test == "randomization" and s.p_value.shape == (1,)
    assert s.randomization_p_value is not None
    assert s.p_value[0] == s.randomization_p_value[0] == randomization_test(a, b, n_resamples=999).p_value
    zero = paired_summary([[0.0], [0.0], [0.0]], [[0.1], [0.0], [0.2]])
    assert math.isnan(zero.relative_delta[0])
    assert any("Only 3 queries" in note for note in zero.notes)


# --------------------------------------------------------------------------- errors


ERRORS = [
    (
        lambda: paired_t_test([0.1], [0.2]),
        InputError,
        "The 'a' parameter of paired_t_test must be a 1-D array of at least 2 values of finite numbers. "
        "Got an array of shape (1,) instead.",
    ),
    (
        lambda: paired_t_test([], []),
        InputError,
        "The 'a' parameter of paired_t_test must be a 1-D array of at least 2 values",
    ),
    (
        lambda: paired_t_test([0.1, 0.2], [0.1, 0.2, 0.3]),
        InputError,
        "The 'b' parameter of paired_t_test must have the same length as 'a' (2, one value per query, in "
        "the same query order). Got 3 values instead.",
    ),
    (
        lambda: paired_t_test([0.1, float("nan")], [0.1, 0.2]),
        InputError,
        "The 'a' parameter of paired_t_test must hold finite numbers only. Got 1 NaN or infinite value instead.",
    ),
    (
        lambda: paired_t_test(["x", "y"], [0.1, 0.2]),
        InputError,
        "The 'a' parameter of paired_t_test must be a 1-D array of at least 2 values of finite numbers. "
        "Got ['x', 'y'] instead.",
    ),
    (
        lambda: paired_t_test_columns(np.zeros(5)),
        InputError,
        "The 'deltas' parameter of paired_t_test_columns must be a 2-D array (queries x measures) of at "
        "least 2 rows of finite numbers. Got an array of shape (5,) instead.",
    ),
    (
        lambda: randomization_test([], []),
        InputError,
        "The 'a' parameter of randomization_test must be a 1-D array of at least 1 value of finite "
        "numbers. Got an array of shape (0,) instead.",
    ),
    (
        lambda: randomization_test([0.1], [0.2], n_resamples=0),
        ConfigError,
        "The 'n_resamples' parameter of randomization_test must be an int >= 1. Got 0 instead.",
    ),
    (
        lambda: randomization_test([0.1], [0.2], n_resamples=1e4),
        ConfigError,
        "The 'n_resamples' parameter of randomization_test must be an int >= 1. Got 10000.0 instead.",
    ),
    (
        lambda: randomization_test([0.1], [0.2], seed=-1),
        ConfigError,
        "The 'seed' parameter of randomization_test must be an int >= 0, a numpy SeedSequence or "
        "Generator, or None. Got -1 instead.",
    ),
    (
        lambda: bootstrap_ci([]),
        InputError,
        "The 'deltas' parameter of bootstrap_ci must be a 1-D array of at least 1 value of finite "
        "numbers. Got an array of shape (0,) instead.",
    ),
    (
        lambda: bootstrap_ci([0.1, 0.2], confidence=95),
        ConfigError,
        "The 'confidence' parameter of bootstrap_ci must be a number strictly between 0 and 1. Got 95 instead.",
    ),
    (
        lambda: bootstrap_ci([0.1, 0.2], method="basic"),
        ConfigError,
        "The 'method' parameter of bootstrap_ci must be one of 'percentile', 'bca'. Got 'basic' instead.",
    ),
    (
        lambda: adjust_p([0.2, float("nan")]),
        InputError,
        "The 'p_values' parameter of adjust_p must hold numbers in [0, 1] only. Got nan instead.",
    ),
    (
        lambda: adjust_p([0.2, 1.5]),
        InputError,
        "The 'p_values' parameter of adjust_p must hold numbers in [0, 1] only. Got 1.5 instead.",
    ),
    (
        lambda: adjust_p([0.2], method="fdr"),
        ConfigError,
        "The 'method' parameter of adjust_p must be one of 'holm', 'bonferroni', 'bh', 'none'. Got 'fdr' instead.",
    ),
    (
        lambda: effect_size([0.3]),
        InputError,
        "The 'deltas' parameter of effect_size must be a 1-D array of at least 2 values of finite "
        "numbers. Got an array of shape (1,) instead.",
    ),
    (
        lambda: win_tie_loss([0.1], [0.2], eps=-1),
        ConfigError,
        "The 'eps' parameter of win_tie_loss must be a finite number >= 0. Got -1 instead.",
    ),
    (
        lambda: minimum_detectable_effect(0.1, 1),
        ConfigError,
        "The 'n' parameter of minimum_detectable_effect must be an int >= 2. Got 1 instead.",
    ),
    (
        lambda: minimum_detectable_effect(-0.1, 10),
        ConfigError,
        "The 'sd_delta' parameter of minimum_detectable_effect must be a finite number >= 0. Got -0.1 instead.",
    ),
    (
        lambda: minimum_detectable_effect(0.1, 10, power=0.01),
        ConfigError,
        "The 'power' parameter of minimum_detectable_effect must be greater than alpha (0.05). Got 0.01 instead.",
    ),
    (
        lambda: queries_needed(0.0, 0.1),
        ConfigError,
        "The 'delta' parameter of queries_needed must be a nonzero number (no number of queries detects "
        "a delta of 0). Got 0.0 instead.",
    ),
    (
        lambda: queries_needed(0.1, 0.1, alpha=0),
        ConfigError,
        "The 'alpha' parameter of queries_needed must be a number strictly between 0 and 1. Got 0 instead.",
    ),
    (
        lambda: randomized_tukey_hsd([[0.1], [0.2]]),
        InputError,
        "The 'scores' parameter of randomized_tukey_hsd must have one column per system, at least 2. Got "
        "an array of shape (2, 1) instead.",
    ),
    (
        lambda: paired_summary(np.zeros((5, 2)), np.zeros((5, 3))),
        InputError,
        "The 'candidate' parameter of paired_summary must have the baseline's shape (5, 2) (queries x "
        "measures, same query order). Got an array of shape (5, 3) instead.",
    ),
    (
        lambda: paired_summary([0.1], [0.2]),
        InputError,
        "The 'baseline' parameter of paired_summary must be a 1-D array of at least 2 values of finite "
        "numbers. Got an array of shape (1,) instead.",
    ),
    (
        lambda: paired_summary(np.zeros((5, 2)), np.zeros((5, 2)), test="wilcoxon"),
        ConfigError,
        "The 'test' parameter of paired_summary must be one of 't', 'randomization'. Got 'wilcoxon' instead.",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), ERRORS)
def test_bad_input_raises_one_clear_error(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error) as info:
            call()
    assert isinstance(info.value, RankgateError) and isinstance(info.value, ValueError)
    assert str(info.value).startswith(message)


def test_single_query_is_legal_where_it_makes_sense():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert randomization_test([0.2], [0.5]).p_value == 1.0  # 2 sign vectors, both reach |0.3|
        assert bootstrap_ci([0.3]) == (0.3, 0.3)
        assert randomized_tukey_hsd([[0.1, 0.2, 0.3]], n_resamples=100).p_value.shape == (3, 3)


# --------------------------------------------------------------------------- bootstrap at scale (issue 23 item 12)


def _lattice_scores(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    skill = rng.beta(2.0, 3.0, size=n)
    first = rng.geometric(np.maximum(skill, 0.05))
    return np.column_stack(
        [rng.binomial(10, skill) / 10.0, np.where(first <= 10, 1.0 / first, 0.0), rng.binomial(8, skill) / 8.0]
    )


def test_large_lattice_bootstrap_draws_distinct_rows_and_agrees_with_query_resampling(monkeypatch):
    import rankgate.stats.bootstrap as bootstrap

    d = _lattice_scores(80_000, 3)
    low, high = bootstrap_ci_columns(d, n_resamples=4000, seed=1)
    np.testing.assert_array_equal(bootstrap_ci_columns(d, n_resamples=4000, seed=1)[0], low)  # reproducible
    monkeypatch.setattr(bootstrap, "LARGE_N", 10**9)  # the per-query draws
    ref_low, ref_high = bootstrap_ci_columns(d, n_resamples=4000, seed=1)
    assert not np.array_equal(low, ref_low)  # another stream...
    se = d.std(axis=0, ddof=1) / math.sqrt(len(d))
    np.testing.assert_array_less(np.abs(low - ref_low), 0.15 * se)  # ...the same distribution
    np.testing.assert_array_less(np.abs(high - ref_high), 0.15 * se)


def test_the_bootstrap_of_a_million_lattice_queries_draws_distinct_rows_not_queries(monkeypatch):
    # Lattice values at 1M queries take the multinomial path over distinct rows (seconds), never
    # a draw per query per resample (minutes): the per-query paths are made to fail if reached.
    from rankgate.stats import bootstrap

    def per_query(*args, **kwargs):
        raise AssertionError("lattice rows were resampled query by query")

    distinct_rows = []
    of_distinct = bootstrap._resampled_means_of_distinct

    def spy(values, counts, n_resamples, rng):
        distinct_rows.append(values.shape[0])
        return of_distinct(values, counts, n_resamples, rng)

    monkeypatch.setattr(bootstrap, "_resampled_means_by_block", per_query)
    monkeypatch.setattr(bootstrap, "_resampled_means_of_distinct", spy)
    d = _lattice_scores(1_000_000, 4)
    low, high = bootstrap_ci_columns(d, n_resamples=10_000, seed=0)
    assert len(distinct_rows) == 1 and distinct_rows[0] * 4 <= len(d)
    mean = d.mean(axis=0)
    assert ((low < mean) & (mean < high)).all()

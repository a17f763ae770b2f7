"""Everything rankgate reports about one candidate against the baseline, per measure.

`paired_summary` takes the per-query score matrices of the baseline and of one candidate
(queries x measures, same queries in the same order) and computes, for every measure at
once: the means, the delta (absolute and relative), the paired-bootstrap confidence
interval of the delta, the paired t-test, optionally the randomization test, the effect
size, win/tie/loss counts, the SD of per-query deltas and the minimum detectable effect.
The measures share the bootstrap resamples and the random sign flips.

Adjusting p-values across candidates x measures is left to the caller (`adjust_p`), since
the family spans several candidates.

>>> base = [[0.2, 0.5], [0.4, 0.1], [0.3, 0.3], [0.5, 0.2], [0.1, 0.4], [0.4, 0.4]]
>>> cand = [[0.3, 0.5], [0.5, 0.1], [0.4, 0.3], [0.5, 0.3], [0.2, 0.4], [0.6, 0.4]]
>>> s = paired_summary(base, cand, names=["nDCG@10", "RR@10"])
>>> s.delta.round(4).tolist(), s.wins.tolist(), s.ties.tolist(), s.losses.tolist()
([0.1, 0.0167], [5, 1], [1, 5], [0, 0])
>>> s.t_p_value.round(4).tolist()
[0.0117, 0.3632]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.errors import InputError
from rankgate.stats._common import (
    FloatArray,
    IntArray,
    Seed,
    as_scores,
    check_choice,
    check_fraction,
    check_resamples,
)
from rankgate.stats.bootstrap import CI_METHODS, bootstrap_ci_columns
from rankgate.stats.effect import effect_size_columns, win_tie_loss_columns
from rankgate.stats.paired import paired_t_test_columns, randomization_test_columns
from rankgate.stats.power import minimum_detectable_effect

TESTS: tuple[str, ...] = ("t", "randomization")


@dataclass(frozen=True, eq=False)
class PairedSummary:
    """One candidate against the baseline; every array has one value per measure (column).

    Attributes:
        n_queries: queries compared.
        baseline_mean: mean score of the baseline.
        mean: mean score of the candidate.
        delta: ``mean - baseline_mean``.
        relative_delta: ``delta / |baseline_mean|``; NaN where the baseline mean is 0.
        ci_low: low end of the bootstrap confidence interval of ``delta``.
        ci_high: high end of it.
        t_statistic: paired t.
        t_p_value: two-sided p-value of the paired t-test.
        randomization_p_value: two-sided p-value of the randomization test, or None when it was not run.
        p_value: the p-value of ``test`` (the one to adjust and report).
        test: ``"t"`` or ``"randomization"``.
        effect_size: Cohen's d_z (``delta / sd_delta``).
        sd_delta: SD of the per-query deltas (ddof=1).
        mde: smallest true delta detected with probability ``power`` at level ``alpha`` (t-test).
        wins: queries where the candidate scores higher (by more than ``tie_eps``).
        ties: queries within ``tie_eps``.
        losses: queries where it scores lower.
        settings: every option used (resamples, confidence, seed, ...).
        notes: degenerate cases met, in words (e.g. a measure on which nothing changed).
    """

    n_queries: int
    baseline_mean: FloatArray
    mean: FloatArray
    delta: FloatArray
    relative_delta: FloatArray
    ci_low: FloatArray
    ci_high: FloatArray
    t_statistic: FloatArray
    t_p_value: FloatArray
    randomization_p_value: FloatArray | None
    p_value: FloatArray
    test: str
    effect_size: FloatArray
    sd_delta: FloatArray
    mde: FloatArray
    wins: IntArray
    ties: IntArray
    losses: IntArray
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _checked_options(
    test: str, ci_method: str, n_resamples: int, n_permutations: int, alpha: float, power: float, func: str
) -> tuple[str, float, float]:
    """``paired_summary``'s options checked up front, each message naming its own parameter (not
    the internal function a count is handed to): the test, alpha and power."""
    chosen = check_choice(test, "test", func, TESTS)
    check_choice(ci_method, "ci_method", func, CI_METHODS)
    check_resamples(n_resamples, func)
    check_resamples(n_permutations, func, "n_permutations")
    return chosen, check_fraction(alpha, "alpha", func), check_fraction(power, "power", func)


def paired_summary(
    baseline: Any,
    candidate: Any,
    *,
    test: str = "t",
    randomization: bool = False,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    confidence: float = 0.95,
    ci_method: str = "percentile",
    tie_eps: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    seed: Seed = 0,
    names: Sequence[str] | None = None,
) -> PairedSummary:
    """Compare ``candidate`` with ``baseline`` on every measure (column).

    Args:
        baseline: per-query scores of the baseline, one row per query (at least 2) and one
            column per measure; a 1-D array is one measure.
        candidate: per-query scores of the candidate, same shape and query order.
        test: the test whose p-value goes into ``p_value``: ``"t"`` (paired t-test) or
            ``"randomization"`` (paired sign-flip test).
        randomization: also run the randomization test when ``test`` is ``"t"``.
        n_resamples: bootstrap resamples for the confidence interval.
        n_permutations: random sign vectors for the randomization test.
        confidence: coverage of the confidence interval.
        ci_method: ``"percentile"`` or ``"bca"``.
        tie_eps: |delta| <= tie_eps counts as a tie.
        alpha: significance level used for the minimum detectable effect.
        power: power used for the minimum detectable effect.
        seed: an int (reproducible), a numpy ``SeedSequence`` or ``Generator``, or None.
        names: measure names, for ``notes`` (default ``"column 0"``, ...).

    Returns:
        A `PairedSummary`.

    Raises:
        InputError: fewer than 2 queries, shapes that differ, or non-finite values.
        ConfigError: a bad option value.
    """
    func = "paired_summary"
    base, cand = _paired_matrices(baseline, candidate, func)
    chosen, level, target = _checked_options(test, ci_method, n_resamples, n_permutations, alpha, power, func)
    n, m = base.shape
    labels = _column_names(names, m, func)

    d = cand - base
    base_mean = base.mean(axis=0)
    cand_mean = cand.mean(axis=0)
    delta = cand_mean - base_mean
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(base_mean != 0, delta / np.abs(base_mean), np.nan)
    ci_low, ci_high = bootstrap_ci_columns(
        d, n_resamples=n_resamples, confidence=confidence, method=ci_method, seed=seed
    )
    t = paired_t_test_columns(d)
    rand_p = None
    if chosen == "randomization" or randomization:
        rand_p = randomization_test_columns(d, n_resamples=n_permutations, seed=seed).p_value
    sd = d.std(axis=0, ddof=1)
    wins, ties, losses = win_tie_loss_columns(d, eps=tie_eps)
    mde = np.array([minimum_detectable_effect(s, n, alpha=level, power=target) for s in sd])

    notes = _notes(labels, d, delta, sd)
    settings = {
        "test": chosen,
        "n_queries": n,
        "n_resamples": n_resamples,
        "n_permutations": n_permutations if rand_p is not None else None,
        "confidence": confidence,
        "ci_method": ci_method,
        "tie_eps": tie_eps,
        "mde_alpha": level,
        "mde_power": target,
        "seed": seed if isinstance(seed, int) or seed is None else repr(seed),
    }
    return PairedSummary(
        n_queries=n,
        baseline_mean=base_mean,
        mean=cand_mean,
        delta=delta,
        relative_delta=relative,
        ci_low=ci_low,
        ci_high=ci_high,
        t_statistic=t.statistic,
        t_p_value=t.p_value,
        randomization_p_value=rand_p,
        p_value=rand_p if chosen == "randomization" and rand_p is not None else t.p_value,
        test=chosen,
        effect_size=effect_size_columns(d),
        sd_delta=sd,
        mde=mde,
        wins=wins,
        ties=ties,
        losses=losses,
        settings=settings,
        notes=tuple(notes),
    )


def _paired_matrices(baseline: Any, candidate: Any, func: str) -> tuple[FloatArray, FloatArray]:
    """Both score arrays as (queries x measures) matrices of the same shape."""
    base = _as_matrix(baseline, "baseline", func)
    cand = _as_matrix(candidate, "candidate", func)
    if base.shape != cand.shape:
        raise InputError(
            f"The 'candidate' parameter of {func} must have the baseline's shape {base.shape} "
            f"(queries x measures, same query order). Got an array of shape {cand.shape} instead."
        )
    return base, cand


def _column_names(names: Sequence[str] | None, m: int, func: str) -> list[str]:
    """The names of the ``m`` measures, for notes (default ``"column 0"``, ...)."""
    labels = list(names) if names is not None else [f"column {j}" for j in range(m)]
    if len(labels) != m:
        raise InputError(f"The 'names' parameter of {func} must name the {m} columns. Got {len(labels)} names instead.")
    return labels


def _notes(labels: list[str], d: FloatArray, delta: FloatArray, sd: FloatArray) -> list[str]:
    """What a reader should know about the numbers: columns without spread, too few queries."""
    notes = []
    for j in np.flatnonzero(sd == 0):
        if delta[j] == 0:
            notes.append(f"{labels[j]}: the candidate scores as the baseline on every query (p = 1).")
        else:
            notes.append(f"{labels[j]}: every query changes by the same {d[0, j]:+.6g} (no spread; t-test p = 0).")
    n = d.shape[0]
    if n < 10:
        notes.append(f"Only {n} queries: p-values and intervals are rough.")
    return notes


def _as_matrix(x: Any, name: str, func: str) -> FloatArray:
    try:
        ndim = np.ndim(x)
    except ValueError:  # ragged nested lists: let as_scores word the error
        ndim = 2
    if ndim == 1:
        return as_scores(x, name, func, ndim=1, min_rows=2)[:, None]
    return as_scores(x, name, func, ndim=2, min_rows=2)

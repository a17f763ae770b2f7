"""Statistics for comparing retrieval systems over the same queries (pure numpy and scipy).

Everything here works on per-query scores: arrays with one value per query, or matrices
with one row per query and one column per measure (or per system, for Tukey's test).
Deltas are candidate minus baseline. Functions that draw random numbers take a ``seed``
(default 0): the same seed gives the same numbers on every run and platform.

==============================  =====================================================
`paired_summary`                everything about one candidate vs the baseline
`paired_t_test`                 two-sided paired t-test (same numbers as scipy's ttest_rel)
`randomization_test`            two-sided paired sign-flip test, p with the +1 correction
`bootstrap_ci`                  paired-bootstrap CI of the mean delta (percentile or BCa)
`adjust_p`                      Holm, Bonferroni, Benjamini-Hochberg or none
`effect_size`, `win_tie_loss`   Cohen's d_z; per-query wins, ties and losses
`minimum_detectable_effect`     power analysis of the paired t-test (noncentral t)
`queries_needed`, `paired_t_power`
`randomized_tukey_hsd`          all pairs of k systems, queries as blocks
==============================  =====================================================

The ``*_columns`` forms take a (queries x measures) delta matrix and return one value per
column; columns share the random resamples, and each column gets exactly the value the
one-measure function gives for it with the same seed.

Every resample count (``n_resamples``, ``n_permutations``; the CLI's ``--resamples`` and
``--permutations``; the gate file's ``n_resamples``) is an int from `MIN_RESAMPLES` (1) to
`MAX_RESAMPLES` (10,000,000): one range, defined once here.

scipy is imported inside the functions that need it, so ``import rankgate.stats`` is cheap.
"""

from __future__ import annotations

from rankgate.stats._common import MAX_RESAMPLES, MIN_RESAMPLES
from rankgate.stats.bootstrap import bootstrap_ci, bootstrap_ci_columns, bootstrap_means
from rankgate.stats.corrections import adjust_p
from rankgate.stats.effect import (
    WinTieLoss,
    effect_size,
    effect_size_columns,
    win_tie_loss,
    win_tie_loss_columns,
)
from rankgate.stats.paired import (
    ColumnTestResult,
    TestResult,
    paired_t_test,
    paired_t_test_columns,
    randomization_test,
    randomization_test_columns,
)
from rankgate.stats.power import minimum_detectable_effect, paired_t_power, queries_needed
from rankgate.stats.summary import PairedSummary, paired_summary
from rankgate.stats.tukey import TukeyResult, randomized_tukey_hsd

__all__ = [  # noqa: RUF022 - sorted() order, as tests/test_stats.py checks
    "ColumnTestResult",
    "MAX_RESAMPLES",
    "MIN_RESAMPLES",
    "PairedSummary",
    "TestResult",
    "TukeyResult",
    "WinTieLoss",
    "adjust_p",
    "bootstrap_ci",
    "bootstrap_ci_columns",
    "bootstrap_means",
    "effect_size",
    "effect_size_columns",
    "minimum_detectable_effect",
    "paired_summary",
    "paired_t_power",
    "paired_t_test",
    "paired_t_test_columns",
    "queries_needed",
    "randomization_test",
    "randomization_test_columns",
    "randomized_tukey_hsd",
    "win_tie_loss",
    "win_tie_loss_columns",
]

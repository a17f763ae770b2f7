"""Multiple-comparison adjustment of p-values (across every candidate x measure tested).

- ``"holm"`` (default): Holm's step-down method; controls the family-wise error rate, and
  rejects everything Bonferroni rejects and sometimes more. With the p-values sorted
  ascending, ``p_(i) * (m - i + 1)``, made non-decreasing.
- ``"bonferroni"``: ``p * m``; family-wise error rate.
- ``"bh"``: Benjamini-Hochberg step-up; controls the false discovery rate.
  ``p_(i) * m / i``, made non-decreasing from the largest down.
- ``"none"``: the p-values as they are.

Adjusted values are capped at 1 and keep the input's shape; they are what
``statsmodels.stats.multitest.multipletests(p, method="holm" | "bonferroni" | "fdr_bh")``
returns. A p-value is significant at level alpha when its adjusted value is <= alpha.

>>> adjust_p([0.01, 0.04, 0.03, 0.20], method="holm").tolist()
[0.04, 0.09, 0.09, 0.2]
>>> adjust_p([0.01, 0.04, 0.03, 0.20], method="bh").round(6).tolist()
[0.04, 0.053333, 0.053333, 0.2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankgate.errors import InputError
from rankgate.stats._common import FloatArray, check_choice, describe

P_ADJUSTMENTS: tuple[str, ...] = ("holm", "bonferroni", "bh", "none")


def adjust_p(p_values: Any, method: str = "holm") -> FloatArray:
    """Adjust p-values for multiple comparisons.

    Args:
        p_values: p-values in [0, 1], any shape (e.g. candidates x measures); all of them form
            one family.
        method: ``"holm"``, ``"bonferroni"``, ``"bh"`` (Benjamini-Hochberg) or ``"none"``.

    Returns:
        Adjusted p-values (float64) of the same shape, each >= its raw value and <= 1.

    Raises:
        InputError: a value that is not a number in [0, 1] (NaN included).
        ConfigError: an unknown ``method``.

    >>> adjust_p([0.01, 0.02], method="bonferroni").tolist()
    [0.02, 0.04]
    """
    how = check_choice(method, "method", "adjust_p", P_ADJUSTMENTS)
    try:
        p = np.array(p_values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"The 'p_values' parameter of adjust_p must be an array of numbers in [0, 1]. "
            f"Got {describe(p_values)} instead."
        ) from None
    bad = ~((p >= 0.0) & (p <= 1.0))  # NaN is bad too
    if bad.any():
        raise InputError(
            "The 'p_values' parameter of adjust_p must hold numbers in [0, 1] only. "
            f"Got {float(p[bad].ravel()[0])!r} instead."
        )
    m = p.size
    if m == 0 or how == "none":
        return p
    flat = p.ravel()
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    rank = np.arange(1, m + 1, dtype=np.float64)
    if how == "bonferroni":
        adjusted_sorted = ranked * m
    elif how == "holm":
        adjusted_sorted = np.maximum.accumulate(ranked * (m - rank + 1))
    else:  # bh
        adjusted_sorted = np.minimum.accumulate((ranked * m / rank)[::-1])[::-1]
    out = np.empty(m, dtype=np.float64)
    out[order] = np.minimum(adjusted_sorted, 1.0)
    return out.reshape(p.shape)

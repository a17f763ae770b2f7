"""How a measure's per-query values combine into one number: the spec's ``aggregate``.

``mean`` (most measures), ``sum`` (the counts, as trec_eval) and ``gmean``: trec_eval's
geometric mean (gm_map, gm_bpref), exp(mean of ln(max(value, 0.00001))), so that a query scoring
0 (or missing from the run, under trec_eval -c) pulls the mean down without zeroing it.
"""

from __future__ import annotations

import math

import numpy as np

MIN_GEO_MEAN = 0.00001  # trec_eval's floor for the geometric mean

AGGREGATIONS: dict[str, str] = {
    "mean": "mean over queries",
    "sum": "sum over queries",
    "gmean": f"geometric mean over queries, each value floored at {MIN_GEO_MEAN:g}",
}


def aggregate_values(kind: str, values: np.ndarray) -> float:
    """One number from a column of per-query values; NaN for an empty mean or geometric mean.

    >>> round(aggregate_values("gmean", np.array([1.0, 0.0])), 12)  # sqrt(1 * 0.00001)
    0.00316227766
    >>> aggregate_values("sum", np.array([1.0, 2.0])), aggregate_values("mean", np.array([1.0, 2.0]))
    (3.0, 1.5)
    """
    if kind == "sum":
        return float(values.sum())
    if len(values) == 0:
        return math.nan
    if kind == "gmean":
        return float(np.exp(np.log(np.maximum(values, MIN_GEO_MEAN)).mean()))
    return float(values.mean())

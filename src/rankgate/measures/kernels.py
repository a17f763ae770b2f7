"""Vectorized kernels: one function per measure family, all queries of a block at once.

Each kernel maps ``(block, measure)`` to a float64 array with one value per query of the
block. `rankgate.measures.reference` holds the slow, obviously-right twin of each, and the
tests check that the two agree. Each family's `MeasureSpec` (in `rankgate.measures.definitions`)
names its kernel and its twin.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankgate.measures.block import RankedBlock
from rankgate.measures.registry import Measure

Kernel = Callable[[RankedBlock, Measure], np.ndarray]


def _masked(a: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    return a if mask is None else a & mask


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _rel_ret(b: RankedBlock, m: Measure) -> np.ndarray:
    return b.per_query_sum(_masked(b.relevant(m.get("rel")), b.top(m.cutoff)))


def precision(b: RankedBlock, m: Measure) -> np.ndarray:
    assert m.cutoff is not None
    return _rel_ret(b, m) / m.cutoff


def recall(b: RankedBlock, m: Measure) -> np.ndarray:
    return _safe_div(_rel_ret(b, m), b.num_rel(m.get("rel")))


def success(b: RankedBlock, m: Measure) -> np.ndarray:
    return (_rel_ret(b, m) > 0).astype(np.float64)


def num_rel_ret(b: RankedBlock, m: Measure) -> np.ndarray:
    return _rel_ret(b, m)


def num_rel(b: RankedBlock, m: Measure) -> np.ndarray:
    return b.num_rel(m.get("rel")).astype(np.float64)


def num_ret(b: RankedBlock, m: Measure) -> np.ndarray:
    depth = b.depth.astype(np.float64)
    return depth if m.cutoff is None else np.minimum(depth, m.cutoff)


def reciprocal_rank(b: RankedBlock, m: Measure) -> np.ndarray:
    out = np.zeros(b.n_queries)
    rows = np.flatnonzero(_masked(b.relevant(m.get("rel")), b.top(m.cutoff)))
    if len(rows):
        queries, first = np.unique(b.row_query[rows], return_index=True)
        out[queries] = 1.0 / (b.rank[rows[first]] + 1)
    return out


def average_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    rel = _masked(b.relevant(m.get("rel")), b.top(m.cutoff))
    found = b.segment_cumsum(rel.astype(np.float64))
    precision_at_rel = np.where(rel, found / (b.rank + 1), 0.0)
    denominator = dict(m.params).get("denominator", "R")  # GMAP shares this kernel, without the parameter
    if denominator == "retrieved_relevant":
        return _safe_div(b.per_query_sum(precision_at_rel), b.per_query_sum(rel))
    big_r = b.num_rel(m.get("rel"))
    if denominator == "min_k_R" and m.cutoff is not None:
        big_r = np.minimum(big_r, m.cutoff)
    return _safe_div(b.per_query_sum(precision_at_rel), big_r)


def r_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    rel_count = b.num_rel(m.get("rel"))
    within = b.rank < rel_count[b.row_query]
    return _safe_div(b.per_query_sum(b.relevant(m.get("rel")) & within), rel_count)


def judged(b: RankedBlock, m: Measure) -> np.ndarray:
    assert m.cutoff is not None
    has_judgment = b.judged & (b.grade >= 0)
    shown = np.minimum(b.depth, m.cutoff)  # like ir_measures: of what was returned
    return _safe_div(b.per_query_sum(_masked(has_judgment, b.top(m.cutoff))), shown.astype(np.float64))


def _gain(grades: np.ndarray, kind: str) -> np.ndarray:
    g = np.maximum(grades, 0).astype(np.float64)  # negative grades gain nothing
    return g if kind == "linear" else np.exp2(g) - 1.0


def dcg(b: RankedBlock, m: Measure) -> np.ndarray:
    grades = np.where(b.judged & (b.grade >= m.get("min_grade")), b.grade, 0)
    if m.get("ties") == "average":
        from rankgate.measures.peer_kernels import tie_averaged_dcg

        return tie_averaged_dcg(b, _gain(grades, m.get("gain")), m.cutoff)
    gains = _gain(grades, m.get("gain")) / np.log2(b.rank + 2.0)
    if m.cutoff is not None:
        gains = np.where(b.rank < m.cutoff, gains, 0.0)
    return b.per_query_sum(gains)


def ideal_dcg(b: RankedBlock, m: Measure) -> np.ndarray:
    iq, ig, ir = b.ideal_positive_grades()  # the rest gain nothing: the sums are the same
    if m.cutoff is not None:  # positions past the cutoff add only zeros: left out, same sums
        shown = ir < m.cutoff
        iq, ig, ir = iq[shown], ig[shown], ir[shown]
    ig = np.where(ig >= m.get("min_grade"), ig, 0)
    ideal = _gain(ig, m.get("gain")) / np.log2(ir + 2.0)
    return np.bincount(iq, weights=ideal, minlength=b.n_queries)


def ndcg(b: RankedBlock, m: Measure) -> np.ndarray:
    return _safe_div(dcg(b, m), ideal_dcg(b, m))


def bpref(b: RankedBlock, m: Measure) -> np.ndarray:
    rel_level = m.get("rel")
    relevant = b.relevant(rel_level)
    nonrel = b.judged & (b.grade >= 0) & (b.grade < rel_level)
    nonrel_above = b.segment_cumsum(nonrel.astype(np.float64)) - nonrel
    big_r = b.num_rel(rel_level)
    big_n = b.num_judged_nonrel(rel_level)
    r_row, n_row = big_r[b.row_query], big_n[b.row_query]
    penalty = _safe_div(np.minimum(nonrel_above, r_row), np.minimum(r_row, n_row))
    contrib = np.where(relevant, 1.0 - penalty, 0.0)
    return _safe_div(b.per_query_sum(contrib), big_r)


def rank_biased_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    p = float(m.get("p"))
    rel = _masked(b.relevant(m.get("rel")), b.top(m.cutoff))
    return (1.0 - p) * b.per_query_sum(np.where(rel, np.power(p, b.rank), 0.0))


def expected_reciprocal_rank(b: RankedBlock, m: Measure) -> np.ndarray:
    gmax = int(m.get("max_grade")) or b.max_grade
    if gmax <= 0:
        return np.zeros(b.n_queries)
    g = np.where(b.judged, np.maximum(b.grade, 0), 0).astype(np.float64)
    stop = (np.exp2(g) - 1.0) / np.exp2(gmax)
    stop = np.minimum(stop, 1.0)  # a grade above max_grade stops the user for sure
    top = b.top(m.cutoff)
    if top is not None:
        stop = np.where(top, stop, 0.0)
    # P(user reaches row i) = prod over earlier rows of (1 - stop); exact products, no logs.
    reach = _segment_exclusive_cumprod(b, 1.0 - stop, m.cutoff)
    return b.per_query_sum(reach * stop / (b.rank + 1.0))


def _segment_exclusive_cumprod(b: RankedBlock, values: np.ndarray, limit: int | None) -> np.ndarray:
    out = np.ones_like(values)
    if len(values) == 0:
        return out
    # Within each query: out[i] = prod(values[start:i]). Zeros would break a division trick,
    # so multiply along the rows of each query: at most (rows of the longest query) vector
    # steps. A sparse block skips rows whose factor is 1, which leaves every product as is.
    counts = np.diff(b.offsets)
    steps = int(counts.max())
    if limit is not None:
        steps = min(steps, limit)
    starts = b.offsets[:-1]
    running = np.ones(b.n_queries)
    for r in range(1, steps):
        active = np.flatnonzero(counts > r)
        idx = starts[active] + r
        running[active] *= values[idx - 1]
        out[idx] = running[active]
    return out

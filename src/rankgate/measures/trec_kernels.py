"""Vectorized kernels of the trec_eval families in `rankgate.measures.trec_more`.

Same contract as `rankgate.measures.kernels`: ``(block, measure)`` to one float64 per query of
the block, reading only the judged rows (their ranks) and each query's depth. trec_eval's words
for a retrieved document: *non-pool* when the qrels do not list it (not a row of a sparse block),
*unjudged* when they list it with a negative grade, *judged* otherwise. Their slow twins are in
`rankgate.measures.trec_reference`; the tests check that the two agree.
"""

from __future__ import annotations

import numpy as np

from rankgate.core.columns import group_offsets, positions_in_group
from rankgate.measures.block import RankedBlock
from rankgate.measures.registry import Measure
from rankgate.measures.trec_names import recall_levels

INFAP_EPSILON = 0.00001  # trec_eval's smoothing constant of infAP


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _rel_ret(b: RankedBlock, rel: int, within: np.ndarray | None = None) -> np.ndarray:
    relevant = b.relevant(rel)
    return b.per_query_sum(relevant if within is None else relevant & within)


def _judged_nonneg(b: RankedBlock) -> np.ndarray:
    return b.judged & (b.grade >= 0)


def needed(level: float, big_r: np.ndarray) -> np.ndarray:
    """trec_eval 10.0's doc count for a fraction of R: C's ``(long)(level * R + 0.9)``."""
    return (level * big_r + 0.9).astype(np.int64)


# -- set measures: the whole ranking as an unranked set -----------------------------------
def set_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    return _safe_div(_rel_ret(b, m.get("rel")), b.depth.astype(np.float64))


def set_recall(b: RankedBlock, m: Measure) -> np.ndarray:
    return _safe_div(_rel_ret(b, m.get("rel")), b.num_rel(m.get("rel")))


def set_relative_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    return _safe_div(_rel_ret(b, m.get("rel")), np.minimum(b.depth, b.num_rel(m.get("rel"))))


def set_average_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    rr = _rel_ret(b, m.get("rel"))
    return _safe_div(rr * rr, b.depth * b.num_rel(m.get("rel")))


def set_f(b: RankedBlock, m: Measure) -> np.ndarray:
    x = float(m.get("beta"))
    rr = _rel_ret(b, m.get("rel"))
    p = _safe_div(rr, b.depth.astype(np.float64))
    r = _safe_div(rr, b.num_rel(m.get("rel")))
    return np.where(rr > 0, _safe_div((x + 1.0) * p * r, x * p + r), 0.0)


def utility(b: RankedBlock, m: Measure) -> np.ndarray:
    rr = _rel_ret(b, m.get("rel"))
    ret = b.depth.astype(np.float64)
    big_r = b.num_rel(m.get("rel"))
    a, bb, c, d = (float(m.get(k)) for k in ("a", "b", "c", "d"))
    return a * rr + bb * (ret - rr) + c * (big_r - rr) + d * (int(m.get("num_docs")) + rr - ret - big_r)


def num_nonrel_judged_ret(b: RankedBlock, m: Measure) -> np.ndarray:
    nonrel = _judged_nonneg(b) & (b.grade < m.get("rel"))
    return b.per_query_sum(nonrel if m.cutoff is None else nonrel & (b.rank < m.cutoff))


def num_q(b: RankedBlock, m: Measure) -> np.ndarray:
    return np.ones(b.n_queries)


# -- cutoffs -------------------------------------------------------------------------------
def relative_precision(b: RankedBlock, m: Measure) -> np.ndarray:
    assert m.cutoff is not None
    big_r = b.num_rel(m.get("rel"))
    return _safe_div(_rel_ret(b, m.get("rel"), b.rank < m.cutoff), np.minimum(big_r, m.cutoff))


def unjudged(b: RankedBlock, m: Measure) -> np.ndarray:
    assert m.cutoff is not None
    shown = np.minimum(b.depth, m.cutoff).astype(np.float64)
    known = b.per_query_sum(_judged_nonneg(b) & (b.rank < m.cutoff))
    return (shown - known) / m.cutoff


def r_precision_mult(b: RankedBlock, m: Measure) -> np.ndarray:
    cut = needed(float(m.get("mult")), b.num_rel(m.get("rel")))
    return _safe_div(_rel_ret(b, m.get("rel"), b.rank < cut[b.row_query]), cut.astype(np.float64))


# -- interpolated precision ----------------------------------------------------------------
def _segment_suffix_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Within each group of CSR ``offsets``: the max of ``values`` from the row to the group's end."""
    out = values.copy()
    counts = np.diff(offsets)
    starts = offsets[:-1]
    for r in range(int(counts.max(initial=0)) - 2, -1, -1):
        idx = starts[counts > r + 1] + r
        out[idx] = np.maximum(out[idx], out[idx + 1])
    return out


def _iprec(b: RankedBlock, rel: int, levels: tuple[float, ...]) -> np.ndarray:
    """Interpolated precision at each recall level: one column per level (trec_eval iprec_at_recall)."""
    rows = np.flatnonzero(b.relevant(rel))
    offsets = group_offsets(b.row_query[rows], b.n_queries)
    ordinal = positions_in_group(offsets) + 1  # k-th relevant doc retrieved
    best_after = _segment_suffix_max(ordinal / (b.rank[rows] + 1.0), offsets)
    found = np.diff(offsets)
    big_r = b.num_rel(rel)
    out = np.zeros((b.n_queries, len(levels)))
    for j, level in enumerate(levels):
        need = needed(level, big_r)  # relevant docs to reach this recall
        ok = (need <= found) & (found > 0)
        out[ok, j] = best_after[offsets[:-1][ok] + np.maximum(need[ok], 1) - 1]
    return out


def iprec_at_recall(b: RankedBlock, m: Measure) -> np.ndarray:
    result: np.ndarray = _iprec(b, m.get("rel"), (float(m.get("recall")),))[:, 0]
    return result


def iprec_average(b: RankedBlock, m: Measure) -> np.ndarray:
    levels = recall_levels(str(m.get("levels")))
    values = _iprec(b, m.get("rel"), levels)
    total = np.zeros(b.n_queries)
    for j in range(len(levels) - 1, -1, -1):  # trec_eval adds the highest level first
        total += values[:, j]
    return total / len(levels)


# -- AP variants -----------------------------------------------------------------------------
def inferred_ap(b: RankedBlock, m: Measure) -> np.ndarray:
    rel = m.get("rel")
    relevant = b.relevant(rel)
    nonrel = _judged_nonneg(b) & (b.grade < rel)
    pooled_unjudged = b.judged & (b.grade < 0)
    rel_above = b.segment_cumsum(relevant.astype(np.float64)) - relevant
    nonrel_above = b.segment_cumsum(nonrel.astype(np.float64)) - nonrel
    unj_above = b.segment_cumsum(pooled_unjudged.astype(np.float64)) - pooled_unjudged
    j = b.rank.astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel_above + unj_above) / safe_j) * (
        (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)
    )
    term = np.where(b.rank == 0, 1.0, term)
    return _safe_div(b.per_query_sum(np.where(relevant, term, 0.0)), b.num_rel(rel))


def binary_g(b: RankedBlock, m: Measure) -> np.ndarray:
    relevant = b.relevant(m.get("rel"))
    rel_so_far = b.segment_cumsum(relevant.astype(np.float64))
    contrib = np.where(relevant, 1.0 / np.log2(3.0 + b.rank - rel_so_far), 0.0)
    return _safe_div(b.per_query_sum(contrib), b.num_rel(m.get("rel")))


def rbp_residual(b: RankedBlock, m: Measure) -> np.ndarray:
    p = float(m.get("p"))
    known = _judged_nonneg(b)
    n_known = b.per_query_sum(known)
    depth = b.depth.astype(np.float64)
    tail = np.power(p, depth)
    all_weight = (1.0 - tail) / (1.0 - p)  # sum of p^i over ranks i < depth
    unjudged_weight = all_weight - b.per_query_sum(np.where(known, np.power(p, b.rank), 0.0))
    return np.where(depth > n_known, tail + (1.0 - p) * unjudged_weight, 0.0)

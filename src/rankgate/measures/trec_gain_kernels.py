"""Vectorized kernels of trec_eval's gain families: G, ndcg_rel, Rndcg, rbp and ndcg with its own gains.

The gain of a document is ``g<grade>`` (parameters ``g0`` .. ``g9``, trec_eval's
``measure.level=gain``; by default the grade itself, trec_eval's default gains; a grade above 9
gains its own value); unjudged and negative grades gain 0. The *ideal* ranking lists the query's
judged documents of positive gain by gain, highest first. Slow twins:
`rankgate.measures.trec_reference`.
"""

from __future__ import annotations

import numpy as np

from rankgate.core.columns import group_offsets, positions_in_group
from rankgate.measures.block import RankedBlock
from rankgate.measures.registry import Measure


class _Ideal:
    """The positive gains of each query, highest first: gain, 0-based position, CSR offsets."""

    def __init__(self, b: RankedBlock, table: np.ndarray) -> None:
        if np.array_equal(table, np.arange(len(table))):  # default gains: the block's cached grade order
            iq, ig, _ = b.ideal_positive_grades()
            self.query, self.gain = iq, ig.astype(np.float64)
        else:
            judged = b.qrel_grade >= 0
            gain, query = table[b.qrel_grade[judged]], b.qrel_query[judged]
            positive = gain > 0
            order = np.lexsort((-gain[positive], query[positive]))
            self.query, self.gain = query[positive][order], gain[positive][order]
        self.offsets = group_offsets(self.query, b.n_queries)
        self.position = positions_in_group(self.offsets)
        self.count = np.diff(self.offsets)

    def prefix(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each query's ideal positions up to and including each one."""
        return running_sum(values, self.offsets)

    def at(self, prefix: np.ndarray, query: np.ndarray, upto: np.ndarray) -> np.ndarray:
        """``prefix`` of ``query`` at 1-based position ``upto`` (0 where ``upto`` is 0)."""
        if len(prefix) == 0:
            return np.zeros(len(query))
        idx = np.clip(self.offsets[query] + upto - 1, 0, len(prefix) - 1)
        return np.where(upto > 0, prefix[idx], 0.0)


def running_sum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Within each group of CSR ``offsets``: the sum of ``values`` up to and including each row.

    Added one rank at a time, in order, as trec_eval does: a query's sums never depend on the
    other queries of its block (a cumulative sum over the block minus its base would, in the
    last bits), so the block size never changes a value.
    """
    out = values.astype(np.float64, copy=True)
    counts = np.diff(offsets)
    starts = offsets[:-1]
    for r in range(1, int(counts.max(initial=0))):
        idx = starts[counts > r] + r
        out[idx] += out[idx - 1]
    return out


def _table(b: RankedBlock, m: Measure) -> np.ndarray:
    """Each grade's gain under ``m``'s ``g0`` .. ``g9`` (index: grade), up to the block's highest grade."""
    return gain_table(m, int(max(b.qrel_grade.max(initial=0), b.grade.max(initial=0))))


def _gains(b: RankedBlock, table: np.ndarray) -> np.ndarray:
    """Each retrieved doc's gain: 0 when unjudged (not in the pool, or a negative grade)."""
    return np.where(b.judged & (b.grade >= 0), table[np.maximum(b.grade, 0)], 0.0)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def normalized_gain(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval G: each retrieved gain over log2(2 + ideal cost so far - gain so far)."""
    table = _table(b, m)
    ideal = _Ideal(b, table)
    gain = _gains(b, table)
    upto = b.rank + 1
    n_pos = ideal.count[b.row_query]
    cost_prefix = ideal.prefix(np.maximum(ideal.gain, 1.0))  # a position costs its ideal gain, at least 1
    cost = ideal.at(cost_prefix, b.row_query, np.minimum(upto, n_pos)) + np.maximum(upto - n_pos, 0)
    so_far = b.segment_cumsum(gain)
    safe = np.where(gain != 0, 2.0 + cost - so_far, 2.0)
    contrib = np.where(gain != 0, gain / np.log2(safe), 0.0)
    total_ideal = np.bincount(ideal.query, weights=ideal.gain, minlength=b.n_queries)
    return _safe_div(b.per_query_sum(contrib), total_ideal)


def _dcg_parts(b: RankedBlock, gain: np.ndarray, ideal: _Ideal) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's discounted gain, and the ideal discounted gains with their running sums."""
    discounted = gain / np.log2(b.rank + 2.0)
    ideal_discounted = ideal.gain / np.log2(ideal.position + 2.0)
    return discounted, ideal_discounted, ideal.prefix(ideal_discounted)


def ndcg_rel(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval ndcg_rel: nDCG averaged over the ranks of the positive-gain docs (missing ones at the end)."""
    table = _table(b, m)
    ideal, gain = _Ideal(b, table), _gains(b, table)
    discounted, ideal_discounted, idcg_prefix = _dcg_parts(b, gain, ideal)
    dcg = running_sum(discounted, b.offsets)
    n_pos = ideal.count[b.row_query]
    idcg = ideal.at(idcg_prefix, b.row_query, np.minimum(b.rank + 1, n_pos))
    at_rel = (gain > 0) & (n_pos > 0)
    points = b.per_query_sum(np.where(at_rel, _safe_div(dcg, idcg), 0.0))
    found = b.per_query_sum(at_rel)
    idcg_total = np.bincount(ideal.query, weights=ideal_discounted, minlength=b.n_queries)
    total = points + (ideal.count - found) * _safe_div(b.per_query_sum(discounted), idcg_total)
    return np.where(total > 0, _safe_div(total, ideal.count.astype(np.float64)), 0.0)


def _sum_before(b: RankedBlock, values: np.ndarray, query: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over the rows of ``query`` ranked above 0-based rank ``before``."""
    running = running_sum(values, b.offsets)
    width = int(max(b.rank.max(initial=0), before.max(initial=0))) + 1
    keys = b.row_query * width + b.rank
    idx = np.searchsorted(keys, query * width + before, side="left")  # the first row at or below the rank
    above = idx > b.offsets[query]
    return np.where(above, running[np.maximum(idx - 1, 0)] if len(running) else 0.0, 0.0)


def r_ndcg(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval Rndcg: nDCG averaged over the ranks where the ideal gain changes."""
    table = _table(b, m)
    ideal = _Ideal(b, table)
    discounted, ideal_discounted, idcg_prefix = _dcg_parts(b, _gains(b, table), ideal)
    previous = np.concatenate([[np.nan], ideal.gain[:-1]])
    change = (ideal.position >= 1) & (ideal.gain != previous)
    ends = np.flatnonzero(ideal.count > 0)  # the ideal gain drops to 0 after the last positive doc
    bq = np.concatenate([ideal.query[change], ends])
    bt = np.concatenate([ideal.position[change], ideal.count[ends]])
    order = np.lexsort((bt, bq))
    bq, bt = bq[order], bt[order]
    points = _safe_div(_sum_before(b, discounted, bq, bt), ideal.at(idcg_prefix, bq, bt))
    total = np.bincount(bq, weights=points, minlength=b.n_queries)
    count = np.bincount(bq, minlength=b.n_queries).astype(np.float64)
    extra = (ideal.count > 0) & (b.depth >= ideal.count + 2)  # trec_eval adds the full nDCG only then
    idcg_total = np.bincount(ideal.query, weights=ideal_discounted, minlength=b.n_queries)
    total = total + np.where(extra, _safe_div(b.per_query_sum(discounted), idcg_total), 0.0)
    count = count + extra
    has_rel = b.num_rel(m.get("rel")) > 0
    return np.where(has_rel, _safe_div(total, count), 0.0)


def graded_rbp(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval rbp: (1 - p) * sum of p^i * gain, gains rescaled to [0, 1] when one falls outside.

    The range is taken over 0, the gains of the grades 0 .. the query's highest judged grade
    and the gains set explicitly (``g5=...`` counts for every query), as trec_eval's default
    build does (docs/semantics.md).
    """
    p = float(m.get("p"))
    table = _table(b, m)
    top = np.full(b.n_queries, -1, dtype=np.int64)
    np.maximum.at(top, b.qrel_query, b.qrel_grade.astype(np.int64))
    given = [table[int(k[1:])] for k, _ in m.params if k.startswith("g")]
    low = np.minimum.accumulate(np.minimum(table, 0.0))[np.maximum(top, 0)]
    high = np.maximum.accumulate(np.maximum(table, 0.0))[np.maximum(top, 0)]
    low = np.where(top >= 0, low, 0.0)
    high = np.where(top >= 0, high, 0.0)
    if given:
        low, high = np.minimum(low, min(given)), np.maximum(high, max(given))
    scaled = (low < 0) | (high > 1)
    span = np.where(scaled, high - low, 1.0)
    raw = _gains(b, table)
    q = b.row_query
    gain = np.where(b.judged & (b.grade >= 0) & scaled[q], (raw - low[q]) / span[q], raw)
    weight = np.power(p, b.rank.astype(np.float64))
    return (1.0 - p) * b.per_query_sum(np.where(gain != 0, gain * weight, 0.0))


GAIN_LEVELS = 10  # GainNDCG's parameters g0 .. g9; a higher grade gains its own value


def gain_table(m: Measure, max_grade: int) -> np.ndarray:
    """Each grade's gain (index: grade) for GainNDCG: ``g0`` .. ``g9``, then the grade itself."""
    table = np.arange(max(GAIN_LEVELS, max_grade + 1), dtype=np.float64)
    for level in range(GAIN_LEVELS):
        table[level] = float(m.get(f"g{level}"))
    return table


def _gain_dcg_parts(b: RankedBlock, m: Measure) -> tuple[np.ndarray, np.ndarray]:
    """DCG of the retrieved gains and of the ideal gains (positive, highest first), per query."""
    table = _table(b, m)
    ideal, gain = _Ideal(b, table), _gains(b, table)
    dcg = b.per_query_sum(np.where(gain != 0, gain / np.log2(b.rank + 2.0), 0.0))
    idcg = np.bincount(ideal.query, weights=ideal.gain / np.log2(ideal.position + 2.0), minlength=b.n_queries)
    return dcg, idcg


def gain_ndcg(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval ndcg with per-grade gains: DCG of the gains over the DCG of the positive gains, highest first."""
    dcg, idcg = _gain_dcg_parts(b, m)
    return _safe_div(dcg, idcg)


def gain_dcg(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval dcg with per-grade gains."""
    return _gain_dcg_parts(b, m)[0]


def ideal_dcg(b: RankedBlock, m: Measure) -> np.ndarray:
    """trec_eval ideal_dcg: the DCG of the query's positive gains, highest first."""
    return _gain_dcg_parts(b, m)[1]

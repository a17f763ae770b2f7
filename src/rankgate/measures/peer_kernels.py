"""Kernels and reference twins of the families other evaluators define (`rankgate.measures.peer_conventions`).

`tie_averaged_dcg` is nDCG's and DCG's ``ties=average`` (McSherry & Najork 2008, as scikit-learn's
``ndcg_score``): every document of a group of equal scores gains the group's mean gain at each
rank the group spans, so the order inside a tie group no longer matters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rankgate.measures.block import RankedBlock
from rankgate.measures.kernels import _masked, _safe_div
from rankgate.measures.registry import Measure


def tie_averaged_dcg(b: RankedBlock, gains: np.ndarray, k: int | None) -> np.ndarray:
    """DCG with tied documents' gains averaged over their group: sum over rows of
    gain / |group| * (discounts of the group's ranks within the top k).

    ``b.tie_first`` and ``b.tie_size`` give each row's group (its first 0-based rank and its size);
    a block without them has no ties.
    """
    first = b.rank if b.tie_first is None else b.tie_first
    size = np.ones(len(first), dtype=np.int64) if b.tie_size is None else b.tie_size
    lo, hi = first, first + size
    if k is not None:
        lo, hi = np.minimum(lo, k), np.minimum(hi, k)
    deepest = int(hi.max()) if len(hi) else 0
    # cumulative[r] = sum of the discounts 1 / log2(i + 2) over 0-based ranks i < r
    cumulative = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(deepest) + 2.0))])
    return b.per_query_sum(gains * (cumulative[hi] - cumulative[lo]) / size)


def f_measure(b: RankedBlock, m: Measure) -> np.ndarray:
    rel = _masked(b.relevant(m.get("rel")), b.top(m.cutoff))
    found = b.per_query_sum(rel)
    shown = b.depth.astype(np.float64) if m.cutoff is None else np.full(b.n_queries, float(m.cutoff))
    precision = _safe_div(found, shown)
    recall = _safe_div(found, b.num_rel(m.get("rel")))
    beta2 = float(m.get("beta")) ** 2
    return _safe_div((1.0 + beta2) * precision * recall, beta2 * precision + recall)


def f_measure_reference(ranking: Sequence[str], judgments: Mapping[str, int], m: Measure, max_grade: int) -> float:
    rel = m.get("rel")
    top = ranking if m.cutoff is None else ranking[: m.cutoff]
    found = sum(1 for d in top if judgments.get(d, 0) >= rel and d in judgments)
    shown = len(ranking) if m.cutoff is None else m.cutoff
    r = sum(1 for g in judgments.values() if g >= rel)
    precision = found / shown if shown else 0.0
    recall = found / r if r else 0.0
    beta2 = float(m.get("beta")) ** 2
    if precision == 0.0 and recall == 0.0:
        return 0.0
    return (1.0 + beta2) * precision * recall / (beta2 * precision + recall)

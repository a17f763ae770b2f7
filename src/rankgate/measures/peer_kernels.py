"""Kernels and reference twins of the families other evaluators define (`rankgate.measures.peer_conventions`).

`tie_averaged_dcg` is nDCG's and DCG's ``ties=average`` (McSherry & Najork 2008, as scikit-learn's
``ndcg_score``): every document of a group of equal scores gains the group's mean gain at each
rank the group spans, so the order inside a tie group no longer matters.

The kernels at the end of the module (`precision`, `recall`, ..., `r_precision`) and their twins
are the plain ones of `rankgate.measures.kernels` and `rankgate.measures.reference` with the
``empty`` parameter applied (`rankgate.measures.empty`); `precision_at_k` is P@k with
torchmetrics' ``adaptive_k`` (``denominator=min_k_retrieved``) and `judged` is Judged@k with
ir_measures' convention (``negative=judged``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from rankgate.errors import InputError
from rankgate.measures import kernels, reference
from rankgate.measures.block import RankedBlock
from rankgate.measures.kernels import _masked, _safe_div
from rankgate.measures.registry import Measure

if TYPE_CHECKING:
    from rankgate.measures.kernels import Kernel
    from rankgate.measures.reference import Reference


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


def weighted_rbp(b: RankedBlock, m: Measure) -> np.ndarray:
    """ranx's rbp: (1 - p) * sum of grade * p^rank over the relevant rows (grade >= rel)."""
    p = float(m.get("p"))
    rel = _masked(b.relevant(m.get("rel")), b.top(m.cutoff))
    return (1.0 - p) * b.per_query_sum(np.where(rel, b.grade * np.power(p, b.rank), 0.0))


def weighted_rbp_reference(ranking: Sequence[str], judgments: Mapping[str, int], m: Measure, max_grade: int) -> float:
    p, rel = m.get("p"), m.get("rel")
    top = ranking if m.cutoff is None else ranking[: m.cutoff]
    weights = [judgments[d] if judgments.get(d, rel - 1) >= rel else 0 for d in top]
    return float((1 - p) * sum(w * p**i for i, w in enumerate(weights)))


def _relevance_floor(m: Measure) -> int:
    """The grade a judged doc needs for the query to have something to find: ``rel``, or nDCG's ``min_grade``."""
    names = {p.name for p in m.spec.params}
    return int(m.get("rel") if "rel" in names else m.get("min_grade"))


def _refuse_empty(m: Measure, n: int) -> InputError:
    return InputError(
        f"{m}: at least {n} evaluated quer{'y has' if n == 1 else 'ies have'} no relevant judgment (grade >= "
        f"{_relevance_floor(m)}), which empty=error refuses (torchmetrics' empty_target_action='error'); "
        "pass --empty skip (empty='skip') to leave such queries out, or score them with empty=zero or empty=one"
    )


def _score_empty(b: RankedBlock, m: Measure, values: np.ndarray) -> np.ndarray:
    """``values``, with the queries of ``b`` that have no relevant judgment scored as ``empty`` says."""
    policy = m.get("empty")
    if policy == "zero":
        return values
    empty = b.num_rel(_relevance_floor(m)) == 0
    if policy == "error" and empty.any():
        raise _refuse_empty(m, int(empty.sum()))
    return np.where(empty, 1.0, values) if policy == "one" else values


def _score_empty_reference(judgments: Mapping[str, int], m: Measure, value: float) -> float:
    if any(g >= _relevance_floor(m) for g in judgments.values()):
        return value
    if m.get("empty") == "error":
        raise _refuse_empty(m, 1)
    return 1.0 if m.get("empty") == "one" else 0.0


def _empty_aware(inner: Kernel) -> Kernel:
    """``inner`` with the ``empty`` parameter applied (the kernels of P, R, AP, RR, nDCG, Success, Rprec)."""

    @functools.wraps(inner)
    def kernel(b: RankedBlock, m: Measure) -> np.ndarray:
        return _score_empty(b, m, inner(b, m))

    return kernel


def _empty_aware_reference(inner: Reference) -> Reference:
    """The reference twin of `_empty_aware`."""

    @functools.wraps(inner)
    def twin(ranking: Sequence[str], judgments: Mapping[str, int], m: Measure, max_grade: int) -> float:
        return _score_empty_reference(judgments, m, float(inner(ranking, judgments, m, max_grade)))

    return twin


def precision_at_k(b: RankedBlock, m: Measure) -> np.ndarray:
    """P@k; ``denominator=min_k_retrieved`` divides by min(k, docs retrieved) (torchmetrics' adaptive_k)."""
    if m.get("denominator") == "k":
        return kernels.precision(b, m)
    assert m.cutoff is not None
    return _safe_div(kernels._rel_ret(b, m), np.minimum(b.depth, m.cutoff).astype(np.float64))


def precision_at_k_reference(ranking: Sequence[str], judgments: Mapping[str, int], m: Measure, max_grade: int) -> float:
    if m.get("denominator") == "k":
        return float(reference.precision(ranking, judgments, m, max_grade))
    top = ranking[: m.cutoff]
    found = sum(1 for d in top if d in judgments and judgments[d] >= m.get("rel"))
    return found / len(top) if top else 0.0


def judged(b: RankedBlock, m: Measure) -> np.ndarray:
    """Judged@k; ``negative=judged`` counts every doc of the qrels, whatever its grade (ir_measures)."""
    if m.get("negative") == "unjudged":
        return kernels.judged(b, m)
    assert m.cutoff is not None  # Judged needs one
    shown = np.minimum(b.depth, m.cutoff).astype(np.float64)
    return _safe_div(b.per_query_sum(_masked(b.judged, b.top(m.cutoff))), shown)


def judged_reference(ranking: Sequence[str], judgments: Mapping[str, int], m: Measure, max_grade: int) -> float:
    if m.get("negative") == "unjudged":
        return float(reference.judged(ranking, judgments, m, max_grade))
    top = ranking[: m.cutoff]
    return sum(1 for d in top if d in judgments) / len(top) if top else 0.0


# The families whose ``empty`` parameter says how a query without a relevant judgment scores.
precision = _empty_aware(precision_at_k)
precision_reference = _empty_aware_reference(precision_at_k_reference)
recall = _empty_aware(kernels.recall)
recall_reference = _empty_aware_reference(reference.recall)
average_precision = _empty_aware(kernels.average_precision)
average_precision_reference = _empty_aware_reference(reference.average_precision)
reciprocal_rank = _empty_aware(kernels.reciprocal_rank)
reciprocal_rank_reference = _empty_aware_reference(reference.reciprocal_rank)
ndcg = _empty_aware(kernels.ndcg)
ndcg_reference = _empty_aware_reference(reference.ndcg)
success = _empty_aware(kernels.success)
success_reference = _empty_aware_reference(reference.success)
r_precision = _empty_aware(kernels.r_precision)
r_precision_reference = _empty_aware_reference(reference.r_precision)

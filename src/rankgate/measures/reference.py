"""Reference implementations: one query at a time, plain Python, written to be read.

These are slow on purpose. The tests check the vectorized kernels against them on
randomized inputs, and check them against hand-worked values and pytrec_eval.

``ranking`` is the list of retrieved doc ids in evaluation order (ties already broken);
``judgments`` maps doc id -> grade for the query.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rankgate.errors import MeasureError
from rankgate.measures.registry import Measure

Reference = Callable[[Sequence[str], Mapping[str, int], Measure, int], float]


def _top(ranking: Sequence[Any], k: int | None) -> Sequence[Any]:
    return ranking if k is None else ranking[:k]


def _is_rel(doc: str, judgments: Mapping[str, int], rel: int) -> bool:
    return doc in judgments and judgments[doc] >= rel


def _num_rel(judgments: Mapping[str, int], rel: int) -> int:
    return sum(1 for g in judgments.values() if g >= rel)


def precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    hits = sum(_is_rel(d, judgments, m.get("rel")) for d in _top(ranking, m.cutoff))
    return hits / m.cutoff


def recall(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    r = _num_rel(judgments, m.get("rel"))
    hits = sum(_is_rel(d, judgments, m.get("rel")) for d in _top(ranking, m.cutoff))
    return hits / r if r else 0.0


def success(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return 1.0 if any(_is_rel(d, judgments, m.get("rel")) for d in _top(ranking, m.cutoff)) else 0.0


def num_rel_ret(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return float(sum(_is_rel(d, judgments, m.get("rel")) for d in _top(ranking, m.cutoff)))


def num_rel(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return float(_num_rel(judgments, m.get("rel")))


def num_ret(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return float(len(_top(ranking, m.cutoff)))


def reciprocal_rank(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    for i, d in enumerate(_top(ranking, m.cutoff), start=1):
        if _is_rel(d, judgments, m.get("rel")):
            return 1.0 / i
    return 0.0


def average_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    r = _num_rel(judgments, m.get("rel"))
    if r == 0:
        return 0.0
    found, total = 0, 0.0
    for i, d in enumerate(_top(ranking, m.cutoff), start=1):
        if _is_rel(d, judgments, m.get("rel")):
            found += 1
            total += found / i
    denominator = dict(m.params).get("denominator", "R")  # GMAP shares this twin, without the parameter
    if denominator == "min_k_R" and m.cutoff is not None:
        r = min(r, m.cutoff)
    elif denominator == "retrieved_relevant":
        r = found
    return total / r if r else 0.0


def r_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    r = _num_rel(judgments, m.get("rel"))
    if r == 0:
        return 0.0
    return sum(_is_rel(d, judgments, m.get("rel")) for d in ranking[:r]) / r


def judged(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    top = _top(ranking, m.cutoff)
    if not top:
        return 0.0
    return sum(1 for d in top if d in judgments and judgments[d] >= 0) / len(top)


def _gain(grade: int, kind: str) -> float:
    g = max(grade, 0)
    return float(g) if kind == "linear" else 2.0**g - 1.0


def dcg(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    if m.get("ties") == "average":
        raise MeasureError(f"{m} needs the run's scores, which a reference ranking lacks")
    kind, k, least = m.get("gain"), m.cutoff, m.get("min_grade")
    grades = [judgments.get(d, 0) for d in _top(ranking, k)]
    return sum(_gain(g if g >= least else 0, kind) / math.log2(i + 1) for i, g in enumerate(grades, start=1))


def ndcg(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ideal = sorted(judgments, key=lambda d: judgments[d], reverse=True)
    idcg = dcg(ideal, judgments, m, max_grade)
    return dcg(ranking, judgments, m, max_grade) / idcg if idcg > 0 else 0.0


def bpref(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    rel = m.get("rel")
    r = _num_rel(judgments, rel)
    n = sum(1 for g in judgments.values() if 0 <= g < rel)
    if r == 0:
        return 0.0
    total, nonrel_above = 0.0, 0
    for d in ranking:
        if d not in judgments or judgments[d] < 0:
            continue
        if judgments[d] >= rel:
            total += 1.0 - (min(nonrel_above, r) / min(r, n) if n > 0 else 0.0)
        else:
            nonrel_above += 1
    return total / r


def rank_biased_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    p = m.get("p")
    return (1 - p) * sum(
        p ** (i - 1) for i, d in enumerate(_top(ranking, m.cutoff), start=1) if _is_rel(d, judgments, m.get("rel"))
    )


def expected_reciprocal_rank(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    gmax = m.get("max_grade") or max_grade
    if gmax <= 0:
        return 0.0
    reach, total = 1.0, 0.0
    for i, d in enumerate(_top(ranking, m.cutoff), start=1):
        stop = min((2.0 ** max(judgments.get(d, 0), 0) - 1.0) / 2.0**gmax, 1.0)
        total += reach * stop / i
        reach *= 1.0 - stop
    return total

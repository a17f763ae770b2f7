"""Reference implementations of the trec_eval families in `rankgate.measures.trec_more`.

One query at a time, plain Python, written from trec_eval's documented definitions to be read,
not to be fast; the tests check the kernels (`trec_kernels`, `trec_gain_kernels`) against these,
and these against hand-worked values and trec_eval's own output. Same signature as
`rankgate.measures.reference`: the ranking in evaluation order and the query's judgments
(doc id -> grade; a negative grade is a pooled but unjudged document).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from rankgate.measures.trec_names import recall_levels

INFAP_EPSILON = 0.00001


def _grades(ranking: Sequence[str], judgments: Mapping[str, int]) -> list[int | None]:
    """Each retrieved doc's grade; None when the qrels do not list it (not in the pool)."""
    return [judgments.get(d) for d in ranking]


def _counts(ranking, judgments, rel):  # type: ignore[no-untyped-def]
    """(retrieved, relevant retrieved, relevant) for relevance level ``rel``."""
    rel_ret = sum(1 for g in _grades(ranking, judgments) if g is not None and g >= rel)
    return len(ranking), rel_ret, sum(1 for g in judgments.values() if g >= rel)


def set_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ret, rr, _ = _counts(ranking, judgments, m.get("rel"))
    return rr / ret if ret else 0.0


def set_recall(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    _, rr, r = _counts(ranking, judgments, m.get("rel"))
    return rr / r if r else 0.0


def set_relative_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ret, rr, r = _counts(ranking, judgments, m.get("rel"))
    return rr / min(ret, r) if ret and r else 0.0


def set_average_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ret, rr, r = _counts(ranking, judgments, m.get("rel"))
    return (rr / ret) * (rr / r) if ret and r else 0.0


def set_f(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ret, rr, r = _counts(ranking, judgments, m.get("rel"))
    if rr == 0:
        return 0.0
    p, recall, x = rr / ret, rr / r, m.get("beta")
    return (x + 1) * p * recall / (x * p + recall)


def utility(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ret, rr, r = _counts(ranking, judgments, m.get("rel"))
    a, b, c, d = (m.get(k) for k in ("a", "b", "c", "d"))
    return a * rr + b * (ret - rr) + c * (r - rr) + d * (m.get("num_docs") + rr - ret - r)


def num_nonrel_judged_ret(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    top = ranking if m.cutoff is None else ranking[: m.cutoff]
    return float(sum(1 for g in _grades(top, judgments) if g is not None and 0 <= g < m.get("rel")))


def num_q(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return 1.0


def relative_precision(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    k = m.cutoff
    _, rr, r = _counts(ranking[:k], judgments, m.get("rel"))
    return rr / min(k, r) if r else 0.0


def unjudged(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    top = _grades(ranking[: m.cutoff], judgments)
    return sum(1 for g in top if g is None or g < 0) / m.cutoff


def r_precision_mult(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    _, _, r = _counts(ranking, judgments, m.get("rel"))
    cut = int(m.get("mult") * r + 0.9)
    if cut == 0:
        return 0.0
    _, rr, _ = _counts(ranking[:cut], judgments, m.get("rel"))
    return rr / cut


def _iprec(ranking, judgments, rel, level):  # type: ignore[no-untyped-def]
    """Highest precision at any rank where at least round(level * R) relevant docs were found."""
    _, rr, r = _counts(ranking, judgments, rel)
    need = int(level * r + 0.9)  # trec_eval 10.0: (long)(level * R + 0.9)
    if need > rr or rr == 0:
        return 0.0
    best, found = 0.0, 0
    for i, g in enumerate(_grades(ranking, judgments), start=1):
        if g is not None and g >= rel:
            found += 1
            if found >= max(need, 1):
                best = max(best, found / i)
    return best


def iprec_at_recall(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return _iprec(ranking, judgments, m.get("rel"), m.get("recall"))


def iprec_average(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    levels = recall_levels(m.get("levels"))
    return sum(_iprec(ranking, judgments, m.get("rel"), x) for x in levels) / len(levels)


def inferred_ap(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    rel = m.get("rel")
    total, rel_above, nonrel_above, unj_above = 0.0, 0, 0, 0
    for j, g in enumerate(_grades(ranking, judgments)):
        if g is None:  # not in the pool: counts as non-relevant through j only
            continue
        if g < 0:
            unj_above += 1
        elif g < rel:
            nonrel_above += 1
        else:
            if j == 0:
                total += 1.0
            else:
                judged_share = (rel_above + nonrel_above + unj_above) / j
                rel_share = (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)
                total += 1.0 / (j + 1) + (j / (j + 1)) * judged_share * rel_share
            rel_above += 1
    r = sum(1 for g in judgments.values() if g >= rel)
    return total / r if r else total


def binary_g(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    rel = m.get("rel")
    total, nonrel_above = 0.0, 0
    for g in _grades(ranking, judgments):
        if g is not None and g >= rel:
            total += 1.0 / math.log2(2 + nonrel_above)
        else:
            nonrel_above += 1
    r = sum(1 for g in judgments.values() if g >= rel)
    return total / r if r else 0.0


def rbp_residual(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    p = m.get("p")
    weights = [p**i for i, g in enumerate(_grades(ranking, judgments)) if g is None or g < 0]
    return p ** len(ranking) + (1 - p) * sum(weights) if weights else 0.0


def _gain_of(m):  # type: ignore[no-untyped-def]
    """The gain of a judged grade under ``m``'s ``g0`` .. ``g9`` (a grade above 9 gains itself)."""

    def gain(g: int) -> float:
        return float(m.get(f"g{g}")) if g < 10 else float(g)

    return gain


def _doc_gains(ranking, judgments, m):  # type: ignore[no-untyped-def]
    gain = _gain_of(m)
    return [gain(g) if g is not None and g >= 0 else 0.0 for g in _grades(ranking, judgments)]


def _ideal(judgments, m):  # type: ignore[no-untyped-def]
    gain = _gain_of(m)
    return sorted((gain(g) for g in judgments.values() if g >= 0 and gain(g) > 0), reverse=True)


def normalized_gain(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ideal = _ideal(judgments, m)
    total, cost, so_far = 0.0, 0.0, 0.0
    for i, g in enumerate(_doc_gains(ranking, judgments, m)):
        cost += max(ideal[i], 1.0) if i < len(ideal) else 1.0
        so_far += g
        if g:
            total += g / math.log2(2 + cost - so_far)
    return total / sum(ideal) if ideal else 0.0


def _dcg_prefix(gains: Sequence[float]) -> list[float]:
    """DCG of the first n gains, for n = 0, 1, ..., len(gains)."""
    out = [0.0]
    for i, g in enumerate(gains):
        out.append(out[-1] + g / math.log2(i + 2))
    return out


def ndcg_rel(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ideal = _ideal(judgments, m)
    if not ideal:
        return 0.0
    gains = _doc_gains(ranking, judgments, m)
    dcg, idcg = _dcg_prefix(gains), _dcg_prefix(ideal)
    points = [dcg[i + 1] / idcg[min(i + 1, len(ideal))] for i, g in enumerate(gains) if g > 0]
    total = sum(points) + (len(ideal) - len(points)) * dcg[-1] / idcg[-1]
    return total / len(ideal) if total > 0 else 0.0


def r_ndcg(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    ideal = _ideal(judgments, m)
    if not ideal or not any(g >= m.get("rel") for g in judgments.values()):
        return 0.0
    gains = _doc_gains(ranking, judgments, m)
    dcg, idcg = _dcg_prefix(gains), _dcg_prefix(ideal)
    # nDCG where the ideal gain changes: before each new gain level, and where it drops to 0
    changes = [t for t in range(1, len(ideal)) if ideal[t] != ideal[t - 1]] + [len(ideal)]
    points = [dcg[min(t, len(gains))] / idcg[t] for t in changes]
    if len(gains) >= len(ideal) + 2:  # trec_eval's loop adds the full nDCG only then
        points.append(dcg[-1] / idcg[-1])
    return sum(points) / len(points)


def graded_rbp(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    p, gain = m.get("p"), _gain_of(m)
    top = max([g for g in judgments.values() if g >= 0], default=-1)
    # trec_eval's gain table: grades 0 .. the query's highest, and every grade given a gain
    table = [gain(g) for g in range(top + 1)] + [gain(int(k[1:])) for k, _ in m.params if k.startswith("g")]
    low, high = min([0.0, *table]), max([0.0, *table])
    total, weight = 0.0, 1.0
    for g in _grades(ranking, judgments):
        x = 0.0 if g is None or g < 0 else gain(g)
        if g is not None and g >= 0 and (low < 0 or high > 1):
            x = (x - low) / (high - low)
        if x:
            total += x * weight
        weight *= p
    return (1 - p) * total


def gain_ndcg(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    dcg, idcg = gain_dcg(ranking, judgments, m, max_grade), ideal_dcg(ranking, judgments, m, max_grade)
    return dcg / idcg if idcg > 0 else 0.0


def gain_dcg(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return sum(x / math.log2(i + 2) for i, x in enumerate(_doc_gains(ranking, judgments, m)) if x)


def ideal_dcg(ranking, judgments, m, max_grade):  # type: ignore[no-untyped-def]
    return sum(x / math.log2(i + 2) for i, x in enumerate(_ideal(judgments, m)))

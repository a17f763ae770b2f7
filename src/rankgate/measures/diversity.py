"""Diversity measures over subtopic judgments, with ndeval's definitions (TREC Web track).

Judgments are per (query, subtopic, doc); a doc is relevant to a subtopic when its grade > 0
(ndeval reads them as binary). A query's subtopics are those with at least one relevant doc.
With N subtopics, J(d, s) in {0, 1} and r(s, i) the docs above rank i relevant to s:

- alpha-nDCG@k (Clarke et al. 2008): gain at rank i = sum_s J(d_i, s) (1 - alpha)^r(s, i),
  discount 1 / log2(i + 1), divided by the same sum over the ideal ranking, built greedily
  (at each rank the doc with the largest gain next), as ndeval does.
- ERR-IA@k (Chapelle et al. 2009): (1/N) sum_s sum_{i<=k} (1/i) 0.5 * 0.5^r(s, i) * J(d_i, s):
  ERR per subtopic with binary grades (stop probability (2^1 - 1) / 2^1), averaged uniformly.
- NRBP (Clarke et al. 2009): (1 - (1 - alpha) beta) / N * sum_i beta^(i-1) sum_s J(d_i, s)
  (1 - alpha)^r(s, i), beta = 0.5.
- P-IA@k: (1/N) sum_s |{docs in top k relevant to s}| / k.
- S-recall@k (subtopic recall): |{s : some doc in the top k is relevant to s}| / N.

A query with no subtopic (N = 0) scores 0 on every measure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rankgate.errors import MeasureError

FAMILIES: tuple[str, ...] = ("alpha-nDCG", "ERR-IA", "NRBP", "P-IA", "S-recall")
_NAME = re.compile(r"^(?P<family>[A-Za-z-]+?)(?:\(alpha=(?P<alpha>[0-9.]+)\))?(?:@(?P<k>[0-9]+))?$")


@dataclass(frozen=True)
class DiversityMeasure:
    """``alpha-nDCG(alpha=0.5)@20``: a family, its ``alpha`` (alpha-nDCG and NRBP) and a cutoff."""

    family: str
    cutoff: int | None = None
    alpha: float = 0.5

    def __str__(self) -> str:
        text = self.family + (f"(alpha={self.alpha!r})" if self.alpha != 0.5 else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")


def parse_diversity(name: str) -> DiversityMeasure:
    """Read ``alpha-nDCG@20``, ``alpha-nDCG(alpha=0.3)@10``, ``ERR-IA@20``, ``NRBP``, ``P-IA@10``, ``S-recall@20``.

    >>> str(parse_diversity("alpha-ndcg(alpha=0.3)@10")), str(parse_diversity("S-recall@20"))
    ('alpha-nDCG(alpha=0.3)@10', 'S-recall@20')
    """
    found = _NAME.match(name.strip())
    family = next((f for f in FAMILIES if found and f.lower() == found.group("family").lower()), None)
    if found is None or family is None:
        raise MeasureError(f"Unknown diversity measure {name!r}; one of {', '.join(FAMILIES)}, as in 'alpha-nDCG@20'.")
    alpha = float(found.group("alpha") or 0.5)
    if not 0.0 <= alpha < 1.0 or (found.group("alpha") and family not in ("alpha-nDCG", "NRBP")):
        raise MeasureError(f"The 'alpha' parameter of {family} must be a number in [0, 1). Got {name!r} instead.")
    k = int(found.group("k")) if found.group("k") else None
    if k == 0 or (k is None and family in ("P-IA",)):
        raise MeasureError(f"{family} needs a cutoff >= 1, as in '{family}@20'.")
    return DiversityMeasure(family, k, alpha)


def _novelty_gains(ranking: Sequence[str], judged: Mapping[str, frozenset[str]], alpha: float) -> list[float]:
    """Gain of each rank: sum over its doc's subtopics of (1 - alpha)^(docs above relevant to that subtopic)."""
    seen: dict[str, int] = {}
    gains = []
    for doc in ranking:
        subtopics = judged.get(doc, frozenset())
        gains.append(sum((1.0 - alpha) ** seen.get(s, 0) for s in subtopics))
        for s in subtopics:
            seen[s] = seen.get(s, 0) + 1
    return gains


def _greedy_ideal(judged: Mapping[str, frozenset[str]], alpha: float, depth: int) -> list[str]:
    """ndeval's ideal: at each rank the doc with the largest novelty gain (ties: the earlier doc id)."""
    left = sorted(judged)
    seen: dict[str, int] = {}
    out: list[str] = []
    while left and len(out) < depth:
        gains = [sum((1.0 - alpha) ** seen.get(s, 0) for s in judged[d]) for d in left]
        best = left.pop(gains.index(max(gains)))  # the first of the largest: ties go to the smaller id
        out.append(best)
        for s in judged[best]:
            seen[s] = seen.get(s, 0) + 1
    return out


def score(m: DiversityMeasure, ranking: Sequence[str], judged: Mapping[str, frozenset[str]]) -> float:
    """``m`` of one query: ``ranking`` in evaluation order; ``judged``: doc -> subtopics it is relevant to."""
    subtopics = frozenset().union(*judged.values()) if judged else frozenset()
    if not subtopics:
        return 0.0
    n, top = len(subtopics), list(ranking if m.cutoff is None else ranking[: m.cutoff])
    if m.family == "S-recall":
        return len(frozenset().union(*(judged.get(d, frozenset()) for d in top))) / n
    if m.family == "P-IA":
        assert m.cutoff is not None
        return sum(len(judged.get(d, frozenset())) for d in top) / (n * m.cutoff)
    if m.family == "ERR-IA":
        return sum(0.5 * g / i for i, g in enumerate(_novelty_gains(top, judged, 0.5), start=1)) / n
    if m.family == "NRBP":
        beta = 0.5
        gains = _novelty_gains(top, judged, m.alpha)
        return (1.0 - (1.0 - m.alpha) * beta) / n * sum(beta**i * g for i, g in enumerate(gains))
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(_novelty_gains(top, judged, m.alpha), start=1))
    ideal = _greedy_ideal(judged, m.alpha, len(judged) if m.cutoff is None else m.cutoff)
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(_novelty_gains(ideal, judged, m.alpha), start=1))
    return dcg / idcg if idcg > 0 else 0.0

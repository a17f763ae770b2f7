"""`evaluate_diversity`: alpha-nDCG, ERR-IA, NRBP, P-IA and S-recall of a run over subtopic qrels.

The definitions are in `rankgate.measures.diversity` (ndeval's). Queries are those of the
subtopic qrels, as in ndeval; a query absent from the run scores 0. The run's ties are broken
as everywhere else (``ties="trec"``: doc id descending).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rankgate.core.run import Run
from rankgate.io.readers import read_run
from rankgate.io.subtopics import SubtopicQrels, read_subtopic_qrels
from rankgate.measures.diversity import DiversityMeasure, parse_diversity, score


@dataclass
class DiversityResults:
    """Per-query values and their means, by canonical measure name."""

    measures: list[str]
    per_query: dict[str, dict[str, float]]
    aggregate: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)


def evaluate_diversity(
    qrels: SubtopicQrels | str | os.PathLike[str],
    run: Run | Mapping[str, Mapping[str, float]] | str | os.PathLike[str],
    measures: str | Iterable[str],
    *,
    ties: str = "trec",
) -> DiversityResults:
    """Diversity measures of ``run`` against ``qrels`` (``{qid: {docid: {subtopic: grade}}}`` or a path).

    >>> qrels = {"q": {"a": {"1": 1}, "b": {"1": 1, "2": 1}}}
    >>> evaluate_diversity(qrels, {"q": {"a": 2.0, "b": 1.0}}, ["S-recall@1", "S-recall@2"]).aggregate
    {'S-recall@1': 0.5, 'S-recall@2': 1.0}
    """
    judged = read_subtopic_qrels(qrels) if isinstance(qrels, str | os.PathLike) else qrels
    wanted: list[DiversityMeasure] = [
        parse_diversity(m) for m in ([measures] if isinstance(measures, str) else measures)
    ]
    r = read_run(run) if isinstance(run, str | os.PathLike) else run if isinstance(run, Run) else Run.from_dict(run)
    rankings: dict[str, list[str]] = {}
    for qid, doc, _, _ in r.iter_rows(ties):
        rankings.setdefault(qid, []).append(doc)
    names = [str(m) for m in wanted]
    per_query: dict[str, dict[str, float]] = {}
    for qid in sorted(judged):
        relevant = {d: frozenset(s for s, g in subs.items() if g > 0) for d, subs in judged[qid].items()}
        relevant = {d: s for d, s in relevant.items() if s}
        per_query[qid] = {
            name: score(m, rankings.get(qid, []), relevant) for name, m in zip(names, wanted, strict=True)
        }
    n = len(per_query)
    aggregate = {name: sum(v[name] for v in per_query.values()) / n if n else 0.0 for name in names}
    return DiversityResults(names, per_query, aggregate, {"ties": ties, "queries": "qrels", "relevant": "grade > 0"})

"""Gate names that say their metric (the seeds' ship-criteria style: ``retrieval_recall_at_5``)."""

from __future__ import annotations

from rankgate.errors import MeasureError
from rankgate.measures.parse import parse_measure
from rankgate.measures.registry import Measure


def metric_from_name(name: str) -> tuple[Measure, str] | None:
    """The metric a gate name ends with: the longest ``_``-separated tail that is a measure name.

    ``_at_`` reads as ``@``, so ``retrieval_recall_at_5`` is recall@5 and ``search_ndcg_at_10``
    is nDCG@10; a leading word such as ``retrieval_`` is skipped.

    >>> [str(metric_from_name(n)[0]) for n in ("retrieval_recall_at_5", "retrieval_mrr", "ndcg_cut_10")]
    ['R@5', 'RR', 'nDCG@10']
    """
    words = name.strip().split("_")
    for start in range(len(words)):
        tail = "_".join(words[start:])
        for candidate in (tail.replace("_at_", "@"), tail):
            if not candidate or candidate[0].isdigit():
                continue
            try:
                return parse_measure(candidate), _pretty(candidate)
            except MeasureError:
                continue
    return None


_PRETTY_WORDS = {"mrr": "MRR", "map": "MAP", "ndcg": "nDCG", "err": "ERR", "rbp": "RBP"}


def _pretty(label: str) -> str:
    """``mrr@10`` -> ``MRR@10``, ``ndcg@10`` -> ``nDCG@10``; other words as written."""
    head, at, tail = label.partition("@")
    return _PRETTY_WORDS.get(head.lower(), head) + at + tail

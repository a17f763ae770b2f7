"""Depth-k pooling: the union of the top k documents of each run, minus what is judged already."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError


@dataclass
class Pool:
    """The pairs to judge, in judging order, and how they were chosen.

    Pairs are ordered by the best rank they reached in any run, then by query id and doc
    id: a budget (``--max-judgments``, ``--max-cost``) that stops part-way leaves every
    query with its top documents judged rather than some queries fully and others not at all.

    Attributes:
        pairs: ``(query_id, doc_id, best_rank)`` in judging order.
        depth: the pool depth k.
        runs: names of the pooled runs.
        per_query: number of pooled pairs of each query (after the exclusions below).
        candidates: pairs in the union of the top-k lists, before any exclusion.
        judged_before: pairs left out because ``existing`` qrels judge them.
        missing_queries: query ids of the runs that have no text (left out).
        missing_docs: pooled pairs whose document has no text (left out), with an example.
    """

    pairs: list[tuple[str, str, int]]
    depth: int
    runs: list[str]
    per_query: dict[str, int]
    candidates: int
    judged_before: int = 0
    missing_queries: list[str] = field(default_factory=list)
    missing_docs: int = 0
    missing_doc_example: str | None = None

    def __len__(self) -> int:
        return len(self.pairs)

    def keys(self) -> set[tuple[str, str]]:
        """The pooled ``(query_id, doc_id)`` pairs."""
        return {(q, d) for q, d, _ in self.pairs}

    def summary(self) -> dict[str, Any]:
        """Counts for reports: sizes, per-query spread, exclusions."""
        sizes = sorted(self.per_query.values())
        return {
            "runs": list(self.runs),
            "depth": self.depth,
            "queries": len(self.per_query),
            "pairs": len(self.pairs),
            "candidates": self.candidates,
            "judged_before": self.judged_before,
            "per_query_min": sizes[0] if sizes else 0,
            "per_query_median": _median(sizes),
            "per_query_max": sizes[-1] if sizes else 0,
            "missing_queries": len(self.missing_queries),
            "missing_docs": self.missing_docs,
        }


def build_pool(
    runs: Sequence[Run],
    depth: int,
    *,
    existing: Qrels | None = None,
    queries: Collection[str] | None = None,
    documents: Collection[str] | None = None,
    ties: str = "trec",
) -> Pool:
    """Pool the top ``depth`` documents of each run, deduplicated across runs.

    Args:
        runs: the runs to pool (at least one).
        depth: documents taken from the top of each run's ranking per query (ties broken as
            in evaluation, ``ties``).
        existing: judgments that already exist; their pairs are not pooled again.
        queries: ids of the queries that can be judged (with text); other run queries are
            left out and listed in ``missing_queries``. None keeps every query.
        documents: ids of the documents that can be judged; None keeps every document.
        ties: "trec" or "input", the tie rule of `Run.ranking_order`.

    Returns:
        The `Pool`.

    >>> a = Run.from_dict({"q1": ["d1", "d2", "d3"], "q2": ["d4"]})
    >>> b = Run.from_dict({"q1": ["d3", "d1", "d9"]})
    >>> build_pool([a, b], 2).pairs
    [('q1', 'd1', 1), ('q1', 'd3', 1), ('q2', 'd4', 1), ('q1', 'd2', 2)]
    >>> build_pool([a, b], 2, existing=Qrels.from_dict({"q1": {"d3": 0}})).pairs
    [('q1', 'd1', 1), ('q2', 'd4', 1), ('q1', 'd2', 2)]
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ConfigError(f"The 'depth' parameter must be an int >= 1. Got {depth!r} instead.", key_path="depth")
    if not runs:
        raise ConfigError("pooling needs at least one run", key_path="runs")
    best: dict[tuple[str, str], int] = {}
    for run in runs:
        for qid, did, rank, _ in run.iter_rows(ties):
            if rank <= depth:
                key = (qid, did)
                if rank < best.get(key, depth + 1):
                    best[key] = rank
    judged = _judged_pairs(existing) if existing is not None else set()
    missing_queries: set[str] = set()
    missing_docs = 0
    example: str | None = None
    kept: list[tuple[str, str, int]] = []
    judged_before = 0
    for (qid, did), rank in best.items():
        if (qid, did) in judged:
            judged_before += 1
        elif queries is not None and qid not in queries:
            missing_queries.add(qid)
        elif documents is not None and did not in documents:
            missing_docs += 1
            example = example or did
        else:
            kept.append((qid, did, rank))
    kept.sort(key=lambda p: (p[2], p[0].encode(), p[1].encode()))
    per_query: dict[str, int] = {}
    for qid, _, _ in kept:
        per_query[qid] = per_query.get(qid, 0) + 1
    return Pool(
        pairs=kept,
        depth=depth,
        runs=[r.name or f"run{i + 1}" for i, r in enumerate(runs)],
        per_query=dict(sorted(per_query.items(), key=lambda kv: kv[0].encode())),
        candidates=len(best),
        judged_before=judged_before,
        missing_queries=sorted(missing_queries),
        missing_docs=missing_docs,
        missing_doc_example=example,
    )


def pool_from_pairs(pairs: Iterable[tuple[str, str]], *, existing: Qrels | None = None) -> Pool:
    """A pool of given pairs (e.g. every pair of a click log), minus those judged in ``existing``.

    >>> pool_from_pairs([("q1", "d1"), ("q1", "d2")]).per_query
    {'q1': 2}
    """
    judged = _judged_pairs(existing) if existing is not None else set()
    unique = dict.fromkeys(pairs)
    kept = [(q, d, 1) for q, d in unique if (q, d) not in judged]
    kept.sort(key=lambda p: (p[0].encode(), p[1].encode()))
    per_query: dict[str, int] = {}
    for qid, _, _ in kept:
        per_query[qid] = per_query.get(qid, 0) + 1
    return Pool(kept, 0, [], per_query, candidates=len(unique), judged_before=len(unique) - len(kept))


def _judged_pairs(qrels: Qrels) -> set[tuple[str, str]]:
    return {(q, d) for q, docs in qrels.to_dict().items() for d in docs}


def _median(values: Iterable[int]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return 0.0
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2

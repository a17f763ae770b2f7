"""Span measures: how much of the gold text the top k chunks hold, character by character.

For a query, let G be the set of gold characters: every ``(doc, i)`` inside a span of grade
>= ``rel`` (overlapping spans count their shared characters once). Let C_k be the characters
that the query's top k chunks cover (in evaluation order; overlapping chunks, as sliding
windows make them, count shared characters once). Then

- ``SpanRecall@k = |G ∩ C_k| / |G|``: the share of the gold text the reader is shown (0 when
  the query has no gold character);
- ``SpanPrecision@k = |G ∩ C_k| / |C_k|``: the share of the text shown that is gold (0 when
  the top k cover no character, e.g. an empty ranking).

A retrieved id absent from the chunk offsets covers nothing (a warning counts them). Queries
are those with spans (``queries="qrels"``, a query missing from the run scores 0) or those also
in the run (``"intersection"``), as for every measure.

>>> from rankgate.core.run import Run
>>> spans = SpanJudgments.of([("q", "d", 10, 20, 1)])
>>> chunks = ChunkOffsets.of([("d#0", "d", 0, 15), ("d#1", "d", 15, 30)])
>>> res = span_measures(spans, chunks, Run.from_dict({"q": ["d#1", "d#0"]}), [1, 2])
>>> res.aggregate
{'SpanRecall@1': 0.5, 'SpanPrecision@1': 0.3333333333333333, 'SpanRecall@2': 1.0, 'SpanPrecision@2': 0.3333333333333333}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import column_to_numpy, take_rows
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.core.spans import ChunkOffsets, SpanJudgments
from rankgate.evaluation.settings import Settings

Intervals = list[tuple[int, int]]


def merge_intervals(intervals: Iterable[tuple[int, int]]) -> Intervals:
    """Sorted, disjoint ``[start, end)`` intervals covering the same characters.

    >>> merge_intervals([(5, 9), (0, 3), (2, 4), (9, 10)])
    [(0, 4), (5, 10)]
    """
    out: Intervals = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def shared_length(a: Intervals, b: Intervals) -> int:
    """Characters in both of two merged interval lists.

    >>> shared_length([(0, 4), (5, 10)], [(3, 6), (8, 20)])
    4
    """
    i = j = total = 0
    while i < len(a) and j < len(b):
        total += max(0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def _length(intervals: Intervals) -> int:
    return sum(end - start for start, end in intervals)


@dataclass
class SpanResults:
    """Per-query span measures: ``values[i, j]`` is measure ``names[j]`` of query ``query_ids[i]``."""

    names: list[str]
    query_ids: list[str]
    values: np.ndarray
    queries: dict[str, int]
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    run_name: str | None = None

    @property
    def aggregate(self) -> dict[str, float]:
        """Mean over the evaluated queries (NaN when there is none)."""
        return {
            n: float(self.values[:, j].mean()) if len(self.query_ids) else math.nan for j, n in enumerate(self.names)
        }

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        return {
            q: dict(zip(self.names, row.tolist(), strict=True))
            for q, row in zip(self.query_ids, self.values, strict=True)
        }

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """The shape of ``rankgate eval --format json``."""
        out: dict[str, Any] = {
            "measures": list(self.names),
            "aggregate": {k: None if math.isnan(v) else v for k, v in self.aggregate.items()},
        }
        if per_query:
            out["per_query"] = self.per_query
        out.update(queries=dict(self.queries), settings=dict(self.settings), warnings=list(self.warnings))
        if self.run_name is not None:
            out["run"] = self.run_name
        return out


def _gold(spans: SpanJudgments, rel: int) -> dict[str, dict[str, Intervals]]:
    """query -> doc -> merged gold intervals (spans of grade >= rel); every query with spans is a key."""
    gold: dict[str, dict[str, list[tuple[int, int]]]] = {}
    relevant = spans.grades >= rel
    rows = zip(
        spans.query_ids.to_pylist(), spans.doc_ids.to_pylist(), spans.start.tolist(), spans.end.tolist(), strict=True
    )
    for (qid, doc, start, end), keep in zip(rows, relevant.tolist(), strict=True):
        by_doc = gold.setdefault(qid, {})
        if keep:
            by_doc.setdefault(doc, []).append((start, end))
    return {q: {d: merge_intervals(iv) for d, iv in docs.items()} for q, docs in gold.items()}


def _top_chunks(run: Run, chunks: ChunkOffsets, depth: int, ties: str) -> tuple[dict[str, list[Any]], int]:
    """query -> its top ``depth`` chunks in evaluation order as (doc, start, end), None when unknown;
    and how many of those ids the offsets lack."""
    order = run.ranking_order(ties)
    position = np.arange(run.num_rows) - run.offsets[run.query_codes]
    top = np.flatnonzero(position < depth)
    rows = order[top]
    at = pc.index_in(take_rows(run.doc_ids, rows), value_set=chunks.chunk_ids)
    known = column_to_numpy(pc.is_valid(at)).astype(bool)
    where = column_to_numpy(pc.fill_null(at, 0)).astype(np.int64)
    docs = pc.take(chunks.doc_ids, pa.array(where)).to_pylist()
    starts, ends = chunks.start[where].tolist(), chunks.end[where].tolist()
    qids = run.query_ids.to_pylist()
    out: dict[str, list[Any]] = {}
    for i, code in enumerate(run.query_codes[top].tolist()):
        out.setdefault(qids[code], []).append((docs[i], starts[i], ends[i]) if known[i] else None)
    return out, int(np.count_nonzero(~known))


def _query_values(gold: dict[str, Intervals], ranked: list[Any], ks: Sequence[int]) -> list[float]:
    gold_total = sum(_length(iv) for iv in gold.values())
    values: list[float] = []
    for k in ks:
        shown: dict[str, list[tuple[int, int]]] = {}
        for hit in ranked[:k]:
            if hit is not None:
                shown.setdefault(hit[0], []).append((hit[1], hit[2]))
        covered = {doc: merge_intervals(iv) for doc, iv in shown.items()}
        both = sum(shared_length(iv, gold.get(doc, [])) for doc, iv in covered.items())
        total = sum(_length(iv) for iv in covered.values())
        values += [both / gold_total if gold_total else 0.0, both / total if total else 0.0]
    return values


def span_measures(
    spans: SpanJudgments,
    chunks: ChunkOffsets,
    run: Run,
    ks: Sequence[int],
    *,
    settings: Settings | None = None,
) -> SpanResults:
    """SpanRecall@k and SpanPrecision@k of ``run`` (a run of chunk ids) for each cutoff in ``ks``."""
    settings = settings or Settings()
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"The 'ks' parameter must be cutoffs >= 1. Got {list(ks)!r} instead.")
    gold = _gold(spans, settings.rel)
    ranked, unknown = _top_chunks(run, chunks, max(ks), settings.ties)
    in_run = [q for q in gold if q in ranked]
    chosen = sorted(gold if settings.queries == "qrels" else in_run, key=str.encode)
    names = [f"{m}@{k}" for k in ks for m in ("SpanRecall", "SpanPrecision")]
    values = np.array([_query_values(gold[q], ranked.get(q, []), ks) for q in chosen]).reshape(len(chosen), len(names))
    queries = {
        "evaluated": len(chosen),
        "missing_from_run": len(gold) - len(in_run),
        "run_only": len(set(ranked) - set(gold)),
        "no_relevant": sum(1 for q in chosen if not gold[q]),
    }
    warnings = []
    if unknown:
        warnings.append(
            f"{unknown} retrieved ids in the top {max(ks)} are not in the chunk offsets; they cover no text"
        )
    return SpanResults(names, chosen, values, queries, _settings(settings, chunks), warnings, run.name)


def _settings(settings: Settings, chunks: ChunkOffsets) -> dict[str, Any]:
    return {
        "queries": settings.queries,
        "ties": settings.ties,
        "rel": settings.rel,
        "chunk_offsets": chunks.source,
        "unit": "characters, [start, end) offsets",
    }


def spans_of_chunk_qrels(qrels: Qrels, chunks: ChunkOffsets) -> SpanJudgments:
    """Chunk judgments made on one chunking, as character spans (each judged chunk's offsets, its
    grade), so that `rankgate.core.spans.chunk_qrels` carries them to another chunking.

    >>> a = ChunkOffsets.of([("a0", "d", 0, 10), ("a1", "d", 10, 20)])
    >>> b = ChunkOffsets.of([("b0", "d", 0, 5), ("b1", "d", 5, 15), ("b2", "d", 15, 20)])
    >>> from rankgate.core.spans import chunk_qrels
    >>> chunk_qrels(spans_of_chunk_qrels(Qrels.from_dict({"q": {"a1": 2}}), a), b).to_dict()
    {'q': {'b0': 0, 'b1': 2, 'b2': 2}}
    """
    at = pc.index_in(qrels.doc_ids, value_set=chunks.chunk_ids)
    known = column_to_numpy(pc.is_valid(at)).astype(bool)
    if not known.all():
        missing = qrels.doc_ids[int(np.flatnonzero(~known)[0])].as_py()
        raise ValueError(f"judged chunk {missing!r} is not in the chunk offsets {chunks.source or ''}".rstrip())
    where = column_to_numpy(at).astype(np.int64)
    return SpanJudgments(
        take_rows(qrels.query_ids, qrels.query_codes).combine_chunks(),
        pc.take(chunks.doc_ids, pa.array(where)),
        chunks.start[where],
        chunks.end[where],
        qrels.grades.astype(np.int64),
        qrels.source,
    )


def evaluate_spans(
    spans: Any,
    run: Any,
    ks: Sequence[int],
    *,
    chunk_offsets: Any,
    settings: Settings | dict[str, Any] | None = None,
    spans_format: str | None = None,
    run_format: str | None = None,
    name: str | None = None,
) -> SpanResults:
    """`span_measures` of files or values: ``spans`` (a path or `SpanJudgments`), ``run`` (a path,
    `Run` or dict of chunk ids), ``chunk_offsets`` (a path or `ChunkOffsets`), read through `rankgate.io`."""
    from rankgate.io.chunks import span_qrels
    from rankgate.io.coerce import as_run

    chosen = Settings.of(settings)
    s, c, _ = span_qrels(spans, chunk_offsets, overlap=chosen.span_overlap, format=spans_format)  # checks both
    r = as_run(run, duplicates=chosen.duplicates, format=run_format, name=name)
    return span_measures(s, c, r, ks, settings=chosen)

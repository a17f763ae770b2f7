"""Character-span judgments, chunk offsets, and the chunk judgments they imply.

A gold span ``(query, doc, start, end, grade)`` marks characters ``start <= i < end`` of a
document (0-based, end exclusive, like Python slices). A chunk ``(chunk_id, doc_id, start, end)``
covers characters of its document the same way. `chunk_qrels` judges chunks from spans, so
judgments made once carry over to any chunking:

- a chunk and a span *overlap* when they share at least one character; their overlap
  fraction is the shared length divided by the shorter of the two (1 when one holds the other);
- a chunk overlapping a span by at least ``overlap`` (and by one character at least) takes its
  grade; overlapping several, the largest grade;
- a chunk of a document that has spans for the query but overlaps none of them enough is
  judged 0 (not relevant); chunks of other documents stay unjudged.

>>> spans = SpanJudgments.of([("q1", "d", 10, 20, 2)])
>>> chunks = ChunkOffsets.of([("d#0", "d", 0, 12), ("d#1", "d", 12, 30), ("d#2", "d", 30, 40)])
>>> chunk_qrels(spans, chunks).to_dict()
{'q1': {'d#0': 2, 'd#1': 2, 'd#2': 0}}
>>> chunk_qrels(spans, chunks, overlap=0.5).to_dict()  # d#0 holds 2 of the span's 10 characters
{'q1': {'d#0': 0, 'd#1': 2, 'd#2': 0}}
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.chunks import ChunkTable
from rankgate.core.columns import column_to_numpy
from rankgate.core.ids import RowLocator, default_locator
from rankgate.core.qrels import Qrels
from rankgate.errors import InputError

_NONE = np.iinfo(np.int64).min  # "no span overlapped enough", below every grade


def _first_bad(mask: np.ndarray) -> int:
    bad = np.flatnonzero(mask)
    return int(bad[0]) if len(bad) else -1


def check_ranges(start: np.ndarray, end: np.ndarray, locate: RowLocator, what: str) -> None:
    """Each range is a non-empty stretch of characters from 0: ``0 <= start < end``."""
    row = _first_bad(start < 0)
    if row >= 0:
        raise InputError(f"{locate(row)}: {what} starts at {int(start[row])}, before the document's first character")
    row = _first_bad(start >= end)
    if row >= 0:
        raise InputError(
            f"{locate(row)}: {what} has start {int(start[row])} >= end {int(end[row])} (end is exclusive: "
            "a span of one character at i is start=i, end=i+1)"
        )


def check_unique(ids: pa.Array, locate: RowLocator, what: str) -> None:
    """Every id at most once: a second row names both places."""
    codes = column_to_numpy(pc.dictionary_encode(ids).indices).astype(np.int64)
    order = np.argsort(codes, kind="stable")
    repeat = np.flatnonzero(codes[order][1:] == codes[order][:-1])
    if len(repeat):
        later = order[repeat + 1]
        at = int(np.argmin(later))
        row, first = int(later[at]), int(order[repeat[at]])
        raise InputError(f"{locate(row)}: {what} {ids[row].as_py()!r} is given twice (first at {locate(first)})")


@dataclass(frozen=True)
class ChunkOffsets:
    """Where each chunk sits in its document: ``doc_ids[i][start[i]:end[i]]`` is chunk ``chunk_ids[i]``."""

    chunk_ids: pa.Array
    doc_ids: pa.Array
    start: np.ndarray
    end: np.ndarray
    source: str | None = None
    locate: RowLocator = field(default=default_locator(None), repr=False, compare=False)

    def __post_init__(self) -> None:
        check_ranges(self.start, self.end, self.locate, "chunk")
        check_unique(self.chunk_ids, self.locate, "chunk")

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, int, int]], source: str = "<chunks>") -> ChunkOffsets:
        """From ``(chunk_id, doc_id, start, end)`` tuples."""
        rows = list(rows)
        c, d, s, e = (list(x) for x in zip(*rows, strict=True)) if rows else ([], [], [], [])
        return cls(
            pa.array(c, pa.string()),
            pa.array(d, pa.string()),
            np.asarray(s, dtype=np.int64),
            np.asarray(e, dtype=np.int64),
            source,
            default_locator(source),
        )

    def table(self) -> ChunkTable:
        """chunk id -> doc id (to read a run of these chunks as documents)."""
        return ChunkTable(self.chunk_ids, self.doc_ids, self.source)


@dataclass(frozen=True)
class SpanJudgments:
    """Gold character spans: ``doc_ids[i][start[i]:end[i]]`` has grade ``grades[i]`` for ``query_ids[i]``."""

    query_ids: pa.Array
    doc_ids: pa.Array
    start: np.ndarray
    end: np.ndarray
    grades: np.ndarray
    source: str | None = None
    locate: RowLocator = field(default=default_locator(None), repr=False, compare=False)

    def __post_init__(self) -> None:
        check_ranges(self.start, self.end, self.locate, "span")

    @classmethod
    def of(cls, rows: Iterable[tuple[str, str, int, int, int]], source: str = "<spans>") -> SpanJudgments:
        """From ``(query_id, doc_id, start, end, grade)`` tuples."""
        rows = list(rows)
        q, d, s, e, g = (list(x) for x in zip(*rows, strict=True)) if rows else ([], [], [], [], [])
        return cls(
            pa.array(q, pa.string()),
            pa.array(d, pa.string()),
            np.asarray(s, dtype=np.int64),
            np.asarray(e, dtype=np.int64),
            np.asarray(g, dtype=np.int64),
            source,
            default_locator(source),
        )


def check_within(spans: SpanJudgments, chunks: ChunkOffsets) -> None:
    """Every span lies in a chunked document, within its extent (the last character any chunk covers)."""
    docs = pc.unique(chunks.doc_ids)
    at = pc.index_in(chunks.doc_ids, value_set=docs).to_numpy(zero_copy_only=False).astype(np.int64)
    extent = np.full(len(docs), -1, dtype=np.int64)
    np.maximum.at(extent, at, chunks.end)
    where = pc.index_in(spans.doc_ids, value_set=docs)
    row = _first_bad(column_to_numpy(pc.is_null(where)).astype(bool))
    if row >= 0:
        raise InputError(
            f"{spans.locate(row)}: document {spans.doc_ids[row].as_py()!r} has no chunk in "
            f"{chunks.source or 'the chunk offsets'}, so no chunk can be judged by this span"
        )
    ends = extent[column_to_numpy(where).astype(np.int64)] if len(spans.end) else extent[:0]
    row = _first_bad(spans.end > ends)
    if row >= 0:
        raise InputError(
            f"{spans.locate(row)}: span ends at {int(spans.end[row])}, beyond document "
            f"{spans.doc_ids[row].as_py()!r} (its chunks end at {int(ends[row])})"
        )


def chunk_qrels(spans: SpanJudgments, chunks: ChunkOffsets, *, overlap: float = 0.0) -> Qrels:
    """The chunk judgments that ``spans`` imply for ``chunks`` (see the module for the rule)."""
    if not 0.0 <= overlap <= 1.0:
        raise ValueError(f"The 'overlap' parameter must be a number in [0, 1]. Got {overlap!r} instead.")
    check_within(spans, chunks)
    left = pa.table({"doc": spans.doc_ids, "q": spans.query_ids, "s": spans.start, "e": spans.end, "g": spans.grades})
    right = pa.table({"doc": chunks.doc_ids, "chunk": chunks.chunk_ids, "cs": chunks.start, "ce": chunks.end})
    pairs = left.join(right, keys="doc", join_type="inner", use_threads=False)
    s, e, cs, ce = (column_to_numpy(pairs[k]).astype(np.int64) for k in ("s", "e", "cs", "ce"))
    shared = np.minimum(e, ce) - np.maximum(s, cs)
    shorter = np.minimum(e - s, ce - cs)
    hit = (shared > 0) & (shared >= overlap * shorter)
    value = np.where(hit, column_to_numpy(pairs["g"]).astype(np.int64), _NONE)
    graded = pa.table({"q": pairs["q"], "chunk": pairs["chunk"], "v": value})
    best = graded.group_by(["q", "chunk"], use_threads=False).aggregate([("v", "max")])
    best = best.sort_by([("q", "ascending"), ("chunk", "ascending")])  # the same order on every run
    grades = column_to_numpy(best["v_max"]).astype(np.int64)
    grades[grades == _NONE] = 0
    return Qrels(best["q"], best["chunk"], grades, source=spans.source)

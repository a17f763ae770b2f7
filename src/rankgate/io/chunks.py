"""Readers of chunk maps, chunk offsets and character-span judgments (CSV, TSV, JSONL or Parquet).

Columns are found by name, as for runs and qrels:

- a chunk map: ``chunk_id`` (or ``chunk``, ``chunk-id``, ``passage_id``, ``id``) and ``doc_id``
  (or ``docid``, ``doc``, ``corpus-id``, ``document_id``, ``parent_id``);
- chunk offsets: the same two, and ``start`` and ``end`` (character offsets, end exclusive);
- span judgments: a query column, ``doc_id``, ``start``, ``end`` and ``grade`` (``relevance``...).

Every error names ``file:line`` (a CSV row's line, a JSONL line) or the Parquet row: a missing
or empty id, an offset that is not a whole number >= 0, ``start >= end``, a chunk given twice.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from rankgate.core.chunks import ChunkTable
from rankgate.core.columns import first_empty
from rankgate.core.qrels import Qrels
from rankgate.core.spans import ChunkOffsets, SpanJudgments, check_unique
from rankgate.errors import InputError
from rankgate.io import tables
from rankgate.io.readers import _format, _table
from rankgate.io.source import read_bytes

CHUNK_COLUMNS = ("chunk_id", "chunk-id", "chunkid", "chunk", "passage_id", "_id", "id")
PARENT_COLUMNS = ("doc_id", "docid", "doc-id", "doc", "corpus-id", "corpus_id", "document_id", "parent_id", "docno")
START_COLUMNS = ("start", "begin", "start_char", "char_start", "start_offset")
END_COLUMNS = ("end", "stop", "end_char", "char_end", "end_offset")

Locate = Callable[[int], str]


def _read(path: str | os.PathLike[str], format: str | None) -> tuple[pa.Table, Locate, str]:
    source = str(path)
    fmt = _format(path, format)
    if fmt == "trec":  # a header that does not start with a query column: CSV or TSV all the same
        fmt = "tsv" if b"\t" in read_bytes(path)[:4096].split(b"\n", 1)[0] else "csv"
    elif fmt == "json":  # one object on one line reads as JSON: it is a JSONL file of one row
        fmt = "jsonl"
    table, locate = _table(read_bytes(path), fmt, source)
    return table, locate, source


def _ids(table: pa.Table, options: tuple[str, ...], what: str, source: str, locate: Locate) -> pa.Array:
    name = tables.pick_column(table, options, what, source)
    column = table[name].combine_chunks()
    if not pa.types.is_string(column.type):
        column = column.cast(pa.string())
    row = first_empty(pa.chunked_array([column]))
    if row >= 0:
        raise InputError(f"{locate(row)}: missing {what}")
    return column


def _offsets(table: pa.Table, options: tuple[str, ...], what: str, source: str, locate: Locate) -> np.ndarray:
    name = tables.pick_column(table, options, what, source)
    values = tables.numbers(table[name], what, locate)
    row = np.flatnonzero((values != np.floor(values)) | (np.abs(values) > 2**53))
    if len(row):
        raise InputError(f"{locate(int(row[0]))}: {what} {values[row[0]]!r} is not a whole number of characters")
    return values.astype(np.int64)


def read_chunk_map(path: str | os.PathLike[str], *, format: str | None = None) -> ChunkTable:
    """Each chunk's document, from a file of (chunk_id, doc_id) rows; a chunk given twice is an error.

    A chunk offsets file (with ``start`` and ``end``) is a chunk map too: the extra columns are ignored.
    """
    table, locate, source = _read(path, format)
    chunks = _ids(table, CHUNK_COLUMNS, "chunk id", source, locate)
    docs = _ids(table, PARENT_COLUMNS, "document id", source, locate)
    check_unique(chunks, locate, "chunk")
    return ChunkTable(chunks, docs, source)


@functools.lru_cache(maxsize=4)
def _cached_map(path: str, mtime_ns: int, size: int) -> ChunkTable:
    return read_chunk_map(path)


def load_chunk_map(path: str | os.PathLike[str]) -> ChunkTable:
    """`read_chunk_map`, read once per process while the file is unchanged (every query partition
    of an out-of-core or Ray evaluation folds its chunks with it)."""
    try:
        stat = os.stat(path)
    except OSError:
        raise InputError("chunk map not found", source=str(path)) from None
    return _cached_map(str(path), stat.st_mtime_ns, stat.st_size)


def read_chunk_offsets(path: str | os.PathLike[str], *, format: str | None = None) -> ChunkOffsets:
    """Chunk offsets: (chunk_id, doc_id, start, end) rows, ``start < end``, each chunk once."""
    table, locate, source = _read(path, format)
    return ChunkOffsets(
        _ids(table, CHUNK_COLUMNS, "chunk id", source, locate),
        _ids(table, PARENT_COLUMNS, "document id", source, locate),
        _offsets(table, START_COLUMNS, "start", source, locate),
        _offsets(table, END_COLUMNS, "end", source, locate),
        source,
        locate,
    )


def read_span_judgments(path: str | os.PathLike[str], *, format: str | None = None) -> SpanJudgments:
    """Gold character spans: (query, doc_id, start, end, grade) rows, ``start < end``."""
    table, locate, source = _read(path, format)
    grade_column = tables.pick_column(table, tables.GRADE_COLUMNS, "grade", source)
    grades = tables.numbers(table[grade_column], "grade", locate)
    row = np.flatnonzero(grades != np.floor(grades))
    if len(row):
        raise InputError(f"{locate(int(row[0]))}: grade {grades[row[0]]!r} is not a whole number")
    return SpanJudgments(
        _ids(table, tables.QUERY_COLUMNS, "query id", source, locate),
        _ids(table, PARENT_COLUMNS, "document id", source, locate),
        _offsets(table, START_COLUMNS, "start", source, locate),
        _offsets(table, END_COLUMNS, "end", source, locate),
        grades.astype(np.int64),
        source,
        locate,
    )


def span_qrels(
    spans: str | os.PathLike[str] | SpanJudgments,
    chunks: str | os.PathLike[str] | ChunkOffsets,
    *,
    overlap: float = 0.0,
    format: str | None = None,
) -> tuple[SpanJudgments, ChunkOffsets, Qrels]:
    """Read (when paths) the spans and the chunk offsets, and derive the chunk judgments
    (`rankgate.core.spans.chunk_qrels`): returns ``(spans, chunks, qrels)``."""
    from rankgate.core.spans import chunk_qrels

    s = spans if isinstance(spans, SpanJudgments) else read_span_judgments(spans, format=format)
    c = chunks if isinstance(chunks, ChunkOffsets) else read_chunk_offsets(chunks)
    return s, c, chunk_qrels(s, c, overlap=overlap)

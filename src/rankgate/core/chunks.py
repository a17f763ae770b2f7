"""A run of chunks read as a run of documents: chunk ids mapped to doc ids, each document's chunks folded.

RAG systems retrieve chunks (``doc7#3``) while judgments name documents (``doc7``). Two steps
turn the first into the second, on whole columns (no per-row Python):

1. **Mapping** (`document_ids`): a chunk id is ``docid<SEP>anything``, split at the last SEP,
   or it is looked up in a `ChunkTable` (chunk id -> doc id). An id that does not map (no SEP,
   nothing before it, or absent from the table) is kept as it is and counted as unmapped.
2. **Folding** (`fold_chunks`): per query, the chunks of one document become one row. The
   chunks are first put in evaluation order (the run's tie rule applied to the chunk ids);
   the document's row sits where its best chunk sits. Its score is, by ``agg``:

   - ``first`` (MaxP, the default): the best chunk's score, and the documents keep exactly the
     chunks' order, even among equal scores (the folded run is marked ``ranked``, so no tie
     rule reorders it). Evaluating it equals evaluating the chunk ranking with each
     document's later chunks removed and the chunk ids renamed to doc ids.
   - ``max``: the best chunk's score; documents with equal scores are then ordered by the tie
     rule on their doc ids (the document-level reading of the same scores).
   - ``sum``: the sum of the document's chunk scores, summed in evaluation order.

>>> from rankgate.core.run import Run
>>> run = Run.from_dict({"q1": {"a#0": 3.0, "b#0": 2.0, "a#1": 1.0}})
>>> folded, counts = to_documents(run, sep="#")
>>> folded.to_dict(), counts.mapped, counts.collapsed, counts.dropped
({'q1': {'a': 3.0, 'b': 2.0}}, 3, 1, 1)
>>> to_documents(run, sep="#", agg="sum")[0].to_dict()
{'q1': {'a': 4.0, 'b': 2.0}}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import as_strings, intern, take_rows
from rankgate.core.policies import CHUNK_AGGREGATIONS
from rankgate.core.run import Run

EXAMPLES = 3  # unmapped ids shown


@dataclass(frozen=True)
class ChunkTable:
    """Each chunk's document: ``chunk_ids[i]`` belongs to ``doc_ids[i]`` (chunk ids unique).

    Build it with `rankgate.io.chunks.read_chunk_map` (which checks the file) or from two lists.
    """

    chunk_ids: pa.Array
    doc_ids: pa.Array
    source: str | None = None

    @classmethod
    def of(cls, chunk_ids: Sequence[str], doc_ids: Sequence[str], source: str | None = None) -> ChunkTable:
        return cls(pa.array(list(chunk_ids), pa.string()), pa.array(list(doc_ids), pa.string()), source)

    def __len__(self) -> int:
        return len(self.chunk_ids)


@dataclass(frozen=True)
class ChunkCounts:
    """What mapping and folding did to a run's rows.

    Attributes:
        mapped: rows whose id named a chunk of a document.
        unmapped: rows kept under their own id (no separator, or not in the chunk map).
        collapsed: (query, document) pairs that held two or more chunks.
        dropped: chunk rows folded into another chunk of their document (rows removed).
        unmapped_ids: a few unmapped ids, in byte order.
    """

    mapped: int = 0
    unmapped: int = 0
    collapsed: int = 0
    dropped: int = 0
    unmapped_ids: tuple[str, ...] = ()

    @classmethod
    def merge(cls, parts: Sequence[ChunkCounts]) -> ChunkCounts:
        """The counts of query partitions evaluated apart, as one evaluation of everything counts them."""
        examples = sorted({x for p in parts for x in p.unmapped_ids}, key=str.encode)[:EXAMPLES]
        return cls(
            mapped=sum(p.mapped for p in parts),
            unmapped=sum(p.unmapped for p in parts),
            collapsed=sum(p.collapsed for p in parts),
            dropped=sum(p.dropped for p in parts),
            unmapped_ids=tuple(examples),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mapped": self.mapped,
            "unmapped": self.unmapped,
            "collapsed": self.collapsed,
            "dropped": self.dropped,
            "unmapped_ids": list(self.unmapped_ids),
        }


def document_ids(
    ids: Any, *, sep: str | None = None, table: ChunkTable | None = None
) -> tuple[pa.ChunkedArray, np.ndarray]:
    """Each id's document (by ``sep`` or ``table``, exactly one), and which ids mapped.

    >>> docs, mapped = document_ids(["a#1", "a#b#2", "c", "#3"], sep="#")
    >>> docs.to_pylist(), mapped.tolist()
    (['a', 'a#b', 'c', '#3'], [True, True, False, False])
    """
    if (sep is None) == (table is None):
        raise ValueError("give exactly one of 'sep' and 'table'")
    column = as_strings(ids)
    if sep is not None:
        if not sep:
            raise ValueError("the chunk separator must not be empty")
        parts = pc.split_pattern(column, pattern=sep, max_splits=1, reverse=True)
        head = pc.list_element(parts, 0)
        mapped_arrow = pc.and_(pc.equal(pc.list_value_length(parts), 2), pc.not_equal(head, ""))
        docs = pc.if_else(mapped_arrow, head, column)
    else:
        assert table is not None
        at = pc.index_in(column, value_set=table.chunk_ids)
        mapped_arrow = pc.is_valid(at)
        docs = pc.if_else(mapped_arrow, pc.take(table.doc_ids, pc.fill_null(at, 0)), column)
    mapped = np.asarray(pc.fill_null(mapped_arrow, False).to_numpy(zero_copy_only=False), dtype=bool)
    return as_strings(docs), mapped


def first_occurrences(groups: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each (group, key) pair first occurs, rows being in ranking order within each group.

    Returns:
        ``keep``: those rows, ascending (a document's best chunk, in ranking order); ``group``:
        for every row, the index into ``keep`` of its pair's first row; ``counts``: rows per pair.

    >>> keep, group, counts = first_occurrences(np.array([0, 0, 0, 1]), np.array([5, 7, 5, 5]))
    >>> keep.tolist(), group.tolist(), counts.tolist()
    ([0, 1, 3], [0, 1, 0, 2], [2, 1, 1])
    """
    keys = np.asarray(keys, dtype=np.int64)
    width = int(keys.max()) + 1 if len(keys) else 1
    pair = np.asarray(groups, dtype=np.int64) * width + keys
    _, first, inverse, counts = np.unique(pair, return_index=True, return_inverse=True, return_counts=True)
    by_position = np.argsort(first, kind="stable")  # pairs in the order of their first rows
    rank = np.empty(len(first), dtype=np.int64)
    rank[by_position] = np.arange(len(first))
    return first[by_position], rank[inverse.ravel()], counts[by_position]


def fold_chunks(run: Run, docs: pa.ChunkedArray, *, agg: str = "first", ties: str = "trec") -> tuple[Run, int, int]:
    """``run`` with each query's rows of one document (``docs[row]``, stored row order) folded into one.

    Returns:
        The document run (ranked as the module says for ``agg``), how many (query, document)
        pairs held several chunks, and how many chunk rows were dropped.
    """
    if agg not in CHUNK_AGGREGATIONS:
        raise ValueError(f"The 'chunk_agg' parameter must be one of {CHUNK_AGGREGATIONS}. Got {agg!r} instead.")
    order = run.ranking_order(ties)  # position in evaluation order -> stored row (within each query)
    ordered_docs = take_rows(docs, order)
    query = run.query_codes.astype(np.int64)  # the order moves rows within queries only
    keep, group, counts = first_occurrences(query, intern(ordered_docs).codes)
    scores = run.scores[order]
    kept_scores = np.bincount(group, weights=scores, minlength=len(keep)) if agg == "sum" else scores[keep]
    queries = pa.DictionaryArray.from_arrays(pa.array(query[keep].astype(np.int32)), run.query_ids)
    folded = Run(
        queries,
        take_rows(ordered_docs, keep),
        kept_scores,
        name=run.name,
        source=run.source,
        ranked=agg == "first",
    )
    return folded, int(np.count_nonzero(counts > 1)), int(len(order) - len(keep))


def to_documents(
    run: Run, *, sep: str | None = None, table: ChunkTable | None = None, agg: str = "first", ties: str = "trec"
) -> tuple[Run, ChunkCounts]:
    """Map ``run``'s chunk ids to documents and fold each document's chunks (see the module)."""
    docs, mapped = document_ids(run.doc_ids, sep=sep, table=table)
    n_mapped = int(np.count_nonzero(mapped))
    unmapped_ids: tuple[str, ...] = ()
    if n_mapped < len(mapped):
        unmapped = pc.unique(run.doc_ids.filter(pa.array(~mapped)))
        first = pc.take(unmapped, pc.sort_indices(unmapped)[:EXAMPLES])
        unmapped_ids = tuple(first.to_pylist())
    if n_mapped == 0:  # nothing to fold: every id is its own document
        return run, ChunkCounts(0, len(mapped), 0, 0, unmapped_ids)
    folded, collapsed, dropped = fold_chunks(run, docs, agg=agg, ties=ties)
    return folded, ChunkCounts(n_mapped, len(mapped) - n_mapped, collapsed, dropped, unmapped_ids)

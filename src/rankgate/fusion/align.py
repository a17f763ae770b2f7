"""The runs to fuse, aligned on the union of their (query, document) pairs.

Every run is taken in evaluation order (score descending, ties by doc id descending, as
trec_eval orders them). Documents are interned once for all runs; a fused slot is a
(query, document) pair that at least one run retrieved. Each run keeps, per row, the slot it
fills, its 0-based rank within its query and its score: every fusion method is then a few
array operations over these columns (no per-row Python).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankgate.core.columns import as_string_array, byte_order_rank, column_to_numpy, take_rows
from rankgate.core.run import Run
from rankgate.errors import InputError


@dataclass
class Member:
    """One run's rows in evaluation order, placed on the fused slots."""

    slots: np.ndarray  # int64: the fused slot of each row
    ranks: np.ndarray  # int64: 0-based rank within the query
    scores: np.ndarray  # float64
    starts: np.ndarray  # int64: first row of each of the run's queries (rows grouped by query)
    lengths: np.ndarray  # int64 per fused query: documents this run retrieved (0 if none)


@dataclass
class Aligned:
    """The union of the runs' pairs (slots grouped by query, byte order) and each run on it."""

    query_ids: pa.StringArray
    doc_names: pa.StringArray  # every document id once, in byte order
    slot_query: np.ndarray  # int64 per slot
    slot_doc: np.ndarray  # int64 per slot: index into doc_names (so also the doc's byte rank)
    offsets: np.ndarray  # CSR over slots by query
    members: list[Member]

    @property
    def num_slots(self) -> int:
        return len(self.slot_query)

    def candidates(self) -> np.ndarray:
        """Per slot, how many documents its query has in the union (BordaFuse's candidates)."""
        return np.repeat(np.diff(self.offsets), np.diff(self.offsets))


def align(runs: Sequence[Run]) -> Aligned:
    """Place ``runs`` on the union of their (query, document) pairs."""
    if len(runs) < 2:
        raise InputError(f"fusion needs at least two runs; got {len(runs)}")
    query_ids = _union_queries(runs)
    parts = [_in_order(run, query_ids) for run in runs]
    docs = pa.chunked_array([c for _, d, _, _ in parts for c in d.chunks], type=pa.string())
    encoded = pc.dictionary_encode(docs).combine_chunks()
    codes = column_to_numpy(encoded.indices).astype(np.int64)
    rank = byte_order_rank(encoded.dictionary)  # dictionary entries are distinct
    doc_names = as_string_array(encoded.dictionary.take(pa.array(np.argsort(rank))))
    doc_rank = rank[codes]
    n_docs = max(len(doc_names), 1)
    keys = np.concatenate([q for q, _, _, _ in parts]) * n_docs + doc_rank
    del codes, doc_rank
    unique, inverse = np.unique(keys, return_inverse=True)
    slot_query, slot_doc = np.divmod(unique, n_docs)
    offsets = np.searchsorted(slot_query, np.arange(len(query_ids) + 1)).astype(np.int64)
    members: list[Member] = []
    at = 0
    for q, _, ranks, scores in parts:
        n = len(q)
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if n else np.zeros(0, dtype=np.int64)
        lengths = np.zeros(len(query_ids), dtype=np.int64)
        lengths[q[starts]] = np.diff(np.r_[starts, n])
        members.append(Member(inverse[at : at + n].astype(np.int64), ranks, scores, starts, lengths))
        at += n
    return Aligned(query_ids, doc_names, slot_query, slot_doc, offsets, members)


def _union_queries(runs: Sequence[Run]) -> pa.StringArray:
    ids = pc.unique(pa.chunked_array([r.query_ids for r in runs], type=pa.string()))
    return as_string_array(ids.take(pc.sort_indices(ids)))


def _in_order(run: Run, query_ids: pa.StringArray) -> tuple[np.ndarray, pa.ChunkedArray, np.ndarray, np.ndarray]:
    """(fused query code, doc id, rank, score) per row of ``run`` in evaluation order."""
    order = run.ranking_order("trec")
    qmap = column_to_numpy(pc.index_in(run.query_ids, value_set=query_ids)).astype(np.int64)
    codes = run.query_codes.astype(np.int64)  # rows stay grouped by query in evaluation order
    ranks = np.arange(run.num_rows, dtype=np.int64) - run.offsets[codes]
    return qmap[codes], take_rows(run.doc_ids, order), ranks, run.scores[order]


def align_keys(parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], n_queries: int) -> Aligned:
    """`align` for runs given as (query code, integer doc key, score) rows, best first per query.

    Doc keys are used as they are (``doc_names`` stays empty): ties among fused slots can then be
    broken by key, e.g. corpus position in `rankgate.bench`.
    """
    n_keys = int(max((int(d.max()) for _, d, _ in parts if len(d)), default=0)) + 1
    keys = np.concatenate([q.astype(np.int64) * n_keys + d for q, d, _ in parts])
    unique, inverse = np.unique(keys, return_inverse=True)
    slot_query, slot_doc = np.divmod(unique, n_keys)
    offsets = np.searchsorted(slot_query, np.arange(n_queries + 1)).astype(np.int64)
    members, at = [], 0
    for q, _, scores in parts:
        n = len(q)
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if n else np.zeros(0, dtype=np.int64)
        lengths = np.zeros(n_queries, dtype=np.int64)
        lengths[q[starts]] = np.diff(np.r_[starts, n])
        ranks = np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, n]))
        members.append(Member(inverse[at : at + n].astype(np.int64), ranks, scores, starts, lengths))
        at += n
    return Aligned(
        pa.array([], type=pa.string()), pa.array([], type=pa.string()), slot_query, slot_doc, offsets, members
    )

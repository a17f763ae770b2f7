"""The runs to fuse, aligned on the union of their (query, document) pairs.

Every run is taken in evaluation order (score descending, ties by doc id descending, as
trec_eval orders them). A fused slot is a (query, document) pair that at least one run
retrieved; pairs are matched by hash and checked on the doc ids (`align`). Each run keeps, per row, the slot it
fills, its 0-based rank within its query and its score: every fusion method is then a few
array operations over these columns (no per-row Python).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankgate.core.columns import as_string_array, column_to_numpy, take_rows
from rankgate.core.hashing import string_hashes
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
    """The union of the runs' pairs (slots grouped by query) and each run on it."""

    query_ids: pa.StringArray
    doc_names: pa.ChunkedArray | pa.Array  # every run's doc ids, run after run, as stored
    slot_query: np.ndarray  # int64 per slot
    slot_doc: np.ndarray  # int64 per slot: a row of doc_names holding the slot's doc id
    offsets: np.ndarray  # CSR over slots by query
    members: list[Member]

    @property
    def num_slots(self) -> int:
        return len(self.slot_query)

    def candidates(self) -> np.ndarray:
        """Per slot, how many documents its query has in the union (BordaFuse's candidates)."""
        return np.repeat(np.diff(self.offsets), np.diff(self.offsets))


def align(runs: Sequence[Run]) -> Aligned:
    """Place ``runs`` on the union of their (query, document) pairs.

    A pair is keyed by its query code (high bits, exact) and a hash of the doc id (low bits);
    every pair of rows the key puts together is then checked on the doc ids themselves, and a
    collision (never seen in practice) falls back to interning every doc id (`_slots_exact`).
    """
    if len(runs) < 2:
        raise InputError(f"fusion needs at least two runs; got {len(runs)}")
    query_ids = _union_queries(runs)
    parts = [_in_order(run, query_ids) for run in runs]
    chunks = [c for run in runs for c in run.doc_ids.chunks]
    docs = pa.chunked_array([pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())])  # taken from twice
    bases = np.cumsum([0] + [run.num_rows for run in runs])
    stored = np.concatenate([base + order for base, (_, order, _, _) in zip(bases, parts, strict=False)])
    qcodes = np.concatenate([q for q, _, _, _ in parts])
    hashes = np.concatenate(
        [string_hashes(run.doc_ids)[order] for run, (_, order, _, _) in zip(runs, parts, strict=True)]
    )
    found = _slots_hashed(qcodes, hashes, stored, docs, len(query_ids))
    del hashes
    slot_query, slot_doc, inverse = found if found is not None else _slots_exact(qcodes, stored, docs)
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
    return Aligned(query_ids, docs, slot_query, slot_doc, offsets, members)


Slots = tuple[np.ndarray, np.ndarray, np.ndarray]  # slot_query, slot_doc, each row's slot


def _slots_hashed(
    qcodes: np.ndarray, hashes: np.ndarray, stored: np.ndarray, docs: pa.ChunkedArray, n_queries: int
) -> Slots | None:
    """Slots from (query code, doc-id hash) keys, checked on the strings; None on a collision."""
    shift = np.uint64(64 - max(int(n_queries - 1).bit_length(), 1))
    keys = (qcodes.astype(np.uint64) << shift) | (hashes >> np.uint64(64 - int(shift)))
    perm = np.argsort(keys)
    keys = keys[perm]
    new = np.r_[True, keys[1:] != keys[:-1]] if len(keys) else np.zeros(0, dtype=bool)
    same = np.flatnonzero(~new)  # sorted positions that repeat the key before them
    if len(same):
        left, right = take_rows(docs, stored[perm[same - 1]]), take_rows(docs, stored[perm[same]])
        if not pc.all(pc.equal(left, right)).as_py():
            return None
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[perm] = np.cumsum(new) - 1
    first = perm[new]
    return qcodes[first], stored[first], inverse


def _slots_exact(qcodes: np.ndarray, stored: np.ndarray, docs: pa.ChunkedArray) -> Slots:
    """Slots from interned doc ids: exact whatever the hashes do."""
    codes = column_to_numpy(pc.dictionary_encode(docs).combine_chunks().indices).astype(np.int64)[stored]
    n_docs = int(codes.max()) + 1 if len(codes) else 1
    unique, index, inverse = np.unique(qcodes * n_docs + codes, return_index=True, return_inverse=True)
    return unique // n_docs, stored[index], inverse.reshape(-1)


def _union_queries(runs: Sequence[Run]) -> pa.StringArray:
    ids = pc.unique(pa.chunked_array([r.query_ids for r in runs], type=pa.string()))
    return as_string_array(ids.take(pc.sort_indices(ids)))


def _in_order(run: Run, query_ids: pa.StringArray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(fused query code, stored row, rank, score) per row of ``run`` in evaluation order."""
    order = run.ranking_order("trec").astype(np.int64)
    qmap = column_to_numpy(pc.index_in(run.query_ids, value_set=query_ids)).astype(np.int64)
    codes = run.query_codes.astype(np.int64)  # rows stay grouped by query in evaluation order
    ranks = np.arange(run.num_rows, dtype=np.int64) - run.offsets[codes]
    return qmap[codes], order, ranks, run.scores[order]


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

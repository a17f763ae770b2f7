"""The runs to fuse, aligned on the union of their (query, document) pairs.

Every run is taken in evaluation order (score descending, ties by doc id descending, as
trec_eval orders them). A fused slot is a (query, document) pair that at least one run
retrieved; pairs are matched by the doc-id hashes the runs kept from their own duplicate scan
and checked on the doc ids themselves (`align`). Each run keeps, per row, the slot it fills,
its 0-based rank within its query and its score: every fusion method is then a few array
operations over these columns (no per-row Python).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import as_string_array, column_to_numpy, intern, take_rows
from rankgate.core.run import Run
from rankgate.errors import InputError


class Member:
    """One run's rows in evaluation order, placed on the fused slots.

    ``ranks`` and ``scores`` are made on first use: a method that reads ranks only never
    copies the scores, and the other way round.
    """

    def __init__(
        self,
        slots: np.ndarray,
        starts: np.ndarray,
        lengths: np.ndarray,
        ranks: np.ndarray | Callable[[], np.ndarray],
        scores: np.ndarray | Callable[[], np.ndarray],
    ) -> None:
        self.slots = slots  # int32 or int64: the fused slot of each row
        self.starts = starts  # int64: first row of each of the run's queries (rows grouped by query)
        self.lengths = lengths  # int64 per fused query: documents this run retrieved (0 if none)
        self._ranks = ranks
        self._scores = scores

    @property
    def ranks(self) -> np.ndarray:
        """int64: 0-based rank within the query."""
        if callable(self._ranks):
            self._ranks = self._ranks()
        return self._ranks

    @property
    def scores(self) -> np.ndarray:
        """float64, in evaluation order."""
        if callable(self._scores):
            self._scores = self._scores()
        return self._scores


@dataclass
class Aligned:
    """The union of the runs' pairs (slots grouped by query) and each run on it."""

    query_ids: pa.StringArray
    doc_names: pa.ChunkedArray | pa.Array  # every run's doc ids, run after run, as stored
    slot_query: np.ndarray  # int32 (int64 past 2**31 rows) per slot, ascending
    slot_doc: np.ndarray  # int64 per slot: a row of doc_names holding the slot's doc id
    offsets: np.ndarray  # CSR over slots by query
    members: list[Member]
    slot_hash_high: np.ndarray | None = None  # uint32 per slot: its doc id's `Run.doc_hash_high`

    @property
    def num_slots(self) -> int:
        return len(self.slot_query)

    def candidates(self) -> np.ndarray:
        """Per slot, how many documents its query has in the union (BordaFuse's candidates)."""
        return np.repeat(np.diff(self.offsets), np.diff(self.offsets))


def align(runs: Sequence[Run]) -> Aligned:
    """Place ``runs`` on the union of their (query, document) pairs.

    A pair is keyed by its fused query code (high 32 bits, exact) and the high 32 bits of its
    doc-id hash (`Run.doc_hash_high`, kept by each run). Rows with equal keys are then checked
    on the doc ids themselves; the rare key shared by different ids is split by interning the
    ids of its rows only (`_split_collisions`).
    """
    if len(runs) < 2:
        raise InputError(f"fusion needs at least two runs; got {len(runs)}")
    query_ids = _union_queries(runs)
    total = sum(run.num_rows for run in runs)
    kind = np.int32 if total < 2**31 else np.int64
    keys = np.empty(total, dtype=np.uint64)
    stored: np.ndarray | None = None  # row of doc_names per row in evaluation order; None: the same
    qmaps: list[np.ndarray] = []
    orders: list[np.ndarray | None] = []
    at = 0
    for run in runs:
        n = run.num_rows
        order = run.ranking_order("trec")
        moved = n > 1 and not bool((order[1:] > order[:-1]).all())
        qmap = column_to_numpy(pc.index_in(run.query_ids, value_set=query_ids)).astype(np.uint64)
        part = keys[at : at + n]
        np.take(qmap, run.query_codes, out=part)  # codes stay grouped by query in evaluation order
        part <<= np.uint64(32)
        part |= run.doc_hash_high[order] if moved else run.doc_hash_high
        if moved:
            stored = np.arange(total, dtype=kind) if stored is None else stored
            stored[at : at + n] = order
            stored[at : at + n] += at
        qmaps.append(qmap.astype(np.int64))
        orders.append(order if moved else None)
        at += n
    chunks = [c for run in runs for c in run.doc_ids.chunks]
    docs = pa.chunked_array([pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())])  # taken from often
    slot_query, slot_doc, inverse, slot_high = _slots(keys, stored, docs, kind)
    del keys
    offsets = np.searchsorted(slot_query, np.arange(len(query_ids) + 1)).astype(np.int64)
    members: list[Member] = []
    at = 0
    for run, fused_code, evaluation in zip(runs, qmaps, orders, strict=True):
        n = run.num_rows
        lengths = np.zeros(len(query_ids), dtype=np.int64)
        lengths[fused_code] = run.depths
        members.append(
            Member(inverse[at : at + n], run.offsets[:-1], lengths, _ranks_of(run), _scores_of(run, evaluation))
        )
        at += n
    return Aligned(query_ids, docs, slot_query, slot_doc, offsets, members, slot_high)


def _ranks_of(run: Run) -> Callable[[], np.ndarray]:
    def ranks() -> np.ndarray:  # `positions_in_group`, with one temporary fewer
        out = np.arange(run.num_rows, dtype=np.int64)
        out -= np.repeat(run.offsets[:-1], run.depths)
        return out

    return ranks


def _scores_of(run: Run, order: np.ndarray | None) -> Callable[[], np.ndarray]:
    return lambda: run.scores if order is None else run.scores[order]


Slots = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # slot_query, slot_doc, each row's slot, slot_high


def _slots(keys: np.ndarray, stored: np.ndarray | None, docs: pa.ChunkedArray, kind: type) -> Slots:
    """Slots from (query code, doc-id hash) keys, checked on the strings (collisions split).

    ``keys`` is consumed: sorted in place, then its buffer holds the slot numbers.
    """
    n = len(keys)
    perm = np.argsort(keys)
    keys.sort()  # keys[perm], without a copy
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    same = np.flatnonzero(~new)  # sorted positions that repeat the key before them
    rows = perm if stored is None else stored[perm]
    if len(same):
        right = take_rows(docs, rows[same])
        same -= 1
        equal = column_to_numpy(pc.equal(take_rows(docs, rows[same]), right))
        same += 1
        bad = same[~equal]
        del same, right, equal
        if len(bad):
            _split_collisions(new, perm, rows, bad, docs)
            rows = perm if stored is None else stored[perm]
    firsts = keys[new]
    slot_high = firsts.astype(np.uint32)  # the low 32 bits: the doc-id hash
    slot_query = _query_part(firsts, kind)
    slot: np.ndarray = np.cumsum(new, dtype=kind, out=keys.view(kind)[:n])
    slot -= 1
    inverse: np.ndarray = np.empty(n, dtype=kind)
    inverse[perm] = slot
    return slot_query, rows[new].astype(np.int64, copy=False), inverse, slot_high


def _query_part(keys: np.ndarray, kind: type) -> np.ndarray:
    """The query codes in the high 32 bits of ``keys`` (consumed), as ``kind``."""
    keys >>= np.uint64(32)
    return keys.astype(kind)


def _split_collisions(
    new: np.ndarray, perm: np.ndarray, rows: np.ndarray, bad: np.ndarray, docs: pa.ChunkedArray
) -> None:
    """Split the key groups that hold different doc ids (``bad``: sorted positions), in place.

    The rows of those groups are put in order of their interned doc ids inside each group, and
    a new slot starts wherever the id changes: exact whatever the hashes do.
    """
    group = np.cumsum(new) - 1
    at = np.flatnonzero(np.isin(group, np.unique(group[bad])))  # whole groups: contiguous positions
    codes = intern(take_rows(docs, rows[at])).codes
    order = np.lexsort((codes, group[at]))
    perm[at] = perm[at[order]]
    g, c = group[at[order]], codes[order]
    new[at] = np.r_[True, (g[1:] != g[:-1]) | (c[1:] != c[:-1])]


def _union_queries(runs: Sequence[Run]) -> pa.StringArray:
    ids = pc.unique(pa.chunked_array([r.query_ids for r in runs], type=pa.string()))
    return as_string_array(ids.take(pc.sort_indices(ids)))


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
        members.append(Member(inverse[at : at + n].astype(np.int64), starts, lengths, ranks, scores))
        at += n
    return Aligned(
        pa.array([], type=pa.string()), pa.array([], type=pa.string()), slot_query, slot_doc, offsets, members
    )

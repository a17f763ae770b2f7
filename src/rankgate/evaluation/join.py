"""Which run rows are judged: the join of a `Run` with its `Qrels` on (query, doc).

With the native kernels (`rankgate.core.native`), query by query: each query's judgments in a
small hash table keyed by the doc-id hash words that `Run` and `Qrels` keep, its run rows looked
up in it, every hash match checked on the strings. Without them, in numpy: the run's doc-id
hashes, kept from duplicate detection, pick the candidate rows without reading a string
(`Run.candidate_rows`; every row when the judged pairs are too many for that filter); their
(query, doc) pairs are matched on 64-bit hashes, and every match is then checked on the strings
themselves. If two judgments share a hash, or a check fails, the exact join on interned ids takes
over, so the answer never depends on a hash.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core import native
from rankgate.core.columns import (
    column_to_numpy,
    concat_releasing,
    indices,
    intern,
    release_unused,
    slice_bounds,
    take_rows,
)
from rankgate.core.hashing import string_hashes
from rankgate.core.parallel import parallel_map
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run


def index_in(values: pa.StringArray | pa.ChunkedArray, value_set: pa.StringArray) -> np.ndarray:
    """Position (int32) of each value in ``value_set``, -1 where absent."""
    return column_to_numpy(pc.index_in(values, value_set=value_set), null_value=-1)


def join(q: Qrels, r: Run, *, qrels_of_run: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Run rows (stored order, ascending) whose (query, doc) pair is judged, and its qrels row.

    ``qrels_of_run``: `index_in(r.query_ids, q.query_ids)`, when the caller has it.
    """
    empty = np.zeros(0, dtype=np.int64)
    if q.num_rows == 0 or r.num_rows == 0:
        return empty, empty
    found = _join_native(q, r, qrels_of_run)
    if found is not None:
        return found
    judged_queries = pc.take(q.query_ids, indices(q.query_codes))
    candidate = r.candidate_rows(judged_queries, q.doc_ids)  # a superset of the judged pairs
    found = _join_by_hash(q, r, candidate)
    if found is None:
        found = _join_exact(q, r, candidate)
    release_unused()  # the slices' temporaries, spread over the threads' heaps
    return found


_NATIVE_SLICE_ROWS = 1 << 18  # run rows per kernel call (whole queries): the slices share the threads


def _join_native(q: Qrels, r: Run, qrels_of_run: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """`join` by the native kernel (int32 rows), or None where it does not apply (no library, 2**31
    rows or more, doc-id columns it cannot read)."""
    lib = native.library()
    if lib is None or max(r.num_rows, q.num_rows) >= 2**31:
        return None
    run_docs, qrels_docs = native.string_chunks(r.doc_ids), native.string_chunks(q.doc_ids)
    if run_docs is None or qrels_docs is None:
        return None
    judged_query = index_in(r.query_ids, q.query_ids) if qrels_of_run is None else qrels_of_run
    judged_query = np.ascontiguousarray(judged_query, dtype=np.int32)
    run_offsets = np.ascontiguousarray(r.offsets, dtype=np.int64)
    qrels_offsets = np.ascontiguousarray(q.offsets, dtype=np.int64)
    run_high = np.ascontiguousarray(r.doc_hash_high, dtype=np.uint32)
    qrels_high = np.ascontiguousarray(q.doc_hash_high, dtype=np.uint32)
    judged = np.where(judged_query >= 0, np.diff(qrels_offsets)[np.maximum(judged_query, 0)], 0)
    judged = np.minimum(judged, np.diff(run_offsets))  # at most one match per judgment and per run row
    cuts = np.searchsorted(run_offsets, np.arange(0, r.num_rows, _NATIVE_SLICE_ROWS)[1:])
    bounds = slice_bounds(cuts, r.num_queries)
    fixed = (
        run_offsets.ctypes.data,
        judged_query.ctypes.data,
        qrels_offsets.ctypes.data,
        run_high.ctypes.data,
        qrels_high.ctypes.data,
        *run_docs.arguments(),
        *qrels_docs.arguments(),
    )

    def match(first: int, last: int) -> tuple[np.ndarray, np.ndarray] | None:
        capacity = int(judged[first:last].sum())
        run_rows, qrel_rows = np.empty(capacity, dtype=np.int32), np.empty(capacity, dtype=np.int32)
        counts = np.zeros(1, dtype=np.int64)
        outputs = (run_rows.ctypes.data, qrel_rows.ctypes.data, counts.ctypes.data)
        if lib.rg_join(first, last, *fixed, capacity, *outputs) != 0:
            return None
        n = int(counts[0])
        return run_rows[:n].copy(), qrel_rows[:n].copy()

    parts = parallel_map(lambda b: match(*b), itertools.pairwise(bounds))
    if any(p is None for p in parts):
        return None
    done = [p for p in parts if p is not None]
    return concat_releasing([p[0] for p in done], np.int32), concat_releasing([p[1] for p in done], np.int32)


_PAIR = np.uint64(0xC2B2AE3D27D4EB4F)  # odd: mixes a query's hash into its docs' hashes
_HASH_SLICE = 1 << 18  # run rows hashed and looked up at a time when every row is a candidate


def _pair_hashes(doc_hashes: np.ndarray, query_hashes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return doc_hashes ^ (np.take(query_hashes, codes) * _PAIR)


def _join_by_hash(q: Qrels, r: Run, candidate: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """`join` for the candidate rows (None: every row, a slice at a time) by 64-bit (query, doc)
    hashes, each match checked on the strings themselves; None (use `_join_exact`) if two
    judgments share a hash or a check fails.

    With every row a candidate (judged pairs too many for `Run.candidate_rows`' filter, as with
    BEIR's ~50 judgments a query at depth 100) the run's doc ids are hashed slice by slice: no
    copy of them and no interning of the judged ids.
    """
    qrels_keys = _pair_hashes(string_hashes(q.doc_ids), string_hashes(q.query_ids), q.query_codes)
    key_order = np.argsort(qrels_keys).astype(np.int32 if len(qrels_keys) < 2**31 else np.int64)
    sorted_keys = qrels_keys[key_order]
    del qrels_keys
    if (sorted_keys[1:] == sorted_keys[:-1]).any():
        return None
    run_query_hashes = string_hashes(r.query_ids)
    qrels_query = index_in(r.query_ids, q.query_ids)
    index = _HashIndex(sorted_keys, key_order)
    del sorted_keys, key_order

    def match(rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray, bool]:
        docs = take_rows(r.doc_ids, rows) if isinstance(rows, np.ndarray) else r.doc_ids[rows]
        codes = r.query_codes[rows]
        found, qrel_rows = index.find(_pair_hashes(string_hashes(docs), run_query_hashes, codes))
        other_doc = pc.any(pc.not_equal(take_rows(docs, found), take_rows(q.doc_ids, qrel_rows))).as_py()
        exact = not other_doc and bool((qrels_query[codes[found]] == q.query_codes[qrel_rows]).all())
        run_rows = rows[found] if isinstance(rows, np.ndarray) else found + rows.start
        return run_rows, qrel_rows, exact

    if candidate is not None:
        parts = [match(candidate)]
    else:
        parts = parallel_map(match, [slice(lo, lo + _HASH_SLICE) for lo in range(0, r.num_rows, _HASH_SLICE)])
    index.clear()  # before the output is put together: with BEIR's qrels, 100 MB
    if not all(p[2] for p in parts):
        return None  # a 64-bit collision: never seen, but the answer must be exact
    run_rows, qrel_rows = [p[0] for p in parts], [p[1] for p in parts]
    del parts
    return concat_releasing(run_rows, _row_type(r.num_rows)), concat_releasing(qrel_rows, _row_type(q.num_rows))


def _row_type(n: int) -> type[np.signedinteger]:
    """int32 row numbers below 2**31 rows: BEIR-like qrels match millions of rows."""
    return np.int32 if n < 2**31 else np.int64


class _HashIndex:
    """Sorted, distinct 64-bit hashes found by their top bits: a table of where each bucket of the
    sorted array starts (one to two buckets per key, so most hold none or one), then one gather per
    key and bucket entry. Many times faster than a search per key, and no sort of the keys."""

    def __init__(self, sorted_keys: np.ndarray, rows: np.ndarray) -> None:
        self.keys = sorted_keys
        self.rows = rows  # what each key stands for
        bits = int(np.clip(np.ceil(np.log2(max(len(sorted_keys), 1))), 4, 28))
        self.shift = np.uint64(64 - bits)
        counts = np.bincount((sorted_keys >> self.shift).astype(np.intp), minlength=1 << bits)
        self.widest = int(counts.max(initial=0))
        self.starts = np.zeros((1 << bits) + 1, dtype=np.int32 if len(sorted_keys) < 2**31 else np.int64)
        np.cumsum(counts, out=self.starts[1:])

    def clear(self) -> None:
        self.keys = self.rows = self.starts = np.zeros(0, dtype=np.int64)

    def find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions (ascending) of the ``keys`` that are in the index, and the row each stands for."""
        bucket = keys >> self.shift
        first = np.take(self.starts, bucket)
        size = np.take(self.starts, bucket + np.uint64(1)) - first
        place = np.full(len(keys), -1, dtype=np.int64)
        rows = np.flatnonzero(size)
        for j in range(self.widest):  # the j-th entry of each bucket still unmatched
            at = first[rows].astype(np.int64) + j
            same = np.take(self.keys, at) == keys[rows]
            place[rows[same]] = at[same]
            rows = rows[~same & (size[rows] > j + 1)]
            if len(rows) == 0:
                break
        found = np.flatnonzero(place >= 0)
        return found, self.rows[place[found]]


def _sorted_lookup(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position of each key in ``sorted_keys`` and whether it is there.

    The keys are looked up in sorted order: each search then starts where the last one
    ended, many times faster than random searches in a large array.
    """
    if len(sorted_keys) == 0:
        return np.zeros(len(keys), dtype=np.int64), np.zeros(len(keys), dtype=bool)
    order = np.argsort(keys)
    at = np.empty(len(keys), dtype=np.int64)
    at[order] = np.searchsorted(sorted_keys, keys[order])
    np.minimum(at, len(sorted_keys) - 1, out=at)
    return at, sorted_keys[at] == keys


def _join_exact(q: Qrels, r: Run, candidate: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """`join` by interned ids: Arrow looks up the doc ids of ``candidate`` (None: all rows)."""
    docs = intern(q.doc_ids)
    n_docs = len(docs.values)
    qrels_keys = q.query_codes.astype(np.int64) * n_docs + docs.codes  # int32 codes would overflow
    key_order = np.argsort(qrels_keys)
    sorted_keys = qrels_keys[key_order]
    rows, run_doc = _doc_matches(r, candidate, docs.values)
    run_query = index_in(r.query_ids, q.query_ids)[r.query_codes[rows]]
    known = run_query >= 0
    rows, run_doc, run_query = rows[known], run_doc[known], run_query[known]
    at, hit = _sorted_lookup(sorted_keys, run_query.astype(np.int64) * n_docs + run_doc)
    return rows[hit], key_order[at[hit]]


_JOIN_SLICE = 1 << 20  # rows per lookup, at least; and at least 4x the ids looked up, since
# Arrow hashes the value set again for every call: with millions of judged docs, 1M-row slices
# would spend most of their time rebuilding that table.


def _doc_matches(r: Run, candidate: np.ndarray | None, values: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``candidate`` (None: every row, a slice at a time) whose doc id is one of
    ``values``, and its index in ``values``."""
    if candidate is not None:
        run_doc = index_in(take_rows(r.doc_ids, candidate), values)
        found = run_doc >= 0
        return candidate[found], run_doc[found]

    step = max(_JOIN_SLICE, 4 * len(values))

    def lookup(lo: int) -> tuple[np.ndarray, np.ndarray]:
        run_doc = index_in(r.doc_ids.slice(lo, step), values)
        rows = np.flatnonzero(run_doc >= 0)
        return rows + lo, run_doc[rows]

    parts = parallel_map(lookup, range(0, r.num_rows, step))
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

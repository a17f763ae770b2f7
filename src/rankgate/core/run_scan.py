"""The passes over every row of a `Run` that its constructor and the tie rule need.

They work on slices of rows, on a few threads (`parallel_map`): numpy and Arrow release
the GIL in their loops, and each slice writes only its own part of the output, so the
result is the same as one pass in order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core import native
from rankgate.core.columns import (
    column_to_numpy,
    find_duplicate_pairs,
    indices,
    numeric_array,
    release_unused,
    slice_bounds,
    take_rows,
)
from rankgate.core.hashing import string_hashes
from rankgate.core.parallel import WORKERS, parallel_map


@dataclass
class DocScan:
    hash_high: np.ndarray  # uint32 high words of the doc-id hashes, one per row
    self_match_rows: np.ndarray  # rows whose doc id may equal their query id (hash match)
    later: np.ndarray  # duplicate (query, doc) pairs: later rows...
    first: np.ndarray  # ...and the rows they repeat


SLICE_ROWS = 1 << 18  # a quarter million rows: the slice's hashes and sort stay in cache


def scan_doc_ids(codes: np.ndarray, docs: pa.ChunkedArray, query_ids: pa.StringArray) -> DocScan:
    """Hash every doc id once and use the hashes three ways: duplicates, self-matches, joins.

    When each query's rows are contiguous (as in nearly every run file) the rows are taken
    in slices of about `SLICE_ROWS` that never split a query, so duplicates are found slice
    by slice, on several threads: no full-size hash array, and sorts that stay in cache (or, with
    the native kernels and ascending query codes, a small hash table per query). Otherwise one
    pass covers the whole run. Each slice's doc ids are hashed as it is taken (`string_hashes`),
    so no full-size column of 64-bit hashes is ever made.
    """
    n = len(codes)
    query_hashes = string_hashes(query_ids)
    high = np.empty(n, dtype=np.uint32)

    def scan(bounds: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = bounds
        part = docs.slice(lo, hi - lo)
        group = codes[lo:hi]
        hashes = string_hashes(part)
        found = _native_doc_scan(group, part, hashes, query_hashes, high[lo:hi])
        if found is None:
            matches = np.flatnonzero(np.take(query_hashes, group) == hashes)
            high[lo:hi] = hashes.view("<u4")[1::2]
            later, first = find_duplicate_pairs(group, part, hashes)
            found = matches, later, first
        return found[0] + lo, found[1] + lo, found[2] + lo

    parts = parallel_map(scan, query_aligned_slices(codes, len(query_ids)))
    none = [np.zeros(0, dtype=np.int64)]
    return DocScan(high, *(np.concatenate([p[i] for p in parts] or none) for i in range(3)))


def _native_doc_scan(
    codes: np.ndarray, docs: pa.ChunkedArray, hashes: np.ndarray, query_hashes: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """`scan_doc_ids`' work on one slice by the native kernel (rows whose query codes ascend), writing
    ``high``: (self-match candidates, later, first rows of duplicate pairs), or None (no kernel,
    codes out of order, or two different doc ids of a query share a hash: the numpy path decides)."""
    lib = native.library()
    if lib is None or codes.dtype != np.int32 or not high.flags.c_contiguous:
        return None
    n = len(codes)
    hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
    query_hashes = np.ascontiguousarray(query_hashes, dtype=np.uint64)
    codes = np.ascontiguousarray(codes)
    self_rows, later, first = (np.empty(n, dtype=np.int64) for _ in range(3))
    counts = np.zeros(2, dtype=np.int64)
    arrays = (codes, hashes, query_hashes, high, self_rows, later, first, counts)
    if lib.rg_doc_scan(n, *(a.ctypes.data for a in arrays)) != 0:
        return None
    selves, pairs = int(counts[0]), int(counts[1])
    later, first = later[:pairs].copy(), first[:pairs].copy()
    if pairs and not pc.all(pc.equal(take_rows(docs, later), take_rows(docs, first))).as_py():
        return None  # a hash shared by two different ids: never seen, but the answer must be exact
    return self_rows[:selves].copy(), later, first


def query_aligned_slices(codes: np.ndarray, n_queries: int) -> list[tuple[int, int]]:
    """Row ranges of about `SLICE_ROWS` rows that hold whole queries, or one range of all rows."""
    n = len(codes)
    if n <= SLICE_ROWS:
        return [(0, n)]
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    if len(starts) + 1 != n_queries:  # a query's rows are not contiguous
        return [(0, n)]
    wanted = np.arange(SLICE_ROWS, n, SLICE_ROWS)
    cuts = starts[np.minimum(np.searchsorted(starts, wanted), len(starts) - 1)] if len(starts) else starts
    bounds = slice_bounds(cuts, n)
    return list(itertools.pairwise(bounds))


def find_self_matches(
    query_ids: pa.StringArray, codes: np.ndarray, docs: pa.ChunkedArray, candidates: np.ndarray, scores: np.ndarray
) -> dict[str, float]:
    """Query ids that retrieve a document with the same id (BEIR drops such pairs), each with the
    highest score it gives that document."""
    if len(candidates) == 0:
        return {}
    found = take_rows(docs, candidates).to_pylist()
    qids = pc.take(query_ids, indices(codes[candidates])).to_pylist()
    out: dict[str, float] = {}
    for q, d, s in zip(qids, found, scores[candidates].tolist(), strict=True):
        if q == d:
            out[q] = max(s, out.get(q, s))
    return dict(sorted(out.items()))


def tie_group_moves(
    codes: np.ndarray, scores: np.ndarray, docs: pa.ChunkedArray | Callable[[np.ndarray], Any]
) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's tie rule on rows sorted by (query, score desc): ``(rows, within)`` such that the
    evaluation order puts row ``rows[within[i]]`` at ``rows[i]`` (rows ascending; both int32 below
    2**31 rows). Only rows in a group of equal (query, score) move: by doc id descending (byte-wise),
    stable. ``docs`` is the doc-id column in row order, or a function giving the doc ids of the
    rows it is passed (fusion: the fused rows' ids are only copied once they are in order).

    Tie groups never cross a query, so the rows are taken in slices of about `SLICE_ROWS` cut at
    query starts, on a few threads: each slice finds its groups, copies its tied doc ids and sorts
    them by (group, doc id descending) on its own; no full-size temporaries, and with nearly every
    row tied (integer scores) no copy of the whole doc-id column.
    """
    n = len(codes)
    kind = np.int32 if n < 2**31 else np.int64
    cuts = np.searchsorted(codes, codes[np.arange(SLICE_ROWS, n, SLICE_ROWS)], side="left")  # query starts
    bounds = slice_bounds(cuts, n)
    found = None if callable(docs) else _native_tie_moves(codes, scores, docs, bounds)
    if found is not None:
        return found

    def flags(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Row i is tied with row i - 1 (``after_tie``) and row i is in a tie group (``involved``)."""
        s, c = scores[lo:hi], codes[lo:hi]
        tied = np.flatnonzero(s[1:] == s[:-1])  # few: then the queries
        tied = tied[c[tied + 1] == c[tied]]
        if len(tied) == 0:
            return None
        after_tie = np.zeros(hi - lo, dtype=bool)
        after_tie[tied + 1] = True
        involved = after_tie.copy()
        involved[tied] = True
        return after_tie, involved

    def count(lo: int, hi: int) -> int:
        found = flags(lo, hi)
        return 0 if found is None else int(np.count_nonzero(found[1]))

    slices = list(itertools.pairwise(bounds))
    counts = parallel_map(lambda b: count(*b), slices)  # a first pass, so each slice writes its own output
    if not sum(counts):
        none = np.zeros(0, dtype=np.int64)
        return none, none
    starts = np.cumsum([0, *counts]).tolist()
    rows, within = np.empty(starts[-1], dtype=kind), np.empty(starts[-1], dtype=kind)

    def moves(i: int) -> None:
        lo, hi = slices[i]
        found = flags(lo, hi)
        if found is None:
            return
        after_tie, involved = found
        out = slice(starts[i], starts[i + 1])
        local = np.flatnonzero(involved).astype(kind)  # every row of a tie group, ascending
        group = np.cumsum(~after_tie[local], dtype=kind)  # a group starts at a row not tied with the one before
        tied_docs = docs(local + lo) if callable(docs) else take_rows(docs.slice(lo, hi - lo), local)
        table = pa.table({"g": numeric_array(group), "d": tied_docs})
        order = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])  # stable
        within[out] = column_to_numpy(order)
        within[out] += kind(starts[i])  # positions among all moved rows
        rows[out] = local
        rows[out] += kind(lo)

    parallel_map(moves, range(len(slices)))
    release_unused()  # the slices' temporaries, spread over the threads' heaps
    return rows, within


def _native_tie_moves(
    codes: np.ndarray, scores: np.ndarray, docs: pa.ChunkedArray, bounds: list[int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """`tie_group_moves` by the native kernel, slice by slice on a few threads; None where it does not
    apply (no kernels, 2**31 rows or more, a doc-id column it cannot read)."""
    lib = native.library()
    strings = native.string_chunks(docs) if lib is not None and len(codes) < 2**31 else None
    if lib is None or strings is None:
        return None
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    scores = np.ascontiguousarray(scores, dtype=np.float64)

    def moves(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
        rows, within = np.empty(hi - lo, dtype=np.int32), np.empty(hi - lo, dtype=np.int32)
        counts = np.zeros(1, dtype=np.int64)
        outputs = (rows.ctypes.data, within.ctypes.data, counts.ctypes.data)
        if lib.rg_tie_moves(lo, hi, codes.ctypes.data, scores.ctypes.data, *strings.arguments(), *outputs) != 0:
            return None
        moved = int(counts[0])
        return rows[:moved] + np.int32(lo), within[:moved].copy()

    parts = parallel_map(lambda b: moves(*b), itertools.pairwise(bounds))
    done = [p for p in parts if p is not None]
    if len(done) < len(parts):
        return None
    starts = np.cumsum([0] + [len(p[1]) for p in done])
    for (_, within), start in zip(done, starts.tolist(), strict=False):
        within += np.int32(start)  # places among all moved rows
    none = [np.zeros(0, dtype=np.int32)]
    return np.concatenate([p[0] for p in done] or none), np.concatenate([p[1] for p in done] or none)


def tie_ranks(
    codes: np.ndarray, scores: np.ndarray, offsets: np.ndarray, docs: pa.ChunkedArray, rows: np.ndarray
) -> np.ndarray | None:
    """Where trec_eval's tie rule puts each of ``rows`` (of a run sorted by (query, score desc), query
    q's rows from ``offsets[q]``): its 0-based rank within its query (int64), as `tie_group_moves`
    would move it, but found for these rows alone (each counts the rows of its tie group whose doc
    id comes first; a group asked for many times is sorted), on a few threads. None where the
    kernel does not apply (as `_native_tie_moves`)."""
    lib = native.library()
    n = len(codes)
    strings = native.string_chunks(docs) if lib is not None and n < 2**31 else None
    if lib is None or strings is None:
        return None
    wanted = np.asarray(rows)
    if len(wanted) and (wanted.min() < 0 or wanted.max() >= n):
        raise IndexError(f"a row outside a run of {n} rows")
    wanted = wanted.astype(np.int32, copy=False)  # the join's rows are int32 already: no copy
    order = None if len(wanted) < 2 or bool((wanted[1:] >= wanted[:-1]).all()) else np.argsort(wanted, kind="stable")
    ascending = np.ascontiguousarray(wanted if order is None else wanted[order])
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    out = np.empty(len(ascending), dtype=np.int64)
    run = (n, codes.ctypes.data, scores.ctypes.data, offsets.ctypes.data, *strings.arguments(), out.ctypes.data)
    parts = _query_parts(codes[ascending], WORKERS)
    if any(parallel_map(lambda part: lib.rg_tie_ranks(*part, ascending.ctypes.data, *run), parts)):
        return None
    if order is None:
        return out
    back = np.empty_like(out)
    back[order] = out
    return back


def _query_parts(row_codes: np.ndarray, count: int) -> list[tuple[int, int]]:
    """About ``count`` equal ranges of ``row_codes`` (ascending), cut only where the query changes:
    a tie group is then looked at by one thread, not sorted once per thread that asks about it."""
    n = len(row_codes)
    changes = np.flatnonzero(row_codes[1:] != row_codes[:-1]) + 1
    if len(changes) == 0:  # one query: one part
        return [(0, n)] if n else []
    wanted = np.arange(1, max(1, count)) * n // max(1, count)
    cuts = sorted({0, n, *changes[np.minimum(np.searchsorted(changes, wanted), len(changes) - 1)].tolist()})
    return [(lo, hi) for lo, hi in itertools.pairwise(cuts) if hi > lo]


def grouped_score_order(codes: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
    """The stable permutation sorting rows by (query code, score descending), as `Run` sorts them,
    for rows whose queries are scattered (shuffled lines); None when there are 2**16 queries or more.

    A stable radix sort of the codes (numpy sorts 16-bit integers by radix) groups the rows by
    query, file order kept; then slices of about `SLICE_ROWS` rows cut at query starts are sorted
    on their own, in cache and on a few threads, each in place. A third less CPU than one Arrow
    sort of every row by (query, score), and no full-size temporaries but the permutation.
    """
    n = len(codes)
    if n == 0 or int(codes.max()) >= 2**16:
        return None
    kind = np.int32 if n < 2**31 else np.int64
    order = np.argsort(codes.astype(np.uint16), kind="stable").astype(kind)
    group_starts = np.zeros(int(codes.max()) + 2, dtype=np.int64)
    np.cumsum(np.bincount(codes), out=group_starts[1 : len(group_starts)])
    cuts = group_starts[codes[order[np.arange(SLICE_ROWS, n, SLICE_ROWS)]]]  # query starts
    bounds = np.unique(np.concatenate([[0], cuts, [n]])).tolist()

    def sort(lo: int, hi: int) -> None:
        rows = order[lo:hi]
        table = pa.table({"q": numeric_array(codes[rows]), "s": numeric_array(scores[rows])})
        within = pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending")])
        order[lo:hi] = rows[column_to_numpy(within)]

    parallel_map(lambda b: sort(*b), itertools.pairwise(bounds))
    return order

"""The passes over every row of a `Run` that its constructor and the tie rule need.

They work on slices of rows, on a few threads (`parallel_map`): numpy and Arrow release
the GIL in their loops, and each slice writes only its own part of the output, so the
result is the same as one pass in order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankgate.core.columns import find_duplicate_pairs, indices, take_rows
from rankgate.core.hashing import string_hashes
from rankgate.core.parallel import parallel_map


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
    by slice, on several threads: no full-size hash array, and sorts that stay in cache.
    Otherwise one pass covers the whole run.
    """
    n = len(codes)
    query_hashes = string_hashes(query_ids)
    high = np.empty(n, dtype=np.uint32)

    def scan(bounds: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = bounds
        part = docs.slice(lo, hi - lo)
        group = codes[lo:hi]
        hashes = string_hashes(part)
        matches = np.flatnonzero(np.take(query_hashes, group) == hashes) + lo
        high[lo:hi] = hashes.view("<u4")[1::2]
        later, first = find_duplicate_pairs(group, part, hashes)  # consumes the hashes
        return matches, later + lo, first + lo

    parts = parallel_map(scan, query_aligned_slices(codes, len(query_ids)))
    none = [np.zeros(0, dtype=np.int64)]
    return DocScan(high, *(np.concatenate([p[i] for p in parts] or none) for i in range(3)))


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
    bounds = np.unique(np.concatenate([[0], cuts, [n]]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


def find_self_matches(
    query_ids: pa.StringArray, codes: np.ndarray, docs: pa.ChunkedArray, candidates: np.ndarray, scores: np.ndarray
) -> dict[str, float]:
    """Query ids that retrieve a document with the same id (BEIR drops such pairs), each with the
    highest score it gives that document."""
    if len(candidates) == 0:
        return {}
    found = take_rows(docs, candidates).to_pylist()
    qids = query_ids.take(indices(codes[candidates])).to_pylist()
    out: dict[str, float] = {}
    for q, d, s in zip(qids, found, scores[candidates].tolist(), strict=True):
        if q == d:
            out[q] = max(s, out.get(q, s))
    return dict(sorted(out.items()))


def tied_neighbours(codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Rows ``i`` (ascending) whose score and query equal those of row ``i + 1``."""
    step = 1 << 19  # in slices: no full-size temporaries

    def tied(lo: int) -> np.ndarray:
        hi = min(lo + step, len(codes) - 1)
        rows = np.flatnonzero(scores[lo + 1 : hi + 1] == scores[lo:hi]) + lo  # few: then the queries
        return rows[codes[rows + 1] == codes[rows]]

    found = parallel_map(tied, range(0, len(codes) - 1, step))
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

"""A run whose queries are scattered through its file (shuffled lines) put in `Run`'s order by the
native kernels (`rankgate.core.native`), in streaming passes instead of random reads.

Sorting the rows and then gathering each column by the permutation reads every column in no
order: a cache miss per row and column, most of the time for 7M rows. Here the queries are taken
in parts of ``2**shift`` codes, at most `_MAX_PARTS` of them: each slice of the file counts its
rows (and doc-id bytes) by query, then copies its rows, in file order, to their part's place in
the output (sequential reads, and few enough write positions for the caches); each part, now
small enough for the cache, is then grouped by query, each query's rows sorted by score, and its
columns permuted in place. The slices and the parts run on a few threads; what each writes is
fixed by the counts, so the result does not depend on them.

The result is the one the numpy path gives (`rankgate.core.run_scan.grouped_score_order`, then
the gathers): the rows sorted by (query code, score descending), stable, the doc ids in one
string array. Where the kernels do not apply, `group_by_query` says None and the caller takes
that path.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import native
from rankgate.core.parallel import WORKERS, parallel_map

_MAX_PARTS = 256  # write positions per column in the partition passes: they stay in the caches
_ROWS_PER_CALL = 1 << 18  # output rows per call of the per-part kernels
_WIDEST_QUERY = 1 << 20  # more rows in one query: the numpy path (each thread copies a part: about 40 bytes a row)


@dataclass
class Grouping:
    """Where each slice of the file puts its rows; made by `group_by_query`."""

    codes: np.ndarray  # int32 query codes, file order
    slices: list[tuple[int, int]]  # file rows, each slice copied on its own
    counts: np.ndarray  # int64 rows of each slice (row) and code (column)
    byte_counts: np.ndarray  # int64 doc-id bytes of the same
    group_starts: np.ndarray  # int64: code c's rows are [group_starts[c], group_starts[c + 1]) in the output
    shift: int  # part p holds codes [p << shift, (p + 1) << shift)
    strings: native.StringChunks  # the doc ids, file order
    perm: np.ndarray | None = None  # int32, per output row: the row of its part it came from (`sort_by_score`)

    def part_bounds(self) -> np.ndarray:
        """Each part's first code, and the number of codes."""
        n_codes = len(self.group_starts) - 1
        return np.append(np.arange(0, n_codes, 1 << self.shift), n_codes)

    def part_places(self, counts: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Each slice's first place in each part, from counts by (slice, code) and the codes' starts
        in the output: the part's start, after the earlier slices' rows (or bytes)."""
        bounds = self.part_bounds()
        by_part = np.add.reduceat(counts, bounds[:-1], axis=1) if counts.shape[1] else counts
        return np.cumsum(by_part, axis=0) - by_part + starts[bounds[:-1]]

    def part_ranges(self) -> list[tuple[int, int]]:
        """Part ranges of about `_ROWS_PER_CALL` output rows, for the per-part kernels' threads."""
        starts = self.group_starts[self.part_bounds()]
        n, n_parts = int(starts[-1]), len(starts) - 1
        cuts = np.searchsorted(starts, np.arange(_ROWS_PER_CALL, n, _ROWS_PER_CALL), side="right") - 1
        return list(itertools.pairwise(np.unique(np.concatenate([[0], cuts, [n_parts]])).tolist()))


def group_by_query(codes: np.ndarray, n_codes: int, scores: np.ndarray, docs: pa.ChunkedArray) -> Grouping | None:
    """Count each file slice's rows by code (codes in [0, n_codes)); None where the kernels do not
    apply: not built, int64 codes, scores not float64, 2**31 rows or doc-id
    bytes or more, doc ids not plain strings, a query of more than `_WIDEST_QUERY` rows."""
    lib = native.library()
    n = len(codes)
    if lib is None or n == 0 or n >= 2**31 or codes.dtype != np.int32 or scores.dtype != np.float64:
        return None
    strings = native.string_chunks(docs)
    if strings is None or len(docs) != n or _string_bytes(strings.keep) >= 2**31:
        return None
    codes = np.ascontiguousarray(codes)
    slices = _file_slices(n, n_codes)
    counts, byte_counts = (np.empty((len(slices), n_codes), dtype=np.int64) for _ in range(2))

    def count(i: int) -> int:
        lo, hi = slices[i]
        found = (counts[i].ctypes.data, byte_counts[i].ctypes.data)
        return int(lib.rg_count_codes(lo, hi, codes.ctypes.data, n_codes, *strings.arguments(), *found))

    if any(parallel_map(count, range(len(slices)))):
        raise ValueError(f"a query code outside [0, {n_codes})")
    group_starts = np.zeros(n_codes + 1, dtype=np.int64)
    np.cumsum(counts.sum(axis=0), out=group_starts[1:])
    if int(np.diff(group_starts).max()) > _WIDEST_QUERY:
        return None
    shift = max(0, (n_codes - 1) // _MAX_PARTS).bit_length()  # 2**shift codes a part: at most _MAX_PARTS parts
    return Grouping(codes, slices, counts, byte_counts, group_starts, shift, strings)


def _file_slices(n: int, n_codes: int) -> list[tuple[int, int]]:
    """One slice of the file per thread; one in all when the queries are so many that each slice's
    count of them would outweigh its rows."""
    count = max(1, min(WORKERS, n // (64 * max(1, n_codes))))
    cuts = [n * i // count for i in range(count + 1)]
    return list(itertools.pairwise(cuts))


def _string_bytes(chunks: list[pa.Array]) -> int:
    """The bytes of the strings of plain string chunks (their int32 offsets: last minus first)."""
    total = 0
    for c in chunks:
        offsets = np.frombuffer(c.buffers()[1], dtype=np.int32, count=len(c) + 1, offset=4 * c.offset)
        total += int(offsets[-1]) - int(offsets[0])
    return total


def sort_by_score(grouping: Grouping, columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The file-order scores (the one item of ``columns``) in `Run`'s order, with the codes in that
    order: copied to their part's place, then each part grouped by query and each query's rows
    sorted by score descending, stable (NaN last, -0.0 equal to 0.0, as Arrow sorts). Keeps the
    permutation of each part in ``grouping.perm`` for `take_strings`.

    The list is emptied and the file-order scores let go once copied: the sorted copy never sits
    beside them for longer than the copy takes."""
    lib = native.library()
    n = len(grouping.codes)
    out_scores, out_codes = np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int32)
    column = columns.pop(0)
    _partition_words(lib, grouping, np.ascontiguousarray(column), out_scores, out_codes)
    del column
    perm = np.empty(n, dtype=np.int32)
    fixed = (grouping.shift, len(grouping.group_starts) - 1, grouping.group_starts.ctypes.data)
    outputs = (out_scores.ctypes.data, out_codes.ctypes.data, perm.ctypes.data)
    if any(parallel_map(lambda parts: lib.rg_sort_parts(*parts, *fixed, *outputs), grouping.part_ranges())):
        raise MemoryError("no memory for a part's sort")
    grouping.perm = perm
    return out_scores, out_codes


def _partition_words(lib: Any, grouping: Grouping, column: np.ndarray, out: np.ndarray, out_codes: np.ndarray) -> None:
    """Each file-order row of ``column`` copied to its part's next place in ``out`` (and its code in ``out_codes``)."""
    next_rows = grouping.part_places(grouping.counts, grouping.group_starts)
    addresses = (column.ctypes.data, out.ctypes.data, out_codes.ctypes.data)

    def partition(i: int) -> None:
        lo, hi = grouping.slices[i]
        places = next_rows[i].ctypes.data
        lib.rg_partition_words(lo, hi, grouping.codes.ctypes.data, grouping.shift, places, *addresses)

    parallel_map(partition, range(len(grouping.slices)))


def take_strings(grouping: Grouping) -> pa.StringArray:
    """The doc ids in the order `sort_by_score` found, as one string array: copied to their part's
    place, then each part's ids permuted in place."""
    lib = native.library()
    assert grouping.perm is not None, "sort_by_score first"
    n = len(grouping.codes)
    strings = grouping.strings.arguments()
    byte_starts = np.zeros(len(grouping.group_starts), dtype=np.int64)
    np.cumsum(grouping.byte_counts.sum(axis=0), out=byte_starts[1:])
    next_bytes = grouping.part_places(grouping.byte_counts, byte_starts)
    next_rows = grouping.part_places(grouping.counts, grouping.group_starts)
    offsets, data = pa.allocate_buffer(4 * (n + 1)), pa.allocate_buffer(max(1, int(byte_starts[-1])))
    np.frombuffer(offsets, dtype=np.int32, count=1)[0] = 0
    out = (offsets.address, data.address)

    def partition(i: int) -> None:
        lo, hi = grouping.slices[i]
        places = (next_rows[i].ctypes.data, next_bytes[i].ctypes.data)
        lib.rg_partition_strings(lo, hi, grouping.codes.ctypes.data, grouping.shift, *strings, *places, *out)

    parallel_map(partition, range(len(grouping.slices)))
    bounds = grouping.part_bounds()
    part_rows, part_bytes = grouping.group_starts[bounds], byte_starts[bounds]
    fixed = (part_rows.ctypes.data, grouping.perm.ctypes.data, part_bytes.ctypes.data, *out)
    if any(parallel_map(lambda parts: lib.rg_permute_strings(*parts, *fixed), grouping.part_ranges())):
        raise MemoryError("no memory for a part's doc ids")
    return pa.Array.from_buffers(pa.string(), n, [None, offsets, data])

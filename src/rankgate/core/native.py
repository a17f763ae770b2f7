"""rankgate's optional compiled kernels (``_native.c``), loaded with ctypes when they were built.

The library is plain C with no Python API: ctypes releases the GIL while a kernel runs, so
slices of a column are worked on several threads. It is built when rankgate is installed and
a C compiler is there (hatch_build.py). Without it, or with ``RANKGATE_NATIVE=0``, every caller
takes its numpy/Arrow path: the same numbers, slower. Callers: the TREC scanner
(`rankgate.io.native_scan`), the judged-row join (`rankgate.evaluation.join`), and the grouping
and gathers that put a shuffled run in order (`rankgate.core.scattered`, `rankgate.core.gather`).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

VERSION = 15  # rg_scan_version() of the C source this package calls
LIBRARY = Path(__file__).with_name("_native.so")

_lib: Any = None
_P = ctypes.c_void_p
_I64 = ctypes.c_int64
# Each kernel's argument types; a library without one of them is taken as not built.
SIGNATURES: dict[str, list[Any]] = {
    # rg_scan(text, size, kind, max_rows, then seven output arrays)
    "rg_scan": [_P, _I64, ctypes.c_int, _I64, *[_P] * 7],
    # rg_join(first, last, run offsets, judged query, qrels offsets, run high, qrels high,
    #         run strings (chunks, starts, offsets, data), qrels strings (same), capacity, out run, out qrels, counts)
    "rg_join": [_I64, _I64, *[_P] * 5, _I64, *[_P] * 3, _I64, *[_P] * 3, _I64, *[_P] * 3],
    # rg_string_hashes(rows, offsets at the chunk's first row, data, out hashes)
    "rg_string_hashes": [_I64, _P, _P, _P],
    # rg_doc_scan(rows, codes, hashes, query hashes, out high, out self rows, out later, out first, counts)
    "rg_doc_scan": [_I64, *[_P] * 8],
    # rg_tie_moves(lo, hi, codes, scores, doc strings (chunks, starts, offsets, data), out rows, out within, counts)
    "rg_tie_moves": [_I64, _I64, _P, _P, _I64, *[_P] * 3, *[_P] * 3],
    # rg_tie_ranks(lo, hi, rows (int32), rows in the run, codes, scores, query offsets, doc strings (chunks, starts,
    #              offsets, data), out ranks within the query)
    "rg_tie_ranks": [_I64, _I64, _P, _I64, _P, _P, _P, _I64, *[_P] * 3, _P],
    # rg_sort_groups_descending(groups, offsets, values in place)
    "rg_sort_groups_descending": [_I64, _P, _P],
    # rg_take_string_lengths(lo, hi, rows, strings (chunks, starts, offsets, data), out offsets, totals)
    "rg_take_string_lengths": [_I64, _I64, _P, _I64, *[_P] * 3, _P, _P],
    # rg_take_string_bytes(lo, hi, rows, strings (chunks, starts, offsets, data), base, out offsets, out data)
    "rg_take_string_bytes": [_I64, _I64, _P, _I64, *[_P] * 3, _I64, _P, _P],
    # rg_copy_blocks(lo, hi, item bytes, block starts, lengths, out rows, from, to)
    "rg_copy_blocks": [_I64, _I64, _I64, *[_P] * 5],
    # rg_block_string_bytes(lo, hi, block starts, lengths, strings (chunks, starts, offsets, data), totals)
    "rg_block_string_bytes": [_I64, _I64, _P, _P, _I64, *[_P] * 3, _P],
    # rg_block_string_copy(lo, hi, block starts, lengths, out rows, strings (chunks, starts, offsets, data), base,
    #                      out offsets, out data)
    "rg_block_string_copy": [_I64, _I64, *[_P] * 3, _I64, *[_P] * 3, _I64, _P, _P],
    # rg_count_codes(lo, hi, codes, number of codes, strings (chunks, starts, offsets, data), out counts, out bytes)
    "rg_count_codes": [_I64, _I64, _P, _I64, _I64, *[_P] * 3, _P, _P],
    # rg_partition_words(lo, hi, codes, shift, next places, a, out a, out codes)
    "rg_partition_words": [_I64, _I64, _P, ctypes.c_int, *[_P] * 4],
    # rg_partition_strings(lo, hi, codes, shift, strings (chunks, starts, offsets, data), next rows, next bytes,
    #                      out offsets, out data)
    "rg_partition_strings": [_I64, _I64, _P, ctypes.c_int, _I64, *[_P] * 7],
    # rg_sort_parts(first part, last part, shift, number of codes, group starts, scores, codes, out perm)
    "rg_sort_parts": [_I64, _I64, ctypes.c_int, _I64, *[_P] * 4],
    # rg_permute_strings(first part, last part, part starts, perm, byte starts, offsets, data)
    "rg_permute_strings": [_I64, _I64, *[_P] * 5],
}


def sort_groups_descending(offsets: np.ndarray, values: np.ndarray) -> np.ndarray | None:
    """``values`` (int64) sorted descending within each group of CSR ``offsets``, as a new array;
    None without the kernels."""
    lib = library()
    if lib is None:
        return None
    out = np.array(values, dtype=np.int64, copy=True, order="C")
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    lib.rg_sort_groups_descending(len(offsets) - 1, offsets.ctypes.data, out.ctypes.data)
    return out


@dataclass
class StringChunks:
    """An Arrow string column as the kernels read it: each chunk's first row (and the total), and
    the addresses of its int32 offsets (at its own first row) and of its bytes. ``keep`` holds the
    chunks, so the addresses stay valid while this value lives."""

    count: int
    starts: np.ndarray  # int64, chunks + 1
    offsets: np.ndarray  # uint64 addresses
    data: np.ndarray  # uint64 addresses
    keep: list[pa.Array]

    def arguments(self) -> tuple[int, int, int, int]:
        return self.count, self.starts.ctypes.data, self.offsets.ctypes.data, self.data.ctypes.data


def string_chunks(column: pa.ChunkedArray | pa.Array) -> StringChunks | None:
    """`StringChunks` of ``column``, or None when the kernels cannot read it (not plain ``string``
    chunks, or nulls)."""
    chunks = [c for c in (column.chunks if isinstance(column, pa.ChunkedArray) else [column]) if len(c)]
    if any(c.type != pa.string() or c.null_count for c in chunks):
        return None
    if not chunks:  # the kernels index at least one chunk
        chunks = [pa.array([""], type=pa.string())]
        starts = np.zeros(2, dtype=np.int64)
    else:
        starts = np.zeros(len(chunks) + 1, dtype=np.int64)
        np.cumsum([len(c) for c in chunks], out=starts[1:])
    offsets = np.array([c.buffers()[1].address + 4 * c.offset for c in chunks], dtype=np.uint64)
    data = np.array([c.buffers()[2].address if c.buffers()[2] is not None else 0 for c in chunks], dtype=np.uint64)
    return StringChunks(len(chunks), starts, offsets, data, chunks)


def library() -> Any:
    """The loaded kernels, or None (not built, built from another version, or ``RANKGATE_NATIVE=0``)."""
    global _lib
    if _lib is None:
        _lib = False
        if os.environ.get("RANKGATE_NATIVE", "1") != "0" and LIBRARY.exists():
            try:
                lib = ctypes.CDLL(str(LIBRARY))
                if lib.rg_scan_version() == VERSION:
                    for name, argtypes in SIGNATURES.items():
                        function = getattr(lib, name)
                        function.restype = ctypes.c_int
                        function.argtypes = argtypes
                    _lib = lib
            except (OSError, AttributeError):
                _lib = False
    return _lib or None

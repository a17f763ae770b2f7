"""Row gathers from Arrow columns that do not copy more than they must, and giving memory back.

Re-exported by `rankgate.core.columns`, where they lived.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import sys
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core import native
from rankgate.core.parallel import parallel_map


def indices(values: np.ndarray) -> pa.Array:
    """Row positions (a numpy int array) as an Arrow int32 array when they are int32 (the query
    codes: no widened copy), else int64, for ``take``.

    ``pa.array(numpy_array)`` imports pandas on first use; building from the buffer does not.
    """
    if isinstance(values, np.ndarray) and values.dtype == np.int32:
        data = np.ascontiguousarray(values)
        return pa.Array.from_buffers(pa.int32(), len(data), [None, pa.py_buffer(data)])
    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def release_unused() -> None:
    """Give memory that Arrow's allocator (and C's malloc) holds but no longer uses back to the system.

    After a large parse its pool keeps the parser's freed buffers (about 100 MB for a
    7M-line run) for reuse; the arrays that follow are numpy's, so that memory would only
    swell the peak.
    """
    pa.default_memory_pool().release_unused()
    _trim_heap()


_malloc_trim: Any = None


def _trim_heap() -> None:
    """glibc's ``malloc_trim``: numpy's freed arrays below malloc's adaptive mmap threshold (up to
    32 MB) stay in the process heap, counted in its RSS, until trimmed. A no-op elsewhere."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):  # musl and others: nothing to trim with
                _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
    if _malloc_trim:
        _malloc_trim(0)


def take_rows(column: pa.ChunkedArray | pa.Array, rows: np.ndarray) -> pa.ChunkedArray:
    """``column.take(rows)``, chunk by chunk.

    Arrow's ``ChunkedArray.take`` first concatenates every chunk: for a few rows of a
    7M-row doc-id column that is a full copy (80 MB). Here each chunk gives its own rows.
    """
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    rows = np.asarray(rows)
    if rows.dtype.kind != "i":  # int32 rows stay int32: no full-size int64 copy of a permutation
        rows = rows.astype(np.int64)
    if column.num_chunks <= 1:
        return pa.chunked_array([pc.take(c, indices(rows)) for c in column.chunks], type=column.type)
    ascending = len(rows) < 2 or bool((rows[1:] >= rows[:-1]).all())
    if not ascending and 4 * len(rows) > len(column):  # a large shuffle
        return _take_shuffled(column, rows)
    order = None if ascending else np.argsort(rows, kind="stable")
    wanted = rows if order is None else rows[order]
    bounds = np.zeros(column.num_chunks + 1, dtype=np.int64)
    np.cumsum([len(c) for c in column.chunks], out=bounds[1:])
    cuts = np.searchsorted(wanted, bounds)
    if len(wanted) and (wanted[0] < 0 or wanted[-1] >= bounds[-1]):
        raise IndexError(f"row index out of bounds for a column of {bounds[-1]} rows")
    parts = [
        pc.take(column.chunk(i), indices(wanted[cuts[i] : cuts[i + 1]] - bounds[i]))
        for i in range(column.num_chunks)
        if cuts[i + 1] > cuts[i]
    ]
    out = pa.chunked_array(parts, type=column.type)
    if order is None:
        return out
    back = np.empty(len(order), dtype=np.int64)
    back[order] = np.arange(len(order))
    return pa.chunked_array([pc.take(out.combine_chunks(), indices(back))], type=column.type)


def _take_shuffled(column: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """`take_rows` for many rows in no order: by the native kernels when built (one new array),
    else a quarter million output rows at a time (on a few threads), each chunk giving its own rows,
    then put in order within the piece (in cache). Arrow's ``ChunkedArray.take`` would first
    concatenate the whole column: a third copy."""
    bounds = np.zeros(column.num_chunks + 1, dtype=np.int64)
    np.cumsum([len(c) for c in column.chunks], out=bounds[1:])
    if len(rows) and (rows.min() < 0 or rows.max() >= bounds[-1]):
        raise IndexError(f"row index out of bounds for a column of {bounds[-1]} rows")
    taken = _take_strings_native(column, rows)
    if taken is not None:
        return pa.chunked_array([taken], type=column.type)
    small = np.int16 if column.num_chunks < 2**15 else np.int64  # a stable sort of int16 is a radix sort

    def piece(lo: int) -> pa.Array:
        wanted = rows[lo : lo + _TAKE_SLICE]
        chunk = (np.searchsorted(bounds, wanted, side="right") - 1).astype(small)
        order = np.argsort(chunk, kind="stable")
        cuts = np.searchsorted(chunk[order], np.arange(column.num_chunks + 1)).tolist()
        by_chunk = wanted[order]
        parts = [
            pc.take(column.chunk(i), indices(by_chunk[cuts[i] : cuts[i + 1]] - bounds[i]))
            for i in range(column.num_chunks)
            if cuts[i + 1] > cuts[i]
        ]
        back = np.empty(len(order), dtype=np.int64)
        back[order] = np.arange(len(order))
        return pc.take(pa.concat_arrays(parts), indices(back))

    return pa.chunked_array(parallel_map(piece, range(0, len(rows), _TAKE_SLICE)), type=column.type)


_TAKE_SLICE = 1 << 18


def _row_slices(n: int) -> list[tuple[int, int]]:
    """Ranges of about `_NATIVE_SLICE` output rows, for the native gathers' threads."""
    return [(lo, min(n, lo + _NATIVE_SLICE)) for lo in range(0, n, _NATIVE_SLICE)]


_NATIVE_SLICE = 1 << 20


def _take_strings_native(column: pa.ChunkedArray, rows: np.ndarray) -> pa.StringArray | None:
    """`_take_shuffled` by the native kernels, into one new string array: the strings' lengths, then
    their bytes, each pass on a few threads (a random read of 7M ids is bound by memory latency, so
    the threads' reads overlap). None where the kernels do not apply (not built, not plain strings,
    2**31 rows or output bytes or more)."""
    lib = native.library()
    strings = native.string_chunks(column) if lib is not None and len(column) < 2**31 else None
    if strings is None:
        return None
    rows = np.ascontiguousarray(rows, dtype=np.int32)
    n = len(rows)
    offsets = pa.allocate_buffer(4 * (n + 1))
    np.frombuffer(offsets, dtype=np.int32, count=1)[0] = 0
    slices = _row_slices(n)
    totals = np.zeros(len(slices), dtype=np.int64)
    source = (rows.ctypes.data, *strings.arguments())

    def lengths(i: int) -> int:
        lo, hi = slices[i]
        return int(lib.rg_take_string_lengths(lo, hi, *source, offsets.address, totals[i:].ctypes.data))

    if any(parallel_map(lengths, range(len(slices)))):
        raise IndexError(f"row index out of bounds for a column of {len(column)} rows")
    bases = np.concatenate([[0], np.cumsum(totals)]).tolist()
    if bases[-1] >= 2**31:  # beyond int32 offsets: Arrow's pieces
        return None
    data = pa.allocate_buffer(max(1, bases[-1]))  # never empty: the kernels get a real address

    def copy(i: int) -> None:
        lo, hi = slices[i]
        lib.rg_take_string_bytes(lo, hi, *source, bases[i], offsets.address, data.address)

    parallel_map(copy, range(len(slices)))
    return pa.Array.from_buffers(pa.string(), n, [None, offsets, data])


def take_blocks(column: pa.ChunkedArray, starts: np.ndarray, lengths: np.ndarray) -> pa.ChunkedArray:
    """Rows ``starts[i] : starts[i] + lengths[i]`` of ``column`` for each ``i``, one block after the other.

    By the native kernels when built (each block's bytes copied whole, into one new array, on a
    few threads); else blocks that follow each other in ``column`` are copied as one, and the
    output is cut in pieces of about a quarter million rows, each copied once (no concatenation
    of the whole column first).
    """
    starts, lengths = _checked_blocks(starts, lengths, len(column))
    taken = _take_string_blocks_native(column, starts, lengths)
    if taken is not None:
        return pa.chunked_array([taken], type=column.type)
    if len(starts) == 0:
        return pa.chunked_array([], type=column.type)
    joined = np.flatnonzero(starts[1:] != starts[:-1] + lengths[:-1]) + 1  # first block of each run
    run_starts = starts[np.concatenate([[0], joined])]
    run_lengths = np.add.reduceat(lengths, np.concatenate([[0], joined]))
    pieces: list[pa.Array] = []
    parts: list[pa.Array] = []
    size = 0
    for start, length in zip(run_starts.tolist(), run_lengths.tolist(), strict=True):
        parts.extend(column.slice(start, length).chunks)
        size += length
        if size >= 1 << 18:
            pieces.append(pa.concat_arrays(parts))
            parts, size = [], 0
    if parts:
        pieces.append(pa.concat_arrays(parts))
    return pa.chunked_array(pieces, type=column.type)


def take_array_blocks(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """`take_blocks` of a numpy array: each block copied whole (no permutation of every row)."""
    source = np.ascontiguousarray(values)
    starts, lengths = _checked_blocks(starts, lengths, len(source))
    at = np.cumsum(lengths) - lengths
    out = np.empty(int(lengths.sum()), dtype=source.dtype)
    lib = native.library()
    if lib is None:
        for start, length, to in zip(starts.tolist(), lengths.tolist(), at.tolist(), strict=True):
            out[to : to + length] = source[start : start + length]
        return out
    blocks = (starts.ctypes.data, lengths.ctypes.data, at.ctypes.data)
    parallel_map(
        lambda part: lib.rg_copy_blocks(*part, source.itemsize, *blocks, source.ctypes.data, out.ctypes.data),
        _block_parts(at, len(out)),
    )
    return out


def _checked_blocks(starts: np.ndarray, lengths: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``starts`` and ``lengths`` as int64; IndexError for a block outside ``rows`` rows (every
    path, native or not, refuses the same blocks)."""
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    if len(starts) != len(lengths):
        raise ValueError(f"{len(starts)} block starts but {len(lengths)} lengths")
    if len(starts) and (lengths.min() < 0 or starts.min() < 0 or (starts + lengths).max() > rows):
        raise IndexError(f"a block outside a column of {rows} rows")
    return starts, lengths


def _block_parts(at: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Ranges of blocks of about `_NATIVE_SLICE` output rows each (``at``: each block's first output row)."""
    cuts = sorted({0, len(at), *np.searchsorted(at, np.arange(0, rows, _NATIVE_SLICE), side="left").tolist()})
    return [(lo, hi) for lo, hi in itertools.pairwise(cuts) if hi > lo]


def _take_string_blocks_native(
    column: pa.ChunkedArray, starts: np.ndarray, lengths: np.ndarray
) -> pa.StringArray | None:
    """`take_blocks` by the native kernels: the blocks' bytes counted, then copied, each pass on a
    few threads. None where the kernels do not apply (not built, not plain strings, 2**31 rows or
    output bytes or more)."""
    lib = native.library()
    strings = native.string_chunks(column) if lib is not None and len(column) < 2**31 else None
    if strings is None:
        return None
    at = np.cumsum(lengths) - lengths
    n = int(lengths.sum()) if len(lengths) else 0
    parts = _block_parts(at, n)
    totals = np.zeros(len(parts), dtype=np.int64)
    blocks = (starts.ctypes.data, lengths.ctypes.data)

    def count(i: int) -> int:
        lo, hi = parts[i]
        return int(lib.rg_block_string_bytes(lo, hi, *blocks, *strings.arguments(), totals[i:].ctypes.data))

    if any(parallel_map(count, range(len(parts)))):
        raise IndexError(f"a block outside a column of {len(column)} rows")
    bases = np.concatenate([[0], np.cumsum(totals)]).tolist()
    if bases[-1] >= 2**31 or n >= 2**31:  # beyond int32 offsets: Arrow's pieces
        return None
    offsets = pa.allocate_buffer(4 * (n + 1))
    np.frombuffer(offsets, dtype=np.int32, count=1)[0] = 0
    data = pa.allocate_buffer(max(1, bases[-1]))  # never empty: the kernels get a real address

    def copy(i: int) -> None:
        lo, hi = parts[i]
        lib.rg_block_string_copy(
            lo, hi, *blocks, at.ctypes.data, *strings.arguments(), bases[i], offsets.address, data.address
        )

    parallel_map(copy, range(len(parts)))
    return pa.Array.from_buffers(pa.string(), n, [None, offsets, data])


def concat_releasing(pieces: list[np.ndarray], dtype: Any) -> np.ndarray:
    """``np.concatenate(pieces)`` as ``dtype``, each piece let go (emptied in the list) once copied:
    the peak is the output and one piece, not twice the output."""
    out = np.empty(sum(len(p) for p in pieces), dtype=dtype)
    at = 0
    for i in range(len(pieces)):
        piece = pieces[i]
        out[at : at + len(piece)] = piece
        at += len(piece)
        pieces[i] = piece = out[:0]
    return out

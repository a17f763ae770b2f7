"""Columnar helpers shared by `Qrels` and `Run`: interning, grouping, duplicates.

Ids stay Arrow strings; queries are interned to dense ints (few, reused everywhere),
documents are not (millions, needed only for joins, duplicates and tie-breaks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.lib.stride_tricks import as_strided

DuplicatePolicy = Literal["error", "first", "max"]
DUPLICATE_POLICIES: tuple[str, ...] = ("error", "first", "max")


def as_strings(values: Any) -> pa.ChunkedArray:
    """``values`` as an Arrow string column (chunked; ids are text, never numbers)."""
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    elif not isinstance(values, pa.ChunkedArray):
        values = pa.chunked_array([pa.array(values)])
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    return values


def as_string_array(values: object) -> pa.StringArray:
    """``values`` as one contiguous Arrow string array (for small columns)."""
    out = as_strings(values).combine_chunks()
    assert isinstance(out, pa.StringArray)
    return out


def array_to_numpy(array: pa.Array, null_value: float | None = None) -> np.ndarray:
    """A numeric or boolean Arrow array as numpy, read from its buffers.

    pyarrow's own ``to_numpy`` (and ``fill_null``) import pandas on first use, half a second;
    this does not. Nulls become ``null_value`` (required when the array has nulls).
    """
    kind = array.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        dtype = np.dtype(kind.to_pandas_dtype())
        values = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)
    elif pa.types.is_boolean(kind):
        values = _bits(array.buffers()[1], array.offset, len(array))
    else:
        return array.to_numpy(zero_copy_only=False)
    if array.null_count:
        if null_value is None:
            raise ValueError("array has nulls: pass null_value")
        valid = _bits(array.buffers()[0], array.offset, len(array))
        values = np.where(valid, values, np.array(null_value, dtype=values.dtype))
    return values


def _bits(buffer: pa.Buffer, offset: int, length: int) -> np.ndarray:
    """An Arrow bitmap (validity or boolean data) as a numpy bool array."""
    bits = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little")[offset : offset + length].astype(bool)


def indices(values: np.ndarray) -> pa.Array:
    """Row positions (a numpy int array) as an Arrow int64 array, for ``take``.

    ``pa.array(numpy_array)`` imports pandas on first use; building from the buffer does not.
    """
    data = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(data), [None, pa.py_buffer(data)])


def column_to_numpy(column: pa.ChunkedArray | pa.Array, null_value: float | None = None) -> np.ndarray:
    """A numeric or boolean Arrow column as one numpy array (see `array_to_numpy`)."""
    if isinstance(column, pa.Array):
        return array_to_numpy(column, null_value)
    if column.num_chunks == 1:
        return array_to_numpy(column.chunk(0), null_value)
    if column.num_chunks == 0:
        return np.zeros(0, dtype=np.dtype(column.type.to_pandas_dtype()))
    return np.concatenate([array_to_numpy(c, null_value) for c in column.chunks])


@dataclass(frozen=True)
class Interned:
    """Dense integer codes for a string column: ``values[codes[i]] == column[i]``."""

    codes: np.ndarray  # int32 (int64 past 2**31 values), one per row
    values: pa.StringArray  # unique strings


def intern(column: Any) -> Interned:
    """Intern a column; a dictionary-typed column (as the TREC reader makes) is nearly free."""
    if not isinstance(column, pa.ChunkedArray | pa.Array):
        column = as_strings(column)
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    if pa.types.is_dictionary(column.type) and column.num_chunks:
        unified = column.unify_dictionaries()
        dictionary = unified.chunk(0).dictionary
        codes = np.concatenate([_indices(c) for c in unified.chunks]) if len(unified) else np.zeros(0, np.int32)
        if column.null_count:
            raise ValueError("null in an id column")
        used = np.bincount(codes, minlength=len(dictionary)) > 0
        if not used.all():  # e.g. a pandas Categorical with unused categories: keep only ids that occur
            remap = np.cumsum(used) - 1
            codes = remap[codes].astype(np.int32)
            dictionary = dictionary.filter(pa.array(used))
        return Interned(codes=codes, values=as_string_array(dictionary))
    encoded = pc.dictionary_encode(as_strings(column)).combine_chunks()
    codes = array_to_numpy(encoded.indices)
    return Interned(codes=codes, values=as_string_array(encoded.dictionary))


def _indices(chunk: pa.DictionaryArray) -> np.ndarray:
    return array_to_numpy(chunk.indices)


def string_hashes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """64-bit hashes of strings, used only to find candidates (always checked exactly).

    Vectorized over the Arrow buffers: each string is read 8 bytes at a time, so short ids
    (the common case) cost one gather and a few integer operations per row.
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.empty(sum(len(c) for c in chunks), dtype=np.uint64)
    start = 0
    for c in chunks:
        out[start : start + len(c)] = _hash_chunk(c)
        start += len(c)
    return out


_MIX = np.uint64(0xFF51AFD7ED558CCD)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _hash_chunk(chunk: pa.Array) -> np.ndarray:
    n = len(chunk)
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + n + 1]
    lo, hi = int(offsets[0]), int(offsets[-1])
    padded = np.zeros(hi - lo + 8, dtype=np.uint8)  # 8 zero bytes: a word read never runs off the end
    if hi > lo:
        padded[: hi - lo] = np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=hi)[lo:hi]
    words = as_strided(padded, shape=(hi - lo + 1, 8), strides=(1, 1)).view("<u8")[:, 0]
    start = offsets[:-1] - lo
    length = np.diff(offsets)
    h = length.astype(np.uint64) * _GOLDEN
    # A string's hash depends on its own bytes only: rounds past its end leave it unchanged, so
    # the same id hashes alike in every chunk, whatever the longest string of that chunk.
    for j in range(0, int(length.max(initial=0)), 8):
        w = words[np.minimum(start + j, hi - lo)]
        rest = length - j
        if (rest < 8).any():  # keep only the bytes of this string: shift the others out
            drop = (np.clip(8 - rest, 0, 8) * 8).astype(np.uint64)
            w = np.where(drop >= 64, np.uint64(0), (w << np.minimum(drop, 63)) >> np.minimum(drop, 63))
        mixed = (h ^ w) * _MIX
        mixed ^= mixed >> np.uint64(32)
        h = np.where(rest > 0, mixed, h)
    return h


def first_empty(column: pa.ChunkedArray) -> int:
    """Row of the first empty or null string, or -1."""
    start = 0
    for chunk in column.chunks:
        if chunk.null_count:
            return start + int(np.flatnonzero(array_to_numpy(chunk.is_null()))[0])
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
        empty = np.flatnonzero(offsets[1:] == offsets[:-1])
        if len(empty):
            return start + int(empty[0])
        start += len(chunk)
    return -1


def first_with_whitespace(column: pa.ChunkedArray) -> int:
    """Row of the first string holding a space, tab, line break or control byte, or -1."""
    start = 0
    for chunk in column.chunks:
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + len(chunk) + 1]
        data = chunk.buffers()[2]
        if data is not None and len(chunk):
            raw = np.frombuffer(data, dtype=np.uint8)[offsets[0] : offsets[-1]]
            hits = np.flatnonzero(raw <= 32)  # space, tab, line breaks and other control bytes
            if len(hits):
                pos = hits[0] + offsets[0]
                return start + int(np.searchsorted(offsets, pos, side="right") - 1)
        start += len(chunk)
    return -1


def find_duplicate_pairs(
    group: np.ndarray, keys: pa.ChunkedArray, key_hashes: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Repeated (group, key) pairs: ``(later_rows, first_rows)``, both in row order.

    ``later_rows[i]`` repeats the pair first seen at ``first_rows[i]``. Hash collisions
    are resolved by comparing the strings themselves, so the answer is exact.
    ``key_hashes`` (from `string_hashes`) is overwritten.
    """
    empty = np.empty(0, dtype=np.int64)
    if len(group) < 2:
        return empty, empty
    key_hashes = _mix_groups(string_hashes(keys) if key_hashes is None else key_hashes, group)
    key_hashes.sort()  # in place: no second full-size array
    repeated = key_hashes[1:][key_hashes[1:] == key_hashes[:-1]]
    if len(repeated) == 0:
        return empty, empty
    # Rare path: rebuild the (group, key) hashes in row order and check candidates exactly.
    cand = np.flatnonzero(np.isin(_mix_groups(string_hashes(keys), group), repeated))
    cand_keys = keys.take(indices(cand)).to_pylist()
    first_seen: dict[tuple[int, str], int] = {}
    later: list[int] = []
    first: list[int] = []
    for row, key in zip(cand.tolist(), cand_keys, strict=True):
        pair = (int(group[row]), key)
        if pair in first_seen:
            later.append(row)
            first.append(first_seen[pair])
        else:
            first_seen[pair] = row
    return np.asarray(later, dtype=np.int64), np.asarray(first, dtype=np.int64)


def _mix_groups(hashes: np.ndarray, group: np.ndarray) -> np.ndarray:
    """(group, key) hashes, mixed in place and in slices (no full-size temporaries)."""
    step = 1 << 20
    for i in range(0, len(hashes), step):
        hashes[i : i + step] ^= group[i : i + step].astype(np.uint64) * _GOLDEN
    return hashes


def duplicate_keep_mask(
    group: np.ndarray,
    keys: pa.ChunkedArray,
    values: np.ndarray,
    policy: str,
    describe: Callable[[int, int], Exception],
    key_hashes: np.ndarray | None = None,
) -> np.ndarray | None:
    """Rows to keep under a duplicate policy, or None when there are no duplicates.

    ``first`` keeps the earliest row of a pair, ``max`` the row with the largest value
    (earliest among equals); ``error`` raises ``describe(later_row, first_row)``.
    """
    later, first = find_duplicate_pairs(group, keys, key_hashes)
    if len(later) == 0:
        return None
    if policy == "error":
        raise describe(int(later[0]), int(first[0]))
    keep = np.ones(len(group), dtype=bool)
    if policy == "first":
        keep[later] = False
        return keep
    # "max": per pair, the copy with the largest value (earliest among equals).
    best: dict[int, int] = {}
    for row, head in zip(later.tolist(), first.tolist(), strict=True):
        cur = best.get(head, head)
        best[head] = row if values[row] > values[cur] else cur
    keep[later] = False
    for head, winner in best.items():
        keep[head] = winner == head
        keep[winner] = True
    return keep


def group_offsets(sorted_codes: np.ndarray, n_groups: int) -> np.ndarray:
    """CSR offsets (length ``n_groups + 1``) of rows sorted by group code."""
    counts = np.bincount(sorted_codes, minlength=n_groups)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def positions_in_group(offsets: np.ndarray) -> np.ndarray:
    """0-based position of every row within its group, for CSR ``offsets``."""
    n = int(offsets[-1])
    counts = np.diff(offsets)
    return np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], counts)


def byte_order_rank(values: pa.StringArray | pa.ChunkedArray) -> np.ndarray:
    """Rank of each string in byte-wise (memcmp) order; equal strings share a rank."""
    order = column_to_numpy(pc.sort_indices(values))
    ranks = np.empty(len(values), dtype=np.int64)
    sorted_vals = values.take(indices(order))
    # Equal neighbours share a rank so that ties in id compare equal.
    if len(values):
        eq = column_to_numpy(pc.equal(sorted_vals[1:], sorted_vals[:-1]))
        step = np.concatenate([[0], (~eq).astype(np.int64)])
        ranks[order] = np.cumsum(step)
    return ranks

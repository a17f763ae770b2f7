"""Columnar helpers shared by `Qrels` and `Run`: interning, grouping, duplicates.

Ids stay Arrow strings; queries are interned to dense ints (few, reused everywhere),
documents are not (millions, needed only for joins, duplicates and tie-breaks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.gather import concat_releasing as concat_releasing  # re-exported: they lived here
from rankgate.core.gather import indices as indices
from rankgate.core.gather import release_unused as release_unused
from rankgate.core.gather import take_array_blocks as take_array_blocks
from rankgate.core.gather import take_blocks as take_blocks
from rankgate.core.gather import take_rows as take_rows
from rankgate.core.hashing import GOLDEN
from rankgate.core.hashing import string_hashes as string_hashes  # re-exported: it lived here
from rankgate.core.parallel import parallel_map
from rankgate.core.policies import DUPLICATE_POLICIES as DUPLICATE_POLICIES  # re-exported: it lived here
from rankgate.extras import require


def as_strings(values: Any) -> pa.ChunkedArray:
    """``values`` as an Arrow string column (chunked; ids are text, never numbers)."""
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    elif not isinstance(values, pa.ChunkedArray):
        values = pa.chunked_array([pa.array(values)])
    if pa.types.is_dictionary(values.type):
        values = pc.cast(values, values.type.value_type)
    if not pa.types.is_string(values.type):
        values = pc.cast(values, pa.string())
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


def numeric_array(values: np.ndarray) -> pa.Array:
    """A numpy int32, int64 or float64 array as an Arrow array, without `pa.array` (it imports pandas)."""
    data = np.ascontiguousarray(values)
    kind = {np.dtype(np.int32): pa.int32(), np.dtype(np.int64): pa.int64(), np.dtype(np.float64): pa.float64()}
    return pa.Array.from_buffers(kind[data.dtype], len(data), [None, pa.py_buffer(data)])


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


def intern_ordered(column: Any, *, check_used: bool = True) -> Interned:
    """Intern a column with codes numbered in byte order of the values (``values`` sorted).

    A dictionary-typed column (as the TREC reader makes) is mapped chunk by chunk through its
    small dictionaries, straight into the final codes: one pass over the rows, no temporary
    as large as the column; one whose single dictionary is already unique and in byte order (as
    `rankgate.io.trec` hands a run over) is taken as it is, its codes a view of its indices. With
    ``check_used=False`` a dictionary value that no row uses (a pandas Categorical's unused
    category) may stay in ``values``; the caller drops it.
    """
    if not isinstance(column, pa.ChunkedArray | pa.Array):
        column = as_strings(column)
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    if column.null_count:
        raise ValueError("null in an id column")
    if not (pa.types.is_dictionary(column.type) and column.num_chunks):
        plain = intern(column)
        rank = byte_order_rank(plain.values)  # a permutation: values are unique
        codes = np.take(rank.astype(plain.codes.dtype), plain.codes)
        return Interned(codes=codes, values=as_string_array(pc.take(plain.values, indices(np.argsort(rank)))))
    chunks = [c for c in column.chunks if len(c)]
    if len(chunks) == 1 and chunks[0].indices.type == pa.int32() and _strictly_increasing(chunks[0].dictionary):
        ready = Interned(codes=array_to_numpy(chunks[0].indices), values=as_string_array(chunks[0].dictionary))
        if not check_used or len(ready.values) == 0:
            return ready
        used = np.bincount(ready.codes, minlength=len(ready.values)) > 0
        if used.all():
            return ready
    dictionaries = pa.chunked_array([c.dictionary for c in chunks], type=column.type.value_type)
    found = pc.unique(dictionaries)
    values = as_string_array(pc.take(found, pc.sort_indices(found)))
    codes = np.empty(len(column), dtype=np.int32 if len(values) < 2**31 else np.int64)
    # Every chunk's dictionary entry -> its code: one lookup for all the (small) dictionaries.
    entry_codes = column_to_numpy(pc.index_in(dictionaries, value_set=values)).astype(codes.dtype, copy=False)
    entry_starts = np.cumsum([0] + [len(c.dictionary) for c in chunks]).tolist()
    used = np.ones(len(values), dtype=bool) if not check_used else np.zeros(len(values), dtype=bool)
    starts = np.cumsum([0] + [len(c) for c in chunks]).tolist()

    def encode(i: int) -> np.ndarray | None:
        c = chunks[i]
        to_code = entry_codes[entry_starts[i] : entry_starts[i + 1]]
        rows = _indices(c)
        np.take(to_code, rows, out=codes[starts[i] : starts[i + 1]], mode="clip")
        return to_code[np.bincount(rows, minlength=len(to_code)) > 0] if check_used else None

    for seen in parallel_map(encode, range(len(chunks))):
        if seen is not None:
            used[seen] = True
    if not used.all():
        remap = (np.cumsum(used) - 1).astype(codes.dtype)
        np.take(remap, codes, out=codes, mode="clip")
        values = as_string_array(values.filter(pa.array(used)))
    return Interned(codes=codes, values=values)


def _strictly_increasing(values: pa.Array) -> bool:
    """Whether strings are unique and in byte order (Arrow compares strings byte-wise)."""
    if not pa.types.is_string(values.type) or values.null_count:
        return False
    if len(values) < 2:
        return True
    return bool(pc.all(pc.less(values.slice(0, len(values) - 1), values.slice(1))).as_py())


def _indices(chunk: pa.DictionaryArray) -> np.ndarray:
    return array_to_numpy(chunk.indices)


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
            if len(raw) == 0 or raw.min() > 32:  # the usual case, told by one fast reduction
                start += len(chunk)
                continue
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
    cand_keys = take_rows(keys, cand).to_pylist()
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
        hashes[i : i + step] ^= group[i : i + step].astype(np.uint64) * GOLDEN
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
    return keep_mask(later, first, len(group), values, policy, describe)


def keep_mask(
    later: np.ndarray,
    first: np.ndarray,
    n: int,
    values: np.ndarray,
    policy: str,
    describe: Callable[[int, int], Exception],
) -> np.ndarray | None:
    """`duplicate_keep_mask` for pairs already found (`find_duplicate_pairs`) among ``n`` rows."""
    if len(later) == 0:
        return None
    if policy == "error":
        raise describe(int(later[0]), int(first[0]))
    keep = np.ones(n, dtype=bool)
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


def slice_bounds(cuts: Any, n: int) -> list[int]:
    """Distinct row bounds 0, the ascending ``cuts``..., ``n``, as a list: the edges of row slices.

    (Not ``np.unique``: the cuts are already in order, and numpy's unique imports numpy.ma.)
    """
    bounds = np.concatenate([[0], np.asarray(cuts, dtype=np.int64), [n]])
    return bounds[np.concatenate([[True], bounds[1:] != bounds[:-1]])].tolist()


def group_offsets(sorted_codes: np.ndarray, n_groups: int) -> np.ndarray:
    """CSR offsets (length ``n_groups + 1``) of rows sorted by group code.

    A binary search per group: no pass over the rows, no full-size temporary.
    """
    bounds = np.arange(n_groups + 1, dtype=sorted_codes.dtype if sorted_codes.dtype.kind in "iu" else np.int64)
    return np.searchsorted(sorted_codes, bounds, side="left").astype(np.int64)


def positions_in_group(offsets: np.ndarray) -> np.ndarray:
    """0-based position of every row within its group, for CSR ``offsets``."""
    n = int(offsets[-1])
    counts = np.diff(offsets)
    out = np.arange(n, dtype=np.int64)
    out -= np.repeat(offsets[:-1], counts)  # in place: one full-size temporary fewer
    return out


def byte_order_rank(values: pa.StringArray | pa.ChunkedArray) -> np.ndarray:
    """Rank of each string in byte-wise (memcmp) order; equal strings share a rank."""
    order = column_to_numpy(pc.sort_indices(values))
    ranks = np.empty(len(values), dtype=np.int64)
    sorted_vals = pc.take(values, indices(order))
    # Equal neighbours share a rank so that ties in id compare equal.
    if len(values):
        eq = column_to_numpy(pc.equal(sorted_vals[1:], sorted_vals[:-1]))
        step = np.concatenate([[0], (~eq).astype(np.int64)])
        ranks[order] = np.cumsum(step)
    return ranks


def arrow_to_frame(table: pa.Table, backend: str) -> Any:
    """A pandas or polars DataFrame of ``table`` (the extra must be installed)."""
    if backend == "pandas":
        require("pandas", "pandas", purpose="to_frame('pandas')")
        return table.to_pandas()
    if backend == "polars":
        return require("polars", "polars", purpose="to_frame('polars')").from_arrow(table)
    raise ValueError(f"The 'backend' parameter must be 'pandas' or 'polars'. Got {backend!r} instead.")

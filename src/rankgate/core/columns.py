"""Columnar helpers shared by `Qrels` and `Run`: interning, grouping, duplicates.

Ids stay Arrow strings; queries are interned to dense ints (few, reused everywhere),
documents are not (millions, needed only for joins, duplicates and tie-breaks).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DuplicatePolicy = Literal["error", "first", "max"]
DUPLICATE_POLICIES: tuple[str, ...] = ("error", "first", "max")


def as_string_array(values: object) -> pa.StringArray:
    """Return ``values`` as one contiguous Arrow string array (ids are text, never numbers)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(values)
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if pa.types.is_large_string(values.type) or pa.types.is_string_view(values.type):
        values = values.cast(pa.string())
    elif not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    assert isinstance(values, pa.StringArray)
    return values


@dataclass(frozen=True)
class Interned:
    """Dense integer codes for a string column: ``values[codes[i]] == column[i]``."""

    codes: np.ndarray  # int64, one per row
    values: pa.StringArray  # unique strings, in order of first appearance


def intern(column: pa.StringArray) -> Interned:
    encoded = pc.dictionary_encode(column)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return Interned(codes=codes, values=as_string_array(encoded.dictionary))


def string_hashes(column: pa.StringArray) -> np.ndarray:
    """64-bit hashes of strings, used only to find candidate duplicates (checked exactly)."""
    import polars as pl

    return pl.Series(values=column).hash(seed=0x5EED).to_numpy()


def find_duplicate_pairs(group: np.ndarray, keys: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """Repeated (group, key) pairs: ``(later_rows, first_rows)``, both in row order.

    ``later_rows[i]`` repeats the pair first seen at ``first_rows[i]``. Hash collisions
    are resolved by comparing the strings themselves, so the answer is exact.
    """
    empty = np.empty(0, dtype=np.int64)
    if len(group) < 2:
        return empty, empty
    mixed = string_hashes(keys) ^ (group.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    order = np.argsort(mixed)
    sorted_hash = mixed[order]
    same = sorted_hash[1:] == sorted_hash[:-1]
    if not same.any():
        return empty, empty
    # Candidates: every row in a run of equal hashes. Check them exactly, in Python: rare.
    cand = np.unique(np.concatenate([order[1:][same], order[:-1][same]]))
    cand_keys = keys.take(pa.array(cand)).to_pylist()
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


def duplicate_keep_mask(
    group: np.ndarray,
    keys: pa.StringArray,
    values: np.ndarray,
    policy: str,
    describe: Callable[[int, int], Exception],
) -> np.ndarray | None:
    """Rows to keep under a duplicate policy, or None when there are no duplicates.

    ``first`` keeps the earliest row of a pair, ``max`` the row with the largest value
    (earliest among equals); ``error`` raises ``describe(later_row, first_row)``.
    """
    later, first = find_duplicate_pairs(group, keys)
    if len(later) == 0:
        return None
    if policy == "error":
        raise describe(int(later[0]), int(first[0]))
    keep = np.ones(len(group), dtype=bool)
    if policy == "first":
        keep[later] = False
        return keep
    # "max": per first row, the best of its copies.
    best: dict[int, int] = {}
    for row, head in zip(later.tolist(), first.tolist(), strict=True):
        cur = best.get(head, head)
        if values[row] > values[cur]:
            cur = row
        best[head] = cur
    for head, winner in best.items():
        keep[head] = False
        keep[winner] = True
    keep[later] = False
    for winner in best.values():
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


def byte_order_rank(values: pa.StringArray) -> np.ndarray:
    """Rank of each string in byte-wise (memcmp) order; equal strings share a rank."""
    order = pc.sort_indices(values).to_numpy()
    ranks = np.empty(len(values), dtype=np.int64)
    sorted_vals = values.take(pa.array(order))
    # Equal neighbours share a rank so that ties in id compare equal.
    if len(values):
        eq = pc.equal(sorted_vals[1:], sorted_vals[:-1]).to_numpy(zero_copy_only=False)
        step = np.concatenate([[0], (~eq).astype(np.int64)])
        ranks[order] = np.cumsum(step)
    return ranks

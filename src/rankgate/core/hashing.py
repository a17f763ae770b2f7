"""64-bit hashes of Arrow strings, and a table filter over them.

Hashes only ever pick candidates: whatever they find is checked on the strings themselves,
so no answer depends on a hash (ids are interned, never hashed, where an answer needs them).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from rankgate.core import native
from rankgate.core.parallel import parallel_map


def string_hashes(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """64-bit hashes of strings, used only to find candidates (always checked exactly).

    Each string is read 8 bytes at a time: by the native kernel (``rg_string_hashes``) where it
    was built, else vectorized over the Arrow buffers (one gather and a few integer operations
    per row for short ids). Both give the same hash.
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    out = np.empty(sum(len(c) for c in chunks), dtype=np.uint64)
    start = 0
    for c in chunks:
        plain = c if c.type == pa.string() else c.cast(pa.string())  # large_string, string_view: int32 offsets
        _hash_chunk(plain, out[start : start + len(c)])
        start += len(c)
    return out


_MIX = np.uint64(0xFF51AFD7ED558CCD)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


# _KEEP[n]: the low n bytes of a little-endian word (n = 0..8).
_KEEP = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=np.uint64)


# Strings longer than this are hashed one by one with BLAKE2b: the word loop below costs one
# pass over the rows per 8 bytes of the longest string, which a multi-MB id would make
# minutes. The choice depends on a string's own length only, so equal ids still hash alike.
_LONG = 1024


def _hash_chunk(chunk: pa.Array, out: np.ndarray) -> None:
    """The hashes of a plain ``string`` chunk's strings, written into ``out``."""
    n = len(chunk)
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32)[chunk.offset : chunk.offset + n + 1]
    long_ids = _native_hashes(chunk, offsets, out)
    if long_ids == 0:
        return
    lo, hi = int(offsets[0]), int(offsets[-1])
    span = hi - lo
    data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8, count=hi)[lo:hi] if span else np.zeros(0, np.uint8)
    start = offsets[:-1] - lo
    length = np.diff(offsets)
    long_rows = np.flatnonzero(length > _LONG)
    if long_ids is None:  # no kernel: the numpy word loop
        if len(long_rows):
            length = length.copy()
            length[long_rows] = 0  # hashed below; the word loop skips them
        # The chunk's bytes as aligned little-endian words, zero-padded: a string's word at byte
        # p is put together from words p // 8 and p // 8 + 1 (aligned gathers are cheap).
        words = np.zeros(span // 8 + 2, dtype=np.uint64)
        words.view(np.uint8)[:span] = data
        out[:] = _hash_words(words, start, length, span)
    for row in long_rows.tolist():
        piece = data[start[row] : start[row] + int(offsets[row + 1] - offsets[row])]
        digest = hashlib.blake2b(piece.tobytes(), digest_size=8)
        out[row] = np.frombuffer(digest.digest(), dtype="<u8")[0]


def _native_hashes(chunk: pa.Array, offsets: np.ndarray, out: np.ndarray) -> int | None:
    """`_hash_words`' hashes of a plain ``string`` chunk's strings written into ``out`` by the
    native kernel: the number of ids past `_LONG` bytes, which the caller re-hashes; None (nothing
    written) where the kernel was not built."""
    lib = native.library()
    if lib is None or len(chunk) == 0 or not out.flags.c_contiguous:
        return None
    data = chunk.buffers()[2]
    address = data.address if data is not None else 0  # no data buffer: every string is empty
    offsets = np.ascontiguousarray(offsets)
    found = int(lib.rg_string_hashes(len(chunk), offsets.ctypes.data, address, out.ctypes.data))
    return None if found < 0 else found


def _hash_words(words: np.ndarray, start: np.ndarray, length: np.ndarray, span: int) -> np.ndarray:
    """The word-at-a-time hash of every row.

    A string's hash depends on its own bytes only: rounds past its end leave it unchanged, so
    the same id hashes alike in every chunk, whatever the longest string of that chunk. Once
    fewer than half the rows of a round are still unfinished, later rounds touch only those.
    """
    out = length.astype(np.uint64) * GOLDEN
    rows: np.ndarray | None = None  # None: every row of ``out`` is in play
    h, row_start, row_length = out, start, length
    shortest, longest = int(length.min(initial=0)), int(length.max(initial=0))
    for j in range(0, longest, 8):
        if j >= shortest and j % 64 == 0:
            live = np.flatnonzero(row_length > j)
            if 2 * len(live) < len(row_length):
                if rows is None:
                    out, rows = h, live
                else:
                    out[rows] = h
                    rows = rows[live]
                h, row_start, row_length = out[rows], start[rows], length[rows]
        at = row_start if j == 0 else np.minimum(row_start + j, span)
        shift = ((at & 7) << 3).astype(np.uint64)
        word = np.take(words, at >> 3) >> shift
        word |= (np.take(words, (at >> 3) + 1) << (np.uint64(63) - shift)) << np.uint64(1)
        if j + 8 > shortest:  # some string ends within this word: keep only its own bytes
            word &= np.take(_KEEP, np.clip(row_length - j, 0, 8))
        mixed = (h ^ word) * _MIX
        mixed ^= mixed >> np.uint64(32)
        h = mixed if j < shortest else np.where(row_length > j, mixed, h)
    if rows is None:
        return h
    out[rows] = h
    return out


def high_words(hashes: np.ndarray) -> np.ndarray:
    """The high 32 bits of 64-bit hashes, as uint32 (without a full-size 64-bit temporary)."""
    return np.ascontiguousarray(hashes.view("<u4")[1::2])


_PAIR_MIX = np.uint32(0x9E3779B1)  # odd: multiplying by it permutes 32-bit values


def hash_filter_rows(
    high: np.ndarray,
    wanted: np.ndarray,
    *,
    group: np.ndarray | None = None,
    group_high: np.ndarray | None = None,
    wanted_group_high: np.ndarray | None = None,
) -> np.ndarray:
    """Rows (ascending) whose hash ``high`` (from `high_words`) may be one of ``wanted``.

    A bool table indexed by the top bits of the hash, about 1.5% full (more for over a quarter
    million wanted keys: 6% at a million): one gather per row, no string read. With ``group`` (each row's
    group code), ``group_high`` (each group's hash) and ``wanted_group_high`` (the group hash
    of each wanted entry), the rows let through are filtered again on the (group, key) pair:
    a second table. Every row whose (group, key) is wanted is returned, with a few others
    whose hashes collide: the caller checks them exactly.
    """
    bits = int(np.clip(np.ceil(np.log2(max(len(wanted), 1))) + 6, 12, 24))  # at most 16 MB a table
    shift = np.uint32(32 - bits)
    table = np.zeros(1 << bits, dtype=bool)  # bool, not uint8: numpy finds the hits of a bool array fastest
    table[wanted >> shift] = True
    pairs = None
    if group is not None and group_high is not None and wanted_group_high is not None:
        pairs = np.zeros(1 << bits, dtype=bool)
        pairs[((wanted ^ wanted_group_high) * _PAIR_MIX) >> shift] = True
    step = 1 << 19  # in slices: no full-size temporaries

    def lookup(start: int) -> np.ndarray:
        rows = np.flatnonzero(np.take(table, high[start : start + step] >> shift)) + start
        if pairs is None or group is None or group_high is None:
            return rows
        pair = ((high[rows] ^ np.take(group_high, group[rows])) * _PAIR_MIX) >> shift
        return rows[np.take(pairs, pair)]

    found = parallel_map(lookup, range(0, len(high), step))
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)

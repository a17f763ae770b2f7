"""The native reader of TREC run and qrels files (``rg_scan`` in `rankgate.core.native`), when it was built.

It reads the three fields rankgate keeps in one pass over the text, on a few threads. It
does not hash the doc ids: `Run` and `Qrels` hash them slice by slice where they use the
hashes (a full-size column of 64-bit hashes was 56 MB of new memory on a 7M-line run). It
reads only files it reads exactly as the Arrow path does: on anything else (non-ASCII bytes,
an odd line end, a malformed or short line, a number it does not take) it gives up and
`rankgate.io.trec` reads the file the general way, which also names a bad line. Without the
library (`rankgate.core.native`), every file takes the general path: the same numbers, slower.
"""

from __future__ import annotations

import mmap
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.columns import intern_ordered, numeric_array
from rankgate.core.native import library
from rankgate.core.parallel import WORKERS, parallel_map
from rankgate.io.source import BOM, DECOMPRESS_ERRORS, local_path, open_stream

_WINDOW = 8 << 20  # bytes of text scanned per call
_LONGEST_LINE = 1 << 20  # a longer line: the general path
_CHUNK_BYTES = (1 << 31) - (1 << 24)  # doc-id bytes of one string array: Arrow's int32 offsets, with room
_KIND = {"run": 0, "qrels": 1}


@dataclass
class Scanned:
    """A file's rows: query ids (dictionary-encoded, dictionary unique and in byte order), doc ids,
    and values (scores or grades)."""

    query_ids: pa.ChunkedArray
    doc_ids: pa.ChunkedArray
    values: np.ndarray


@dataclass
class _Window:
    rows: int
    values: np.ndarray  # views of the slot's scratch arrays: copied before the slot is used again
    codes: np.ndarray  # each row's query: its place in ``query_ids``
    doc_offsets: np.ndarray  # int32, rows + 1, from 0: the doc ids' bytes in ``doc_bytes`` (views, as above)
    doc_bytes: np.ndarray
    query_ids: pa.StringArray  # the window's query ids, in order of first appearance


class _GiveUp(Exception):
    """The scanner does not read this file: the general path does."""


_GIVE_UP: tuple[type[BaseException], ...] = (_GiveUp, *DECOMPRESS_ERRORS)


_MIN_LINE = {"run": 12, "qrels": 8}  # "q Q0 d 1 1 t\n", "q 0 d 1\n": bounds the rows of a window
_PAD = 16  # room past the text and the id bytes: the scanner reads and writes ids a word at a time
_TAIL = 1 << 16  # a mapped file's last bytes, copied into a padded buffer


class _Slot:
    """The scanner's output arrays for one window, reused window after window (no new pages), and
    a text buffer for windows that are copied (a compressed file, a file's tail). ``longest``:
    the most bytes a window will hold (a small file's size: a 50,000-line file does not need
    the 40 MB a full window's arrays take)."""

    def __init__(self, kind: str, longest: int = _WINDOW + _LONGEST_LINE) -> None:
        size = longest
        rows = size // _MIN_LINE[kind] + 1
        self.kind = kind
        self.values = np.empty(rows, dtype=np.float64)
        self.doc_offsets = np.empty(rows + 1, dtype=np.int32)
        self.doc_bytes = np.empty(size + _PAD, dtype=np.uint8)
        self.query_codes = np.empty(rows, dtype=np.int32)
        self.query_offsets = np.empty(rows + 1, dtype=np.int32)
        self.query_bytes = np.empty(size + _PAD, dtype=np.uint8)
        self.counts = np.zeros(7, dtype=np.int64)  # rg_scan's counts (the last: lines read whole)
        self._text = bytearray()

    def text(self, size: int) -> bytearray:
        """The text buffer, with room for ``size`` bytes and `_PAD` after them."""
        if len(self._text) < size + _PAD:
            self._text = bytearray(size + _PAD)
        return self._text

    def scan(self, lib: Any, address: int, size: int) -> _Window:
        """The rows of the ``size`` bytes at ``address``: whole lines, the last ending in a line feed,
        with `_PAD` readable bytes after them."""
        outputs = (
            self.values,
            self.doc_offsets,
            self.doc_bytes,
            self.query_codes,
            self.query_offsets,
            self.query_bytes,
        )
        status = lib.rg_scan(
            address,
            size,
            _KIND[self.kind],
            len(self.values),
            *(a.ctypes.data for a in outputs),
            self.counts.ctypes.data,
        )
        if status != 0:
            raise _GiveUp
        n, q, doc_len, query_len = (int(c) for c in self.counts[:4])
        query_ids = _strings(q, self.query_offsets[: q + 1].copy(), self.query_bytes[:query_len].copy())
        doc_offsets, doc_bytes = self.doc_offsets[: n + 1], self.doc_bytes[:doc_len]
        return _Window(n, self.values[:n], self.query_codes[:n], doc_offsets, doc_bytes, query_ids)


def scan(path: str, codec: str | None, kind: str) -> Scanned | None:
    """``path``'s rows read by the native scanner, or None when it is not there or does not read this file."""
    lib = library()
    if lib is None:
        return None
    path = local_path(path)  # a pipe or stdin: the copy every reader opens (it can be read only once)
    try:
        with _MappedText(path) if codec is None else _StreamedText(path, codec) as text:
            return _scan_windows(lib, text, kind)
    except _GIVE_UP:
        return None  # the general path reads it, or names what is wrong


def _scan_windows(lib: Any, text: _MappedText | _StreamedText, kind: str) -> Scanned | None:
    """Scan ``text``'s windows on worker threads while the next are cut; rows gathered in file order."""
    rows = _Rows(text.size)
    free: list[_Slot] = []
    pending: deque[tuple[Future[_Window], _Slot, int]] = deque()
    with ThreadPoolExecutor(max(1, WORKERS)) as pool:
        while True:
            slot = free.pop() if free else _Slot(kind, text.longest)
            window = text.next_window(slot)
            if window is None:
                free.append(slot)
            else:
                pending.append((pool.submit(slot.scan, lib, window[0], window[1]), slot, window[2]))
            while pending and (len(pending) > WORKERS or window is None):
                future, done, end = pending.popleft()
                rows.add(future.result())
                text.release(end)
                free.append(done)
            if window is None:
                return rows.assemble()


class _MappedText:
    """An uncompressed file, mapped: windows are scanned where the page cache holds them (no copy),
    and each window's pages are let go once it is scanned (they would count in the process's memory).
    The last `_TAIL` bytes are copied, so that the scanner may read a little past the last id."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            self.size = os.fstat(f.fileno()).st_size
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if self.size else None
        self.longest = min(_WINDOW + _LONGEST_LINE, self.size + 1)  # a window's most bytes (+1: a final line feed)
        self.view = np.frombuffer(self.map, dtype=np.uint8) if self.map is not None else None
        self.at = len(BOM) if self.map is not None and self.map[: len(BOM)] == BOM else 0
        self.released = 0

    def __enter__(self) -> _MappedText:
        return self

    def __exit__(self, *exc: object) -> None:
        self.view = None
        if self.map is not None:
            self.map.close()

    def next_window(self, slot: _Slot) -> tuple[int, int, int] | None:
        """(address, size, end in the file) of the next window, or None at the end."""
        if self.map is None or self.view is None or self.at >= self.size:
            return None
        tail = max(self.at, self.size - min(_TAIL, _WINDOW))
        cut = self.map.rfind(b"\n", self.at, min(self.at + _WINDOW, tail)) + 1 if self.at < tail else 0
        if cut > self.at:
            start, self.at = self.at, cut
            return self.view.ctypes.data + start, cut - start, cut
        if self.size - self.at > _WINDOW + _LONGEST_LINE:
            raise _GiveUp  # a line longer than a window
        piece = self.map[self.at : self.size]  # the tail: copied, so that the scanner may read past it
        if not piece.endswith(b"\n"):
            piece += b"\n"  # the last line has no line feed: give it one
        buffer = slot.text(len(piece))
        buffer[: len(piece)] = piece
        self.at = self.size
        return np.frombuffer(buffer, dtype=np.uint8).ctypes.data, len(piece), self.size

    def release(self, end: int) -> None:
        """Let go of the mapped pages before ``end`` (scanned, and the windows before it too)."""
        page_end = end - end % mmap.PAGESIZE
        if self.map is not None and page_end > self.released and hasattr(mmap, "MADV_DONTNEED"):
            self.map.madvise(mmap.MADV_DONTNEED, self.released, page_end - self.released)
            self.released = page_end


class _StreamedText:
    """A compressed file, decompressed into each window's buffer (the next read overlaps the scans)."""

    def __init__(self, path: str, codec: str) -> None:
        self.stream: Any = open_stream(path, codec)
        self.size = None
        self.longest = _WINDOW + _LONGEST_LINE
        self.carry, self.first, self.ended = b"", True, False

    def __enter__(self) -> _StreamedText:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.close()

    def next_window(self, slot: _Slot) -> tuple[int, int, int] | None:
        text = slot.text(_WINDOW + _LONGEST_LINE)
        while not self.ended:
            if len(self.carry) > _LONGEST_LINE:
                raise _GiveUp
            text[: len(self.carry)] = self.carry
            got = _read_into(self.stream, memoryview(text)[len(self.carry) : len(self.carry) + _WINDOW])
            end = len(self.carry) + got
            cut = text.rfind(b"\n", 0, end) + 1
            if got == 0:
                self.ended = True
                if cut < end:  # the last line has no line feed: give it one
                    text[end] = ord("\n")
                    cut = end = end + 1
            start = len(BOM) if self.first and text.startswith(BOM) else 0
            if cut > start:
                self.carry, self.first = bytes(text[cut:end]), False
                return np.frombuffer(text, dtype=np.uint8).ctypes.data + start, cut - start, 0
            self.carry = bytes(text[:end])
        return None

    def release(self, end: int) -> None:
        pass


def _read_into(stream: Any, view: memoryview) -> int:
    """Fill ``view`` from ``stream`` as far as it goes; 0 only at the end of the stream."""
    total = 0
    while total < len(view):
        got = stream.readinto(view[total:])
        if not got:
            break
        total += got
    return total


class _Rows:
    """The windows' rows gathered in file order: values, query codes and the doc ids' offsets
    and bytes copied into arrays of their own (sized from the first window and the file's size, or
    for a compressed file 64 windows' worth; grown when that falls short). The doc ids become one
    string array (a new one only past `_CHUNK_BYTES` of ids): large arrays are given memory in huge
    pages, where a copy per window took a page fault per 4 KB (a tenth of a second on 7M lines)."""

    def __init__(self, file_size: int | None) -> None:
        self.file_size = file_size
        self.count = 0
        self.values = np.empty(0, dtype=np.float64)
        self.codes = np.empty(0, dtype=np.int32)
        self.query_ids: list[pa.StringArray] = []
        self.starts: list[int] = []
        self.doc_chunks: list[pa.StringArray] = []  # closed chunks of doc ids
        self.chunk_start = 0  # the first row of the open chunk
        self.doc_offsets = np.zeros(1, dtype=np.int32)  # the open chunk's
        self.doc_bytes = np.empty(0, dtype=np.uint8)
        self.doc_used = 0  # bytes of the open chunk

    def add(self, window: _Window) -> None:
        end = self.count + window.rows
        if end > len(self.values):
            self._grow(end, window.rows)
        self.values[self.count : end] = window.values
        self.codes[self.count : end] = window.codes
        self.starts.append(self.count)
        self.query_ids.append(window.query_ids)
        self._add_doc_ids(window)
        self.count = end

    def _add_doc_ids(self, window: _Window) -> None:
        size = len(window.doc_bytes)
        if self.doc_used + size > _CHUNK_BYTES:
            self._close_chunk()
        at, end = self.count - self.chunk_start, self.count - self.chunk_start + window.rows
        if end + 1 > len(self.doc_offsets) or self.doc_used + size > len(self.doc_bytes):
            self._grow_doc_ids(end + 1, self.doc_used + size, window)
        np.add(window.doc_offsets[1:], np.int32(self.doc_used), out=self.doc_offsets[at + 1 : end + 1])
        self.doc_bytes[self.doc_used : self.doc_used + size] = window.doc_bytes
        self.doc_used += size

    def _grow(self, needed: int, window_rows: int) -> None:
        capacity = max(needed, self._guess(self.count, window_rows, window_rows))
        for name in ("values", "codes"):
            setattr(self, name, _grown(getattr(self, name), self.count, capacity))

    def _grow_doc_ids(self, rows: int, size: int, window: _Window) -> None:
        used_rows = self.count - self.chunk_start
        row_capacity = max(rows, self._guess(used_rows, window.rows, window.rows) + 1)
        guess = self._guess(self.doc_used, window.rows, len(window.doc_bytes))
        byte_capacity = max(size, min(guess, _CHUNK_BYTES + len(window.doc_bytes)))  # a chunk holds no more
        self.doc_offsets = _grown(self.doc_offsets, used_rows + 1, row_capacity)
        self.doc_bytes = _grown(self.doc_bytes, self.doc_used, byte_capacity)

    def _guess(self, filled: int, window_rows: int, window_amount: int) -> int:
        """Room for the whole file: from the first window's rows (or bytes) per byte of the file;
        a compressed file, its size unknown: room for 64 windows (pages never written cost no
        memory), then doubling: few copies."""
        if filled == 0 and self.file_size is not None:
            return int(self.file_size / _WINDOW * window_amount * 1.05) + window_amount + 1024
        if filled == 0:
            return 64 * window_amount + 1024
        return 2 * (filled + window_amount)

    def _close_chunk(self) -> None:
        rows = self.count - self.chunk_start
        if rows:
            self.doc_chunks.append(_strings(rows, self.doc_offsets[: rows + 1], self.doc_bytes[: self.doc_used]))
        self.chunk_start, self.doc_used = self.count, 0
        self.doc_offsets, self.doc_bytes = np.zeros(1, dtype=np.int32), np.empty(0, dtype=np.uint8)

    def assemble(self) -> Scanned | None:
        """The file's rows, with one dictionary of query ids in byte order; None: no rows."""
        if self.count == 0:
            return None  # empty, or only comments: the general path says so
        queries = intern_ordered(pa.chunked_array(self.query_ids, type=pa.string()), check_used=False)
        entry_starts = np.cumsum([0] + [len(q) for q in self.query_ids]).tolist()
        row_starts = [*self.starts, self.count]
        codes = self.codes[: self.count]

        def recode(i: int) -> None:  # window codes -> file codes, in place
            lo, hi = row_starts[i], row_starts[i + 1]
            to_code = queries.codes[entry_starts[i] : entry_starts[i + 1]].astype(np.int32, copy=False)
            np.take(to_code, codes[lo:hi], out=codes[lo:hi])

        parallel_map(recode, range(len(self.query_ids)))
        dictionary = pa.DictionaryArray.from_arrays(numeric_array(codes), queries.values)
        self._close_chunk()
        doc_ids = pa.chunked_array(self.doc_chunks, type=pa.string())
        return Scanned(pa.chunked_array([dictionary]), doc_ids, self.values[: self.count])


def _grown(array: np.ndarray, filled: int, capacity: int) -> np.ndarray:
    """A new array of ``capacity`` items holding ``array``'s first ``filled``."""
    new = np.empty(capacity, dtype=array.dtype)
    new[:filled] = array[:filled]
    return new


def _strings(n: int, offsets: np.ndarray, data: np.ndarray) -> pa.StringArray:
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))

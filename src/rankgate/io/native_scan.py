"""The native reader of TREC run and qrels files (``_trecscan.c``), when it was built.

It reads the three fields rankgate keeps in one pass over the text, on a few threads, and
hashes the doc ids as it goes (`rankgate.core.hashing.string_hashes`'s hash, which `Run`
would otherwise compute). It reads only files it reads exactly as the Arrow path does: on
anything else (non-ASCII bytes, an odd line end, a malformed or short line, a number it does
not take) it gives up and `rankgate.io.trec` reads the file the general way, which also
names a bad line. The library is built when rankgate is installed and a C compiler is
there (hatch_build.py); without it, or with ``RANKGATE_NATIVE=0``, every file takes the
general path: the same numbers, slower.
"""

from __future__ import annotations

import ctypes
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.columns import intern_ordered, numeric_array
from rankgate.core.parallel import WORKERS
from rankgate.io.source import BOM, DECOMPRESS_ERRORS, open_stream

_VERSION = 2  # rg_scan_version() of the C source this module calls
_LIBRARY = Path(__file__).with_name("_trecscan.so")
_WINDOW = 8 << 20  # bytes of text scanned per call
_LONGEST_LINE = 1 << 20  # a longer line: the general path
_KIND = {"run": 0, "qrels": 1}

_lib: Any = None


def library() -> Any:
    """The loaded scanner, or None (not built, built from another version, or ``RANKGATE_NATIVE=0``)."""
    global _lib
    if _lib is None:
        _lib = False
        if os.environ.get("RANKGATE_NATIVE", "1") != "0" and _LIBRARY.exists():
            try:
                lib = ctypes.CDLL(str(_LIBRARY))
                if lib.rg_scan_version() == _VERSION:
                    lib.rg_scan.restype = ctypes.c_int
                    lib.rg_scan.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_int64] + [
                        ctypes.c_void_p
                    ] * 8
                    _lib = lib
            except (OSError, AttributeError):
                _lib = False
    return _lib or None


@dataclass
class Scanned:
    """A file's rows: query ids (dictionary-encoded, dictionary unique and in byte order), doc ids,
    values (scores or grades) and the doc ids' 64-bit hashes."""

    query_ids: pa.ChunkedArray
    doc_ids: pa.ChunkedArray
    values: np.ndarray
    doc_hashes: np.ndarray


@dataclass
class _Window:
    rows: int
    values: np.ndarray  # views of the slot's scratch arrays: copied before the slot is used again
    hashes: np.ndarray
    doc_ids: pa.StringArray
    group_ids: pa.StringArray
    group_sizes: np.ndarray


class _GiveUp(Exception):
    """The scanner does not read this file: the general path does."""


_MIN_LINE = {"run": 12, "qrels": 8}  # "q Q0 d 1 1 t\n", "q 0 d 1\n": bounds the rows of a window
_PAD = 16  # room past the text and the id bytes: the scanner reads and writes ids a word at a time


class _Slot:
    """A window's text and the scanner's output arrays, reused window after window (no new pages)."""

    def __init__(self, kind: str) -> None:
        size = _WINDOW + _LONGEST_LINE
        rows = size // _MIN_LINE[kind] + 1
        self.text = bytearray(size + _PAD)
        self.values = np.empty(rows, dtype=np.float64)
        self.hashes = np.empty(rows, dtype=np.uint64)
        self.doc_offsets = np.empty(rows + 1, dtype=np.int32)
        self.doc_bytes = np.empty(size + _PAD, dtype=np.uint8)
        self.group_rows = np.empty(rows, dtype=np.int64)
        self.group_offsets = np.empty(rows + 1, dtype=np.int32)
        self.group_bytes = np.empty(size + _PAD, dtype=np.uint8)
        self.counts = np.zeros(6, dtype=np.int64)

    def scan(self, lib: Any, start: int, end: int, kind: str) -> _Window:
        """The rows of ``text[start:end]`` (whole lines, the last ending in a line feed)."""
        text = np.frombuffer(self.text, dtype=np.uint8)
        arrays = (self.values, self.hashes, self.doc_offsets, self.doc_bytes)
        groups = (self.group_rows, self.group_offsets, self.group_bytes, self.counts)
        status = lib.rg_scan(
            text.ctypes.data + start,
            end - start,
            _KIND[kind],
            len(self.values),
            *(a.ctypes.data for a in (*arrays, *groups)),
        )
        if status != 0:
            raise _GiveUp
        n, g, doc_len, group_len = (int(c) for c in self.counts[:4])
        doc_ids = _strings(n, self.doc_offsets[: n + 1].copy(), self.doc_bytes[:doc_len].copy())
        group_ids = _strings(g, self.group_offsets[: g + 1].copy(), self.group_bytes[:group_len].copy())
        sizes = np.diff(np.append(self.group_rows[:g], n))
        return _Window(n, self.values[:n], self.hashes[:n], doc_ids, group_ids, sizes)


def scan(path: str, codec: str | None, kind: str) -> Scanned | None:
    """``path``'s rows read by the native scanner, or None when it is not there or does not read this file."""
    lib = library()
    if lib is None:
        return None
    try:
        return _scan_file(lib, path, codec, kind)
    except (_GiveUp, *DECOMPRESS_ERRORS):
        return None  # the general path reads it, or names what is wrong


def _scan_file(lib: Any, path: str, codec: str | None, kind: str) -> Scanned | None:
    """Read ``path`` in windows cut at line ends, each scanned on a worker thread while the next is read."""
    opened = open_stream(path, codec)
    stream: Any = open(opened, "rb", buffering=0) if isinstance(opened, str) else opened  # noqa: SIM115
    rows = _Rows(os.path.getsize(path) if codec is None else None)
    free: list[_Slot] = []
    pending: deque[tuple[Future[_Window], _Slot]] = deque()
    try:
        with ThreadPoolExecutor(max(1, WORKERS)) as pool:
            carry, first = b"", True
            while True:
                if len(carry) > _LONGEST_LINE:
                    raise _GiveUp
                slot = free.pop() if free else _Slot(kind)
                text = slot.text
                text[: len(carry)] = carry
                got = _read_into(stream, memoryview(text)[len(carry) : len(carry) + _WINDOW])
                end = len(carry) + got
                cut = text.rfind(b"\n", 0, end) + 1
                if got == 0 and cut < end:  # the last line has no line feed: give it one
                    text[end] = ord("\n")
                    cut = end = end + 1
                start = len(BOM) if first and text.startswith(BOM) else 0
                if cut > start:
                    pending.append((pool.submit(slot.scan, lib, start, cut, kind), slot))
                    carry, first = bytes(text[cut:end]), False
                else:
                    carry = bytes(text[:end])
                    free.append(slot)
                while pending and (len(pending) > WORKERS or got == 0):
                    future, done = pending.popleft()
                    rows.add(future.result())
                    free.append(done)
                if got == 0:
                    return rows.assemble()
    finally:
        stream.close()


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
    """The windows' rows gathered in file order: values and hashes copied into arrays of their own
    (sized from the first window and the file's size, grown when that falls short), ids kept."""

    def __init__(self, file_size: int | None) -> None:
        self.file_size = file_size
        self.count = 0
        self.values = np.empty(0, dtype=np.float64)
        self.hashes = np.empty(0, dtype=np.uint64)
        self.doc_ids: list[pa.StringArray] = []
        self.group_ids: list[pa.StringArray] = []
        self.group_sizes: list[np.ndarray] = []

    def add(self, window: _Window) -> None:
        end = self.count + window.rows
        if end > len(self.values):
            self._grow(end, window.rows)
        self.values[self.count : end] = window.values
        self.hashes[self.count : end] = window.hashes
        self.count = end
        if window.rows:
            self.doc_ids.append(window.doc_ids)
        self.group_ids.append(window.group_ids)
        self.group_sizes.append(window.group_sizes)

    def _grow(self, needed: int, window_rows: int) -> None:
        guess = needed + needed // 2
        if self.count == 0 and self.file_size is not None:  # the first window: rows per byte of the file
            guess = int(self.file_size / _WINDOW * window_rows * 1.05) + window_rows + 1024
        capacity = max(needed, guess)
        for name in ("values", "hashes"):
            old = getattr(self, name)
            new = np.empty(capacity, dtype=old.dtype)
            new[: self.count] = old[: self.count]
            setattr(self, name, new)

    def assemble(self) -> Scanned | None:
        """The file's rows, query ids interned across windows (a query may span two); None: no rows."""
        if self.count == 0:
            return None  # empty, or only comments: the general path says so
        groups = intern_ordered(pa.chunked_array(self.group_ids, type=pa.string()), check_used=False)
        codes = np.repeat(groups.codes.astype(np.int32, copy=False), np.concatenate(self.group_sizes))
        queries = pa.DictionaryArray.from_arrays(numeric_array(codes), groups.values)
        doc_ids = pa.chunked_array(self.doc_ids, type=pa.string())
        return Scanned(pa.chunked_array([queries]), doc_ids, self.values[: self.count], self.hashes[: self.count])


def _strings(n: int, offsets: np.ndarray, data: np.ndarray) -> pa.StringArray:
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))

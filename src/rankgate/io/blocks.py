"""Read a run or qrels file as a stream of blocks, so no more than one block is in memory.

TREC text is cut at line boundaries into blocks of ``block_bytes`` (after decompression)
and parsed exactly as `rankgate.io.trec` parses a whole file, errors naming the line in
the whole file. Parquet is read by row groups. Each block keeps, for every row, its line
(TREC) or row number (Parquet), so that a later error (a duplicate, an empty id) can still
name where the row came from.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.errors import InputError
from rankgate.io import tables, trec
from rankgate.io.source import BOM, DECOMPRESS_ERRORS, detect_format, local_path, open_stream, read_head, sniff_codec

STREAMED_FORMATS = ("trec", "parquet")
DEFAULT_BLOCK_BYTES = 1 << 24  # 16 MB of text: about 400,000 run lines


@dataclass
class Block:
    qid: pa.Array  # strings
    docid: pa.Array  # strings
    value: np.ndarray  # float64 scores (run) or grades (qrels)
    where: np.ndarray  # int64: line number (TREC) or 1-based row number (Parquet) of each row

    def __len__(self) -> int:
        return len(self.value)


def stream_format(path: str | os.PathLike[str], fmt: str | None) -> str:
    """The file's format, checked to be one that can be streamed."""
    found = fmt or detect_format(path, read_head(path))
    if found not in STREAMED_FORMATS:
        raise InputError(
            f"out-of-core evaluation reads TREC text or Parquet, not {found}; convert the file, "
            "or evaluate it in memory (without --memory)",
            source=str(path),
        )
    return found


def iter_blocks(
    path: str | os.PathLike[str], kind: str, fmt: str | None = None, *, block_bytes: int | None = None
) -> Iterator[Block]:
    """Blocks of ``path`` (``kind`` "run" or "qrels"), in file order."""
    block_bytes = block_bytes or DEFAULT_BLOCK_BYTES
    found = stream_format(path, fmt)
    if found == "parquet":
        yield from _parquet_blocks(str(path), kind, block_bytes)
    else:
        yield from _trec_blocks(str(path), kind, block_bytes)


def _trec_blocks(path: str, kind: str, block_bytes: int) -> Iterator[Block]:
    layout = trec.RUN_LAYOUT if kind == "run" else trec.QRELS_LAYOUT
    opened = open_stream(path, sniff_codec(path))
    stream: Any = open(opened, "rb") if isinstance(opened, str) else opened  # noqa: SIM115 (closed below)
    first_line, carry, any_rows = 1, b"", False
    try:
        while True:
            try:
                chunk = stream.read(block_bytes)
            except DECOMPRESS_ERRORS as e:
                raise InputError(f"cannot decompress file ({e})", source=path) from None
            if not chunk:
                data, carry = carry, b""
            else:
                data = carry + chunk
                cut = _last_line_end(data) + 1
                if cut == 0:  # one very long line: read on
                    carry = data
                    continue
                data, carry = data[:cut], data[cut:]
            if first_line == 1 and data.startswith(BOM):
                data = data[len(BOM) :]
            if trec.has_content(data, layout.kind):
                parsed = trec.parse(data, layout, path, first_line)
                any_rows = True
                t = parsed.table
                yield Block(
                    qid=_strings(t["qid"]),
                    docid=_strings(t["docid"]),
                    value=parsed.values,
                    where=_line_numbers(data, first_line, len(parsed.values), kind),
                )
            first_line += trec.count_line_ends(data)
            if not chunk:
                break
    finally:
        stream.close()
    if not any_rows:
        raise InputError(f"file is empty: expected {layout.kind} lines like {layout.hint}", source=path)


def _last_line_end(data: bytes) -> int:
    """Where the last complete line of ``data`` ends (-1: none), as `trec.split_lines` cuts lines.

    A final ``\\r`` may be the first half of a ``\\r\\n`` cut by the read: it waits for the next read.
    """
    end = len(data) - 1 if data.endswith(b"\r") else len(data)
    return max(data.rfind(b"\n", 0, end), data.rfind(b"\r", 0, end))


def _line_numbers(data: bytes, first_line: int, rows: int, kind: str) -> np.ndarray:
    """Line of each parsed row: consecutive unless the block holds blank or comment lines."""
    lines = trec.count_line_ends(data) + (0 if data.endswith((b"\n", b"\r")) else 1)
    if lines == rows:
        return np.arange(first_line, first_line + rows, dtype=np.int64)
    numbers = trec.content_line_numbers(data, kind, first_line)
    return np.asarray(numbers[:rows], dtype=np.int64)


def _parquet_blocks(path: str, kind: str, block_bytes: int) -> Iterator[Block]:
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(local_path(path))
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"cannot read Parquet ({e})", source=path) from None
    names = pa.table({n: pa.array([], type=pa.null()) for n in f.schema_arrow.names})
    value_columns = tables.SCORE_COLUMNS if kind == "run" else tables.GRADE_COLUMNS
    columns = [
        tables.pick_column(names, tables.QUERY_COLUMNS, "query id", path),
        tables.pick_column(names, tables.DOC_COLUMNS, "document id", path),
        tables.pick_column(names, value_columns, "score" if kind == "run" else "grade", path),
    ]
    rows_per_batch = max(1, block_bytes // 40)
    start = 0
    for batch in f.iter_batches(batch_size=rows_per_batch, columns=columns):
        n = batch.num_rows
        where = np.arange(start + 1, start + n + 1, dtype=np.int64)
        first = int(where[0]) if n else 1

        def locate(row: int, first: int = first) -> str:
            return f"{path} row {first + row}"

        value = tables.numbers(batch.column(2), "score" if kind == "run" else "grade", locate)
        yield Block(qid=_strings(batch.column(0)), docid=_strings(batch.column(1)), value=value, where=where)
        start += n
    if start == 0:
        raise InputError("file holds no rows", source=path)


def _strings(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A plain string array (dictionary-encoded or chunked input flattened)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if not pa.types.is_string(column.type):
        column = column.cast(pa.string())
    return column

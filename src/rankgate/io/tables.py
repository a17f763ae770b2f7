"""Tabular inputs: CSV/TSV with a header (BEIR qrels), Parquet, JSON, JSONL and DataFrames.

All of them become an Arrow table whose columns are found by name: a query column
(``qid``, ``query_id``, ``query-id``, ...), a document column (``docid``, ``doc_id``,
``corpus-id``, ...) and a value column (``score`` for runs; ``grade``, ``relevance``,
``score``, ... for qrels).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from rankgate.core.columns import column_to_numpy
from rankgate.errors import InputError
from rankgate.io.source import BOM

QUERY_COLUMNS = ("qid", "query_id", "query-id", "queryid", "query", "topic", "topic_id", "q_id")
DOC_COLUMNS = (
    "docid",
    "doc_id",
    "doc-id",
    "corpus-id",
    "corpus_id",
    "docno",
    "doc",
    "pid",
    "passage_id",
    "document_id",
)
SCORE_COLUMNS = ("score", "sim", "similarity", "rank_score")
GRADE_COLUMNS = ("grade", "relevance", "rel", "label", "judgment", "judgement", "score", "qrel")


def pick_column(table: pa.Table, options: tuple[str, ...], what: str, source: str) -> str:
    by_lower = {c.lower().strip(): c for c in table.column_names}
    for name in options:
        if name in by_lower:
            return by_lower[name]
    raise InputError(
        f"no {what} column: expected one of {', '.join(options)} (found {', '.join(table.column_names) or 'none'})",
        source=source,
    )


def row_locator(data: bytes, source: str) -> Callable[[int], str]:
    """Map a data row (0-based, after the header) to ``source:line``; blank lines make the two differ."""
    cache: list[int] = []

    def locate(row: int) -> str:
        if not cache:
            cache.extend(_content_lines(data)[1:])
        return f"{source}:{cache[row]}" if 0 <= row < len(cache) else f"{source} row {row + 1}"

    return locate


def _content_lines(data: bytes) -> list[int]:
    """1-based numbers of the lines that Arrow reads (it skips empty ones)."""
    return [number for number, raw in enumerate(data.split(b"\n"), start=1) if raw.rstrip(b"\r")]


def _split(text: str, delimiter: str) -> list[str]:
    return next(csv.reader([text], delimiter=delimiter))


def read_delimited(data: bytes, delimiter: str, source: str) -> pa.Table:
    """CSV/TSV with a header line; every column read as text (typed later), ids trimmed."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.strip():
        raise InputError("file is empty: expected a header line and rows", source=source)
    first = next(raw for raw in data.split(b"\n") if raw.rstrip(b"\r"))
    header = _split(first.rstrip(b"\r").decode("utf-8", "replace"), delimiter)
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={h: pa.string() for h in header}, strings_can_be_null=False, null_values=[]
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as e:
        _diagnose_delimited(data, delimiter, len(header), source)
        raise InputError(f"cannot parse file ({e})", source=source) from None
    # "q1, 001, 2" means the ids "q1" and "001".
    columns = [pc.utf8_trim_whitespace(c) if pa.types.is_string(c.type) else c for c in table.columns]
    return pa.Table.from_arrays(columns, names=table.column_names)


def _diagnose_delimited(data: bytes, delimiter: str, width: int, source: str) -> None:
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.rstrip(b"\r")
        if not line:
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("line is not valid UTF-8", source=source, line=number, text=repr(line)[2:-1]) from None
        found = len(_split(text, delimiter))
        if found != width:
            raise InputError(
                f"expected {width} fields like the header, found {found}",
                source=source,
                line=number,
                text=text,
            )


def numbers(column: pa.ChunkedArray | pa.Array, what: str, locate: Callable[[int], str]) -> np.ndarray:
    """A text or numeric column as float64; an entry that is not a number names its row."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        row = int(np.flatnonzero(column_to_numpy(column.is_null()))[0])
        raise InputError(f"{locate(row)}: missing {what}")
    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return column_to_numpy(column).astype(np.float64)
    try:
        return column_to_numpy(column.cast(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    # Slow path: Python reads " 2.5" (Arrow does not); an entry that is not a number names its row.
    out = np.empty(len(column), dtype=np.float64)
    for row, v in enumerate(column.to_pylist()):
        try:
            if isinstance(v, str) and "_" in v:  # "1_000" is Python syntax, not data
                raise ValueError(v)
            out[row] = float(v)
        except (TypeError, ValueError):
            raise InputError(f"{locate(row)}: {what} {v!r} is not a number") from None
    return out


def read_parquet(data: bytes, source: str) -> pa.Table:
    import pyarrow.parquet as pq

    try:
        # One thread: with Arrow's pool, a process that stops soon after the read (bad input, exit 2)
        # aborted now and then in C++ at exit ("terminate called without an active exception", exit
        # 134; 3 in 40 runs with pyarrow 26). Decoding costs ~0.3 s more per 5M rows on 2 cores.
        return pq.read_table(io.BytesIO(data), use_threads=False)
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"cannot read Parquet file ({e})", source=source) from None


def read_json_mapping(data: bytes, source: str) -> dict[str, Any]:
    """A JSON object ``{qid: {docid: value}}`` or ``{qid: [docid, ...]}``."""
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError("file is not valid UTF-8", source=source, line=line) from None
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg}", source=source, line=e.lineno) from None
    if not isinstance(obj, dict):
        raise InputError(
            "expected a JSON object {query_id: {doc_id: value}} or {query_id: [doc_id, ...]}",
            source=source,
            text=type(obj).__name__,
        )
    if not obj:
        raise InputError("file holds no queries (empty JSON object)", source=source)
    return obj


def read_jsonl(data: bytes, source: str) -> pa.Table:
    """One JSON object per line; rows with the same keys."""
    rows: list[dict[str, Any]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.strip()
        if number == 1 and line.startswith(BOM):
            line = line[len(BOM) :]
        if not line:
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            msg = e.msg if isinstance(e, json.JSONDecodeError) else "not valid UTF-8"
            raise InputError(
                f"invalid JSON: {msg}", source=source, line=number, text=line.decode("utf-8", "replace")
            ) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object on each line", source=source, line=number, text=line.decode())
        obj["__line__"] = number
        rows.append(obj)
    if not rows:
        raise InputError("file is empty: expected one JSON object per line", source=source)
    columns: dict[str, list[Any]] = {}
    for row in rows:
        for key in row:
            columns.setdefault(key, [])
    for row in rows:
        for key, values in columns.items():
            value = row.get(key)
            values.append(value if key == "__line__" or value is None else str(value))
    return pa.table({k: pa.array(v) for k, v in columns.items()})


def frame_to_table(frame: Any) -> pa.Table | None:
    """An Arrow table from a pandas or polars DataFrame (None if ``frame`` is neither)."""
    module = type(frame).__module__
    if module.startswith("polars"):
        return frame.to_arrow()
    if module.startswith("pandas"):
        return pa.Table.from_pandas(frame, preserve_index=False)
    return None

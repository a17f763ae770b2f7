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
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import column_to_numpy
from rankgate.errors import InputError
from rankgate.io.jsontext import loads
from rankgate.io.source import BOM, block_size_for
from rankgate.io.values import clip, plain_float, shown

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
    check_unique_columns(table.column_names, source)
    by_lower = {c.lower().strip(): c for c in table.column_names}
    for name in options:
        if name in by_lower:
            return by_lower[name]
    found = ", ".join(table.column_names)
    raise InputError(
        f"no {what} column: expected one of {', '.join(options)} (found {clip(found, 200) or 'none'})",
        source=source,
    )


def check_unique_columns(names: list[str], source: str, line: int | None = None) -> None:
    """Columns are found by name, case and spaces aside: two of one name would make the choice a guess."""
    seen: set[str] = set()
    for name in names:
        key = name.lower().strip()
        if key in seen:
            raise InputError(f"column {shown(name)} appears twice in the header", source=source, line=line)
        seen.add(key)


def row_locator(data: bytes, delimiter: str, source: str) -> Callable[[int], str]:
    """Map a data row (0-based, after the header) to ``source:line``, the line the row starts on.

    Blank lines and quoted values that span lines make the two differ.
    """
    cache: list[int] = []

    def locate(row: int) -> str:
        if not cache:
            cache.extend(number for number, _ in _records(data, delimiter))
            del cache[:1]  # the header
        return f"{source}:{cache[row]}" if 0 <= row < len(cache) else f"{source} row {row + 1}"

    return locate


def _records(data: bytes, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(first line, fields) of each non-blank CSV/TSV record, as Arrow splits them (quotes may span lines)."""
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    limit = csv.field_size_limit(max(len(text), csv.field_size_limit()))  # the text is in memory already
    try:
        for fields in reader:
            if fields:
                yield start, fields
            start = reader.line_num + 1
    finally:
        csv.field_size_limit(limit)


def read_delimited(data: bytes, delimiter: str, source: str) -> pa.Table:
    """CSV/TSV with a header line; every column read as text (typed later), ids trimmed."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.strip():
        raise InputError("file is empty: expected a header line and rows", source=source)
    header_line, header = _header(data, delimiter, source)
    check_unique_columns(header, source, header_line)
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(block_size=block_size_for(data, 1 << 20)),
            # newlines_in_values: a quoted value may span lines wherever Arrow's blocks are cut.
            parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True, newlines_in_values=True),
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


def _header(data: bytes, delimiter: str, source: str) -> tuple[int, list[str]]:
    """(line, fields) of the header: the first record, as Arrow reads it (UTF-8 checked)."""
    try:
        line, header = next(_records(data[: 1 << 20], delimiter), (1, []))
    except csv.Error as e:  # e.g. a NUL byte
        raise InputError(f"cannot parse the header ({e})", source=source, line=1) from None
    if any("\ufffd" in name for name in header):
        raise InputError("header is not valid UTF-8", source=source, line=line)
    return line, header


def _diagnose_delimited(data: bytes, delimiter: str, width: int, source: str) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        number = data[: e.start].count(b"\n") + 1
        line = data.split(b"\n")[number - 1].rstrip(b"\r")
        raise InputError("line is not valid UTF-8", source=source, line=number, text=repr(line)[2:-1]) from None
    try:
        for number, fields in _records(data, delimiter):
            if len(fields) != width:
                raise InputError(
                    f"expected {width} fields like the header, found {len(fields)}",
                    source=source,
                    line=number,
                    text=delimiter.join(fields),
                )
    except csv.Error as e:  # e.g. a NUL byte, or a quote left open at the end of the file
        raise InputError(f"cannot parse file ({e})", source=source) from None


def numbers(column: pa.ChunkedArray | pa.Array, what: str, locate: Callable[[int], str]) -> np.ndarray:
    """A text or numeric column as float64; an entry that is not a number names its row."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        row = int(np.flatnonzero(column_to_numpy(column.is_null()))[0])
        raise InputError(f"{locate(row)}: missing {what}")
    if pa.types.is_boolean(column.type):  # Arrow would cast true to 1.0
        raise InputError(f"{locate(0)}: {what} column holds true/false, not numbers")
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
            out[row] = plain_float(v) if isinstance(v, str) else float(v)
        except (TypeError, ValueError):
            raise InputError(f"{locate(row)}: {what} {shown(v)} is not a number") from None
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


def read_json_mapping(data: bytes, source: str, what: str = "value") -> dict[str, Any]:
    """A JSON object ``{qid: {docid: value}}`` or ``{qid: [docid, ...]}``; ``what`` names the value in errors.

    Duplicate keys and booleans as values are errors: ``true`` is not a grade or a score.
    """
    try:
        obj = loads(data.decode("utf-8-sig"), source)
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
    for qid, docs in obj.items():
        for did, value in docs.items() if isinstance(docs, dict) else ():
            problem = _json_number_problem(value)
            if problem:
                raise InputError(f"query {shown(qid)}, document {shown(did)}: {what} {problem}", source=source)
    return obj


def _json_number_problem(value: Any) -> str | None:
    """What is wrong with a JSON score or grade that Python would take (None: nothing)."""
    if isinstance(value, bool):
        return f"{json.dumps(value)} is not a number"
    if isinstance(value, int) and not -(2**1023) < value < 2**1023:
        return f"{shown(value)} is too large"
    return None


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
            obj = loads(line, source, number)
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

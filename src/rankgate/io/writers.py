"""`write_run` / `write_qrels` in every format the readers take, atomically.

The format comes from the extension (``.trec``/``.run``/``.txt``, ``.json``, ``.jsonl``,
``.csv``, ``.tsv``, ``.parquet``), else ``format=``; a further ``.gz``, ``.bz2``, ``.xz`` or
``.zst`` compresses the file. Everything written reads back as the same `Run` or `Qrels`:

- TREC: ``qid Q0 docid rank score tag`` and ``qid 0 docid grade``.
- JSON: ``{qid: {docid: score}}`` / ``{qid: {docid: grade}}``.
- JSONL, CSV, TSV, Parquet: one row per pair. Runs have the columns ``query_id``, ``doc_id``,
  ``rank``, ``score``; qrels ``query-id``, ``corpus-id``, ``score`` (BEIR's qrels layout, so BEIR
  tools read them too).

Scores are written so that they read back as the same float64 (``repr``), ranks in evaluation
order (ties broken by ``ties``, trec_eval's rule by default).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
import os
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import as_string_array, column_to_numpy
from rankgate.core.ids import TREC_SEPARATORS
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.io.source import EXTENSIONS, FORMATS, atomic_writer, suffixes

BEIR_QRELS_COLUMNS = ("query-id", "corpus-id", "score")


def write_run(
    run: Run,
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    tag: str | None = None,
    ties: str = "trec",
) -> None:
    """Write ``run`` to ``path`` atomically (see the module docstring for the formats).

    Args:
        run: the run.
        path: where; the extension chooses the format and compression.
        format: trec, json, jsonl, csv, tsv or parquet, overriding the extension.
        tag: the TREC run tag (default: the run's name, else ``rankgate``).
        ties: the order of equal scores in the written ranks (``trec`` or ``input``).
    """
    fmt, codec = _target(path, format)
    if fmt != "trec":
        _write(path, _encode(run.to_arrow(ties), fmt, "score"), codec)
        return
    _check_trec_ids(path, run.query_ids, run.doc_ids)
    blocks = trec_run_blocks(run, tag or run.name or "rankgate", ties)
    if codec is not None:
        _write(path, b"".join(blocks), codec)
        return
    with atomic_writer(path, "wb") as f:  # the common case, streamed in blocks
        for block in blocks:
            f.write(block)  # type: ignore[arg-type]


def trec_run_blocks(run: Run, tag: str, ties: str = "trec", block_rows: int = 1 << 20) -> Iterator[bytes]:
    """The TREC lines of ``run`` as UTF-8 blocks of ``block_rows`` lines, in evaluation order.

    Byte for byte what `rankgate.io.trec.write_run_lines` writes (``f"{q} Q0 {d} {r} {s!r} {tag}\\n"``),
    built with Arrow kernels instead of one Python string per line.
    """
    table = run.to_arrow(ties)
    for start in range(0, table.num_rows, block_rows):
        part = table.slice(start, block_rows)
        lines = pc.binary_join_element_wise(
            part["query_id"],
            "Q0",
            part["doc_id"],
            pc.cast(part["rank"], pa.string()),
            float_reprs(part["score"].to_numpy()),
            tag + "\n",
            " ",
        ).combine_chunks()
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32, count=len(lines) + 1, offset=4 * lines.offset)
        yield lines.buffers()[2][int(offsets[0]) : int(offsets[-1])].to_pybytes()


def float_reprs(values: np.ndarray) -> pa.StringArray:
    """``repr`` of each (finite) float64, vectorised.

    Arrow writes the same shortest round-trip digits as Python but its own notation: ``1`` for
    ``1.0``, ``0.00001`` for ``1e-05``, ``1e+15`` for ``1000000000000000.0``. Between 1e-4 and
    1e16 Python writes fixed notation, so Arrow's text is kept there (``.0`` added to integers);
    anything else (exponents, far ranges) goes through ``repr``, row by row.

    >>> float_reprs(np.array([1.0, 0.25, 1e-05, -0.0, 1e16])).to_pylist()
    ['1.0', '0.25', '1e-05', '-0.0', '1e+16']
    """
    text = pc.cast(pa.array(values, type=pa.float64()), pa.string())
    size = np.abs(values)
    fixed = ((size >= 1e-4) & (size < 1e16)) | (size == 0)
    exponent = column_to_numpy(pc.match_substring(text, "e"))
    integral = fixed & ~exponent & ~column_to_numpy(pc.match_substring(text, "."))
    if integral.any():
        text = pc.if_else(pa.array(integral), pc.binary_join_element_wise(text, ".0", ""), text)
    slow = ~fixed | exponent
    if slow.any():
        text = pc.replace_with_mask(text, pa.array(slow), pa.array([repr(v) for v in values[slow].tolist()]))
    return as_string_array(text)


def write_qrels(qrels: Qrels, path: str | os.PathLike[str], *, format: str | None = None) -> None:
    """Write ``qrels`` to ``path`` atomically (see the module docstring for the formats)."""
    fmt, codec = _target(path, format)
    if fmt == "trec":
        _check_trec_ids(path, qrels.query_ids, qrels.doc_ids)
        lines = (f"{qid} 0 {did} {grade}\n" for qid, docs in qrels.to_dict().items() for did, grade in docs.items())
        if codec is None:
            with atomic_writer(path) as f:
                for line in lines:
                    f.write(line)
            return
        _write(path, "".join(lines).encode(), codec)
        return
    table = qrels.to_arrow().rename_columns(list(BEIR_QRELS_COLUMNS))
    _write(path, _encode(table, fmt, "score"), codec)


_SEPARATOR_PATTERN = "[" + "".join(f"\\x{ord(c):02x}" for c in TREC_SEPARATORS) + "]"  # RE2, hex escapes


def _check_trec_ids(path: str | os.PathLike[str], *columns: pa.Array | pa.ChunkedArray) -> None:
    """TREC fields are split on whitespace: an id holding some would be read back as other fields."""
    for what, column in zip(("query id", "document id"), columns, strict=True):
        bad = pc.filter(column, pc.match_substring_regex(column, _SEPARATOR_PATTERN))
        if len(bad):
            raise InputError(
                f"{what} {bad[0].as_py()!r} holds whitespace, which a TREC file cannot: write .jsonl, .csv, "
                ".tsv or .parquet instead",
                source=str(path),
            )


def _target(path: str | os.PathLike[str], format: str | None) -> tuple[str, str | None]:
    """(format, compression) of the file to write."""
    ext, codec = suffixes(path)
    if format is not None:
        if format not in FORMATS:
            raise InputError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", source=str(path))
        return format, codec
    if codec is not None and ext == ".parquet":
        raise InputError("Parquet compresses itself: write to a .parquet file", source=str(path))
    return EXTENSIONS.get(ext, "trec"), codec


def _encode(table: pa.Table, fmt: str, value: str) -> bytes:
    """``table`` (query, doc, ..., value columns) in ``fmt``."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return bytes(sink.getvalue())
    columns = table.column_names
    rows = zip(*(table[c].to_pylist() for c in columns), strict=True)
    if fmt == "json":
        mapping: dict[str, dict[str, object]] = {}
        for row in rows:
            mapping.setdefault(row[0], {})[row[1]] = row[columns.index(value)]
        return (json.dumps(mapping, ensure_ascii=False) + "\n").encode()
    if fmt == "jsonl":
        return "".join(
            json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False) + "\n" for row in rows
        ).encode()
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([repr(v) if isinstance(v, float) else v for v in row] for row in rows)
    return buf.getvalue().encode()


def _write(path: str | os.PathLike[str], data: bytes, codec: str | None) -> None:
    if codec == "gzip":
        data = gzip.compress(data, mtime=0)
    elif codec == "bz2":
        data = bz2.compress(data)
    elif codec == "xz":
        data = lzma.compress(data)
    elif codec == "zstd":
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as out:
            out.write(data)
        data = bytes(sink.getvalue())
    with atomic_writer(path, "wb") as f:
        f.write(data)  # type: ignore[arg-type]

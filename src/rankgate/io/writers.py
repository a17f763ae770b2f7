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

import pyarrow as pa
import pyarrow.compute as pc

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.io import trec
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
    if fmt == "trec":
        _check_trec_ids(path, run.query_ids, run.doc_ids)
    if fmt == "trec" and codec is None:  # the common case, streamed line by line
        label = tag or run.name or "rankgate"
        with atomic_writer(path) as f:
            f.write(trec.write_run_lines(list(run.iter_rows(ties)), label))
        return
    if fmt == "trec":
        data = trec.write_run_lines(list(run.iter_rows(ties)), tag or run.name or "rankgate").encode()
    else:
        data = _encode(run.to_arrow(ties), fmt, "score")
    _write(path, data, codec)


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


def _check_trec_ids(path: str | os.PathLike[str], *columns: pa.Array | pa.ChunkedArray) -> None:
    """TREC fields are split on whitespace: an id holding some would be read back as other fields."""
    for what, column in zip(("query id", "document id"), columns, strict=True):
        bad = pc.filter(column, pc.match_substring_regex(column, r"\s"))
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

"""`read_run` / `read_qrels` for every supported format (the writers are in `rankgate.io.writers`)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pyarrow as pa

from rankgate.core.columns import release_unused
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.io import hints, run_order, tables, trec
from rankgate.io.ranx_files import is_lz4, read_lz4_mapping
from rankgate.io.source import FORMATS, detect_format, read_bytes, read_head, stem

Locate = Callable[[int], str]


def read_run(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    name: str | None = None,
    duplicates: str = "error",
) -> Run:
    """Read a run: TREC (``qid Q0 docid rank score tag``), JSON ``{qid: {docid: score}}`` or
    ``{qid: [docid, ...]}`` (a ranked list), JSONL/CSV/TSV/Parquet with qid, docid, score columns.
    Compressed files (gzip, bz2, xz, zstd) are read by content, and so are ranx's LZ4 files
    (`rankgate.io.ranx_files`). The run is named by the file stem.
    """
    source = str(path)
    run_name = name or stem(path)
    if format is None and is_lz4(path):
        mapping = read_lz4_mapping(path, "run")
        run_name = name or stem(source.removesuffix(".lz4"))
        return Run.from_dict(mapping, source=source, name=run_name, duplicates=duplicates)
    fmt = _format(path, format)
    if fmt == "trec":
        parsed = trec.read(source, trec.RUN_LAYOUT, source)
        moved = run_order.reorder(parsed, duplicates)  # in Run's order, file-order columns let go
        try:
            return _trec_run(parsed, source, run_name, duplicates)
        except InputError:
            if not moved:
                raise
        # The error names rows: build the Run from the file's order, which raises it as it should.
        return _trec_run(trec.read(source, trec.RUN_LAYOUT, source), source, run_name, duplicates)
    data = read_bytes(path)
    if fmt == "json":
        mapping = tables.read_json_mapping(data, source, "score")
        return Run.from_dict(mapping, source=source, name=run_name, duplicates=duplicates)
    table, locate = _table(data, fmt, source)
    return run_from_table(table, source=source, name=run_name, duplicates=duplicates, locate=locate)


def _trec_run(parsed: trec.Parsed, source: str, name: str, duplicates: str) -> Run:
    t = parsed.table
    run = Run(
        t["qid"],
        t["docid"],
        parsed.values,
        name=name,
        source=source,
        duplicates=duplicates,
        locate=parsed.locate,
    )
    del parsed, t
    release_unused()  # the constructor's temporaries
    return run


def read_qrels(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    duplicates: str = "error",
) -> Qrels:
    """Read judgments: TREC (``qid iter docid grade``), JSON ``{qid: {docid: grade}}`` or
    ``{qid: [docid, ...]}`` (binary), JSONL/CSV/TSV/Parquet (e.g. BEIR ``query-id corpus-id score``).
    """
    source = str(path)
    if format is None and is_lz4(path):
        return _qrels_from_mapping(read_lz4_mapping(path, "qrels"), source, duplicates)
    fmt = _format(path, format)
    if fmt == "trec":
        parsed = trec.read(source, trec.QRELS_LAYOUT, source)
        t = parsed.table
        qrels = Qrels(
            t["qid"],
            t["docid"],
            parsed.values,
            source=source,
            duplicates=duplicates,
            locate=parsed.locate,
        )
        del parsed, t
        release_unused()
        return qrels
    data = read_bytes(path)
    if fmt == "json":
        return _qrels_from_mapping(tables.read_json_mapping(data, source, "grade"), source, duplicates)
    table, locate = _table(data, fmt, source)
    return qrels_from_table(table, source=source, duplicates=duplicates, locate=locate)


def _qrels_from_mapping(mapping: dict[str, object], source: str, duplicates: str) -> Qrels:
    with hints.run_hint(lambda: hints.mapping_values(mapping)):
        return Qrels.from_dict(mapping, source=source, duplicates=duplicates)


def _format(path: str | os.PathLike[str], format: str | None) -> str:
    if format is not None:
        if format not in FORMATS:
            raise InputError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}", source=str(path))
        return format
    return detect_format(path, read_head(path))


def _table(data: bytes, fmt: str, source: str) -> tuple[pa.Table, Locate]:
    if fmt in ("csv", "tsv"):
        delimiter = "," if fmt == "csv" else "\t"
        table = tables.read_delimited(data, delimiter, source)
        if not table.num_rows:  # as an empty TREC file: nothing to evaluate is a mistake, not a 0
            raise InputError("file has a header but no rows", source=source)
        return table, tables.row_locator(data, delimiter, source)
    if fmt == "parquet":
        table = tables.read_parquet(data, source)
        if not table.num_rows:
            raise InputError("file holds no rows", source=source)
        return table, lambda row: f"{source} row {row + 1}"
    if fmt == "jsonl":
        table = tables.read_jsonl(data, source)
        lines = table["__line__"].to_pylist()
        return table.drop_columns(["__line__"]), lambda row: f"{source}:{lines[row]}"
    raise InputError(f"unknown format {fmt!r}", source=source)


def run_from_table(
    table: pa.Table, *, source: str, name: str | None = None, duplicates: str = "error", locate: Locate | None = None
) -> Run:
    locate = locate or (lambda row: f"{source} row {row + 1}")
    q = tables.pick_column(table, tables.QUERY_COLUMNS, "query id", source)
    d = tables.pick_column(table, tables.DOC_COLUMNS, "document id", source)
    s = _value_column(table, tables.SCORE_COLUMNS, "score", tables.GRADE_COLUMNS, "qrels", source)
    scores = tables.numbers(table[s], "score", locate)
    return Run(table[q], table[d], scores, name=name, source=source, duplicates=duplicates, locate=locate)


def qrels_from_table(table: pa.Table, *, source: str, duplicates: str = "error", locate: Locate | None = None) -> Qrels:
    locate = locate or (lambda row: f"{source} row {row + 1}")
    q = tables.pick_column(table, tables.QUERY_COLUMNS, "query id", source)
    d = tables.pick_column(table, tables.DOC_COLUMNS, "document id", source)
    g = _value_column(table, tables.GRADE_COLUMNS, "grade", tables.SCORE_COLUMNS, "run", source)
    grades = tables.numbers(table[g], "grade", locate)
    with hints.run_hint(lambda: grades):
        return Qrels(table[q], table[d], grades, source=source, duplicates=duplicates, locate=locate)


def _value_column(
    table: pa.Table, options: tuple[str, ...], what: str, other: tuple[str, ...], other_kind: str, source: str
) -> str:
    """The ``what`` column; when there is none but the other kind's column is there (a "grade"
    column in a run, a "similarity" column in qrels), the error says the files look swapped."""
    try:
        return tables.pick_column(table, options, what, source)
    except InputError as e:
        names = {c.lower().strip() for c in table.column_names}
        if not names & set(other):
            raise
        raise hints.with_hint(e, hints.swap_hint(other_kind)) from None

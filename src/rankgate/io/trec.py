"""TREC run (``qid Q0 docid rank score tag``) and qrels (``qid iter docid grade``) files.

The grammar is trec_eval 10's: fields are separated by whitespace; a run line's fields after
the sixth are ignored; a run line whose first non-blank character is ``#`` is a comment, and so
is a qrels line that starts with ``#``. (Where rankgate reads a file differently from trec_eval,
docs/semantics.md says so.)

The fast path hands the bytes to Arrow's multi-threaded CSV parser. Whitespace that the
parser cannot take (tabs, repeated or leading spaces) is normalized first. When Arrow
rejects the input, a line-by-line scan finds the first bad line and says what is wrong
with it, so errors always name ``file:line`` and the offending text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import (
    array_to_numpy,
    column_to_numpy,
    first_empty,
    first_with_whitespace,
    intern_ordered,
    numeric_array,
    release_unused,
)
from rankgate.core.parallel import WORKERS
from rankgate.errors import InputError
from rankgate.io import native_scan
from rankgate.io.hints import swap_hint
from rankgate.io.source import BOM, DECOMPRESS_ERRORS, block_size_for, open_stream, read_bytes, read_head, sniff_codec
from rankgate.io.values import plain_float, shown

_IRREGULAR_WS = re.compile(rb"[ \t\v\f]+")  # C's isspace, less the line ends
_FIELD_SEP = re.compile(r"[ \t\v\f]+")
_EDGE_WS = re.compile(rb"(?m)^ | (?=\r?$)")
# Comment lines, blanked (not removed) so that line numbers stay right: trec_eval skips a run
# line whose first non-blank character is "#", and a qrels line whose first character is "#".
_COMMENTS = {
    "run": re.compile(rb"(?m)^[ \t\v\f]*#[^\r\n]*"),
    "qrels": re.compile(rb"(?m)^#[^\r\n]*"),
}
# A run line's fields after the sixth (trec_eval ignores them), once whitespace is single spaces.
_EXTRA_FIELDS = re.compile(rb"(?m)^((?:[^ \r\n]+ ){5}[^ \r\n]+) [^\r\n]*")
_MAX_GRADE = 2**53  # grades are read as float64; beyond this they are not exact
# trec_eval reads a grade with atoi: "1e3" is 1 to it, 1000 to a float parser. Only the spellings
# both read alike are taken: digits, optionally followed by ".0" ("2.0" is 2 to both).
_INTEGER_GRADE = r"[+-]?[0-9]+(\.0*)?"


@dataclass(frozen=True)
class Layout:
    """Fields of a TREC-style line and the column types Arrow should produce."""

    kind: str  # "run" or "qrels"
    names: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    keep: tuple[str, ...]  # columns returned
    hint: str  # what the line should look like

    @property
    def width(self) -> int:
        return len(self.names)


# Query ids are read dictionary-encoded: interning them then costs nothing.
_QID = pa.dictionary(pa.int32(), pa.string())

RUN_LAYOUT = Layout(
    "run",
    ("qid", "q0", "docid", "rank", "score", "tag"),
    (_QID, pa.string(), pa.string(), pa.string(), pa.float64(), pa.string()),
    ("qid", "docid", "score"),
    "'qid Q0 docid rank score tag'",
)
QRELS_LAYOUT = Layout(
    "qrels",
    ("qid", "iter", "docid", "grade"),
    (_QID, pa.string(), pa.string(), pa.string()),  # checked against _INTEGER_GRADE, then made float64
    ("qid", "docid", "grade"),
    "'qid iteration docid grade'",
)


_LINE_END = re.compile(rb"\r\n?|\n")
_LONE_CR = re.compile(rb"\r(?!\n)")


def split_lines(data: bytes) -> list[bytes]:
    """``data``'s lines as Arrow's parser cuts them: at ``\\n``, ``\\r\\n`` and a lone ``\\r`` (old Mac files).

    >>> split_lines(b"a\\r\\nb\\rc\\n")
    [b'a', b'b', b'c', b'']
    """
    return _LINE_END.split(data) if b"\r" in data else data.split(b"\n")


def count_line_ends(data: bytes) -> int:
    """How many line ends ``data`` holds, counted as `split_lines` cuts."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


@dataclass
class Parsed:
    table: pa.Table  # qid (dictionary-encoded) and docid columns
    values: np.ndarray  # scores or grades, float64
    locate: Callable[[int], str]


def read(path: str, layout: Layout, source: str) -> Parsed:
    """Parse a TREC file straight from disk (decompressing as it reads); errors name ``source:line``.

    Arrow reads the file in parallel blocks without holding its text. Malformed lines fail
    the parse or leave an empty field; either way the slow path below takes over. A line
    whose extra spaces only emptied an unused field (Q0, rank, tag) parses to the right values.
    """
    codec = sniff_codec(path)
    scanned = native_scan.scan(path, codec, layout.kind)
    if scanned is not None:
        table = pa.table({"qid": scanned.query_ids, "docid": scanned.doc_ids})
        locate = _locator(lambda: read_bytes(path), source, 1, layout.kind)
        return Parsed(table=table, values=scanned.values, locate=locate)
    table = _read_tabbed(path, codec, layout) if _tab_separated(path) else None
    if table is None:
        try:
            table = _read_csv(open_stream(path, codec), layout)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, *DECOMPRESS_ERRORS):
            table = None  # a truncated compressed file too: read_bytes below names it
    release_unused()  # the parser's buffers, kept by Arrow's allocator for reuse that won't come
    if table is None or table.num_rows == 0 or _suspicious(table):  # the slow path says what was wrong
        return parse(read_bytes(path), layout, source)
    chunks = table[layout.keep[-1]].chunks
    table = table.drop_columns([layout.keep[-1]])  # `_values` lets go of each chunk once it is copied
    values = _values(chunks, layout)
    if values is None:
        return parse(read_bytes(path), layout, source)
    if layout.kind == "run":
        table = _interned_queries(table)
    release_unused()
    return Parsed(table=table, values=values, locate=_locator(lambda: read_bytes(path), source, 1, layout.kind))


def _interned_queries(table: pa.Table) -> pa.Table:
    """``table`` with its query ids as one dictionary array, codes in byte order of the ids: what
    `Run` makes of them (`intern_ordered`), made here so that the parser's per-block indices
    can go before the `Run` is built (`intern_ordered` takes such a column as it is)."""
    interned = intern_ordered(table["qid"], check_used=True)
    dictionary = pa.DictionaryArray.from_arrays(numeric_array(interned.codes), interned.values)
    return table.set_column(table.schema.get_field_index("qid"), "qid", pa.chunked_array([dictionary]))


def _suspicious(table: pa.Table) -> bool:
    """Whitespace inside an id means tabs or odd spacing merged two fields."""
    qids = table["qid"]
    if pa.types.is_dictionary(qids.type):
        qids = pa.chunked_array([c.dictionary for c in qids.chunks], type=qids.type.value_type)
    if first_with_whitespace(qids) >= 0 or first_with_whitespace(table["docid"]) >= 0:
        return True
    return bool(pc.any(pc.starts_with(qids, "#")).as_py())  # a comment line with the right field count


def _tab_separated(path: str) -> bool:
    """Whether the file's first lines hold tabs and no spaces (its fields are tab-separated)."""
    head = read_head(path, 4096)
    head = head[: head.rfind(b"\n") + 1] or head
    return b"\t" in head and b" " not in head


def _read_tabbed(path: str, codec: str | None, layout: Layout) -> pa.Table | None:
    """Arrow's parse of a tab-separated file as is, or None when `normalize` would change its fields.

    Taken only when every line has exactly ``layout.width`` fields separated by single tabs, none
    empty and none holding other whitespace: then `normalize` would turn each tab into a space and
    change nothing else, and this table is the one `parse` would build, without holding the text
    (half the memory of the file, twice, and a regex pass over it). The fields that are not kept
    are read dictionary-encoded (small) to check them, then dropped.
    """
    types = {n: (t if n in layout.keep else _QID) for n, t in zip(layout.names, layout.types, strict=True)}
    try:
        table = pacsv.read_csv(
            open_stream(path, codec),
            read_options=pacsv.ReadOptions(
                column_names=list(layout.names), block_size=_BLOCK_SIZE, use_threads=WORKERS > 1
            ),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, strings_can_be_null=False, quoted_strings_can_be_null=False, null_values=[]
            ),
            memory_pool=_POOL,
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError, *DECOMPRESS_ERRORS):
        return None
    for name in layout.names:
        column = table[name]
        if pa.types.is_dictionary(column.type):
            column = pa.chunked_array([c.dictionary for c in column.chunks], type=column.type.value_type)
        elif not pa.types.is_string(column.type):
            continue  # a number Arrow read: neither empty nor holding whitespace
        if first_empty(column) >= 0 or first_with_whitespace(column) >= 0:
            return None
    return table.select(list(layout.keep))


_BLOCK_SIZE = 1 << 22  # 4 MB: less peak memory
# The parse allocates from C's malloc, not Arrow's default pool (mimalloc): mimalloc keeps about
# 70 MB of a 7M-line parse's freed blocks for reuse, which the numpy arrays built next cannot
# use; malloc's large blocks go back to the system when freed (and `release_unused` trims).
_POOL = pa.system_memory_pool()


def _read_csv(source: object, layout: Layout, block_size: int = _BLOCK_SIZE) -> pa.Table:
    """Arrow's parse of TREC text; a line longer than ``block_size`` fails it ("straddling object")."""
    return pacsv.read_csv(
        source,
        read_options=pacsv.ReadOptions(column_names=list(layout.names), block_size=block_size, use_threads=WORKERS > 1),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types=dict(zip(layout.names, layout.types, strict=True)),
            include_columns=list(layout.keep),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
        ),
        memory_pool=_POOL,
    )


def parse(data: bytes, layout: Layout, source: str, first_line: int = 1) -> Parsed:
    """Parse TREC text held in memory, normalizing whitespace; errors name ``source:line``.

    ``first_line`` is the line number of ``data``'s first line in ``source`` (for a block of a
    file read in pieces).
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.strip():
        raise InputError(f"file is empty: expected {layout.kind} lines like {layout.hint}", source=source)
    if b"\0" in data:  # trec_eval's C strings end there: it would read another id (or number) than the line shows
        at = data.index(b"\0")
        line = split_lines(data)[count_line_ends(data[:at])]
        raise InputError(
            "a NUL byte, where trec_eval would see the field end; remove it",
            source=source,
            line=first_line + count_line_ends(data[:at]),
            text=line.decode("utf-8", "replace"),
        )
    clean = normalize(data, layout)
    if not clean.strip():
        raise InputError(f"file holds only comments: expected {layout.kind} lines like {layout.hint}", source=source)
    try:
        table = _read_csv(pa.BufferReader(clean), layout, block_size_for(clean, _BLOCK_SIZE))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError) as e:
        diagnose(data, layout, source, first_line)
        raise InputError(f"cannot parse {layout.kind} file ({e})", source=source) from None
    values = _values(table[layout.keep[-1]].chunks, layout)
    if values is None:
        diagnose(data, layout, source, first_line)
        raise InputError(
            f"cannot read a {layout.keep[-1]} of this {layout.kind} file", source=source
        )  # diagnose names the line first
    return Parsed(table=table, values=values, locate=_locator(lambda: data, source, first_line, layout.kind))


def normalize(data: bytes, layout: Layout) -> bytes:
    """``data`` as Arrow's parser can take it, lines kept where they are.

    Comment lines are blanked, runs of whitespace become one space (none at a line's edges), a
    lone ``\\r`` (old Mac line end) becomes ``\\n``, and a run line loses its fields after the sixth.
    """
    clean = data
    if b"\r" in clean:
        clean = _LONE_CR.sub(b"\n", clean)
    if b"#" in clean:
        clean = _COMMENTS[layout.kind].sub(b"", clean)
    if b"\t" in clean and b" " not in clean:
        # Tab-separated: one replace (memchr speed, ~50x the regex). Doubled or edge separators
        # are then double or edge spaces, which the test below still sends to the regex.
        clean = clean.replace(b"\t", b" ")
    if (
        b"\t" in clean
        or b"  " in clean
        or clean[:1] == b" "
        or b"\n " in clean
        or b" \n" in clean
        or b" \r" in clean
        or clean.endswith(b" ")
        or b"\v" in clean
        or b"\f" in clean
    ):
        clean = _EDGE_WS.sub(b"", _IRREGULAR_WS.sub(b" ", clean))
    if layout.kind == "run":
        clean = _EXTRA_FIELDS.sub(rb"\1", clean)
    return clean


def is_content(line: bytes, kind: str) -> bool:
    """Whether one line of a ``kind`` ("run" or "qrels") file holds data: not blank, not a comment."""
    text = line.lstrip(b" \t\v\f") if kind == "run" else line
    return bool(line.strip()) and not text.startswith(b"#")


def has_content(data: bytes, kind: str) -> bool:
    """Whether ``data`` holds a line that is neither blank nor a comment."""
    if b"#" in data:
        data = _COMMENTS[kind].sub(b"", _LONE_CR.sub(b"\n", data) if b"\r" in data else data)
    return bool(data.strip())


def content_line_numbers(data: bytes, kind: str, first_line: int = 1) -> list[int]:
    """The numbers of ``data``'s lines that hold data (what each parsed row's ``file:line`` says)."""
    return [i for i, raw in enumerate(split_lines(data), start=first_line) if is_content(raw, kind)]


def _values(chunks: list[Any], layout: Layout) -> np.ndarray | None:
    """The score (run) or grade (qrels) column's ``chunks`` as one float64 array; None when one is bad.

    Bad: a score that is not finite, a grade not written as an integer or too large (`diagnose`
    names its line). A run's chunks are copied one by one and let go (emptied in the list), so
    the column is not held twice.
    """
    if layout.kind == "run":
        values = np.empty(sum(len(c) for c in chunks), dtype=np.float64)
        at = 0
        for i in range(len(chunks)):
            chunk = chunks[i]
            values[at : at + len(chunk)] = array_to_numpy(chunk)
            at += len(chunk)
            chunks[i] = chunk = None
            if i % 16 == 15:
                release_unused()
        return values if np.isfinite(values).all() else None
    column = pa.chunked_array(chunks, type=pa.string())
    # Among tokens that read as finite whole numbers, only an exponent ("1e3") makes the float reading
    # differ from trec_eval's atoi; a substring test is much cheaper than matching _INTEGER_GRADE.
    if pc.any(pc.match_substring(column, "e", ignore_case=True)).as_py():
        return None
    try:
        grades = column_to_numpy(pc.cast(column, pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    whole = np.isfinite(grades) & (grades == np.round(grades)) & (np.abs(grades) <= _MAX_GRADE)
    return grades if whole.all() else None


def diagnose(data: bytes, layout: Layout, source: str, first_line: int = 1) -> None:
    """Raise an `InputError` for the first malformed line of ``data`` (slow; error path only)."""
    for number, line in enumerate(split_lines(data), start=first_line):
        if number == 1 and line.startswith(BOM):
            line = line[len(BOM) :]
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("line is not valid UTF-8", source=source, line=number, text=repr(line)[2:-1]) from None
        fields = [f for f in _FIELD_SEP.split(text) if f]  # as Arrow splits: not on U+00A0 etc.
        if not fields or not is_content(line, layout.kind):
            continue
        if len(fields) < layout.width or (layout.kind == "qrels" and len(fields) > layout.width):
            guess = ""
            if layout.kind == "qrels" and len(fields) == 6:
                guess = "; " + swap_hint("run", "line")
            elif layout.kind == "run" and len(fields) == 4:
                guess = "; " + swap_hint("qrels", "line")
            least = "at least " if layout.kind == "run" else ""  # trec_eval ignores a run line's later fields
            raise InputError(
                f"expected {least}{layout.width} fields {layout.hint}, found {len(fields)}{guess}",
                source=source,
                line=number,
                text=text,
            )
        if layout.kind == "run":
            _check_score(fields[4], source, number, text)
        else:
            _check_grade(fields[3], source, number, text)


def _check_score(value: str, source: str, number: int, text: str) -> None:
    try:
        score = plain_float(value)
    except ValueError:
        raise InputError(f"score {shown(value)} is not a number", source=source, line=number, text=text) from None
    if not np.isfinite(score):
        raise InputError(f"score {shown(value)} is not a finite number", source=source, line=number, text=text)


def _check_grade(value: str, source: str, number: int, text: str) -> None:
    if not re.fullmatch(_INTEGER_GRADE, value):
        try:
            grade = plain_float(value)
        except ValueError:
            grade = float("nan")
        if not np.isfinite(grade) or grade != round(grade):
            raise InputError(f"grade {shown(value)} is not a whole number", source=source, line=number, text=text)
        atoi = re.match(r"[+-]?[0-9]*", value)
        as_trec_eval = int(atoi.group()) if atoi and atoi.group().lstrip("+-") else 0
        raise InputError(
            f"grade {shown(value)} is not written as an integer (trec_eval would read it as {as_trec_eval})",
            source=source,
            line=number,
            text=text,
        )
    if abs(float(value)) > _MAX_GRADE:
        raise InputError(f"grade {shown(value)} is too large", source=source, line=number, text=text)


def _locator(load: Callable[[], bytes], source: str, first_line: int = 1, kind: str = "run") -> Callable[[int], str]:
    """Map a parsed row to ``source:line`` (blank and comment lines make the two differ); reads lazily."""
    cache: list[int] = []

    def locate(row: int) -> str:
        if not cache:
            cache.extend(content_line_numbers(load(), kind, first_line))
        return f"{source}:{cache[row]}" if 0 <= row < len(cache) else f"{source} row {row + 1}"

    return locate


def write_run_lines(rows: list[tuple[str, str, int, float]], tag: str) -> str:
    """TREC run text for ``(qid, docid, rank, score)`` rows."""
    return "".join(f"{q} Q0 {d} {r} {s!r} {tag}\n" for q, d, r, s in rows)

"""TREC run (``qid Q0 docid rank score tag``) and qrels (``qid iter docid grade``) files.

The fast path hands the bytes to Arrow's multi-threaded CSV parser. Whitespace that the
parser cannot take (tabs, repeated or leading spaces) is normalized first. When Arrow
rejects the input, a line-by-line scan finds the first bad line and says what is wrong
with it, so errors always name ``file:line`` and the offending text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rankgate.errors import InputError
from rankgate.io.source import BOM

_IRREGULAR_WS = re.compile(rb"[ \t]+")
_EDGE_WS = re.compile(rb"(?m)^ | (?=\r?$)")


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


RUN_LAYOUT = Layout(
    "run",
    ("qid", "q0", "docid", "rank", "score", "tag"),
    (pa.string(), pa.string(), pa.string(), pa.string(), pa.float64(), pa.string()),
    ("qid", "docid", "score"),
    "'qid Q0 docid rank score tag'",
)
QRELS_LAYOUT = Layout(
    "qrels",
    ("qid", "iter", "docid", "grade"),
    (pa.string(), pa.string(), pa.string(), pa.int64()),
    ("qid", "docid", "grade"),
    "'qid iteration docid grade'",
)


@dataclass
class Parsed:
    table: pa.Table
    locate: Callable[[int], str]


def parse(data: bytes, layout: Layout, source: str) -> Parsed:
    """Parse TREC text; every error names ``source:line``."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    if not data.strip():
        raise InputError(f"file is empty: expected {layout.kind} lines like {layout.hint}", source=source)
    clean = data
    if b"\t" in data or b"  " in data or data[:1] == b" " or b"\n " in data or b" \n" in data or b" \r" in data:
        clean = _EDGE_WS.sub(b"", _IRREGULAR_WS.sub(b" ", data))
    try:
        table = pacsv.read_csv(
            pa.BufferReader(clean),
            read_options=pacsv.ReadOptions(column_names=list(layout.names), block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types=dict(zip(layout.names, layout.types, strict=True)),
                include_columns=list(layout.keep),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError) as e:
        diagnose(data, layout, source)
        raise InputError(f"cannot parse {layout.kind} file ({e})", source=source) from None
    return Parsed(table=table, locate=_locator(data, source))


def diagnose(data: bytes, layout: Layout, source: str) -> None:
    """Raise an `InputError` for the first malformed line of ``data`` (slow; error path only)."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.rstrip(b"\r")
        if number == 1 and line.startswith(BOM):
            line = line[len(BOM) :]
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("line is not valid UTF-8", source=source, line=number, text=repr(line)[2:-1]) from None
        fields = text.split()
        if not fields:
            continue
        if len(fields) != layout.width:
            guess = ""
            if layout.kind == "qrels" and len(fields) == 6:
                guess = "; this looks like a run line: pass the qrels first, then the run"
            elif layout.kind == "run" and len(fields) == 4:
                guess = "; this looks like a qrels line: pass the qrels first, then the run"
            raise InputError(
                f"expected {layout.width} fields {layout.hint}, found {len(fields)}{guess}",
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
        score = float(value)
    except ValueError:
        raise InputError(f"score {value!r} is not a number", source=source, line=number, text=text) from None
    if not np.isfinite(score):
        raise InputError(f"score {value!r} is not a finite number", source=source, line=number, text=text)


def _check_grade(value: str, source: str, number: int, text: str) -> None:
    try:
        int(value)
    except ValueError:
        raise InputError(
            f"grade {value!r} is not a whole number", source=source, line=number, text=text
        ) from None


def _locator(data: bytes, source: str) -> Callable[[int], str]:
    """Map a parsed row to ``source:line``; blank lines make the two differ."""
    cache: list[int] = []

    def locate(row: int) -> str:
        if not cache:
            cache.extend(i for i, raw in enumerate(data.split(b"\n"), start=1) if raw.strip())
        return f"{source}:{cache[row]}" if 0 <= row < len(cache) else f"{source} row {row + 1}"

    return locate


def write_run_lines(rows: list[tuple[str, str, int, float]], tag: str) -> str:
    """TREC run text for ``(qid, docid, rank, score)`` rows."""
    return "".join(f"{q} Q0 {d} {r} {s!r} {tag}\n" for q, d, r, s in rows)

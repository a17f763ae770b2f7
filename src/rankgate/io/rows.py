"""Rows of small text files, shared by the readers of corpora, queries, query tags and click logs.

A file is streamed as numbered lines (decompressed by content, BOM and line endings dropped, UTF-8
checked line by line), then read as JSONL objects, one JSON document, or CSV/TSV rows under a
header. Every reader built on these names ``file:line`` in its errors the same way.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rankgate.errors import InputError
from rankgate.io.jsontext import loads
from rankgate.io.source import BOM, DECOMPRESS_ERRORS, open_stream, sniff_codec

Line = tuple[int, str]  # (1-based line number, text without its line ending)

_CHUNK = 1 << 20


@dataclass(frozen=True)
class JsonWording:
    """How a JSON syntax error reads; ``{msg}`` is the parser's message, ``{col}`` its column.

    Attributes:
        line: for a line of a JSONL file.
        document: for a whole JSON file.
    """

    line: str = "invalid JSON: {msg}"
    document: str = "invalid JSON: {msg}"


INVALID_JSON = JsonWording()


def numbered_lines(path: str | os.PathLike[str], *, errors: str = "strict") -> Iterator[Line]:
    """Every line of the file, numbered from 1, streamed (the file is never held whole).

    Args:
        path: the file; gzip, bz2, xz and zstd are decompressed by content.
        errors: ``"strict"`` (a byte that is not UTF-8 is an `InputError` naming the line) or
            ``"replace"`` (it becomes U+FFFD).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.txt"
    >>> _ = f.write_bytes(b"\\xef\\xbb\\xbfa\\r\\n\\nb")
    >>> list(numbered_lines(f))
    [(1, 'a'), (2, ''), (3, 'b')]
    """
    source = str(path)
    for number, raw in enumerate(_raw_lines(path), start=1):
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            yield number, raw.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            raise InputError(
                f"not UTF-8 text ({e.reason} at byte {e.start + 1} of the line)", source=source, line=number
            ) from None


def _raw_lines(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """The file's lines as bytes, split on ``\\n`` only (a JSON string may hold U+2028)."""
    codec = sniff_codec(path)
    stream = open_stream(path, codec)
    f: Any = open(stream, "rb") if isinstance(stream, str) else stream  # noqa: SIM115 (closed below)
    carry: list[bytes] = []
    try:
        while True:
            try:
                chunk = f.read(_CHUNK)
            except DECOMPRESS_ERRORS as e:
                raise InputError(f"cannot decompress {codec} file ({e})", source=str(path)) from None
            if not chunk:
                break
            parts = bytes(chunk).split(b"\n")
            if len(parts) == 1:  # a line longer than a chunk
                carry.append(parts[0])
                continue
            parts[0] = b"".join([*carry, parts[0]])
            carry = [parts.pop()]
            yield from parts
    finally:
        f.close()
    last = b"".join(carry)
    if last:
        yield last


def peek(lines: Iterable[Line], count: int = 1) -> tuple[list[Line], Iterator[Line]]:
    """The first ``count`` non-blank lines (fewer at the end of the file), and every line again."""
    seen: list[Line] = []
    found: list[Line] = []
    rest = iter(lines)
    for item in rest:
        seen.append(item)
        if item[1].strip():
            found.append(item)
            if len(found) == count:
                break
    return found, itertools.chain(seen, rest)


def json_shape(
    lines: Iterable[Line], id_keys: tuple[str, ...], source: str = "<input>"
) -> tuple[str | None, Iterator[Line]]:
    """``"jsonl"``, ``"json"`` (one document) or None (not JSON), from the first lines; and the lines again.

    Several lines that start with a complete object are JSONL; so is one object that holds an id
    (one of ``id_keys``). One object without an id is a JSON mapping such as ``{id: text}``.
    A first line that is not valid JSON is JSONL when it ends like an object (so its error names
    line 1), else the start of a pretty-printed document.
    """
    found, lines = peek(lines, 2)
    first = found[0][1].strip() if found else ""
    if first.startswith("["):
        return "json", lines
    if not first.startswith("{"):
        return None, lines
    try:
        obj = loads(first, source, found[0][0])
    except json.JSONDecodeError:
        return ("jsonl" if first.endswith("}") else "json"), lines
    if len(found) > 1:
        return "jsonl", lines
    return ("jsonl" if isinstance(obj, dict) and any(k in obj for k in id_keys) else "json"), lines


def json_lines(lines: Iterable[Line], source: str, wording: JsonWording = INVALID_JSON) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of every non-blank line of a JSONL file."""
    for number, text in lines:
        if not text.strip():
            continue
        try:
            value = loads(text, source, number)
        except json.JSONDecodeError as e:
            message = wording.line.format(msg=e.msg, col=e.colno)
            raise InputError(message, source=source, line=number, text=text) from None
        yield number, value


def json_document(lines: Iterable[Line], source: str, wording: JsonWording = INVALID_JSON) -> Any:
    """The file's lines parsed as one JSON document (an error names the line it is on)."""
    try:
        return loads("\n".join(text for _, text in lines), source)
    except json.JSONDecodeError as e:
        raise InputError(wording.document.format(msg=e.msg, col=e.colno), source=source, line=e.lineno) from None


def table_rows(
    lines: Iterable[Line], source: str = "<input>"
) -> tuple[list[str], Iterator[tuple[int, dict[str | None, Any]]]]:
    """The header of a CSV/TSV file (TSV when its first line holds a tab) and its rows with line numbers.

    Rows are `csv.DictReader` rows: quoted fields may span lines (a row is numbered by its last
    line), extra fields sit under the key None. Text the csv module cannot split (a NUL byte, a
    lone carriage return) is an `InputError` naming ``source`` and the line.
    """
    found, lines = peek(lines)
    delimiter = "\t" if found and "\t" in found[0][1] else ","
    reader = csv.DictReader((text + "\n" for _, text in lines), delimiter=delimiter)
    try:
        header = list(reader.fieldnames or [])
    except csv.Error as e:
        raise InputError(f"cannot read the header ({e})", source=source, line=reader.line_num or 1) from None
    return header, _numbered_rows(reader, source)


def _numbered_rows(reader: csv.DictReader[str], source: str) -> Iterator[tuple[int, dict[str | None, Any]]]:
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"cannot read the row ({e})", source=source, line=reader.line_num) from None
        yield reader.line_num, row

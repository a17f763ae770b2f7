"""Corpus and queries files: ``{id: text}`` from BEIR JSONL, JSON or TSV.

Accepted forms, for both files:

- JSONL, one object per line with an id (``_id``, ``id``, ``doc_id``, ``query_id``, ...) and a
  text (``text``, ``contents``, ``body``, ``query``...); a document's ``title`` goes before its
  text, a query's ``title`` stands in only when it has no text;
- JSON: ``["text", ...]`` (the ids are the positions ``"0"``, ``"1"``...), ``{id: "text"}``,
  ``{id: {"title": ..., "text": ...}}`` or a list of such objects;
- TSV: ``id<TAB>text`` per line (MS MARCO ``collection.tsv`` / ``queries.tsv``), with or without
  a header line such as ``id<TAB>text``.

Files are streamed line by line (a JSON document is read whole), decompressed by content, their
BOM dropped. A malformed entry, a missing id or text, or an id given twice is an `InputError`
naming the file and line (or item, or key). An empty text is kept: it is still an entry.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from rankgate.errors import InputError
from rankgate.io.rows import INVALID_JSON, JsonWording, Line, json_document, json_lines, json_shape, numbered_lines

ID_KEYS = ("_id", "id", "doc_id", "docid", "query_id", "qid", "query-id", "corpus-id", "pid")
TEXT_KEYS = ("text", "contents", "content", "body", "query", "passage")
TEXT_FORMATS = ("jsonl", "json", "tsv")
_HEADERS = {(i, t) for i in ID_KEYS for t in (*TEXT_KEYS, "title")}


def read_corpus(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    joiner: str = "\n\n",
    wording: JsonWording = INVALID_JSON,
) -> dict[str, str]:
    """``{doc_id: text}`` of a corpus file, in file order; a title is joined before the text with ``joiner``.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "corpus.jsonl"
    >>> _ = f.write_text('{"_id": "d1", "title": "Tea", "text": "Brew at 80 C."}\\n')
    >>> read_corpus(f), read_corpus(f, joiner=" ")
    ({'d1': 'Tea\\n\\nBrew at 80 C.'}, {'d1': 'Tea Brew at 80 C.'})
    """
    return dict(iter_texts(path, what="document", format=format, joiner=joiner, wording=wording))


def read_queries(
    path: str | os.PathLike[str], *, format: str | None = None, wording: JsonWording = INVALID_JSON
) -> dict[str, str]:
    """``{query_id: text}`` of a queries file (BEIR ``queries.jsonl``, ``id<TAB>text``...), in file order.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "queries.tsv"
    >>> _ = f.write_text("q1\\tbrew tea\\nq2\\tsteep time\\n")
    >>> read_queries(f)
    {'q1': 'brew tea', 'q2': 'steep time'}
    """
    return dict(iter_texts(path, what="query", format=format, wording=wording))


def read_texts(
    path: str | os.PathLike[str],
    *,
    what: str = "document",
    format: str | None = None,
    joiner: str = "\n\n",
    wording: JsonWording = INVALID_JSON,
) -> dict[str, str]:
    """``{id: text}`` of a corpus (``what="document"``) or queries (``what="query"``) file."""
    return dict(iter_texts(path, what=what, format=format, joiner=joiner, wording=wording))


def iter_texts(
    path: str | os.PathLike[str],
    *,
    what: str = "document",
    format: str | None = None,
    joiner: str = "\n\n",
    wording: JsonWording = INVALID_JSON,
) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of every entry, streamed in file order (see the module docstring for the forms).

    Args:
        path: the file.
        what: ``"document"`` or ``"query"``: whether a title is part of the text, and the word
            the error messages use.
        format: ``"jsonl"``, ``"json"`` or ``"tsv"``; None tells it from the content.
        joiner: between a document's title and its text.
        wording: how JSON syntax errors read.

    Raises:
        InputError: naming the file and line (or item, or key) of a malformed entry, a missing
            id or text, or an id given twice (and where it was first).
    """
    if format is not None and format not in TEXT_FORMATS:
        raise InputError(f"unknown format {format!r}; choose one of {', '.join(TEXT_FORMATS)}", source=str(path))
    source = str(path)
    lines: Iterable[Line] = numbered_lines(path)
    if format is None:
        shape, lines = json_shape(lines, ID_KEYS, source)
        format = shape or "tsv"
    seen: dict[str, _Place] = {}
    for place, (key, text) in _entries(lines, format, source, _Rules(what, joiner), wording):
        if key in seen:
            raise place.error(f"duplicate {what} id {key!r} (first {seen[key].describe()})")
        seen[key] = place
        yield key, text
    if not seen:
        empty = "file is empty: expected one {} per line" if format != "json" else "no {} in the file"
        raise InputError(empty.format(what), source=source)


def _entries(
    lines: Iterable[Line], format: str, source: str, rules: _Rules, wording: JsonWording
) -> Iterator[tuple[_Place, tuple[str, str]]]:
    """``(where, (id, text))`` of every entry of a file in ``format``."""
    if format == "jsonl":
        for number, row in json_lines(lines, source, wording):
            place = _Place(source, line=number)
            yield place, rules.entry(row, place)
    elif format == "json":
        yield from _json_entries(json_document(lines, source, wording), source, rules)
    else:
        yield from _tsv_entries(lines, source)


class _Place(NamedTuple):
    """Where an entry is: a line of a JSONL/TSV file, an item of a JSON list, or a key of a JSON object.

    A named tuple, not a dataclass: one is made per entry, and a corpus has millions.
    """

    source: str
    line: int | None = None
    item: int | None = None
    key: str | None = None

    def describe(self) -> str:
        if self.item is not None:
            return f"at item {self.item}"
        if self.key is not None:
            return f"at key {self.key!r}"
        return f"on line {self.line}"

    def error(self, message: str, text: str | None = None) -> InputError:
        prefix = (
            f"item {self.item}: " if self.item is not None else f"key {self.key!r}: " if self.key is not None else ""
        )
        return InputError(prefix + message, source=self.source, line=self.line, text=text)


@dataclass(frozen=True)
class _Rules:
    """How a JSON object becomes ``(id, text)``."""

    what: str
    joiner: str

    def entry(self, row: Any, place: _Place) -> tuple[str, str]:
        if not isinstance(row, dict):
            raise place.error("expected a JSON object with '_id' and 'text'", repr(row))
        raw_id = row.get("_id")
        if raw_id is None:  # BEIR's name first: the others are the rare case
            raw_id = next((row[k] for k in ID_KEYS if row.get(k) is not None), None)
        if raw_id is None or isinstance(raw_id, dict | list | bool):
            raise place.error(f"{self.what} has no '_id' (or 'id') field", repr(row))
        key = str(raw_id).strip()
        if not key:
            raise place.error(f"{self.what} id is empty", repr(row))
        text_key = "text" if "text" in row else next((k for k in TEXT_KEYS if k in row), None)
        body = row[text_key] if text_key is not None else None
        title = row.get("title")
        wrong = "text" if not isinstance(body, str | None) else "title" if not isinstance(title, str | None) else None
        if wrong is not None:
            raise place.error(f"{self.what} {key!r}: '{wrong}' must be a string", repr(row))
        if text_key is None and not title:
            raise place.error(f"{self.what} {key!r} has no 'text' field", repr(row))
        if self.what == "query":  # a query's title is its text only when it has none
            return key, ((body or "") if text_key is not None else title or "").strip()
        head, tail = (title or "").strip(), (body or "").strip()
        return key, head + self.joiner + tail if head and tail else head or tail


def _json_entries(value: Any, source: str, rules: _Rules) -> Iterator[tuple[_Place, tuple[str, str]]]:
    if isinstance(value, list):
        for i, item in enumerate(value):
            place = _Place(source, item=i)
            yield place, ((str(i), item) if isinstance(item, str) else rules.entry(item, place))
    elif isinstance(value, dict):
        for key, item in value.items():
            place = _Place(source, key=str(key))
            if isinstance(item, str):
                yield place, (str(key), item)
            elif isinstance(item, dict):
                yield place, rules.entry({"_id": key, **item}, place)
            else:
                raise InputError(
                    f"{rules.what} {key!r}: expected a text or an object with a 'text' field",
                    source=source,
                    text=repr(item),
                )
    else:
        raise InputError(
            f"expected a list of {rules.what} texts or objects, or a {{id: text}} mapping",
            source=source,
            text=repr(value)[:80],
        )


def _tsv_entries(lines: Iterable[Line], source: str) -> Iterator[tuple[_Place, tuple[str, str]]]:
    """``id<TAB>text`` lines; a first line naming an id and a text column is a header."""
    first = True
    for number, line in lines:
        if not line.strip():
            continue
        parts = line.split("\t")
        header = first and len(parts) >= 2 and (parts[0].strip().lower(), parts[1].strip().lower()) in _HEADERS
        first = False
        if header:
            continue
        if len(parts) < 2 or not parts[0].strip():
            raise InputError(
                "expected 'id<TAB>text' (or JSONL with _id and text) on every line",
                source=source,
                line=number,
                text=line,
            )
        yield _Place(source, line=number), (parts[0].strip(), "\t".join(parts[1:]).strip())

"""Reading the texts a judge needs: a corpus and queries in BEIR JSONL, JSON or TSV.

Accepted forms, for both files:

- JSONL, one object per line with an id (``_id``, ``id``, ``doc_id``/``query_id``, ...) and
  ``text`` (and, optionally, ``title``: the document text becomes "title\\n\\ntext");
- JSON: ``{id: "text"}``, ``{id: {"title": ..., "text": ...}}`` or a list of such objects;
- TSV without a header: ``id<TAB>text`` (MS MARCO ``collection.tsv`` / ``queries.tsv``).

Compressed files are read by content, as everywhere in rankgate.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rankgate.errors import InputError
from rankgate.io.source import read_bytes

ID_KEYS = ("_id", "id", "doc_id", "docid", "query_id", "qid", "query-id", "corpus-id", "pid")
TEXT_KEYS = ("text", "contents", "body", "query", "passage")


def read_texts(path: str | os.PathLike[str], *, what: str = "document") -> dict[str, str]:
    """``{id: text}`` from a corpus or queries file (see the module docstring for the forms).

    Args:
        path: the file.
        what: "document" or "query", used in error messages.

    Raises:
        InputError: naming the file and line of a malformed entry, a missing id or text,
            or an id given twice.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "corpus.jsonl"
    >>> _ = f.write_text('{"_id": "d1", "title": "Tea", "text": "Brew at 80 C."}\\n')
    >>> read_texts(f)
    {'d1': 'Tea\\n\\nBrew at 80 C.'}
    """
    source = str(path)
    data = read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start}): {e.reason}", source=source) from None
    if not text.strip():
        raise InputError(f"file is empty: expected one {what} per line", source=source)
    stripped = text.lstrip()
    out: dict[str, str] = {}
    if stripped.startswith("{") and _is_jsonl(stripped):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputError(f"invalid JSON: {e.msg}", source=source, line=number, text=line) from None
                _add(out, row, source, number, what)
        return out
    if stripped.startswith(("{", "[")):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg}", source=source, line=e.lineno) from None
        if isinstance(obj, dict):
            for key, value in obj.items():
                entry = value if isinstance(value, dict) else {"text": value}
                _add(out, {"_id": key, **entry}, source, None, what)
        elif isinstance(obj, list):
            for i, row in enumerate(obj):
                _add(out, row, source, None, what, item=i)
        return out
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.rstrip("\r").split("\t")
        if len(parts) < 2 or not parts[0].strip():
            raise InputError(
                "expected 'id<TAB>text' (or JSONL with _id and text) on every line",
                source=source,
                line=number,
                text=line,
            )
        _put(out, parts[0].strip(), "\t".join(parts[1:]).strip(), source, number, what)
    return out


def _is_jsonl(stripped: str) -> bool:
    first = stripped.split("\n", 1)[0].strip()
    if "\n" not in stripped.strip():
        # One line: a JSONL file of one row, unless it is a {id: text} mapping.
        try:
            obj = json.loads(first)
        except json.JSONDecodeError:
            return True
        return isinstance(obj, dict) and any(k in obj for k in ID_KEYS)
    return first.endswith("}")


def _add(out: dict[str, str], row: Any, source: str, line: int | None, what: str, item: int | None = None) -> None:
    where = f"item {item}: " if item is not None else ""
    if not isinstance(row, dict):
        raise InputError(f"{where}expected a JSON object with an id and text", source=source, line=line, text=repr(row))
    key = next((k for k in ID_KEYS if k in row and row[k] is not None), None)
    if key is None:
        raise InputError(
            f"{where}no {what} id (expected one of {', '.join(ID_KEYS[:4])})", source=source, line=line, text=repr(row)
        )
    body = next((row[k] for k in TEXT_KEYS if isinstance(row.get(k), str)), None)
    title = row.get("title")
    if body is None and not isinstance(title, str):
        raise InputError(f"{where}{what} {row[key]!r} has no text", source=source, line=line, text=repr(row))
    parts = [p.strip() for p in (title if isinstance(title, str) else "", body or "") if p and p.strip()]
    _put(out, str(row[key]), "\n\n".join(parts), source, line, what)


def _put(out: dict[str, str], key: str, value: str, source: str, line: int | None, what: str) -> None:
    if key in out:
        raise InputError(f"{what} id {key!r} appears twice", source=source, line=line)
    out[key] = value

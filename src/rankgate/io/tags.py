"""Query metadata: tags per query (topic, tier, language...) for per-group breakdowns.

Accepted files: JSONL with an id (``_id``, ``qid``, ``query_id``, ``query-id``) and either a
``tags`` object or plain fields (``text``/``title`` are not tags); CSV/TSV with a header whose
first id-like column names the query and whose other columns are tags.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from rankgate.errors import InputError
from rankgate.io.rows import Line, json_document, json_lines, json_shape, numbered_lines, peek, table_rows

ID_KEYS = ("_id", "qid", "query_id", "query-id", "id")
NOT_TAGS = {"text", "title", "query", "metadata"}


def read_query_tags(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """``{qid: {tag: value}}`` from a JSONL, JSON, CSV or TSV file."""
    source = str(path)
    found, lines = peek(numbered_lines(path, errors="replace"))
    if not found:
        raise InputError("file is empty: expected one query's tags per line", source=source)
    shape, lines = json_shape(lines, ID_KEYS, source)
    if shape is None:
        return _from_table(lines, source)
    if shape == "jsonl":
        return _from_rows(json_lines(lines, source), source)
    obj = json_document(lines, source)
    if isinstance(obj, dict) and all(isinstance(t, dict) or t is None for t in obj.values()):
        return {str(q): {str(k): str(v) for k, v in (t or {}).items()} for q, t in obj.items()}  # {qid: tags}
    return _from_rows([(1, obj)] if isinstance(obj, dict) else [(i + 1, r) for i, r in enumerate(obj)], source)


def _add(
    out: dict[str, dict[str, str]], where: dict[str, int], qid: str, tags: dict[str, str], at: tuple[str, int]
) -> None:
    """Record one query's tags; a query given twice is an error naming both places (not "keep the last")."""
    source, number = at
    if qid in where:
        raise InputError(f"query {qid!r} is given twice (first on line {where[qid]})", source=source, line=number)
    where[qid] = number
    out[qid] = tags


def _query_id(row: dict[str, Any], source: str, line: int) -> str:
    for key in ID_KEYS:
        if key in row and row[key] is not None:
            return str(row[key])
    raise InputError(f"no query id (expected one of {', '.join(ID_KEYS)})", source=source, line=line)


def _from_rows(rows: Iterable[tuple[int, Any]], source: str) -> dict[str, dict[str, str]]:
    """Tags of JSON objects (a JSONL line or a list item each): a ``tags`` object, else the plain fields."""
    out: dict[str, dict[str, str]] = {}
    where: dict[str, int] = {}
    for number, row in rows:
        if not isinstance(row, dict):
            raise InputError("expected a JSON object", source=source, line=number)
        qid = _query_id(row, source, number)
        raw = row.get("tags")
        if not isinstance(raw, dict):
            raw = {k: v for k, v in row.items() if k not in ID_KEYS and k not in NOT_TAGS and k != "tags"}
        tags = {str(k): str(v) for k, v in raw.items() if v is not None and not isinstance(v, dict | list)}
        _add(out, where, qid, tags, (source, number))
    return out


def _from_table(lines: Iterable[Line], source: str) -> dict[str, dict[str, str]]:
    header, rows = table_rows(lines, source)
    fields = [f.strip() for f in header]
    id_field = next((f for f in fields if f in ID_KEYS), None)
    if id_field is None:
        raise InputError(f"no query id column (expected one of {', '.join(ID_KEYS)})", source=source, line=1)
    out: dict[str, dict[str, str]] = {}
    where: dict[str, int] = {}
    for number, row in rows:
        if None in row:  # csv puts fields past the header's under None
            raise InputError(f"more fields than the header's {len(header)}", source=source, line=number)
        clean = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        qid = clean.get(id_field, "")
        if not qid:
            raise InputError("missing query id", source=source, line=number)
        _add(
            out,
            where,
            qid,
            {k: v for k, v in clean.items() if k != id_field and k not in NOT_TAGS and v},
            (source, number),
        )
    return out

"""Query metadata: tags per query (topic, tier, language...) for per-group breakdowns.

Accepted files: JSONL with an id (``_id``, ``qid``, ``query_id``, ``query-id``) and either a
``tags`` object or plain fields (``text``/``title`` are not tags); CSV/TSV with a header whose
first id-like column names the query and whose other columns are tags.
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any

from rankgate.errors import InputError
from rankgate.io.source import read_bytes

ID_KEYS = ("_id", "qid", "query_id", "query-id", "id")
NOT_TAGS = {"text", "title", "query", "metadata"}


def read_query_tags(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """``{qid: {tag: value}}`` from a JSONL, JSON, CSV or TSV file."""
    source = str(path)
    text = read_bytes(path).decode("utf-8-sig", errors="replace")
    if not text.strip():
        raise InputError("file is empty: expected one query's tags per line", source=source)
    first = text.lstrip()[:1]
    if first in "{[":
        return _from_json(text, source)
    dialect = "\t" if "\t" in text.split("\n", 1)[0] else ","
    return _from_table(text, dialect, source)


def _query_id(row: dict[str, Any], source: str, line: int) -> str:
    for key in ID_KEYS:
        if key in row and row[key] is not None:
            return str(row[key])
    raise InputError(f"no query id (expected one of {', '.join(ID_KEYS)})", source=source, line=line)


def _from_json(text: str, source: str) -> dict[str, dict[str, str]]:
    rows: list[tuple[int, Any]] = []
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip()):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg}", source=source, line=e.lineno) from None
        if isinstance(obj, dict) and all(isinstance(t, dict) or t is None for t in obj.values()):
            return {str(q): {str(k): str(v) for k, v in (t or {}).items()} for q, t in obj.items()}  # {qid: tags}
        rows = [(1, obj)] if isinstance(obj, dict) else [(i + 1, r) for i, r in enumerate(obj)]  # one row, or a list
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except json.JSONDecodeError as e:
                    raise InputError(f"invalid JSON: {e.msg}", source=source, line=number, text=line) from None
    out: dict[str, dict[str, str]] = {}
    for number, row in rows:
        if not isinstance(row, dict):
            raise InputError("expected a JSON object", source=source, line=number)
        qid = _query_id(row, source, number)
        raw = row.get("tags")
        if not isinstance(raw, dict):
            raw = {k: v for k, v in row.items() if k not in ID_KEYS and k not in NOT_TAGS and k != "tags"}
        out[qid] = {str(k): str(v) for k, v in raw.items() if v is not None and not isinstance(v, dict | list)}
    return out


def _from_table(text: str, delimiter: str, source: str) -> dict[str, dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    fields = [f.strip() for f in reader.fieldnames or []]
    id_field = next((f for f in fields if f in ID_KEYS), None)
    if id_field is None:
        raise InputError(f"no query id column (expected one of {', '.join(ID_KEYS)})", source=source, line=1)
    out: dict[str, dict[str, str]] = {}
    for number, row in enumerate(reader, start=2):
        clean = {(k or "").strip(): (v or "").strip() for k, v in row.items()}
        qid = clean.get(id_field, "")
        if not qid:
            raise InputError("missing query id", source=source, line=number)
        out[qid] = {k: v for k, v in clean.items() if k != id_field and k not in NOT_TAGS and v}
    return out

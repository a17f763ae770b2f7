"""Labeled retrieval datasets: the BEIR layout, a simple JSON layout, and the built-in demo.

BEIR layout (a folder)::

    corpus.jsonl        {"_id": "d1", "title": "...", "text": "..."} per line
    queries.jsonl       {"_id": "q1", "text": "..."} per line
    qrels/test.tsv      query-id <TAB> corpus-id <TAB> score, with a header line

Simple JSON layout (a folder)::

    corpus.json         ["text", ...] (ids are the positions "0", "1", ...), or {"d1": "text", ...},
                        or a list / dict of {"id": ..., "title": ..., "text": ...} objects
    queries.json        the same shapes
    ground_truth.json   {"q1": ["d1", "d7"], ...} (relevant ids) or {"q1": {"d1": 2, ...}} (grades)

``demo`` is the synthetic collection shipped in ``rankgate/data/demo``. Only queries with
judgments are searched (as BEIR does); a document's text is its title and body joined by a space.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.errors import InputError

ID_KEYS = ("_id", "id", "doc_id", "docid", "query_id", "qid")
TEXT_KEYS = ("text", "contents", "content", "body", "query")


@dataclass
class Dataset:
    """A corpus, its queries and their relevance judgments.

    Attributes:
        name: short name (folder name, or ``demo``).
        source: where it was read from.
        layout: ``beir``, ``json`` or ``demo``.
        doc_ids: document ids, in file order.
        doc_texts: ``title + " " + text`` of each document (what retrievers index).
        query_ids: ids of the judged queries that have text, in qrels order.
        query_texts: their text.
        qrels: the judgments.
        split: the qrels split read (BEIR), if any.
        warnings: oddities noticed while reading (judged queries without text, ...).
    """

    name: str
    source: str
    layout: str
    doc_ids: list[str]
    doc_texts: list[str]
    query_ids: list[str]
    query_texts: list[str]
    qrels: Qrels
    split: str | None = None
    warnings: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """Size and provenance, for the benchmark's JSON output."""
        return {
            "name": self.name,
            "source": self.source,
            "layout": self.layout,
            "split": self.split,
            "documents": len(self.doc_ids),
            "queries": len(self.query_ids),
            "judgments": self.qrels.num_rows,
        }


def load_dataset(spec: str | os.PathLike[str], *, split: str = "test") -> Dataset:
    """Read a dataset folder (BEIR or simple JSON layout) or the word ``demo``.

    Args:
        spec: a folder, or ``"demo"`` for the built-in collection.
        split: the BEIR qrels split (``qrels/<split>.tsv``).

    Raises:
        InputError: the folder or a file is missing or malformed (the message names file and line).

    >>> ds = load_dataset("demo")
    >>> len(ds.doc_ids), len(ds.query_ids), ds.qrels.num_rows
    (200, 63, 676)
    """
    if str(spec) == "demo":
        from rankgate.data import demo_dir

        folder = demo_dir()
        return _assemble(
            "demo",
            str(folder),
            "demo",
            _read_jsonl_records(folder / "corpus.jsonl", kind="document"),
            _read_jsonl_records(folder / "queries.jsonl", kind="query"),
            _read_qrels(folder / "qrels.txt"),
            None,
        )
    folder = Path(spec)
    if not folder.exists():
        raise InputError(
            "dataset folder not found (give a folder in BEIR or simple JSON layout, or 'demo')", source=str(folder)
        )
    if not folder.is_dir():
        raise InputError(
            "a dataset is a folder (BEIR: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv)", source=str(folder)
        )
    corpus = _first_existing(folder, ("corpus.jsonl", "corpus.jsonl.gz"))
    if corpus is not None:
        qrels_path = _beir_qrels(folder, split)
        return _assemble(
            folder.name,
            str(folder),
            "beir",
            _read_jsonl_records(corpus, kind="document"),
            _read_jsonl_records(_required(folder, ("queries.jsonl", "queries.jsonl.gz")), kind="query"),
            _read_qrels(qrels_path),
            split if qrels_path.parent.name == "qrels" else None,
        )
    corpus = _first_existing(folder, ("corpus.json",))
    if corpus is not None:
        return _assemble(
            folder.name,
            str(folder),
            "json",
            _read_json_records(corpus, kind="document"),
            _read_json_records(_required(folder, ("queries.json",)), kind="query"),
            _read_qrels(_required(folder, ("ground_truth.json",))),
            None,
        )
    raise InputError(
        "no corpus.jsonl (BEIR layout) or corpus.json (simple JSON layout) in this folder", source=str(folder)
    )


# -- assembling -------------------------------------------------------------------------------
def _assemble(
    name: str,
    source: str,
    layout: str,
    docs: list[tuple[str, str]],
    queries: list[tuple[str, str]],
    qrels: Qrels,
    split: str | None,
) -> Dataset:
    if not docs:
        raise InputError("the corpus holds no documents", source=source)
    if qrels.num_rows == 0:
        raise InputError("the judgments hold no (query, document) pair", source=source)
    warnings: list[str] = []
    query_text = dict(queries)
    judged = qrels.query_ids.to_pylist()
    missing = [q for q in judged if q not in query_text]
    if missing:
        warnings.append(
            f"{len(missing)} judged queries have no text in the queries file (e.g. {missing[0]!r}); "
            "they are not searched and score 0"
        )
    doc_set = {d for d, _ in docs}
    unknown = sorted({d for d in qrels.doc_ids.to_pylist() if d not in doc_set})
    if unknown:
        warnings.append(
            f"{len(unknown)} judged documents are not in the corpus (e.g. {unknown[0]!r}); they can never be retrieved"
        )
    ids = [q for q in judged if q in query_text]
    if not ids:
        raise InputError(
            f"no judged query has text in the queries file (judged ids look like {judged[0]!r}, "
            f"query ids like {queries[0][0] if queries else None!r})",
            source=source,
        )
    return Dataset(
        name=name,
        source=source,
        layout=layout,
        doc_ids=[d for d, _ in docs],
        doc_texts=[t for _, t in docs],
        query_ids=ids,
        query_texts=[query_text[q] for q in ids],
        qrels=qrels,
        split=split,
        warnings=warnings,
    )


def _read_qrels(path: Path) -> Qrels:
    from rankgate.io import read_qrels

    return read_qrels(path)


def _first_existing(folder: Path, names: tuple[str, ...]) -> Path | None:
    return next((folder / n for n in names if (folder / n).is_file()), None)


def _required(folder: Path, names: tuple[str, ...]) -> Path:
    found = _first_existing(folder, names)
    if found is None:
        raise InputError(f"missing {names[0]}", source=str(folder))
    return found


def _beir_qrels(folder: Path, split: str) -> Path:
    qrels_dir = folder / "qrels"
    if qrels_dir.is_dir():
        path = qrels_dir / f"{split}.tsv"
        if path.is_file():
            return path
        have = sorted(p.stem for p in qrels_dir.glob("*.tsv"))
        raise InputError(
            f"no qrels for split {split!r}" + (f"; splits here: {', '.join(have)} (pass --split)" if have else ""),
            source=str(qrels_dir),
        )
    found = _first_existing(folder, ("qrels.tsv", "qrels.txt"))
    if found is None:
        raise InputError(f"missing qrels/{split}.tsv (BEIR layout)", source=str(folder))
    return found


# -- records ----------------------------------------------------------------------------------
def _read_jsonl_records(path: Path, *, kind: str) -> list[tuple[str, str]]:
    from rankgate.io.source import read_bytes

    data = read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        bad_line = data[: e.start].count(b"\n") + 1
        raise InputError("not UTF-8 text", source=str(path), line=bad_line) from None
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"not a JSON object ({e.msg})", source=str(path), line=number, text=line) from None
        record = _record(row, kind, str(path), number, line)
        _check_unique(record[0], seen, kind, str(path), number)
        out.append(record)
    return out


def _read_json_records(path: Path, *, kind: str) -> list[tuple[str, str]]:
    from rankgate.io.source import read_bytes

    data = read_bytes(path)
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", source=str(path)) from None
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON ({e.msg}, column {e.colno})", source=str(path), line=e.lineno) from None
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                record = (str(i), item)
            else:
                record = _record(item, kind, str(path), None, repr(item), where=f"item {i}")
            _check_unique(record[0], seen, kind, str(path), i, unit="item")
            out.append(record)
        return out
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str):
                out.append((str(key), item))
            elif isinstance(item, dict):
                out.append(
                    (
                        str(key),
                        _record({"_id": key, **item}, kind, str(path), None, repr(item), where=f"key {key!r}")[1],
                    )
                )
            else:
                raise InputError(
                    f"{kind} {key!r}: expected a text or an object with a 'text' field",
                    source=str(path),
                    text=repr(item),
                )
        return out
    raise InputError(
        f"expected a list of {kind} texts or objects, or a {{id: text}} mapping",
        source=str(path),
        text=repr(value)[:80],
    )


def _record(row: Any, kind: str, source: str, line: int | None, shown: str, where: str = "") -> tuple[str, str]:
    prefix = f"{where}: " if where else ""
    if not isinstance(row, dict):
        raise InputError(f"{prefix}expected a JSON object with '_id' and 'text'", source=source, line=line, text=shown)
    key = next((k for k in ID_KEYS if k in row), None)
    if key is None or row[key] is None or isinstance(row[key], dict | list | bool):
        raise InputError(f"{prefix}{kind} has no '_id' (or 'id') field", source=source, line=line, text=shown)
    rid = str(row[key]).strip()
    if not rid:
        raise InputError(f"{prefix}{kind} id is empty", source=source, line=line, text=shown)
    text_key = next((k for k in TEXT_KEYS if k in row), None)
    body = row.get(text_key, "") if text_key else ""
    title = row.get("title", "") if kind == "document" else ""
    for name, value in (("text", body), ("title", title)):
        if value is not None and not isinstance(value, str):
            raise InputError(f"{prefix}{kind} {rid!r}: '{name}' must be a string", source=source, line=line, text=shown)
    joined = " ".join(part for part in ((title or "").strip(), (body or "").strip()) if part)
    if text_key is None and not title:
        raise InputError(f"{prefix}{kind} {rid!r} has no 'text' field", source=source, line=line, text=shown)
    return rid, joined


def _check_unique(rid: str, seen: dict[str, int], kind: str, source: str, where: int, unit: str = "line") -> None:
    """Stop at a repeated id, naming both places (``unit``: "line" of a JSONL file, "item" of a list)."""
    if rid in seen:
        if unit == "line":
            raise InputError(f"duplicate {kind} id {rid!r} (first on line {seen[rid]})", source=source, line=where)
        raise InputError(f"item {where}: duplicate {kind} id {rid!r} (first at item {seen[rid]})", source=source)
    seen[rid] = where

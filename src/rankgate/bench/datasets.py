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

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rankgate.core.qrels import Qrels
from rankgate.errors import InputError
from rankgate.io.rows import JsonWording
from rankgate.io.texts import iter_texts


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
            _records(folder / "corpus.jsonl", kind="document", format="jsonl"),
            _records(folder / "queries.jsonl", kind="query", format="jsonl"),
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
            _records(corpus, kind="document", format="jsonl"),
            _records(_required(folder, ("queries.jsonl", "queries.jsonl.gz")), kind="query", format="jsonl"),
            _read_qrels(qrels_path),
            split if qrels_path.parent.name == "qrels" else None,
        )
    corpus = _first_existing(folder, ("corpus.json",))
    if corpus is not None:
        return _assemble(
            folder.name,
            str(folder),
            "json",
            _records(corpus, kind="document", format="json"),
            _records(_required(folder, ("queries.json",)), kind="query", format="json"),
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
# Messages the BEIR and JSON layouts have always given for a syntax error.
_WORDING = JsonWording(line="not a JSON object ({msg})", document="not valid JSON ({msg}, column {col})")


def _records(path: Path, *, kind: str, format: str) -> list[tuple[str, str]]:
    """``(id, text)`` of a corpus or queries file; a document's title and text joined by a space."""
    return list(iter_texts(path, what=kind, format=format, joiner=" ", wording=_WORDING))

"""What the dashboard may know besides the store: query texts and tags, documents, judgments, runs.

The store keeps scores, not rankings or texts. Given the files (``rankgate serve --queries
--corpus --qrels --tags --run NAME=PATH``), the dashboard shows query text beside ids, a
per-tag table, and on the compare page the two rankings of a query side by side with their
judged grades and document text. A run is matched to a stored result by the result's id
(``--run 17=path``) or its system name (``--run dense=path``). Everything is read once, at start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rankgate.errors import InputError

DEPTH = 10  # documents shown per ranking
MAX_TEXT = 600  # characters of a document's text shown


@dataclass
class Sources:
    """Texts, tags, grades and the top of each run's rankings."""

    queries: dict[str, str] = field(default_factory=dict)
    corpus: dict[str, str] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    grades: dict[str, dict[str, int]] = field(default_factory=dict)
    rankings: dict[str, dict[str, list[tuple[str, float]]]] = field(default_factory=dict)  # run key -> qid -> top

    @classmethod
    def load(
        cls,
        *,
        queries: str | os.PathLike[str] | None = None,
        corpus: str | os.PathLike[str] | None = None,
        tags: str | os.PathLike[str] | None = None,
        qrels: str | os.PathLike[str] | None = None,
        runs: Mapping[str, str | os.PathLike[str]] | None = None,
        depth: int = DEPTH,
    ) -> Sources:
        """Read the files given (each optional).

        Raises:
            InputError: a file that cannot be read, naming it and the line.
        """
        from rankgate.io import read_qrels, read_run
        from rankgate.io.tags import read_query_tags
        from rankgate.io.texts import read_corpus, read_queries

        out = cls()
        if queries is not None:
            out.queries = read_queries(queries)
        if corpus is not None:
            out.corpus = read_corpus(corpus)
        if tags is not None:
            out.tags = read_query_tags(tags)
        if qrels is not None:
            out.grades = {q: {d: int(g) for d, g in docs.items()} for q, docs in read_qrels(qrels).to_dict().items()}
        for key, path in (runs or {}).items():
            if not str(key).strip():
                raise InputError(f"--run needs NAME=PATH or ID=PATH. Got {str(path)!r} without a name.")
            out.rankings[str(key)] = _top(read_run(path), depth)
        return out

    def ranking_key(self, rid: int, name: str) -> str | None:
        """The run that holds the rankings of stored result ``rid`` named ``name``, if given."""
        for key in (str(rid), name):
            if key in self.rankings:
                return key
        return None

    def ranking(self, rid: int, name: str, qid: str) -> list[dict[str, Any]] | None:
        """The top documents of ``qid`` in that run, with grade and text; None when the run is unknown."""
        key = self.ranking_key(rid, name)
        if key is None:
            return None
        judged = self.grades.get(qid, {})
        return [
            {
                "rank": rank,
                "doc": doc,
                "score": score,
                "grade": judged.get(doc),
                "text": _cut(self.corpus.get(doc)),
            }
            for rank, (doc, score) in enumerate(self.rankings[key].get(qid, []), start=1)
        ]


def _top(run: Any, depth: int) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for qid, doc, rank, score in run.iter_rows():
        if rank <= depth:
            out.setdefault(qid, []).append((doc, score))
    return out


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_TEXT:
        return text
    return text[: MAX_TEXT - 3] + "..."

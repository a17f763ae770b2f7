"""Split long documents into overlapping passages, and fold passage rankings back to documents.

Passages are windows of ``size`` whitespace-separated words, each starting ``size - overlap``
words after the previous one; the last window ends at the document's end. Passage ids are
``docid#0``, ``docid#1``, ... A document no longer than ``size`` words is one passage.

Aggregation turns a passage ranking into a document ranking:

- ``max`` (MaxP): a document scores its best passage's score (the same folding as
  `rankgate.core.chunks`, which ``--chunk-agg first`` applies to a run of chunk ids);
- ``first`` (FirstP): a document scores its first passage's (``#0``) score, other passages are
  ignored.

>>> spec = ChunkSpec(size=3, overlap=1)
>>> p = chunk_corpus(["d1"], ["a b c d e f"], spec)
>>> p.ids, p.texts
(['d1#0', 'd1#1', 'd1#2'], ['a b c', 'c d e', 'e f'])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankgate.bench.retrievers.base import Hits
from rankgate.core.chunks import first_occurrences
from rankgate.errors import ConfigError

AGGREGATIONS: tuple[str, ...] = ("max", "first")


@dataclass(frozen=True)
class ChunkSpec:
    """How to cut documents: ``size`` words per passage, ``overlap`` words shared by neighbours."""

    size: int
    overlap: int = 0
    aggregate: str = "max"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise ConfigError(f"must be an int >= 1. Got {self.size!r} instead.", key_path="chunking.size")
        if isinstance(self.overlap, bool) or not isinstance(self.overlap, int) or not 0 <= self.overlap < self.size:
            raise ConfigError(
                f"must be an int >= 0 and smaller than the size ({self.size}). Got {self.overlap!r} instead.",
                key_path="chunking.overlap",
            )
        if self.aggregate not in AGGREGATIONS:
            raise ConfigError(
                f"must be one of {', '.join(AGGREGATIONS)}. Got {self.aggregate!r} instead.",
                key_path="chunking.aggregate",
            )

    def to_dict(self) -> dict[str, object]:
        return {"size": self.size, "overlap": self.overlap, "aggregate": self.aggregate, "unit": "words"}


@dataclass
class Passages:
    """The passages of a corpus: ids, texts, and for each passage its document and position."""

    ids: list[str]
    texts: list[str]
    doc_index: np.ndarray  # passage -> index of its document
    position: np.ndarray  # passage -> 0 for the first passage of its document, 1, 2, ...
    num_docs: int

    @property
    def max_per_doc(self) -> int:
        return int(self.position.max()) + 1 if len(self.position) else 0


def chunk_text(text: str, size: int, overlap: int) -> list[str]:
    """Windows of ``size`` words with ``overlap`` words shared; at least one (maybe empty) passage."""
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)]
    step = size - overlap
    out = []
    start = 0
    while True:
        out.append(" ".join(words[start : start + size]))
        if start + size >= len(words):
            return out
        start += step


def chunk_corpus(doc_ids: list[str], texts: list[str], spec: ChunkSpec) -> Passages:
    """Cut every document into passages (ids ``docid#i``)."""
    ids: list[str] = []
    out: list[str] = []
    doc_index: list[int] = []
    position: list[int] = []
    for d, (did, text) in enumerate(zip(doc_ids, texts, strict=True)):
        for i, passage in enumerate(chunk_text(text, spec.size, spec.overlap)):
            ids.append(f"{did}#{i}")
            out.append(passage)
            doc_index.append(d)
            position.append(i)
    return Passages(
        ids=ids,
        texts=out,
        doc_index=np.asarray(doc_index, dtype=np.int64),
        position=np.asarray(position, dtype=np.int64),
        num_docs=len(doc_ids),
    )


def passage_depth(k: int, passages: Passages) -> int:
    """How many passages to retrieve so that MaxP usually still yields ``k`` documents."""
    return min(len(passages.ids), k * max(2, passages.max_per_doc))


def aggregate_hits(hits: Hits, passages: Passages, k: int, how: str) -> Hits:
    """Fold a passage ranking (scores descending) into a ranking of at most ``k`` documents.

    >>> p = chunk_corpus(["a", "b"], ["x y z", "u v"], ChunkSpec(size=2, overlap=0))
    >>> p.ids
    ['a#0', 'a#1', 'b#0']
    >>> h = Hits(np.array([[1, 2, 0]]), np.array([[0.9, 0.5, 0.1]]))
    >>> aggregate_hits(h, p, 2, "max").ids.tolist(), aggregate_hits(h, p, 2, "first").ids.tolist()
    ([[0, 1]], [[1, 0]])
    """
    if how not in AGGREGATIONS:
        raise ConfigError(
            f"must be one of {', '.join(AGGREGATIONS)}. Got {how!r} instead.", key_path="chunking.aggregate"
        )
    m = hits.ids.shape[0]
    out_ids = np.full((m, k), -1, dtype=np.int64)
    out_scores = np.full((m, k), -np.inf, dtype=np.float64)
    row, col = np.nonzero(hits.ids >= 0)  # row-major: each row's passages in ranking order
    pid = hits.ids[row, col]
    score = hits.scores[row, col]
    if how == "first":
        keep = np.flatnonzero(passages.position[pid] == 0)
    else:  # MaxP: the document's best passage, as `rankgate --chunk-agg first` folds a run of chunks
        keep = first_occurrences(row, passages.doc_index[pid])[0]
    row, docs, score = row[keep], passages.doc_index[pid[keep]], score[keep]
    starts = np.searchsorted(row, np.arange(m))
    place = np.arange(len(row)) - starts[row]  # position of each kept document in its row
    shown = place < k
    out_ids[row[shown], place[shown]] = docs[shown]
    out_scores[row[shown], place[shown]] = score[shown]
    return Hits(out_ids, out_scores)

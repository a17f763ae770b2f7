"""What every retriever provides, and the ranked hits it returns.

A retriever works in four steps, so that the harness can time each one apart:

1. ``prepare(texts)``: read the corpus once (BM25: tokenize and index; dense: encode).
2. ``build(index)``: build the vector index (dense) for one index configuration; BM25 has none.
3. ``encode_queries(texts, cached=...)``: turn query texts into what ``search`` takes
   (tokens, vectors); ``cached=False`` bypasses the embedding cache, for latency probes.
4. ``search(encoded, k)``: the top ``k`` documents of every query, as `Hits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rankgate.bench.progress import Progress


@dataclass
class Hits:
    """Top-k results of a batch of queries: document positions and scores, best first.

    Attributes:
        ids: int64 array (queries, k): positions in the indexed corpus; -1 pads missing results.
        scores: float array (queries, k); padding is -inf.
    """

    ids: np.ndarray
    scores: np.ndarray

    @property
    def num_queries(self) -> int:
        return int(self.ids.shape[0])

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Valid (id, score) arrays of query ``i``."""
        keep = self.ids[i] >= 0
        return self.ids[i][keep], self.scores[i][keep]

    @classmethod
    def from_lists(cls, rows: Sequence[tuple[Sequence[int], Sequence[float]]], k: int) -> Hits:
        """Pack per-query (ids, scores) lists (already best first) into padded arrays."""
        ids = np.full((len(rows), k), -1, dtype=np.int64)
        scores = np.full((len(rows), k), -np.inf, dtype=np.float64)
        for i, (row_ids, row_scores) in enumerate(rows):
            n = min(k, len(row_ids))
            ids[i, :n] = np.asarray(row_ids[:n], dtype=np.int64)
            scores[i, :n] = np.asarray(row_scores[:n], dtype=np.float64)
        return cls(ids, scores)


@dataclass
class StageInfo:
    """Cost of a preparation or build step.

    Attributes:
        seconds: wall time.
        bytes: size of what was built (index bytes), when it has one.
        details: anything else worth reporting (texts encoded, cache hits, resolved parameters).
    """

    seconds: float = 0.0
    bytes: int | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __add__(self, other: StageInfo) -> StageInfo:
        total = None if self.bytes is None and other.bytes is None else (self.bytes or 0) + (other.bytes or 0)
        return StageInfo(self.seconds + other.seconds, total, {**self.details, **other.details})


@runtime_checkable
class Retriever(Protocol):
    """A first-stage or composite retriever (see the module docstring for the four steps)."""

    name: str

    @property
    def uses_index(self) -> bool:
        """True when the index axis of the benchmark matrix applies (a dense part)."""
        ...

    def prepare(self, texts: Sequence[str], progress: Progress) -> StageInfo: ...

    def build(self, index: Any, progress: Progress) -> StageInfo: ...

    def encode_queries(self, texts: Sequence[str], *, cached: bool = True) -> Any: ...

    def search(self, encoded: Any, k: int) -> Hits: ...

    def describe(self) -> dict[str, Any]:
        """Kind, model and parameters, for the JSON output."""
        ...

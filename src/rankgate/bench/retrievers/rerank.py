"""Second-stage re-ranking with a cross-encoder that scores (query, document) pairs.

The `CrossEncoderScorer` protocol has a sentence-transformers adapter (a local model folder;
nothing is downloaded) and, in the tests, a small fake scorer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rankgate.bench._deps import require
from rankgate.bench.progress import Progress
from rankgate.bench.retrievers.base import Hits, Retriever, StageInfo
from rankgate.errors import BackendError


@runtime_checkable
class CrossEncoderScorer(Protocol):
    """Scores (query, document) pairs; higher is more relevant."""

    @property
    def identity(self) -> str: ...

    def score(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray: ...


class SentenceTransformersCrossEncoder:
    """A sentence-transformers ``CrossEncoder`` from a local folder.

    Raises:
        BackendError: the folder does not exist or does not hold a loadable model.
    """

    def __init__(self, model: str, *, device: str = "cpu") -> None:
        from rankgate.bench.encoders import model_fingerprint, quiet_transformers, resolve_model

        self.path = resolve_model(model)
        st = require("sentence_transformers")
        quiet_transformers()
        try:
            self.model: Any = st.CrossEncoder(str(self.path), device=device, local_files_only=True)
        except Exception as e:
            raise BackendError(f"{self.path}: cannot load the cross-encoder ({type(e).__name__}: {e})") from None
        self._identity = f"{self.path.name}@{model_fingerprint(self.path)}"

    @property
    def identity(self) -> str:
        return self._identity

    def score(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        try:
            scores = self.model.predict(list(pairs), batch_size=batch_size, show_progress_bar=False)
        except Exception as e:
            raise BackendError(f"{self.path}: cross-encoder scoring failed ({type(e).__name__}: {e})") from None
        return np.asarray(scores, dtype=np.float32).reshape(len(pairs))


class RerankRetriever:
    """Takes the top ``max(depth, k)`` of a first-stage retriever and re-orders them by a cross-encoder.

    Re-ranked scores that tie keep the first stage's order.

    Args:
        name: label in the results.
        first_stage: the retriever whose candidates are re-ranked.
        scorer: the cross-encoder.
        depth: candidates re-ranked per query (default 100).
        batch_size: pairs per cross-encoder batch.
    """

    def __init__(
        self, name: str, first_stage: Retriever, scorer: CrossEncoderScorer, *, depth: int = 100, batch_size: int = 32
    ) -> None:
        self.name = name
        self.first_stage = first_stage
        self.scorer = scorer
        self.params: dict[str, Any] = {"of": first_stage.name, "depth": depth, "batch_size": batch_size}
        self._texts: Sequence[str] = ()

    @property
    def uses_index(self) -> bool:
        return bool(self.first_stage.uses_index)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "rerank",
            "model": self.scorer.identity,
            "params": dict(self.params),
            "first_stage": self.first_stage.describe(),
        }

    def prepare(self, texts: Sequence[str], progress: Progress) -> StageInfo:
        self._texts = texts
        return self.first_stage.prepare(texts, progress)

    def build(self, index: Any, progress: Progress) -> StageInfo:
        return self.first_stage.build(index, progress)

    def encode_queries(self, texts: Sequence[str], *, cached: bool = True) -> Any:
        return self.first_stage.encode_queries(texts, cached=cached), list(texts)

    def search(self, encoded: Any, k: int) -> Hits:
        first_encoded, queries = encoded
        candidates = self.first_stage.search(first_encoded, max(k, int(self.params["depth"])))
        pairs: list[tuple[str, str]] = []
        spans: list[tuple[int, int]] = []
        for q, query in enumerate(queries):
            ids, _ = candidates.row(q)
            spans.append((len(pairs), len(pairs) + len(ids)))
            pairs.extend((query, self._texts[d]) for d in ids.tolist())
        scores = self.scorer.score(pairs, batch_size=int(self.params["batch_size"]))
        if len(scores) != len(pairs):
            raise BackendError(f"the cross-encoder returned {len(scores)} scores for {len(pairs)} pairs")
        rows = []
        for q, (lo, hi) in enumerate(spans):
            ids, _ = candidates.row(q)
            s = scores[lo:hi].astype(np.float64)
            order = np.argsort(-s, kind="stable")
            rows.append((ids[order].tolist(), s[order].tolist()))
        return Hits.from_lists(rows, k)

"""Dense retrieval: an `Encoder` turns texts into vectors, a `VectorIndex` finds the nearest."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.bench.embedcache import CachedEncoder, EmbeddingCache
from rankgate.bench.encoders import Encoder
from rankgate.bench.indexes import IndexSpec, VectorIndex, make_index
from rankgate.bench.progress import Progress
from rankgate.bench.retrievers.base import Hits, StageInfo
from rankgate.errors import BackendError

if TYPE_CHECKING:
    from rankgate.bench.ray_search import EncoderFactory, RayBench


class DenseRetriever:
    """Bi-encoder retrieval by inner product (cosine when ``normalize``, the default).

    Args:
        name: label in the results.
        encoder: the model (`SentenceTransformerEncoder`, or a fake in tests).
        cache: where embeddings are kept between runs (None: no cache).
        normalize: unit-length vectors, so that inner product is cosine similarity.
        batch_size: texts per encoder batch.
        query_prefix, doc_prefix: text put before queries / documents (e.g. ``"query: "`` for E5).
    """

    uses_index = True

    def __init__(
        self,
        name: str,
        encoder: Encoder,
        *,
        cache: EmbeddingCache | None = None,
        normalize: bool = True,
        batch_size: int = 64,
        query_prefix: str = "",
        doc_prefix: str = "",
    ) -> None:
        self.name = name
        self.raw_encoder = encoder
        self.encoder: Encoder | CachedEncoder = CachedEncoder(encoder, cache) if cache is not None else encoder
        self.params: dict[str, Any] = {
            "normalize": normalize,
            "batch_size": batch_size,
            "query_prefix": query_prefix,
            "doc_prefix": doc_prefix,
        }
        self._texts: Sequence[str] | None = None
        self._prepared = StageInfo()
        self.vectors = np.zeros((0, encoder.dim), dtype=np.float32)
        self.index: VectorIndex | None = None
        self._index_spec: IndexSpec | None = None
        self._built = StageInfo()
        self._exact: VectorIndex | None = None
        self._ray: tuple[RayBench, EncoderFactory, str | None, dict[str, Any]] | None = None

    def use_ray(
        self, engine: RayBench, encoder_factory: EncoderFactory, model: str | None, params: Mapping[str, Any]
    ) -> None:
        """Encode the corpus and search exact indexes on Ray (see `rankgate.bench.ray_search`).

        Args:
            engine: the connected cluster.
            encoder_factory, model, params: how each Ray worker builds its own copy of the encoder
                (the spec's model and parameters; its identity must be this retriever's encoder's).
        """
        self._ray = (engine, encoder_factory, model, dict(params))
        self._texts = None  # prepare again

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "dense",
            "model": self.raw_encoder.identity,
            "dim": self.raw_encoder.dim,
            "params": dict(self.params),
        }

    def prepare(self, texts: Sequence[str], progress: Progress) -> StageInfo:
        """Encode the corpus (through the cache); once per corpus."""
        if self._texts is texts:
            return self._prepared
        hits, misses, spent = _counters(self.encoder)
        start = time.perf_counter()
        prefixed = [self.params["doc_prefix"] + t for t in texts] if self.params["doc_prefix"] else list(texts)
        with progress.task(f"encoding corpus ({self.name})", total=len(prefixed)) as advance:
            if self._ray is not None:
                engine, factory, model, params = self._ray
                self.vectors, counts = engine.encode_corpus(
                    prefixed,
                    encoder=self.raw_encoder,
                    factory=factory,
                    model=model,
                    params=params,
                    normalize=self.params["normalize"],
                    batch_size=self.params["batch_size"],
                    cache=self.encoder.cache if isinstance(self.encoder, CachedEncoder) else None,
                    progress=advance,
                )
            else:
                self.vectors = self.encoder.encode(
                    prefixed, normalize=self.params["normalize"], batch_size=self.params["batch_size"], progress=advance
                )
        seconds = time.perf_counter() - start
        hits2, misses2, spent2 = _counters(self.encoder)
        if self._ray is not None:
            encoded, cached, encode_s = counts["encoded"], counts["cached"], counts["encode_seconds"]
        elif isinstance(self.encoder, CachedEncoder):
            encoded, cached, encode_s = misses2 - misses, hits2 - hits, spent2 - spent
        else:
            encoded, cached, encode_s = len(prefixed), 0, seconds
        self._texts = texts
        self._exact = None
        self.index, self._index_spec = None, None
        self._prepared = StageInfo(
            seconds,
            None,
            {
                "texts": len(prefixed),
                "encoded": encoded,
                "cached": cached,
                "encode_seconds": encode_s,
                "texts_per_s": encoded / encode_s if encoded and encode_s > 0 else None,
                **({"engine": "ray"} if self._ray is not None else {}),
            },
        )
        return self._prepared

    def build(self, index: Any, progress: Progress) -> StageInfo:
        """Build ``index`` (an `IndexSpec`) over the corpus vectors; reuse it when asked again."""
        spec: IndexSpec = index if index is not None else IndexSpec("exact")
        if self._texts is None:
            raise BackendError(f"{self.name}: build() before prepare()")
        if self.index is not None and self._index_spec == spec:
            return self._built
        self.index = None  # free the previous one first
        built = self._make_index(spec)
        start = time.perf_counter()
        built.build(self.vectors, progress)
        seconds = time.perf_counter() - start
        self.index, self._index_spec = built, spec
        details: dict[str, Any] = {"params": dict(built.params)}
        if getattr(built, "warnings", None):
            details["warnings"] = list(built.warnings)  # type: ignore[attr-defined]
        self._built = StageInfo(seconds, built.nbytes, details)
        return self._built

    @property
    def index_params(self) -> dict[str, Any]:
        """Resolved parameters of the current index."""
        return dict(self.index.params) if self.index is not None else {}

    def encode_queries(self, texts: Sequence[str], *, cached: bool = True) -> np.ndarray:
        encoder = self.encoder if cached else self.raw_encoder
        prefixed = [self.params["query_prefix"] + t for t in texts] if self.params["query_prefix"] else list(texts)
        return encoder.encode(prefixed, normalize=self.params["normalize"], batch_size=self.params["batch_size"])

    def search(self, encoded: Any, k: int) -> Hits:
        if self.index is None:
            raise BackendError(f"{self.name}: search() before build()")
        return self.index.search(encoded, k)

    def exact_search(self, encoded: np.ndarray, k: int) -> Hits:
        """Exact search over the same vectors: the reference of neighbor recall."""
        if self._exact is None:
            self._exact = self._make_index(IndexSpec("exact"))
            self._exact.build(self.vectors, Progress())
        return self._exact.search(encoded, k)

    def _make_index(self, spec: IndexSpec) -> VectorIndex:
        """A fresh index; exact ones search on Ray when the retriever uses it (FAISS indexes stay here)."""
        if self._ray is not None and spec.kind == "exact":
            return self._ray[0].exact_index(**spec.params)
        return make_index(spec)


def _counters(encoder: Any) -> tuple[int, int, float]:
    if isinstance(encoder, CachedEncoder):
        return encoder.hits, encoder.misses, encoder.encode_seconds
    return 0, 0, 0.0

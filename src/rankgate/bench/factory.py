"""Turn `RetrieverSpec` values into retriever objects, sharing models between them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rankgate.bench.embedcache import EmbeddingCache
from rankgate.bench.encoders import Encoder
from rankgate.bench.matrix import RetrieverSpec
from rankgate.bench.retrievers.base import Retriever
from rankgate.bench.retrievers.rerank import CrossEncoderScorer
from rankgate.errors import ConfigError

EncoderFactory = Callable[[str | None, Mapping[str, Any]], Encoder]
"""``(model, params) -> Encoder``; ``model`` None means the default MiniLM."""
ScorerFactory = Callable[[str, Mapping[str, Any]], CrossEncoderScorer]
"""``(model, params) -> CrossEncoderScorer``."""


def default_encoder_factory(model: str | None, params: Mapping[str, Any]) -> Encoder:
    """A `SentenceTransformerEncoder` on ``params["device"]`` (cpu by default)."""
    from rankgate.bench.encoders import SentenceTransformerEncoder

    return SentenceTransformerEncoder(
        model, device=params.get("device", "cpu"), max_seq_length=params.get("max_seq_length")
    )


def default_scorer_factory(model: str, params: Mapping[str, Any]) -> CrossEncoderScorer:
    """A sentence-transformers `CrossEncoder` from a local folder."""
    from rankgate.bench.retrievers.rerank import SentenceTransformersCrossEncoder

    return SentenceTransformersCrossEncoder(model, device=params.get("device", "cpu"))


def build_retrievers(
    specs: Sequence[RetrieverSpec],
    *,
    cache: EmbeddingCache | None,
    encoder_factory: EncoderFactory | None = None,
    scorer_factory: ScorerFactory | None = None,
) -> dict[str, Retriever]:
    """One retriever per spec, by name; models with the same settings are loaded once.

    Composite retrievers (hybrid, rerank) get the very objects of the retrievers they name,
    so their corpus is encoded and indexed once.
    """
    make_encoder = encoder_factory or default_encoder_factory
    make_scorer = scorer_factory or default_scorer_factory
    encoders: dict[tuple[Any, ...], Encoder] = {}
    scorers: dict[tuple[Any, ...], CrossEncoderScorer] = {}
    built: dict[str, Retriever] = {}
    pending = list(specs)
    while pending:
        ready = [s for s in pending if all(ref in built for ref in s.of)]
        if not ready:
            names = ", ".join(s.name for s in pending)
            raise ConfigError(f"retrievers refer to each other in a cycle: {names}", key_path=pending[0].key_path)
        for spec in ready:
            built[spec.name] = _make(spec, built, encoders, scorers, cache, make_encoder, make_scorer)
            pending.remove(spec)
    return built


def _make(
    spec: RetrieverSpec,
    built: Mapping[str, Retriever],
    encoders: dict[tuple[Any, ...], Encoder],
    scorers: dict[tuple[Any, ...], CrossEncoderScorer],
    cache: EmbeddingCache | None,
    make_encoder: EncoderFactory,
    make_scorer: ScorerFactory,
) -> Retriever:
    p = dict(spec.params)
    if spec.kind == "bm25":
        from rankgate.bench.retrievers.bm25 import BM25Retriever

        return BM25Retriever(spec.name, **p)
    if spec.kind == "dense":
        from rankgate.bench.retrievers.dense import DenseRetriever

        key = (spec.model, p.get("device", "cpu"), p.get("max_seq_length"))
        if key not in encoders:
            encoders[key] = make_encoder(spec.model, p)
        return DenseRetriever(
            spec.name,
            encoders[key],
            cache=cache,
            normalize=p.get("normalize", True),
            batch_size=p.get("batch_size", 64),
            query_prefix=p.get("query_prefix", ""),
            doc_prefix=p.get("doc_prefix", ""),
        )
    if spec.kind == "hybrid":
        from rankgate.bench.retrievers.fusion import FusionRetriever

        return FusionRetriever(
            spec.name,
            [built[name] for name in spec.of],
            method=p.get("fusion", "rrf"),
            weights=p.get("weights"),
            rrf_k=p.get("rrf_k", 60),
            depth=p.get("depth", 100),
        )
    if spec.kind == "rerank":
        from rankgate.bench.retrievers.rerank import RerankRetriever

        assert spec.model is not None  # checked by the matrix
        scorer_key = (spec.model, p.get("device", "cpu"))
        if scorer_key not in scorers:
            scorers[scorer_key] = make_scorer(spec.model, p)
        return RerankRetriever(
            spec.name,
            built[spec.of[0]],
            scorers[scorer_key],
            depth=p.get("depth", 100),
            batch_size=p.get("batch_size", 32),
        )
    if spec.kind == "live":
        from rankgate.bench.retrievers.live import make_live

        def shared(model: str | None, params: Mapping[str, Any]) -> Encoder:
            key = (model, params.get("device", "cpu"), params.get("max_seq_length"))
            if key not in encoders:
                encoders[key] = make_encoder(model, params)
            return encoders[key]

        return make_live(spec, cache, shared)
    raise ConfigError(f"unknown retriever kind {spec.kind!r}", key_path=spec.key_path)

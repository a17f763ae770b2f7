"""The query encoder of the vector-database adapters: bench's encoders, named as in ``bench``.

A database that searches by vector needs the query encoded by the model that encoded its
documents. The spec names it with the keys of `ENCODER_KEYS`:

- ``model``: ``minilm`` (the default: the bundled all-MiniLM-L6-v2) or a local
  sentence-transformers folder, exactly as ``rankgate bench -r dense:MODEL``;
- ``normalize``: unit-length query vectors (default true, as ``bench`` and ``rankgate index``);
- ``query_prefix``: text put before each query (``"query: "`` for E5 models);
- ``device``, ``max_seq_length``: as in a bench matrix's dense retriever.

The model is loaded by `rankgate.bench.factory.default_encoder_factory` (or the factory a caller
passes, such as bench's, so a model is loaded once), never copied here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankgate.bench.encoders import Encoder
from rankgate.bench.factory import EncoderFactory
from rankgate.bench.threads import encode_threads, torch_threads_set
from rankgate.errors import BackendError
from rankgate.retrieve.base import QueryFailed
from rankgate.retrieve.spec import Keys

ENCODER_KEYS = ("model", "normalize", "query_prefix", "device", "max_seq_length")


class QueryEncoder:
    """Encodes one query at a time, thread-safely, with the settings the database was built with.

    Args:
        encoder: a bench `Encoder` (`SentenceTransformerEncoder`, or `HashingEncoder` in tests).
        model: the name the spec gave (None: the default MiniLM), echoed in identities.
        normalize: unit-length vectors.
        query_prefix: text put before each query.
    """

    def __init__(self, encoder: Encoder, *, model: str | None = None, normalize: bool = True, query_prefix: str = ""):
        self.encoder = encoder
        self.model = model
        self.normalize = normalize
        self.query_prefix = query_prefix
        self._lock = threading.Lock()
        # One query at a time: one intra-op thread (docs/performance.md: two threads beside other
        # jobs made a query 27x slower); $RANKGATE_ENCODE_THREADS overrides it.
        self.threads = encode_threads() or 1

    @classmethod
    def from_keys(cls, keys: Keys, encoder_factory: EncoderFactory | None = None) -> QueryEncoder:
        """The encoder a spec names (see the module docstring); the model is loaded here."""
        model = keys.text("model", None)
        params: dict[str, Any] = {"device": keys.text("device", "cpu")}
        if keys.has("max_seq_length"):
            params["max_seq_length"] = keys.integer("max_seq_length", None)
        normalize = keys.boolean("normalize", True)
        prefix = keys.config.get("query_prefix", "")
        if not isinstance(prefix, str):
            raise keys.error("query_prefix", f"must be a string. Got {prefix!r} instead.")
        if encoder_factory is None:
            from rankgate.bench.factory import default_encoder_factory

            encoder_factory = default_encoder_factory
        try:
            encoder = encoder_factory(model, params)
        except BackendError as e:
            raise keys.error("model", str(e)) from None
        return cls(encoder, model=model, normalize=normalize, query_prefix=prefix)

    def identity(self) -> dict[str, Any]:
        """What changes the vectors: the model's identity (name and a hash of its files) and the settings."""
        return {"model": self.encoder.identity, "normalize": self.normalize, "query_prefix": self.query_prefix}

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def vector(self, text: str) -> np.ndarray:
        """The query's float32 vector; an encoding failure is a `QueryFailed` (asking again will not help)."""
        return self.vectors([text])[0]

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries' vectors, one row each."""
        prefixed = [self.query_prefix + t for t in texts]
        try:
            with self._lock, torch_threads_set(self.threads):
                out = self.encoder.encode(prefixed, normalize=self.normalize)
        except BackendError as e:
            raise QueryFailed(f"encoding the query failed: {e}") from None
        return np.asarray(out, dtype=np.float32)

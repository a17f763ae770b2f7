"""BM25 with bm25s: sparse scores precomputed at indexing, fast top-k at query time."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankgate.bench._deps import require
from rankgate.bench.progress import Progress
from rankgate.bench.retrievers.base import Hits, StageInfo
from rankgate.errors import BackendError, ConfigError

METHODS: tuple[str, ...] = ("lucene", "robertson", "atire", "bm25l", "bm25+")


class BM25Retriever:
    """Okapi BM25 over whitespace/word tokens, English stopwords removed, optional stemming.

    Documents that share no term with the query score 0 and are not returned (as in Lucene);
    equal scores are ranked in corpus order.

    Args:
        name: label in the results.
        k1, b: the BM25 parameters (defaults 1.2 and 0.75, Lucene's and Anserini's).
        method: the bm25s variant (``lucene`` by default).
        stopwords: ``en`` (default) or ``none``.
        stemmer: a Snowball language such as ``english`` (needs PyStemmer), or None.
        threads: threads for batched retrieval (0: one).
    """

    uses_index = False

    def __init__(
        self,
        name: str = "bm25",
        *,
        k1: float = 1.2,
        b: float = 0.75,
        method: str = "lucene",
        stopwords: str = "en",
        stemmer: str | None = None,
        threads: int = 0,
    ) -> None:
        if method not in METHODS:
            raise ConfigError(f"unknown BM25 method {method!r}; choose one of {', '.join(METHODS)}", key_path="method")
        self.name = name
        self.params: dict[str, Any] = {"k1": k1, "b": b, "method": method, "stopwords": stopwords, "stemmer": stemmer}
        self.threads = threads
        self._texts: Sequence[str] = ()
        self._model: Any = None
        self._stemmer: Any = None
        self._built: StageInfo | None = None

    def describe(self) -> dict[str, Any]:
        return {"kind": "bm25", "library": "bm25s", "params": dict(self.params)}

    def prepare(self, texts: Sequence[str], progress: Progress) -> StageInfo:
        if self._texts is not texts:
            self._texts = texts
            self._built = None
        return StageInfo()

    def build(self, index: Any, progress: Progress) -> StageInfo:
        """Tokenize and index the corpus (once; later calls return the first build's cost)."""
        if self._built is not None:
            return self._built
        bm25s = require("bm25s")
        if self.params["stemmer"]:
            stemmer_mod = require("Stemmer")
            try:
                self._stemmer = stemmer_mod.Stemmer(self.params["stemmer"])
            except Exception as e:
                raise ConfigError(
                    f"unknown stemmer language {self.params['stemmer']!r} ({e})", key_path="stemmer"
                ) from None
        start = time.perf_counter()
        with progress.task("indexing (bm25)", total=2) as advance:
            tokens = self._tokenize(self._texts, return_ids=True)
            advance(1)
            model = bm25s.BM25(k1=self.params["k1"], b=self.params["b"], method=self.params["method"])
            try:
                model.index(tokens, show_progress=False)
            except Exception as e:
                raise BackendError(f"bm25s could not index the corpus: {e}") from None
            advance(1)
        seconds = time.perf_counter() - start
        self._model = model
        size = sum(int(v.nbytes) for v in model.scores.values() if isinstance(v, np.ndarray))
        self._built = StageInfo(seconds, size, {"vocabulary": len(model.vocab_dict), "documents": len(self._texts)})
        return self._built

    def _tokenize(self, texts: Sequence[str], *, return_ids: bool) -> Any:
        bm25s = require("bm25s")
        stop = None if self.params["stopwords"] in (None, "none") else self.params["stopwords"]
        return bm25s.tokenize(
            list(texts), stopwords=stop, stemmer=self._stemmer, return_ids=return_ids, show_progress=False
        )

    def encode_queries(self, texts: Sequence[str], *, cached: bool = True) -> Any:
        return self._tokenize(texts, return_ids=False)

    def search(self, encoded: Any, k: int) -> Hits:
        if self._model is None:
            raise BackendError("the BM25 retriever was searched before it was built")
        queries: list[list[str]] = encoded
        n = len(self._texts)
        depth = min(k, n)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        if depth == 0 or not queries:
            return Hits(ids, scores)
        docs, values = self._model.retrieve(queries, k=depth, show_progress=False, n_threads=self.threads)
        matched = values > 0
        docs = np.where(matched, docs, -1).astype(np.int64)
        values = np.where(matched, values, -np.inf).astype(np.float32)
        # equal scores in corpus order (as exact search and fusion do), whatever order bm25s returned them in
        order = np.lexsort((np.where(docs >= 0, docs, np.iinfo(np.int64).max), -values), axis=-1)
        ids[:, :depth] = np.take_along_axis(docs, order, axis=1)
        scores[:, :depth] = np.take_along_axis(values, order, axis=1)
        return Hits(ids, scores)

"""Helpers for the bench tests: a counting encoder, a fake cross-encoder, tiny datasets, references."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankgate.bench.encoders import Encoder, HashingEncoder
from rankgate.bench.progress import Advance


class CountingEncoder:
    """Wraps an encoder and counts its calls and the texts it was asked to encode."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(
        self, texts: Sequence[str], *, normalize: bool, batch_size: int = 64, progress: Advance | None = None
    ) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.encode(texts, normalize=normalize, batch_size=batch_size, progress=progress)

    def reset(self) -> None:
        self.calls = self.texts = 0


def factory_of(encoder: Encoder) -> Any:
    """An ``encoder_factory`` for `run_benchmark` that always returns ``encoder``."""
    return lambda model, params: encoder


class WordOverlapScorer:
    """A fake cross-encoder: the number of query words in the document (ties: 0)."""

    identity = "word-overlap"

    def __init__(self) -> None:
        self.pairs = 0

    def score(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        self.pairs += len(pairs)
        out = [len(set(q.lower().split()) & set(d.lower().split())) for q, d in pairs]
        return np.asarray(out, dtype=np.float32)


def hashing() -> CountingEncoder:
    return CountingEncoder(HashingEncoder(dim=64))


def write_beir(folder: Path, docs: dict[str, str], queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> Path:
    """A BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv)."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w") as f:
        for did, text in docs.items():
            f.write(json.dumps({"_id": did, "title": "", "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as f:
        for qid, text in queries.items():
            f.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, docs_ in qrels.items():
            for did, grade in docs_.items():
                f.write(f"{qid}\t{did}\t{grade}\n")
    return folder


def brute_force(queries: np.ndarray, docs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference exact search: full score matrix in float64, sorted by (-score, id)."""
    scores = queries.astype(np.float64) @ docs.astype(np.float64).T
    ids = np.empty((len(queries), min(k, docs.shape[0])), dtype=np.int64)
    for i, row in enumerate(scores):
        order = np.lexsort((np.arange(len(row)), -row))
        ids[i] = order[: ids.shape[1]]
    return np.take_along_axis(scores, ids, axis=1), ids


def is_top_k(got_ids: np.ndarray, full_scores: np.ndarray, *, tol: float = 1e-5) -> bool:
    """Each row of ``got_ids`` is a best-first top-k of that row of ``full_scores`` (ties within ``tol``)."""
    for g, row in zip(got_ids, full_scores, strict=True):
        g = g[g >= 0]
        s = row[g]
        kth = np.sort(row)[::-1][len(g) - 1]
        if len(set(g.tolist())) != len(g):
            return False
        if np.any(s[:-1] < s[1:] - tol) or s.min() < kth - tol:
            return False
        if not set(np.nonzero(row > kth + tol)[0].tolist()) <= set(g.tolist()):
            return False
    return True


def bm25_reference(
    doc_tokens: list[list[str]], query_tokens: list[str], *, k1: float = 1.2, b: float = 0.75
) -> np.ndarray:
    """Lucene BM25 (as in Kamphuis et al. 2020), by hand: one score per document."""
    n = len(doc_tokens)
    avg = sum(len(d) for d in doc_tokens) / n
    df = Counter(t for d in doc_tokens for t in set(d))
    scores = np.zeros(n)
    for i, doc in enumerate(doc_tokens):
        tf = Counter(doc)
        for term in query_tokens:
            if tf[term] == 0:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            scores[i] += idf * tf[term] / (tf[term] + k1 * (1 - b + b * len(doc) / avg))
    return scores


# -- session fixtures (import them into a test module to use them) ---------------------------------
@pytest.fixture(scope="session")
def minilm() -> Encoder:
    """The bundled all-MiniLM-L6-v2, loaded once per test session."""
    from rankgate.bench.encoders import SentenceTransformerEncoder

    return SentenceTransformerEncoder("minilm")


@pytest.fixture(scope="session")
def embedding_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache folder for the session: the demo corpus is encoded by MiniLM once."""
    return tmp_path_factory.mktemp("embeddings")

"""Retrievers: BM25 (bm25s), dense (an `Encoder` + a vector index), fusion, cross-encoder re-ranking.

Importing this package is cheap; each adapter imports its library when it is first used.
"""

from rankgate.bench.retrievers.base import Hits, Retriever, StageInfo

__all__ = ["Hits", "Retriever", "StageInfo"]

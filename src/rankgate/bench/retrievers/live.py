"""A live retriever (a service, a vector database, a Python pipeline) as a row of the benchmark.

`LiveBenchRetriever` wraps a `rankgate.retrieve.LiveRetriever` into bench's `Retriever` steps:
``prepare`` and ``build`` do nothing (the index is the team's own), ``encode_queries`` pairs each
query text with its id, and ``search`` asks the retriever one query at a time. Document ids map
to corpus positions; ids the corpus lacks are kept (as non-relevant rows, after the corpus's
positions) and reported, and so are duplicate hits (the first is kept).

When the retriever encodes queries itself (the vector databases), bench can measure its
neighbor recall: the share of the exact top-k, by the same model over the dataset's corpus
(through the embedding cache), that the database returned.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from rankgate.bench.embedcache import EmbeddingCache
from rankgate.bench.progress import SILENT, Progress
from rankgate.bench.retrievers.base import Hits, StageInfo
from rankgate.errors import BackendError


class LiveBenchRetriever:
    """Bench's view of a live retriever (see the module docstring).

    Args:
        name: label in the results.
        live: the adapter (`rankgate.retrieve.spec.open_retriever` builds one from a spec).
        cache: the embedding cache, for the exact-search reference of neighbor recall.
        retry: how often and after what wait a transient failure is asked again: the policy of
            ``rankgate retrieve`` (`rankgate.retrieve.runner.RetryPolicy`; None: its defaults).
            Bench asks one query at a time, so a Retry-After wait is a plain sleep here.
    """

    uses_index = False

    def __init__(self, name: str, live: Any, *, cache: EmbeddingCache | None = None, retry: Any = None) -> None:
        from rankgate.retrieve.runner import RetryPolicy

        self.name = name
        self.live = live
        self.cache = cache
        self.retry: RetryPolicy = retry if retry is not None else RetryPolicy()
        self._rng = random.Random(0)
        self.doc_ids: list[str] = []
        self.warnings: list[str] = []
        self._position: dict[str, int] = {}
        self._query_ids: dict[str, str] = {}
        self._corpus: Sequence[str] = ()
        self._corpus_size = 0
        self._exact: Any = None
        self._unknown: set[str] = set()
        self._duplicates = 0

    @property
    def approximate(self) -> bool:
        """True when the retriever searches by a query vector bench can reproduce (neighbor recall applies)."""
        return getattr(self.live, "encoder", None) is not None

    def bind(self, doc_ids: Sequence[str], query_ids: Sequence[str], query_texts: Sequence[str]) -> None:
        """The dataset's document ids (for positions) and query ids (sent with each query)."""
        self.doc_ids = list(doc_ids)
        self._corpus_size = len(self.doc_ids)
        self._position = {d: i for i, d in enumerate(self.doc_ids)}
        self._query_ids = {}
        for qid, text in zip(query_ids, query_texts, strict=True):
            self._query_ids.setdefault(text, qid)

    def describe(self) -> dict[str, Any]:
        return {"kind": "live", "retriever": _plain(self.live.identity())}

    def prepare(self, texts: Sequence[str], progress: Progress) -> StageInfo:
        self._corpus = texts
        return StageInfo()

    def build(self, index: Any, progress: Progress) -> StageInfo:
        return StageInfo()

    def encode_queries(self, texts: Sequence[str], *, cached: bool = True) -> list[tuple[str, str]]:
        """``(query id, text)`` pairs: the retriever encodes (or sends) the text itself."""
        return [(self._query_ids.get(t, ""), t) for t in texts]

    def search(self, encoded: Sequence[tuple[str, str]], k: int) -> Hits:
        rows = []
        for qid, text in encoded:
            rows.append(self._row(qid, self._ask(qid, text, k), k))
        self._report()
        return Hits.from_lists(rows, k)

    def warm_up(self, encoded: Sequence[tuple[str, str]], k: int) -> None:
        """Ask the first query once, untimed: a service's (or its encoder's) one-time start is not throughput."""
        if encoded:
            qid, text = encoded[0]
            self._ask(qid, text, k)

    def exact_search(self, encoded: Sequence[tuple[str, str]], k: int) -> Hits:
        """Exact search by the retriever's own query encoder over the dataset's corpus: neighbor recall's reference."""
        if self._exact is None:
            from rankgate.bench.indexes import IndexSpec
            from rankgate.bench.retrievers.dense import DenseRetriever

            qe = self.live.encoder
            dense = DenseRetriever(
                f"{self.name}/exact", qe.encoder, cache=self.cache, normalize=qe.normalize, query_prefix=qe.query_prefix
            )
            dense.prepare(self._corpus, SILENT)
            dense.build(IndexSpec("exact"), SILENT)
            self._exact = dense
        return self._exact.search(self._exact.encode_queries([t for _, t in encoded]), k)

    def close(self) -> None:
        self.live.close()

    def _ask(self, qid: str, text: str, k: int) -> Sequence[Any]:
        from rankgate.retrieve.base import QueryFailed, TransientFailure

        tries = self.retry.retries + 1
        for attempt in range(tries):
            try:
                return self.live.search(qid, text, k)
            except TransientFailure as e:
                if attempt + 1 == tries:
                    raise BackendError(f"{self.name}: query {qid!r} failed {tries} times: {e}") from None
                time.sleep(self.retry.wait(attempt, e, self._rng))
            except QueryFailed as e:
                raise BackendError(f"{self.name}: query {qid!r}: {e}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _row(self, qid: str, hits: Sequence[Any], k: int) -> tuple[list[int], list[float]]:
        ids: list[int] = []
        scores: list[float] = []
        seen: set[int] = set()
        for rank, hit in enumerate(hits):
            if len(ids) == k:
                break
            position = self._position.get(hit.doc_id)
            if position is None:
                position = self._position[hit.doc_id] = len(self.doc_ids)
                self.doc_ids.append(hit.doc_id)
            if position >= self._corpus_size:
                self._unknown.add(hit.doc_id)
            if position in seen:
                self._duplicates += 1
                continue
            seen.add(position)
            ids.append(position)
            scores.append(float(hit.score) if hit.score is not None else float(-rank))
        return ids, scores

    def _report(self) -> None:
        notes = []
        if self._unknown:
            example = sorted(self._unknown)[0]
            notes.append(
                f"{self.name}: {len(self._unknown)} returned document ids are not in the dataset's corpus "
                f"(e.g. {example!r}); they count as non-relevant"
            )
        if self._duplicates:
            notes.append(
                f"{self.name}: {self._duplicates} duplicate hits (the same document twice for a query); "
                "kept the first of each"
            )
        self.warnings = [n for n in dict.fromkeys([*self.warnings, *notes])]


def _plain(value: Any) -> Any:
    """An identity as JSON-friendly values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def make_live(spec: Any, cache: EmbeddingCache | None, encoder_factory: Callable[..., Any]) -> LiveBenchRetriever:
    """The `LiveBenchRetriever` of a matrix's ``live`` entry (``params.spec``: a spec file or mapping)."""
    from rankgate.retrieve.spec import open_retriever

    given = spec.params["spec"]
    key_path = None if isinstance(given, str) else f"{spec.key_path}.spec"
    live = open_retriever(given, key_path=key_path, encoder_factory=encoder_factory)
    return LiveBenchRetriever(spec.name, live, cache=cache)

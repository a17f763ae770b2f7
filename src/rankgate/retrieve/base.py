"""What every live retriever adapter provides, and the table of adapter kinds.

An adapter answers one query at a time (``search(query_id, text, k)``); the runner around it owns
concurrency, rate limits, retries, the answer cache, latency figures and writing the run, so an
adapter only translates one request and one response.

Failures come in two kinds, so the runner knows whether asking again can help:

- `TransientFailure`: 429, 5xx, a timeout or a dropped connection; retried with backoff
  (``retry_after`` seconds first, when the service said so).
- `QueryFailed`: the answer can never be used (malformed JSON, a hit without an id); reported
  for that query, never retried.

Neither message may hold a secret: adapters build messages from the URL path and status, never
from headers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rankgate.errors import BackendError


@dataclass(frozen=True)
class Hit:
    """One retrieved item: its document (or chunk) id and the score the retriever gave, if any."""

    doc_id: str
    score: float | None = None


class TransientFailure(BackendError):
    """A failure that may go away when the same request is sent again."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QueryFailed(BackendError):
    """A failure that asking again will not fix; the query is reported with this message."""


@runtime_checkable
class LiveRetriever(Protocol):
    """An adapter over a service, database or callable that ranks documents for one query."""

    kind: str

    def identity(self) -> Mapping[str, Any]:
        """Every setting that changes the answers (URL, index, model, templates), without secrets.

        The answer cache keys on it: two retrievers with equal identities must give equal answers.
        """
        ...

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        """The top ``k`` hits, best first; raises `TransientFailure` or `QueryFailed`."""
        ...

    def close(self) -> None:
        """Release connections and clients."""
        ...


# kind -> "module:class"; the class has ``from_config(config: Mapping[str, Any], where: str)``
# where ``where`` is the key path prefix for ConfigError messages (for example "retriever.yaml").
KINDS: dict[str, str] = {
    "http": "rankgate.retrieve.http:HttpRetriever",
    "python": "rankgate.retrieve.python:PythonRetriever",
    "qdrant": "rankgate.retrieve.qdrant:QdrantRetriever",
    "lancedb": "rankgate.retrieve.lancedb:LanceDBRetriever",
    "chroma": "rankgate.retrieve.chroma:ChromaRetriever",
    "elasticsearch": "rankgate.retrieve.elastic:ElasticsearchRetriever",
    "opensearch": "rankgate.retrieve.elastic:OpenSearchRetriever",
    "pgvector": "rankgate.retrieve.pgvector:PgvectorRetriever",
}

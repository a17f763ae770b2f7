"""Qdrant: a collection on a Qdrant server (``url``) or in local mode (``path``), searched by vector.

Spec keys: ``url`` or ``path`` (one of the two), ``collection``, ``id_field`` (the payload key that
holds the document id; default: the point id, since Qdrant ids are integers or UUIDs),
``vector_name`` (for collections with named vectors), ``hnsw_ef`` and ``exact`` (search
parameters), ``api_key_env`` (the environment variable holding the server's API key),
``timeout`` (seconds), and the encoder keys of `rankgate.retrieve.encode`.

Scores are Qdrant's, except for Euclid and Manhattan collections, whose scores are distances
(smaller is better): those are negated, so that higher is better as trec_eval assumes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.bench.factory import EncoderFactory
from rankgate.errors import BackendError
from rankgate.extras import require
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.encode import ENCODER_KEYS, QueryEncoder
from rankgate.retrieve.spec import Keys, Where, without_timeout

KEYS = (
    "url",
    "path",
    "collection",
    "id_field",
    "vector_name",
    "hnsw_ef",
    "exact",
    "api_key_env",
    "timeout",
    *ENCODER_KEYS,
)
_DISTANCES = ("Euclid", "Manhattan")  # Qdrant scores these as distances: smaller is better


def open_client(
    *, path: str | None = None, url: str | None = None, api_key: str | None = None, timeout: float | None = None
) -> Any:
    """A ``QdrantClient`` on a server or a local-mode folder (one client per folder and process)."""
    qdrant_client = require("qdrant_client", "qdrant", purpose="the qdrant retriever")
    try:
        if path is not None:
            return qdrant_client.QdrantClient(path=path)
        return qdrant_client.QdrantClient(url=url, api_key=api_key, timeout=int(timeout) if timeout else None)
    except RuntimeError as e:  # local mode: the folder is open in another client
        raise BackendError(f"qdrant {path}: {e}") from None


class QdrantRetriever:
    """Nearest neighbours of the query's vector in one Qdrant collection."""

    kind = "qdrant"
    keys = KEYS

    def __init__(self, client: Any, encoder: QueryEncoder, settings: Mapping[str, Any], *, negate: bool) -> None:
        self.client = client
        self.encoder = encoder
        self.settings = dict(settings)
        self.negate = negate
        self._lock = threading.Lock() if settings.get("path") else None  # local mode runs in this process

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], where: Where | str, *, encoder_factory: EncoderFactory | None = None
    ) -> QdrantRetriever:
        keys = Keys(config, where, KEYS)
        if keys.has("url") == keys.has("path"):
            raise keys.error(None, "give either url (a Qdrant server) or path (local mode)")
        settings = {
            "url": keys.text("url", None),
            "path": str(keys.existing_path("path")) if keys.has("path") else None,
            "collection": keys.text("collection"),
            "id_field": keys.text("id_field", None),
            "vector_name": keys.text("vector_name", None),
            "hnsw_ef": keys.integer("hnsw_ef", None),
            "exact": keys.boolean("exact", False),
            "timeout": keys.number("timeout", None),
        }
        api_key = keys.secret_from_env("api_key_env")
        client = open_client(path=settings["path"], url=settings["url"], api_key=api_key, timeout=settings["timeout"])
        try:
            negate = _distance(client, keys, settings) in _DISTANCES
            encoder = QueryEncoder.from_keys(keys, encoder_factory)
        except BaseException:
            client.close()
            raise
        return cls(client, encoder, settings, negate=negate)

    def identity(self) -> Mapping[str, Any]:
        return {"kind": self.kind, **without_timeout(self.settings), "encoder": self.encoder.identity()}

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        vector = self.encoder.vector(text)
        s = self.settings
        try:
            if self._lock is not None:
                with self._lock:
                    points = self._query(vector, k)
            else:
                points = self._query(vector, k)
        except Exception as e:
            raise _failure(e, s["collection"]) from None
        hits = []
        for point in points:
            doc = point.id if s["id_field"] is None else (point.payload or {}).get(s["id_field"])
            if doc is None:
                raise QueryFailed(f"qdrant {s['collection']}: point {point.id} has no {s['id_field']!r} in its payload")
            hits.append(Hit(str(doc), -point.score if self.negate else float(point.score)))
        return hits

    def _query(self, vector: Any, k: int) -> Any:
        from qdrant_client import models

        s = self.settings
        params = None
        if s["hnsw_ef"] is not None or s["exact"]:
            params = models.SearchParams(hnsw_ef=s["hnsw_ef"], exact=s["exact"])
        answer = self.client.query_points(
            s["collection"],
            query=vector.tolist(),
            using=s["vector_name"],
            limit=k,
            search_params=params,
            with_payload=[s["id_field"]] if s["id_field"] else False,
        )
        return answer.points

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


def _distance(client: Any, keys: Keys, settings: Mapping[str, Any]) -> str:
    """The collection's distance ("Cosine", "Euclid", ...); a missing collection or vector name is a ConfigError."""
    name = settings["collection"]
    try:
        info = client.get_collection(name)
    except Exception as e:
        if settings["path"] is None and not isinstance(e, ValueError) and _status(e) is None:
            raise BackendError(f"qdrant {settings['url']}: cannot reach the server ({type(e).__name__})") from None
        names = ", ".join(c.name for c in client.get_collections().collections) or "none"
        raise keys.error("collection", f"no collection {name!r} (collections: {names})") from None
    vectors = info.config.params.vectors
    if isinstance(vectors, Mapping):
        wanted = settings["vector_name"]
        if wanted not in vectors:
            raise keys.error("vector_name", f"collection {name!r} has named vectors {', '.join(vectors)}: pick one")
        vectors = vectors[wanted]
    elif settings["vector_name"] is not None:
        raise keys.error("vector_name", f"collection {name!r} has one unnamed vector: leave vector_name out")
    return str(getattr(vectors.distance, "value", vectors.distance))


def _status(error: Exception) -> int | None:
    status = getattr(error, "status_code", None)
    return int(status) if isinstance(status, int) else None


def _failure(error: Exception, collection: str) -> BackendError:
    """`TransientFailure` for 429, 5xx, timeouts and connection errors; `QueryFailed` otherwise."""
    status = _status(error)
    where = f"qdrant {collection}"
    if status is not None:
        if status == 429 or status >= 500:
            retry = getattr(error, "headers", None) or {}
            after = retry.get("retry-after") if hasattr(retry, "get") else None
            return TransientFailure(f"{where}: HTTP {status}", retry_after=_seconds(after))
        return QueryFailed(f"{where}: HTTP {status}")
    name = type(error).__name__
    if isinstance(error, ConnectionError | TimeoutError) or name in (
        "ResponseHandlingException",
        "ConnectError",
        "ReadTimeout",
        "ConnectTimeout",
        "RpcError",
    ):
        return TransientFailure(f"{where}: {name}")
    return QueryFailed(f"{where}: {name}: {error}")


def _seconds(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None

"""Chroma: a persistent collection on disk, searched by the query's vector.

Spec keys: ``path`` (the folder of ``chromadb.PersistentClient``), ``collection``, ``id_field``
(a metadata key holding the document id, for collections of chunks; default: the Chroma id
itself), and the encoder keys of `rankgate.retrieve.encode`. A hit's score is the negated
distance of the collection's space (cosine, l2 or ip), so that higher is better.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from rankgate.bench.factory import EncoderFactory
from rankgate.extras import require
from rankgate.retrieve.base import Hit, QueryFailed, TransientFailure
from rankgate.retrieve.encode import ENCODER_KEYS, QueryEncoder
from rankgate.retrieve.spec import Keys, Where

KEYS = ("path", "collection", "id_field", *ENCODER_KEYS)


def open_client(path: str) -> Any:
    """A ``PersistentClient`` on ``path``, with Chroma's telemetry off."""
    chromadb = require("chromadb", "chroma", purpose="the chroma retriever")
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=path, settings=Settings(anonymized_telemetry=False))


class ChromaRetriever:
    """Nearest neighbours of the query's vector in one Chroma collection."""

    kind = "chroma"
    keys = KEYS

    def __init__(self, client: Any, collection: Any, encoder: QueryEncoder, settings: Mapping[str, Any]) -> None:
        self.client = client
        self.collection = collection
        self.encoder = encoder
        self.settings = dict(settings)
        self._lock = threading.Lock()

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any], where: Where | str, *, encoder_factory: EncoderFactory | None = None
    ) -> ChromaRetriever:
        keys = Keys(config, where, KEYS)
        path = keys.existing_path("path")
        settings = {
            "path": str(path),
            "collection": keys.text("collection"),
            "id_field": keys.text("id_field", None),
        }
        client = open_client(str(path))
        try:
            collection = client.get_collection(settings["collection"], embedding_function=None)
        except Exception as e:  # chromadb.errors.NotFoundError; its import path moved between releases
            names = ", ".join(sorted(c.name for c in client.list_collections())) or "none"
            raise keys.error(
                "collection", f"cannot open collection {settings['collection']!r} in {path} ({e}; collections: {names})"
            ) from None
        return cls(client, collection, QueryEncoder.from_keys(keys, encoder_factory), settings)

    def identity(self) -> Mapping[str, Any]:
        return {"kind": self.kind, **self.settings, "encoder": self.encoder.identity()}

    def search(self, query_id: str, text: str, k: int) -> Sequence[Hit]:
        vector = self.encoder.vector(text)
        id_field = self.settings["id_field"]
        include = ["distances", "metadatas"] if id_field else ["distances"]
        try:
            with self._lock:  # the embedded client's SQLite store is not meant for concurrent readers
                answer = self.collection.query(query_embeddings=[vector], n_results=k, include=include)
        except OSError as e:
            raise TransientFailure(f"chroma {self.settings['collection']}: {type(e).__name__}: {e}") from None
        except Exception as e:  # chromadb.errors.ChromaError and the ValueErrors of its argument checks
            raise QueryFailed(f"chroma {self.settings['collection']}: {e}") from None
        ids, distances = answer["ids"][0], answer["distances"][0]
        metadatas = answer["metadatas"][0] if id_field else [None] * len(ids)
        hits = []
        for chroma_id, distance, metadata in zip(ids, distances, metadatas, strict=True):
            doc = chroma_id if not id_field else (metadata or {}).get(id_field)
            if doc is None:
                raise QueryFailed(
                    f"chroma {self.settings['collection']}: hit {chroma_id!r} has no {id_field!r} metadata"
                )
            hits.append(Hit(str(doc), -float(distance)))
        return hits

    def close(self) -> None:
        self.collection = None
        self.client = None

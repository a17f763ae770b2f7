"""Load a corpus into an embedded vector database (LanceDB, Chroma, Qdrant local mode) and say how to search it.

The documents are encoded exactly as ``bench`` encodes them (title and text joined by a space,
the same encoder, unit-length vectors, the same embedding cache), so a ``bench`` run can put the
database next to exact search over the same vectors. Every vector is computed before the
database is touched: an interrupted run leaves the database as it was (and the cache keeps the
vectors already made). Each database stores the document id, its text and its vector:

- LanceDB: a table with columns ``doc_id``, ``text``, ``vector``; searched by cosine distance.
- Chroma: a collection in cosine space whose ids are the document ids.
- Qdrant (local mode): a cosine collection; point ids are UUIDs made from the document ids (Qdrant
  takes no other strings), the payload holds ``doc_id`` and ``text``.

>>> parse_target("lancedb:./index")
('lancedb', './index', None)
>>> parse_target("chroma:/data/chroma:scifact")
('chroma', '/data/chroma', 'scifact')
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankgate.bench.embedcache import CachedEncoder, EmbeddingCache
from rankgate.bench.factory import EncoderFactory
from rankgate.bench.progress import SILENT, Progress
from rankgate.errors import BackendError, ConfigError, InputError

TARGETS = ("lancedb", "chroma", "qdrant")
_BATCH = 1000  # rows per database write
_NAMESPACE = uuid.UUID("6f1c2a8e-3b1d-4c6e-9a57-0d2c5b7e9f10")  # Qdrant point ids: uuid5(_NAMESPACE, doc_id)


@dataclass
class IndexResult:
    """What `index_corpus` wrote.

    Attributes:
        spec: the retriever spec that searches it (a mapping with a kind; `spec_yaml` renders it).
        documents: rows written.
        dim: the vectors' dimension.
        encoded, cached: texts encoded now / found in the embedding cache (with a cache, each
            distinct text once: they add up to ``distinct``).
        seconds: wall time.
        distinct: distinct document texts (documents with identical text share one vector).
    """

    spec: dict[str, Any]
    documents: int
    dim: int
    encoded: int
    cached: int
    seconds: float
    distinct: int = 0


def parse_target(text: str) -> tuple[str, str, str | None]:
    """``KIND:PATH[:NAME]`` as (kind, path, name or None); the kind is one of `TARGETS`."""
    kind, sep, rest = text.partition(":")
    if not sep or kind not in TARGETS or not rest:
        raise ConfigError(
            f"expected lancedb:PATH[:TABLE], chroma:PATH[:COLLECTION] or qdrant:PATH[:COLLECTION]. "
            f"Got {text!r} instead.",
            key_path="--into",
        )
    path, sep, name = rest.rpartition(":")
    if not sep or not path or "/" in name or "\\" in name:
        return kind, rest, None
    return kind, path, name or None


def point_id(doc_id: str) -> str:
    """The Qdrant point id of a document: a UUID made from its id (the same on every run)."""
    return str(uuid.uuid5(_NAMESPACE, doc_id))


def read_documents(corpus: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """(ids, texts) of ``demo``, a BEIR folder (its corpus.jsonl) or a corpus file, texts as bench reads them."""
    from rankgate.io.texts import read_corpus

    if str(corpus) == "demo":
        from rankgate.data import demo_dir

        corpus = demo_dir() / "corpus.jsonl"
    path = Path(corpus)
    if path.is_dir():
        found = next(
            (path / n for n in ("corpus.jsonl", "corpus.jsonl.gz", "corpus.json") if (path / n).is_file()), None
        )
        if found is None:
            raise InputError("no corpus.jsonl (or corpus.json) in this folder", source=str(path))
        path = found
    if not path.exists():
        raise InputError("corpus file not found", source=str(path))
    docs = read_corpus(path, joiner=" ")
    return list(docs), list(docs.values())


def index_corpus(
    corpus: str | os.PathLike[str],
    into: str,
    *,
    model: str | None = None,
    device: str = "cpu",
    batch_size: int = 64,
    overwrite: bool = False,
    cache: EmbeddingCache | None = None,
    encoder_factory: EncoderFactory | None = None,
    progress: Progress = SILENT,
) -> IndexResult:
    """Encode ``corpus`` and write it into the database ``into`` (``lancedb:PATH[:TABLE]``, ...).

    Args:
        corpus: ``demo``, a BEIR folder or a corpus file (`read_documents`).
        into: ``KIND:PATH[:NAME]`` (`parse_target`); NAME defaults to the corpus's name.
        model: ``minilm`` (default) or a local sentence-transformers folder, as in ``bench``.
        device, batch_size: for the encoder.
        overwrite: replace an existing table or collection (else that is an error).
        cache: the embedding cache (None: encode everything, keep nothing).
        encoder_factory: ``(model, params) -> Encoder`` (default: bench's).
        progress: progress bars.

    Raises:
        ConfigError: a bad target, or the table exists and ``overwrite`` is False.
        InputError: a bad corpus file.
    """
    start = time.perf_counter()
    kind, path, name = parse_target(into)
    ids, texts = read_documents(corpus)
    name = name or _default_name(corpus)
    writer = _WRITERS[kind](Path(path).expanduser(), name, overwrite)  # checks the target before encoding
    if encoder_factory is None:
        from rankgate.bench.factory import default_encoder_factory

        encoder_factory = default_encoder_factory
    try:
        raw = encoder_factory(model, {"device": device})
        encoder = CachedEncoder(raw, cache) if cache is not None else raw
        with progress.task(f"encoding {len(texts)} documents", total=len(texts)) as advance:
            vectors = encoder.encode(texts, normalize=True, batch_size=batch_size, progress=advance)
        with progress.task(f"writing {kind} {name}", total=len(ids)) as advance:
            writer.write(ids, texts, np.asarray(vectors, dtype=np.float32), advance)
    finally:
        writer.close()
    spec = {"kind": kind, "path": str(Path(path)), **writer.names, "model": model or "minilm"}
    encoded = encoder.misses if isinstance(encoder, CachedEncoder) else len(texts)
    cached = encoder.hits if isinstance(encoder, CachedEncoder) else 0
    seconds = time.perf_counter() - start
    return IndexResult(spec, len(ids), raw.dim, encoded, cached, seconds, distinct=len(set(texts)))


def spec_yaml(spec: Mapping[str, Any]) -> str:
    """A spec as YAML text (values written as JSON scalars, which YAML reads the same).

    >>> print(spec_yaml({"kind": "lancedb", "path": "idx", "table": "demo"}), end="")
    kind: lancedb
    path: "idx"
    table: "demo"
    """
    lines = [f"{key}: {value if key == 'kind' else json.dumps(value)}" for key, value in spec.items()]
    return "\n".join(lines) + "\n"


def _default_name(corpus: str | os.PathLike[str]) -> str:
    """The corpus's name, made a valid table/collection name for all three databases."""
    p = Path(str(corpus))
    stem = p.name if p.is_dir() or str(corpus) == "demo" else p.name.split(".")[0]
    if stem in ("corpus", "") and p.parent.name:
        stem = p.parent.name
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-_")
    return name if len(name) >= 3 else f"{name or 'corpus'}-index"


class _LanceWriter:
    def __init__(self, path: Path, name: str, overwrite: bool) -> None:
        from rankgate.extras import require

        lancedb = require("lancedb", "lancedb", purpose="indexing into LanceDB")
        self.db = lancedb.connect(str(path))
        self.name, self.overwrite = name, overwrite
        self.names = {"table": name, "id_column": "doc_id", "vector_column": "vector", "metric": "cosine"}
        existing = getattr(self.db.list_tables(), "tables", None) or []
        if name in existing and not overwrite:
            raise ConfigError(f"table {name!r} exists in {path}; pass --overwrite to replace it", key_path="--into")

    def write(self, ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray, advance: Any) -> None:
        import pyarrow as pa

        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), type=pa.float32()), vectors.shape[1])
        table = pa.table({"doc_id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string()), "vector": column})
        self.db.create_table(self.name, table, mode="overwrite" if self.overwrite else "create")
        advance(len(ids))

    def close(self) -> None:
        self.db = None


class _ChromaWriter:
    def __init__(self, path: Path, name: str, overwrite: bool) -> None:
        from rankgate.retrieve.chroma import open_client

        self.client = open_client(str(path))
        self.name = name
        self.names = {"collection": name}
        if name in {c.name for c in self.client.list_collections()}:
            if not overwrite:
                raise ConfigError(
                    f"collection {name!r} exists in {path}; pass --overwrite to replace it", key_path="--into"
                )
            self.replace = True
        else:
            self.replace = False

    def write(self, ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray, advance: Any) -> None:
        if self.replace:
            self.client.delete_collection(self.name)
        try:
            collection = self.client.create_collection(
                self.name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
            )
        except Exception as e:  # chromadb's name rules (3-512 characters, ...)
            raise ConfigError(f"chroma refuses the collection name {self.name!r} ({e})", key_path="--into") from None
        step = min(_BATCH, self.client.get_max_batch_size())
        for lo in range(0, len(ids), step):
            hi = lo + step
            collection.add(ids=list(ids[lo:hi]), embeddings=vectors[lo:hi], documents=list(texts[lo:hi]))
            advance(len(ids[lo:hi]))

    def close(self) -> None:
        self.client = None


class _QdrantWriter:
    def __init__(self, path: Path, name: str, overwrite: bool) -> None:
        from rankgate.retrieve.qdrant import open_client

        self.client = open_client(path=str(path))
        self.name, self.overwrite = name, overwrite
        self.names = {"collection": name, "id_field": "doc_id"}
        if self.client.collection_exists(name) and not overwrite:
            self.client.close()
            raise ConfigError(
                f"collection {name!r} exists in {path}; pass --overwrite to replace it", key_path="--into"
            )

    def write(self, ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray, advance: Any) -> None:
        from qdrant_client import models

        try:
            if self.client.collection_exists(self.name):
                self.client.delete_collection(self.name)
            params = models.VectorParams(size=int(vectors.shape[1]), distance=models.Distance.COSINE)
            self.client.create_collection(self.name, vectors_config=params)
            for lo in range(0, len(ids), _BATCH):
                points = [
                    models.PointStruct(id=point_id(d), vector=vectors[i].tolist(), payload={"doc_id": d, "text": t})
                    for i, (d, t) in enumerate(zip(ids[lo : lo + _BATCH], texts[lo : lo + _BATCH], strict=True), lo)
                ]
                self.client.upsert(self.name, points=points)
                advance(len(points))
        except (ValueError, RuntimeError) as e:
            raise BackendError(f"qdrant {self.name}: {e}") from None

    def close(self) -> None:
        self.client.close()


_WRITERS: dict[str, Any] = {"lancedb": _LanceWriter, "chroma": _ChromaWriter, "qdrant": _QdrantWriter}

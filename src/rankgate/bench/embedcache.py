"""An on-disk cache of embeddings, so that re-running a benchmark does not re-encode.

One SQLite file (``embeddings.sqlite``) in the cache folder holds float32 vectors keyed by

- the model: the encoder's identity (name + a hash of the model folder's files, see
  `rankgate.bench.encoders.model_fingerprint`) and whether vectors are normalized;
- the text: the SHA-256 of its UTF-8 bytes.

Every batch of new vectors is written in one transaction, so an interrupted run leaves only
whole batches behind, and a second run picks up where the first stopped. Several processes may
share the folder (SQLite locks it). The default folder is ``$RANKGATE_CACHE_DIR``, else
``$XDG_CACHE_HOME/rankgate/embeddings``, else ``~/.cache/rankgate/embeddings``.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rankgate.bench.encoders import Encoder
from rankgate.bench.progress import Advance
from rankgate.errors import BackendError

FILE_NAME = "embeddings.sqlite"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS models (model_key TEXT PRIMARY KEY, identity TEXT NOT NULL, "
    "normalize INTEGER NOT NULL, dim INTEGER NOT NULL, created REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors (model_key TEXT NOT NULL, text_key BLOB NOT NULL, vector BLOB NOT NULL, "
    "PRIMARY KEY (model_key, text_key)) WITHOUT ROWID",
)
_LOOKUP_CHUNK = 500  # SQLite's bound-parameter limit is 999 on old builds
WRITE_CHUNK = 4096  # texts encoded between two commits


def default_cache_dir() -> Path:
    """``$RANKGATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/rankgate/embeddings``, else ``~/.cache/...``."""
    if os.environ.get("RANKGATE_CACHE_DIR"):
        return Path(os.environ["RANKGATE_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rankgate" / "embeddings"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Float32 vectors on disk, keyed by (model identity, normalization, text hash).

    Args:
        directory: the cache folder (created if missing); default `default_cache_dir()`.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / FILE_NAME
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                self._db.execute(statement)
            self._db.commit()
        except (OSError, sqlite3.Error) as e:
            raise BackendError(
                f"{self.path}: cannot open the embedding cache ({e}); delete the file to start over"
            ) from None

    def close(self) -> None:
        self._db.close()

    def model_key(self, identity: str, normalize: bool, dim: int) -> str:
        """Register (or find) a model and return its key."""
        key = hashlib.sha256(f"{identity}\0normalize={bool(normalize)}".encode()).hexdigest()[:24]
        with self._guard():
            row = self._db.execute("SELECT dim FROM models WHERE model_key = ?", (key,)).fetchone()
            if row is None:
                self._db.execute(
                    "INSERT OR IGNORE INTO models VALUES (?, ?, ?, ?, ?)",
                    (key, identity, int(normalize), dim, time.time()),
                )
                self._db.commit()
            elif int(row[0]) != dim:
                raise BackendError(
                    f"{self.path}: the cache holds {row[0]}-dimensional vectors for {identity!r}, "
                    f"the model gives {dim}; delete the cache file"
                )
        return key

    def get(self, model_key: str, keys: Sequence[bytes], dim: int) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys`` (absent keys are left out)."""
        found: dict[bytes, np.ndarray] = {}
        width = dim * 4
        with self._guard():
            for lo in range(0, len(keys), _LOOKUP_CHUNK):
                chunk = keys[lo : lo + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT text_key, vector FROM vectors WHERE model_key = ? AND text_key IN ({marks})",
                    (model_key, *chunk),
                )
                for key, blob in rows:
                    if len(blob) == width:  # anything else is damaged: encode again
                        found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, model_key: str, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store vectors, all in one transaction."""
        data = np.ascontiguousarray(vectors, dtype=np.float32)
        with self._guard():
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                ((model_key, key, data[i].tobytes()) for i, key in enumerate(keys)),
            )
            self._db.commit()

    def count(self, model_key: str | None = None) -> int:
        """Number of vectors stored (for one model, or all)."""
        with self._guard():
            if model_key is None:
                return int(self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
            return int(self._db.execute("SELECT COUNT(*) FROM vectors WHERE model_key = ?", (model_key,)).fetchone()[0])

    def _guard(self) -> _SqliteGuard:
        return _SqliteGuard(self.path)


class _SqliteGuard:
    """Turns SQLite failures into a `BackendError` naming the cache file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        if isinstance(error, sqlite3.Error):
            raise BackendError(
                f"{self.path}: embedding cache failed ({error}); delete the file to start over"
            ) from None


class CachedEncoder:
    """An `Encoder` that looks texts up in an `EmbeddingCache` first and encodes only the misses.

    Attributes:
        hits, misses: texts found in the cache / encoded, over this object's life.
        encode_seconds: time spent in the wrapped encoder.
    """

    def __init__(self, encoder: Encoder, cache: EmbeddingCache) -> None:
        self.encoder = encoder
        self.cache = cache
        self.hits = 0
        self.misses = 0
        self.encode_seconds = 0.0

    @property
    def identity(self) -> str:
        return self.encoder.identity

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def encode(
        self, texts: Sequence[str], *, normalize: bool, batch_size: int = 64, progress: Advance | None = None
    ) -> np.ndarray:
        lookup = CacheLookup(self.cache, self.encoder.identity, normalize, self.encoder.dim, texts)
        self.hits += lookup.cached
        self.misses += len(lookup.missing)
        if progress is not None and lookup.cached:
            progress(lookup.cached)
        for lo in range(0, len(lookup.missing), WRITE_CHUNK):
            chunk = lookup.missing_texts[lo : lo + WRITE_CHUNK]
            start = time.perf_counter()
            vectors = self.encoder.encode(chunk, normalize=normalize, batch_size=batch_size, progress=progress)
            self.encode_seconds += time.perf_counter() - start
            lookup.store(lo, checked_vectors(vectors, len(chunk), lookup.dim))
        return lookup.vectors()


class CacheLookup:
    """Texts looked up in an `EmbeddingCache`: the vectors it holds, and the distinct texts it lacks.

    Encode ``missing_texts`` (in `WRITE_CHUNK` slices, so an interrupted run keeps whole
    chunks), hand each slice's vectors to `store`, then take `vectors`.

    Attributes:
        model_key: the cache's key of the model.
        dim: the vectors' dimension.
        missing: the keys of the distinct texts the cache lacks, in first-seen order.
        missing_texts: those texts.
        cached: how many distinct texts the cache held.
    """

    def __init__(self, cache: EmbeddingCache, identity: str, normalize: bool, dim: int, texts: Sequence[str]) -> None:
        self.cache = cache
        self.dim = dim
        self.model_key = cache.model_key(identity, normalize, dim)
        self._keys = [text_key(t) for t in texts]
        unique: dict[bytes, int] = {}
        for i, key in enumerate(self._keys):
            unique.setdefault(key, i)
        self._found = cache.get(self.model_key, list(unique), dim)
        self.missing = [key for key in unique if key not in self._found]
        self.missing_texts = [texts[unique[key]] for key in self.missing]
        self.cached = len(unique) - len(self.missing)

    def store(self, lo: int, vectors: np.ndarray) -> None:
        """Write the vectors of ``missing_texts[lo : lo + len(vectors)]`` to the cache, in one transaction."""
        keys = self.missing[lo : lo + len(vectors)]
        self.cache.put(self.model_key, keys, vectors)
        self._found.update(zip(keys, vectors, strict=True))

    def vectors(self) -> np.ndarray:
        """The vectors of every text looked up, in order (each missing one must have been stored)."""
        out = np.empty((len(self._keys), self.dim), dtype=np.float32)
        for i, key in enumerate(self._keys):
            out[i] = self._found[key]
        return out


def checked_vectors(vectors: np.ndarray, n: int, dim: int) -> np.ndarray:
    """An encoder's answer as float32, checked to be ``n`` finite vectors of ``dim`` values.

    Raises:
        BackendError: another shape, or NaN or infinite values.
    """
    array = np.asarray(vectors, dtype=np.float32)
    if array.shape != (n, dim):
        raise BackendError(f"the encoder returned an array of shape {array.shape}, expected ({n}, {dim})")
    if not np.isfinite(array).all():
        raise BackendError("the encoder returned NaN or infinite values")
    return array

"""Vector indexes behind one protocol: exact search, and FAISS flat, HNSW, IVF-Flat, IVF-PQ.

Every index ranks by inner product; dense retrievers normalize vectors (the default), which
makes that cosine similarity. Parameters (defaults in brackets; ``n`` is the corpus size):

=========  ==========================================================================
exact      ``block_mb`` [64]: memory for one tile of query x document scores
flat       FAISS ``IndexFlatIP`` (exact, for comparison); no parameters
hnsw       ``M`` [32], ``ef_construction`` [200], ``ef_search`` [64]
ivf-flat   ``nlist`` [auto: 4*sqrt(n), at most n/39, at least 1], ``nprobe`` [8, at most nlist]
ivf-pq     as ivf-flat, plus ``m`` sub-quantizers [auto: dim/8 ... a divisor of dim] and
           ``nbits`` per code [auto: 8, fewer when n < 256]
=========  ==========================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rankgate.bench._deps import require
from rankgate.bench.progress import Progress
from rankgate.bench.retrievers.base import Hits
from rankgate.bench.topk import topk_inner_product
from rankgate.errors import BackendError, ConfigError

INDEX_KINDS: tuple[str, ...] = ("exact", "flat", "hnsw", "ivf-flat", "ivf-pq")
APPROXIMATE: frozenset[str] = frozenset({"hnsw", "ivf-flat", "ivf-pq"})
PARAMS: dict[str, tuple[str, ...]] = {
    "exact": ("block_mb",),
    "flat": (),
    "hnsw": ("M", "ef_construction", "ef_search"),
    "ivf-flat": ("nlist", "nprobe"),
    "ivf-pq": ("nlist", "nprobe", "m", "nbits"),
}
_AUTO = ("nlist", "m", "nbits")
_ADD_CHUNK = 20_000  # vectors added per step (progress bar granularity)


@dataclass(frozen=True)
class IndexSpec:
    """An index kind with one value per parameter (a point of the benchmark grid).

    Attributes:
        kind: one of `INDEX_KINDS`.
        params: parameter values as given (``"auto"`` where allowed); checked on creation.
        key_path: where it was configured (``matrix.indexes[1]``), for error messages.
    """

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    key_path: str = "index"

    def __post_init__(self) -> None:
        if self.kind not in INDEX_KINDS:
            raise ConfigError(
                f"unknown index {self.kind!r}; choose one of {', '.join(INDEX_KINDS)}", key_path=self.key_path
            )
        for name, value in self.params.items():
            where = f"{self.key_path}.params.{name}"
            if name not in PARAMS[self.kind]:
                allowed = ", ".join(PARAMS[self.kind]) or "none"
                raise ConfigError(f"unknown parameter of {self.kind} (parameters: {allowed})", key_path=where)
            if value == "auto" and name in _AUTO:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"must be an int >= 1. Got {value!r} instead.", key_path=where)
        if self.kind == "ivf-pq" and isinstance(self.params.get("nbits"), int) and self.params["nbits"] > 16:
            raise ConfigError("must be at most 16", key_path=f"{self.key_path}.params.nbits")

    @property
    def approximate(self) -> bool:
        return self.kind in APPROXIMATE

    def label(self) -> str:
        """``hnsw(M=16,ef_search=64)``, or just the kind without parameters."""
        if not self.params:
            return self.kind
        return f"{self.kind}(" + ",".join(f"{k}={v}" for k, v in self.params.items()) + ")"


@runtime_checkable
class VectorIndex(Protocol):
    """Built once over the corpus vectors; searched with batches of query vectors."""

    kind: str
    params: dict[str, Any]  # resolved values (no "auto")

    def build(self, vectors: np.ndarray, progress: Progress) -> None: ...

    def search(self, queries: np.ndarray, k: int) -> Hits: ...

    @property
    def nbytes(self) -> int:
        """Size of the index: FAISS's serialized size, or the arrays' bytes."""
        ...


class ExactIndex:
    """Exact inner-product search (see `rankgate.bench.topk`): no training, no approximation."""

    kind = "exact"

    def __init__(self, block_mb: int = 64) -> None:
        self.params: dict[str, Any] = {"block_mb": block_mb}
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    def build(self, vectors: np.ndarray, progress: Progress) -> None:
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    def search(self, queries: np.ndarray, k: int) -> Hits:
        q = np.ascontiguousarray(queries, dtype=np.float32)
        scores, ids = topk_inner_product(q, self._vectors, k, block_bytes=self.params["block_mb"] << 20)
        return Hits(ids, scores)

    @property
    def nbytes(self) -> int:
        return int(self._vectors.nbytes)


class FaissIndex:
    """A FAISS index (flat, HNSW, IVF-Flat, IVF-PQ) with inner-product metric."""

    def __init__(self, kind: str, params: dict[str, Any], key_path: str = "index") -> None:
        self.kind = kind
        self.key_path = key_path
        self.requested = dict(params)
        self.params: dict[str, Any] = {}
        self.warnings: list[str] = []
        self._index: Any = None

    def build(self, vectors: np.ndarray, progress: Progress) -> None:
        faiss = require("faiss")
        x = np.ascontiguousarray(vectors, dtype=np.float32)
        n, dim = x.shape
        self.params = resolve_params(self.kind, self.requested, n, dim, key_path=self.key_path)
        p = self.params
        metric = faiss.METRIC_INNER_PRODUCT
        try:
            if self.kind == "flat":
                index = faiss.IndexFlatIP(dim)
            elif self.kind == "hnsw":
                index = faiss.IndexHNSWFlat(dim, p["M"], metric)
                index.hnsw.efConstruction = p["ef_construction"]
                index.hnsw.efSearch = p["ef_search"]
            else:
                quantizer = faiss.IndexFlatIP(dim)
                if self.kind == "ivf-flat":
                    index = faiss.IndexIVFFlat(quantizer, dim, p["nlist"], metric)
                else:
                    index = faiss.IndexIVFPQ(quantizer, dim, p["nlist"], p["m"], p["nbits"], metric)
                self._quantizer = quantizer  # FAISS keeps a raw pointer: hold the Python object too
                self.warnings = _training_warnings(self.kind, p, n)
                # FAISS prints a line per k-means run when points are few; rankgate reports it once instead
                index.cp.min_points_per_centroid = 1
                if self.kind == "ivf-pq":
                    index.pq.cp.min_points_per_centroid = 1
                with progress.task(f"training {self.kind}", total=None):
                    index.train(x)
                index.nprobe = p["nprobe"]
            with progress.task(f"indexing ({self.kind})", total=n) as advance:
                for lo in range(0, n, _ADD_CHUNK):
                    index.add(x[lo : lo + _ADD_CHUNK])
                    advance(min(_ADD_CHUNK, n - lo))
        except RuntimeError as e:
            raise BackendError(f"FAISS could not build the {self.kind} index with {p}: {e}") from None
        self._index = index

    def search(self, queries: np.ndarray, k: int) -> Hits:
        if self._index is None:
            raise BackendError(f"the {self.kind} index was searched before it was built")
        scores, ids = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        ids = ids.astype(np.int64, copy=False)
        scores = np.where(ids >= 0, scores, -np.inf).astype(np.float32)
        return Hits(ids, scores)

    @property
    def nbytes(self) -> int:
        if self._index is None:
            return 0
        faiss = require("faiss")
        return int(faiss.serialize_index(self._index).nbytes)


def resolve_params(
    kind: str, requested: dict[str, Any], n: int, dim: int, *, key_path: str = "index"
) -> dict[str, Any]:
    """Fill defaults and ``auto`` values for a corpus of ``n`` vectors of ``dim``; check they fit it.

    >>> resolve_params("ivf-pq", {}, 200, 384)
    {'nlist': 5, 'nprobe': 5, 'm': 48, 'nbits': 7}
    """
    p = dict(requested)
    where = f"{key_path}.params"
    if kind == "hnsw":
        p.setdefault("M", 32)
        p.setdefault("ef_construction", 200)
        p.setdefault("ef_search", 64)
    if kind in ("ivf-flat", "ivf-pq"):
        if p.get("nlist", "auto") == "auto":
            p["nlist"] = max(1, min(int(4 * math.sqrt(n)), n // 39))
        if p["nlist"] > n:
            raise ConfigError(
                f"nlist={p['nlist']} is more than the {n} vectors to cluster; use nlist <= {n}",
                key_path=f"{where}.nlist",
            )
        p["nprobe"] = min(p.get("nprobe", 8), p["nlist"])
    if kind == "ivf-pq":
        if p.get("m", "auto") == "auto":
            p["m"] = max(d for d in range(1, max(1, dim // 8) + 1) if dim % d == 0)
        if dim % p["m"]:
            raise ConfigError(f"m={p['m']} must divide the vector dimension {dim}", key_path=f"{where}.m")
        if p.get("nbits", "auto") == "auto":
            p["nbits"] = max(1, min(8, int(math.log2(max(n, 2)))))
        if 2 ** p["nbits"] > n:
            raise ConfigError(
                f"nbits={p['nbits']} needs at least {2 ** p['nbits']} training vectors, the corpus has {n}; "
                f"use nbits <= {int(math.log2(max(n, 2)))}",
                key_path=f"{where}.nbits",
            )
    return {name: p[name] for name in PARAMS[kind] if name in p}


def _training_warnings(kind: str, p: dict[str, Any], n: int) -> list[str]:
    """FAISS's advice, said once: k-means wants at least 39 training points per centroid."""
    out = []
    if n < 39 * p["nlist"]:
        out.append(
            f"{kind}: {n} vectors to train nlist={p['nlist']} lists (FAISS advises >= {39 * p['nlist']}); "
            "the clustering is rough"
        )
    if kind == "ivf-pq" and n < 39 * 2 ** p["nbits"]:
        out.append(
            f"{kind}: {n} vectors to train {2 ** p['nbits']} codes per sub-quantizer (nbits={p['nbits']}; "
            f"FAISS advises >= {39 * 2 ** p['nbits']}); the codes are rough"
        )
    return out


def make_index(spec: IndexSpec) -> VectorIndex:
    """A fresh, unbuilt index for ``spec``."""
    if spec.kind == "exact":
        return ExactIndex(**spec.params)
    return FaissIndex(spec.kind, spec.params, key_path=spec.key_path)

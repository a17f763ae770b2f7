"""Ray Data for ``rankgate bench --engine ray``: corpus encoding and exact search on a Ray cluster.

What runs on Ray, and how it stays identical to the local engine:

- **Corpus encoding.** The texts the embedding cache misses are cut into *units*, exactly the
  lists the local path hands to the model in one call (the cache's write chunks of
  `rankgate.bench.embedcache._WRITE_CHUNK` texts, each cut into ``batch_size * 8`` texts, as
  `SentenceTransformerEncoder.encode` does). sentence-transformers sorts a call's texts by length
  and pads each batch to its longest text, so a text's vector depends, in its last bits, on the
  texts it shares a call with; sending the same units makes the Ray vectors the local ones, bit
  for bit. A Ray Data actor pool (one model per actor: a GPU each when the cluster has GPUs,
  else CPU actors running torch with the driver's thread count) encodes the units; the driver
  writes each finished unit to the cache.
- **Exact search.** The corpus matrix goes once into the object store; query blocks, cut at the
  same boundaries as `rankgate.bench.topk.topk_inner_product` cuts them in one process, are
  searched by a pool of CPU actors calling that very function with the driver's BLAS thread
  count. The same block shape and thread count give the same BLAS products, so scores, ids and
  tie order are the local ones.

Query encoding, one-query searches (the latency probe) and FAISS indexes (flat, HNSW, IVF) run
in the driver, over the gathered vectors.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.bench.embedcache import _WRITE_CHUNK, EmbeddingCache, _checked, text_key
from rankgate.bench.encoders import Encoder
from rankgate.bench.progress import Advance, Progress
from rankgate.bench.retrievers.base import Hits
from rankgate.bench.topk import DEFAULT_BLOCK_BYTES, TILE_COLUMNS, topk_inner_product
from rankgate.errors import BackendError, RankgateError
from rankgate.evaluation.engines.ray_cluster import join, ray_module

UNIT_BATCHES = 8
"""Batches per model call: `SentenceTransformerEncoder.encode` sends ``batch_size * 8`` texts at a time."""
MAX_CPU_WORKERS = 16

EncoderFactory = Callable[[str | None, Mapping[str, Any]], Encoder]


def _quiet_ray_data(ray: Any) -> None:
    """Ray Data's progress bars and console logs off (rankgate reports failures itself; Ray Data's log
    file in the session folder stays); a worker's exception comes back as itself, not wrapped."""
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    for name in ("print_on_execution_start", "enable_auto_log_stats"):
        if hasattr(ctx, name):
            setattr(ctx, name, False)
    if hasattr(ctx, "raise_original_map_exception"):  # Ray >= 2.4x
        ctx.raise_original_map_exception = True
    for handler in logging.getLogger("ray.data").handlers:
        if type(handler).__name__ != "SessionFileHandler":
            handler.setLevel(logging.CRITICAL)


@dataclass
class RayBench:
    """A connection to a Ray cluster, and the work `rankgate bench` sends to it.

    Use `RayBench.connect`. Workers compute with the driver's thread counts (torch threads for
    encoding, BLAS threads for search), since a matrix product's last bits depend on how it is
    split over threads: that is what makes their results the local engine's.

    Attributes:
        address: as given (None: the running cluster, or a new local one).
        cpus, gpus: the cluster's resources when connected (summed over its nodes).
        node_cpus: the CPUs of its largest node (None: ``cpus``, one node): no actor asks
            for more, or it could never be scheduled.
        workers: encoding actors asked for (None: one per GPU, else as many as the CPUs hold).
        search_threads: BLAS threads of the driver, and of each search actor.
        encode_threads: torch threads of each CPU encoding actor (set by the first encoding).
    """

    address: str | None
    cpus: int
    gpus: int
    workers: int | None = None
    search_threads: int = 1
    encode_threads: int | None = None
    node_cpus: int | None = None

    @classmethod
    def connect(cls, address: str | None = None, *, workers: int | None = None) -> RayBench:
        """Join the cluster at ``address`` (default: the running one, else start a local one).

        Raises:
            BackendError: Ray is not installed, or the cluster cannot be reached.
        """
        ray = join(address, data=True)
        _quiet_ray_data(ray)
        resources = ray.cluster_resources()
        cpus, gpus = int(resources.get("CPU", 1)), int(resources.get("GPU", 0))
        per_node = [int(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive", True)]
        return cls(address, cpus, gpus, workers, blas_threads(), node_cpus=max(per_node, default=cpus) or cpus)

    @property
    def actor_cpus(self) -> int:
        """The most CPUs one actor may ask for: what the largest node has."""
        return max(1, min(self.node_cpus or self.cpus, self.cpus))

    def _pool(self, threads: int) -> int:
        """Actors of ``threads`` CPUs each that the cluster holds at once (at least 1, at most 16)."""
        return max(1, min(MAX_CPU_WORKERS, self.cpus // max(1, min(threads, self.actor_cpus))))

    @property
    def search_workers(self) -> int:
        return self._pool(self.search_threads)

    def encode_workers(self, threads: int) -> int:
        """Encoding actors: as asked (at most one per GPU, or per CPU), else one per GPU, else `_pool`."""
        if self.workers:
            return max(1, min(self.workers, self.gpus or self.cpus))
        return self.gpus or self._pool(threads)

    def encode_resources(self, threads: int) -> dict[str, int]:
        """Ray resources of one encoding actor: a GPU, or CPUs for its threads (shared when more workers were asked)."""
        if self.gpus:
            return {"num_gpus": 1}
        return {"num_cpus": max(1, min(threads, self.actor_cpus, self.cpus // self.encode_workers(threads)))}

    def describe(self) -> dict[str, Any]:
        """The ``settings.ray`` block of the JSON output."""
        threads = self.encode_threads or 1
        return {
            "address": self.address or "local",
            "cluster": {"CPU": self.cpus, "GPU": self.gpus, "largest_node_CPU": self.actor_cpus},
            "encode_workers": self.encode_workers(threads),
            "encode_device": "cuda (1 GPU per worker)" if self.gpus else f"cpu ({threads} threads per worker)",
            "search_workers": self.search_workers,
            "search_threads": self.search_threads,
            "on_ray": "corpus encoding (cache misses), exact search of query batches",
            "in_driver": "query encoding, latency probe, FAISS indexes (flat, hnsw, ivf-flat, ivf-pq)",
        }

    # -- encoding ----------------------------------------------------------------------------------
    def encode_corpus(
        self,
        texts: Sequence[str],
        *,
        encoder: Encoder,
        factory: EncoderFactory,
        model: str | None,
        params: Mapping[str, Any],
        normalize: bool,
        batch_size: int,
        cache: EmbeddingCache | None,
        progress: Advance,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Vectors of ``texts`` (float32, in order), encoding on Ray only what ``cache`` lacks.

        Args:
            encoder: the driver's encoder: its identity and dimension (the workers must match it).
            factory, model, params: how each worker builds its own encoder (``params`` as in the
                matrix; ``device`` becomes ``cuda`` on GPU workers unless set).

        Returns:
            (vectors, counts): counts hold ``encoded``, ``cached`` and ``encode_seconds``.
        """
        worker_params = dict(params)
        if self.gpus:
            worker_params.setdefault("device", "cuda")
        self.encode_threads = torch_threads()
        job = _EncodeJob(self, encoder, factory, model, worker_params, normalize, batch_size, progress)
        start = time.perf_counter()
        if cache is None:
            vectors = job.run(list(texts), [len(texts)], None)
            return vectors, {"encoded": len(texts), "cached": 0, "encode_seconds": time.perf_counter() - start}
        dim = encoder.dim
        model_key = cache.model_key(encoder.identity, normalize, dim)
        keys = [text_key(t) for t in texts]
        unique: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            unique.setdefault(key, i)
        found = cache.get(model_key, list(unique), dim)
        missing = [key for key in unique if key not in found]
        if len(unique) > len(missing):
            progress(len(unique) - len(missing))
        todo = [texts[unique[key]] for key in missing]
        chunks = [min(_WRITE_CHUNK, len(todo) - lo) for lo in range(0, len(todo), _WRITE_CHUNK)]
        start = time.perf_counter()
        vectors = job.run(todo, chunks, lambda lo, hi, v: cache.put(model_key, missing[lo:hi], v))
        seconds = time.perf_counter() - start
        found.update(zip(missing, vectors, strict=True))
        out = np.empty((len(texts), dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out, {"encoded": len(missing), "cached": len(unique) - len(missing), "encode_seconds": seconds}

    # -- search ------------------------------------------------------------------------------------
    def exact_index(self, block_mb: int = DEFAULT_BLOCK_BYTES >> 20) -> RayExactIndex:
        """An exact index whose batch searches run on this cluster."""
        return RayExactIndex(self, block_mb)


@dataclass
class _EncodeJob:
    """One Ray Data job: units of texts to an actor pool of encoders, vectors back in order."""

    engine: RayBench
    encoder: Encoder
    factory: EncoderFactory
    model: str | None
    params: dict[str, Any]
    normalize: bool
    batch_size: int
    progress: Advance

    def run(
        self, texts: list[str], chunk_sizes: Sequence[int], unit_done: Callable[[int, int, np.ndarray], None] | None
    ) -> np.ndarray:
        """Vectors of ``texts``; ``unit_done(lo, hi, vectors)`` is called as each unit comes back whole."""
        out = np.empty((len(texts), self.encoder.dim), dtype=np.float32)
        if not texts:
            return out
        ray = ray_module(data=True)
        starts = encoding_units(chunk_sizes, self.batch_size)
        ends = dict(zip(starts, [*starts[1:], len(texts)], strict=True))
        items = [{"start": lo, "texts": texts[lo:hi]} for lo, hi in ends.items()]
        threads = self.engine.encode_threads or 1
        resources = self.engine.encode_resources(threads)
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            _EncodeWorker,
            fn_kwargs={
                "setup": (self.factory, self.model, self.params, self.encoder.identity, self.encoder.dim),
                "normalize": self.normalize,
                "batch_size": self.batch_size,
                "threads": None if self.engine.gpus else threads,
            },
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(self.engine.encode_workers(threads), len(items))),
            **resources,
        )
        remaining = {lo: hi - lo for lo, hi in ends.items()}
        unit_of = np.repeat(np.asarray(starts, dtype=np.int64), [hi - lo for lo, hi in ends.items()])
        for batch in _iterate(ds):
            pos = batch["pos"].astype(np.int64)
            out[pos] = batch["vector"]
            self.progress(len(pos))
            for lo, n in zip(*np.unique(unit_of[pos], return_counts=True), strict=True):
                remaining[int(lo)] -= int(n)
                if remaining[int(lo)] == 0 and unit_done is not None:
                    unit_done(int(lo), ends[int(lo)], out[int(lo) : ends[int(lo)]])
        return out


def encoding_units(chunk_sizes: Sequence[int], batch_size: int) -> list[int]:
    """Start positions of the units of encoding: each chunk cut into ``batch_size * UNIT_BATCHES`` texts.

    >>> encoding_units([1000, 300], 64)
    [0, 512, 1000]
    """
    step = batch_size * UNIT_BATCHES
    starts: list[int] = []
    offset = 0
    for size in chunk_sizes:
        starts.extend(range(offset, offset + size, step))
        offset += size
    return starts


def query_blocks(m: int, n: int, block_bytes: int) -> list[tuple[int, int]]:
    """The query blocks `topk_inner_product` forms for ``m`` queries over ``n`` vectors.

    >>> query_blocks(5, 100_000, 4 * 32768 * 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    if m == 0:
        return []
    cols = min(max(n, 1), TILE_COLUMNS, max(1, block_bytes // 4))
    rows = max(1, min(m, block_bytes // (4 * cols)))
    return [(lo, min(lo + rows, m)) for lo in range(0, m, rows)]


class RayExactIndex:
    """Exact inner-product search; batches of two or more queries run on Ray (see the module docstring)."""

    kind = "exact"

    def __init__(self, engine: RayBench, block_mb: int = DEFAULT_BLOCK_BYTES >> 20) -> None:
        self.engine = engine
        self.params: dict[str, Any] = {"block_mb": block_mb}
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self._ref: Any = None

    def build(self, vectors: np.ndarray, progress: Progress) -> None:
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._ref = ray_module(data=True).put(self._vectors)

    @property
    def nbytes(self) -> int:
        return int(self._vectors.nbytes)

    def search(self, queries: np.ndarray, k: int) -> Hits:
        q = np.ascontiguousarray(queries, dtype=np.float32)
        block_bytes = self.params["block_mb"] << 20
        if len(q) < 2 or len(self._vectors) == 0 or k == 0:  # one query: a Ray job would cost more than it
            scores, ids = topk_inner_product(q, self._vectors, k, block_bytes=block_bytes)
            return Hits(ids, scores)
        ray = ray_module(data=True)
        blocks = query_blocks(len(q), len(self._vectors), block_bytes)
        ds = ray.data.from_items(
            [{"lo": lo, "hi": hi} for lo, hi in blocks], override_num_blocks=len(blocks)
        ).map_batches(
            _SearchWorker,
            fn_kwargs={
                "refs": [self._ref, ray.put(q)],
                "k": k,
                "block_bytes": block_bytes,
                "threads": self.engine.search_threads,
            },
            batch_size=1,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=min(self.engine.search_workers, len(blocks))),
            num_cpus=min(self.engine.search_threads, self.engine.actor_cpus),
        )
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        ids = np.full((len(q), k), -1, dtype=np.int64)
        for batch in _iterate(ds):
            pos = batch["pos"].astype(np.int64)
            scores[pos], ids[pos] = batch["scores"], batch["ids"]
        return Hits(ids, scores)


class _EncodeWorker:
    """A Ray Data actor: builds its encoder once (on the first unit), then encodes unit after unit."""

    def __init__(self) -> None:
        self.encoder: Encoder | None = None

    def __call__(
        self,
        batch: dict[str, np.ndarray],
        *,
        setup: tuple[Any, ...],
        normalize: bool,
        batch_size: int,
        threads: int | None,
    ) -> dict[str, np.ndarray]:
        if self.encoder is None:
            factory, model, params, identity, dim = setup
            encoder = factory(model, params)
            if threads is not None and "torch" in sys.modules:
                sys.modules["torch"].set_num_threads(threads)
            if encoder.identity != identity or encoder.dim != dim:
                raise BackendError(
                    f"a Ray worker's model ({encoder.identity}, dim {encoder.dim}) is not the driver's "
                    f"({identity}, dim {dim}): install the same model files on every node"
                )
            self.encoder = encoder
        positions, vectors = [], []
        for start, texts in zip(batch["start"], batch["texts"], strict=True):
            unit = [str(t) for t in texts]
            v = self.encoder.encode(unit, normalize=normalize, batch_size=batch_size, progress=lambda n: None)
            vectors.append(_checked(v, len(unit), self.encoder.dim))
            positions.append(np.arange(int(start), int(start) + len(unit), dtype=np.int64))
        return {"pos": np.concatenate(positions), "vector": np.concatenate(vectors)}


class _SearchWorker:
    """A Ray Data actor: top-k of query blocks over the corpus matrix held in the object store."""

    def __call__(
        self, batch: dict[str, np.ndarray], *, refs: list[Any], k: int, block_bytes: int, threads: int
    ) -> dict[str, np.ndarray]:
        ray = ray_module(data=True)
        vectors, queries = ray.get(refs[0]), ray.get(refs[1])
        positions, scores, ids = [], [], []
        for lo, hi in zip(batch["lo"], batch["hi"], strict=True):
            with blas_limit(threads):
                s, i = topk_inner_product(queries[int(lo) : int(hi)], vectors, k, block_bytes=block_bytes)
            positions.append(np.arange(int(lo), int(hi), dtype=np.int64))
            scores.append(s)
            ids.append(i)
        return {"pos": np.concatenate(positions), "scores": np.concatenate(scores), "ids": np.concatenate(ids)}


def blas_threads() -> int:
    """Threads of numpy's BLAS in this process (threadpoolctl; else the usual variables, else the CPUs)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        pass
    else:
        blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        numpys = [i for i in blas if "numpy" in str(i.get("filepath", ""))]  # not scipy's or torch's
        if numpys or blas:
            return max(int(i["num_threads"]) for i in (numpys or blas))
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def blas_limit(threads: int) -> contextlib.AbstractContextManager[Any]:
    """Run BLAS with ``threads`` threads inside the block (with threadpoolctl; Ray already sets
    OMP_NUM_THREADS to an actor's CPUs, the same number whenever the cluster has that many)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


def torch_threads() -> int:
    """torch's intra-op threads in this process, when torch is loaded (a model runs on it); else 1."""
    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else 1


def _iterate(ds: Any) -> Any:
    """The dataset's output batches; a worker's failure becomes the `RankgateError` it raised, or a `BackendError`."""
    try:
        yield from ds.iter_batches(batch_size=None, batch_format="numpy")
    except Exception as e:
        cause = _root_cause(e)
        if isinstance(cause, RankgateError):
            if cause.args and isinstance(cause.args[0], str):  # Ray Data appends its retry advice
                cause.args = (cause.args[0].split("\nFailed to apply ")[0], *cause.args[1:])
            raise cause.with_traceback(None) from None
        raise BackendError(f"a Ray Data job failed: {_last_error_line(cause)}") from None


def _root_cause(error: BaseException) -> BaseException:
    """The worker's own error under Ray's wrappers: the first rankgate error in the chain, else the innermost."""
    seen: set[int] = set()
    current: BaseException | None = error
    last = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, RankgateError) and type(current).__module__ == RankgateError.__module__:
            return current
        last = current
        inner = getattr(current, "cause", None)  # RayTaskError keeps the original exception here
        current = inner if isinstance(inner, BaseException) else (current.__cause__ or current.__context__)
    return last


def _last_error_line(error: BaseException) -> str:
    """``Type: message`` of the innermost exception named in Ray's text (which carries the worker's traceback)."""
    lines = [line.strip() for line in str(error).splitlines()]
    raised = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b.*:", line)]
    return raised[0] if raised else f"{type(error).__name__}: {lines[0] if lines else ''}"

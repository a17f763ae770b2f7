"""Exact inner-product search of query blocks on a pool of Ray CPU actors, cut as one process cuts them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.bench.progress import Progress
from rankgate.bench.ray_data import iterate_batches
from rankgate.bench.retrievers.base import Hits
from rankgate.bench.threads import blas_limit
from rankgate.bench.topk import DEFAULT_BLOCK_BYTES, TILE_COLUMNS, topk_inner_product
from rankgate.evaluation.engines.ray_cluster import ray_module

if TYPE_CHECKING:
    from rankgate.bench.ray_search import RayBench


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
    """Exact inner-product search; batches of two or more queries run on Ray (see `rankgate.bench.ray_search`)."""

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
        for batch in iterate_batches(ds):
            pos = batch["pos"].astype(np.int64)
            scores[pos], ids[pos] = batch["scores"], batch["ids"]
        return Hits(ids, scores)


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

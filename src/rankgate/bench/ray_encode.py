"""Corpus encoding on a Ray actor pool, in the local path's units, so the vectors match it bit for bit."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.bench.embedcache import WRITE_CHUNK, CacheLookup, EmbeddingCache, checked_vectors
from rankgate.bench.encoders import UNIT_BATCHES, Encoder
from rankgate.bench.progress import Advance
from rankgate.bench.ray_data import iterate_batches
from rankgate.errors import BackendError
from rankgate.evaluation.engines.ray_cluster import ray_module

if TYPE_CHECKING:
    from rankgate.bench.ray_search import RayBench

EncoderFactory = Callable[[str | None, Mapping[str, Any]], Encoder]


@dataclass
class EncodeJob:
    """One Ray Data job: units of texts to an actor pool of encoders, vectors back in order."""

    engine: RayBench
    encoder: Encoder
    factory: EncoderFactory
    model: str | None
    params: dict[str, Any]
    normalize: bool
    batch_size: int
    progress: Advance

    def encode(self, texts: Sequence[str], cache: EmbeddingCache | None) -> tuple[np.ndarray, dict[str, Any]]:
        """Vectors of ``texts`` (float32, in order), encoding on Ray only what ``cache`` lacks.

        Returns:
            (vectors, counts): counts hold ``encoded``, ``cached`` and ``encode_seconds``.
        """
        start = time.perf_counter()
        if cache is None:
            vectors = self.run(list(texts), [len(texts)], None)
            return vectors, {"encoded": len(texts), "cached": 0, "encode_seconds": time.perf_counter() - start}
        lookup = CacheLookup(cache, self.encoder.identity, self.normalize, self.encoder.dim, texts)
        if lookup.cached:
            self.progress(lookup.cached)
        todo = lookup.missing_texts
        chunks = [min(WRITE_CHUNK, len(todo) - lo) for lo in range(0, len(todo), WRITE_CHUNK)]
        start = time.perf_counter()
        self.run(todo, chunks, lambda lo, hi, v: lookup.store(lo, v))
        seconds = time.perf_counter() - start
        return lookup.vectors(), {"encoded": len(todo), "cached": lookup.cached, "encode_seconds": seconds}

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
        for batch in iterate_batches(ds):
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
            vectors.append(checked_vectors(v, len(unit), self.encoder.dim))
            positions.append(np.arange(int(start), int(start) + len(unit), dtype=np.int64))
        return {"pos": np.concatenate(positions), "vector": np.concatenate(vectors)}

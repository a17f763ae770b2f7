"""The Ray cluster of ``rankgate bench --engine ray``: its size, and the corpus encoding and exact search sent to it.

What runs on Ray, and how it stays identical to the local engine:

- **Corpus encoding.** The texts the embedding cache misses are cut into *units*, exactly the
  lists the local path hands to the model in one call (the cache's write chunks of
  `rankgate.bench.embedcache.WRITE_CHUNK` texts, each cut into ``batch_size * 8`` texts, as
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.bench.embedcache import EmbeddingCache
from rankgate.bench.encoders import Encoder
from rankgate.bench.progress import Advance
from rankgate.bench.ray_data import quiet_ray_data
from rankgate.bench.ray_encode import EncodeJob, EncoderFactory
from rankgate.bench.ray_exact import RayExactIndex
from rankgate.bench.threads import blas_threads, torch_threads
from rankgate.bench.topk import DEFAULT_BLOCK_BYTES
from rankgate.evaluation.engines.ray_cluster import join

__all__ = ["EncoderFactory", "RayBench", "RayExactIndex"]

MAX_CPU_WORKERS = 16


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
        quiet_ray_data(ray)
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
        job = EncodeJob(self, encoder, factory, model, worker_params, normalize, batch_size, progress)
        return job.encode(texts, cache)

    # -- search ------------------------------------------------------------------------------------
    def exact_index(self, block_mb: int = DEFAULT_BLOCK_BYTES >> 20) -> RayExactIndex:
        """An exact index whose batch searches run on this cluster."""
        return RayExactIndex(self, block_mb)

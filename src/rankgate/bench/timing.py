"""Timing helpers: latency percentiles and the one-query-at-a-time probe."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankgate.bench.progress import Advance
from rankgate.bench.retrievers.base import Retriever
from rankgate.bench.threads import blas_limit, compute_threads


def percentiles_ms(seconds: Sequence[float]) -> dict[str, Any]:
    """p50/p95/p99 and mean of durations, in milliseconds (linear interpolation; None when empty).

    >>> percentiles_ms([0.001, 0.002, 0.003, 0.004])["p50"]
    2.5
    """
    if len(seconds) == 0:
        return {"p50": None, "p95": None, "p99": None, "mean": None, "n": 0}
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99), "mean": float(ms.mean()), "n": len(ms)}


def probe_latency(
    retriever: Retriever,
    texts: Sequence[str],
    k: int,
    *,
    warmup: int = 3,
    threads: int | None = 1,
    progress: Advance | None = None,
) -> tuple[list[float], list[float]]:
    """Search one query at a time, as a service would, and time each.

    The query is encoded without the embedding cache (encoding is part of a real query's cost).
    torch and BLAS run with ``threads`` threads meanwhile (None: as they are), so the figure is
    a serving worker's and does not swing with the machine's load.

    Returns:
        (end-to-end seconds: encode + search, search-only seconds), one per query of ``texts``.
    """
    total: list[float] = []
    search: list[float] = []
    # numpy's BLAS on one thread meanwhile: one query's product over the vectors gains nothing
    # from threads, and OpenBLAS's idle workers spin on the cores torch's encoder needs next
    # (5,183 documents: 23.8 ms a query with two BLAS threads, 10.6 ms with one).
    with compute_threads(threads), blas_limit(1):
        for text in list(texts)[:warmup]:
            retriever.search(retriever.encode_queries([text], cached=False), k)
        for text in texts:
            t0 = time.perf_counter()
            encoded = retriever.encode_queries([text], cached=False)
            t1 = time.perf_counter()
            retriever.search(encoded, k)
            t2 = time.perf_counter()
            total.append(t2 - t0)
            search.append(t2 - t1)
            if progress is not None:
                progress(1)
    return total, search

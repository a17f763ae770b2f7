"""Benchmark retrievers and vector indexes on labeled data: quality and cost in one table.

>>> from rankgate.bench import load_dataset, plan_from_dict, run_benchmark
>>> plan = plan_from_dict({"measures": ["nDCG@10"], "latency": {"queries": 0},
...                        "matrix": {"retrievers": ["bm25"], "k": [10]}})
>>> report = run_benchmark("demo", plan)
>>> round(report["bm25/-/k=10"].metrics["nDCG@10"], 4)
0.6152

Importing this package is cheap: BM25 (bm25s), sentence-transformers and FAISS are imported
when a retriever or index first needs them, and a missing one is a `BackendError` that names
the ``bench`` extra. See docs/bench.md.
"""

from rankgate.bench.chunking import ChunkSpec
from rankgate.bench.datasets import Dataset, load_dataset
from rankgate.bench.embedcache import CachedEncoder, EmbeddingCache, default_cache_dir
from rankgate.bench.encoders import Encoder, HashingEncoder, SentenceTransformerEncoder
from rankgate.bench.harness import hits_to_run, neighbor_recall, run_benchmark
from rankgate.bench.indexes import IndexSpec, make_index
from rankgate.bench.matrix import BenchPlan, LatencySpec, RetrieverSpec, load_plan, plan_from_dict
from rankgate.bench.record import record_report
from rankgate.bench.report import BenchReport, ConfigResult
from rankgate.bench.topk import topk_inner_product

__all__ = [
    "BenchPlan",
    "BenchReport",
    "CachedEncoder",
    "ChunkSpec",
    "ConfigResult",
    "Dataset",
    "EmbeddingCache",
    "Encoder",
    "HashingEncoder",
    "IndexSpec",
    "LatencySpec",
    "RetrieverSpec",
    "SentenceTransformerEncoder",
    "default_cache_dir",
    "hits_to_run",
    "load_dataset",
    "load_plan",
    "make_index",
    "neighbor_recall",
    "plan_from_dict",
    "record_report",
    "run_benchmark",
    "topk_inner_product",
]

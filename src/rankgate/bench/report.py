"""The outcome of a benchmark: one `ConfigResult` per configuration, gathered in a `BenchReport`.

``BenchReport.to_dict()`` is the JSON contract of ``rankgate bench --format json`` (DESIGN.md)::

    {"dataset": {...}, "measures": [...],
     "results": [{"id", "retriever", "index", "params", "k", "metrics": {name: value},
                  "latency_ms": {"p50", "p95", "p99", "mean", "n"}, "search_latency_ms": {...},
                  "throughput_qps", "neighbor_recall", "build": {"seconds", "index_bytes"},
                  "build_s", "memory_bytes" (the same two, flat), "encoding": {...},
                  "queries": {...}, "run_file", "store_id", "retriever_info": {...}}, ...],
     "settings": {...}, "versions": {...}, "machine": {...}, "warnings": [...]}
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from rankgate.core.run import Run
from rankgate.evaluation.results import Results


def caption(threads: int | None = 1) -> str:
    """What the table's figures mean; ``threads``: the latency probe's (``latency.threads``)."""
    on = f" on {threads} thread{'s' if threads != 1 else ''}" if threads else ""
    return (
        f"latency: one query at a time{on}, encode + search; search q/s: one batch of all queries, search alone "
        "(live: the queries asked one after another, the service's encoding included); "
        "nbr recall: share of the exact search's top k found"
    )


@dataclass
class ConfigResult:
    """One configuration's run, its evaluation (per query, in ``results``) and its costs.

    Attributes:
        retriever: the retriever's name.
        index: the index kind (None for retrievers without a vector index, e.g. BM25).
        params: the index's resolved parameters.
        k: documents retrieved per query.
        results: the `Results` of ``rankgate.evaluate`` (per-query values: for compare and gate).
        run: the `Run` that was evaluated.
        run_file: where the TREC run was written (None when no output folder was given).
        neighbor_recall: mean over queries of |approximate top-k & exact top-k| / |exact top-k|
            (approximate indexes only).
        latency_ms: one query at a time, encode + search: p50/p95/p99/mean/n.
        search_latency_ms: the same queries, search alone.
        throughput_qps: queries per second of one batched search of all queries (search alone).
        build: index build seconds and index bytes.
        encoding: corpus encoding (dense): texts, encoded, cached, seconds, texts per second.
        retriever_info: kind, model identity and parameters of the retriever.
        store_id: the id of this configuration's result in the results store, once recorded.
    """

    retriever: str
    index: str | None
    params: dict[str, Any]
    k: int
    results: Results
    run: Run
    run_file: str | None = None
    neighbor_recall: float | None = None
    latency_ms: dict[str, Any] = field(default_factory=dict)
    search_latency_ms: dict[str, Any] = field(default_factory=dict)
    throughput_qps: float | None = None
    build: dict[str, Any] = field(default_factory=dict)
    encoding: dict[str, Any] | None = None
    retriever_info: dict[str, Any] = field(default_factory=dict)
    store_id: int | None = None

    @property
    def id(self) -> str:
        """``retriever/index(params)/k=K``, unique within a report; also the run's name."""
        return config_id(self.retriever, self.index, self.params, self.k)

    @property
    def metrics(self) -> dict[str, float]:
        return self.results.aggregate

    def meta(self) -> dict[str, Any]:
        """Everything but the per-query values: what a results store records beside them."""
        out = self.to_dict()
        out.pop("metrics")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "retriever": self.retriever,
            "index": self.index,
            "params": dict(self.params),
            "k": self.k,
            "metrics": {k: _finite(v) for k, v in self.metrics.items()},
            "latency_ms": dict(self.latency_ms),
            "search_latency_ms": dict(self.search_latency_ms),
            "throughput_qps": self.throughput_qps,
            "neighbor_recall": self.neighbor_recall,
            "build": dict(self.build),
            "build_s": self.build.get("seconds"),
            "memory_bytes": self.build.get("index_bytes"),
            "encoding": None if self.encoding is None else dict(self.encoding),
            "queries": dict(self.results.queries),
            "run_file": self.run_file,
            "store_id": self.store_id,
            "retriever_info": self.retriever_info,
        }


@dataclass
class BenchReport:
    """All configurations of a benchmark, with the dataset, settings, versions and machine."""

    dataset: dict[str, Any]
    measures: list[str]
    results: list[ConfigResult]
    settings: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __getitem__(self, config_id: str) -> ConfigResult:
        for r in self.results:
            if r.id == config_id:
                return r
        raise KeyError(f"no configuration {config_id!r} (have: {', '.join(r.id for r in self.results)})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": dict(self.dataset),
            "measures": list(self.measures),
            "results": [r.to_dict() for r in self.results],
            "settings": dict(self.settings),
            "versions": dict(self.versions),
            "machine": dict(self.machine),
            "warnings": list(self.warnings),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def rows(self) -> list[dict[str, Any]]:
        """Flat rows: configuration, metrics, neighbor recall and costs (the summary table's cells)."""
        out = []
        for r in self.results:
            row: dict[str, Any] = {"retriever": r.retriever, "index": _index_label(r), "k": r.k}
            row.update(r.metrics)
            row["nbr recall"] = r.neighbor_recall
            row["p50 ms"] = r.latency_ms.get("p50")
            row["p95 ms"] = r.latency_ms.get("p95")
            row["p99 ms"] = r.latency_ms.get("p99")
            row["search q/s"] = r.throughput_qps
            row["build s"] = r.build.get("seconds")
            size = r.build.get("index_bytes")
            row["index MB"] = None if size is None else size / 1e6
            row["enc texts/s"] = (r.encoding or {}).get("texts_per_s")
            out.append(row)
        return out


def config_id(retriever: str, index: str | None, params: dict[str, Any], k: int) -> str:
    """The id of a configuration.

    >>> config_id("dense", "hnsw", {"M": 16}, 10), config_id("bm25", None, {}, 100)
    ('dense/hnsw(M=16)/k=10', 'bm25/-/k=100')
    """
    return f"{retriever}/{index_label(index, params)}/k={k}"


def index_label(index: str | None, params: dict[str, Any]) -> str:
    """``-`` without an index; ``exact``; ``hnsw(M=16,ef_search=64)``."""
    if index is None:
        return "-"
    if index == "exact" or not params:
        return index
    return f"{index}(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")"


def _index_label(r: ConfigResult) -> str:
    return index_label(r.index, r.params)


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value

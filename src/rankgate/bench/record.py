"""Record a benchmark's configurations in the results store (`rankgate.store.base`).

Each configuration becomes one stored result: its per-query values (so ``compare``, ``gate``
and ``report`` can use it like any ``rankgate eval`` result), named by its configuration id
(``dense/hnsw(M=32,...)/k=100``), with the costs and settings in its labels::

    {"source": "bench", "dataset": "demo", "retriever": "dense", "index": "hnsw", "params": {...},
     "k": 100, "latency_ms": {...}, "throughput_qps": ..., "neighbor_recall": ..., "build": {...},
     "encoding": {...}, "model": "all-MiniLM-L6-v2@...", ...user labels}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from rankgate.bench.report import BenchReport
from rankgate.core.qrels import Qrels

_LABEL_KEYS = (
    "retriever",
    "index",
    "params",
    "k",
    "latency_ms",
    "search_latency_ms",
    "throughput_qps",
    "neighbor_recall",
    "build",
    "encoding",
)


def record_report(
    report: BenchReport,
    store: Any,
    *,
    qrels: Qrels,
    labels: Mapping[str, Any] | None = None,
) -> list[int]:
    """Add every configuration of ``report`` to ``store``; set and return their ids.

    Args:
        report: what `rankgate.bench.run_benchmark` returned.
        store: an open store (`rankgate.store.base.open_store`), or its URL / path.
        qrels: the judgments the report was evaluated on (their fingerprint is stored).
        labels: extra labels kept on every result (they replace ours of the same key).

    Returns:
        The stored ids, in the order of ``report.results`` (also set as each result's ``store_id``).

    Raises:
        InputError, BackendError: the store cannot be opened or written.
    """
    if isinstance(store, str | os.PathLike):
        from rankgate.store.base import open_store

        with open_store(store) as opened:
            return record_report(report, opened, qrels=qrels, labels=labels)
    ids = []
    for result in report.results:
        meta = result.to_dict()
        tags: dict[str, Any] = {
            "source": "bench",
            "dataset": report.dataset.get("name"),
            **{key: meta[key] for key in _LABEL_KEYS},
        }
        model = result.retriever_info.get("model")
        if model is not None:
            tags["model"] = model
        tags.update(labels or {})
        rid = store.add(result.results, name=result.id, qrels=qrels, labels=tags)
        result.store_id = rid
        ids.append(rid)
    return ids

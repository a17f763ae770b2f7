"""Bench results (``rankgate bench --format json``) as table rows and chart points for the report.

A result is ``{"retriever", "index", "params", "metrics", "latency_ms": {"p50", ...},
"throughput_qps", "neighbor_recall", "build_s", "memory_bytes", ...}``; every field but
``retriever`` may be missing or null (a BM25 result has no index and no neighbor recall).

>>> pts, x, y = neighbor_points([
...     {"retriever": "dense", "index": "exact", "throughput_qps": 100.0, "metrics": {"R@10": 0.9}},
...     {"retriever": "dense", "index": "hnsw", "throughput_qps": 900.0, "neighbor_recall": 0.93},
... ])
>>> [(p["index"], p["x"], p["y"]) for p in pts], x, y
([('exact', 100.0, 1.0), ('hnsw', 900.0, 0.93)], 'throughput (queries/s)', 'neighbor recall')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

EXACT_KINDS = frozenset({"exact", "flat", "brute-force", "bruteforce"})


def is_exact(r: Mapping[str, Any]) -> bool:
    """Exact (brute-force) vector search: it finds every true nearest neighbor."""
    return str(r.get("index") or "").lower() in EXACT_KINDS


def neighbor_recall(r: Mapping[str, Any]) -> tuple[float | None, str]:
    """A result's neighbor recall and its label (a dict ``{"@10": 0.97}`` gives its first entry)."""
    value = r.get("neighbor_recall")
    if isinstance(value, Mapping):
        for key, v in value.items():
            if v is not None:
                return float(v), f"neighbor recall{key if str(key).startswith('@') else '@' + str(key)}"
        return None, "neighbor recall"
    return (None if value is None else float(value)), "neighbor recall"


def ann_recall(results: Sequence[Mapping[str, Any]]) -> float | None:
    """The lowest neighbor recall of an approximate index among ``results``, or None."""
    known = [v for v, _ in (neighbor_recall(r) for r in results if r.get("index") and not is_exact(r))]
    values = [v for v in known if v is not None]
    return min(values) if values else None


def params_text(params: Any) -> str:
    if isinstance(params, Mapping):
        return ", ".join(f"{k}={v}" for k, v in params.items())
    return "" if params is None else str(params)


def bench_row(r: Mapping[str, Any]) -> dict[str, Any]:
    """One row of the bench table."""
    memory = r.get("memory_bytes")
    return {
        "retriever": str(r.get("retriever", "")),
        "index": str(r.get("index") or "-"),
        "params": params_text(r.get("params")),
        "metrics": r.get("metrics") or {},
        "latency": r.get("latency_ms") or {},
        "qps": r.get("throughput_qps"),
        "neighbor_recall": neighbor_recall(r)[0],
        "build_s": r.get("build_s"),
        "memory_mb": None if memory is None else memory / 1e6,
    }


def neighbor_points(results: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], str, str]:
    """(throughput, neighbor recall) per result; exact search counts as 1 (it finds every exact neighbor).

    Returns no points when no result holds a neighbor recall. The x axis is the batched
    throughput, or 1000 / p50 latency where no result has a throughput.
    """
    x_label = _x_label(results)
    with_nr = [neighbor_recall(r) for r in results]
    if not any(v is not None for v, _ in with_nr):
        return [], x_label, ""
    y_label = next(label for v, label in with_nr if v is not None)

    def y_of(r: Mapping[str, Any]) -> float | None:
        v = neighbor_recall(r)[0]
        return 1.0 if v is None and is_exact(r) else v

    return _points(results, y_of), x_label, y_label


def _x_label(results: Sequence[Mapping[str, Any]]) -> str:
    if any(r.get("throughput_qps") for r in results):
        return "throughput (queries/s)"
    return "queries/s (1000 / p50 latency in ms)"


def quality_points(results: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], str, str]:
    """(throughput, recall measure) per result: the task's recall against speed, beside neighbor recall."""
    x_label = _x_label(results)
    recall = [str(m) for r in results for m in (r.get("metrics") or {}) if str(m).startswith("R@")]
    if not recall:
        return [], x_label, ""
    y_label = max(sorted(set(recall)), key=recall.count)

    def y_of(r: Mapping[str, Any]) -> float | None:
        value = (r.get("metrics") or {}).get(y_label)
        return None if value is None else float(value)

    return _points(results, y_of), x_label, y_label


def _points(results: Sequence[Mapping[str, Any]], y_of: Any) -> list[dict[str, Any]]:
    use_qps = any(r.get("throughput_qps") for r in results)
    points = []
    for r in results:
        p50 = (r.get("latency_ms") or {}).get("p50")
        x = r.get("throughput_qps") if use_qps else (1000.0 / p50 if p50 else None)
        y = y_of(r)
        if x and y is not None:
            row = bench_row(r)
            label = f"{row['retriever']} {row['index']}" + (f" ({row['params']})" if row["params"] else "")
            points.append(
                {
                    "x": float(x),
                    "y": y,
                    "retriever": row["retriever"],
                    "index": row["index"],
                    "short": short_labels(results, r),
                    "label": label,
                    "exact": is_exact(r),
                }
            )
    return points


def short_labels(results: Sequence[Mapping[str, Any]], r: Mapping[str, Any]) -> str:
    """The text beside a point: the index and the parameters that vary among results of that index.

    >>> rs = [{"retriever": "d", "index": "hnsw", "params": {"M": 16, "ef_search": s}} for s in (8, 64)]
    >>> short_labels(rs, rs[1]), short_labels(rs, {"retriever": "bm25", "index": None})
    ('hnsw ef_search=64', 'bm25')
    """
    index = r.get("index")
    if not index:
        return str(r.get("retriever", ""))
    raw = r.get("params")
    params: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    same = [
        o.get("params") or {}
        for o in results
        if o.get("index") == index
        and o.get("retriever") == r.get("retriever")
        and isinstance(o.get("params") or {}, Mapping)
    ]
    varying = [k for k in params if len({repr(p.get(k)) for p in same}) > 1]
    return " ".join([str(index), *(f"{k}={params[k]}" for k in varying)])

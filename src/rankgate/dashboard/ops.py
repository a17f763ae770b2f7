"""Operational figures of a stored result (latency, throughput, index size), read defensively.

Stores of schema version 2 keep them in the ``figures`` column (written by ``rankgate gate
--bench`` with `rankgate.gate.figures`' names: ``latency_p95_ms``, ``qps``, ``index_mb``,
``build_s``); older results recorded by ``bench`` carry them in their labels. `operational`
looks in every place they may be: a column or key ``figures`` (or ``operational``, ``ops``) of
the stored row, the same keys inside ``labels`` or ``provenance``, and then the plain keys
themselves in those dicts. Anything that is
not a finite number (or a string holding one) is ignored; nothing here raises.

Canonical keys (the order they are shown in): `FIGURES`.

>>> operational({"labels": {"latency_ms": {"p50": 3.5, "p99": "x"}, "qps": 210}})
{'latency_ms.p50': 3.5, 'qps': 210.0}
>>> operational({"operational": {"latency_p95_ms": 9, "index_size_bytes": 1024}})
{'latency_ms.p95': 9.0, 'index_bytes': 1024.0}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

# Canonical key -> (shown as, unit).
FIGURES: dict[str, tuple[str, str]] = {
    "latency_ms.p50": ("latency p50", "ms"),
    "latency_ms.p95": ("latency p95", "ms"),
    "latency_ms.p99": ("latency p99", "ms"),
    "qps": ("throughput", "queries/s"),
    "index_bytes": ("index size", "bytes"),
    "index_mb": ("index size", "MB"),
    "build_s": ("build time", "s"),
}
# Other spellings of the flat keys.
ALIASES: dict[str, str] = {
    "latency_p50_ms": "latency_ms.p50",
    "latency_p95_ms": "latency_ms.p95",
    "latency_p99_ms": "latency_ms.p99",
    "p50_ms": "latency_ms.p50",
    "p95_ms": "latency_ms.p95",
    "p99_ms": "latency_ms.p99",
    "throughput_qps": "qps",
    "queries_per_second": "qps",
    "index_size_bytes": "index_bytes",
    "index_size": "index_bytes",
}
CONTAINERS = ("figures", "operational", "ops")


def operational(row: Mapping[str, Any]) -> dict[str, float]:
    """The operational figures found in a stored row (a mapping of its columns), by canonical key."""
    found: dict[str, float] = {}
    places: list[Any] = [row.get(c) for c in CONTAINERS]
    for outer in ("labels", "provenance"):
        inner = row.get(outer)
        if isinstance(inner, Mapping):
            places.extend(inner.get(c) for c in CONTAINERS)
            places.append(inner)
    for place in places:
        if isinstance(place, Mapping):
            for key, value in _flat(place):
                found.setdefault(key, value)
    return {k: found[k] for k in FIGURES if k in found}


def _flat(place: Mapping[str, Any]) -> list[tuple[str, float]]:
    out: list[tuple[str, float]] = []
    latency = place.get("latency_ms")
    if isinstance(latency, Mapping):
        for q in ("p50", "p95", "p99"):
            value = _number(latency.get(q))
            if value is not None:
                out.append((f"latency_ms.{q}", value))
    for key, value in place.items():
        canonical = ALIASES.get(str(key), str(key))
        number = _number(value)
        if canonical in FIGURES and number is not None:
            out.append((canonical, number))
    return out


def _number(value: Any) -> float | None:
    """A finite number from a number or a numeric string (labels given on the command line are text).

    >>> _number(3), _number("2.5"), _number("fast"), _number(True), _number(float("nan"))
    (3.0, 2.5, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def label(key: str) -> str:
    """``latency_ms.p95 -> 'latency p95 (ms)'``."""
    name, unit = FIGURES.get(key, (key, ""))
    return f"{name} ({unit})" if unit else name

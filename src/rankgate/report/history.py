"""History of metrics from the results store, for the report's history charts.

`load_history` reads the stored results (newest first from the store, returned oldest first)
and the baseline, and keeps the values of the metrics asked for: measures, and the operational
figures stored with a result (``latency_p95_ms``, ``qps``, ...), so latency is charted over
time too. Any object with the
store's ``list`` and ``baseline`` methods works, so tests can pass a small fake.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

DEFAULT_LIMIT = 200
MAX_METRICS = 6


@dataclass(frozen=True)
class HistoryPoint:
    """One stored result: when, which system, where from, and its aggregates."""

    id: int
    created_at: datetime
    name: str
    commit: str | None
    branch: str | None
    aggregate: dict[str, float | None]

    @property
    def label(self) -> str:
        """Hover text: ``#12 dense main@4f2a9c1e 2025-01-31 12:00 UTC``."""
        where = "@".join(b for b in (self.branch or "", (self.commit or "")[:8]) if b)
        when = self.created_at.strftime("%Y-%m-%d %H:%M UTC")
        return " ".join(b for b in (f"#{self.id}", self.name, where, when) if b)


@dataclass
class History:
    """Stored results (oldest first), the baseline, and the metrics to chart."""

    store: str
    metrics: list[str]
    points: list[HistoryPoint]
    baseline: HistoryPoint | None
    notes: list[str] = field(default_factory=list)
    filters: dict[str, str] = field(default_factory=dict)  # branch and/or name asked for

    def series(self, metric: str) -> dict[str, list[dict[str, Any]]]:
        """``{name: [{"x", "y", "label"}]}`` of one metric, oldest first (points without it left out)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for p in self.points:
            value = p.aggregate.get(metric)
            if value is not None:
                out.setdefault(p.name, []).append({"x": _iso(p.created_at), "y": value, "label": p.label})
        return out

    def baseline_point(self, metric: str) -> dict[str, Any] | None:
        if self.baseline is None or self.baseline.aggregate.get(metric) is None:
            return None
        b = self.baseline
        return {"x": _iso(b.created_at), "y": b.aggregate[metric], "label": b.label}


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S")


def load_history(
    store: Any,
    metrics: Sequence[str] | None = None,
    *,
    branch: str | None = None,
    name: str | None = None,
    limit: int = DEFAULT_LIMIT,
    baseline_key: str = "default",
) -> History:
    """Read the metric history from a results store.

    Args:
        store: a store URL or path (opened read-only: a missing SQLite file is an error), or
            an open store.
        metrics: canonical names to chart (the gated metrics); default: the measures most
            stored results hold, at most six.
        branch: only results of this branch.
        name: only results of this system name.
        limit: the newest ``limit`` results.
        baseline_key: which baseline to mark.
    """
    opened = _open(store)
    try:
        stored = opened.list(branch=branch, name=name, limit=limit)
        base = opened.baseline(key=baseline_key)
        url = str(getattr(opened, "url", store))
    finally:
        if opened is not store:
            opened.close()
    points = [_point(r) for r in reversed(stored)]
    baseline = _point(base) if base is not None else None
    notes: list[str] = []
    if metrics is None:
        counts = Counter(m for p in points for m in p.aggregate)
        metrics = [m for m, _ in counts.most_common(MAX_METRICS)]
    else:
        absent = [m for m in metrics if not any(p.aggregate.get(m) is not None for p in points)]
        if absent:
            notes.append(f"no stored result holds {', '.join(absent)}")
        metrics = [m for m in metrics if m not in absent]
    if len(stored) == limit:
        notes.append(f"only the newest {limit} stored results are shown")
    filters = {k: v for k, v in (("branch", branch), ("name", name)) if v is not None}
    return History(store=url, metrics=list(metrics), points=points, baseline=baseline, notes=notes, filters=filters)


def _open(store: Any) -> Any:
    if not isinstance(store, str | os.PathLike):
        return store
    from rankgate.store.base import open_store  # names the gate extra when SQLAlchemy is missing

    return open_store(store, read_only=True)


def _point(result: Any) -> HistoryPoint:
    aggregate = {
        str(k): (None if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v))
        for k, v in {**dict(result.aggregate), **dict(getattr(result, "figures", None) or {})}.items()
    }
    when: datetime = result.created_at
    when = when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when.astimezone(timezone.utc)
    return HistoryPoint(
        id=int(result.id),
        created_at=when,
        name=str(result.name),
        commit=result.commit,
        branch=result.branch,
        aggregate=aggregate,
    )

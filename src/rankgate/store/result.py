"""`StoredResult`: one evaluation as kept in the results store, and the baseline check."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.errors import InputError

if TYPE_CHECKING:
    from rankgate.evaluation.results import Results

PerQueryLoader = Callable[[], tuple[list[str], np.ndarray]]


@dataclass(frozen=True, repr=False)
class StoredResult:
    """A stored evaluation: provenance, settings, aggregates and exact per-query values.

    Attributes:
        id: the store's id of the result (never reused).
        created_at: when it was produced (aware, UTC).
        name: the system's name (e.g. "dense", the run's file stem).
        commit: git commit, when known.
        branch: git branch, when known.
        ci_url: link to the CI run, when known.
        qrels_fingerprint: `rankgate.store.fingerprint.qrels_fingerprint` of the judgments used,
            None when the result was stored without them.
        query_fingerprint: fingerprint of the evaluated query ids.
        settings: every semantic choice of the evaluation (as in ``rankgate eval --format json``).
        measures: canonical measure names, in column order.
        aggregate: ``{measure: value}`` (None for an undefined mean over zero queries).
        queries: query accounting (evaluated, missing_from_run, run_only, no_relevant).
        versions: package versions that produced it.
        labels: free key/values given when it was stored (e.g. ``{"source": "gate"}``).
        provenance: everything detected about where it ran (CI system, PR, dirty tree, ...).
        warnings: the evaluation's warnings.
        figures: operational figures measured with it (``latency_p95_ms``, ``qps``,
            ``neighbor_recall@10``, ``index_mb``, ``build_s``); for a result `rankgate bench`
            recorded without them, read from its labels.
    """

    id: int
    created_at: datetime
    name: str
    commit: str | None
    branch: str | None
    ci_url: str | None
    qrels_fingerprint: str | None
    query_fingerprint: str
    settings: dict[str, Any]
    measures: list[str]
    aggregate: dict[str, float | None]
    queries: dict[str, int]
    versions: dict[str, str]
    labels: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    n_queries: int = 0
    figures: dict[str, float] = field(default_factory=dict)
    _load: PerQueryLoader | None = field(default=None, repr=False, compare=False)

    @cached_property
    def _matrix(self) -> tuple[list[str], np.ndarray]:
        if self._load is None:
            return [], np.zeros((0, len(self.measures)))
        return self._load()

    @property
    def query_ids(self) -> list[str]:
        """Evaluated query ids, in the order of the rows of `values`."""
        return list(self._matrix[0])

    @property
    def values(self) -> np.ndarray:
        """Per-query float64 matrix (queries x measures), exactly as evaluated (a copy)."""
        return self._matrix[1].copy()

    @property
    def per_query(self) -> dict[str, dict[str, float]]:
        """``{qid: {measure: value}}``."""
        ids, values = self._matrix
        return {qid: dict(zip(self.measures, row, strict=True)) for qid, row in zip(ids, values.tolist(), strict=True)}

    def __repr__(self) -> str:
        where = "@".join(b for b in (self.branch or "", (self.commit or "")[:8]) if b)
        values = ", ".join(f"{k}={v:.4f}" if v is not None else f"{k}=None" for k, v in self.aggregate.items())
        return (
            f"<StoredResult {self.id} {self.name!r} {where or '-'} {self.created_at:%Y-%m-%d %H:%M:%S} UTC, "
            f"{self.n_queries} queries: {values}>"
        )

    def to_results(self) -> Results:
        """The `Results` this was stored from, with the exact per-query values.

        Aggregates are recomputed from the per-query values, so they equal the stored ones.
        """
        from rankgate.evaluation.results import Results
        from rankgate.measures.parse import parse_measure

        ids, values = self._matrix
        return Results(
            measures=[parse_measure(name) for name in self.measures],
            query_ids=list(ids),
            values=values.copy(),
            queries=dict(self.queries),
            settings=dict(self.settings),
            warnings=list(self.warnings),
            run_name=self.name,
            versions=dict(self.versions),
        )

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """JSON-able (``rankgate store show --format json``); NaN becomes null.

        A superset of the ``rankgate eval --format json`` object (``measures``, ``aggregate``,
        ``per_query``, ``queries``, ``settings``, ``warnings``, ``run``, ``versions``), so that
        readers of that contract (e.g. the HTML report) take it as it is.
        """
        out: dict[str, Any] = {
            "id": self.id,
            "created_at": self.created_at.isoformat(),
            "name": self.name,
            "run": self.name,  # as in `rankgate eval --format json`
            "commit": self.commit,
            "branch": self.branch,
            "ci_url": self.ci_url,
            "qrels_fingerprint": self.qrels_fingerprint,
            "query_fingerprint": self.query_fingerprint,
            "measures": list(self.measures),
            "aggregate": {k: _finite(v) for k, v in self.aggregate.items()},
        }
        if per_query:
            out["per_query"] = {qid: {k: _finite(v) for k, v in row.items()} for qid, row in self.per_query.items()}
        out.update(
            {
                "queries": dict(self.queries),
                "settings": dict(self.settings),
                "versions": dict(self.versions),
                "labels": dict(self.labels),
                "provenance": dict(self.provenance),
                "warnings": list(self.warnings),
                "figures": dict(self.figures),
            }
        )
        return out


def figures_of(stored: Any, labels: Any) -> dict[str, float]:
    """The figures column, or (a result `rankgate bench` recorded) the same figures from its labels."""
    if isinstance(stored, dict) and stored:
        return {str(k): float(v) for k, v in stored.items() if isinstance(v, int | float)}
    if not isinstance(labels, dict) or labels.get("source") != "bench":
        return {}
    latency: dict[str, Any] = labels["latency_ms"] if isinstance(labels.get("latency_ms"), dict) else {}
    build: dict[str, Any] = labels["build"] if isinstance(labels.get("build"), dict) else {}
    size = build.get("index_bytes")
    found: dict[str, Any] = {f"latency_{p}_ms": latency.get(p) for p in ("p50", "p95", "p99")}
    found["qps"] = labels.get("throughput_qps")
    found["build_s"] = build.get("seconds")
    found["index_mb"] = size / 1e6 if isinstance(size, int | float) else None
    if isinstance(labels.get("k"), int):
        found[f"neighbor_recall@{labels['k']}"] = labels.get("neighbor_recall")
    return {
        k: float(v)
        for k, v in found.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    }


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def plain(value: Any) -> Any:
    """``value`` with NumPy scalars as Python numbers, tuples as lists and NaN/inf as None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def plain_json(value: Any) -> str:
    """Strict JSON (no NaN) of ``value``, as the store writes it."""
    return json.dumps(plain(value), allow_nan=False, ensure_ascii=False)


def check_baseline_compatible(baseline: StoredResult, qrels_fingerprint: str | None, *, allow: bool) -> None:
    """Refuse to compare with a baseline evaluated on other judgments, unless ``allow``.

    Args:
        baseline: the stored baseline.
        qrels_fingerprint: fingerprint of the judgments the candidate is evaluated on.
        allow: accept a different (or unknown) fingerprint anyway.

    Raises:
        InputError: the fingerprints differ, or one of them is unknown, and ``allow`` is False.
    """
    if allow or (baseline.qrels_fingerprint is not None and baseline.qrels_fingerprint == qrels_fingerprint):
        return
    hint = "; pass --allow-qrels-change to compare anyway"
    if baseline.qrels_fingerprint is None:
        raise InputError(
            f"baseline {baseline.id} was stored without a qrels fingerprint, so it cannot be checked "
            f"against the qrels in use{hint}"
        )
    if qrels_fingerprint is None:
        raise InputError(f"no qrels fingerprint to check baseline {baseline.id} against{hint}")
    raise InputError(
        f"baseline {baseline.id} was evaluated on different qrels (fingerprint "
        f"{baseline.qrels_fingerprint[:8]}.. vs {qrels_fingerprint[:8]}..){hint}"
    )

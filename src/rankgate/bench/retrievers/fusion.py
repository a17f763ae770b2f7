"""Hybrid retrieval: fuse the rankings of several retrievers.

- ``rrf``: reciprocal rank fusion, ``score(d) = sum_i w_i / (rrf_k + rank_i(d))`` with ranks from 1
  and ``rrf_k = 60`` (Cormack et al., 2009); a list that misses ``d`` adds nothing.
- ``weighted``: each list's scores are min-max normalized per query to [0, 1] (all 1 when they
  are equal), then ``score(d) = sum_i w_i * norm_i(d)``; a list that misses ``d`` adds 0.

Each component retrieves ``max(k, depth)`` documents (``depth`` 100 by default). Fused scores that
tie are ordered by corpus position, so the output is deterministic.

>>> a = Hits(np.array([[0, 1, -1]]), np.array([[3.0, 1.0, -np.inf]]))
>>> b = Hits(np.array([[1, 2, 0]]), np.array([[0.9, 0.8, 0.1]]))
>>> fuse([a, b], 3, method="rrf", weights=[1.0, 1.0], rrf_k=60).ids.tolist()
[[1, 0, 2]]
>>> fuse([a, b], 3, method="weighted", weights=[0.5, 0.5], rrf_k=60).scores.round(3).tolist()
[[0.5, 0.5, 0.438]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankgate.bench.progress import Progress
from rankgate.bench.retrievers.base import Hits, Retriever, StageInfo
from rankgate.errors import ConfigError

FUSION_METHODS: tuple[str, ...] = ("rrf", "weighted")


def fuse(lists: Sequence[Hits], k: int, *, method: str, weights: Sequence[float], rrf_k: float = 60) -> Hits:
    """Fuse per-query rankings (each best first) into one top-``k`` ranking."""
    if method not in FUSION_METHODS:
        raise ConfigError(f"unknown fusion {method!r}; choose one of {', '.join(FUSION_METHODS)}", key_path="fusion")
    m = lists[0].num_queries
    rows: list[tuple[list[int], list[float]]] = []
    for q in range(m):
        total: dict[int, float] = {}
        for hits, w in zip(lists, weights, strict=True):
            ids, scores = hits.row(q)
            if len(ids) == 0:
                continue
            if method == "rrf":
                contrib = w / (rrf_k + np.arange(1, len(ids) + 1, dtype=np.float64))
            else:
                s = scores.astype(np.float64)
                span = s.max() - s.min()
                contrib = w * ((s - s.min()) / span if span > 0 else np.ones_like(s))
            for d, c in zip(ids.tolist(), contrib.tolist(), strict=True):
                total[d] = total.get(d, 0.0) + c
        ranked = sorted(total.items(), key=lambda item: (-item[1], item[0]))[:k]
        rows.append(([d for d, _ in ranked], [s for _, s in ranked]))
    return Hits.from_lists(rows, k)


class FusionRetriever:
    """Fuses the rankings of its components (see the module docstring).

    Args:
        name: label in the results.
        components: the retrievers to fuse (shared with their own benchmark rows).
        method: ``rrf`` or ``weighted``.
        weights: one per component (default: all 1).
        rrf_k: the RRF constant.
        depth: documents taken from each component.
    """

    def __init__(
        self,
        name: str,
        components: Sequence[Retriever],
        *,
        method: str = "rrf",
        weights: Sequence[float] | None = None,
        rrf_k: float = 60,
        depth: int = 100,
    ) -> None:
        if method not in FUSION_METHODS:
            raise ConfigError(
                f"unknown fusion {method!r}; choose one of {', '.join(FUSION_METHODS)}", key_path="fusion"
            )
        if len(components) < 2:
            raise ConfigError("a hybrid retriever fuses at least two retrievers", key_path="of")
        self.name = name
        self.components = list(components)
        self.weights = [1.0] * len(components) if weights is None else [float(w) for w in weights]
        if len(self.weights) != len(self.components):
            raise ConfigError(f"{len(self.weights)} weights for {len(self.components)} retrievers", key_path="weights")
        self.params: dict[str, Any] = {
            "fusion": method,
            "of": [c.name for c in self.components],
            "weights": self.weights,
            "depth": depth,
        }
        if method == "rrf":
            self.params["rrf_k"] = rrf_k

    @property
    def uses_index(self) -> bool:
        return any(c.uses_index for c in self.components)

    def describe(self) -> dict[str, Any]:
        return {"kind": "hybrid", "params": dict(self.params), "components": [c.describe() for c in self.components]}

    def prepare(self, texts: Sequence[str], progress: Progress) -> StageInfo:
        total = StageInfo()
        for c in self.components:
            total = total + c.prepare(texts, progress)
        return total

    def build(self, index: Any, progress: Progress) -> StageInfo:
        total = StageInfo()
        for c in self.components:
            total = total + c.build(index if c.uses_index else None, progress)
        return total

    def encode_queries(self, texts: Sequence[str], *, cached: bool = True) -> Any:
        return [c.encode_queries(texts, cached=cached) for c in self.components]

    def search(self, encoded: Any, k: int) -> Hits:
        depth = max(k, int(self.params["depth"]))
        lists = [c.search(e, depth) for c, e in zip(self.components, encoded, strict=True)]
        return fuse(lists, k, method=self.params["fusion"], weights=self.weights, rrf_k=self.params.get("rrf_k", 60))

"""Hybrid retrieval: fuse the rankings of several retrievers.

- ``rrf``: reciprocal rank fusion, ``score(d) = sum_i w_i / (rrf_k + rank_i(d))`` with ranks from 1
  and ``rrf_k = 60`` (Cormack et al., 2009); a list that misses ``d`` adds nothing.
- ``weighted``: each list's scores are min-max normalized per query to [0, 1] (ranx's rule: all
  0 when they are equal), then ``score(d) = sum_i w_i * norm_i(d)``; a list that misses ``d`` adds 0.

Both are `rankgate.fusion`'s kernels (``rrf`` with weights, ``wsum`` under ``min-max``).

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
    """Fuse per-query rankings (each best first) into one top-``k`` ranking (`rankgate.fusion`'s kernels)."""
    if method not in FUSION_METHODS:
        raise ConfigError(f"unknown fusion {method!r}; choose one of {', '.join(FUSION_METHODS)}", key_path="fusion")
    from rankgate.fusion.align import align_keys
    from rankgate.fusion.methods import Context, kernel
    from rankgate.fusion.norms import normalise

    m = lists[0].num_queries
    parts = []
    for hits in lists:
        valid = hits.ids >= 0  # rows are best first; padding (-1) sits at the end
        parts.append((np.nonzero(valid)[0].astype(np.int64), hits.ids[valid], hits.scores[valid].astype(np.float64)))
    aligned = align_keys(parts, m)
    w = [float(x) for x in weights]
    if method == "rrf":
        fused = kernel("rrf")(Context(aligned, [], {"k": rrf_k}, w, []))
    else:
        scored = [normalise(member, "min-max", aligned) for member in aligned.members]
        fused = kernel("wsum")(Context(aligned, scored, {}, w, []))
    order = np.lexsort((aligned.slot_doc, -fused, aligned.slot_query))  # ties: corpus position
    rank = np.arange(len(order)) - aligned.offsets[aligned.slot_query[order]]
    top = order[rank < k]
    q = aligned.slot_query[top]
    ids = np.full((m, k), -1, dtype=np.int64)
    scores = np.full((m, k), -np.inf, dtype=np.float64)
    col = rank[rank < k]
    ids[q, col], scores[q, col] = aligned.slot_doc[top], fused[top]
    return Hits(ids, scores)


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

"""`optimize`: pick a fusion method's weights or parameter by grid search on training judgments.

The grids are ranx's: weights from 0 to 1 in steps of ``step`` (0.1) that sum to 1 (counted in
integer steps, so every such combination is tried; ranx compares float sums to 1.0 and skips
some, e.g. 0.1 + 0.2 + 0.7); RRF's ``k`` 10, 20, ..., 100; ``phi`` (RBC), ``gamma`` (CombGMNZ)
and ``sigma`` (logN-ISR) 0.01, 0.02, ..., 1; ``n_segments`` (ProbFuse) and ``w`` (SlideFuse)
1 to 100. The first best candidate in grid order wins (ranx keeps the last). With ``folds=k``
the training queries are cut into k folds; each fold's score is that of the candidate chosen
on the other folds, so the mean held-out score estimates how the chosen values generalise.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.core import arrow_compute as pc
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError
from rankgate.fusion.align import align
from rankgate.fusion.fuse import check_params, learn, normalised, resolve_norm, to_run
from rankgate.fusion.methods import Context, Method, kernel, resolve

_STEPS: dict[str, list[Any]] = {
    "k": [float(k) for k in range(10, 101, 10)],
    "n_segments": list(range(1, 101)),
    "w": list(range(1, 101)),
}
_HUNDREDTHS: list[Any] = [round(i / 100, 2) for i in range(1, 101)]


@dataclass
class Optimized:
    """The chosen values, their training score and (with folds) the held-out scores."""

    method: str
    norm: str
    metric: str
    weights: list[float] | None
    params: dict[str, Any]
    train_score: float
    candidates: int
    folds: list[dict[str, Any]] = field(default_factory=list)

    @property
    def held_out(self) -> float | None:
        return float(np.mean([f["held_out"] for f in self.folds])) if self.folds else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "norm": self.norm,
            "metric": self.metric,
            "weights": self.weights,
            "params": self.params,
            "train_score": self.train_score,
            "candidates": self.candidates,
            "folds": self.folds,
            "held_out": self.held_out,
        }


def grid(spec: Method, n_runs: int, step: float = 0.1) -> list[tuple[list[float] | None, dict[str, Any]]]:
    """The (weights, params) candidates for ``spec`` in search order."""
    if spec.weighted:
        units = round(1 / step)
        combos = [c for c in itertools.product(range(units + 1), repeat=n_runs) if sum(c) == units]
        return [([round(u * step, 10) for u in c], {}) for c in combos]
    tuned = [p for p in spec.params if p in _STEPS or p in ("phi", "gamma", "sigma")]
    if not tuned:
        return [(None, {})]
    name = tuned[0]
    return [(None, {name: v}) for v in _STEPS.get(name, _HUNDREDTHS)]


def optimize(
    runs: Sequence[Run],
    qrels: Qrels,
    *,
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: str = "nDCG@10",
    folds: int = 1,
    step: float = 0.1,
    train_runs: Sequence[Run] | None = None,
    seed: int = 0,
) -> Optimized:
    """Grid-search ``method``'s weights or parameter for the best mean ``metric`` on ``qrels``' queries.

    >>> a = Run.from_dict({"q": {"d1": 2.0, "d2": 1.0}})
    >>> b = Run.from_dict({"q": {"d2": 2.0, "d1": 1.0}})
    >>> optimize([a, b], Qrels.from_dict({"q": {"d2": 1}}), method="wsum", metric="RR").weights
    [0.0, 1.0]
    """
    spec = resolve(method)
    norm_key = resolve_norm(norm)
    candidates = grid(spec, len(runs), step)
    search = _Search(spec, norm_key, runs, train_runs, candidates, metric)
    best, score = search.best(qrels)
    weights, params = candidates[best]
    result = Optimized(spec.name, norm_key, metric, weights, check_params(spec, params), score, len(candidates))
    if folds > 1:
        result.folds = _cross_validate(search, qrels, folds, seed)
    return result


class _Search:
    def __init__(
        self,
        spec: Method,
        norm: str,
        runs: Sequence[Run],
        train_runs: Sequence[Run] | None,
        candidates: list[tuple[list[float] | None, dict[str, Any]]],
        metric: str,
    ) -> None:
        self.spec, self.runs, self.train_runs, self.candidates, self.metric = spec, runs, train_runs, candidates, metric
        self.aligned = align(runs)
        self.scored = normalised(self.aligned, spec, norm)

    def scores(self, qrels: Qrels) -> list[float]:
        """The mean metric on ``qrels``' queries of every candidate."""
        from rankgate.evaluation.evaluate import evaluate

        out = []
        for weights, params in self.candidates:
            merged = check_params(self.spec, {k: v for k, v in params.items()} or _defaults(self.spec))
            tables = learn(self.spec, merged, self.runs, qrels, self.train_runs)
            w = weights or [1.0] * len(self.runs)
            fused = kernel(self.spec.name)(Context(self.aligned, self.scored, merged, w, tables))
            out.append(float(evaluate(qrels, to_run(self.aligned, fused, name="candidate"), self.metric)[self.metric]))
        return out

    def best(self, qrels: Qrels) -> tuple[int, float]:
        scores = self.scores(qrels)
        i = int(np.argmax(scores))
        return i, scores[i]


def _defaults(spec: Method) -> dict[str, Any]:
    return {k: v for k, v in spec.params.items() if v is not None}


def _cross_validate(search: _Search, qrels: Qrels, folds: int, seed: int) -> list[dict[str, Any]]:
    ids = np.asarray(qrels.query_ids.to_pylist(), dtype=object)
    if folds > len(ids):
        raise ConfigError(f"{folds} folds for {len(ids)} training queries", key_path="folds")
    fold_of = np.random.default_rng(seed).permutation(len(ids)) % folds
    out = []
    for f in range(folds):
        train, test = _subset(qrels, ids[fold_of != f]), _subset(qrels, ids[fold_of == f])
        best, score = search.best(train)
        weights, params = search.candidates[best]
        out.append(
            {
                "fold": f + 1,
                "queries": int((fold_of == f).sum()),
                "weights": weights,
                "params": params,
                "train_score": score,
                "held_out": search.scores(test)[best],
            }
        )
    return out


def _subset(qrels: Qrels, ids: np.ndarray) -> Qrels:
    table = qrels.to_arrow()
    keep = table.filter(pc.is_in(table["query_id"], value_set=__import__("pyarrow").array(list(ids))))
    return Qrels(keep["query_id"], keep["doc_id"], keep["grade"].to_numpy(), source=qrels.source)

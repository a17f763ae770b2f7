"""Prediction-powered inference (PPI): a metric's mean from LLM judgments, corrected by a human sample.

An LLM judge is cheap on every query and biased; humans are unbiased on a few. PPI
(Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science
2023; used by ARES, Saad-Falcon et al., NAACL 2024) combines them. With ``f`` a query's measure
value under the LLM's judgments and ``y`` under the human's, on ``N`` queries judged by the LLM
only and ``n`` queries drawn uniformly at random and judged by humans as well::

    estimate = mean_N(f) - mean_n(f - y)             (the rectifier mean_n(f - y) removes the bias)
    se^2     = var_N(f) / N + var_n(f - y) / n
    CI       = estimate +- z * se

It is unbiased whatever the judge's bias, and its interval is narrower than the humans' own
(``var(y) / n``) when the judge tracks the humans (``var(f - y) < var(y)``). The naive estimate
``mean(f)`` over all queries has a narrow interval around the wrong value.

Assumptions: the human queries are a uniform random sample of the evaluated queries (draw them
with ``rankgate label sample --whole-queries``), and humans judge every pooled pair of those
queries (a pair left to the LLM inside a human query keeps the LLM's bias there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.errors import ConfigError, InputError

if TYPE_CHECKING:
    from rankgate.core.qrels import Qrels


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1). Got {confidence!r} instead.", key_path="confidence")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class MeanCI:
    """A mean and its normal-approximation interval (arrays when estimated for many samples at once)."""

    mean: Any
    low: Any
    high: Any
    se: Any

    def to_dict(self) -> dict[str, Any]:
        return {"mean": _num(self.mean), "ci": [_num(self.low), _num(self.high)], "se": _num(self.se)}


def _num(value: Any) -> float | None:
    v = float(value)
    return None if math.isnan(v) else round(v, 6)


def _var(x: np.ndarray) -> np.ndarray:
    return np.var(x, axis=-1, ddof=1) if x.shape[-1] > 1 else np.full(x.shape[:-1], np.nan)


def classical_mean(values: Any, *, confidence: float = 0.95) -> MeanCI:
    """The sample mean with a normal interval, along the last axis.

    >>> r = classical_mean([0.0, 1.0, 1.0, 0.0])
    >>> round(float(r.mean), 2), round(float(r.low), 3), round(float(r.high), 3)
    (0.5, -0.066, 1.066)
    """
    x = np.asarray(values, dtype=np.float64)
    mean = x.mean(axis=-1)
    se = np.sqrt(_var(x) / x.shape[-1])
    half = _z(confidence) * se
    return MeanCI(mean, mean - half, mean + half, se)


def ppi_mean(predicted_unlabeled: Any, predicted_labeled: Any, labeled: Any, *, confidence: float = 0.95) -> MeanCI:
    """The prediction-powered mean and interval (see the module), along the last axis.

    Args:
        predicted_unlabeled: the judge's values on the ``N`` units without a human label.
        predicted_labeled: the judge's values on the ``n`` units humans labeled.
        labeled: the human values of those ``n`` units, in the same order.
        confidence: of the interval.

    >>> r = ppi_mean([1, 1, 1, 0], [1, 1, 0], [1, 0, 0])
    >>> round(float(r.mean), 4), round(float(r.se), 4)  # 0.75 - 1/3; sqrt(0.25 / 4 + (1/3) / 3)
    (0.4167, 0.4167)
    """
    f_u = np.asarray(predicted_unlabeled, dtype=np.float64)
    f_l = np.asarray(predicted_labeled, dtype=np.float64)
    y = np.asarray(labeled, dtype=np.float64)
    if f_l.shape != y.shape:
        raise InputError(f"the labeled units' predictions and labels differ in shape ({f_l.shape}, {y.shape})")
    if f_u.shape[-1] == 0 or y.shape[-1] < 2:
        raise InputError("PPI needs at least one unlabeled unit and two labeled ones")
    rectifier = f_l - y
    mean = f_u.mean(axis=-1) - rectifier.mean(axis=-1)
    se = np.sqrt(_var(f_u) / f_u.shape[-1] + _var(rectifier) / y.shape[-1])
    half = _z(confidence) * se
    return MeanCI(mean, mean - half, mean + half, se)


def required_labels(
    width: float, *, rectifier_sd: float, predicted_sd: float = 0.0, unlabeled: int | None = None,
    confidence: float = 0.95,
) -> int | None:  # fmt: skip
    """Human-labeled units for a PPI interval of total ``width`` (None: unreachable with this many unlabeled).

    Solves ``width = 2 z sqrt(predicted_sd^2 / unlabeled + rectifier_sd^2 / n)`` for ``n``.
    ``rectifier_sd`` is the spread of (LLM value - human value) per unit: measure it on a pilot
    (`evaluate_ppi` reports it) or take 1.0, its bound for a measure in [0, 1].

    >>> required_labels(0.1, rectifier_sd=0.25)
    97
    >>> required_labels(0.1, rectifier_sd=0.25, predicted_sd=0.3, unlabeled=500)
    133
    """
    if width <= 0:
        raise ConfigError(f"the target width must be > 0. Got {width!r} instead.", key_path="width")
    half = width / (2 * _z(confidence))
    budget = half**2 - (predicted_sd**2 / unlabeled if unlabeled else 0.0)
    if budget <= 0:
        return None
    return max(2, math.ceil(rectifier_sd**2 / budget))


def overlay(llm: Qrels, human: Qrels) -> Qrels:
    """The LLM's judgments with the human's in their place where both judge a pair (and the human's extra pairs)."""
    from rankgate.core.qrels import Qrels

    data = llm.to_dict()
    for q, docs in human.to_dict().items():
        data.setdefault(q, {}).update(docs)
    return Qrels.from_dict(data, source=human.source or "<human>")


def evaluate_ppi(
    llm_qrels: Any,
    human_qrels: Any,
    run: Any,
    measures: Sequence[Any],
    *,
    confidence: float = 0.95,
    target_width: float | None = None,
    **evaluate_options: Any,
) -> dict[str, Any]:
    """Each measure's mean on ``run``: naive (LLM judgments), human-only, and prediction-powered.

    The units are queries: every query the LLM evaluation averages over; the human queries are
    those ``human_qrels`` judges. A human query's human value uses `overlay` (the human's
    labels over the LLM's). ``evaluate_options`` go to `rankgate.evaluate` (``settings=``...).

    Returns:
        ``{"queries": {"llm": N + n, "human": n, "human_not_in_llm": [...]}, "confidence",
        "measures": {name: {"naive", "human_only", "ppi": {"mean", "ci", "se"}, "rectifier":
        {"mean", "sd"}, "human_queries_for_width"?}}}``.
    """
    from rankgate.evaluation.evaluate import evaluate
    from rankgate.io.readers import read_qrels

    llm = llm_qrels if not isinstance(llm_qrels, str) else read_qrels(llm_qrels)
    human = human_qrels if not isinstance(human_qrels, str) else read_qrels(human_qrels)
    by_llm = evaluate(llm, run, list(measures), **evaluate_options)
    by_human = evaluate(overlay(llm, human), run, by_llm.measures, **evaluate_options)
    position = {q: i for i, q in enumerate(by_llm.query_ids)}
    human_ids = [q for q in sorted(human.to_dict()) if q in position and q in set(by_human.query_ids)]
    missing = sorted(set(human.to_dict()) - set(position))
    if len(human_ids) < 2:
        raise InputError("PPI needs human labels on at least two of the evaluated queries", source=human.source)
    rows_l = np.array([position[q] for q in human_ids], dtype=np.int64)
    rows_u = np.setdiff1d(np.arange(len(by_llm.query_ids)), rows_l)
    human_row = {q: i for i, q in enumerate(by_human.query_ids)}
    rows_h = np.array([human_row[q] for q in human_ids], dtype=np.int64)
    out: dict[str, Any] = {
        "queries": {"llm": len(position), "human": len(human_ids), "human_not_in_llm": missing[:10]},
        "confidence": confidence,
        "measures": {},
    }
    for j, name in enumerate(by_llm.names):
        f, y = by_llm.values[:, j], by_human.values[rows_h, j]
        rectifier = f[rows_l] - y
        entry: dict[str, Any] = {
            "naive": classical_mean(f, confidence=confidence).to_dict(),
            "human_only": classical_mean(y, confidence=confidence).to_dict(),
            "ppi": ppi_mean(f[rows_u], f[rows_l], y, confidence=confidence).to_dict(),
            "rectifier": {"mean": _num(rectifier.mean()), "sd": _num(np.std(rectifier, ddof=1))},
        }
        if target_width is not None:
            entry["human_queries_for_width"] = required_labels(
                target_width, rectifier_sd=float(np.std(rectifier, ddof=1)), predicted_sd=float(np.std(f, ddof=1)),
                unlabeled=len(rows_u), confidence=confidence,
            )  # fmt: skip
        out["measures"][name] = entry
    return out


def whole_query_sample(qrels: Qrels, queries: int, *, seed: int = 0) -> list[tuple[str, str, int]]:
    """Every judged pair ``(query_id, doc_id, label)`` of ``queries`` queries drawn uniformly without replacement.

    The sample PPI needs: humans judge whole queries, chosen at random (all of them when fewer).
    """
    import random

    if queries < 1:
        raise ConfigError(f"the number of queries must be >= 1. Got {queries!r} instead.", key_path="size")
    data = qrels.to_dict()
    chosen = random.Random(seed).sample(sorted(data), min(queries, len(data)))
    return [(q, d, int(g)) for q in chosen for d, g in sorted(data[q].items())]

"""Agreement between two sets of judgments, and between the system rankings they produce.

Label agreement is computed on the pairs both sets judge: the confusion matrix (rows: the
reference, e.g. humans; columns: the candidate, e.g. an LLM), raw agreement, and Cohen's
kappa unweighted, linear-weighted and quadratic-weighted. Weights use the label *values*
(0-3): with every grade present this equals scikit-learn's ``cohen_kappa_score``, which spaces
categories by their index among the labels it is given.

What matters most for evaluation is whether the two sets rank systems alike:
`ranking_correlation` evaluates each run under both and reports Kendall's tau-b of the scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError, InputError

WEIGHTS = (None, "linear", "quadratic")


def confusion_matrix(reference: Sequence[int], candidate: Sequence[int], labels: Sequence[int]) -> np.ndarray:
    """Counts ``M[i, j]`` of pairs labeled ``labels[i]`` by the reference and ``labels[j]`` by the candidate.

    >>> confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2], [0, 1, 2]).tolist()
    [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    """
    if len(reference) != len(candidate):
        raise ValueError(f"label lists differ in length ({len(reference)}, {len(candidate)})")
    index = {v: i for i, v in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for a, b in zip(reference, candidate, strict=True):
        if a not in index or b not in index:
            raise ValueError(f"label {a if a not in index else b!r} is not among {list(labels)}")
        m[index[a], index[b]] += 1
    return m


def cohen_kappa(
    reference: Sequence[int],
    candidate: Sequence[int],
    *,
    weights: str | None = None,
    labels: Sequence[int] | None = None,
) -> float:
    """Cohen's kappa of two raters; ``weights`` None, "linear" (|i-j|) or "quadratic" ((i-j)^2).

    kappa = 1 - sum(w * observed) / sum(w * expected), where expected is the outer product of
    the two raters' label frequencies. NaN when expected disagreement is 0 (one label only).

    >>> round(cohen_kappa([0, 0, 1, 1], [0, 1, 1, 1]), 4)
    0.5
    >>> round(cohen_kappa([0, 1, 2, 3], [0, 2, 2, 3], weights="linear"), 4)
    0.8
    """
    if weights not in WEIGHTS:
        raise ConfigError(
            f"weights must be None, 'linear' or 'quadratic'. Got {weights!r} instead.", key_path="weights"
        )
    values = sorted(set(reference) | set(candidate)) if labels is None else list(labels)
    observed = confusion_matrix(reference, candidate, values).astype(np.float64)
    n = observed.sum()
    if n == 0:
        return math.nan
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    grid = np.asarray(values, dtype=np.float64)
    diff = grid[:, None] - grid[None, :]
    if weights is None:
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(diff)
    else:
        w = diff**2
    denominator = float((w * expected).sum())
    if denominator == 0:
        return math.nan
    return 1.0 - float((w * observed).sum()) / denominator


def _pairs(qrels: Qrels) -> dict[tuple[str, str], int]:
    return {(q, d): int(g) for q, docs in qrels.to_dict().items() for d, g in docs.items()}


def label_agreement(
    reference: Qrels, candidate: Qrels, *, labels: Sequence[int] | None = None, rel: int = 1
) -> dict[str, Any]:
    """Agreement on the pairs both judge: counts, confusion matrix, kappas, binary kappa at ``rel``.

    Negative grades (trec_eval's "judged non-relevant") count as 0.

    >>> ref = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2}})
    >>> llm = Qrels.from_dict({"q1": {"a": 0, "b": 2, "c": 2, "z": 3}})
    >>> r = label_agreement(ref, llm)
    >>> r["pairs"], r["exact_agreement"], r["confusion"]["matrix"]
    ({'shared': 3, 'reference_only': 0, 'candidate_only': 1}, 0.6667, [[1, 0, 0], [0, 0, 1], [0, 0, 1]])
    """
    a, b = _pairs(reference), _pairs(candidate)
    shared = sorted(set(a) & set(b), key=lambda k: (k[0].encode(), k[1].encode()))
    ref = [max(0, a[k]) for k in shared]
    cand = [max(0, b[k]) for k in shared]
    values = sorted(set(ref) | set(cand)) if labels is None else sorted(labels)
    out: dict[str, Any] = {
        "pairs": {
            "shared": len(shared),
            "reference_only": len(a) - len(shared),
            "candidate_only": len(b) - len(shared),
        },
        "labels": values,
    }
    if not shared:
        raise InputError("the two sets of judgments share no (query, document) pair: nothing to compare")
    matrix = confusion_matrix(ref, cand, values)
    out["exact_agreement"] = round(float(np.trace(matrix)) / len(shared), 4)
    out["kappa"] = {str(w or "unweighted"): _clean(cohen_kappa(ref, cand, weights=w, labels=values)) for w in WEIGHTS}
    binary_ref = [int(v >= rel) for v in ref]
    binary_cand = [int(v >= rel) for v in cand]
    out["binary"] = {
        "rel": rel,
        "agreement": round(sum(x == y for x, y in zip(binary_ref, binary_cand, strict=True)) / len(shared), 4),
        "kappa": _clean(cohen_kappa(binary_ref, binary_cand, labels=[0, 1])),
    }
    out["confusion"] = {"rows": "reference", "columns": "candidate", "labels": values, "matrix": matrix.tolist()}
    out["reference_distribution"] = {str(v): int(c) for v, c in zip(values, matrix.sum(axis=1), strict=True)}
    out["candidate_distribution"] = {str(v): int(c) for v, c in zip(values, matrix.sum(axis=0), strict=True)}
    out["mean_difference"] = round(float(np.mean(np.subtract(cand, ref))), 4)
    return out


def _clean(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 4)


def restrict(qrels: Qrels, keep: Iterable[tuple[str, str]], *, source: str | None = None) -> Qrels:
    """The judgments of ``qrels`` on the pairs in ``keep``."""
    wanted = set(keep)
    data: dict[str, dict[str, int]] = {}
    for q, docs in qrels.to_dict().items():
        for d, g in docs.items():
            if (q, d) in wanted:
                data.setdefault(q, {})[d] = g
    return Qrels.from_dict(data, source=source or qrels.source or "<qrels>")


def ranking_correlation(
    reference: Qrels,
    candidate: Qrels,
    runs: Sequence[Run],
    measures: Sequence[str],
    *,
    shared_only: bool = True,
    names: Sequence[str] | None = None,
    **evaluate_options: Any,
) -> dict[str, Any]:
    """Kendall's tau-b between the systems' scores under ``reference`` and under ``candidate``.

    Args:
        reference: e.g. human judgments.
        candidate: e.g. LLM judgments.
        runs: two or more systems.
        measures: measures to compare rankings on (e.g. ``["nDCG@10", "P@10"]``).
        shared_only: judge both with the pairs both judge (a fair comparison when one set is a
            sample of the other's pool); False uses each set whole.
        names: system names (default: run names).
        evaluate_options: passed to `rankgate.evaluate` (``queries=``, ``rel=``...).

    Returns:
        ``{"systems": [...], "shared_only": bool, "measures": {name: {"tau", "p_value",
        "reference": {system: score}, "candidate": {system: score}, "same_best": bool}}}``.
    """
    from scipy.stats import kendalltau

    from rankgate.evaluation.evaluate import evaluate

    if len(runs) < 2:
        raise ConfigError("ranking correlation needs at least two runs", key_path="runs")
    labels = list(names) if names else [r.name or f"run{i + 1}" for i, r in enumerate(runs)]
    if len(set(labels)) != len(labels):
        labels = [f"{n}#{i + 1}" for i, n in enumerate(labels)]
    if shared_only:
        shared = set(_pairs(reference)) & set(_pairs(candidate))
        if not shared:
            raise InputError("the two sets of judgments share no (query, document) pair: nothing to compare")
        reference, candidate = restrict(reference, shared), restrict(candidate, shared)
    under: dict[str, dict[str, dict[str, float]]] = {"reference": {}, "candidate": {}}
    for side, qrels in (("reference", reference), ("candidate", candidate)):
        for label, run in zip(labels, runs, strict=True):
            under[side][label] = evaluate(qrels, run, list(measures), **evaluate_options).aggregate
    names_m = list(next(iter(under["reference"].values())))
    out: dict[str, Any] = {"systems": labels, "shared_only": shared_only, "measures": {}}
    for m in names_m:
        ref_scores = [under["reference"][s][m] for s in labels]
        cand_scores = [under["candidate"][s][m] for s in labels]
        result = kendalltau(ref_scores, cand_scores)
        tau, p = float(result.statistic), float(result.pvalue)
        out["measures"][m] = {
            "tau": None if math.isnan(tau) else round(tau, 4),
            "p_value": None if math.isnan(p) else round(p, 4),
            "reference": dict(zip(labels, ref_scores, strict=True)),
            "candidate": dict(zip(labels, cand_scores, strict=True)),
            "same_best": labels[int(np.argmax(ref_scores))] == labels[int(np.argmax(cand_scores))],
        }
    return out

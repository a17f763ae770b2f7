"""Merge several raters' judgments of the same pairs into one label per pair.

Strategies (``label merge --strategy``), over the raters that judged the pair:

- ``first``: the first file (in the order given) that judges the pair (`export.merge_tiers`).
- ``majority``: the most frequent label; a tie goes to the **lowest** tied label (a pair is not
  called more relevant than a majority says).
- ``mean``: the mean label rounded to the nearest grade; exactly half-way rounds **down**.
- ``max``: the highest label (any rater's relevance counts, as in pooled TREC assessments).
- ``dawid-skene``: Dawid and Skene (1979, "Maximum likelihood estimation of observer error-rates
  using the EM algorithm"): each rater has a confusion matrix P(says l | true k); EM estimates
  them with the class priors, and each pair takes the label of highest posterior (a tie: the
  lowest). Initialised from the majority vote's label shares; smoothed by 0.01 per cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankgate.errors import ConfigError
from rankgate.label.types import Judgment

STRATEGIES = ("first", "majority", "mean", "max", "dawid-skene")


def _matrix(sources: Sequence[Sequence[Judgment]]) -> tuple[list[tuple[str, str]], np.ndarray]:
    """Units (pairs in first-seen order) x raters, labels as floats (NaN: not judged; negatives: 0)."""
    index: dict[tuple[str, str], int] = {}
    for judgments in sources:
        for j in judgments:
            index.setdefault((j.query_id, j.doc_id), len(index))
    m = np.full((len(index), len(sources)), np.nan)
    for r, judgments in enumerate(sources):
        for j in judgments:
            if j.label is not None:
                m[index[(j.query_id, j.doc_id)], r] = max(0, j.label)
    return list(index), m


def _votes(coded: np.ndarray, k: int) -> np.ndarray:
    return np.stack([(coded == c).sum(axis=1) for c in range(k)], axis=1).astype(np.float64)


def dawid_skene(
    coded: np.ndarray, k: int, *, max_iter: int = 200, tol: float = 1e-8, smoothing: float = 0.01
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """EM on ``coded`` (units x raters, class index or -1).

    Returns posteriors, confusion matrices (raters x true x given), priors and the iterations run.
    """
    units, raters = coded.shape
    votes = _votes(coded, k)
    post = votes / np.maximum(votes.sum(axis=1, keepdims=True), 1)
    seen = coded >= 0
    u_idx, r_idx = np.nonzero(seen)
    labels = coded[u_idx, r_idx]
    confusion = np.zeros((raters, k, k))
    priors = np.full(k, 1.0 / k)
    iteration = 0
    while iteration < max_iter:
        iteration += 1
        confusion = np.full((raters, k, k), smoothing)
        cells = (r_idx[:, None], np.arange(k)[None, :], labels[:, None])
        np.add.at(confusion, cells, post[u_idx])  # [rater, true, said] += P(true)
        confusion /= confusion.sum(axis=2, keepdims=True)
        priors = np.maximum(post.mean(axis=0), 1e-12)
        log_post = np.tile(np.log(priors), (units, 1))
        np.add.at(log_post, u_idx, np.log(confusion[r_idx, :, labels]))
        log_post -= log_post.max(axis=1, keepdims=True)
        new = np.exp(log_post)
        new /= new.sum(axis=1, keepdims=True)
        change = float(np.abs(new - post).max()) if units else 0.0
        post = new
        if change < tol:
            break
    return post, confusion, priors, iteration


def merge_labels(
    sources: Sequence[Sequence[Judgment]], strategy: str, *, names: Sequence[str] | None = None
) -> tuple[list[Judgment], dict[str, Any]]:
    """One judgment per pair by ``strategy`` (see the module); the tier is the first judging source's.

    >>> from rankgate.label.types import Judgment as J
    >>> a = [J("q", "d1", 2, "a", "human"), J("q", "d2", 0, "a", "human")]
    >>> b = [J("q", "d1", 1, "b", "human"), J("q", "d2", 1, "b", "human")]
    >>> c = [J("q", "d1", 1, "c", "human")]
    >>> [(j.doc_id, j.label) for j in merge_labels([a, b, c], "majority")[0]]
    [('d1', 1), ('d2', 0)]
    >>> [(j.doc_id, j.label) for j in merge_labels([a, b, c], "mean")[0]]  # 4/3 -> 1; 0.5 -> 0 (half down)
    [('d1', 1), ('d2', 0)]
    """
    if strategy not in STRATEGIES or strategy == "first":
        raise ConfigError(
            f"strategy must be one of {', '.join(STRATEGIES[1:])} here. Got {strategy!r}.", key_path="strategy"
        )
    units, m = _matrix(sources)
    values = np.unique(m[~np.isnan(m)]) if units else np.zeros(0)
    k = max(values.size, 1)
    coded = np.where(np.isnan(m), -1, np.searchsorted(values, np.nan_to_num(m))).astype(np.int64)
    info: dict[str, Any] = {"strategy": strategy, "pairs": len(units), "labels": [int(v) for v in values]}
    if strategy == "majority":
        chosen = values[np.argmax(_votes(coded, k), axis=1)] if units else values  # argmax: first (lowest) of a tie
    elif strategy == "mean":
        chosen = np.ceil(np.nanmean(m, axis=1) - 0.5)
    elif strategy == "max":
        chosen = np.nanmax(m, axis=1)
    else:
        post, confusion, priors, iterations = dawid_skene(coded, k)
        chosen = values[np.argmax(post, axis=1)]
        raters = list(names) if names else [f"rater{i + 1}" for i in range(m.shape[1])]
        info["dawid_skene"] = {
            "iterations": iterations,
            "priors": {str(int(v)): round(float(p), 4) for v, p in zip(values, priors, strict=True)},
            "confusion": {
                name: {"rows": "true label", "columns": "label given", "matrix": np.round(confusion[r], 4).tolist()}
                for r, name in enumerate(raters)
            },
        }
    tier = {}
    for judgments in reversed(sources):
        tier.update({(j.query_id, j.doc_id): j.tier for j in judgments})
    merged = [
        Judgment(q, d, int(label), f"merge:{strategy}", "merge", tier=tier[(q, d)])
        for (q, d), label in zip(units, chosen, strict=True)
    ]
    return merged, info

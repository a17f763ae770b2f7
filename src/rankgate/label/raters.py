"""Agreement among any number of raters: Cohen's kappa per pair, Fleiss' kappa, Krippendorff's alpha.

The units are (query, document) pairs; each rater is one judgment file. Negative grades
(trec_eval's "judged non-relevant") count as 0. A pair a rater did not judge is missing for
that rater, unless ``unjudged_as`` gives it a label: relevant-only qrels (BEIR, MED) list only
the relevant pairs, so ``unjudged_as=0`` reads every pair another rater judged as judged 0.

- Cohen's kappa (Cohen 1960; weighted, Cohen 1968) for every pair of raters, on the units both
  judged; weights use the label values (see `rankgate.label.agreement.cohen_kappa`).
- Fleiss' kappa (Fleiss 1971) on the units every rater judged.
- Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"),
  nominal and ordinal, on every unit at least two raters judged (missing labels allowed).

Each statistic is a function of sums over units, so a bootstrap over units (percentile
intervals, ``n_boot`` resamples) only re-adds per-unit contributions: vectorised, no loop over
resamples in Python beyond memory-sized chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from rankgate.errors import ConfigError, InputError

if TYPE_CHECKING:
    from rankgate.core.qrels import Qrels


def ratings_matrix(
    raters: Sequence[Qrels], *, unjudged_as: int | None = None
) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The units (sorted pairs any rater judged) and a float matrix units x raters (NaN: not judged)."""
    tables = [{(q, d): max(0, int(g)) for q, docs in r.to_dict().items() for d, g in docs.items()} for r in raters]
    units = sorted(set().union(*tables), key=lambda k: (k[0].encode(), k[1].encode()))
    fill = np.nan if unjudged_as is None else float(unjudged_as)
    matrix = np.array([[t.get(u, fill) for t in tables] for u in units], dtype=np.float64).reshape(len(units), -1)
    return units, matrix


def _resampled_sums(contrib: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Sums of ``contrib`` (units x D) over ``n_boot`` bootstrap resamples of the units: (n_boot, D)."""
    rng = np.random.default_rng(seed)
    units = contrib.shape[0]
    chunk = max(1, 20_000_000 // max(units, 1))
    out = []
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        picks = rng.integers(0, units, size=(b, units)) + units * np.arange(b)[:, None]
        weights = np.bincount(picks.ravel(), minlength=b * units).reshape(b, units)
        out.append(weights.astype(np.float64) @ contrib)
    return np.concatenate(out) if out else np.zeros((0, contrib.shape[1]))


def _with_ci(
    contrib: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], n_boot: int, seed: int, confidence: float
) -> dict[str, Any]:
    value = float(statistic(contrib.sum(axis=0)[None, :])[0])
    out: dict[str, Any] = {"value": _round(value), "units": int(contrib.shape[0]), "ci": None}
    if n_boot > 0 and contrib.shape[0] > 1:
        boot = statistic(_resampled_sums(contrib, n_boot, seed))
        boot = boot[~np.isnan(boot)]
        if boot.size:
            tail = (1 - confidence) / 2 * 100
            out["ci"] = [_round(float(np.percentile(boot, tail))), _round(float(np.percentile(boot, 100 - tail)))]
    return out


def _round(value: float) -> float | None:
    return None if np.isnan(value) else round(value, 4)


def _onehot(index: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros((index.size, size))
    out[np.arange(index.size), index] = 1.0
    return out


def _cohen_from_confusion(values: np.ndarray, weights: str | None) -> Callable[[np.ndarray], np.ndarray]:
    v = values.size
    diff = values[:, None] - values[None, :]
    w = (diff != 0).astype(float) if weights is None else (np.abs(diff) if weights == "linear" else diff**2)

    def statistic(sums: np.ndarray) -> np.ndarray:
        m = sums.reshape(-1, v, v)
        n = m.sum(axis=(1, 2))
        expected = m.sum(axis=2)[:, :, None] * m.sum(axis=1)[:, None, :] / n[:, None, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - (w * m).sum(axis=(1, 2)) / (w * expected).sum(axis=(1, 2))

    return statistic


def _fleiss(raters: int, categories: int) -> Callable[[np.ndarray], np.ndarray]:
    """Fleiss' kappa from the sums of [P_i, 1, counts_i...] over items."""

    def statistic(sums: np.ndarray) -> np.ndarray:
        items = sums[:, 1]
        p_bar = sums[:, 0] / items
        p = sums[:, 2:] / (items[:, None] * raters)
        chance = (p**2).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (p_bar - chance) / (1 - chance)

    return statistic


def _krippendorff(values: np.ndarray, level: str) -> Callable[[np.ndarray], np.ndarray]:
    v = values.size

    def statistic(sums: np.ndarray) -> np.ndarray:
        o = sums.reshape(-1, v, v)
        n_c = o.sum(axis=2)
        n = n_c.sum(axis=1)
        if level == "nominal":
            delta = np.broadcast_to(1.0 - np.eye(v), o.shape)
        else:  # ordinal: (sum of n_g from c to k, minus half of n_c and n_k)^2
            cum = np.cumsum(n_c, axis=1)
            span = cum[:, None, :] - cum[:, :, None] + (n_c[:, :, None] - n_c[:, None, :]) / 2
            delta = span**2
        expected = n_c[:, :, None] * n_c[:, None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.0 - (n - 1) * (o * delta).sum(axis=(1, 2)) / (expected * delta).sum(axis=(1, 2))

    return statistic


def multi_rater_agreement(
    raters: Sequence[Qrels],
    names: Sequence[str] | None = None,
    *,
    unjudged_as: int | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Cohen's kappa per pair of raters, Fleiss' kappa and Krippendorff's alpha, each with a bootstrap CI.

    Returns:
        ``{"raters": [...], "labels": [...], "units": n, "unjudged_as", "pairwise": [{"raters": [a, b],
        "units", "agreement", "kappa": {"unweighted"|"linear"|"quadratic": {"value", "ci", "units"}}}],
        "fleiss_kappa": {...}, "krippendorff_alpha": {"nominal": {...}, "ordinal": {...}}}``.
    """
    if len(raters) < 2:
        raise ConfigError("agreement needs at least two raters", key_path="raters")
    labels = list(names) if names else [r.source or f"rater{i + 1}" for i, r in enumerate(raters)]
    units, matrix = ratings_matrix(raters, unjudged_as=unjudged_as)
    if not units:
        raise InputError("the raters judge no (query, document) pair: nothing to compare")
    values = np.unique(matrix[~np.isnan(matrix)])
    v = values.size
    coded = np.where(np.isnan(matrix), -1, np.searchsorted(values, np.nan_to_num(matrix))).astype(np.int64)
    opts: dict[str, Any] = {"n_boot": n_boot, "seed": seed, "confidence": confidence}
    out: dict[str, Any] = {"raters": labels, "labels": [int(x) for x in values], "units": len(units)}
    out["unjudged_as"] = unjudged_as
    out["pairwise"] = []
    for a, b in combinations(range(len(labels)), 2):
        both = (coded[:, a] >= 0) & (coded[:, b] >= 0)
        contrib = _onehot(coded[both, a] * v + coded[both, b], v * v)
        row: dict[str, Any] = {"raters": [labels[a], labels[b]], "units": int(both.sum())}
        row["agreement"] = _round(float(np.mean(coded[both, a] == coded[both, b]))) if both.any() else None
        row["kappa"] = {
            str(w or "unweighted"): _with_ci(contrib, _cohen_from_confusion(values, w), **opts)
            for w in (None, "linear", "quadratic")
        }
        out["pairwise"].append(row)
    complete = (coded >= 0).all(axis=1)
    counts = np.stack([(coded[complete] == c).sum(axis=1) for c in range(v)], axis=1).astype(np.float64)
    m = len(labels)
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    fleiss = np.column_stack([p_i, np.ones(len(p_i)), counts])
    out["fleiss_kappa"] = _with_ci(fleiss, _fleiss(m, v), **opts)
    per_unit = np.stack([(coded == c).sum(axis=1) for c in range(v)], axis=1).astype(np.float64)
    judged = per_unit.sum(axis=1)
    pairable = judged >= 2
    pu, mu = per_unit[pairable], judged[pairable]
    coincide = (pu[:, :, None] * pu[:, None, :] - np.eye(v)[None] * pu[:, :, None]) / (mu - 1)[:, None, None]
    flat = coincide.reshape(len(pu), v * v)
    out["krippendorff_alpha"] = {
        level: _with_ci(flat, _krippendorff(values, level), **opts) for level in ("nominal", "ordinal")
    }
    return out


def fill_unjudged(raters: Sequence[Qrels], value: int) -> list[Qrels]:
    """Each rater's judgments plus ``value`` on every pair another rater judged and it did not."""
    from rankgate.core.qrels import Qrels

    union: dict[str, set[str]] = {}
    for r in raters:
        for q, docs in r.to_dict().items():
            union.setdefault(q, set()).update(docs)
    out = []
    for r in raters:
        data = r.to_dict()
        filled = {q: {d: data.get(q, {}).get(d, value) for d in docs} for q, docs in union.items()}
        out.append(Qrels.from_dict(filled, source=r.source or "<qrels>"))
    return out

"""The comparison's two further tables: all pairs of systems (Tukey HSD) and deltas per tag value.

Both read the systems' per-query values lined up on the queries they share (`aligned_matrix`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rankgate.evaluation.groups import MIN_GROUP, group_rows, natural_order
from rankgate.evaluation.results import Results
from rankgate.stats.summary import paired_summary


def aligned_matrix(res: Results, queries: list[str], measures: list[str] | None = None) -> np.ndarray:
    """Per-query values in ``queries`` order, columns in ``measures`` order (default: as held)."""
    position = {q: i for i, q in enumerate(res.query_ids)}
    rows = res.values[[position[q] for q in queries]]
    if measures is None or measures == res.names:
        return rows
    return rows[:, [res.names.index(m) for m in measures]]


def all_pairs(
    results: dict[str, Results], labels: list[str], queries: list[str], measures: list[str], n: int, seed: int
) -> list[dict[str, Any]]:
    """Randomized Tukey HSD per measure over all systems (Carterette 2012)."""
    from rankgate.stats.tukey import randomized_tukey_hsd

    matrices = [aligned_matrix(results[name], queries, measures) for name in labels]
    rows: list[dict[str, Any]] = []
    for j, measure in enumerate(measures):
        tukey = randomized_tukey_hsd(np.column_stack([m[:, j] for m in matrices]), n_resamples=n, seed=seed)
        for a, b, delta, p in tukey.pairs():
            rows.append(
                {
                    "measure": measure,
                    "a": labels[a],
                    "b": labels[b],
                    "mean_a": float(tukey.means[a]),
                    "mean_b": float(tukey.means[b]),
                    "delta": delta,
                    "p_value": p,
                    "test": "randomized Tukey HSD",
                }
            )
    return rows


def tag_breakdown(
    tags: dict[str, dict[str, str]] | None,
    queries: list[str],
    base_matrix: np.ndarray,
    results: dict[str, Results],
    candidates: list[str],
    measures: list[str],
    n_resamples: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Deltas per tag value (unadjusted p-values: a breakdown explores, it does not decide)."""
    if not tags:
        return []
    groups = group_rows(tags, queries, untagged=None)  # a query without a tag is in no group of it
    rows: list[dict[str, Any]] = []
    for name in candidates:
        cand_matrix = aligned_matrix(results[name], queries, measures)
        for key, value, members in ((k, v, m) for k, values in groups.items() for v, m in values.items()):
            idx = np.asarray(members)
            base, cand = base_matrix[idx], cand_matrix[idx]
            for j, measure in enumerate(measures):
                row: dict[str, Any] = {
                    "tag": key,
                    "value": value,
                    "n": len(members),
                    "small": len(members) < MIN_GROUP,
                    "system": name,
                    "measure": measure,
                    "baseline_mean": float(base[:, j].mean()),
                    "mean": float(cand[:, j].mean()),
                    "delta": float(cand[:, j].mean() - base[:, j].mean()),
                    "ci": [math.nan, math.nan],
                    "p_value": math.nan,
                }
                rows.append(row)
            if len(members) >= 2:
                summary = paired_summary(base, cand, n_resamples=n_resamples, seed=seed, names=measures)
                for j, row in enumerate(rows[-len(measures) :]):
                    row["ci"] = [float(summary.ci_low[j]), float(summary.ci_high[j])]
                    row["p_value"] = float(summary.p_value[j])
    rows.sort(key=lambda r: (r["system"], r["measure"], r["small"], r["delta"], r["tag"], natural_order(r["value"])))
    return rows

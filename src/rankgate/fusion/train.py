"""What the trained methods learn from training qrels and runs, as ranx learns it.

A run's *hit list* for a query marks each retrieved document (evaluation order) 1 when its
grade is at least 1, else 0. From the hit lists of the training queries:

- PosFuse, SlideFuse: ``P(rel | rank)``, the share of hits at each rank among the queries that
  reach it.
- ProbFuse: per query, the run is cut into ``n_segments`` segments of ``ceil(n / n_segments)``
  documents; ``P(rel | segment)`` is the share of hits in it, averaged over the queries.
- SegFuse: segments of growing size (5, 10, 20, ... documents: bounds ``10 * 2^(k-1) - 5``);
  the hits in a segment over its full size, averaged over queries.
- BayesFuse: the log-odds ``log(p / (1 - p))`` of the precision ``p`` in the rank bands
  1-5, 6-10, 11-15, 16-20, 21-30, 31-100, 101-200, 201-500, 501-1000 (0.001 for 0 and 1).
- MAPFuse: each run's mean average precision on the training queries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.columns import column_to_numpy, take_rows
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.fusion.methods import SEGFUSE_BOUNDS

BAYES_CUTS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)


def hit_lists(qrels: Qrels, run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query index, 0-based rank, hit) per row of ``run`` in evaluation order."""
    order = run.ranking_order("trec")
    codes = run.query_codes.astype(np.int64)
    ranks = np.arange(run.num_rows, dtype=np.int64) - run.offsets[codes]
    left = pa.table(
        {"q": take_rows(run.query_ids, codes), "d": take_rows(run.doc_ids, order), "row": np.arange(run.num_rows)}
    )
    judged = qrels.to_arrow().rename_columns(["q", "d", "grade"])
    joined = left.join(judged, keys=["q", "d"], join_type="inner")
    hits = np.zeros(run.num_rows)
    rows = column_to_numpy(joined["row"])
    hits[rows] = column_to_numpy(joined["grade"]) >= 1
    return codes, ranks, hits


def rank_probs(qrels: Qrels, run: Run) -> np.ndarray:
    _, ranks, hits = hit_lists(qrels, run)
    if len(ranks) == 0:
        return np.zeros(0)
    return np.bincount(ranks, weights=hits) / np.bincount(ranks)


def probfuse_probs(qrels: Qrels, run: Run, n_segments: int) -> np.ndarray:
    codes, ranks, hits = hit_lists(qrels, run)
    n_queries = max(run.num_queries, 1)
    length = run.depths[codes]
    size = -(-length // n_segments)
    seg = ranks // size
    seg_size = np.minimum(size, length - seg * size)
    means = hits / seg_size  # each segment's hit share, split over its rows
    return np.bincount(seg, weights=means, minlength=n_segments)[:n_segments] / n_queries


def segfuse_probs(qrels: Qrels, run: Run) -> np.ndarray:
    _, ranks, hits = hit_lists(qrels, run)
    n_queries = max(run.num_queries, 1)
    seg = np.searchsorted(SEGFUSE_BOUNDS, ranks, side="right") - 1
    inside = seg < len(SEGFUSE_BOUNDS) - 1
    sizes = np.diff(SEGFUSE_BOUNDS).astype(np.float64)
    sums = np.bincount(seg[inside], weights=hits[inside], minlength=len(sizes))
    return sums / sizes / n_queries


def bayes_log_odds(qrels: Qrels, run: Run) -> np.ndarray:
    _, ranks, hits = hit_lists(qrels, run)
    n_queries = max(run.num_queries, 1)
    band = np.searchsorted(BAYES_CUTS, ranks, side="right") - 1
    inside = band < len(BAYES_CUTS) - 1
    widths = np.diff(BAYES_CUTS).astype(np.float64)
    precision = np.bincount(band[inside], weights=hits[inside], minlength=len(widths)) / widths / n_queries
    precision[precision == 0] = 0.001
    negative = 1 - precision
    negative[negative == 0] = 0.001
    return np.repeat(np.log(precision / negative), np.diff(BAYES_CUTS))


def mean_ap(qrels: Qrels, run: Run) -> float:
    from rankgate.evaluation.evaluate import evaluate

    return float(evaluate(qrels, run, "AP")["AP"])


def train(method: str, qrels: Qrels, runs: list[Run], params: dict[str, Any]) -> list[Any]:
    """One learnt table (or MAP) per training run, for ``method``."""
    if method in ("posfuse", "slidefuse"):
        return [rank_probs(qrels, r) for r in runs]
    if method == "probfuse":
        return [probfuse_probs(qrels, r, int(params["n_segments"])) for r in runs]
    if method == "segfuse":
        return [segfuse_probs(qrels, r) for r in runs]
    if method == "bayesfuse":
        return [bayes_log_odds(qrels, r) for r in runs]
    if method == "mapfuse":
        return [mean_ap(qrels, r) for r in runs]
    raise ValueError(f"{method} is not a trained method")

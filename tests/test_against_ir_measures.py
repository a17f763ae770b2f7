"""Differential tests against ir_measures for measures trec_eval lacks (Judged@k, RR@k).

ir_measures breaks score ties by doc id ascending for these providers, so the random runs
here have distinct scores; it counts negative grades as judged, so grades here are >= 0.
"""

from __future__ import annotations

import numpy as np
import pytest

ir_measures = pytest.importorskip("ir_measures")

import rankgate  # noqa: E402


def collection(seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(10):
        qid = f"q{q}"
        judged = rng.choice(30, size=int(rng.integers(1, 12)), replace=False)
        qrels[qid] = {f"d{d}": int(rng.integers(0, 4)) for d in judged}
        depth = int(rng.integers(1, 25))
        docs = rng.choice(30, size=depth, replace=False)
        scores = rng.permutation(depth) + rng.random()  # distinct
        run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", range(10))
def test_judged_and_rr_at_k_equal_ir_measures(seed):
    qrels, run = collection(seed)
    names = ["Judged@5", "Judged@20", "RR@10", "RR@3"]
    expected = {}
    for metric in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run):
        expected[(metric.query_id, str(metric.measure))] = metric.value
    got = rankgate.evaluate(qrels, run, names).per_query
    for (qid, name), value in expected.items():
        assert got[qid][name] == pytest.approx(value, abs=1e-9), (seed, qid, name)

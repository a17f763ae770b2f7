"""Random qrels and runs with the awkward cases: ties, graded and negative grades,
queries missing from either side, queries without relevant docs."""

from __future__ import annotations

import numpy as np


def random_collection(
    seed: int, *, n_queries: int = 12, n_docs: int = 40, max_depth: int = 25
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    # ids of different lengths and cases, so that byte-wise tie-breaking ("d9" > "d10" > "D7") is exercised
    docs = [f"d{i}" if i % 4 else f"D{i}" for i in range(n_docs)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        qid = f"q{qi}"
        kind = rng.random()
        if kind > 0.1:  # 10%: query only in the run
            judged = rng.choice(n_docs, size=int(rng.integers(1, 15)), replace=False)
            grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=len(judged))
            if rng.random() < 0.1:  # no relevant doc
                grades = np.minimum(grades, 0)
            qrels[qid] = {docs[d]: int(g) for d, g in zip(judged, grades, strict=True)}
        if kind < 0.9 or kind > 0.95:  # 5%: query only in the qrels
            depth = int(rng.integers(0 if rng.random() < 0.05 else 1, max_depth))
            picked = rng.choice(n_docs, size=min(depth, n_docs), replace=False)
            # quarter-steps are exact in float32, so pytrec_eval's rounding cannot reorder them
            scores = rng.integers(0, 12, size=len(picked)) / 4.0
            if len(picked):
                run[qid] = {docs[d]: float(s) for d, s in zip(picked, scores, strict=True)}
    return qrels, run

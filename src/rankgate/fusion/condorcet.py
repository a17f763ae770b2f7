"""Condorcet fusion as ranx computes it: a sort of each query's candidates by pairwise majority.

``d`` goes before ``e`` when at least as many runs rank ``d`` above ``e`` as not (a run that
missed a document ranks it last; two missed documents count as ``e`` above ``d``). The
majority relation need not be transitive, so the result of the sort depends on the order it
starts from: ranx starts from a Python set (an order that changes between processes), rankgate
from the documents' ids in byte order, so that the output is reproducible. Where the majority
is a strict total order both give the same ranking. The fused score of the i-th document of
``c`` candidates is ``c - i``. This method compares pairs in Python, once per comparison.
"""

from __future__ import annotations

from functools import cmp_to_key

import numpy as np

from rankgate.core.columns import byte_order_rank, take_rows
from rankgate.fusion.align import Aligned

_MISSED = 1_000_000


def condorcet_scores(aligned: Aligned) -> np.ndarray:
    """The fused score of every slot (see the module docstring)."""
    size = aligned.num_slots
    positions = np.full((len(aligned.members), size), _MISSED, dtype=np.int64)
    for i, m in enumerate(aligned.members):
        positions[i, m.slots] = m.ranks
    doc_rank = byte_order_rank(take_rows(aligned.doc_names, aligned.slot_doc)) if size else np.zeros(0, np.int64)
    scores = np.zeros(size)
    for q in range(len(aligned.query_ids)):
        lo, hi = int(aligned.offsets[q]), int(aligned.offsets[q + 1])
        block = positions[:, lo:hi]
        n_runs = block.shape[0]

        def compare(x: int, y: int, block: np.ndarray = block, n_runs: int = n_runs) -> int:
            x_votes = int((block[:, x] < block[:, y]).sum())
            return -1 if x_votes >= n_runs - x_votes else 1

        start = np.argsort(doc_rank[lo:hi], kind="stable").tolist()  # the doc ids in byte order
        order = sorted(start, key=cmp_to_key(compare))
        scores[lo + np.asarray(order, dtype=np.int64)] = (hi - lo) - np.arange(hi - lo)
    return scores

"""Peer evaluators' conventions that change the run before it is scored (`Settings.drop_self`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import indices
from rankgate.core.run import Run


def without_self_matches(r: Run) -> Run:
    """``r`` without the rows whose doc id equals their query id (BEIR's ``ignore_identical_ids``).

    The other rows keep their scores and their order, so ties are broken as before.

    >>> r = Run.from_dict({"q1": {"q1": 9.0, "d1": 1.0}, "q2": {"d2": 1.0}})
    >>> without_self_matches(r).to_dict()
    {'q1': {'d1': 1.0}, 'q2': {'d2': 1.0}}
    """
    if not r.self_matches:
        return r
    query_of_row = pc.take(r.query_ids, indices(r.query_codes))
    docs = r.doc_ids.combine_chunks() if isinstance(r.doc_ids, pa.ChunkedArray) else r.doc_ids
    keep = np.flatnonzero(~pc.equal(query_of_row, docs).to_numpy(zero_copy_only=False))
    rows = indices(keep)
    return Run(
        pc.take(query_of_row, rows),
        pc.take(docs, rows),
        r.scores[keep],
        name=r.name,
        source=r.source,
        ranked=r.ranked,
    )

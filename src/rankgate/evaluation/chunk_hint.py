"""A run of chunk ids evaluated as documents: notice it from a sample, so the warning can name ``--chunk-sep``.

A RAG pipeline's run often holds chunk ids (``d002#0``) while the qrels judge documents
(``d002``); evaluated as they are, nearly every retrieved id is unjudged and every score is 0.
`chunk_matches` cuts a sample of the run's ids at the last of a few common separators and
counts those whose head is a judged document id.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import take_rows

SEPARATORS = ("#", "::")
SAMPLE = 500


def chunk_matches(
    run_doc_ids: pa.Array | pa.ChunkedArray, judged_doc_ids: pa.Array | pa.ChunkedArray
) -> dict[str, int]:
    """For each separator, how many of (up to `SAMPLE`) run ids, evenly spaced, hold it and cut there are judged.

    >>> chunk_matches(pa.array(["a#0", "a#1", "b::2", "c"]), pa.array(["a", "b"]))
    {'#': 2, '::': 1, 'sampled': 4}
    """
    n = len(run_doc_ids)
    rows = np.linspace(0, n - 1, min(n, SAMPLE)).astype(np.int64)  # ascending: distinct when n <= SAMPLE
    rows = rows[np.concatenate([[True], rows[1:] != rows[:-1]])] if n else rows
    sample = take_rows(run_doc_ids, rows)  # not ChunkedArray.take (a copy of the whole column first)
    judged: pa.Array | None = None  # the distinct judged ids, made only when a sampled id holds a separator
    out = {}
    for sep in SEPARATORS:
        # The head before the last separator; null where there is none (no list_element or fill_null
        # here: their Python-value arguments make pyarrow import pandas, half a second).
        heads = pc.extract_regex(sample, f"(?s)^(?P<head>.*){re.escape(sep)}")
        if isinstance(heads, pa.ChunkedArray):
            heads = heads.combine_chunks()
        if heads.null_count == len(heads):
            out[sep] = 0
            continue
        judged = pc.unique(judged_doc_ids) if judged is None else judged
        found = pc.is_in(heads.field(0), value_set=judged, skip_nulls=True)
        out[sep] = int(pc.sum(pc.and_(pc.is_valid(heads), found)).as_py() or 0)
    out["sampled"] = len(rows)
    return out

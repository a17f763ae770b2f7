"""Fingerprints of judgments and query sets, so that a baseline is only compared like for like.

A fingerprint is the SHA-256 (hex) of a canonical encoding, independent of the input's file
format, row order and compression: two qrels files give the same fingerprint exactly when
they hold the same (query, document, grade) triples.

>>> from rankgate.core.qrels import Qrels
>>> a = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}, "q2": {"d7": 2}})
>>> b = Qrels.from_dict({"q2": {"d7": 2}, "q1": {"d2": 0, "d1": 1}})
>>> qrels_fingerprint(a) == qrels_fingerprint(b)
True
>>> qrels_fingerprint(a) == qrels_fingerprint(Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d7": 2}}))
False
>>> query_fingerprint(["q2", "q1"]) == query_fingerprint(["q1", "q2", "q1"])
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc

if TYPE_CHECKING:
    from rankgate.core.qrels import Qrels

QRELS_DOMAIN = b"rankgate-qrels-v1\n"
QUERIES_DOMAIN = b"rankgate-queries-v1\n"


def qrels_fingerprint(qrels: Qrels) -> str:
    """SHA-256 hex of the judgments, over the sorted (query id, doc id, grade) triples.

    Each triple is encoded as ``<bytes>:<qid><bytes>:<docid><grade>\\n`` (lengths in UTF-8
    bytes, so any id is unambiguous), sorted by query id then doc id, byte-wise. The
    relevance threshold and other evaluation settings are not part of it: they are stored
    with the result's settings.

    Args:
        qrels: the judgments, as loaded (duplicate handling already applied).

    Returns:
        64 lowercase hex digits.
    """
    digest = hashlib.sha256(QRELS_DOMAIN)
    if qrels.num_rows == 0:
        return digest.hexdigest()
    codes = np.asarray(qrels.query_codes, dtype=np.int64)  # query ids are in byte order already
    docs = qrels.doc_ids.combine_chunks() if isinstance(qrels.doc_ids, pa.ChunkedArray) else qrels.doc_ids
    order = pc.sort_indices(pa.table({"c": codes, "d": docs}), sort_keys=[("c", "ascending"), ("d", "ascending")])
    queries = qrels.query_ids.take(pa.array(codes)).take(order)
    docs = docs.take(order)
    grades = pa.array(np.asarray(qrels.grades, dtype=np.int64)).take(order)
    _update(digest, _length_prefixed(queries), _length_prefixed(docs), pc.cast(grades, pa.string()))
    return digest.hexdigest()


def query_fingerprint(qids: Iterable[str]) -> str:
    """SHA-256 hex of a set of query ids (order and repeats do not matter).

    Args:
        qids: query ids, e.g. ``Results.query_ids``.

    Returns:
        64 lowercase hex digits.
    """
    digest = hashlib.sha256(QUERIES_DOMAIN)
    for qid in sorted({str(q).encode("utf-8") for q in qids}):
        digest.update(b"%d:%s\n" % (len(qid), qid))
    return digest.hexdigest()


def _length_prefixed(strings: pa.Array) -> pa.Array:
    """``<utf-8 byte length>:<string>`` for each string."""
    lengths = pc.cast(pc.binary_length(strings), pa.string())
    return pc.binary_join_element_wise(lengths, ":", strings, "")


def _update(digest: hashlib._Hash, queries: pa.Array, docs: pa.Array, grades: pa.Array) -> None:
    """Feed each row ``<query><doc><grade>\\n`` to ``digest``, in blocks (no per-row Python loop)."""
    rows = pc.binary_join_element_wise(queries, docs, grades, "\n", "")
    block = 1 << 16
    for start in range(0, len(rows), block):
        chunk = rows.slice(start, block)
        if isinstance(chunk, pa.ChunkedArray):
            chunk = chunk.combine_chunks()
        width = np.int64 if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type) else np.int32
        offsets = np.frombuffer(
            chunk.buffers()[1], dtype=width, count=len(chunk) + 1, offset=np.dtype(width).itemsize * chunk.offset
        )
        data = chunk.buffers()[2]
        digest.update(memoryview(data)[int(offsets[0]) : int(offsets[-1])])

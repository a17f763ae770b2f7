"""Per-query values as two compressed blobs per stored result.

- ids: the query ids as a JSON array (UTF-8), zlib-compressed;
- values: the float64 matrix (queries x measures), little-endian, row-major,
  zlib-compressed. Bytes in, the same bytes out: the round trip is exact.

Why blobs and not a row per (query, measure): see docs/store.md ("Per-query values").

>>> import numpy as np
>>> ids, values = encode(["q1", "q2"], np.array([[0.1, 1.0], [1 / 3, 0.0]]))
>>> back_ids, back = decode(ids, values, n_queries=2, n_measures=2, codec=CODEC)
>>> back_ids, bool((back == np.array([[0.1, 1.0], [1 / 3, 0.0]])).all())
(['q1', 'q2'], True)
"""

from __future__ import annotations

import json
import zlib

import numpy as np

from rankgate.errors import BackendError

CODEC = "zlib-json-ids/zlib-f8le-rows/v1"
LEVEL = 6


def encode(query_ids: list[str], values: np.ndarray) -> tuple[bytes, bytes]:
    """The two blobs of a result's per-query values."""
    ids = zlib.compress(json.dumps(list(query_ids), ensure_ascii=False).encode("utf-8"), LEVEL)
    matrix = np.ascontiguousarray(values, dtype="<f8")
    return ids, zlib.compress(matrix.tobytes(order="C"), LEVEL)


def decode(
    ids_blob: bytes, values_blob: bytes, *, n_queries: int, n_measures: int, codec: str, where: str = "the store"
) -> tuple[list[str], np.ndarray]:
    """Query ids and the float64 matrix back from `encode`'s blobs.

    Raises:
        BackendError: unknown codec, or blobs that do not decode to the recorded shape.
    """
    if codec != CODEC:
        raise BackendError(f"{where}: per-query values use codec {codec!r}, which this rankgate cannot read")
    try:
        ids = json.loads(zlib.decompress(bytes(ids_blob)).decode("utf-8"))
        raw = zlib.decompress(bytes(values_blob))
    except (zlib.error, ValueError, UnicodeDecodeError) as e:
        raise BackendError(f"{where}: per-query values are corrupt ({e})") from None
    if not isinstance(ids, list) or len(ids) != n_queries or len(raw) != 8 * n_queries * n_measures:
        raise BackendError(
            f"{where}: per-query values are corrupt (expected {n_queries} queries x {n_measures} measures)"
        )
    values = np.frombuffer(raw, dtype="<f8").reshape(n_queries, n_measures).astype(np.float64)
    return [str(q) for q in ids], values

"""Exact top-k by inner product: a tiled matrix product and a two-step selection per tile.

Queries are taken in blocks and documents in tiles of at most `TILE_COLUMNS`; each tile's
scores ``S = Q_block @ X_tile.T`` are one BLAS call into a reused buffer of at most
``block_bytes``. The top ``k`` of each row of a tile is found without sorting or partitioning
the whole row:

1. Columns are put in ``G`` strided groups (group ``j`` holds columns ``j, j+G, j+2G, ...``) and
   each group's maximum is taken: one cheap vectorized pass.
2. The ``k``-th largest group maximum ``t`` is a lower bound of the row's ``k``-th largest score
   (``k`` distinct groups each hold a score >= ``t``), so every top-k score lies in a group whose
   maximum is >= ``t``. Only those groups (about ``k`` of them) are gathered and sorted.

The tiles' top ``k`` are then merged (a tile's best ``k`` hold every global top-k member of that
tile). Scores that tie are ordered by column ascending, so results never depend on the block or
tile size or on the order of work: the same input gives the same output.

>>> X = np.array([[1, 0], [0, 1], [1, 0], [0.5, 0.5]], dtype=np.float32)
>>> scores, ids = topk_inner_product(np.array([[1, 0]], dtype=np.float32), X, 3)
>>> ids.tolist(), scores.tolist()
([[0, 2, 3]], [[1.0, 1.0, 0.5]])
"""

from __future__ import annotations

import numpy as np

DEFAULT_BLOCK_BYTES = 64 << 20
TILE_COLUMNS = 32768  # documents per tile: wide enough for BLAS, small enough to keep blocks of queries tall


def topk_inner_product(
    queries: np.ndarray, vectors: np.ndarray, k: int, *, block_bytes: int = DEFAULT_BLOCK_BYTES
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows of ``vectors`` with the largest inner product with each query.

    Args:
        queries: float32 (m, d).
        vectors: float32 (n, d).
        k: results per query (padded with id -1 and score -inf beyond n).
        block_bytes: memory for one tile of scores; bounds the working set.

    Returns:
        (scores float32 (m, k), ids int64 (m, k)), best first, ties by id ascending.
    """
    m, n = queries.shape[0], vectors.shape[0]
    scores = np.full((m, k), -np.inf, dtype=np.float32)
    ids = np.full((m, k), -1, dtype=np.int64)
    if m == 0 or n == 0 or k == 0:
        return scores, ids
    cols = min(n, TILE_COLUMNS, max(1, block_bytes // 4))
    rows = max(1, min(m, block_bytes // (4 * cols)))
    dtype = np.result_type(queries.dtype, vectors.dtype)
    buffer = np.empty(rows * cols, dtype=dtype)  # reused by every tile: no page faults per tile
    for lo in range(0, m, rows):
        q = queries[lo : lo + rows]
        b = len(q)
        parts = []
        for c0 in range(0, n, cols):
            tile = vectors[c0 : c0 + cols]
            block = np.matmul(q, tile.T, out=buffer[: b * len(tile)].reshape(b, len(tile)))
            s, i = select_topk(block, k)
            parts.append((s, i + c0))
        if len(parts) == 1:
            s, i = parts[0]
        else:
            s = np.concatenate([p[0] for p in parts], axis=1)
            i = np.concatenate([p[1] for p in parts], axis=1)
            order = np.lexsort((i, -s), axis=-1)[:, :k]
            s, i = np.take_along_axis(s, order, axis=1), np.take_along_axis(i, order, axis=1)
        scores[lo : lo + b, : s.shape[1]] = s
        ids[lo : lo + b, : i.shape[1]] = i
    return scores, ids


def select_topk(S: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``min(k, n)`` of each row of ``S`` (b, n): (values, column ids), best first, ties by id."""
    b, n = S.shape
    if k >= n:
        order = np.argsort(-S, axis=1, kind="stable")
        return np.take_along_axis(S, order, axis=1), order.astype(np.int64)
    group = min(128, max(8, n // (64 * k)), max(1, n // (2 * k)))
    G = n // group
    full = G * group
    S3 = S[:, :full].reshape(b, group, G)
    M = S3.max(axis=1)
    if full < n:
        M = np.concatenate([M, S[:, full:].max(axis=1, keepdims=True)], axis=1)
    width = M.shape[1]
    threshold = np.partition(M, width - k, axis=1)[:, width - k]
    r, g = np.nonzero(threshold[:, None] <= M)
    in_tail = g == G
    rm, gm = r[~in_tail], g[~in_tail]
    gathered = S3[rm, :, gm]  # (candidate groups, group)
    ri, jj = np.nonzero(gathered >= threshold[rm][:, None])
    rows, cols, vals = rm[ri], gm[ri] + jj * G, gathered[ri, jj]
    if in_tail.any():
        rt = r[in_tail]
        tail = S[rt, full:]
        ti, tj = np.nonzero(tail >= threshold[rt][:, None])
        rows = np.concatenate([rows, rt[ti]])
        cols = np.concatenate([cols, full + tj])
        vals = np.concatenate([vals, tail[ti, tj]])
    order = np.lexsort((cols, -vals, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    counts = np.bincount(rows, minlength=b)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.arange(len(rows)) - starts[rows]
    keep = rank < k
    out_vals = np.empty((b, k), dtype=S.dtype)
    out_ids = np.empty((b, k), dtype=np.int64)
    out_vals[rows[keep], rank[keep]] = vals[keep]
    out_ids[rows[keep], rank[keep]] = cols[keep]
    return out_vals, out_ids

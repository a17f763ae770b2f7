"""Split a run file into query partitions on disk, and qrels into the same partitions (hash of the query id).

Every row of a query lands in the same partition, whatever order the file is in, so each
partition can be evaluated alone and the results merged exactly (`Results.merge`). Rows
keep their file order inside a partition, so "first" duplicates and ``ties="input"``
behave as in memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from rankgate.core.columns import indices, string_hashes
from rankgate.core.qrels import Qrels
from rankgate.io.blocks import Block

SCHEMA = pa.schema([("qid", pa.string()), ("docid", pa.string()), ("value", pa.float64()), ("where", pa.int64())])


@dataclass
class Partitions:
    """The partition files of one input and what was learned while writing them."""

    paths: list[Path]
    rows: np.ndarray  # rows per partition
    source: str
    fmt: str

    def read(self, index: int) -> pa.Table:
        with pa.OSFile(str(self.paths[index]), "rb") as f:
            return pa.ipc.open_stream(f).read_all()


def partition_of(qid: pa.Array, n: int) -> np.ndarray:
    """Partition of each query id: its (chunk-independent) 64-bit hash modulo ``n``."""
    return (string_hashes(qid) % np.uint64(n)).astype(np.int64)


def split_block(block: Block, n: int) -> list[tuple[int, pa.Table]]:
    """The non-empty pieces of ``block`` per partition, rows in file order within each."""
    part = partition_of(block.qid, n)
    order = np.argsort(part, kind="stable")
    counts = np.bincount(part, minlength=n)
    table = pa.table(
        {"qid": block.qid, "docid": block.docid, "value": block.value, "where": block.where}, schema=SCHEMA
    ).take(pa.array(order))
    out = []
    start = 0
    for i in np.flatnonzero(counts):
        out.append((int(i), table.slice(start, int(counts[i]))))
        start += int(counts[i])
    return out


def write_partitions(
    blocks: Iterable[Block],
    directory: str | os.PathLike[str],
    n: int,
    *,
    prefix: str,
    source: str,
    fmt: str,
    on_block: Callable[[Block], None] | None = None,
) -> Partitions:
    """Write ``blocks`` into ``n`` Arrow IPC files under ``directory``."""
    directory = Path(directory)
    paths = [directory / f"{prefix}-{i:04d}.arrow" for i in range(n)]
    sinks = [pa.OSFile(str(p), "wb") for p in paths]
    writers = [pa.ipc.new_stream(s, SCHEMA) for s in sinks]
    rows = np.zeros(n, dtype=np.int64)
    try:
        for block in blocks:
            if on_block is not None:
                on_block(block)
            if not len(block):
                continue
            for i, piece in split_block(block, n):
                writers[i].write_table(piece)
                rows[i] += piece.num_rows
    finally:
        for w in writers:
            w.close()
        for s in sinks:
            s.close()
    return Partitions(paths=paths, rows=rows, source=source, fmt=fmt)


def split_qrels(q: Qrels, n: int) -> list[pa.Table]:
    """The judgments of each of ``n`` query partitions (rows in `Qrels` order; empty tables too).

    The qrels are read once per session; every run's partitions are matched with these.
    """
    qid = q.query_ids.take(indices(q.query_codes))
    block = Block(qid, q.doc_ids, q.grades.astype(np.float64), np.arange(1, q.num_rows + 1, dtype=np.int64))
    pieces = [SCHEMA.empty_table() for _ in range(n)]
    for i, piece in split_block(block, n):
        pieces[i] = piece
    return pieces


def qrels_of(pieces: list[pa.Table], source: str | None) -> Qrels:
    """The `Qrels` of some partitions' judgments (already checked when the qrels were read)."""
    table = pa.concat_tables(pieces) if pieces else SCHEMA.empty_table()
    return Qrels(table["qid"], table["docid"], table["value"].to_numpy(), source=source)


def with_judgments(plan: list[list[int]], qrels_rows: np.ndarray) -> list[list[int]]:
    """Fold groups without a single judgment into a neighbour: their run queries are run-only,
    and a group needs judgments to be evaluated on its own."""
    out: list[list[int]] = []
    pending: list[int] = []
    for group in plan:
        if int(qrels_rows[group].sum()) == 0:
            if out:
                out[-1].extend(group)
            else:
                pending.extend(group)
            continue
        out.append(pending + group)
        pending = []
    if pending:  # no judgments at all: one group, so that evaluate() says so
        out.append(pending)
    return out


def groups(rows: np.ndarray, max_rows: int) -> list[list[int]]:
    """Consecutive partitions gathered while their rows stay within ``max_rows`` (at least one each)."""
    out: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i, r in enumerate(rows.tolist()):
        if current and total + r > max_rows:
            out.append(current)
            current, total = [], 0
        current.append(i)
        total += r
    if current:
        out.append(current)
    return out

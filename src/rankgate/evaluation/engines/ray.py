"""Evaluation of a sharded run on a Ray cluster (``--engine ray``).

A map task per shard (Parquet or TREC file) splits its rows into query partitions; a reduce
task per group of partitions gathers that group's rows from every shard, evaluates them
against the group's judgments, and returns per-query `Results`, which the driver merges.
Shards need not be split by query: a query whose rows sit in several shards is gathered in
one partition. The merged result equals an in-memory evaluation of all shards concatenated
in order (shard order decides which copy is "first" among duplicates).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.errors import InputError
from rankgate.evaluation.engines.partition import split_block, with_judgments
from rankgate.evaluation.engines.ray_cluster import join
from rankgate.evaluation.results import Results
from rankgate.io.blocks import iter_blocks
from rankgate.measures.registry import Measure


def shard_paths(run: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """A run given as a folder of shards, a glob pattern, one file, or a list of files."""
    if isinstance(run, str | os.PathLike):
        text = str(run)
        if os.path.isdir(text):
            found = sorted(str(p) for p in Path(text).iterdir() if p.is_file() and not p.name.startswith((".", "_")))
        elif any(ch in text for ch in "*?["):
            found = sorted(glob.glob(text))
        else:
            found = [text]
    else:
        found = [str(p) for p in run]
    if not found:
        raise InputError("no run shards found", source=str(run))
    for path in found:
        if not os.path.isfile(path):
            raise InputError("no such file", source=path)
    return found


def evaluate_ray(
    qrels: str | os.PathLike[str],
    run: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    measures: str | Measure | Sequence[str | Measure],
    *,
    address: str | None = None,
    partitions: int | None = None,
    name: str | None = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    **options: Any,
) -> Results:
    """Evaluate a run sharded into files on a Ray cluster.

    Args:
        qrels: path of the judgments (read by the driver; they are usually small).
        run: a folder of shards, a glob, a file, or a list of files (TREC text or Parquet).
        measures: as in `rankgate.evaluate`.
        address: the Ray cluster (``"auto"``, ``"ray://host:10001"``); default: connect to the
            running cluster or start a local one.
        partitions: query partitions (default: 4 per CPU of the cluster).
        name: the run's name (default: the folder's or file's stem).
        **options: as in `rankgate.evaluate`.
    """
    shards = shard_paths(run)
    ray = join(address)
    n = partitions or max(2, 4 * int(ray.cluster_resources().get("CPU", 1)))

    qrels_pieces: list[list[pa.Table]] = [[] for _ in range(n)]
    top = -np.inf
    for block in iter_blocks(qrels, "qrels", qrels_format):
        if len(block):
            top = max(top, float(block.value.max()))
        for i, piece in split_block(block, n):
            qrels_pieces[i].append(piece)
    qrels_rows = np.array([sum(t.num_rows for t in pieces) for pieces in qrels_pieces])
    plan = with_judgments([[i] for i in range(n)], qrels_rows)

    split = ray.remote(_split_shard).options(num_returns=n) if n > 1 else ray.remote(_split_shard)
    by_shard = [split.remote(path, run_format, n) for path in shards]
    if n == 1:
        by_shard = [[ref] for ref in by_shard]
    evaluate_group = ray.remote(_evaluate_group)
    run_name = name or _name_of(run)
    futures = [
        evaluate_group.remote(
            [t for i in group for t in qrels_pieces[i]],
            str(qrels),
            shards,
            list(measures) if not isinstance(measures, str | Measure) else [measures],
            int(top) if np.isfinite(top) else 0,
            run_name,
            options,
            *[refs[i] for i in group for refs in by_shard],
        )
        for group in plan
    ]
    try:
        parts = ray.get(futures)
    except ray.exceptions.RayTaskError as e:
        cause = e.as_instanceof_cause()
        if isinstance(cause, InputError):
            raise InputError(cause.message, source=cause.source, line=cause.line, text=cause.text) from None
        raise
    merged = Results.merge(parts)
    merged.settings["engine"] = f"ray: {len(shards)} shards, {n} partitions in {len(plan)} tasks"
    return merged


def _split_shard(path: str, fmt: str | None, n: int) -> Any:
    """Map task: one shard's rows, split by query partition (one table per partition)."""
    pieces: list[list[pa.Table]] = [[] for _ in range(n)]
    for block in iter_blocks(path, "run", fmt):
        for i, piece in split_block(block, n):
            pieces[i].append(piece)
    from rankgate.evaluation.engines.partition import SCHEMA

    tables = [pa.concat_tables(p) if p else SCHEMA.empty_table() for p in pieces]
    return tables if n > 1 else tables[0]


def _evaluate_group(
    qrels_pieces: list[pa.Table],
    qrels_source: str,
    shards: list[str],
    measures: list[Any],
    max_grade: int,
    run_name: str,
    options: dict[str, Any],
    *run_pieces: pa.Table,
) -> Results:
    """Reduce task: one group of partitions, gathered from every shard, evaluated."""
    from rankgate.core.qrels import Qrels
    from rankgate.core.run import Run
    from rankgate.evaluation.engines.partition import SCHEMA
    from rankgate.evaluation.evaluate import evaluate

    duplicates = options.get("duplicates", "error")
    q = pa.concat_tables(qrels_pieces) if qrels_pieces else SCHEMA.empty_table()
    q_where = q["where"].to_numpy()
    qrels = Qrels(
        q["qid"],
        q["docid"],
        q["value"].to_numpy(),
        source=qrels_source,
        duplicates=duplicates,
        locate=lambda row: f"{qrels_source}:{int(q_where[row])}",
    )
    # run_pieces come partition by partition, shard by shard within each: keep shard order per
    # query by ordering pieces by shard first (a stable order, as the concatenated shards)
    per_shard = len(shards)
    ordered = sorted(range(len(run_pieces)), key=lambda k: (k % per_shard, k // per_shard))
    tables = [run_pieces[k] for k in ordered]
    shard_of: np.ndarray = (
        np.concatenate([np.full(run_pieces[k].num_rows, k % per_shard) for k in ordered])
        if tables
        else np.zeros(0, dtype=np.int64)
    )
    r_table = pa.concat_tables(tables) if tables else SCHEMA.empty_table()
    r_where = r_table["where"].to_numpy()
    run = Run(
        r_table["qid"],
        r_table["docid"],
        r_table["value"].to_numpy(),
        name=run_name,
        source=shards[0] if len(shards) == 1 else None,
        duplicates=duplicates,
        locate=lambda row: _where(shards[int(shard_of[row])], int(r_where[row])),
    )
    return evaluate(qrels, run, measures, max_grade=max_grade, **options)


def _where(shard: str, n: int) -> str:
    return f"{shard} row {n}" if shard.endswith(".parquet") else f"{shard}:{n}"


def _name_of(run: Any) -> str:
    from rankgate.io.source import stem

    if isinstance(run, str | os.PathLike) and os.path.isdir(str(run)):
        return Path(str(run)).name
    if isinstance(run, str | os.PathLike) and not any(ch in str(run) for ch in "*?["):
        return stem(run)
    if isinstance(run, str | os.PathLike):  # a glob: the folder it looks in ('new/*.parquet': new)
        folder = Path(str(run)).parent
        if folder.name and not any(ch in str(folder) for ch in "*?["):
            return folder.name
    return "run"

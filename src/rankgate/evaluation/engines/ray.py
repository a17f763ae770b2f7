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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.errors import InputError
from rankgate.evaluation.engines import Job
from rankgate.evaluation.engines.partition import SCHEMA, qrels_of, split_block, split_qrels, with_judgments
from rankgate.evaluation.engines.ray_cluster import join
from rankgate.evaluation.results import Results
from rankgate.evaluation.settings import Settings
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


@dataclass(frozen=True)
class OnRay:
    """Evaluates a run sharded into files on a Ray cluster.

    Attributes:
        address: the Ray cluster (``"auto"``, ``"ray://host:10001"``); default: connect to the
            running cluster or start a local one.
        partitions: query partitions (default: 4 per CPU of the cluster).
    """

    address: str | None = None
    partitions: int | None = None

    def evaluate(self, job: Job, run: Any, *, name: str | None = None, run_format: str | None = None) -> Results:
        """Evaluate ``run``: a folder of shards, a glob, a file, or a list of files (TREC or Parquet);
        a run already in memory (`Run`, dict, frame) is evaluated here."""
        if not isinstance(run, str | os.PathLike | list | tuple):
            from rankgate.evaluation.engines.local import InMemory

            return InMemory().evaluate(job, run, name=name, run_format=run_format)
        shards = shard_paths(run)
        ray = join(self.address)
        n = self.partitions or max(2, 4 * int(ray.cluster_resources().get("CPU", 1)))
        qrels = split_qrels(job.qrels, n)
        plan = with_judgments([[i] for i in range(n)], np.array([t.num_rows for t in qrels]))
        split = ray.remote(_split_shard).options(num_returns=n) if n > 1 else ray.remote(_split_shard)
        by_shard = [split.remote(path, run_format, n) for path in shards]
        if n == 1:
            by_shard = [[ref] for ref in by_shard]
        evaluate_group = ray.remote(_evaluate_group)
        # each task gets its group's judgments, not the whole qrels
        common = (job.qrels.source, job.measures, job.settings, job.chunk_rows, job.top_grade)
        futures = [
            evaluate_group.remote(
                [qrels[i] for i in group],
                common,
                shards,
                name or _name_of(run),
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


def evaluate_ray(
    qrels: Any,
    run: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    measures: str | Measure | Sequence[str | Measure],
    *,
    address: str | None = None,
    partitions: int | None = None,
    name: str | None = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    chunk_rows: int = 1_000_000,
    **policies: Any,
) -> Results:
    """Evaluate a run sharded into files on a Ray cluster (`OnRay`); the qrels are read by the driver.

    Args:
        qrels: the judgments (anything `rankgate.evaluate` takes; they are usually small).
        run: a folder of shards, a glob, a file, or a list of files (TREC text or Parquet).
        measures: as in `rankgate.evaluate`.
        address, partitions: as in `OnRay`.
        name: the run's name (default: the folder's or file's stem).
        **policies: as in `rankgate.evaluate`.
    """
    job = Job.read(qrels, measures, Settings.of(**policies), qrels_format=qrels_format, chunk_rows=chunk_rows)
    return OnRay(address, partitions).evaluate(job, run, name=name, run_format=run_format)


def _split_shard(path: str, fmt: str | None, n: int) -> Any:
    """Map task: one shard's rows, split by query partition (one table per partition)."""
    pieces: list[list[pa.Table]] = [[] for _ in range(n)]
    for block in iter_blocks(path, "run", fmt):
        for i, piece in split_block(block, n):
            pieces[i].append(piece)
    tables = [pa.concat_tables(p) if p else SCHEMA.empty_table() for p in pieces]
    return tables if n > 1 else tables[0]


def _evaluate_group(
    qrels_pieces: list[pa.Table], common: tuple[Any, ...], shards: list[str], run_name: str, *run_pieces: pa.Table
) -> Results:
    """Reduce task: one group of partitions, gathered from every shard, evaluated."""
    from rankgate.core.run import Run
    from rankgate.evaluation.driver import evaluate_in_memory

    source, measures, settings, chunk_rows, max_grade = common
    qrels = qrels_of(qrels_pieces, source)
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
        duplicates=settings.duplicates,
        locate=lambda row: _where(shards[int(shard_of[row])], int(r_where[row])),
    )
    return evaluate_in_memory(qrels, run, measures, settings, chunk_rows=chunk_rows, max_grade=max_grade)


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

"""Out-of-core evaluation (`OutOfCore`): runs larger than memory, in bounded memory.

The qrels are read once (by the session) and split by a hash of the query id; the run file
is streamed once and split the same way into partition files on disk; then groups of
partitions that fit the memory budget are evaluated one at a time and their `Results`
merged. Query partitions are independent, so the result equals the
in-memory one exactly (values, query counts, warnings), whatever order the file is in.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.run import Run
from rankgate.errors import ConfigError, InputError
from rankgate.evaluation.driver import evaluate_in_memory
from rankgate.evaluation.engines import MAX_PARTITIONS, Job, check_partitions, open_file_allowance, refuse_shards
from rankgate.evaluation.engines.local import InMemory
from rankgate.evaluation.engines.partition import (
    Partitions,
    groups,
    qrels_of,
    split_qrels,
    with_judgments,
    write_partitions,
)
from rankgate.evaluation.results import Results
from rankgate.evaluation.settings import Settings
from rankgate.io.blocks import Block, iter_blocks, stream_format
from rankgate.io.source import local_path, sniff_codec, stem
from rankgate.measures.registry import Measure

# Peak bytes of memory per row (run + qrels) while a group of partitions is evaluated, with
# margin (measured about 65 B per row in memory; see docs/scale.md).
BYTES_PER_ROW = 160
TEXT_BYTES_PER_LINE = 40  # a typical TREC run line
COMPRESSION_RATIO = 6  # a guess for gzip/zstd text, used only to choose the partition count
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def parse_memory(text: str | int) -> int:
    """``"2GB"``, ``"512MB"``, ``"1.5g"`` or a number of bytes -> bytes.

    >>> parse_memory("2GB"), parse_memory("512m"), parse_memory(8_000_000)
    (2147483648, 536870912, 8000000)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?[bB]?)\s*", str(text))
        if not m:
            raise ConfigError(f"a memory budget looks like 2GB or 512MB. Got {text!r} instead.", key_path="memory")
        value = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if value < 1 << 20:
        raise ConfigError(f"a memory budget must be at least 1MB. Got {text!r} instead.", key_path="memory")
    return value


def estimated_rows(path: str | os.PathLike[str]) -> int:
    """Rough number of rows of a TREC or Parquet file, from its size (chooses partition counts)."""
    try:
        size = os.path.getsize(local_path(path))  # a pipe or "-" is spooled to a file first
    except FileNotFoundError:
        raise InputError("file not found", source=str(path)) from None
    if str(path).endswith(".parquet"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(str(path)).metadata.num_rows)
    if sniff_codec(path):
        size *= COMPRESSION_RATIO
    return max(1, size // TEXT_BYTES_PER_LINE)


@dataclass(frozen=True)
class OutOfCore:
    """Streams a TREC or Parquet run into query partitions on disk; evaluates groups of them
    within ``memory``.

    Attributes:
        memory: budget for the evaluation of one group of partitions ("2GB", bytes).
        partitions: number of partition files (default: from the sizes and the budget).
        when_larger: evaluate in memory when the run fits the budget (``--memory``); else always
            partition (``--partitions``, `evaluate_out_of_core`).
        workdir: where the partition files go (default: the system's temp folder); they are
            removed at the end, also on errors.
        progress: show progress bars (default: when stderr is a terminal).
    """

    memory: str | int | None = None
    partitions: int | None = None
    when_larger: bool = False
    workdir: str | os.PathLike[str] | None = None
    progress: bool | None = None

    def evaluate(self, job: Job, run: Any, *, name: str | None = None, run_format: str | None = None) -> Results:
        refuse_shards(run)
        check_partitions(self.partitions, files=True)
        budget = parse_memory(self.memory or "2GB")
        rows = job.qrels.num_rows + (estimated_rows(run) if isinstance(run, str | os.PathLike) else 0)
        if not isinstance(run, str | os.PathLike) or (self.when_larger and rows * BYTES_PER_ROW <= budget):
            return InMemory().evaluate(job, run, name=name, run_format=run_format)
        most = min(MAX_PARTITIONS, open_file_allowance())
        n = self.partitions or int(min(most, max(1, 4 * math.ceil(rows * BYTES_PER_ROW / budget))))
        rfmt = stream_format(run, run_format)
        show = sys.stderr.isatty() if self.progress is None else self.progress
        qrels = split_qrels(job.qrels, n)
        qrels_rows = np.array([t.num_rows for t in qrels], dtype=np.int64)
        with tempfile.TemporaryDirectory(prefix="rankgate-ooc-", dir=self.workdir) as tmp, _Progress(show) as bar:
            blocks = bar.track(iter_blocks(run, "run", rfmt), "splitting run")
            rparts = write_partitions(blocks, tmp, n, prefix="run", source=str(run), fmt=rfmt)
            plan = with_judgments(groups(qrels_rows + rparts.rows, max(1, budget // BYTES_PER_ROW)), qrels_rows)
            parts = []
            for group in bar.steps(plan, "evaluating partitions"):
                rq, rd, rv, rlocate = _load(rparts, group)
                r = Run(rq, rd, rv, name=name or stem(run), source=str(run), duplicates=job.settings.duplicates,
                        locate=rlocate)  # fmt: skip
                q = qrels_of([qrels[i] for i in group], job.qrels.source)
                parts.append(evaluate_in_memory(q, r, job.measures, job.settings, chunk_rows=job.chunk_rows,
                                                max_grade=job.top_grade))  # fmt: skip
        merged = Results.merge(parts)
        shown = self.memory or "2GB"
        merged.settings["engine"] = f"local, out of core: {n} partitions in {len(plan)} groups, memory budget {shown}"
        return merged


def evaluate_out_of_core(
    qrels: Any,
    run: str | os.PathLike[str],
    measures: str | Measure | Sequence[str | Measure],
    *,
    memory: str | int = "2GB",
    partitions: int | None = None,
    workdir: str | os.PathLike[str] | None = None,
    qrels_format: str | None = None,
    run_format: str | None = None,
    name: str | None = None,
    progress: bool | None = None,
    chunk_rows: int = 1_000_000,
    **policies: Any,
) -> Results:
    """Evaluate a TREC or Parquet run of any size within ``memory`` (plus a fixed overhead and
    the qrels, which are read once and held in memory).

    Args:
        qrels: the judgments (anything `rankgate.evaluate` takes).
        run: path of the run (TREC text or Parquet; sorted by query or not).
        measures: as in `rankgate.evaluate`.
        memory, partitions, workdir, progress: as in `OutOfCore`.
        **policies: ``queries=``, ``ties=``, ``rel=``, ``empty=``, ``duplicates=``,
            ``judged_only=`` as in `rankgate.evaluate`.

    Returns:
        `Results` equal to ``rankgate.evaluate`` on the same files, with
        ``settings["engine"]`` saying how it ran.
    """
    job = Job.read(qrels, measures, Settings.of(**policies), qrels_format=qrels_format, chunk_rows=chunk_rows)
    engine = OutOfCore(memory=memory, partitions=partitions, workdir=workdir, progress=progress)
    return engine.evaluate(job, run, name=name, run_format=run_format)


def _load(parts: Partitions, group: list[int]) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray, Any]:
    """Query ids, doc ids and values of a group of partitions, and a locator naming each row's line."""
    table = pa.concat_tables([parts.read(i) for i in group])
    where = table["where"].to_numpy()
    source = parts.source
    if parts.fmt == "parquet":
        locate = lambda row: f"{source} row {int(where[row])}"  # noqa: E731
    else:
        locate = lambda row: f"{source}:{int(where[row])}"  # noqa: E731
    return table["qid"], table["docid"], table["value"].to_numpy(), locate


class _Progress:
    """Rich progress bars on stderr when asked; a no-op otherwise."""

    def __init__(self, show: bool) -> None:
        self.show = show
        self.progress: Any = None

    def __enter__(self) -> _Progress:
        if self.show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(
                TextColumn("{task.description}", markup=False),  # descriptions name files: brackets stay
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def track(self, blocks: Iterable[Block], what: str) -> Iterable[Block]:
        if self.progress is None:
            yield from blocks
            return
        task = self.progress.add_task(f"{what} (rows)", total=None)
        for block in blocks:
            self.progress.advance(task, len(block))
            yield block

    def steps(self, items: list[list[int]], what: str) -> Iterable[list[int]]:
        if self.progress is None:
            yield from items
            return
        task = self.progress.add_task(what, total=len(items))
        for item in items:
            yield item
            self.progress.advance(task)

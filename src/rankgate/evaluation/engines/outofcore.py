"""Out-of-core evaluation: runs and qrels larger than memory, in bounded memory.

Both files are streamed once and split by a hash of the query id into partition files on
disk; then groups of partitions that fit the memory budget are evaluated one at a time and
their `Results` merged. Query partitions are independent, so the result equals the
in-memory one exactly (values, query counts, warnings), whatever order the file is in.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import ConfigError
from rankgate.evaluation.engines.partition import Partitions, groups, with_judgments, write_partitions
from rankgate.evaluation.results import Results
from rankgate.io.blocks import Block, iter_blocks, stream_format
from rankgate.io.source import sniff_codec, stem
from rankgate.measures.registry import Measure

# Peak bytes of memory per row (run + qrels) while a group of partitions is evaluated, with
# margin (measured about 65 B per row in memory; see docs/scale.md).
BYTES_PER_ROW = 160
TEXT_BYTES_PER_LINE = 40  # a typical TREC run line
COMPRESSION_RATIO = 6  # a guess for gzip/zstd text, used only to choose the partition count
MAX_PARTITIONS = 4096
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
    size = os.path.getsize(path)
    if str(path).endswith(".parquet"):
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(str(path)).metadata.num_rows)
    if sniff_codec(path):
        size *= COMPRESSION_RATIO
    return max(1, size // TEXT_BYTES_PER_LINE)


def fits_in_memory(qrels: str | os.PathLike[str], run: str | os.PathLike[str], memory: int) -> bool:
    return (estimated_rows(qrels) + estimated_rows(run)) * BYTES_PER_ROW <= memory


def evaluate_out_of_core(
    qrels: str | os.PathLike[str],
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
    **options: Any,
) -> Results:
    """Evaluate TREC or Parquet files of any size within ``memory`` (plus a fixed overhead).

    Args:
        qrels: path of the judgments (TREC text or Parquet, compressed or not).
        run: path of the run (TREC text or Parquet; sorted by query or not).
        measures: as in `rankgate.evaluate`.
        memory: budget for the evaluation of one group of partitions ("2GB", bytes).
        partitions: number of partition files (default: from the file sizes and the budget).
        workdir: where the partition files go (default: the system's temp folder); they are
            removed at the end, also on errors.
        progress: show progress bars (default: when stderr is a terminal).
        **options: ``queries=``, ``ties=``, ``rel=``, ``empty=``, ``duplicates=``,
            ``judged_only=``, ``chunk_rows=`` as in `rankgate.evaluate`.

    Returns:
        `Results` equal to ``rankgate.evaluate`` on the same files, with
        ``settings["engine"]`` saying how it ran.
    """
    from rankgate.evaluation.evaluate import evaluate

    budget = parse_memory(memory)
    qfmt, rfmt = stream_format(qrels, qrels_format), stream_format(run, run_format)
    rows_guess = estimated_rows(qrels) + estimated_rows(run)
    n = partitions or int(min(MAX_PARTITIONS, max(1, 4 * math.ceil(rows_guess * BYTES_PER_ROW / budget))))
    if n < 1:
        raise ConfigError(f"partitions must be >= 1. Got {partitions!r} instead.", key_path="partitions")
    show = sys.stderr.isatty() if progress is None else progress
    duplicates = options.get("duplicates", "error")
    with tempfile.TemporaryDirectory(prefix="rankgate-ooc-", dir=workdir) as tmp, _Progress(show) as bar:
        qparts = write_partitions(
            bar.track(iter_blocks(qrels, "qrels", qfmt), "splitting qrels"),
            tmp,
            n,
            prefix="qrels",
            source=str(qrels),
            fmt=qfmt,
        )
        rparts = write_partitions(
            bar.track(iter_blocks(run, "run", rfmt), "splitting run"), tmp, n, prefix="run", source=str(run), fmt=rfmt
        )
        max_grade = int(qparts.max_value) if np.isfinite(qparts.max_value) else 0
        plan = with_judgments(groups(qparts.rows + rparts.rows, max(1, budget // BYTES_PER_ROW)), qparts.rows)
        parts = []
        for group in bar.steps(plan, "evaluating partitions"):
            qq, qd, qv, qlocate = _load(qparts, group)
            q = Qrels(qq, qd, qv, source=str(qrels), duplicates=duplicates, locate=qlocate)
            rq, rd, rv, rlocate = _load(rparts, group)
            r = Run(rq, rd, rv, name=name or stem(run), source=str(run), duplicates=duplicates, locate=rlocate)
            parts.append(evaluate(q, r, measures, max_grade=max_grade, **options))
    merged = Results.merge(parts)
    merged.settings["engine"] = f"local, out of core: {n} partitions in {len(plan)} groups, memory budget {memory}"
    return merged


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
                TextColumn("{task.description}"),
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

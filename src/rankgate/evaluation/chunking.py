"""The settings' chunk and span policies, applied where an evaluation reads its inputs.

`documents_of` folds a run of chunk ids into a run of documents (``chunk_sep`` / ``chunk_map``,
``chunk_agg``; `rankgate.core.chunks`) in `rankgate.evaluation.driver.evaluate_in_memory`, the
step every engine ends in, so that in memory, out of core and on Ray a chunked run is read the
same way (folding works query by query, and query partitions hold whole queries).
`judgments_of` turns span judgments into chunk judgments (``chunk_offsets``, ``span_overlap``)
where a session reads its qrels.
"""

from __future__ import annotations

from typing import Any

from rankgate.core.chunks import ChunkCounts, to_documents
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.evaluation.settings import Settings


def documents_of(run: Run, settings: Settings) -> tuple[Run, ChunkCounts | None]:
    """``run`` read as documents when the settings say its ids are chunks; None counts otherwise."""
    if not settings.chunked:
        return run, None
    table = None
    if settings.chunk_map is not None:
        from rankgate.io.chunks import load_chunk_map

        table = load_chunk_map(settings.chunk_map)
    return to_documents(run, sep=settings.chunk_sep, table=table, agg=settings.chunk_agg, ties=settings.ties)


def check_chunk_map(settings: Settings) -> None:
    """Read (and check) the chunk map once, up front: a bad file fails before any run is read."""
    if settings.chunk_map is not None:
        from rankgate.io.chunks import load_chunk_map

        load_chunk_map(settings.chunk_map)


def judgments_of(qrels: Any, settings: Settings, *, qrels_format: str | None = None) -> Any:
    """The chunk judgments of span judgments (a path or `SpanJudgments`) when ``chunk_offsets`` is set;
    ``qrels`` as given otherwise."""
    if settings.chunk_offsets is None or isinstance(qrels, Qrels):
        return qrels
    from rankgate.io.chunks import span_qrels

    return span_qrels(qrels, settings.chunk_offsets, overlap=settings.span_overlap, format=qrels_format)[2]


def chunk_warnings(counts: ChunkCounts | None, settings: dict[str, Any]) -> list[str]:
    """What a reader of the numbers should know about the chunk mapping."""
    if counts is None:
        return []
    how = f"separator {settings.get('chunk_sep')!r}" if settings.get("chunk_sep") else "the chunk map"
    if counts.unmapped and not counts.mapped:
        eg = ", ".join(repr(x) for x in counts.unmapped_ids)
        return [f"no run id is a chunk id by {how} (e.g. {eg}): every id was read as a document id"]
    if counts.unmapped:
        eg = ", ".join(repr(x) for x in counts.unmapped_ids)
        return [f"{counts.unmapped} run rows are not chunk ids by {how} (e.g. {eg}); they were kept as document ids"]
    return []

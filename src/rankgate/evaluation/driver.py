"""`evaluate_in_memory`: score a run against qrels with trec_eval's semantics, fast.

The work is in three steps. Ids are resolved once: the run rows whose (query, doc) pair
is judged are found with the run's doc-id hashes (a prefilter; every hit is then checked on
the strings themselves), and each gets its rank in evaluation order. Queries are then split
into blocks of at most ``chunk_rows`` ranked rows. Each block is a sparse numeric
`RankedBlock` (the judged rows with their ranks, and each query's depth) that every kernel
reads, so the work after the join follows the judgments, not the run's depth. Per-query
values of the blocks are stacked, so the result is the same whatever the block size (and
`Results.merge` combines separately evaluated query partitions exactly).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import indices
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.evaluation.chunk_hint import chunk_matches
from rankgate.evaluation.chunking import chunk_warnings, documents_of
from rankgate.evaluation.facts import UNJUDGED_WARNING_FRACTION, EvaluationFacts
from rankgate.evaluation.join import index_in, join
from rankgate.evaluation.peers import without_self_matches
from rankgate.evaluation.results import Results
from rankgate.evaluation.settings import Settings
from rankgate.io.hints import grade_like
from rankgate.measures.block import RankedBlock, restrict_to_judged
from rankgate.measures.registry import Measure


def evaluate_in_memory(
    q: Qrels,
    r: Run,
    wanted: Sequence[Measure],
    settings: Settings,
    *,
    chunk_rows: int = 1_000_000,
    max_grade: int | None = None,
) -> Results:
    """Evaluate ``r`` against ``q``, both in memory, with measures already parsed.

    Every engine ends here (out of core and Ray once per query partition); `rankgate.evaluate`
    is the entry point that reads, checks and picks the engine.

    Args:
        q: the judgments.
        r: the run.
        wanted: the measures, with the settings' ``rel`` applied (`Job.read` does that).
        settings: the policies (`Settings`).
        chunk_rows: ranked rows per block; bounds memory, never changes results.
        max_grade: the largest grade of the whole qrels, when ``q`` is one query partition
            of it (ERR's default gain ceiling); default: the largest grade in ``q``.
    """
    if q.num_rows == 0:
        raise InputError("the qrels hold no judgments: nothing to evaluate", source=q.source)
    r, chunks = documents_of(r, settings)  # a run of chunk ids read as documents (settings.chunk_*)
    if settings.drop_self:
        r = without_self_matches(r)  # BEIR's ignore_identical_ids
    plan = _plan_queries(q, r, queries=settings.queries, empty=settings.empty, rel=settings.rel)
    judged = _judged_rows(plan, q, r, settings.ties, tie_groups=_averages_ties(wanted, settings))
    if max_grade is None:
        max_grade = int(q.grades.max())
    _check_gains(wanted, max_grade, q.source)

    values = np.zeros((len(plan.qrels_index), len(wanted)))
    unjudged = _UnjudgedTally(_probe_cutoff(wanted))
    direction = _DirectionTally(settings.rel)
    # queries ranked by doc id alone (trec_eval's tie rule): no vote on direction, and a warning of their own
    tied = _all_tied(r, plan.run_index) if settings.ties == "trec" else np.zeros(len(plan.run_index), dtype=bool)
    for lo, hi in _blocks(plan, r, chunk_rows):
        block = _build_block(plan, q, r, judged, lo, hi, max_grade)
        unjudged.add(block)
        direction.add(block, tied[lo:hi])
        if settings.judged_only:
            block = restrict_to_judged(block)
        for j, m in enumerate(wanted):
            values[lo:hi, j] = m.spec.kernel(block.head(m.cutoff), m)

    facts = _facts(plan, q, r, wanted, settings, unjudged, direction, tied, chunked=chunks is not None)
    return Results(
        measures=list(wanted),
        query_ids=pc.take(q.query_ids, indices(plan.qrels_index)).to_pylist(),
        values=values,
        queries=plan.counts,
        settings=settings.to_dict(),
        warnings=facts.warnings() + chunk_warnings(chunks, settings.to_dict()),
        run_name=r.name,
        versions=versions(),
        facts=facts,
        chunks=chunks,
    )


def _facts(
    plan: _QueryPlan,
    q: Qrels,
    r: Run,
    wanted: Sequence[Measure],
    settings: Settings,
    unjudged: _UnjudgedTally,
    direction: _DirectionTally,
    tied: np.ndarray,
    *,
    chunked: bool,
) -> EvaluationFacts:
    """What the evaluation noticed, as counts (the warnings are written from them)."""
    chunky: dict[str, int] = {}
    if not chunked and unjudged.fraction > UNJUDGED_WARNING_FRACTION and r.num_rows:
        chunky = chunk_matches(r.doc_ids, q.doc_ids)  # a run of chunk ids without --chunk-sep?
    # queries evaluated and in the run (the missing ones and the run-only ones have warnings of their own)
    evaluated_depths = r.depths[plan.run_index[plan.run_index >= 0]] if r.num_rows else np.zeros(0, np.int64)
    return EvaluationFacts(
        counts=plan.counts,
        missing_ids=plan.missing_ids,
        run_only_ids=plan.run_only_ids,
        self_matches=r.self_matches[:3],
        n_self_matches=len(r.self_matches),
        n_self_on_top=r.self_matches_on_top,
        run_rows=r.num_rows,
        deepest=int(r.depths.max()) if r.num_rows else 0,
        cutoffs=(cutoffs := _cutoff_names(wanted)),
        shallow={k: int(np.count_nonzero(evaluated_depths < k)) for k in cutoffs},
        probe_k=unjudged.k,
        unjudged=unjudged.unjudged,
        shown=unjudged.shown,
        chunk_matches=chunky,
        queries=settings.queries,
        scores_one=[str(m) for m in wanted if dict(m.params).get("empty") == "one"],
        empty=settings.empty,
        run_is_qrels=_run_is_qrels(q, r),
        relevant_near_top=direction.top,
        relevant_near_bottom=direction.bottom,
        ranked=int(np.count_nonzero(evaluated_depths >= 2)),
        all_tied=int(np.count_nonzero(tied)),
    )


def _run_is_qrels(q: Qrels, r: Run) -> bool:
    """Whether every row of ``r`` is a judged document scored with its grade, and some query gives
    two documents one score, as when the qrels are passed as the run (in a format whose shape is
    the same either way; grades tie, a toy run scored 2, 1 against grades 2, 1 does not). The join
    runs only for a run whose scores are all small whole numbers (`grade_like`: a few thousand
    scores read)."""
    if not r.num_rows or grade_like(r.scores) is None:
        return False
    same = r.scores[1:] == r.scores[:-1]  # stored by score within each query: ties are neighbours
    same[r.offsets[1:-1] - 1] = False  # not across two queries
    if not same.any():
        return False
    rows, qrels_rows = join(q, r)
    return len(rows) == r.num_rows and bool(np.array_equal(r.scores[rows], q.grades[qrels_rows]))


def _all_tied(r: Run, run_index: np.ndarray) -> np.ndarray:
    """For each evaluated query (``run_index``: its query in ``r``, -1 if absent): whether it ranks two
    or more documents, all with one score (stored by score, so its first and last are equal)."""
    tied = np.zeros(len(run_index), dtype=bool)
    present = np.flatnonzero(run_index >= 0)
    if len(present):
        i = run_index[present]
        start, end = r.offsets[i], r.offsets[i + 1]
        deep = end - start >= 2
        tied[present[deep]] = r.scores[start[deep]] == r.scores[end[deep] - 1]
    return tied


def versions() -> dict[str, str]:
    """The versions an evaluation ran with (echoed in every output)."""
    from rankgate._version import __version__

    return {"rankgate": __version__, "numpy": np.__version__, "pyarrow": pa.__version__}


MAX_EXP_GAIN_GRADE = 1023  # 2^1024 - 1 overflows float64


def _check_gains(measures: Sequence[Measure], max_grade: int, source: str | None) -> None:
    for m in measures:
        exponential = m.name == "ERR" or dict(m.params).get("gain") == "exp"
        if exponential and max_grade > MAX_EXP_GAIN_GRADE:
            raise InputError(
                f"{m} computes 2^grade, which overflows float64 for grade {max_grade}: "
                f"use grades <= {MAX_EXP_GAIN_GRADE}" + (" or the linear gain" if m.name == "nDCG" else ""),
                source=source,
            )


@dataclass
class _QueryPlan:
    qrels_index: np.ndarray  # evaluated queries, as indices into qrels.query_ids (byte order)
    run_index: np.ndarray  # matching index into run.query_ids, -1 when absent from the run
    counts: dict[str, int]
    run_only_ids: list[str]
    missing_ids: list[str]
    qrels_of_run: np.ndarray  # index into qrels.query_ids of each run query, -1 when absent (the join's too)


def _plan_queries(q: Qrels, r: Run, *, queries: str, empty: str, rel: int) -> _QueryPlan:
    if q.query_ids.equals(r.query_ids):  # the usual case: the same queries (both in byte order)
        run_of_qrels = qrels_of_run = np.arange(q.num_queries, dtype=np.int32)
    else:
        run_of_qrels = index_in(q.query_ids, r.query_ids)
        qrels_of_run = index_in(r.query_ids, q.query_ids)
    has_rel = np.zeros(q.num_queries, dtype=bool)
    judged = np.flatnonzero(np.diff(q.offsets))  # every query of a Qrels has rows; this is for safety
    # One pass over the grades, grouped by query (q.offsets): no full-size temporary.
    has_rel[judged] = np.maximum.reduceat(q.grades, q.offsets[judged]) >= rel if len(judged) else False
    candidates = np.arange(q.num_queries) if queries == "qrels" else np.flatnonzero(run_of_qrels >= 0)
    no_rel = candidates[~has_rel[candidates]]
    chosen = candidates if empty == "zero" else candidates[has_rel[candidates]]
    missing = np.flatnonzero(run_of_qrels < 0)
    run_only = np.flatnonzero(qrels_of_run < 0)
    counts = {
        "evaluated": len(chosen),
        "missing_from_run": len(missing),
        "run_only": len(run_only),
        "no_relevant": len(no_rel),
    }
    return _QueryPlan(
        qrels_index=chosen,
        run_index=run_of_qrels[chosen],
        counts=counts,
        run_only_ids=pc.take(r.query_ids, indices(run_only[:3])).to_pylist(),
        missing_ids=pc.take(q.query_ids, indices(missing[:3])).to_pylist(),
        qrels_of_run=qrels_of_run,
    )


@dataclass
class _Judged:
    """The judged run rows of the evaluated queries, by (evaluated query, rank).

    Held narrow, and grades looked up block by block: on BEIR-like data these are millions of
    rows, and each full-size int64 column is new memory to fault in (blocks reuse theirs)."""

    query: np.ndarray  # int32 index into the plan's evaluated queries, ascending
    rank: np.ndarray  # int64 0-based rank in evaluation order
    qrel_row: np.ndarray  # the row's judgment: its row in the qrels (int32 or int64, as `join` gives it)
    tie_first: np.ndarray | None = None  # 0-based rank of the first row of the row's group of equal scores
    tie_size: np.ndarray | None = None  # rows in that group


def _averages_ties(wanted: Sequence[Measure], settings: Settings) -> bool:
    """Whether a measure averages gains over ties (``nDCG(ties=average)``), which needs the tie groups."""
    averaged = [m for m in wanted if dict(m.params).get("ties") == "average"]
    if averaged and settings.judged_only:
        raise InputError(f"{averaged[0]} averages over the run's tie groups, which condensed lists (judged_only) break")
    return bool(averaged)


def _tie_groups(r: Run, rows: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For stored ``rows`` (of queries ``codes``): first 0-based rank and size of their group of equal scores.

    Stored rows are by score, descending, within each query, so a group is a run of equal scores.
    """
    starts = np.ones(r.num_rows, dtype=bool)
    starts[1:] = (r.query_codes[1:] != r.query_codes[:-1]) | (r.scores[1:] != r.scores[:-1])
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    size = np.diff(np.append(first, r.num_rows))
    g = group[rows]
    return first[g] - r.offsets[codes], size[g]


def _ordered(query: np.ndarray, rank: np.ndarray) -> bool:
    """Whether rows are already by (query, rank): queries ascending, ranks ascending within each."""
    if len(query) < 2:
        return True
    before, after = query[:-1], query[1:]  # compared in place: no full-size difference array
    return bool((after >= before).all() and ((after > before) | (rank[1:] > rank[:-1])).all())


def _judged_rows(plan: _QueryPlan, q: Qrels, r: Run, ties: str, *, tie_groups: bool = False) -> _Judged:
    rows, qrel_rows = join(q, r, qrels_of_run=plan.qrels_of_run)
    codes = r.query_codes[rows]
    evaluated = np.full(r.num_queries, -1, dtype=np.int32 if len(plan.qrels_index) < 2**31 else np.int64)
    present = np.flatnonzero(plan.run_index >= 0)
    evaluated[plan.run_index[present]] = present
    query = evaluated[codes]
    keep = query >= 0
    if not keep.all():  # rows of queries left out of the evaluation (the usual case has none)
        rows, codes, query, qrel_rows = rows[keep], codes[keep], query[keep], qrel_rows[keep]
    rank = r.ranks(rows, codes, ties)
    if _ordered(query, rank):  # the usual case: run and qrels list their queries in the same (byte) order
        out = _Judged(query=query, rank=rank, qrel_row=qrel_rows)
        order: np.ndarray | slice = slice(None)
    else:  # ranks unique within a query: sort by (query, rank) as one key; nearly sorted, so a merge sort is quick
        order = np.argsort(query.astype(np.int64) * (int(rank.max()) + 1) + rank, kind="stable")
        out = _Judged(query=query[order], rank=rank[order], qrel_row=qrel_rows[order])
    if tie_groups:
        first, size = _tie_groups(r, rows[order], codes[order])
        out.tie_first, out.tie_size = first.astype(np.int64), size.astype(np.int64)
    return out


def _blocks(plan: _QueryPlan, r: Run, chunk_rows: int) -> Iterator[tuple[int, int]]:
    """Consecutive ranges of evaluated queries holding at most ``chunk_rows`` ranked rows."""
    n = len(plan.qrels_index)
    _, depth = _run_spans(r, plan.run_index)
    cum = np.cumsum(depth)
    lo = 0
    while lo < n:
        base = cum[lo - 1] if lo else 0
        hi = int(np.searchsorted(cum, base + chunk_rows, side="right"))
        hi = max(hi, lo + 1)
        yield lo, min(hi, n)
        lo = hi


def _run_spans(r: Run, run_index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start row and length of each query's ranking; length 0 where absent (index -1)."""
    present = run_index >= 0
    if r.num_queries == 0:  # a run with no rows at all: every query is absent
        zeros = np.zeros(len(run_index), dtype=np.int64)
        return zeros, zeros
    safe = np.where(present, run_index, 0)
    starts = r.offsets[safe].astype(np.int64)
    return starts, np.where(present, r.offsets[safe + 1] - starts, 0)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``range(s, s + c)`` for each pair, vectorized."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    shift = np.repeat(starts - (ends - counts), counts)
    return np.arange(total, dtype=np.int64) + shift


def _build_block(plan: _QueryPlan, q: Qrels, r: Run, judged: _Judged, lo: int, hi: int, max_grade: int) -> RankedBlock:
    """The sparse block of evaluated queries ``lo:hi``: their judged rows and their depths."""
    n = hi - lo
    _, run_counts = _run_spans(r, plan.run_index[lo:hi])
    # Bounds of the column's own dtype: int64 ones would make numpy copy the int32 column to int64, per block.
    a, b = np.searchsorted(judged.query, np.array([lo, hi], dtype=judged.query.dtype))
    qi = plan.qrels_index[lo:hi]
    qrel_starts = q.offsets[qi]
    qrel_counts = q.offsets[qi + 1] - qrel_starts
    if n and int(qi[-1]) - int(qi[0]) == n - 1:  # consecutive queries (the usual case): one slice of judgments
        qrel_grade = q.grades[qrel_starts[0] : qrel_starts[-1] + qrel_counts[-1]]
    else:
        qrel_grade = np.take(q.grades, _ranges(qrel_starts, qrel_counts))
    qrel_grade.flags.writeable = False  # may be the qrels' own column: read-only whichever it is
    return RankedBlock(
        n_queries=n,
        row_query=np.subtract(judged.query[a:b], lo, dtype=np.int64),
        grade=np.take(q.grades, judged.qrel_row[a:b]),
        judged=np.ones(b - a, dtype=bool),
        qrel_query=np.repeat(np.arange(n, dtype=np.int64), qrel_counts),
        qrel_grade=qrel_grade,
        max_grade=max_grade,
        rank=judged.rank[a:b],
        depth=run_counts.astype(np.int64),
        tie_first=None if judged.tie_first is None else judged.tie_first[a:b],
        tie_size=None if judged.tie_size is None else judged.tie_size[a:b],
    )


def _cutoff_names(measures: Sequence[Measure]) -> dict[int, list[str]]:
    """Cutoff -> measures whose value a ranking shorter than the cutoff lowers (for the warning).

    ``P(denominator=min_k_retrieved)@k`` divides by the docs returned, so a short ranking costs
    it nothing and it is left out.
    """
    out: dict[int, list[str]] = {}
    for m in measures:
        if m.cutoff is not None and dict(m.params).get("denominator") != "min_k_retrieved":
            out.setdefault(m.cutoff, []).append(str(m))
    return out


def _probe_cutoff(measures: Sequence[Measure]) -> int:
    cutoffs = [m.cutoff for m in measures if m.cutoff is not None]
    return min(cutoffs) if cutoffs else 10


class _UnjudgedTally:
    """Counts unjudged documents in the top k of every evaluated ranking."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.unjudged = 0
        self.shown = 0

    def add(self, block: RankedBlock) -> None:
        shown = int(np.minimum(block.depth, self.k).sum())
        known = int(np.count_nonzero(block.judged & (block.grade >= 0) & (block.rank < self.k)))
        self.shown += shown
        self.unjudged += shown - known

    @property
    def fraction(self) -> float:
        return self.unjudged / self.shown if self.shown else 0.0


class _DirectionTally:
    """Counts the queries whose relevant documents sit nearer the top of their ranking than the
    bottom, and those where it is the other way round. A run whose scores are distances (lower
    is better) is ranked upside down by trec_eval's rule, and almost all of its queries land in
    the second count; a real ranking, even a poor one, does not (a random one splits evenly)."""

    def __init__(self, rel: int) -> None:
        self.rel = rel
        self.top = 0
        self.bottom = 0

    def add(self, block: RankedBlock, tied: np.ndarray) -> None:
        """Count ``block``'s queries; ``tied``: those whose scores are all one (ordered by doc id: no vote)."""
        relevant = np.flatnonzero(block.relevant(self.rel))  # indices: indexing by the mask takes 10x longer
        query, rank = block.row_query[relevant], block.rank[relevant]  # by (query, rank)
        if not len(query):
            return
        first = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
        last = np.r_[first[1:] - 1, len(query) - 1]
        scored = ~tied[query[first]]
        first, last = first[scored], last[scored]
        above = rank[first]  # rows above the query's first relevant document
        below = block.depth[query[first]] - 1 - rank[last]  # rows below its last one
        self.top += int(np.count_nonzero(above < below))
        self.bottom += int(np.count_nonzero(below < above))

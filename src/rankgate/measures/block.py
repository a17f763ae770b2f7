"""`RankedBlock`: the numeric view of a set of queries that every kernel reads.

Everything here is plain numpy: ids were resolved before (see `rankgate.evaluation.evaluate`),
so kernels never touch strings. Rows are the ranked results of the block's queries, grouped
by query and in evaluation order; ``rank`` is 0-based.

A block is dense (every ranked row) or sparse (only the judged rows, each with its true
``rank``, and each query's ``depth``). Every measure depends on the judged rows alone, given
their ranks and the depths: an unjudged row gains nothing, is never relevant and stops no
user. `rankgate.evaluate` builds sparse blocks, so its cost follows the judgments, not the
run's depth; both kinds give the same values, bit for bit (the sums skip only zero terms).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankgate.core.columns import group_offsets, positions_in_group
from rankgate.core.native import sort_groups_descending


class RankedBlock:
    """Ranked rows of ``n_queries`` queries, grouped by query (rows in rank order within each).

    Args:
        n_queries: queries in the block (block-local indices 0..n-1).
        row_query: int64, block-local query index of each ranked row.
        grade: int64 grade of each ranked row (0 when unjudged).
        judged: bool, the row's doc has a judgment for its query.
        qrel_query: int64, block-local query index of each judgment.
        qrel_grade: int64 grade of each judgment.
        max_grade: largest grade in the whole qrels (ERR's default gmax).
        rank: 0-based rank of each row; default: its position in its query (a dense block).
        depth: ranked rows of each query; default: the rows present (a dense block).
        tie_first, tie_size: the group of equal scores of each row, its first 0-based rank and
            its size; given only when a measure averages over ties (``nDCG(ties=average)``).

    Kernels read the arrays and never write into them: ``qrel_grade`` may be a view of the
    qrels' own column, and is handed out read-only.
    """

    def __init__(
        self,
        n_queries: int,
        row_query: np.ndarray,
        grade: np.ndarray,
        judged: np.ndarray,
        qrel_query: np.ndarray,
        qrel_grade: np.ndarray,
        max_grade: int = 0,
        rank: np.ndarray | None = None,
        depth: np.ndarray | None = None,
        tie_first: np.ndarray | None = None,
        tie_size: np.ndarray | None = None,
    ) -> None:
        self.n_queries = n_queries
        self.row_query = row_query
        self.grade = grade
        self.judged = judged
        self.qrel_query = qrel_query
        self.qrel_grade = qrel_grade
        self.max_grade = max_grade
        self.offsets = group_offsets(row_query, n_queries)
        self.rank: np.ndarray = positions_in_group(self.offsets) if rank is None else rank
        self.depth: np.ndarray = np.diff(self.offsets) if depth is None else depth
        self.tie_first = tie_first
        self.tie_size = tie_size
        self._cache: dict[object, Any] = {}

    def __repr__(self) -> str:
        return f"<RankedBlock: {self.n_queries} queries, {len(self.rank)} rows, {len(self.qrel_grade)} judgments>"

    # -- per-query reductions -----------------------------------------------------------
    def per_query_sum(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.row_query, weights=weights, minlength=self.n_queries).astype(np.float64)

    def segment_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Cumulative sum of ``values`` within each query, inclusive of the row itself."""
        cs = np.cumsum(values, dtype=np.float64)
        base = np.concatenate([[0.0], cs])[self.offsets[:-1]]
        return cs - np.repeat(base, np.diff(self.offsets))

    def top(self, k: int | None) -> np.ndarray | None:
        """Mask of rows within the cutoff, or None for the whole ranking."""
        return None if k is None else self.rank < k

    def head(self, k: int | None) -> RankedBlock:
        """The block cut to each query's top ``k`` rows: cutoff measures read far less."""
        if k is None or len(self.depth) == 0 or self.depth.max() <= k:
            return self
        key = ("head", k)
        if key not in self._cache:
            keep = self.rank < k
            if self.tie_first is not None:  # a tie group that starts above k shares its gains above k
                keep |= self.tie_first < k
            self._cache[key] = self._with_rows(keep, self.rank[keep], np.minimum(self.depth, k))
        head: RankedBlock = self._cache[key]
        return head

    def keep_rows(self, keep: np.ndarray) -> RankedBlock:
        """The same queries and judgments with only the ranked rows in ``keep`` (re-ranked; no tie groups)."""
        return self._with_rows(keep, None, None, ties=False)

    def _with_rows(
        self, keep: np.ndarray, rank: np.ndarray | None, depth: np.ndarray | None, *, ties: bool = True
    ) -> RankedBlock:
        tied = ties and self.tie_first is not None and self.tie_size is not None
        return RankedBlock(
            n_queries=self.n_queries,
            row_query=self.row_query[keep],
            grade=self.grade[keep],
            judged=self.judged[keep],
            qrel_query=self.qrel_query,
            qrel_grade=self.qrel_grade,
            max_grade=self.max_grade,
            rank=rank,
            depth=depth,
            tie_first=self.tie_first[keep] if tied and self.tie_first is not None else None,
            tie_size=self.tie_size[keep] if tied and self.tie_size is not None else None,
        )

    # -- relevance ----------------------------------------------------------------------
    def relevant(self, rel: int) -> np.ndarray:
        key = ("relevant", rel)
        if key not in self._cache:
            self._cache[key] = self.judged & (self.grade >= rel)
        return self._cache[key]

    def num_rel(self, rel: int) -> np.ndarray:
        key = ("num_rel", rel)
        if key not in self._cache:
            w = (self.qrel_grade >= rel).astype(np.float64)
            self._cache[key] = np.bincount(self.qrel_query, weights=w, minlength=self.n_queries)
        return self._cache[key]

    def num_judged_nonrel(self, rel: int) -> np.ndarray:
        """Judged non-relevant docs per query: 0 <= grade < rel (negative grades excluded)."""
        key = ("num_nonrel", rel)
        if key not in self._cache:
            w = ((self.qrel_grade >= 0) & (self.qrel_grade < rel)).astype(np.float64)
            self._cache[key] = np.bincount(self.qrel_query, weights=w, minlength=self.n_queries)
        return self._cache[key]

    def ideal_grades(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Judgments sorted by grade descending within query: (query, grade, 0-based rank)."""
        if "ideal" not in self._cache:
            self._cache["ideal"] = _ideal_ranking(self.qrel_query, self.qrel_grade, self.n_queries)
        q, g, r = self._cache["ideal"]
        return q, g, r

    def ideal_positive_grades(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`ideal_grades` without the judgments of grade 0 or below. They gain nothing and come
        after every positive grade in the ideal ranking, so the positive ones keep their ranks
        and every sum of ideal gains is the same, bit for bit (only zero terms are left out);
        on BEIR-like qrels a third of the rows fewer to sort."""
        if "ideal" in self._cache:
            q, g, r = self._cache["ideal"]
            keep = g > 0
            return q[keep], g[keep], r[keep]
        if "ideal_positive" not in self._cache:
            keep = self.qrel_grade > 0
            self._cache["ideal_positive"] = _ideal_ranking(self.qrel_query[keep], self.qrel_grade[keep], self.n_queries)
        q, g, r = self._cache["ideal_positive"]
        return q, g, r


def _ideal_ranking(query: np.ndarray, grade: np.ndarray, n_queries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, grade, 0-based rank) of judgments sorted by grade descending within query: three
    arrays, not stacked into one (a copy of them all: 56 MB of new memory on BEIR-like qrels)."""
    ascending = len(query) < 2 or bool((query[1:] >= query[:-1]).all())  # as the driver builds them
    offsets = group_offsets(query, n_queries) if ascending else None
    g = sort_groups_descending(offsets, grade) if offsets is not None else None
    q = query
    if offsets is None or g is None:
        order = np.lexsort((-grade, query))
        q, g = query[order], grade[order]
        offsets = group_offsets(q, n_queries)
    if q is query:  # the block's own column: handed out read-only, so a kernel cannot change it
        q = query.view()
        q.flags.writeable = False
    return q, g, positions_in_group(offsets)


def restrict_to_judged(block: RankedBlock) -> RankedBlock:
    """Condensed lists (Sakai 2007): drop unjudged docs from each ranking, then re-rank."""
    return block.keep_rows(block.judged & (block.grade >= 0))

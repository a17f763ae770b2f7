"""`RankedBlock`: the numeric view of a set of queries that every kernel reads.

Everything here is plain numpy: ids were resolved before (see `rankgate.measures.evaluate`),
so kernels never touch strings. Rows are the ranked results of the block's queries, grouped
by query and in evaluation order; ``rank`` is 0-based.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankgate.core.columns import group_offsets, positions_in_group


@dataclass
class RankedBlock:
    n_queries: int
    row_query: np.ndarray  # int64, block-local query index of each ranked row
    grade: np.ndarray  # int64 grade of each ranked row (0 when unjudged)
    judged: np.ndarray  # bool: the row's doc has a judgment for its query
    qrel_query: np.ndarray  # int64, block-local query index of each judgment
    qrel_grade: np.ndarray  # int64 grade of each judgment
    max_grade: int = 0  # largest grade in the whole qrels (ERR's default gmax)
    _cache: dict[object, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.offsets = group_offsets(self.row_query, self.n_queries)
        self.rank = positions_in_group(self.offsets)

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
        if k is None or len(self.rank) == 0 or self.rank.max() < k:
            return self
        key = ("head", k)
        if key not in self._cache:
            self._cache[key] = self.keep_rows(self.rank < k)
        head: RankedBlock = self._cache[key]
        return head

    def keep_rows(self, keep: np.ndarray) -> RankedBlock:
        """The same queries and judgments with only the ranked rows in ``keep`` (re-ranked)."""
        return RankedBlock(
            n_queries=self.n_queries,
            row_query=self.row_query[keep],
            grade=self.grade[keep],
            judged=self.judged[keep],
            qrel_query=self.qrel_query,
            qrel_grade=self.qrel_grade,
            max_grade=self.max_grade,
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
        key = "ideal"
        if key not in self._cache:
            order = np.lexsort((-self.qrel_grade, self.qrel_query))
            q = self.qrel_query[order]
            g = self.qrel_grade[order]
            r = positions_in_group(group_offsets(q, self.n_queries))
            self._cache[key] = np.stack([q, g, r])
        q, g, r = self._cache[key]
        return q, g, r


def restrict_to_judged(block: RankedBlock) -> RankedBlock:
    """Condensed lists (Sakai 2007): drop unjudged docs from each ranking, then re-rank."""
    return block.keep_rows(block.judged & (block.grade >= 0))

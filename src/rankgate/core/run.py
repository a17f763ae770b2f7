"""`Run`: scored documents per query, held as columns grouped by query (CSR)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core import arrow_compute as pc
from rankgate.core.columns import (
    DUPLICATE_POLICIES,
    arrow_to_frame,
    as_string_array,
    as_strings,
    column_to_numpy,
    group_offsets,
    keep_mask,
    numeric_array,
    take_array_blocks,
    take_blocks,
    take_rows,
)
from rankgate.core.hashing import hash_filter_rows, high_words, string_hashes
from rankgate.core.ids import RowLocator, check_ids, default_locator, intern_query_ids, mapping_locator
from rankgate.core.parallel import parallel_map
from rankgate.core.policies import TIE_POLICIES as TIE_POLICIES  # re-exported: it lived here
from rankgate.core.run_scan import find_self_matches, scan_doc_ids, tie_group_moves, tie_ranks
from rankgate.errors import DuplicateError, InputError

_MAX_FILTER_IDS = 1 << 24  # more judged pairs than this: the filter tables pass too many rows


class Run:
    """Retrieved documents with scores, for each query.

    Rows are kept grouped by query (query ids in byte order) and, within a query, by score
    descending with input order among equal scores. The rank column of a TREC file is not
    kept: like trec_eval, rankgate orders by score. The tie rule used by an evaluation is
    applied by `ranking_order` ("trec": doc id descending, byte-wise; "input": file order).

    Build one with `Run.from_dict`, `rankgate.read_run` or the constructor (columns).
    ``ranked=True`` says the rows are already in evaluation order within each query (a chunk
    ranking folded into documents, `rankgate.core.chunks`): no tie rule moves them.
    """

    def __init__(
        self,
        query_ids: Any,
        doc_ids: Any,
        scores: Any,
        *,
        name: str | None = None,
        source: str | None = None,
        duplicates: str = "error",
        locate: RowLocator | None = None,
        ranked: bool = False,
    ) -> None:
        if duplicates not in DUPLICATE_POLICIES:
            raise ValueError(
                f"The 'duplicates' parameter must be one of {DUPLICATE_POLICIES}. Got {duplicates!r} instead."
            )
        qcol = query_ids if _is_dictionary(query_ids) else as_strings(query_ids)
        dcol = as_strings(doc_ids)
        score = np.ascontiguousarray(np.asarray(scores, dtype=np.float64))
        if not (len(qcol) == len(dcol) == len(score)):
            raise InputError(
                f"query ids, doc ids and scores differ in length ({len(qcol)}, {len(dcol)}, {len(score)})",
                source=source,
            )
        locate = locate or default_locator(source)
        self.name = name
        self.source = source
        self.ranked = ranked
        interned = intern_query_ids(qcol, locate, check_used=False)  # unused ids are dropped below
        check_ids(interned, dcol, locate)
        finite = np.isfinite(score)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise InputError(
                f"{locate(row)}: score is not a finite number ({score[row].item()!r}); "
                "NaN and infinite scores have no rank order"
            )

        codes = interned.codes
        self.query_ids: pa.StringArray = interned.values
        del interned

        def describe(later: int, first: int) -> InputError:
            return DuplicateError(
                f"{locate(later)}: duplicate document {dcol[later].as_py()!r} for query "
                f"{self.query_ids[int(codes[later])].as_py()!r} (first at {locate(first)})",
            )

        scan = scan_doc_ids(codes, dcol, self.query_ids)
        self_scores = find_self_matches(self.query_ids, codes, dcol, scan.self_match_rows, score)
        self.self_matches: list[str] = list(self_scores)
        hash_high = scan.hash_high  # kept for joins (`candidate_rows`)
        keep = keep_mask(scan.later, scan.first, len(codes), score, duplicates, describe)
        if keep is not None:
            idx = np.flatnonzero(keep)
            codes, score, dcol, hash_high = codes[idx], score[idx], take_rows(dcol, idx), hash_high[idx]

        codes, score, hash_high, dcol = in_order(*_score_order(codes, score), [codes, score, hash_high, dcol])
        offsets = group_offsets(codes, len(self.query_ids))
        if len(self.query_ids) and not (offsets[1:] > offsets[:-1]).all():  # ids no row uses (Categorical)
            used = offsets[1:] > offsets[:-1]
            codes = np.take((np.cumsum(used) - 1).astype(codes.dtype), codes)
            self.query_ids = as_string_array(pc.filter(self.query_ids, pa.array(used)))
            offsets = group_offsets(codes, len(self.query_ids))
        self.offsets: np.ndarray = offsets
        self.query_codes: np.ndarray = codes
        self.doc_ids: pa.ChunkedArray = dcol
        self.scores: np.ndarray = score
        self._doc_hash_high: np.ndarray | None = hash_high
        self.self_matches_on_top: int = self._on_top(self_scores)
        self._tie_orders: dict[str, np.ndarray] = {}
        self._tie_moves: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _on_top(self, self_scores: dict[str, float]) -> int:
        """How many queries score their own-id document at least as high as any other: the sign of a
        corpus that holds the queries (BEIR's Quora, ArguAna), not of ids that merely coincide."""
        if not self_scores:
            return 0
        codes = pc.index_in(pa.array(list(self_scores)), value_set=self.query_ids).to_numpy(zero_copy_only=False)
        tops = self.scores[self.offsets[codes.astype(np.int64)]]  # rows are by score, descending, per query
        return int((np.fromiter(self_scores.values(), dtype=np.float64) >= tops).sum())

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], **kwargs: Any) -> Run:
        """Build from ``{qid: {docid: score}}`` or ``{qid: [docid, ...]}`` (list order is the ranking).

        >>> Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}, "q2": ["d5", "d3"]}).num_rows
        4
        """
        source = kwargs.setdefault("source", "<dict>")
        qs: list[str] = []
        ds: list[str] = []
        ss: list[float] = []
        for qid, docs in data.items():
            if isinstance(docs, Mapping):
                items = list(docs.items())
            elif isinstance(docs, list | tuple):
                items = [(d, float(len(docs) - i)) for i, d in enumerate(docs)]
            else:
                raise InputError(
                    f"query {qid!r}: expected {{doc_id: score}} or a ranked list of doc ids",
                    source=source,
                    text=repr(docs),
                )
            for did, score in items:
                if isinstance(score, bool) or not isinstance(score, int | float | np.number):
                    raise InputError(
                        f"query {qid!r}, document {did!r}: score must be a number", source=source, text=repr(score)
                    )
                qs.append(str(qid))
                ds.append(str(did))
                ss.append(float(score))
        kwargs.setdefault("locate", mapping_locator(source, qs, ds))
        return cls(qs, ds, ss, **kwargs)

    @classmethod
    def from_checked(
        cls,
        query_ids: pa.StringArray,
        query_codes: np.ndarray,
        doc_ids: pa.ChunkedArray,
        scores: np.ndarray,
        *,
        doc_hash_high: np.ndarray | None = None,
        name: str | None = None,
        source: str | None = None,
        ranked: bool = False,
    ) -> Run:
        """A run from columns that already hold what the constructor checks and sorts: no pass over them.

        For code that builds a run from other runs' rows (`rankgate.fusion`). The caller vouches
        that ``query_ids`` are unique, non-empty and in byte order, each used by some row;
        ``query_codes`` (int32) index them and are ascending; within a query ``scores`` (finite
        float64) descend; doc ids are non-empty and unique per query. ``doc_hash_high`` is each
        row's `high_words` of `string_hashes` of its doc id, when the caller has them (else they
        are computed). Only the own-id documents are looked for (by those hashes, then exactly).
        """
        if not (len(query_codes) == len(doc_ids) == len(scores)):
            raise ValueError("query codes, doc ids and scores differ in length")
        run = cls.__new__(cls)
        run.name, run.source, run.ranked = name, source, ranked
        run.query_ids, run.query_codes, run.doc_ids, run.scores = query_ids, query_codes, doc_ids, scores
        run.offsets = group_offsets(query_codes, len(query_ids))
        high = high_words(string_hashes(doc_ids)) if doc_hash_high is None else doc_hash_high
        run._doc_hash_high = high
        candidates = np.flatnonzero(np.take(high_words(string_hashes(query_ids)), query_codes) == high)
        self_scores = find_self_matches(query_ids, query_codes, doc_ids, candidates, scores)
        run.self_matches = list(self_scores)
        run.self_matches_on_top = run._on_top(self_scores)
        run._tie_orders, run._tie_moves = {}, {}
        return run

    # -- access -------------------------------------------------------------------------
    @property
    def num_rows(self) -> int:
        return len(self.scores)

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return self.num_queries

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<Run{label}: {self.num_queries} queries, {self.num_rows} rows>"

    @property
    def doc_hash_high(self) -> np.ndarray:
        """The high 32 bits of each stored row's doc-id hash (`high_words` of `string_hashes`), uint32.

        Kept from the constructor's duplicate scan; for joins that check what they find on the ids.
        """
        if self._doc_hash_high is None:
            self._doc_hash_high = high_words(string_hashes(self.doc_ids))
        return self._doc_hash_high

    def ranking_order(self, ties: str = "trec") -> np.ndarray:
        """Row permutation that puts each query's documents in evaluation order."""
        if ties not in TIE_POLICIES:
            raise ValueError(f"The 'ties' parameter must be one of {TIE_POLICIES}. Got {ties!r} instead.")
        if ties not in self._tie_orders:
            self._tie_orders[ties] = self._compute_order(ties)
        return self._tie_orders[ties]

    def _compute_order(self, ties: str) -> np.ndarray:
        n = self.num_rows
        order = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
        rows, within = self._moves(ties)
        order[rows] = rows[within]
        return order

    def _moves(self, ties: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows the tie rule moves: ``ranking_order()[rows] == rows[within]`` (rows ascending)."""
        if ties not in self._tie_moves:
            self._tie_moves[ties] = self._tie_groups(ties)
        return self._tie_moves[ties]

    def _tie_groups(self, ties: str) -> tuple[np.ndarray, np.ndarray]:
        none = np.zeros(0, dtype=np.int64)
        n = self.num_rows
        if ties == "input" or n < 2 or self.ranked:
            return none, none
        return tie_group_moves(self.query_codes, self.scores, self.doc_ids)

    def ranks(self, rows: np.ndarray, codes: np.ndarray, ties: str = "trec") -> np.ndarray:
        """0-based rank in evaluation order of stored ``rows`` (of queries ``codes``, their `query_codes`).

        Equal to the row's position in ``ranking_order(ties)`` less its query's first row,
        without building that permutation: only rows inside a tie group move, and unless the tie
        rule's moves are already known, only the groups of these rows are looked at (an
        evaluation asks for the judged rows: with integer scores nearly every row is tied).
        """
        if ties not in self._tie_moves and ties != "input" and not self.ranked and self.num_rows > 1:
            found = tie_ranks(self.query_codes, self.scores, self.offsets, self.doc_ids, rows)
            if found is not None:
                return found
        position = np.asarray(rows, dtype=np.int64)
        moved, within = self._moves(ties)
        if len(moved) and len(position):
            in_group = np.zeros(self.num_rows, dtype=bool)  # one gather per row, a search only for moved ones
            in_group[moved] = True
            hit = np.flatnonzero(in_group[position])
            del in_group
            if len(hit):
                at = np.searchsorted(moved, position[hit])
                inverse = np.empty(len(within), dtype=within.dtype)
                inverse[within] = np.arange(len(within), dtype=within.dtype)
                position = position.copy()
                position[hit] = moved[inverse[at]]
        return position - self.offsets[codes]

    def candidate_rows(
        self, query_ids: pa.Array | pa.ChunkedArray, doc_ids: pa.Array | pa.ChunkedArray
    ) -> np.ndarray | None:
        """Rows (ascending) whose (query, doc) pair may be one of the pairs ``zip(query_ids, doc_ids)``.

        A superset, for the caller to check exactly; None when no filter applies (every row
        is a candidate). Uses the doc-id hashes kept from duplicate detection: a table lookup
        per row, no string read. Every row whose pair is given is returned, with a few others
        whose hashes collide.
        """
        high = self._doc_hash_high
        if high is None or len(doc_ids) > _MAX_FILTER_IDS or 4 * len(doc_ids) > self.num_rows:
            return None
        return hash_filter_rows(
            high,
            high_words(string_hashes(doc_ids)),
            group=self.query_codes,
            group_high=high_words(string_hashes(self.query_ids)),
            wanted_group_high=high_words(string_hashes(query_ids)),
        )

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}`` (scores as stored, float64)."""
        out: dict[str, dict[str, float]] = {}
        docs = self.doc_ids.to_pylist()
        scores = self.scores.tolist()
        for i, qid in enumerate(self.query_ids.to_pylist()):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            out[qid] = dict(zip(docs[lo:hi], scores[lo:hi], strict=True))
        return out

    def to_arrow(self, ties: str = "trec") -> pa.Table:
        """Columns ``query_id``, ``doc_id``, ``rank`` (from 1) and ``score``, rows in evaluation order.

        >>> Run.from_dict({"q1": {"a": 1.0, "b": 1.0, "c": 2.0}}).to_arrow().to_pydict()["doc_id"]
        ['c', 'b', 'a']
        """
        order = self.ranking_order(ties)
        depths = self.depths
        starts = np.repeat(self.offsets[:-1], depths)
        return pa.table(
            {
                "query_id": take_rows(self.query_ids, np.repeat(np.arange(len(depths)), depths)),
                "doc_id": take_rows(self.doc_ids, order),
                "rank": pa.array(np.arange(len(order), dtype=np.int64) - starts + 1),
                "score": pa.array(self.scores[order]),
            }
        )

    def to_frame(self, backend: str = "pandas", *, ties: str = "trec") -> Any:
        """`to_arrow` as a pandas (default) or polars DataFrame."""
        return arrow_to_frame(self.to_arrow(ties), backend)

    def iter_rows(self, ties: str = "trec") -> Iterator[tuple[str, str, int, float]]:
        """Yield ``(qid, docid, rank, score)`` in evaluation order, ranks from 1."""
        order = self.ranking_order(ties)
        qids = self.query_ids.to_pylist()
        docs = take_rows(self.doc_ids, order).to_pylist()
        scores = self.scores[order].tolist()
        for i, qid in enumerate(qids):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            for r, row in enumerate(range(lo, hi), start=1):
                yield qid, docs[row], r, scores[row]

    @cached_property
    def depths(self) -> np.ndarray:
        """Number of documents retrieved for each query (``query_ids`` order)."""
        return np.diff(self.offsets)


def _is_dictionary(values: object) -> bool:
    return isinstance(values, pa.Array | pa.ChunkedArray) and pa.types.is_dictionary(values.type)


_Blocks = tuple[np.ndarray, np.ndarray]  # (starts, lengths) of row blocks


def in_order(order: np.ndarray | None, blocks: _Blocks | None, columns: list[Any]) -> list[Any]:
    """``columns`` (numpy arrays, or Arrow string columns; None passes) in the order `_score_order`
    found: whole queries copied block by block, else gathered by the permutation. The list's items
    are replaced one at a time, so the caller that keeps no other reference lets each old column
    go as soon as its copy exists. Unchanged when ``order`` and ``blocks`` are both None."""
    for i, column in enumerate(columns):
        if column is None:
            continue
        array = isinstance(column, np.ndarray)
        if blocks is not None:
            columns[i] = take_array_blocks(column, *blocks) if array else take_blocks(column, *blocks)
        elif order is not None:
            columns[i] = column[order] if array else take_rows(column, order)
        del column
    return columns


def _score_order(codes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray | None, _Blocks | None]:
    """How to sort rows by (query, score desc), stably: (None, None) if they already are; (None,
    blocks) when only whole queries are out of order; else (permutation, None).

    When each query's rows are contiguous and in score order, only the queries are out of order
    (a run in numeric or topics-file order of its query ids): their blocks' (starts, lengths) in
    code order, for a copy of every column block by block (`take_blocks`, `take_array_blocks`)
    instead of a sort and a gather of every row.
    """
    if len(codes) < 2:
        return None, None
    step = 1 << 19

    def out_of_order(lo: int) -> tuple[bool, bool]:  # slices overlap by one row
        c, s = codes[lo : lo + step + 1], scores[lo : lo + step + 1]
        return bool((c[1:] < c[:-1]).any()), bool(((s[1:] > s[:-1]) & (c[1:] == c[:-1])).any())

    found = parallel_map(out_of_order, range(0, len(codes) - 1, step))
    queries, within = any(f[0] for f in found), any(f[1] for f in found)
    if not (queries or within):
        return None, None
    if not within:
        blocks = query_blocks(codes)
        if blocks is not None:
            return None, blocks
    table = pa.table({"q": numeric_array(codes), "s": numeric_array(scores)})
    order = column_to_numpy(pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending")]))
    return narrow_rows(order), None


def narrow_rows(order: np.ndarray) -> np.ndarray:
    """A permutation as int32 below 2**31 rows (Arrow's sort gives uint64): half the memory."""
    return order.astype(np.int32, copy=False) if len(order) < 2**31 else order


def query_blocks(codes: np.ndarray) -> _Blocks | None:
    """The (starts, lengths) of the contiguous query blocks, in code order; None when some query's
    rows are not contiguous."""
    starts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    starts = np.concatenate([[0], starts])
    block_codes = codes[starts]
    by_code = np.argsort(block_codes, kind="stable")
    if len(by_code) > 1 and not (np.diff(block_codes[by_code]) > 0).all():  # a query in two places
        return None
    lengths = np.diff(np.concatenate([starts, [len(codes)]]))[by_code]
    return starts[by_code], lengths

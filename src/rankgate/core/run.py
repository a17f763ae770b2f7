"""`Run`: scored documents per query, held as columns grouped by query (CSR)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankgate.core.columns import (
    DUPLICATE_POLICIES,
    Interned,
    as_string_array,
    as_strings,
    byte_order_rank,
    column_to_numpy,
    duplicate_keep_mask,
    first_empty,
    group_offsets,
    indices,
    intern,
    string_hashes,
)
from rankgate.errors import InputError

TIE_POLICIES: tuple[str, ...] = ("trec", "input")

RowLocator = Callable[[int], str]
"""Maps a 0-based input row to where it came from, e.g. ``"run.txt:17"``."""


def _default_locator(source: str | None) -> RowLocator:
    name = source or "<run>"
    return lambda row: f"{name} row {row + 1}"


class Run:
    """Retrieved documents with scores, for each query.

    Rows are kept grouped by query (query ids in byte order) and, within a query, by score
    descending with input order among equal scores. The rank column of a TREC file is not
    kept: like trec_eval, rankgate orders by score. The tie rule used by an evaluation is
    applied by `ranking_order` ("trec": doc id descending, byte-wise; "input": file order).

    Build one with `Run.from_dict`, `Run.from_file` or the constructor (columns).
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
        locate = locate or _default_locator(source)
        self.name = name
        self.source = source
        interned = intern_query_ids(qcol, locate)
        _check_ids(interned, dcol, locate)
        finite = np.isfinite(score)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise InputError(
                f"{locate(row)}: score is not a finite number ({score[row].item()!r}); "
                "NaN and infinite scores have no rank order"
            )

        rank = byte_order_rank(interned.values)  # a permutation: values are unique
        codes = rank.astype(interned.codes.dtype)[interned.codes]
        query_values = interned.values
        del interned  # its codes are as large as the run
        self.query_ids: pa.StringArray = as_string_array(query_values.take(indices(np.argsort(rank))))

        def describe(later: int, first: int) -> InputError:
            return InputError(
                f"{locate(later)}: duplicate document {dcol[later].as_py()!r} for query "
                f"{self.query_ids[int(codes[later])].as_py()!r} (first at {locate(first)}); "
                "pass duplicates='first' or 'max' (CLI: --duplicates) to keep one copy"
            )

        doc_hashes = string_hashes(dcol)
        self.self_matches: list[str] = _self_matches(self.query_ids, codes, dcol, doc_hashes)
        keep = duplicate_keep_mask(codes, dcol, score, duplicates, describe, doc_hashes)
        if keep is not None:
            idx = np.flatnonzero(keep)
            codes, score, dcol = codes[idx], score[idx], dcol.take(indices(idx))

        order = _score_order(codes, score)
        if order is not None:
            codes, score = codes[order], score[order]
            dcol = dcol.take(indices(order))
        self.offsets: np.ndarray = group_offsets(codes, len(self.query_ids))
        self.query_codes: np.ndarray = codes
        self.doc_ids: pa.ChunkedArray = dcol
        self.scores: np.ndarray = score
        self._tie_orders: dict[str, np.ndarray] = {}

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
    def from_file(cls, path: str, *, format: str | None = None, **kwargs: Any) -> Run:
        """Read a run file (TREC, JSON, JSONL, CSV/TSV, Parquet; compressed or not)."""
        from rankgate.io import read_run

        return read_run(path, format=format, **kwargs)

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
        if ties == "input" or n < 2:
            return order
        tied = (self.query_codes[1:] == self.query_codes[:-1]) & (self.scores[1:] == self.scores[:-1])
        if not tied.any():
            return order
        involved = np.zeros(n, dtype=bool)
        involved[1:] |= tied
        involved[:-1] |= tied
        rows = np.flatnonzero(involved)
        # A new tie group starts at an involved row not tied with the row before it.
        starts = np.ones(len(rows), dtype=bool)
        starts[1:] = ~tied[rows[1:] - 1]
        group = np.cumsum(starts)
        doc_rank = byte_order_rank(self.doc_ids.take(indices(rows)))
        within = np.lexsort((-doc_rank, group))  # trec_eval: doc id descending
        order[rows] = rows[within]
        return order

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docid: score}}`` (scores as stored, float64)."""
        out: dict[str, dict[str, float]] = {}
        docs = self.doc_ids.to_pylist()
        scores = self.scores.tolist()
        for i, qid in enumerate(self.query_ids.to_pylist()):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            out[qid] = dict(zip(docs[lo:hi], scores[lo:hi], strict=True))
        return out

    def iter_rows(self, ties: str = "trec") -> Iterator[tuple[str, str, int, float]]:
        """Yield ``(qid, docid, rank, score)`` in evaluation order, ranks from 1."""
        order = self.ranking_order(ties)
        qids = self.query_ids.to_pylist()
        docs = self.doc_ids.take(indices(order)).to_pylist()
        scores = self.scores[order].tolist()
        for i, qid in enumerate(qids):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            for r, row in enumerate(range(lo, hi), start=1):
                yield qid, docs[row], r, scores[row]

    @cached_property
    def depths(self) -> np.ndarray:
        """Number of documents retrieved for each query (``query_ids`` order)."""
        return np.diff(self.offsets)


def mapping_locator(source: str, qids: list[str], docids: list[str]) -> RowLocator:
    """Locate a row of a ``{qid: {docid: value}}`` input by its query and document."""
    return lambda row: f"{source} (query {qids[row]!r}, document {docids[row]!r})"


def _self_matches(
    query_ids: pa.StringArray, codes: np.ndarray, docs: pa.ChunkedArray, doc_hashes: np.ndarray
) -> list[str]:
    """Query ids that retrieve a document with the same id (BEIR drops such pairs)."""
    query_hashes = string_hashes(query_ids)
    step = 1 << 20  # compare in slices: no full-size temporaries
    candidates = np.concatenate(
        [
            np.flatnonzero(query_hashes[codes[i : i + step]] == doc_hashes[i : i + step]) + i
            for i in range(0, len(codes), step)
        ]
        or [np.zeros(0, dtype=np.int64)]
    )
    if len(candidates) == 0:
        return []
    found = docs.take(indices(candidates)).to_pylist()
    qids = query_ids.take(indices(codes[candidates])).to_pylist()
    return sorted({q for q, d in zip(qids, found, strict=True) if q == d})


def _is_dictionary(values: object) -> bool:
    return isinstance(values, pa.Array | pa.ChunkedArray) and pa.types.is_dictionary(values.type)


def intern_query_ids(column: Any, locate: RowLocator) -> Interned:
    """Intern the query id column; a missing (null) id is an input error naming its row."""
    if column.null_count:
        raise InputError(f"{locate(first_empty(column))}: missing query id")
    return intern(column)


def _check_ids(queries: Interned, docs: pa.ChunkedArray, locate: RowLocator) -> None:
    """Ids must be non-empty: an empty one means a field went missing."""
    empty_query = first_empty(pa.chunked_array([queries.values]))
    if empty_query >= 0:
        row = int(np.flatnonzero(queries.codes == empty_query)[0])
        raise InputError(f"{locate(row)}: empty query id")
    row = first_empty(docs)
    if row >= 0:
        raise InputError(f"{locate(row)}: empty doc id")


def _score_order(codes: np.ndarray, scores: np.ndarray) -> np.ndarray | None:
    """Permutation sorting rows by (query, score desc), stable; None if already sorted."""
    if len(codes) < 2:
        return None
    same_query = codes[1:] == codes[:-1]
    if not (codes[1:] < codes[:-1]).any() and not ((scores[1:] > scores[:-1]) & same_query).any():
        return None
    table = pa.table({"q": codes, "s": scores})
    return column_to_numpy(pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending")]))

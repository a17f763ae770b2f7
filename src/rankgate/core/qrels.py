"""`Qrels`: graded relevance judgments per query, held as columns grouped by query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.columns import (
    DUPLICATE_POLICIES,
    arrow_to_frame,
    as_strings,
    group_offsets,
    keep_mask,
    take_rows,
)
from rankgate.core.ids import RowLocator, check_ids, default_locator, intern_query_ids, mapping_locator
from rankgate.core.run_scan import scan_doc_ids
from rankgate.errors import DuplicateError, InputError


class Qrels:
    """Relevance judgments: an integer grade for each judged (query, document) pair.

    Grades >= the relevance threshold (default 1) are relevant for binary measures;
    grade 0 is judged non-relevant; grades < 0 are judged non-relevant for every measure
    except Judged@k and Bpref, which treat them as unjudged (trec_eval's convention).

    Rows are grouped by query (query ids in byte order), input order within a query.
    """

    def __init__(
        self,
        query_ids: Any,
        doc_ids: Any,
        grades: Any,
        *,
        source: str | None = None,
        duplicates: str = "error",
        locate: RowLocator | None = None,
    ) -> None:
        if duplicates not in DUPLICATE_POLICIES:
            raise ValueError(
                f"The 'duplicates' parameter must be one of {DUPLICATE_POLICIES}. Got {duplicates!r} instead."
            )
        dictionary = isinstance(query_ids, pa.Array | pa.ChunkedArray) and pa.types.is_dictionary(query_ids.type)
        qcol = query_ids if dictionary else as_strings(query_ids)  # the TREC reader's: interned as is
        dcol = as_strings(doc_ids)
        raw = np.asarray(grades)
        locate = locate or default_locator(source or "<qrels>")
        if not (len(qcol) == len(dcol) == len(raw)):
            raise InputError(
                f"query ids, doc ids and grades differ in length ({len(qcol)}, {len(dcol)}, {len(raw)})",
                source=source,
            )
        grade = _integer_grades(raw, locate)
        self.source = source
        interned = intern_query_ids(qcol, locate)
        check_ids(interned, dcol, locate)
        codes = interned.codes  # int32 (int64 past 2**31 queries), as a Run's
        self.query_ids: pa.StringArray = interned.values

        def describe(later: int, first: int) -> InputError:
            return DuplicateError(
                f"{locate(later)}: duplicate judgment of document {dcol[later].as_py()!r} for query "
                f"{self.query_ids[int(codes[later])].as_py()!r} (first at {locate(first)})",
            )

        scan = scan_doc_ids(interned.codes, dcol, self.query_ids)  # duplicates, and hash words to keep
        high = scan.hash_high  # for the join
        keep = keep_mask(scan.later, scan.first, len(codes), grade, duplicates, describe)
        del scan
        if keep is not None:
            idx = np.flatnonzero(keep)
            codes, grade, dcol, high = codes[idx], grade[idx], take_rows(dcol, idx), high[idx]
        if len(codes) and not (codes[1:] >= codes[:-1]).all():  # group by query, input order within
            order = np.argsort(codes, kind="stable")
            codes, grade, high = codes[order], grade[order], high[order]
            dcol = take_rows(dcol, order)
        self.offsets: np.ndarray = group_offsets(codes, len(self.query_ids))
        self.query_codes: np.ndarray = codes
        self.doc_ids: pa.ChunkedArray = dcol
        self.grades: np.ndarray = grade
        self.doc_hash_high: np.ndarray = high  # `high_words` of each row's doc-id hash

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], **kwargs: Any) -> Qrels:
        """Build from ``{qid: {docid: grade}}`` or ``{qid: [docid, ...]}`` (a list: grade 1).

        >>> Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": ["d7"]}).num_rows
        3
        """
        source = kwargs.setdefault("source", "<dict>")
        qs: list[str] = []
        ds: list[str] = []
        gs: list[Any] = []
        for qid, docs in data.items():
            if isinstance(docs, Mapping):
                items = list(docs.items())
            elif isinstance(docs, list | tuple | set | frozenset):
                items = [(d, 1) for d in docs]
            else:
                raise InputError(
                    f"query {qid!r}: expected {{doc_id: grade}} or a list of relevant doc ids",
                    source=source,
                    text=repr(docs),
                )
            for did, g in items:
                qs.append(str(qid))
                ds.append(str(did))
                gs.append(g)
        kwargs.setdefault("locate", mapping_locator(source, qs, ds))
        return cls(qs, ds, np.asarray(gs, dtype=object) if gs else np.zeros(0, np.int64), **kwargs)

    @property
    def num_rows(self) -> int:
        return len(self.grades)

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return self.num_queries

    def __repr__(self) -> str:
        return f"<Qrels: {self.num_queries} queries, {self.num_rows} judgments>"

    def to_arrow(self) -> pa.Table:
        """Columns ``query_id``, ``doc_id`` and ``grade`` (int64), rows grouped by query."""
        rows = np.repeat(np.arange(len(self.query_ids)), np.diff(self.offsets))
        return pa.table(
            {
                "query_id": take_rows(self.query_ids, rows),
                "doc_id": self.doc_ids,
                "grade": pa.array(np.asarray(self.grades, dtype=np.int64)),
            }
        )

    def to_frame(self, backend: str = "pandas") -> Any:
        """`to_arrow` as a pandas (default) or polars DataFrame."""
        return arrow_to_frame(self.to_arrow(), backend)

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{qid: {docid: grade}}``."""
        out: dict[str, dict[str, int]] = {}
        docs = self.doc_ids.to_pylist()
        grades = self.grades.tolist()
        for i, qid in enumerate(self.query_ids.to_pylist()):
            lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
            out[qid] = dict(zip(docs[lo:hi], grades[lo:hi], strict=True))
        return out


def _shown(raw: np.ndarray, row: int) -> Any:
    value = raw[row]
    return value.item() if isinstance(value, np.generic) else value


MAX_ABS_GRADE = 2**53  # every whole number up to here is exact in float64, as scores and gains are


def _integer_grades(raw: np.ndarray, locate: RowLocator) -> np.ndarray:
    """Grades as int64; a value that is not a whole number in range is an error naming its row."""
    if raw.dtype.kind == "b":
        return raw.astype(np.int64)
    if raw.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # NaN and inf cast to some integer; the check below sees them
            whole = raw.astype(np.int64)
        # Each value cast and compared back: one temporary as large as the grades, not five (the
        # usual case, TREC grades parsed as floats); on any doubt the checks below name the row.
        if len(whole) == 0 or (
            whole.min() >= -MAX_ABS_GRADE and whole.max() <= MAX_ABS_GRADE and bool((whole == raw).all())
        ):
            return whole
        values = raw
    elif raw.dtype.kind in "iu":
        values = raw.astype(np.float64)
    else:
        values = np.empty(len(raw), dtype=np.float64)
        for i, value in enumerate(raw.tolist()):
            try:
                values[i] = float(value)
            except (TypeError, ValueError, OverflowError):
                raise InputError(f"{locate(i)}: grade must be a whole number (got {value!r})") from None
    whole = np.isfinite(values) & (values == np.round(values))
    if not whole.all():
        row = int(np.flatnonzero(~whole)[0])
        raise InputError(f"{locate(row)}: grade must be a whole number (got {_shown(raw, row)!r})")
    huge = np.abs(values) > MAX_ABS_GRADE
    if huge.any():
        row = int(np.flatnonzero(huge)[0])
        raise InputError(f"{locate(row)}: grade {_shown(raw, row)!r} is out of range (at most 2^53 in magnitude)")
    return raw.astype(np.int64) if raw.dtype.kind in "iu" else values.astype(np.int64)

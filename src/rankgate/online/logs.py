"""Impression-level click logs: one row per result shown, read with pyarrow into numpy columns.

A row says that document ``doc`` was shown at ``position`` (1 = top) for ``query`` and whether it
was clicked; optional columns give the ``session`` (or result-page id), a ``timestamp`` and, for
interleaving logs, the ``team`` (arm, ``A`` or ``B``) that contributed the result.

Rows are grouped into result pages: with a session column, one page per (session, query); without
one, a page is a run of consecutive rows of one query whose positions increase (a new page starts
where the query changes or the position does not grow). Pages are stored contiguously, rows of a
page by position, so per-page reductions are ``np.*.reduceat`` over ``page_start``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankgate.errors import InputError

QUERY_NAMES = ("qid", "query_id", "query-id", "queryid", "query", "topic", "topic_id", "q_id")
DOC_NAMES = ("docid", "doc_id", "doc-id", "corpus_id", "docno", "doc", "pid", "passage_id", "document_id", "url")
POSITION_NAMES = ("position", "pos", "rank")
CLICK_NAMES = ("clicked", "click", "clicks", "is_click")
SESSION_NAMES = ("session", "session_id", "sid", "impression_id", "serp_id", "page_id", "request_id")
TIME_NAMES = ("timestamp", "time", "ts", "event_time")
TEAM_NAMES = ("team", "arm", "side", "source")
AGGREGATE_NAMES = ("impressions", "views", "shown", "impression_count")

_TRUE = ("1", "true", "yes", "t", "y")
_FALSE = ("0", "false", "no", "f", "n", "")


@dataclass(frozen=True, eq=False)
class ClickLog:
    """An impression log as numpy columns, rows grouped by page and ordered by position.

    Attributes:
        query_ids, doc_ids: the distinct ids; ``query`` and ``doc`` index into them.
        query, doc, position, clicked: one value per row (``position`` is 1-based).
        page_start: offsets of each page's first row, plus the row count at the end.
        page_query: the query of each page.
        session: per row, the index of its session (pages without a session column: its page).
        timestamp: per row, seconds (float) or None when the log has no timestamps.
        team: per row, 0 for A and 1 for B, or None when the log has no team column.
        source: where the log came from.
    """

    query_ids: list[str]
    doc_ids: list[str]
    query: np.ndarray
    doc: np.ndarray
    position: np.ndarray
    clicked: np.ndarray
    page_start: np.ndarray
    page_query: np.ndarray
    session: np.ndarray
    timestamp: np.ndarray | None
    team: np.ndarray | None
    source: str = "<log>"

    @property
    def rows(self) -> int:
        return len(self.position)

    @property
    def pages(self) -> int:
        return len(self.page_start) - 1

    def page_of_row(self) -> np.ndarray:
        """The page index of every row."""
        return np.repeat(np.arange(self.pages, dtype=np.int64), np.diff(self.page_start))


def is_impression_table(names: set[str]) -> bool:
    """True for an impression-level log (position and click columns, no impression counts)."""
    return (
        any(n in names for n in POSITION_NAMES)
        and any(n in names for n in CLICK_NAMES)
        and not any(n in names for n in AGGREGATE_NAMES)
    )


def read_table(path: str | os.PathLike[str]) -> Any:
    """A pyarrow Table of a CSV/TSV, JSONL or Parquet file (compressed CSV too), column names lowercased."""
    import pyarrow as pa

    source = str(path)
    if not os.path.exists(source):
        raise InputError("file not found", source=source)
    lower = source.lower()
    try:
        if lower.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            table = pq.read_table(source)
        elif lower.endswith((".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz")):
            import pyarrow.json as pj

            table = pj.read_json(source)
        else:
            import pyarrow.csv as pc_csv

            tab = ".tsv" in lower or ".tab" in lower
            table = pc_csv.read_csv(source, parse_options=pc_csv.ParseOptions(delimiter="\t" if tab else ","))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as e:
        raise InputError(f"cannot read the log: {e}", source=source) from None
    if table.num_rows == 0:
        raise InputError("no rows: expected one row per result shown (query, doc, position, clicked)", source=source)
    return table.rename_columns([str(n).lower().strip() for n in table.column_names])


def _column(table: Any, options: tuple[str, ...], what: str, source: str, *, required: bool = True) -> str | None:
    found = next((o for o in options if o in table.column_names), None)
    if found is None and required:
        raise InputError(f"no {what} column: expected one of {', '.join(options)}", source=source, line=1)
    return found


def _line(source: str, index: int) -> int:
    """The file line of row ``index`` (CSV has a header line; JSONL and Parquet do not)."""
    lower = source.lower()
    header = 0 if lower.endswith((".parquet", ".pq", ".jsonl", ".ndjson", ".json", ".jsonl.gz")) else 1
    return int(index) + 1 + header


def _ids(column: Any, what: str, source: str) -> tuple[list[str], np.ndarray]:
    import pyarrow as pa

    from rankgate.core import arrow_compute as pc

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = pc.cast(array, pa.string())
    bad = np.flatnonzero(
        np.asarray(pc.or_kleene(pc.is_null(array), pc.equal(pc.utf8_length(array), 0)).fill_null(True))
    )
    if len(bad):
        raise InputError(f"missing {what}", source=source, line=_line(source, bad[0]))
    encoded = array.dictionary_encode()
    return encoded.dictionary.to_pylist(), np.asarray(encoded.indices).astype(np.int64, copy=False)


def _numbers(column: Any, what: str, source: str) -> np.ndarray:
    import pyarrow as pa

    from rankgate.core import arrow_compute as pc

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if array.null_count:
        bad = np.flatnonzero(np.asarray(pc.is_null(array)))
        raise InputError(f"missing {what}", source=source, line=_line(source, bad[0]))
    if pa.types.is_boolean(array.type):
        return np.asarray(array, dtype=np.float64)
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        low = pc.utf8_lower(pc.utf8_trim_whitespace(array))
        is_true, is_false = pc.is_in(low, pa.array(_TRUE)), pc.is_in(low, pa.array(_FALSE))
        known = np.asarray(pc.or_(is_true, is_false))
        if what == "clicked" and known.all():
            return np.asarray(is_true, dtype=np.float64)
        try:
            array = pc.cast(array, pa.float64())
        except pa.ArrowInvalid:
            values = array.to_pylist()
            for i, v in enumerate(values):
                try:
                    float(v)
                except ValueError:
                    raise InputError(
                        f"{what} must be a number", source=source, line=_line(source, i), text=repr(v)
                    ) from None
    return np.asarray(array, dtype=np.float64)


def _checked_position(values: np.ndarray, source: str) -> np.ndarray:
    bad = np.flatnonzero(~np.isfinite(values) | (values < 1) | (values != np.floor(values)))
    if len(bad):
        raise InputError(
            "position must be a whole number >= 1 (1 = top)",
            source=source,
            line=_line(source, bad[0]),
            text=repr(values[bad[0]]),
        )
    return values.astype(np.int32)


def _checked_clicked(values: np.ndarray, source: str) -> np.ndarray:
    bad = np.flatnonzero((values != 0) & (values != 1))
    if len(bad):
        raise InputError(
            "clicked must be 0/1 or true/false", source=source, line=_line(source, bad[0]), text=repr(values[bad[0]])
        )
    return values.astype(bool)


def _timestamps(column: Any, source: str) -> np.ndarray:
    import pyarrow as pa

    from rankgate.core import arrow_compute as pc

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        try:
            array = pc.cast(array, pa.float64())
        except pa.ArrowInvalid:
            try:
                array = pc.cast(array, pa.timestamp("us"))
            except pa.ArrowInvalid as e:
                raise InputError(f"timestamp must be seconds or an ISO 8601 time ({e})", source=source) from None
    if pa.types.is_timestamp(array.type) or pa.types.is_date(array.type):
        array = pc.cast(pc.cast(array, pa.timestamp("us")), pa.int64())
        return np.asarray(array.fill_null(0), dtype=np.float64) / 1e6
    return _numbers(array, "timestamp", source)


def _teams(column: Any, source: str) -> np.ndarray:
    ids, codes = _ids(column, "team", source)
    names = [str(t).strip().upper() for t in ids]
    lookup = np.full(len(ids), -1, dtype=np.int8)
    for i, name in enumerate(names):
        if name in ("A", "0", "CONTROL", "BASELINE"):
            lookup[i] = 0
        elif name in ("B", "1", "TREATMENT", "CANDIDATE"):
            lookup[i] = 1
        else:
            row = int(np.flatnonzero(codes == i)[0])
            raise InputError("team must be A or B", source=source, line=_line(source, row), text=repr(ids[i]))
    return lookup[codes]


def read_click_log(path: str | os.PathLike[str], *, need_team: bool = False) -> ClickLog:
    """Read an impression-level log (CSV/TSV, JSONL or Parquet) into a `ClickLog`.

    Raises:
        InputError: a missing column or a bad value, naming the file and line.
    """
    source = str(path)
    return log_from_table(read_table(path), source=source, need_team=need_team)


def log_from_table(table: Any, *, source: str = "<table>", need_team: bool = False) -> ClickLog:
    """A `ClickLog` from a pyarrow Table with lowercased column names (see `read_click_log`)."""
    q_name = _column(table, QUERY_NAMES, "query id", source)
    d_name = _column(table, DOC_NAMES, "document id", source)
    p_name = _column(table, POSITION_NAMES, "position", source)
    c_name = _column(table, CLICK_NAMES, "clicked", source)
    s_name = _column(table, SESSION_NAMES, "session", source, required=False)
    t_name = _column(table, TIME_NAMES, "timestamp", source, required=False)
    team_name = _column(table, TEAM_NAMES, "team", source, required=need_team)
    query_ids, query = _ids(table[q_name], "query id", source)
    doc_ids, doc = _ids(table[d_name], "document id", source)
    position = _checked_position(_numbers(table[p_name], "position", source), source)
    clicked = _checked_clicked(_numbers(table[c_name], "clicked", source), source)
    session = _ids(table[s_name], "session", source)[1] if s_name else None
    timestamp = _timestamps(table[t_name], source) if t_name else None
    team = _teams(table[team_name], source) if team_name else None
    return build_log(
        query_ids,
        doc_ids,
        query,
        doc,
        position,
        clicked,
        session=session,
        timestamp=timestamp,
        team=team,
        source=source,
    )


def build_log(
    query_ids: list[str],
    doc_ids: list[str],
    query: np.ndarray,
    doc: np.ndarray,
    position: np.ndarray,
    clicked: np.ndarray,
    *,
    session: np.ndarray | None = None,
    timestamp: np.ndarray | None = None,
    team: np.ndarray | None = None,
    source: str = "<arrays>",
) -> ClickLog:
    """Group rows into pages (see the module docstring) and order them; the arrays are row-aligned."""
    query = np.asarray(query, dtype=np.int64)
    position = np.asarray(position, dtype=np.int32)
    if session is not None:
        key = np.asarray(session, dtype=np.int64) * max(len(query_ids), 1) + query
        _, page = np.unique(key, return_inverse=True)
    else:
        new = np.ones(len(query), dtype=bool)
        new[1:] = (query[1:] != query[:-1]) | (position[1:] <= position[:-1])
        page = np.cumsum(new) - 1
    page = page.astype(np.int64).ravel()
    sort = np.lexsort((position, page))
    order = None if np.array_equal(sort, np.arange(len(sort))) else sort
    take = (lambda a: a) if order is None else (lambda a: a[order])
    page = take(page)
    starts = np.flatnonzero(np.r_[True, page[1:] != page[:-1]])
    page_start = np.r_[starts, len(page)].astype(np.int64)
    query = take(query)
    pos = take(position)
    duplicate = np.flatnonzero((pos[1:] == pos[:-1]) & (page[1:] == page[:-1]))
    if len(duplicate):
        raise InputError(
            f"two results at position {int(pos[duplicate[0]])} of one result page of query "
            f"{query_ids[query[duplicate[0]]]!r}; give a session column to tell pages apart",
            source=source,
        )
    return ClickLog(
        query_ids=list(query_ids),
        doc_ids=list(doc_ids),
        query=query,
        doc=take(np.asarray(doc, dtype=np.int64)),
        position=pos,
        clicked=take(np.asarray(clicked, dtype=bool)),
        page_start=page_start,
        page_query=query[starts],
        session=take(np.asarray(session, dtype=np.int64)) if session is not None else page,
        timestamp=take(np.asarray(timestamp, dtype=np.float64)) if timestamp is not None else None,
        team=take(np.asarray(team, dtype=np.int8)) if team is not None else None,
        source=source,
    )

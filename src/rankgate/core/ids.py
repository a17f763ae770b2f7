"""Row locations and id checks shared by `Qrels` and `Run`: errors name the row they came from."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from rankgate.core.columns import Interned, first_empty, intern_ordered
from rankgate.errors import InputError

TREC_SEPARATORS = " \t\n\r\v\f"
"""What a TREC line splits on (trec_eval's ``isspace`` in the C locale, and rankgate's reader): an id
holding one cannot be written to a TREC file; any other character (U+00A0, U+2028) can."""

RowLocator = Callable[[int], str]
"""Maps a 0-based input row to where it came from, e.g. ``"run.txt:17"``."""


def default_locator(source: str | None) -> RowLocator:
    name = source or "<run>"
    return lambda row: f"{name} row {row + 1}"


def mapping_locator(source: str, qids: list[str], docids: list[str]) -> RowLocator:
    """Locate a row of a ``{qid: {docid: value}}`` input by its query and document."""
    return lambda row: f"{source} (query {qids[row]!r}, document {docids[row]!r})"


def intern_query_ids(column: Any, locate: RowLocator, *, check_used: bool = True) -> Interned:
    """Intern the query id column, codes in byte order of the ids; a missing (null) id is an
    input error naming its row. See `intern_ordered` for ``check_used``."""
    if column.null_count:
        raise InputError(f"{locate(first_empty(column))}: missing query id")
    return intern_ordered(column, check_used=check_used)


def check_ids(queries: Interned, docs: pa.ChunkedArray, locate: RowLocator) -> None:
    """Ids must be non-empty: an empty one means a field went missing."""
    empty_query = first_empty(pa.chunked_array([queries.values]))
    rows = np.flatnonzero(queries.codes == empty_query) if empty_query >= 0 else np.zeros(0, dtype=np.int64)
    if len(rows):  # (an empty id that no row uses, e.g. an unused Categorical category, is dropped later)
        raise InputError(f"{locate(int(rows[0]))}: empty query id")
    row = first_empty(docs)
    if row >= 0:
        raise InputError(f"{locate(row)}: empty doc id")

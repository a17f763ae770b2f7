"""A parsed run put in `Run`'s order (query, score descending) by the reader, before the `Run` is built.

`Run` sorts the rows it is given, but its caller still holds the file-order columns while it
does, so a run whose queries come in numeric or topics-file order, or whose lines are
shuffled, held every column twice (and the doc ids three times when shuffled) while the
`Run` hashed them. Done here, each file-order column is let go as soon as its sorted copy
exists, and the `Run` finds its rows already in order.

The result is the same `Run`: the sort is the one `Run` does (stable: file order among equal
scores). Duplicate (query, doc) pairs are found in row order, which the sort may change
between the two copies of a pair unless it only moves whole queries, so a full sort is done
here only under ``duplicates="error"``; and since an error's row would then be numbered in
sorted order, the caller rebuilds the `Run` from the file on any `InputError` (see `reordered`).

Scattered queries are grouped and sorted by the native kernels when they were built
(`rankgate.core.scattered`: streaming passes instead of a gather of every column by the
permutation); the result is the same.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rankgate.core import scattered
from rankgate.core.columns import intern_ordered, numeric_array, release_unused
from rankgate.core.run import _score_order, in_order, narrow_rows
from rankgate.core.run_scan import grouped_score_order
from rankgate.io.trec import Parsed

_NO_VALUES = np.empty(0, dtype=np.float64)


def _scattered(codes: np.ndarray, n_queries: int) -> bool:
    """Whether some query's rows are not contiguous: more runs of equal codes than queries (every
    query id of a parsed TREC file occurs in it)."""
    return len(codes) > 1 and 1 + int(np.count_nonzero(codes[1:] != codes[:-1])) > n_queries


def reorder(parsed: Parsed, duplicates: str) -> bool:
    """Put ``parsed``'s rows in `Run`'s order, in place; False (nothing done) when they already
    are, or when only a full sort would do and ``duplicates`` is not ``"error"``."""
    interned = intern_ordered(parsed.table["qid"], check_used=False)
    codes, dictionary = interned.codes, interned.values
    del interned
    if not _scattered(codes, len(dictionary)):
        order, blocks = _score_order(codes, parsed.values)  # None, or whole queries moved
    elif duplicates != "error":
        return False
    elif _reorder_grouped(parsed, codes, dictionary):
        return True
    else:
        order, blocks = grouped_score_order(codes, parsed.values), None
        if order is None:
            order, blocks = _score_order(codes, parsed.values)
    if blocks is None and (order is None or duplicates != "error"):
        return False
    order = None if order is None else narrow_rows(order)
    columns = [codes, parsed.values, parsed.table["docid"]]
    parsed.values = _NO_VALUES
    parsed.table = parsed.table.drop_columns(["docid"])  # the file-order columns: only in `columns` now
    del codes  # each is let go as its copy is made
    codes, parsed.values, docs = in_order(order, blocks, columns)
    _set_columns(parsed, codes, dictionary, docs)
    return True


def _reorder_grouped(parsed: Parsed, codes: np.ndarray, dictionary: pa.StringArray) -> bool:
    """`reorder` for scattered queries by the native kernels (`rankgate.core.scattered`: streaming
    passes, no gathers by a permutation); False (nothing done) where they do not apply."""
    grouping = scattered.group_by_query(codes, len(dictionary), parsed.values, parsed.table["docid"])
    if grouping is None:
        return False
    scores = [parsed.values]  # let go by the sort as soon as it is copied
    parsed.values = _NO_VALUES
    parsed.values, codes = scattered.sort_by_score(grouping, scores)
    parsed.table = parsed.table.drop_columns(["docid"])  # the file-order doc ids: only `grouping` now
    docs = pa.chunked_array([scattered.take_strings(grouping)])
    del grouping
    _set_columns(parsed, codes, dictionary, docs)
    return True


def _set_columns(parsed: Parsed, codes: np.ndarray, dictionary: pa.StringArray, docs: pa.ChunkedArray) -> None:
    """``parsed``'s table from its sorted query codes and doc ids."""
    queries = pa.DictionaryArray.from_arrays(numeric_array(codes), dictionary)
    parsed.table = pa.table({"qid": pa.chunked_array([queries]), "docid": docs})
    release_unused()

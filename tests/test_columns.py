"""Id columns: hashing and interning must not depend on how Arrow chunked the data."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from rankgate.core.columns import find_duplicate_pairs, intern, string_hashes

ids = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)


@given(st.lists(ids, min_size=1, max_size=30), st.lists(ids, min_size=0, max_size=30))
def test_a_string_hashes_alike_in_any_chunk(first, second):
    # The hash of an id must not depend on the longest string of the chunk it sits in.
    chunked = pa.chunked_array([pa.array(first), pa.array(second + first)], type=pa.string())
    hashes = string_hashes(chunked)
    alone = np.array([string_hashes(pa.array([s]))[0] for s in first], dtype=np.uint64)
    assert (hashes[: len(first)] == alone).all()
    assert (hashes[-len(first) :] == alone).all()


def test_duplicate_across_chunks_of_different_widths_is_found():
    short = pa.array(["q1", "x"])
    long = pa.array(["q1", "a-very-long-document-identifier-0001"])
    queries = pa.chunked_array([pa.array(["a", "a"]), pa.array(["a", "a"])])
    docs = pa.chunked_array([short, long])
    later, first = find_duplicate_pairs(intern(queries).codes, docs)
    assert later.tolist() == [2]
    assert first.tolist() == [0]

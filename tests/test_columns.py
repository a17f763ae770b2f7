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


@given(
    st.lists(st.text(alphabet="ab", min_size=0, max_size=1500), min_size=1, max_size=12),
    st.lists(st.text(alphabet="ab", min_size=0, max_size=6), min_size=0, max_size=40),
)
def test_long_and_short_ids_hash_alike_in_any_chunk(long_ids, short_ids):
    # Rows past 64 bytes are hashed on a shrinking subset and rows past 1 KiB one by one: both
    # shortcuts must keep a string's hash a function of its own bytes.
    chunked = pa.chunked_array([pa.array(short_ids + long_ids, type=pa.string()), pa.array(long_ids)])
    hashes = string_hashes(chunked)
    alone = np.array([string_hashes(pa.array([s]))[0] for s in long_ids], dtype=np.uint64)
    assert (hashes[len(short_ids) : len(short_ids) + len(long_ids)] == alone).all()
    assert (hashes[-len(long_ids) :] == alone).all()


def test_a_multi_megabyte_id_is_hashed_once_not_per_row(tmp_path):
    # One 4 MB document id among many short ones used to cost a pass over every row per 8
    # bytes (minutes); the evaluation must still find it by exact match.
    import rankgate

    huge = "d" * (4 << 20)
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text(f"q1 0 {huge} 1\nq1 0 short 1\n")
    lines = [f"q1 Q0 {huge} 1 9.0 r"] + [f"q1 Q0 x{i} {i + 2} {1.0 / (i + 2)} r" for i in range(20000)]
    run.write_text("\n".join(lines) + "\n")
    hashes = string_hashes(pa.array([huge, huge[:-1] + "e", "short"]))
    assert len(set(hashes.tolist())) == 3
    result = rankgate.evaluate(str(qrels), str(run), ["P@1", "R@1000"])
    assert result.aggregate["P@1"] == 1.0
    assert result.aggregate["R@1000"] == 0.5


def test_a_large_shuffle_is_taken_piece_by_piece_from_each_chunk(monkeypatch: object) -> None:
    """Many rows in no order (more than a quarter of the column): each output piece gathers from
    the chunks it needs, pieces smaller than a chunk and spanning several; same rows as a lookup."""
    import rankgate.core.gather as columns

    rng = np.random.default_rng(0)
    sizes = [5, 0, 17, 300, 1, 64]
    column = pa.chunked_array(
        [pa.array([f"d{i}x{j}" for j in range(n)], type=pa.string()) for i, n in enumerate(sizes)]
    )
    flat = column.to_pylist()
    monkeypatch.setattr(columns, "_TAKE_SLICE", 37)  # type: ignore[attr-defined]
    for k in (120, 387, 1000):
        rows = rng.integers(0, len(column), k)
        assert columns.take_rows(column, rows).to_pylist() == [flat[r] for r in rows.tolist()]
    assert columns.take_rows(column, np.arange(len(column))[::-1]).to_pylist() == flat[::-1]

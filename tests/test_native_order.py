"""The native kernels that put a shuffled run in `Run`'s order (``core/_native.c``, called by
`rankgate.core.scattered` and `rankgate.core.gather`) give what the numpy/Arrow path gives.

Oracles: Arrow's stable ``sort_indices`` by (query code, score descending), which is how `Run`
sorts, and Arrow's ``take`` for gathers; the same functions with the kernels switched off
(``RANKGATE_NATIVE=0``). Inputs are random: ties in the scores (few distinct values, integers),
-0.0 beside 0.0, NaN and infinities, few and many queries (more than `_MAX_PARTS`, so parts hold
several queries), empty doc ids, doc-id columns of several chunks sliced at non-zero offsets. When
the library was not built (no compiler at install time) it is compiled here into a temporary
folder, so these tests always run the C code a compiler can build.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rankgate.core import gather, native, parallel, scattered
from rankgate.core.columns import take_rows
from rankgate.core.run_scan import grouped_score_order
from rankgate.io import run_order
from rankgate.io.readers import read_run
from tests.native_support import use_built_library


@pytest.fixture
def kernels(tmp_path_factory, monkeypatch):
    """The native kernels loaded, with small slices and parts: many threads' calls on small inputs."""
    use_built_library(tmp_path_factory, monkeypatch)
    monkeypatch.setattr(scattered, "_ROWS_PER_CALL", 64)
    monkeypatch.setattr(gather, "_NATIVE_SLICE", 100)
    return native.library()


def _switch_off(monkeypatch) -> None:
    monkeypatch.setenv("RANKGATE_NATIVE", "0")
    monkeypatch.setattr(native, "_lib", None)
    assert native.library() is None


def _doc_ids(rng: np.random.Generator, n: int, pieces: int) -> pa.ChunkedArray:
    """``n`` random ids (some empty, some shared) in ``pieces`` chunks, each a slice of a larger array
    (non-zero offsets), with an empty chunk among them."""
    words = [f"d{rng.integers(0, 10 ** int(rng.integers(0, 7)))}" * int(rng.integers(0, 3)) for _ in range(n + 10)]
    whole = pa.array(words, type=pa.string())
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(pieces - 1, max(0, n - 1)), replace=False)) if n > 1 else []
    bounds = [0, *np.asarray(cuts, dtype=int).tolist(), n]
    chunks = [whole.slice(5 + lo, hi - lo) for lo, hi in itertools.pairwise(bounds)]
    chunks.insert(len(chunks) // 2, whole.slice(3, 0))
    return pa.chunked_array(chunks, type=pa.string())


def _scores(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "ties":
        return rng.integers(-2, 3, size=n).astype(np.float64)
    if kind == "odd":  # -0.0 beside 0.0, NaN, infinities, one value repeated
        pool = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -1.5, 1e300, -1e-300, 1.5])
        return rng.choice(pool, size=n)
    return rng.normal(10, 3, size=n).round(int(rng.integers(1, 6)))


def _expected_order(codes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Arrow's stable sort by (code, score descending): how `Run` sorts its rows."""
    table = pa.table({"q": pa.array(codes), "s": pa.array(scores)})
    return pc.sort_indices(table, sort_keys=[("q", "ascending"), ("s", "descending")]).to_numpy()


CASES = [
    (seed, n_rows, n_codes, kind)
    for seed, (n_rows, n_codes) in enumerate(
        [(1, 1), (40, 1), (300, 2), (2000, 7), (6000, 2), (3000, 300), (5000, 1500)]
    )
    for kind in ("ties", "odd", "spread")
]


@pytest.mark.parametrize(("seed", "n_rows", "n_codes", "kind"), CASES)
def test_grouped_columns_are_the_stable_sort_by_query_and_score(
    kernels, monkeypatch, seed: int, n_rows: int, n_codes: int, kind: str
) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_codes, size=n_rows).astype(np.int32)
    scores = _scores(rng, n_rows, kind)
    docs = _doc_ids(rng, n_rows, pieces=4)
    order = _expected_order(codes, scores)
    numpy_order = grouped_score_order(codes, scores)
    if numpy_order is not None:  # the numpy path the kernels stand in for
        assert np.array_equal(numpy_order, order)

    grouping = scattered.group_by_query(codes, n_codes, scores, docs)
    assert grouping is not None
    columns = [scores]
    got_scores, got_codes = scattered.sort_by_score(grouping, columns)
    assert columns == []  # taken, so that the file-order scores can be let go once copied
    assert np.array_equal(got_scores.view(np.uint64), scores[order].view(np.uint64))  # NaN, -0.0 bit for bit
    assert np.array_equal(got_codes, codes[order])
    got_docs = scattered.take_strings(grouping)
    got_docs.validate(full=True)
    assert got_docs.equals(docs.combine_chunks().take(pa.array(order)))


def test_the_grouping_does_not_depend_on_the_threads_or_the_parts(kernels, monkeypatch) -> None:
    rng = np.random.default_rng(7)
    n, n_codes = 4000, 10  # enough rows a query for a slice per thread
    codes = rng.integers(0, n_codes, size=n).astype(np.int32)
    scores, docs = _scores(rng, n, "ties"), _doc_ids(rng, n, pieces=6)
    order = _expected_order(codes, scores)
    for workers, max_parts in ((1, 256), (3, 256), (4, 4), (2, 1)):
        monkeypatch.setattr(scattered, "WORKERS", workers)
        monkeypatch.setattr(parallel, "WORKERS", workers)
        monkeypatch.setattr(scattered, "_MAX_PARTS", max_parts)
        grouping = scattered.group_by_query(codes, n_codes, scores, docs)
        assert grouping is not None and len(grouping.slices) == workers
        got_scores, _ = scattered.sort_by_score(grouping, [scores])
        assert np.array_equal(got_scores, scores[order])
        assert scattered.take_strings(grouping).equals(docs.combine_chunks().take(pa.array(order)))


def test_the_grouping_declines_what_the_kernels_cannot_read(kernels, monkeypatch) -> None:
    codes, scores = np.array([1, 0, 1], dtype=np.int32), np.array([1.0, 2.0, 3.0])
    docs = pa.chunked_array([pa.array(["a", "b", "c"])])
    assert scattered.group_by_query(codes, 2, scores, docs) is not None
    assert scattered.group_by_query(codes.astype(np.int64), 2, scores, docs) is None
    assert scattered.group_by_query(codes, 2, scores.astype(np.float32), docs) is None
    assert scattered.group_by_query(codes, 2, scores, docs.cast(pa.large_string())) is None
    assert scattered.group_by_query(codes, 2, scores, pa.chunked_array([pa.array(["a", None, "c"])])) is None
    with pytest.raises(ValueError, match="query code"):
        scattered.group_by_query(codes, 1, scores, docs)
    monkeypatch.setattr(scattered, "_WIDEST_QUERY", 1)
    assert scattered.group_by_query(codes, 2, scores, docs) is None
    _switch_off(monkeypatch)
    assert scattered.group_by_query(codes, 2, scores, docs) is None


@pytest.mark.parametrize("shape", ["permutation", "repeats", "subset", "empty strings"])
def test_take_rows_by_the_kernels_is_arrows_take(kernels, monkeypatch, shape: str) -> None:
    rng = np.random.default_rng(len(shape))
    n = 3000
    docs = _doc_ids(rng, n, pieces=5)
    if shape == "empty strings":
        docs = pa.chunked_array([pa.array([""] * 1000).slice(7, 400), pa.array(["", "x", ""] * 300).slice(2, 600)])
        n = len(docs)
    rows = {
        "permutation": rng.permutation(n),
        "repeats": rng.integers(0, n, size=2 * n),
        "subset": rng.permutation(n)[: n // 3],
        "empty strings": rng.permutation(n),
    }[shape].astype(np.int32)
    expected = docs.combine_chunks().take(pa.array(rows))
    native_taken = take_rows(docs, rows)
    assert native_taken.num_chunks == 1  # one new array: the kernels did it
    native_taken.chunk(0).validate(full=True)
    assert native_taken.combine_chunks().equals(expected)
    assert take_rows(docs, rows.astype(np.int64)).combine_chunks().equals(expected)
    with pytest.raises(IndexError):
        take_rows(docs, np.array([0, n] * n, dtype=np.int32))
    _switch_off(monkeypatch)
    assert take_rows(docs, rows).combine_chunks().equals(expected)


def _write(path: Path, lines: list[tuple[str, str, float]]) -> str:
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(lines)))
    return str(path)


def _state(run: object) -> tuple:
    r = run  # a Run
    return (
        r.query_ids.to_pylist(),  # type: ignore[attr-defined]
        r.offsets.tolist(),  # type: ignore[attr-defined]
        r.doc_ids.to_pylist(),  # type: ignore[attr-defined]
        r.scores.tolist(),  # type: ignore[attr-defined]
        take_rows(r.doc_ids, r.ranking_order("trec")).to_pylist(),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("native_on", [True, False])
def test_a_shuffled_trec_file_reads_as_the_grouped_file(kernels, tmp_path: Path, monkeypatch, native_on: bool) -> None:
    """Same query ids, doc ids, scores and order; ties in scores keep the file order of their lines."""
    rnd = random.Random(3)
    shuffled = [
        (f"q{q}", f"doc{d}", float(rnd.choice([1, 2, 2.5, rnd.random()])))
        for q in range(400)  # more queries than parts: each part holds several
        for d in rnd.sample(range(10**6), rnd.randint(1, 30))
    ]
    rnd.shuffle(shuffled)
    if not native_on:
        _switch_off(monkeypatch)
    took = []
    monkeypatch.setattr(scattered, "take_strings", lambda g, f=scattered.take_strings: took.append(1) or f(g))
    from_shuffled = read_run(_write(tmp_path / "shuffled.txt", shuffled))
    assert took == ([1] if native_on else [])
    grouped = sorted(shuffled, key=lambda line: line[0])  # each query's lines together, in the same order
    assert _state(from_shuffled) == _state(read_run(_write(tmp_path / "grouped.txt", grouped)))
    monkeypatch.setattr(run_order, "reorder", lambda parsed, duplicates: False)
    assert _state(from_shuffled) == _state(read_run(_write(tmp_path / "again.txt", shuffled)))

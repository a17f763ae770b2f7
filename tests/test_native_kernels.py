"""The native kernels of `Run` construction (``rg_doc_scan``, ``rg_string_hashes``, ...) against the
numpy path they replace.

Each case is computed twice, with the kernels and with them switched off, and must agree exactly:
duplicate pairs (later row, first row), own-id candidates and the hash words kept for joins.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

import rankgate.core.columns as columns_module
import rankgate.core.native as native_module
import rankgate.core.run_scan as scan_module
from rankgate.core.hashing import high_words, string_hashes
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.measures.block import RankedBlock


@pytest.fixture(autouse=True)
def kernels():
    if native_module.library() is None:
        pytest.skip("the native kernels are not built here")


def _rows(seed: int, n_queries: int, ascending: bool = True) -> tuple[np.ndarray, pa.ChunkedArray, pa.StringArray]:
    """Query codes (each query's rows together), doc ids with repeats inside a query (some three
    times), some equal to their query's id; in several chunks."""
    rng = np.random.default_rng(seed)
    query_ids = pa.array(sorted({f"q{i}" for i in range(n_queries)}), type=pa.string())
    order = np.arange(n_queries) if ascending else rng.permutation(n_queries)
    codes, docs = [], []
    for q in order.tolist():
        depth = int(rng.integers(0, 40))
        ids = [f"d{x}" for x in rng.integers(0, 30, size=depth)]  # repeats within the query
        if depth and rng.random() < 0.2:
            ids[int(rng.integers(0, depth))] = query_ids[q].as_py()
        codes += [q] * depth
        docs += ids
    cut = len(docs) // 3
    column = pa.chunked_array([pa.array(docs[:cut], type=pa.string()), pa.array(docs[cut:], type=pa.string())])
    return np.asarray(codes, dtype=np.int32), column, query_ids


def _both(monkeypatch, *args):
    native = scan_module.scan_doc_ids(*args)
    with monkeypatch.context() as m:
        m.setattr(native_module, "_lib", False)
        plain = scan_module.scan_doc_ids(*args)
    return native, plain


@pytest.mark.parametrize("seed", range(4))
def test_string_hashes_equal_the_numpy_path(seed, monkeypatch):
    """Every length around the 8-byte words (0 to 40 bytes), any UTF-8, ids past the 1 KiB
    limit (BLAKE2b for both), chunks that are slices of a larger array, all-empty chunks, nulls,
    and the large_string and string_view layouts."""
    rng = np.random.default_rng(seed)
    alphabet = [chr(c) for c in [*range(32, 127), 0xE9, 0x4E2D, 0x1F600]]
    ids = ["".join(rng.choice(alphabet, size=int(k))) for k in rng.integers(0, 41, 3000)]
    ids += ["x" * 1024, "y" * 1025, "z" * 5000, ""]
    whole = pa.array(ids, type=pa.string())
    cases = [
        whole,
        whole.slice(13, 2000),
        pa.chunked_array([whole.slice(0, 7), whole.slice(7, 1500), whole.slice(1507)]),
        pa.array(["", "", ""], type=pa.string()),
        pa.array(["abc", "", "", ""], type=pa.string()).slice(1),  # all empty, at a nonzero byte offset
        pa.array(["abcdefgh", None, "", "x" * 17], type=pa.string()),  # a null hashes as an empty id
    ]
    for column in cases:
        native = string_hashes(column)
        with monkeypatch.context() as m:
            m.setattr(native_module, "_lib", False)
            plain = string_hashes(column)
        assert native.tolist() == plain.tolist()
    for other in (pa.large_string(), pa.string_view()):  # other layouts: hashed as plain strings
        assert string_hashes(whole.cast(other)).tolist() == string_hashes(whole).tolist()
    alone = [string_hashes(pa.array([s]))[0] for s in ids[:50]]
    assert string_hashes(whole)[:50].tolist() == alone  # an id hashes alike wherever it sits


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ascending", [True, False])
def test_doc_scan_equals_the_numpy_path(seed, ascending, monkeypatch):
    codes, docs, query_ids = _rows(seed, n_queries=[1, 7, 60][seed % 3], ascending=ascending)
    monkeypatch.setattr(scan_module, "SLICE_ROWS", 97)  # many slices, cut at query starts
    native, plain = _both(monkeypatch, codes, docs, query_ids)
    assert native.hash_high.tolist() == plain.hash_high.tolist() == high_words(string_hashes(docs)).tolist()
    assert sorted(native.self_match_rows.tolist()) == sorted(plain.self_match_rows.tolist())
    assert native.later.tolist() == plain.later.tolist()
    assert native.first.tolist() == plain.first.tolist()


def test_doc_scan_checks_equal_hashes_on_the_strings(monkeypatch):
    """Every doc id hashing alike: the kernel's candidates are not all duplicates, the numpy path decides."""
    codes, docs, query_ids = _rows(3, n_queries=20)

    def constant(column):
        return np.full(len(column), 12345, dtype=np.uint64)

    monkeypatch.setattr(scan_module, "string_hashes", constant)
    monkeypatch.setattr(columns_module, "string_hashes", constant)
    native, plain = _both(monkeypatch, codes, docs, query_ids)
    assert native.later.tolist() == plain.later.tolist() and native.first.tolist() == plain.first.tolist()
    assert 0 < len(native.later) < len(codes) - 20


@pytest.mark.parametrize("policy", ["first", "max", "error"])
def test_runs_with_duplicates_are_built_alike(policy, monkeypatch):
    rng = np.random.default_rng(5)
    qids = np.repeat([f"q{i}" for i in range(50)], 30).tolist()
    docs = [f"d{x}" for x in rng.integers(0, 25, size=len(qids))]
    scores = rng.integers(0, 5, size=len(qids)).astype(float).tolist()

    def build():
        try:
            run = Run(qids, docs, scores, duplicates=policy)
        except InputError as e:
            return str(e)
        return run.query_ids.to_pylist(), run.doc_ids.to_pylist(), run.scores.tolist(), run.doc_hash_high.tolist()

    native = build()
    monkeypatch.setattr(native_module, "_lib", False)
    assert native == build()


def _tied_rows(seed: int) -> tuple[np.ndarray, np.ndarray, pa.ChunkedArray]:
    """Rows by (query, score descending) with many ties: groups of 2 to 400 rows, doc ids that are
    prefixes of each other, of many lengths, and not ASCII; in several chunks."""
    rng = np.random.default_rng(seed)
    codes, scores, docs = [], [], []
    alphabet = ["a", "b", "z", "é", "😀", "0", "9", "~"]
    for q in range(int(rng.integers(1, 40))):
        depth = int(rng.integers(0, 900))
        values = np.sort(rng.integers(0, int(rng.choice([2, 10, 1000])), size=depth))[::-1].astype(float)
        ids: set[str] = set()
        while len(ids) < depth:
            ids.add("".join(rng.choice(alphabet, size=int(rng.integers(0, 12)))))
        codes += [q] * depth
        scores += values.tolist()
        docs += sorted(ids, key=lambda _: rng.random())
    cuts = sorted(rng.integers(0, len(docs) + 1, size=3).tolist())
    parts = [docs[a:b] for a, b in zip([0, *cuts], [*cuts, len(docs)], strict=True)]
    column = pa.chunked_array([pa.array(p, type=pa.string()) for p in parts], type=pa.string())
    return np.asarray(codes, dtype=np.int32), np.asarray(scores), column


@pytest.mark.parametrize("seed", range(8))
def test_tie_moves_equal_the_numpy_path(seed, monkeypatch):
    codes, scores, docs = _tied_rows(seed)
    monkeypatch.setattr(scan_module, "SLICE_ROWS", [50, 1000, 1 << 18][seed % 3])
    rows, within = scan_module.tie_group_moves(codes, scores, docs)
    with monkeypatch.context() as m:
        m.setattr(native_module, "_lib", False)
        want_rows, want_within = scan_module.tie_group_moves(codes, scores, docs)
    assert rows.tolist() == want_rows.tolist() and within.tolist() == want_within.tolist()
    if len(rows):  # and the order is trec_eval's: doc ids descending within each tied group
        order = np.arange(len(codes))
        order[rows] = rows[within]
        ids = docs.to_pylist()
        for a, b in zip(order[:-1].tolist(), order[1:].tolist(), strict=True):
            if codes[a] == codes[b] and scores[a] == scores[b]:
                assert ids[a].encode() > ids[b].encode()


_IDEAL_CASES = [  # (most judgments a query, grades from, grades to): every path of the kernel
    (5, -3, 5),  # short groups: insertion sort
    (40, -3, 5),  # longer groups of a few grades: counting sort
    (200, -3, 300),  # a span over the counting sort's 256: qsort
    (200, -100, 155),  # a span of exactly 256: counting sort
    (3, -3, 1_000_000),
    (60, -(2**63), 2**63 - 1),  # the whole int64 range: qsort, no overflow
]


@pytest.mark.parametrize("case", range(len(_IDEAL_CASES)))
def test_ideal_grades_equal_the_numpy_path(case, monkeypatch):
    """Each query's grades sorted descending, with and without the judgments of grade <= 0."""
    most, low, high = _IDEAL_CASES[case]
    rng = np.random.default_rng(case)
    counts = rng.integers(0, most, size=50)
    qrel_query = np.repeat(np.arange(50, dtype=np.int64), counts)
    grades = rng.integers(low, high, size=len(qrel_query), dtype=np.int64, endpoint=True)
    empty = np.zeros(0, dtype=np.int64)

    def ideal():
        block = RankedBlock(50, empty, empty, np.zeros(0, dtype=bool), qrel_query, grades.copy())
        positive = [a.tolist() for a in block.ideal_positive_grades()]
        full = [a.tolist() for a in block.ideal_grades()]
        assert positive == [a.tolist() for a in block.ideal_positive_grades()]  # the same from the full cache
        return full, positive

    native = ideal()
    full, positive = native
    assert full[1] == [g for q in range(50) for g in sorted(grades[qrel_query == q].tolist(), reverse=True)]
    assert positive[1] == [g for g in full[1] if g > 0]
    monkeypatch.setattr(native_module, "_lib", False)
    assert native == ideal()


@pytest.mark.parametrize("seed", range(6))
def test_block_copies_equal_the_numpy_path(seed, monkeypatch):
    """Blocks of rows moved whole (`take_blocks`, `take_array_blocks`): blocks crossing chunks, empty
    blocks and empty strings, a chunk that is a slice of a larger array (its offsets start past 0)."""
    from rankgate.core.gather import take_array_blocks, take_blocks

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    words = ["".join(rng.choice(list("abc"), size=int(rng.integers(0, 12)))) for _ in range(n + 5)]
    whole = pa.array(words, type=pa.string())
    cuts = sorted({0, n, *rng.integers(0, n, size=int(rng.integers(0, 8))).tolist()})
    column = pa.chunked_array([whole.slice(5 + a, b - a) for a, b in itertools.pairwise(cuts)], type=pa.string())
    bounds = sorted({0, n, *rng.integers(0, n, size=int(rng.integers(0, 30))).tolist()})
    starts = np.array(bounds[:-1], dtype=np.int64)
    lengths = np.diff(bounds).astype(np.int64)
    chosen = rng.permutation(len(starts))
    starts, lengths = starts[chosen], lengths[chosen]
    starts = np.append(starts, int(rng.integers(0, n)))  # an empty block
    lengths = np.append(lengths, 0)
    values = rng.random(n)
    expected_rows = np.concatenate([np.arange(s, s + k) for s, k in zip(starts, lengths, strict=True)]).astype(np.int64)

    native = take_blocks(column, starts, lengths), take_array_blocks(values, starts, lengths)
    assert native[0].to_pylist() == [words[5 + int(r)] for r in expected_rows]
    assert np.array_equal(native[1], values[expected_rows])
    with pytest.raises(IndexError):
        take_blocks(column, np.array([n - 1]), np.array([2]))
    monkeypatch.setattr(native_module, "_lib", False)
    assert take_blocks(column, starts, lengths).to_pylist() == native[0].to_pylist()
    assert np.array_equal(take_array_blocks(values, starts, lengths), native[1])
    for bad_start, bad_length in ((n - 1, 2), (-1, 1), (0, -1)):  # the same blocks refused by both paths
        with pytest.raises(IndexError):
            take_blocks(column, np.array([bad_start]), np.array([bad_length]))
        with pytest.raises(IndexError):
            take_array_blocks(values, np.array([bad_start]), np.array([bad_length]))


@pytest.mark.parametrize("seed", range(8))
def test_tie_ranks_of_a_few_rows_equal_the_moves_of_every_group(seed, monkeypatch):
    """`Run.ranks` without the tie rule's moves (only the asked rows' groups: counted, or sorted when
    asked for more than 16 times) against the ranks from every group's moves: integer scores (large
    groups), -0.0 beside 0.0, doc ids in several chunks, rows asked in no order and more than once."""
    rng = np.random.default_rng(seed)
    n_queries = 1 if seed in (2, 5) else int(rng.integers(1, 30))  # one query: a single part
    qids, docs, scores = [], [], []
    for q in range(n_queries):
        depth = int(rng.integers(1, [40, 300][seed % 2]))
        qids += [f"q{q}"] * depth
        docs += [f"d{x}" for x in rng.choice(100_000, size=depth, replace=False)]
        values = rng.integers(0, [3, 40, 1, 5][seed % 4], size=depth).astype(np.float64)  # 1: one group a query
        values[rng.random(depth) < 0.05] = -0.0
        scores += values.tolist()
    chunked = pa.chunked_array([pa.array(docs[i : i + 97]) for i in range(0, len(docs), 97)])
    rows = rng.choice(len(docs), size=int(rng.integers(1, len(docs) + 1)), replace=True)  # repeats too
    monkeypatch.setattr(scan_module, "WORKERS", 1 + seed % 3)  # parts cut at query changes only

    def ranks(known_moves: bool) -> np.ndarray:
        run = Run(pa.array(qids), chunked, np.array(scores), duplicates="error")
        if known_moves:
            run._moves("trec")  # the path through every group's moves
        picked = rows % run.num_rows
        codes = np.searchsorted(run.offsets, picked, side="right") - 1
        return run.ranks(picked, codes, "trec")

    assert np.array_equal(ranks(False), ranks(True))

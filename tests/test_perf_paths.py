"""The fast paths of `rankgate eval`, each checked against a plain computation of the same thing.

Sparse blocks (judged rows only) against dense blocks, the hash-filtered join against the
unfiltered one and the reference implementations, `Run.ranks` against `ranking_order`,
chunk-wise takes against Arrow's, query-aligned slices against one pass, and the hash
values that query partitions depend on.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

import rankgate
import rankgate.core.columns as columns_module
import rankgate.core.native as native_module
import rankgate.core.run as run_module
import rankgate.core.run_scan as scan_module
import rankgate.evaluation.join as join_module
from rankgate.core.columns import group_offsets, intern_ordered, take_rows
from rankgate.core.hashing import hash_filter_rows, high_words, string_hashes
from rankgate.core.parallel import parallel_map
from rankgate.core.qrels import Qrels
from rankgate.core.run import Run
from rankgate.errors import InputError
from rankgate.measures.block import RankedBlock, restrict_to_judged
from rankgate.measures.parse import parse_measure

MEASURES = [
    "P@1", "P@7", "P(rel=2)@5", "R@3", "R", "nDCG", "nDCG@5", "nDCG(gain=exp)@10", "RR", "RR@3",
    "AP", "AP@4", "AP(rel=2)@10", "Rprec", "Success@2", "Judged@5", "Judged@30", "Bpref",
    "Bpref(rel=2)", "NumRel", "NumRet", "NumRet@5", "NumRelRet", "NumRelRet@3", "RBP",
    "RBP(p=0.5)@5", "ERR@10", "ERR", "ERR(max_grade=4)@5",
]  # fmt: skip


def trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then doc id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


# -- sparse blocks ----------------------------------------------------------------------------
def _dense_and_sparse(seed: int) -> tuple[RankedBlock, RankedBlock]:
    """The same rankings as a dense block (every row) and a sparse one (judged rows only)."""
    rng = np.random.default_rng(seed)
    n = 12
    rows: list[tuple[int, int, bool]] = []  # (query, grade, judged), in rank order
    qrels: list[tuple[int, int]] = []
    for q in range(n):
        depth = int(rng.integers(0, 40))
        for _ in range(depth):
            judged = bool(rng.random() < 0.3)
            rows.append((q, int(rng.choice([-1, 0, 1, 2, 3])) if judged else 0, judged))
        judged_grades = [g for qq, g, j in rows if qq == q and j]
        extra = [int(g) for g in rng.choice([-1, 0, 1, 2, 3], size=int(rng.integers(0, 4)))]  # judged, not retrieved
        qrels.extend((q, g) for g in judged_grades + extra)
    query = np.array([r[0] for r in rows], dtype=np.int64)
    grade = np.array([r[1] for r in rows], dtype=np.int64)
    judged = np.array([r[2] for r in rows], dtype=bool)
    qrel_query = np.array([q for q, _ in qrels], dtype=np.int64)
    qrel_grade = np.array([g for _, g in qrels], dtype=np.int64)
    dense = RankedBlock(n, query, grade, judged, qrel_query, qrel_grade, max_grade=3)
    keep = judged
    sparse = RankedBlock(
        n,
        query[keep],
        grade[keep],
        judged[keep],
        qrel_query,
        qrel_grade,
        max_grade=3,
        rank=dense.rank[keep],
        depth=np.bincount(query, minlength=n),
    )
    return dense, sparse


@pytest.mark.parametrize("seed", range(20))
def test_sparse_blocks_give_the_dense_values_bit_for_bit(seed):
    dense, sparse = _dense_and_sparse(seed)
    assert len(sparse.rank) < len(dense.rank) or len(dense.rank) == 0
    for name in MEASURES:
        m = parse_measure(name).with_defaults(rel=1)
        a = m.spec.kernel(dense.head(m.cutoff), m)
        b = m.spec.kernel(sparse.head(m.cutoff), m)
        assert a.tobytes() == b.tobytes(), name
        a = m.spec.kernel(restrict_to_judged(dense).head(m.cutoff), m)
        b = m.spec.kernel(restrict_to_judged(sparse).head(m.cutoff), m)
        assert a.tobytes() == b.tobytes(), f"{name} (judged only)"


def test_head_keeps_true_ranks_and_cuts_depth():
    _, sparse = _dense_and_sparse(3)
    top = sparse.head(5)
    assert (top.rank < 5).all()
    assert (top.depth == np.minimum(sparse.depth, 5)).all()
    assert set(top.rank.tolist()) <= set(sparse.rank.tolist())


# -- the join: hash filter against no filter and against the references ---------------------------
def _big_collection(seed: int, n_queries: int = 120, depth: int = 150, n_docs: int = 900):
    """A run far larger than its qrels (so the hash filter applies), docs shared by queries."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        qid = f"q{qi:04d}"
        picked = rng.choice(n_docs, size=depth, replace=False)
        scores = rng.integers(0, 30, size=depth) / 4.0  # many ties
        if qi % 17:  # a few queries only in the qrels
            run[qid] = {f"d{d}": float(s) for d, s in zip(picked, scores, strict=True)}
        if qi % 13:  # a few only in the run
            judged = rng.choice(n_docs, size=int(rng.integers(1, 10)), replace=False)
            qrels[qid] = {f"d{d}": int(rng.choice([-1, 0, 1, 2, 3])) for d in judged}
    return qrels, run


def _constant_hashes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.full(len(column), 0x0123456789ABCDEF, dtype=np.uint64)


@pytest.mark.parametrize("seed", range(4))
def test_filtered_join_equals_unfiltered_and_reference(seed, monkeypatch):
    qrels_map, run_map = _big_collection(seed)
    qrels = Qrels.from_dict(qrels_map)
    run = Run.from_dict(run_map)
    n_pairs = sum(len(d) for d in qrels_map.values())
    assert run.candidate_rows(pa.array(["q0001"] * n_pairs), pa.array(["d1"] * n_pairs)) is not None  # filter on
    filtered = rankgate.evaluate(qrels, run, MEASURES)

    unfiltered = Run.from_dict(run_map)
    unfiltered._doc_hash_high = None  # no hashes: every row is looked up
    assert unfiltered.candidate_rows(pa.array(["q1"]), pa.array(["d1"])) is None
    with monkeypatch.context() as patch:  # every id hashes alike: every check must be exact
        patch.setattr(run_module, "string_hashes", _constant_hashes)
        patch.setattr(scan_module, "string_hashes", _constant_hashes)
        patch.setattr(columns_module, "string_hashes", _constant_hashes)
        colliding = Run.from_dict(run_map)
        colliding_result = rankgate.evaluate(Qrels.from_dict(qrels_map), colliding, MEASURES)
    assert colliding.self_matches == run.self_matches
    for res in (rankgate.evaluate(qrels, unfiltered, MEASURES), colliding_result):
        assert res.query_ids == filtered.query_ids
        assert res.values.tobytes() == filtered.values.tobytes()

    max_grade = max(g for d in qrels_map.values() for g in d.values())
    for qid, values in filtered.per_query.items():
        ranking = trec_order(run_map.get(qid, {}))
        for m in filtered.measures:
            expected = m.spec.reference(ranking, qrels_map[qid], m, max_grade)
            assert values[str(m)] == pytest.approx(expected, abs=1e-12), (qid, str(m))


def _length_hashes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.array([len(x) for x in column.to_pylist()], dtype=np.uint64)


def _doc_blind_hashes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Real hashes for query ids, one hash for every doc id."""
    values = column.to_pylist()
    if values and str(values[0]).startswith("q"):
        return string_hashes(column)
    return np.full(len(values), 7, dtype=np.uint64)


@pytest.fixture
def numpy_join(monkeypatch):
    """The numpy join: the native kernels switched off."""
    monkeypatch.setattr(native_module, "_lib", False)


@pytest.mark.usefixtures("numpy_join")
@pytest.mark.parametrize("hashes", [_length_hashes, _doc_blind_hashes])
def test_hash_join_falls_back_when_hashes_collide(hashes, monkeypatch):
    qrels_map, run_map = _big_collection(7)
    one_each = {q: dict(list(d.items())[:1]) for q, d in qrels_map.items()}  # one judgment per query
    for judgments in (qrels_map, one_each):
        qrels, run = Qrels.from_dict(judgments), Run.from_dict(run_map)
        expected = rankgate.evaluate(qrels, run, MEASURES)
        exact_calls = []
        real_exact = join_module._join_exact

        def counted(*args, _real=real_exact, _calls=exact_calls):
            _calls.append(1)
            return _real(*args)

        with monkeypatch.context() as patch:
            patch.setattr(join_module, "string_hashes", hashes)
            patch.setattr(join_module, "_join_exact", counted)
            got = rankgate.evaluate(qrels, run, MEASURES)
        assert exact_calls == [1]  # the hash join saw the collision and handed over
        assert got.values.tobytes() == expected.values.tobytes()


@pytest.mark.usefixtures("numpy_join")
def test_hash_join_is_used_when_hashes_do_not_collide(monkeypatch):
    qrels_map, run_map = _big_collection(8)

    def refuse(*args):
        raise AssertionError("the exact join should not be needed")

    monkeypatch.setattr(join_module, "_join_exact", refuse)
    res = rankgate.evaluate(qrels_map, run_map, ["AP"])
    assert res.queries["evaluated"] == len(qrels_map)


@pytest.mark.usefixtures("numpy_join")
@pytest.mark.parametrize("hashes", [None, _length_hashes])
def test_hash_join_over_every_row_in_slices_equals_the_exact_join(hashes, monkeypatch):
    """Judged pairs too many for the filter (BEIR-like): the hash join goes over every row, slice by
    slice (slices cut inside queries here), and hands over to the exact join on a collision."""
    qrels_map, run_map = _big_collection(9)
    qrels, run = Qrels.from_dict(qrels_map), Run.from_dict(run_map)
    expected_rows, expected_qrels = join_module._join_exact(qrels, run, None)
    assert len(expected_rows) > 50
    run._doc_hash_high = None  # candidate_rows: None, every row
    exact_calls = []
    real_exact = join_module._join_exact

    def counted(*args):
        exact_calls.append(1)
        return real_exact(*args)

    monkeypatch.setattr(join_module, "_HASH_SLICE", 997)
    monkeypatch.setattr(join_module, "_join_exact", counted)
    if hashes is not None:
        monkeypatch.setattr(join_module, "string_hashes", hashes)
    rows, qrel_rows = join_module.join(qrels, run)
    assert exact_calls == ([] if hashes is None else [1])
    assert rows.tolist() == expected_rows.tolist() and qrel_rows.tolist() == expected_qrels.tolist()


def _rechunked(column: pa.ChunkedArray, sizes: list[int]) -> pa.ChunkedArray:
    """The same strings in chunks of ``sizes`` rows, each a slice of a larger array (offset != 0)."""
    values = column.to_pylist()
    chunks, at = [], 0
    for size in sizes:
        part = values[at : at + size]
        at += size
        chunks.append(pa.array(["pad-a", "pad-b", *part, "pad-c"], type=pa.string()).slice(2, len(part)))
    chunks.append(pa.array(values[at:], type=pa.string()))
    return pa.chunked_array(chunks, type=pa.string())


@pytest.fixture
def native_join():
    if native_module.library() is None:
        pytest.skip("the native kernels are not built here")


@pytest.mark.usefixtures("native_join")
@pytest.mark.parametrize("seed", range(4))
def test_the_native_join_equals_the_exact_join(seed, monkeypatch):
    """Random collections (queries only in the run or only in the qrels, negative grades), doc ids in
    many sliced chunks, the kernel called on a few queries at a time, and every hash made equal:
    the same rows as the exact join on interned ids, in the same order."""
    qrels_map, run_map = _big_collection(seed + 20)
    qrels, run = Qrels.from_dict(qrels_map), Run.from_dict(run_map)
    expected_rows, expected_qrels = join_module._join_exact(qrels, run, None)
    assert len(expected_rows) > 50
    called = []
    real = join_module._join_native

    def native_only(q, r, *given):
        found = real(q, r, *given)
        assert found is not None
        called.append(1)
        return found

    monkeypatch.setattr(join_module, "_join_native", native_only)
    monkeypatch.setattr(join_module, "_NATIVE_SLICE_ROWS", 301)  # a few queries per call
    rows, qrel_rows = join_module.join(qrels, run)
    assert rows.tolist() == expected_rows.tolist() and qrel_rows.tolist() == expected_qrels.tolist()

    run.doc_ids = _rechunked(run.doc_ids, [1, 0, 2999, 57, 4000])
    qrels.doc_ids = _rechunked(qrels.doc_ids, [3, 100, 1])
    run._doc_hash_high = np.zeros(run.num_rows, dtype=np.uint32)  # every doc id "collides"
    qrels.doc_hash_high = np.zeros(qrels.num_rows, dtype=np.uint32)
    rows, qrel_rows = join_module.join(qrels, run)
    assert rows.tolist() == expected_rows.tolist() and qrel_rows.tolist() == expected_qrels.tolist()
    assert called == [1, 1]


@pytest.mark.usefixtures("native_join")
def test_the_native_join_gives_the_same_results_as_the_numpy_join(monkeypatch):
    qrels_map, run_map = _big_collection(31)
    native = rankgate.evaluate(qrels_map, run_map, MEASURES)
    monkeypatch.setattr(native_module, "_lib", False)
    plain = rankgate.evaluate(qrels_map, run_map, MEASURES)
    assert native.query_ids == plain.query_ids and native.values.tobytes() == plain.values.tobytes()


def test_the_native_join_leaves_columns_it_cannot_read_to_numpy():
    run = Run.from_dict({"q1": {"d1": 1.0, "d2": 0.5}})
    qrels = Qrels.from_dict({"q1": {"d2": 1}})
    run.doc_ids = pa.chunked_array([pa.array(["d1", "d2"], type=pa.large_string())])
    assert join_module._join_native(qrels, run) is None
    assert native_module.string_chunks(pa.chunked_array([pa.array(["a", None])])) is None


def test_evaluate_does_not_build_the_ranking_permutation():
    qrels_map, run_map = _big_collection(0, n_queries=20)
    run = Run.from_dict(run_map)
    rankgate.evaluate(qrels_map, run, ["AP", "nDCG@10"])
    assert run._tie_orders == {}  # only the rows that ties move were computed


# -- ranks of stored rows ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", ["trec", "input"])
def test_ranks_equal_positions_in_ranking_order(seed, ties):
    rng = np.random.default_rng(seed)
    n = 3000
    qids = rng.integers(0, 40, size=n)
    run = Run(
        [f"q{q}" for q in qids],
        [f"d{i}" for i in rng.permutation(n)],
        rng.integers(0, 4 if seed % 2 else 400, size=n) / 2.0,  # coarse scores: big tie groups
    )
    order = run.ranking_order(ties)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    expected = position - run.offsets[run.query_codes]
    rows = np.sort(rng.choice(n, size=500, replace=False))
    assert (run.ranks(rows, run.query_codes[rows], ties) == expected[rows]).all()
    every = np.arange(n)
    assert (run.ranks(every, run.query_codes, ties) == expected).all()


# -- columns -------------------------------------------------------------------------------------
def _chunked() -> pa.ChunkedArray:
    return pa.chunked_array(
        [pa.array(["a", "bb", "c"]), pa.array([], pa.string()), pa.array(["dd", "e"]), pa.array(["f"])]
    )


@pytest.mark.parametrize("rows", [[], [0], [5], [0, 1, 2, 3, 4, 5], [4, 4, 0], [5, 3, 1, 0], [2, 2, 2], [3, 0, 5, 1]])
def test_take_rows_matches_arrow_take(rows):
    column = _chunked()
    got = take_rows(column, np.array(rows, dtype=np.int64))
    assert isinstance(got, pa.ChunkedArray)
    assert got.to_pylist() == pa.concat_arrays(column.chunks).take(pa.array(rows, pa.int64())).to_pylist()


def test_take_rows_rejects_rows_out_of_range():
    with pytest.raises(IndexError):
        take_rows(_chunked(), np.array([1, 6]))


def test_string_hashes_are_stable():
    """Query partitions (out of core, Ray) are chosen by these hashes: they must not change."""
    values = pa.array(["q1", "doc-1", "D1234567", "a-longer-document-id-0001", ""])
    got = [hex(h) for h in string_hashes(values).tolist()]
    assert got[:4] == ["0x3c3f6c8c69456d53", "0x67776d51f61ee038", "0x9d8d54fb6cf37d07", "0x3d3794edb7bbd41e"]
    # the same string hashes alike wherever it sits: any chunk, any offset, any neighbours
    chunked = pa.chunked_array([pa.array(["x" * 30, "doc-1"]), pa.array(["D1234567"]).slice(0, 1)])
    assert string_hashes(chunked)[1:].tolist() == string_hashes(values)[1:3].tolist()


def test_intern_ordered_maps_every_chunk_dictionary():
    chunks = [
        pa.DictionaryArray.from_arrays(pa.array([1, 1, 0], pa.int32()), pa.array(["q9", "q10", "unused"])),
        pa.DictionaryArray.from_arrays(pa.array([0, 2, 2], pa.int32()), pa.array(["q2", "q9", "q10"])),
    ]
    column = pa.chunked_array(chunks)
    interned = intern_ordered(column)
    assert interned.values.to_pylist() == ["q10", "q2", "q9"]  # byte order, unused entry dropped
    decoded = [interned.values[int(c)].as_py() for c in interned.codes]
    assert decoded == column.to_pylist()
    loose = intern_ordered(column, check_used=False)
    assert [loose.values[int(c)].as_py() for c in loose.codes] == column.to_pylist()


def test_run_drops_query_ids_that_no_row_uses():
    qids = pa.DictionaryArray.from_arrays(pa.array([2, 0, 2], pa.int32()), pa.array(["q1", "", "q3", "q0"]))
    run = Run(qids, ["d1", "d2", "d3"], [1.0, 2.0, 3.0])
    assert run.query_ids.to_pylist() == ["q1", "q3"]
    assert run.offsets.tolist() == [0, 1, 3]
    assert run.to_dict() == {"q1": {"d2": 2.0}, "q3": {"d3": 3.0, "d1": 1.0}}


def test_group_offsets_match_counts():
    rng = np.random.default_rng(0)
    for dtype in (np.int32, np.int64):
        codes = np.sort(rng.integers(0, 50, size=1000)).astype(dtype)
        expected = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=60))])
        assert group_offsets(codes, 60).tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("rows", "wanted", "passed"),
    [(200_000, 3000, 0.1), (6_000_000, 1_500_000, 0.5)],  # the second needs the largest tables (2^26)
)
def test_hash_filter_rows_returns_every_wanted_row(rows: int, wanted: int, passed: float) -> None:
    rng = np.random.default_rng(1)
    high = rng.integers(0, 2**32, size=rows, dtype=np.uint64).astype(np.uint32)
    group = np.sort(rng.integers(0, 500, size=len(high)))
    group_high = rng.integers(0, 2**32, size=500, dtype=np.uint64).astype(np.uint32)
    wanted_rows = np.sort(rng.choice(len(high), size=wanted, replace=False))
    by_key = hash_filter_rows(high, high[wanted_rows])
    assert np.isin(wanted_rows, by_key).all()
    assert len(by_key) < len(high) * passed  # a filter, not everything
    by_pair = hash_filter_rows(
        high, high[wanted_rows], group=group, group_high=group_high, wanted_group_high=group_high[group[wanted_rows]]
    )
    assert np.isin(wanted_rows, by_pair).all()
    assert len(by_pair) <= len(by_key)
    assert (np.diff(by_pair) > 0).all()


def test_high_words_are_the_top_half():
    h = np.array([0x0123456789ABCDEF, 2**64 - 1, 0], dtype=np.uint64)
    assert high_words(h).tolist() == [0x01234567, 0xFFFFFFFF, 0]


def test_parallel_map_keeps_order_and_raises():
    assert parallel_map(lambda x: x * x, range(50)) == [x * x for x in range(50)]

    def fail(x: int) -> int:
        if x == 7:
            raise ValueError("seven")
        return x

    with pytest.raises(ValueError, match="seven"):
        parallel_map(fail, range(20))


# -- query-aligned slices -------------------------------------------------------------------------
@pytest.fixture
def small_slices(monkeypatch):
    """Slices of 8 rows, so that small inputs take the multi-slice path."""
    monkeypatch.setattr(scan_module, "SLICE_ROWS", 8)


def _grouped_lines(n_queries: int = 9, depth: int = 5) -> list[str]:
    return [f"q{q} Q0 d{q}-{i} {i + 1} {10.0 - i} t" for q in range(n_queries) for i in range(depth)]


def test_slices_hold_whole_queries(small_slices):
    codes = np.repeat(np.arange(9), 5)
    bounds = scan_module.query_aligned_slices(codes, 9)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(codes)
    assert all(a < b for a, b in bounds) and all(b == c for (_, b), (c, _) in itertools.pairwise(bounds))
    starts = {0, *np.flatnonzero(np.diff(codes)) + 1}
    assert all(a in starts for a, _ in bounds)
    shuffled = np.array([0, 1, 0, 1] * 10)
    assert scan_module.query_aligned_slices(shuffled, 2) == [(0, 40)]


def test_duplicate_in_a_later_slice_names_its_lines(small_slices, tmp_path):
    lines = _grouped_lines()
    lines.insert(33, "q6 Q0 d6-1 9 0.5 t")  # repeats line 32 (q6, d6-1)
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        rankgate.read_run(str(path))
    assert f"{path}:34" in str(err.value) and f"{path}:32" in str(err.value)
    assert "'d6-1'" in str(err.value) and "'q6'" in str(err.value)


@pytest.mark.parametrize("policy", ["first", "max"])
def test_slices_do_not_change_duplicates_or_self_matches(policy, monkeypatch):
    lines = _grouped_lines()
    lines += ["q3 Q0 d3-2 9 20.0 t", "q8 Q0 q8 9 1.0 t", "q1 Q0 q1 9 1.0 t"]  # a duplicate and two self-matches
    rows = [line.split() for line in lines]
    qids, docs, scores = [r[0] for r in rows], [r[2] for r in rows], [float(r[4]) for r in rows]
    whole = Run(qids, docs, scores, duplicates=policy)
    monkeypatch.setattr(scan_module, "SLICE_ROWS", 8)
    sliced = Run(qids, docs, scores, duplicates=policy)
    assert sliced.to_dict() == whole.to_dict()
    assert sliced.self_matches == whole.self_matches == ["q1", "q8"]
    assert sliced._doc_hash_high.tolist() == whole._doc_hash_high.tolist()


def test_unordered_run_evaluates_like_the_ordered_one(small_slices):
    qrels, run = _big_collection(5, n_queries=15, depth=12, n_docs=60)
    items = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    shuffled = [items[i] for i in np.random.default_rng(0).permutation(len(items))]
    a = rankgate.evaluate(qrels, Run([x[0] for x in items], [x[1] for x in items], [x[2] for x in items]), MEASURES)
    b = rankgate.evaluate(
        qrels, Run([x[0] for x in shuffled], [x[1] for x in shuffled], [x[2] for x in shuffled]), MEASURES
    )
    assert a.values.tobytes() == b.values.tobytes()


@pytest.mark.parametrize("slice_rows", [7, 64, 1 << 18])
def test_tie_rule_in_query_aligned_slices_equals_trec_order(slice_rows, monkeypatch):
    """The tie rule works on slices cut at query starts (one query may span several slice
    lengths): the evaluation order is trec_eval's, whatever the slice size."""
    rng = np.random.default_rng(5)
    run_map = {
        f"q{q}": {f"d{rng.integers(0, 10 ** int(rng.integers(1, 4)))}x{i}": float(rng.integers(0, 4)) for i in range(n)}
        for q, n in enumerate([1, 40, 3, 150, 9, 2, 70])
    }
    monkeypatch.setattr(scan_module, "SLICE_ROWS", slice_rows)
    run = Run.from_dict(run_map)
    order = run.ranking_order("trec")
    docs = take_rows(run.doc_ids, order).to_pylist()
    for i, qid in enumerate(run.query_ids.to_pylist()):
        lo, hi = int(run.offsets[i]), int(run.offsets[i + 1])
        assert docs[lo:hi] == trec_order(run_map[qid]), qid


@pytest.mark.parametrize("slice_rows", [5, 64, 1 << 18])
def test_grouped_score_order_is_the_stable_sort_by_query_and_score_descending(slice_rows, monkeypatch):
    monkeypatch.setattr(scan_module, "SLICE_ROWS", slice_rows)
    rng = np.random.default_rng(11)
    codes = rng.integers(0, 37, 3000).astype(np.int32)
    codes[:400] = 3  # one query longer than a slice
    scores = rng.integers(0, 5, 3000) / 2.0  # many ties: file order must decide among them
    expected = np.lexsort((np.arange(3000), -scores, codes))
    assert scan_module.grouped_score_order(codes, scores).tolist() == expected.tolist()
    assert scan_module.grouped_score_order(np.array([70000, 1], dtype=np.int32), np.zeros(2)) is None

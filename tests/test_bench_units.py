"""Unit tests of the bench parts that need no model: top-k, fusion, chunking, matrix, datasets, cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankgate.bench.chunking import ChunkSpec, aggregate_hits, chunk_corpus, chunk_text
from rankgate.bench.datasets import load_dataset
from rankgate.bench.embedcache import CachedEncoder, EmbeddingCache
from rankgate.bench.encoders import HashingEncoder, resolve_model
from rankgate.bench.harness import neighbor_recall, run_benchmark
from rankgate.bench.indexes import IndexSpec, resolve_params
from rankgate.bench.matrix import load_plan, parse_index_spec, parse_retriever_specs, plan_from_dict
from rankgate.bench.retrievers.base import Hits
from rankgate.bench.retrievers.fusion import fuse
from rankgate.bench.retrievers.rerank import RerankRetriever
from rankgate.bench.topk import select_topk, topk_inner_product
from rankgate.errors import BackendError, ConfigError, InputError
from tests.bench_support import CountingEncoder, WordOverlapScorer, brute_force, factory_of, is_top_k, write_beir


# -- exact top-k ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "k"), [(1, 1), (5, 10), (50, 50), (300, 1), (300, 10), (2000, 100)])
def test_exact_topk_equals_brute_force(n: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    docs = rng.standard_normal((n, 16)).astype(np.float32)
    queries = rng.standard_normal((37, 16)).astype(np.float32)
    scores, ids = topk_inner_product(queries, docs, k)
    ref_scores, _ = brute_force(queries, docs, k)
    full = queries.astype(np.float64) @ docs.astype(np.float64).T
    assert is_top_k(ids[:, : min(k, n)], full)
    np.testing.assert_allclose(scores[:, : min(k, n)], ref_scores, rtol=1e-5, atol=1e-5)
    assert (ids[:, n:] == -1).all() and np.isneginf(scores[:, n:]).all()  # padding beyond the corpus


def test_exact_topk_is_the_same_for_every_block_size() -> None:
    rng = np.random.default_rng(0)
    docs = rng.integers(-3, 4, (500, 8)).astype(np.float32)  # integer scores: exact arithmetic, many ties
    queries = rng.integers(-3, 4, (64, 8)).astype(np.float32)
    want_scores, want_ids = brute_force(queries, docs, 20)
    for block in (1, 4 * 64, 4 * 64 * 3, 4 * 500 * 3, 256 << 20):  # tiles of 1 and 64 columns, whole rows
        scores, ids = topk_inner_product(queries, docs, 20, block_bytes=block)
        assert ids.tolist() == want_ids.tolist()  # ties by id ascending, exactly
        assert scores.tolist() == want_scores.tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 400),
    st.integers(1, 30),
    st.integers(0, 2**32 - 1),
)
def test_select_topk_matches_a_full_sort(rows: int, n: int, k: int, seed: int) -> None:
    S = np.random.default_rng(seed).integers(-5, 6, (rows, n)).astype(np.float32)
    values, ids = select_topk(S, k)
    for r in range(rows):
        order = np.lexsort((np.arange(n), -S[r]))[: min(k, n)]
        assert ids[r, : len(order)].tolist() == order.tolist()
        assert values[r, : len(order)].tolist() == S[r, order].tolist()


def test_neighbor_recall_by_hand() -> None:
    approx = Hits(np.array([[3, 1, 2], [7, 8, -1], [0, 1, 2]]), np.zeros((3, 3)))
    exact = Hits(np.array([[1, 2, 3], [7, 9, 8], [-1, -1, -1]]), np.zeros((3, 3)))
    # query 0: 3/3; query 1: {7, 8} of {7, 9, 8} = 2/3; query 2 has no exact neighbors: left out
    assert neighbor_recall(approx, exact) == pytest.approx((1 + 2 / 3) / 2)


# -- fusion and re-ranking -------------------------------------------------------------------------
def test_rrf_and_weighted_fusion_by_hand() -> None:
    a = Hits(np.array([[5, 1, 2]]), np.array([[9.0, 4.0, 1.0]]))
    b = Hits(np.array([[2, 5, -1]]), np.array([[0.8, 0.2, -np.inf]]))
    rrf = fuse([a, b], 3, method="rrf", weights=[1.0, 2.0], rrf_k=60)
    want = {5: 1 / 61 + 2 / 62, 1: 1 / 62, 2: 1 / 63 + 2 / 61}
    assert rrf.ids.tolist() == [[2, 5, 1]]
    assert rrf.scores[0].tolist() == pytest.approx([want[2], want[5], want[1]])
    weighted = fuse([a, b], 3, method="weighted", weights=[0.5, 0.5])
    # min-max per list: a -> 5: 1, 1: 3/8, 2: 0; b -> 2: 1, 5: 0. Docs 2 and 5 tie: corpus order
    assert weighted.ids.tolist() == [[2, 5, 1]]
    assert weighted.scores[0].tolist() == pytest.approx([0.5, 0.5, 0.1875])


def test_rerank_orders_candidates_by_the_scorer_and_keeps_ties_in_first_stage_order() -> None:
    from rankgate.bench.progress import SILENT

    class Fixed:
        name = "first"
        uses_index = False

        def prepare(self, texts, progress):  # type: ignore[no-untyped-def]
            return None

        def build(self, index, progress):  # type: ignore[no-untyped-def]
            return None

        def encode_queries(self, texts, *, cached=True):  # type: ignore[no-untyped-def]
            return texts

        def search(self, encoded, k):  # type: ignore[no-untyped-def]
            return Hits.from_lists([([0, 1, 2, 3], [4.0, 3.0, 2.0, 1.0])], k)

        def describe(self):  # type: ignore[no-untyped-def]
            return {}

    docs = ["nothing here", "red apple", "apple pie red", "red"]
    scorer = WordOverlapScorer()
    rr = RerankRetriever("rr", Fixed(), scorer, depth=3)
    rr.prepare(docs, SILENT)
    hits = rr.search(rr.encode_queries(["red apple pie"]), 2)
    # candidates 0, 1, 2 (depth 3) score 0, 2, 3; doc 3 is beyond the depth
    assert hits.ids.tolist() == [[2, 1]] and hits.scores.tolist() == [[3.0, 2.0]]
    assert scorer.pairs == 3
    tied = rr.search(rr.encode_queries(["zzz"]), 3)
    assert tied.ids.tolist() == [[0, 1, 2]]


# -- chunking ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "size", "overlap", "want"),
    [
        ("a b c d e f g", 3, 1, ["a b c", "c d e", "e f g"]),
        ("a b c d e f g h", 3, 1, ["a b c", "c d e", "e f g", "g h"]),
        ("a b c d", 4, 2, ["a b c d"]),
        ("a b c d e", 2, 0, ["a b", "c d", "e"]),
        ("", 5, 0, [""]),
    ],
)
def test_chunk_text(text: str, size: int, overlap: int, want: list[str]) -> None:
    assert chunk_text(text, size, overlap) == want


def test_passage_aggregation_max_and_first() -> None:
    passages = chunk_corpus(["A", "B", "C"], ["w " * 5, "w " * 2, "w " * 5], ChunkSpec(size=2, overlap=0))
    assert passages.ids == ["A#0", "A#1", "A#2", "B#0", "C#0", "C#1", "C#2"]
    #             C#1  A#2  B#0  C#0  A#0
    hits = Hits(np.array([[5, 2, 3, 4, 0]]), np.array([[0.9, 0.8, 0.7, 0.5, 0.1]]))
    best = aggregate_hits(hits, passages, 3, "max")
    assert best.ids.tolist() == [[2, 0, 1]] and best.scores.tolist() == [[0.9, 0.8, 0.7]]
    first = aggregate_hits(hits, passages, 3, "first")
    assert first.ids.tolist() == [[1, 2, 0]] and first.scores.tolist() == [[0.7, 0.5, 0.1]]


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"size": 0}, "chunking.size"),
        ({"size": 3, "overlap": 3}, "chunking.overlap"),
        ({"size": 3, "aggregate": "avg"}, "chunking.aggregate"),
    ],
)
def test_chunk_spec_errors(kwargs: dict, key: str) -> None:
    with pytest.raises(ConfigError) as e:
        ChunkSpec(**kwargs)
    assert e.value.key_path == key


# -- the matrix ---------------------------------------------------------------------------------------
MATRIX = """\
dataset: demo
measures: [nDCG@10, recall@100, mrr@10]
chunking: {size: 50, overlap: 10, aggregate: first}
latency: {queries: 7, warmup: 1}
matrix:
  retrievers:
    - bm25
    - {name: mini, type: dense, model: minilm, params: {batch_size: [16, 32]}}
    - {name: e5, type: dense, model: /models/e5, params: {query_prefix: "query: "}}
    - {name: mix, type: hybrid, of: [bm25, e5], params: {fusion: weighted, weights: [0.3, 0.7]}}
  indexes:
    - exact
    - hnsw:M=16|32
    - {type: ivf-pq, params: {nlist: 64, nprobe: [4, 16], m: 48, nbits: 8}}
  k: [10, 100]
"""


@pytest.mark.extra("bench")
def test_matrix_file(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MATRIX)
    plan = load_plan(path)
    assert plan.dataset == "demo" and plan.ks == (10, 100)
    assert plan.measures == ("nDCG@10", "R@100", "RR@10")
    assert plan.chunking == ChunkSpec(50, 10, "first")
    assert (plan.latency.queries, plan.latency.warmup) == (7, 1)
    names = [s.name for s in plan.retrievers]
    assert names == ["bm25", "mini(batch_size=16)", "mini(batch_size=32)", "e5", "mix"]
    mix = plan.retrievers[-1]
    assert mix.of == ("bm25", "e5") and mix.params["weights"] == [0.3, 0.7]
    assert [i.label() for i in plan.indexes] == [
        "exact",
        "hnsw(M=16)",
        "hnsw(M=32)",
        "ivf-pq(nlist=64,nprobe=4,m=48,nbits=8)",
        "ivf-pq(nlist=64,nprobe=16,m=48,nbits=8)",
    ]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("matrix: {retrievers: [bm25], indexes: [{type: annoy}]}", "matrix.indexes[0].type"),
        ("matrix: {retrievers: [bm25], indexes: ['hnsw:M=0']}", "matrix.indexes[0].params.M"),
        ("matrix: {retrievers: [bm25], indexes: [{type: hnsw, params: {nlist: 4}}]}", "matrix.indexes[0].params.nlist"),
        ("matrix: {retrievers: [{type: bm25, params: {k1: -1}}]}", "matrix.retrievers[0].params.k1"),
        ("matrix: {retrievers: [{type: dense, params: {normalise: true}}]}", "matrix.retrievers[0].params.normalise"),
        ("matrix: {retrievers: [bm25, {type: hybrid, of: [bm25, nope]}]}", "matrix.retrievers[1].of"),
        ("matrix: {retrievers: [{type: rerank, of: bm25}]}", "matrix.retrievers[0].model"),
        ("matrix: {retrievers: [bm25, bm25]}", "matrix.retrievers[1]"),
        ("matrix: {retrievers: [bm25], k: [10, 0]}", "matrix.k[1]"),
        ("measures: [nDCG@ten]\nmatrix: {retrievers: [bm25]}", "measures[0]"),
        ("matrix: {retrievers: [bm25]}\nlatency: {queries: -1}", "latency.queries"),
        ("matrix: {retrievers: [bm25]}\nlatency: {threads: 0}", "latency.threads"),
        ("matrix: {retrievers: [bm25]}\nchunking: {overlap: 3}", "chunking.size"),
        ("matrix: {retriever: [bm25]}", "matrix.retriever"),
        ("retrievers: [bm25]", "retrievers"),
    ],
)
@pytest.mark.extra("bench")
def test_matrix_errors_name_the_file_and_key(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_plan(path)
    assert e.value.key_path == where
    assert str(e.value).startswith(f"{path}: {where}: ")


@pytest.mark.extra("bench")
def test_matrix_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("matrix:\n  retrievers: [bm25\n  k: 10\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: line \d+: not valid YAML"):
        load_plan(path)


def test_command_line_specs() -> None:
    specs = parse_retriever_specs(["hybrid:weighted"], rerank="/m/ce", rerank_depth=20)
    by_name = {s.name: s for s in specs}
    assert by_name["hybrid:weighted"].of == ("bm25", "dense")
    assert not by_name["bm25"].report and not by_name["dense"].report  # added only to be fused
    assert by_name["hybrid:weighted>rerank"].of == ("hybrid:weighted",)
    assert by_name["hybrid:weighted>rerank"].params == {"depth": 20}
    assert [s.label() for s in parse_index_spec("ivf-flat:nlist=auto,nprobe=1|4")] == [
        "ivf-flat(nlist=auto,nprobe=1)",
        "ivf-flat(nlist=auto,nprobe=4)",
    ]
    with pytest.raises(ConfigError, match="unknown retriever 'colbert'"):
        parse_retriever_specs(["colbert"])
    with pytest.raises(ConfigError, match="expected NAME=VALUE"):
        parse_index_spec("hnsw:M")


def test_index_parameters_resolve_for_the_corpus() -> None:
    assert resolve_params("ivf-flat", {}, 100_000, 384) == {"nlist": 1264, "nprobe": 8}
    assert resolve_params("ivf-pq", {"nprobe": 32}, 100_000, 384) == {"nlist": 1264, "nprobe": 32, "m": 48, "nbits": 8}
    assert resolve_params("hnsw", {"M": 8}, 10, 4) == {"M": 8, "ef_construction": 200, "ef_search": 64}
    with pytest.raises(ConfigError, match="nlist=300 is more than the 200 vectors") as e:
        resolve_params("ivf-flat", {"nlist": 300}, 200, 8)
    assert e.value.key_path == "index.params.nlist"
    with pytest.raises(ConfigError, match="m=5 must divide the vector dimension 384"):
        resolve_params("ivf-pq", {"m": 5}, 1000, 384)
    with pytest.raises(ConfigError, match="unknown parameter of exact"):
        IndexSpec("exact", {"M": 3})


# -- datasets ---------------------------------------------------------------------------------------
def test_demo_dataset() -> None:
    ds = load_dataset("demo")
    assert (len(ds.doc_ids), len(ds.query_ids)) == (200, 63)
    assert ds.query_ids == sorted(set(ds.qrels.query_ids.to_pylist()), key=ds.query_ids.index)


def test_beir_layout(tmp_path: Path) -> None:
    write_beir(
        tmp_path,
        {"d1": "red apple", "d2": "green pear"},
        {"q1": "apple", "q2": "pear", "q3": "x"},
        {"q1": {"d1": 1}, "q2": {"d2": 2, "d9": 1}},
    )
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq2\td1\t1\n")
    ds = load_dataset(tmp_path)
    assert ds.layout == "beir" and ds.doc_ids == ["d1", "d2"] and ds.query_ids == ["q1", "q2"]
    assert ds.query_texts == ["apple", "pear"]
    assert any("1 judged documents are not in the corpus (e.g. 'd9')" in w for w in ds.warnings)
    assert load_dataset(tmp_path, split="dev").query_ids == ["q2"]
    with pytest.raises(InputError, match=r"no qrels for split 'train'; splits here: dev, test"):
        load_dataset(tmp_path, split="train")


def test_simple_json_layout(tmp_path: Path) -> None:
    (tmp_path / "corpus.json").write_text(json.dumps({"a": "red apple", "b": {"title": "Pear", "text": "green"}}))
    (tmp_path / "queries.json").write_text(json.dumps(["apple", "green pear"]))
    (tmp_path / "ground_truth.json").write_text(json.dumps({"0": ["a"], "1": {"b": 2, "a": 0}}))
    ds = load_dataset(tmp_path)
    assert ds.layout == "json" and ds.doc_texts == ["red apple", "Pear green"]
    assert ds.query_ids == ["0", "1"] and ds.query_texts == ["apple", "green pear"]
    assert ds.qrels.num_rows == 3


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"corpus.jsonl": '{"_id": "d1", "text": "a"}\n{"_id": "d2" "text": "b"}\n'},
            r"corpus\.jsonl:2: not a JSON object \(Expecting ',' delimiter\)",
        ),
        ({"corpus.jsonl": '{"_id": "d1", "text": "a"}\n\n{"text": "b"}\n'}, r"corpus\.jsonl:3: document has no '_id'"),
        (
            {"corpus.jsonl": '{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n'},
            r"corpus\.jsonl:2: duplicate document id 'd1' \(first on line 1\)",
        ),
        ({"corpus.jsonl": '{"_id": "d1", "text": 7}\n'}, r"corpus\.jsonl:1: document 'd1': 'text' must be a string"),
        ({"queries.jsonl": '{"_id": "q1"}\n'}, r"queries\.jsonl:1: query 'q1' has no 'text' field"),
        ({"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\n"}, r"test\.tsv:2"),
        (
            {"qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\thigh\n"},
            r"test\.tsv:2: grade 'high' is not a number",
        ),
        ({"queries.jsonl": '{"_id": "zz", "text": "a"}\n'}, r"no judged query has text in the queries file"),
        ({"corpus.jsonl": b"\xff\xfe"}, r"corpus\.jsonl:1: not UTF-8 text"),
    ],
)
def test_malformed_beir_files_name_file_and_line(tmp_path: Path, files: dict, message: str) -> None:
    write_beir(tmp_path, {"d1": "a"}, {"q1": "a"}, {"q1": {"d1": 1}})
    for name, text in files.items():
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError, match=message):
        load_dataset(tmp_path)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("ground_truth.json", '{"0": ["a"],\n "1": [1,}', r"ground_truth\.json:2: invalid JSON"),
        ("ground_truth.json", '{"0": 5}', r"ground_truth\.json: query '0': expected \{doc_id: grade\}"),
        ("corpus.json", '["a", {"id": "x"}]', r"corpus\.json: item 1: document 'x' has no 'text' field"),
        ("corpus.json", '{"a": 3}', r"corpus\.json: document 'a': expected a text or an object"),
        ("queries.json", '"apple"', r"queries\.json: expected a list of query texts or objects"),
        ("queries.json", '{\n"0": "a",\n"0": }', r"queries\.json:3: not valid JSON"),
    ],
)
def test_malformed_json_layout_files(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / "corpus.json").write_text('["apple", "pear"]')
    (tmp_path / "queries.json").write_text('["apple"]')
    (tmp_path / "ground_truth.json").write_text('{"0": ["0"]}')
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=message):
        load_dataset(tmp_path)


def test_dataset_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="dataset folder not found"):
        load_dataset(tmp_path / "nope")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InputError, match="a dataset is a folder"):
        load_dataset(tmp_path / "file.txt")
    with pytest.raises(InputError, match=r"no corpus\.jsonl \(BEIR layout\) or corpus\.json"):
        load_dataset(tmp_path)


def test_missing_model_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="model path does not exist"):
        resolve_model(str(tmp_path / "no-such-model"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(BackendError, match="not a model folder"):
        resolve_model(str(tmp_path / "empty"))


# -- the embedding cache -----------------------------------------------------------------------------
def test_cache_keys_on_model_text_and_normalization(tmp_path: Path) -> None:
    counting = CountingEncoder(HashingEncoder(dim=32))
    cached = CachedEncoder(counting, EmbeddingCache(tmp_path))
    texts = ["red apple", "green pear", "red apple"]
    first = cached.encode(texts, normalize=True)
    assert counting.texts == 2  # the repeated text is encoded once
    again = CachedEncoder(counting, EmbeddingCache(tmp_path)).encode(texts, normalize=True)  # a new process, same file
    assert counting.texts == 2 and np.array_equal(first, again)
    np.testing.assert_array_equal(first, HashingEncoder(dim=32).encode(texts, normalize=True))
    raw = cached.encode(texts, normalize=False)
    assert counting.texts == 4 and not np.allclose(raw, first)  # normalization is part of the key
    other = CountingEncoder(HashingEncoder(dim=16))
    CachedEncoder(other, EmbeddingCache(tmp_path)).encode(texts, normalize=True)
    assert other.texts == 2  # another model: its own entries
    assert EmbeddingCache(tmp_path).count() == 6


@pytest.mark.extra("bench")
def test_rerunning_a_benchmark_encodes_nothing(tmp_path: Path) -> None:
    counting = CountingEncoder(HashingEncoder(dim=64))
    plan = plan_from_dict(
        {
            "latency": {"queries": 0},
            "matrix": {"retrievers": ["bm25", "dense", "hybrid"], "indexes": ["exact", "hnsw"], "k": [10]},
        }
    )
    first = run_benchmark("demo", plan, cache=EmbeddingCache(tmp_path), encoder_factory=factory_of(counting))
    assert counting.calls > 0 and counting.texts == 199 + 63  # the demo corpus holds one text twice
    counting.reset()
    second = run_benchmark("demo", plan, cache=EmbeddingCache(tmp_path), encoder_factory=factory_of(counting))
    assert counting.calls == 0
    assert second.rows() and [r.metrics for r in second.results] == [r.metrics for r in first.results]
    enc = second["dense/exact/k=10"].encoding
    assert enc is not None and (enc["encoded"], enc["cached"]) == (0, 199)
    # with the latency probe on, only the probe encodes: one query at a time, warm-up included
    probe = plan_from_dict({"latency": {"queries": 4, "warmup": 2}, "matrix": {"retrievers": ["dense"], "k": [10]}})
    counting.reset()
    run_benchmark("demo", probe, cache=EmbeddingCache(tmp_path), encoder_factory=factory_of(counting))
    assert (counting.calls, counting.texts) == (6, 6)


@pytest.mark.parametrize(("module", "package"), [("faiss", "faiss-cpu"), ("bm25s", "bm25s"), ("yaml", "PyYAML")])
def test_a_missing_extra_names_what_to_install(monkeypatch: pytest.MonkeyPatch, module: str, package: str) -> None:
    import sys

    from rankgate.bench._deps import require

    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(BackendError, match=rf"{package} is not installed .*pip install 'rankgate\[bench\]'"):
        require(module)


@pytest.mark.extra("bench")
def test_the_shipped_example_matrix_loads() -> None:
    from rankgate.data import demo_dir

    plan = load_plan(demo_dir() / "bench.yaml")
    assert plan.dataset == "demo" and plan.ks == (10, 100)
    assert [s.name for s in plan.retrievers] == ["bm25", "minilm", "hybrid", "hybrid-w"]
    assert len(plan.indexes) == 1 + 4 + 2 + 1  # exact, the HNSW grid, two IVF-Flat, one IVF-PQ


@pytest.mark.extra("bench")
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("matrix:\n  k: [10]\nmatrix:\n  k: [100]\n", r"duplicate key 'matrix'"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdef", "bcdefg", strict=True)),
            r"expands",
        ),
    ],
)
def test_matrix_yaml_is_read_by_the_bounded_loader(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_plan(path)


def test_the_latency_probe_runs_on_its_thread_count_and_reports_each_query() -> None:
    # Two intra-op threads on a busy two-core machine made one query 5x slower: the probe runs
    # on `latency.threads` (1) and puts torch's setting back afterwards.
    torch = pytest.importorskip("torch")
    from rankgate.bench.timing import probe_latency

    seen: list[int] = []

    class Recording:
        def encode_queries(self, texts: list[str], *, cached: bool = True) -> list[str]:
            seen.append(torch.get_num_threads())
            return texts

        def search(self, encoded: list[str], k: int) -> None:
            return None

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        steps: list[int] = []
        total, search = probe_latency(Recording(), ["a", "b", "c"], 10, warmup=1, threads=1, progress=steps.append)  # type: ignore[arg-type]
        assert seen == [1, 1, 1, 1] and torch.get_num_threads() == 2
        assert steps == [1, 1, 1] and len(total) == len(search) == 3
    finally:
        torch.set_num_threads(before)

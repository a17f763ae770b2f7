"""End to end on the demo data with the real MiniLM, BM25 and FAISS, checked against independent computations."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankgate.bench.datasets import Dataset, load_dataset
from rankgate.bench.embedcache import CachedEncoder, EmbeddingCache
from rankgate.bench.encoders import resolve_model
from rankgate.bench.harness import run_benchmark
from rankgate.bench.matrix import plan_from_dict
from rankgate.bench.report import BenchReport
from rankgate.evaluation.evaluate import evaluate
from rankgate.io import read_qrels, read_run
from rankgate.render.bench import demo_table
from tests.bench_support import (  # noqa: F401  (session fixtures)
    CountingEncoder,
    embedding_cache_dir,
    factory_of,
    is_top_k,
    minilm,
)

pytestmark = pytest.mark.extra("bench")

MEASURES = ["nDCG@10", "R@10", "R@100", "RR@10", "AP"]
INDEXES: list[Any] = [
    "exact",
    "flat",
    {"type": "hnsw", "params": {"M": 8, "ef_construction": 40, "ef_search": 16}},
    "ivf-flat",  # auto: nlist 5, nprobe 5 = every list: exhaustive
    "ivf-flat:nlist=8,nprobe=1",
    "ivf-pq:nlist=4,nprobe=2,m=24,nbits=5",
]


def trec(path: str | None) -> dict[str, dict[str, float]]:
    """A run file as {qid: {docid: score}}, read by hand."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for line in Path(path or "").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        out[q][d] = float(s)
    return dict(out)


@pytest.fixture(scope="module")
def counting(minilm):  # type: ignore[no-untyped-def]  # noqa: F811
    return CountingEncoder(minilm)


@pytest.fixture(scope="module")
def report(counting, embedding_cache_dir, tmp_path_factory) -> BenchReport:  # type: ignore[no-untyped-def]  # noqa: F811
    plan = plan_from_dict(
        {
            "measures": MEASURES,
            "latency": {"queries": 3, "warmup": 1},
            "matrix": {
                "retrievers": [
                    "bm25",
                    {"name": "minilm", "type": "dense", "model": "minilm"},
                    {"name": "rrf", "type": "hybrid", "of": ["bm25", "minilm"]},
                    {
                        "name": "mix",
                        "type": "hybrid",
                        "of": ["bm25", "minilm"],
                        "params": {"fusion": "weighted", "weights": [0.3, 0.7]},
                    },
                ],
                "indexes": INDEXES,
                "k": [10, 100],
            },
        }
    )
    return run_benchmark(
        "demo",
        plan,
        out_dir=tmp_path_factory.mktemp("runs"),
        cache=EmbeddingCache(embedding_cache_dir),
        encoder_factory=factory_of(counting),
    )


@pytest.fixture(scope="module")
def vectors(report, counting, embedding_cache_dir) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]  # noqa: F811
    """The demo corpus and queries as the benchmark encoded them (from the cache: no encoding)."""
    ds = load_dataset("demo")
    calls = counting.calls
    cached = CachedEncoder(counting, EmbeddingCache(embedding_cache_dir))
    docs, queries = cached.encode(ds.doc_texts, normalize=True), cached.encode(ds.query_texts, normalize=True)
    assert counting.calls == calls  # a cache hit for every text
    return docs, queries


def ids_of(ds: Dataset) -> dict[str, int]:
    return {d: i for i, d in enumerate(ds.doc_ids)}


def test_every_retriever_and_index_ran(report: BenchReport) -> None:
    got = {(r.retriever, r.index, r.k) for r in report.results}
    kinds = {None, "exact", "flat", "hnsw", "ivf-flat", "ivf-pq"}
    assert {(r, i) for r, i, _ in got} == {("bm25", None)} | {
        (r, i) for r in ("minilm", "rrf", "mix") for i in kinds - {None}
    }
    assert len(report.results) == 2 + 3 * len(INDEXES) * 2


def test_the_vectors_are_sentence_transformers_own(vectors) -> None:  # type: ignore[no-untyped-def]
    import sentence_transformers

    ds = load_dataset("demo")
    model = sentence_transformers.SentenceTransformer(str(resolve_model("minilm")), device="cpu")
    docs, queries = vectors
    sample = [0, 57, 123, 199]
    want = model.encode([ds.doc_texts[i] for i in sample] + ds.query_texts[:3], normalize_embeddings=True)
    np.testing.assert_allclose(np.vstack([docs[sample], queries[:3]]), want, atol=2e-5)


def test_metrics_equal_rankgate_eval_on_every_run_file(report: BenchReport) -> None:
    qrels = read_qrels(Path(load_dataset("demo").source) / "qrels.txt")
    for r in report.results:
        assert r.run_file is not None
        again = evaluate(qrels, read_run(r.run_file), MEASURES)
        assert again.aggregate == pytest.approx(r.metrics, abs=1e-12), r.id


@pytest.mark.parametrize("k", [10, 100])
def test_exact_search_equals_brute_force_numpy(report: BenchReport, vectors, k: int) -> None:  # type: ignore[no-untyped-def]
    ds = load_dataset("demo")
    docs, queries = vectors
    full = queries.astype(np.float64) @ docs.astype(np.float64).T
    run = trec(report[f"minilm/exact/k={k}"].run_file)
    position = ids_of(ds)
    for q, qid in enumerate(ds.query_ids):
        got = sorted(run[qid].items(), key=lambda item: -item[1])
        ids = np.array([position[d] for d, _ in got])
        assert len(ids) == k and is_top_k(ids[None, :], full[q][None, :], tol=1e-5)
        np.testing.assert_allclose([s for _, s in got], full[q][ids], atol=1e-5)


@pytest.mark.parametrize("index", ["flat", "ivf-flat(nlist=5,nprobe=5)"])
def test_faiss_flat_and_exhaustive_ivf_equal_exact_search(report: BenchReport, index: str) -> None:
    for k in (10, 100):
        exact = trec(report[f"minilm/exact/k={k}"].run_file)
        other = trec(report[f"minilm/{index}/k={k}"].run_file)
        assert exact.keys() == other.keys()
        for qid in exact:
            assert exact[qid].keys() == other[qid].keys()
            assert list(other[qid].values()) == pytest.approx(list(exact[qid].values()), abs=1e-5)
        if index != "flat":
            assert report[f"minilm/{index}/k={k}"].neighbor_recall == 1.0


@pytest.mark.parametrize("index", ["hnsw(M=8,ef_construction=40,ef_search=16)", "ivf-flat(nlist=8,nprobe=1)", "ivf-pq"])
@pytest.mark.parametrize("k", [10, 100])
def test_neighbor_recall_computed_by_hand(report: BenchReport, index: str, k: int) -> None:
    result = next(
        r for r in report.results if r.retriever == "minilm" and r.id.startswith(f"minilm/{index}") and r.k == k
    )
    exact = trec(report[f"minilm/exact/k={k}"].run_file)
    approx = trec(result.run_file)
    shares = [len(exact[q].keys() & approx.get(q, {}).keys()) / len(exact[q]) for q in exact]
    assert result.neighbor_recall == pytest.approx(sum(shares) / len(shares), abs=1e-12)
    assert 0 < result.neighbor_recall <= 1
    if index.startswith("ivf-flat"):  # one of 8 lists probed: it must miss neighbors
        assert result.neighbor_recall < 0.9


def test_hybrid_fusion_by_hand(report: BenchReport) -> None:
    bm25 = trec(report["bm25/-/k=100"].run_file)
    dense = trec(report["minilm/exact/k=100"].run_file)
    position = ids_of(load_dataset("demo"))
    mix = trec(report["mix/exact/k=10"].run_file)
    rrf = trec(report["rrf/exact/k=10"].run_file)
    for qid in dense:
        lists = [(bm25.get(qid, {}), 0.3), (dense[qid], 0.7)]
        weighted: dict[str, float] = defaultdict(float)
        for scores, w in lists:
            if scores:
                lo, hi = min(scores.values()), max(scores.values())
                for d, s in scores.items():
                    weighted[d] += w * ((s - lo) / (hi - lo) if hi > lo else 1.0)
        want = sorted(weighted.items(), key=lambda item: (-item[1], position[item[0]]))[:10]
        assert sorted(mix[qid].items(), key=lambda item: (-item[1], position[item[0]])) == [
            (d, pytest.approx(s, abs=1e-9)) for d, s in want
        ]
        # RRF ranks: each list best first, equal scores in corpus order (as the retrievers return them)
        fused: dict[str, float] = defaultdict(float)
        for scores, _ in lists:
            ranked = sorted(scores.items(), key=lambda item: (-item[1], position[item[0]]))
            for rank, (d, _s) in enumerate(ranked, start=1):
                fused[d] += 1 / (60 + rank)
        want_rrf = sorted(fused.items(), key=lambda item: (-item[1], position[item[0]]))[:10]
        assert rrf[qid] == pytest.approx(dict(want_rrf), abs=1e-12), qid


def test_costs_are_reported(report: BenchReport) -> None:
    for r in report.results:
        assert r.latency_ms["n"] == 3 and r.latency_ms["p50"] > 0 and r.throughput_qps and r.throughput_qps > 0
        assert r.build["index_bytes"] and r.build["index_bytes"] > 0
    exact, pq = report["minilm/exact/k=10"], report["minilm/ivf-pq(nlist=4,nprobe=2,m=24,nbits=5)/k=10"]
    assert exact.build["index_bytes"] == 200 * 384 * 4
    assert pq.build["index_bytes"] < exact.build["index_bytes"] / 2  # 24-byte codes instead of 1,536-byte vectors
    assert exact.encoding is not None and exact.encoding["texts"] == 200


def test_a_second_run_encodes_nothing(report, counting, embedding_cache_dir) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    plan = plan_from_dict(
        {"latency": {"queries": 0}, "matrix": {"retrievers": [{"name": "minilm", "type": "dense"}], "k": [10]}}
    )
    counting.reset()
    again = run_benchmark("demo", plan, cache=EmbeddingCache(embedding_cache_dir), encoder_factory=factory_of(counting))
    assert counting.calls == 0
    assert again["minilm/exact/k=10"].metrics == pytest.approx(
        {m: v for m, v in report["minilm/exact/k=10"].metrics.items() if m in again.measures}
    )


def test_demo_bench(embedding_cache_dir, report, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from rankgate.bench import demo

    rows = demo.demo_bench_results(cache_dir=embedding_cache_dir, latency_queries=3)
    assert rows is not None
    assert [(r["retriever"], r["index"].split("(")[0]) for r in rows] == [
        ("bm25", "-"),
        ("minilm", "exact"),
        ("minilm", "hnsw"),
    ]
    assert rows[1]["nDCG@10"] == pytest.approx(report["minilm/exact/k=100"].metrics["nDCG@10"])
    assert rows[0]["R@100"] == pytest.approx(report["bm25/-/k=100"].metrics["R@100"])
    assert 0.9 <= rows[2]["nbr recall"] <= 1 and rows[1]["nbr recall"] is None
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(demo_table(rows))
    text = console.export_text()
    assert "minilm" in text and "nbr recall" in text
    monkeypatch.setattr(demo, "bench_available", lambda: False)
    assert demo.demo_bench_results() is None


@pytest.mark.slow
def test_rerank_with_a_local_cross_encoder(tmp_path: Path) -> None:
    import dataclasses

    import sentence_transformers
    import torch

    torch.manual_seed(0)  # the classification head is new: make it the same every time
    folder = tmp_path / "cross-encoder"
    sentence_transformers.CrossEncoder(str(resolve_model("minilm")), num_labels=1, device="cpu").save(str(folder))
    demo = load_dataset("demo")
    ds = dataclasses.replace(demo, query_ids=demo.query_ids[:6], query_texts=demo.query_texts[:6])
    plan = plan_from_dict(
        {
            "latency": {"queries": 0},
            "matrix": {
                "retrievers": [
                    "bm25",
                    {"name": "ce", "type": "rerank", "of": "bm25", "model": str(folder), "params": {"depth": 8}},
                ],
                "k": [8],
            },
        }
    )
    report = run_benchmark(ds, plan, out_dir=tmp_path / "runs", evaluate_options={"queries": "intersection"})
    first, reranked = trec(report["bm25/-/k=8"].run_file), trec(report["ce/-/k=8"].run_file)
    model = sentence_transformers.CrossEncoder(str(folder), device="cpu")
    text = dict(zip(ds.doc_ids, ds.doc_texts, strict=True))
    for qid, query in zip(ds.query_ids, ds.query_texts, strict=True):
        assert reranked[qid].keys() == first[qid].keys()  # the same candidates, re-ordered
        docs = list(reranked[qid])
        want = model.predict([(query, text[d]) for d in docs])
        assert [reranked[qid][d] for d in docs] == pytest.approx(want.tolist(), abs=1e-5)
    assert report["ce/-/k=8"].retriever_info["model"].startswith("cross-encoder@")


def test_encoding_progress_moves_every_batch_and_keeps_the_vectors(minilm: Any) -> None:  # noqa: F811
    # The bar used to move once per model call (8 batches); it now moves after each batch, and
    # the vectors do not depend on the bar (the Ray engine relies on the same batches).
    texts = [f"passage {i} on dense retrieval " * (1 + i % 4) for i in range(150)]
    steps: list[int] = []
    with_bar = minilm.encode(texts, normalize=True, batch_size=8, progress=steps.append)
    assert sum(steps) == len(texts)
    assert max(steps) <= 8 and len(steps) >= len(texts) // 8
    assert np.array_equal(with_bar, minilm.encode(texts, normalize=True, batch_size=8, progress=lambda n: None))

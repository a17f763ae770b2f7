"""Benchmarks without a neural model: BM25 against a hand-written BM25, chunking, reports, the store."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from rankgate.bench.datasets import load_dataset
from rankgate.bench.embedcache import EmbeddingCache
from rankgate.bench.harness import run_benchmark
from rankgate.bench.matrix import plan_from_dict
from rankgate.bench.progress import SILENT, Progress
from rankgate.bench.record import record_report
from rankgate.bench.retrievers.bm25 import BM25Retriever
from rankgate.evaluation.evaluate import evaluate
from rankgate.io import read_qrels, read_run
from rankgate.render.bench import render as render_bench
from tests.bench_support import bm25_reference, factory_of, hashing, is_top_k, write_beir

pytestmark = pytest.mark.extra("bench")


def read_trec(path: str) -> dict[str, dict[str, float]]:
    """A TREC run file as {qid: {docid: score}}, read by hand."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        out[q][d] = float(s)
    return dict(out)


def tokens(texts: list[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)


def test_bm25_scores_equal_a_hand_written_lucene_bm25() -> None:
    ds = load_dataset("demo")
    bm25 = BM25Retriever()
    bm25.prepare(ds.doc_texts, SILENT)
    bm25.build(None, SILENT)
    hits = bm25.search(bm25.encode_queries(ds.query_texts), 200)
    doc_tokens = tokens(ds.doc_texts)
    for i, query in enumerate(tokens(ds.query_texts)):
        want = bm25_reference(doc_tokens, query)
        ids, scores = hits.row(i)
        assert set(ids.tolist()) == set(np.nonzero(want > 0)[0].tolist())  # docs sharing no term: not returned
        np.testing.assert_allclose(scores, want[ids], rtol=1e-5)
        assert is_top_k(ids[None, :], want[None, :])


def test_chunked_benchmark_aggregates_passages_by_hand(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(40)]
    docs = {f"d{i}": " ".join(rng.choice(vocab, size=int(rng.integers(3, 40)))) for i in range(30)}
    queries = {f"q{i}": " ".join(rng.choice(vocab, size=3)) for i in range(8)}
    qrels = {q: {f"d{int(rng.integers(0, 30))}": 1} for q in queries}
    write_beir(tmp_path / "data", docs, queries, qrels)
    size, overlap = 8, 3

    def windows(text: str) -> list[str]:
        words = text.split()
        starts = list(range(0, max(len(words) - overlap, 1), size - overlap))
        return [" ".join(words[s : s + size]) for s in starts]

    passages = [(d, j, p) for d, text in docs.items() for j, p in enumerate(windows(text))]
    passage_tokens = tokens([p for _, _, p in passages])
    for how in ("max", "first"):
        plan = plan_from_dict(
            {
                "chunking": {"size": size, "overlap": overlap, "aggregate": how},
                "latency": {"queries": 0},
                "matrix": {"retrievers": ["bm25"], "k": [5]},
            }
        )
        report = run_benchmark(tmp_path / "data", plan, out_dir=tmp_path / how)
        assert report.dataset["passages"] == len(passages)
        got = read_trec(report.results[0].run_file or "")
        for qid, text in queries.items():
            scores = bm25_reference(passage_tokens, tokens([text])[0])
            best: dict[str, float] = {}
            for (d, j, _), s in zip(passages, scores, strict=True):
                if s > 0 and (how == "max" or j == 0):
                    best[d] = max(best.get(d, 0.0), s)
            ranked = sorted(best.items(), key=lambda item: -item[1])
            cut = ranked[4][1] if len(ranked) >= 5 else 0.0
            assert set(got.get(qid, {})) >= {d for d, s in ranked if s > cut + 1e-5}
            for d, s in got.get(qid, {}).items():
                assert s == pytest.approx(best[d], rel=1e-5)


@pytest.fixture(scope="module")
def small_report(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("bench")
    plan = plan_from_dict(
        {
            "measures": ["nDCG@10", "R@100", "RR@10"],
            "latency": {"queries": 5, "warmup": 1},
            "matrix": {
                "retrievers": ["bm25", "dense", "hybrid"],
                "indexes": ["exact", {"type": "hnsw", "params": {"M": 8, "ef_search": 16}}, "ivf-pq"],
                "k": [10, 100],
            },
        }
    )
    report = run_benchmark(
        "demo",
        plan,
        out_dir=tmp / "runs",
        cache=EmbeddingCache(tmp / "cache"),
        encoder_factory=factory_of(hashing()),
        progress=Progress(enabled=True),
    )
    return report


def test_metrics_equal_rankgate_eval_on_the_written_run_files(small_report) -> None:  # type: ignore[no-untyped-def]
    qrels = read_qrels(load_dataset("demo").source + "/qrels.txt")
    assert len(small_report.results) == 2 + 2 * 3 * 2  # bm25 at 2 k; dense and hybrid at 3 indexes x 2 k
    for r in small_report.results:
        again = evaluate(qrels, read_run(r.run_file), ["nDCG@10", "R@100", "RR@10"])
        assert again.aggregate == pytest.approx(r.metrics, abs=1e-12), r.id
        assert max(len(docs) for docs in read_trec(r.run_file).values()) <= r.k


def test_json_contract_and_other_formats(small_report) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(render_bench(small_report, "json"))
    assert set(data) >= {"dataset", "measures", "results", "settings", "versions", "machine", "warnings"}
    row = next(r for r in data["results"] if r["id"].startswith("dense/hnsw"))
    assert row["retriever"] == "dense" and row["index"] == "hnsw" and row["k"] == 10
    assert row["params"] == {"M": 8, "ef_construction": 200, "ef_search": 16}
    assert set(row["metrics"]) == {"nDCG@10", "R@100", "RR@10"}
    assert set(row["latency_ms"]) >= {"p50", "p95", "p99"} and row["latency_ms"]["n"] == 5
    assert row["latency_ms"]["p50"] <= row["latency_ms"]["p95"] <= row["latency_ms"]["p99"]
    assert 0 <= row["neighbor_recall"] <= 1 and row["throughput_qps"] > 0
    assert row["build_s"] >= 0 and row["memory_bytes"] > 200 * 64 * 4  # HNSW: vectors plus links
    assert row["encoding"]["texts"] == 200
    bm25 = data["results"][0]
    assert (bm25["retriever"], bm25["index"], bm25["neighbor_recall"]) == ("bm25", None, None)
    assert any("ivf-pq: 200 vectors to train" in w for w in data["warnings"])
    lines = render_bench(small_report, "jsonl").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in data["results"]]
    table = list(csv.DictReader(io.StringIO(render_bench(small_report, "csv"))))
    assert table[0]["retriever"] == "bm25" and float(table[0]["nDCG@10"]) == pytest.approx(bm25["metrics"]["nDCG@10"])
    markdown = render_bench(small_report, "markdown").splitlines()
    assert markdown[2].startswith("| retriever | index | k | nDCG@10 |")
    assert len([m for m in markdown if m.startswith("| ")]) == 2 + len(data["results"])
    text = render_bench(small_report, "table")
    assert "hybrid:rrf" in text and "nbr recall" in text


def test_report_json_is_accepted_by_rankgate_report(small_report, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from rankgate.report.inputs import load_inputs

    path = tmp_path / "bench.json"
    path.write_text(small_report.to_json())
    [item] = load_inputs([path])
    assert item["kind"] == "bench" and len(item["data"]["results"]) == len(small_report.results)


def test_results_are_recorded_in_the_store(small_report, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from rankgate.store.base import open_store

    qrels = load_dataset("demo").qrels
    db = tmp_path / "results.db"
    ids = record_report(small_report, str(db), qrels=qrels, labels={"branch": "main"})
    assert len(ids) == len(small_report.results) and [r.store_id for r in small_report.results] == ids
    with open_store(db, create=False) as store:
        for rid, r in zip(ids, small_report.results, strict=True):
            stored = store.get(rid)
            assert stored.name == r.id
            assert stored.aggregate == pytest.approx(r.metrics)
            for qid, row in r.results.per_query.items():
                assert stored.per_query[qid] == pytest.approx(row)
            assert stored.labels["source"] == "bench" and stored.labels["branch"] == "main"
            assert stored.labels["latency_ms"]["p50"] == pytest.approx(r.latency_ms["p50"])
            assert stored.labels["index"] == r.index and stored.labels["k"] == r.k


def test_a_cutoff_deeper_than_k_is_a_warning(small_report):  # type: ignore[no-untyped-def]
    """R@100 of a top-10 configuration is R@10: the report says so for each such configuration, as eval does."""
    expected = "bm25/-/k=10: the run returns at most 10 documents per query, fewer than the cutoff of R@100"
    assert expected in small_report.warnings

"""`rankgate bench` end to end, in-process: output contract, files, store, and errors (exit 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench_support import embedding_cache_dir, write_beir  # noqa: F401  (session fixture)
from tests.cli_support import invoke


@pytest.fixture(autouse=True)
def _no_store_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANKGATE_STORE", raising=False)


@pytest.mark.extra("bench", "gate")
def test_bench_demo_json_runs_and_store(capsys, tmp_path: Path, embedding_cache_dir: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    runs, db = tmp_path / "runs", tmp_path / "results.db"
    code, out, err = invoke(
        capsys,
        "bench", "demo", "-r", "bm25", "-r", "dense", "-i", "exact", "-i", "hnsw:M=16,ef_search=32",
        "-k", "10", "-m", "nDCG@10,recall@10", "--latency-queries", "3", "--format", "json",
        "--cache-dir", str(embedding_cache_dir), "--out-dir", str(runs), "--store", str(db), "--label", "branch=main",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert [r["id"] for r in data["results"]] == [
        "bm25/-/k=10",
        "dense/exact/k=10",
        "dense/hnsw(M=16,ef_construction=200,ef_search=32)/k=10",  # parameters in canonical order
    ]
    for r in data["results"]:
        assert set(r) >= {"retriever", "index", "params", "metrics", "latency_ms", "throughput_qps", "neighbor_recall"}
        assert set(r["metrics"]) == {"nDCG@10", "R@10"} and set(r["latency_ms"]) >= {"p50", "p95", "p99"}
        assert Path(r["run_file"]).is_file() and r["store_id"] is not None
    assert json.loads((runs / "bench.json").read_text())["results"][1]["metrics"] == data["results"][1]["metrics"]
    assert "recorded 3 configurations in" in err and "Traceback" not in err
    code, out, err = invoke(capsys, "store", "list", "--store", str(db), "--format", "json")
    assert code == 0, err
    assert sorted(r["name"] for r in json.loads(out)["results"]) == sorted(r["id"] for r in data["results"])


@pytest.mark.extra("bench")
def test_bench_with_a_matrix_file_and_markdown(capsys, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        "dataset: demo\nmeasures: [P@5]\nlatency: {queries: 0}\n"
        "matrix: {retrievers: [{name: okapi, type: bm25, params: {k1: [0.9, 1.2]}}], k: [5]}\n"
    )
    out_file = tmp_path / "table.md"
    db = tmp_path / "env.db"
    monkeypatch.setenv("RANKGATE_STORE", str(db))
    code, _, err = invoke(capsys, "bench", "--config", str(matrix), "--no-runs", "--no-cache", "-q", "--no-record")
    assert code == 0 and not db.exists()
    code, out, err = invoke(
        capsys,
        "bench",
        "--config",
        str(matrix),
        "--no-runs",
        "--no-cache",
        "-q",
        "--format",
        "markdown",
        "-o",
        str(out_file),
    )
    assert code == 0, err
    assert out == "" and "recorded 2 configurations" in err
    lines = out_file.read_text().splitlines()
    header = "retriever | index | k | P@5 | nbr recall | p50 ms | p95 ms | p99 ms | search q/s | build s | index MB"
    assert lines[2] == f"| {header} | enc texts/s |"
    assert [line.split(" | ")[0] for line in lines[4:6]] == ["| okapi(k1=0.9)", "| okapi(k1=1.2)"]
    code, out, _ = invoke(capsys, "store", "list", "--store", str(db), "--format", "json")  # recorded: the env var
    assert code == 0 and sorted(r["name"] for r in json.loads(out)["results"]) == [
        "okapi(k1=0.9)/-/k=5",
        "okapi(k1=1.2)/-/k=5",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["demo", "-r", "dense:/no/such/model"], "/no/such/model: model path does not exist"),
        (
            ["demo", "-r", "bm25", "--rerank", "/no/such/cross-encoder"],
            "/no/such/cross-encoder: model path does not exist",
        ),
        (["demo", "-r", "bm25", "-i", "hnsw:Q=3"], "--index[0].params.Q: unknown parameter of hnsw"),
        (["demo", "-r", "sparse"], "--retriever[0]: unknown retriever 'sparse'"),
        (["demo", "-m", "nDCG@ten"], "nDCG@ten"),
        (["no-such-folder"], "no-such-folder: dataset folder not found"),
        ([], "give a DATASET"),
        (["demo", "-r", "bm25", "--label", "oops"], "expected KEY=VALUE, got 'oops'"),
        (["demo", "-r", "bm25", "--chunk-overlap", "3"], "--chunk-overlap needs --chunk-size"),
    ],
)
def test_bench_errors_exit_2(capsys, tmp_path: Path, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = invoke(capsys, "bench", *args, "--no-runs", "--no-cache", "-q")
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err


@pytest.mark.extra("bench")
def test_bench_malformed_dataset_and_matrix_exit_2(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = write_beir(tmp_path / "data", {"d1": "a"}, {"q1": "a"}, {"q1": {"d1": 1}})
    with (data / "corpus.jsonl").open("a") as f:
        f.write('{"_id": "d2", "text": "b"\n')
    code, _, err = invoke(capsys, "bench", str(data), "-r", "bm25", "--no-runs", "-q")
    assert code == 2 and f"{data / 'corpus.jsonl'}:2: not a JSON object" in err
    matrix = tmp_path / "m.yaml"
    matrix.write_text("matrix:\n  retrievers: [bm25]\n  indexes: [{type: hnsw, params: {M: many}}]\n")
    code, _, err = invoke(capsys, "bench", "demo", "--config", str(matrix), "--no-runs", "-q")
    assert code == 2 and f"{matrix}: matrix.indexes[0].params.M: must be an int >= 1. Got 'many' instead." in err
    code, out, err = invoke(capsys, "bench", "demo", "-r", "bm25", "--store", str(tmp_path), "--no-runs", "-q")
    assert code == 2 and out == "" and "is a directory" in err  # found before any work is done


def test_bench_help_has_examples(capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = invoke(capsys, "bench", "--help")
    assert code == 0 and "Examples:" in out and "rankgate bench demo" in out and "--store" in out


def test_device_and_rerank_options_reach_the_plan() -> None:
    from rankgate.bench.matrix import BenchPlan, parse_retriever_specs
    from rankgate.bench.matrix import with_extras as _with_extras

    plan = BenchPlan(retrievers=parse_retriever_specs(["bm25", "dense"]))
    out = _with_extras(plan, "/models/ce", 20, "cuda:1", 7)
    by_name = {s.name: s for s in out.retrievers}
    assert by_name["dense"].params == {"device": "cuda:1"} and by_name["bm25"].params == {}
    assert (
        by_name["dense>rerank"].params == {"depth": 20, "device": "cuda:1"}
        and by_name["bm25>rerank"].model == "/models/ce"
    )
    assert out.latency.queries == 7
